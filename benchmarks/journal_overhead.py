"""Execution-journal overhead (issue 13, S40), beside a raw INSERT + commit of the same rows.

For SQLite and PostgreSQL:

* **per model call** — the two records the loop writes for one model call (``model_call_started``
  with the history committed since the previous record, ``model_call_settled`` with the response),
  appended through the journal's lease;
* **per tool effect** — ``effect_started`` (final arguments) and ``effect_settled``;
* **baseline** — the same encoded rows inserted into a table of the same shape and committed
  with the same durability (SQLite: WAL, ``synchronous=FULL``; PostgreSQL:
  ``synchronous_commit=on``), straight through the driver on the same database;
* **end to end** — one run of 3 model rounds and 2 tool calls, journaled vs. not (the difference
  is the journal's whole cost per run: lease, begin, 3 model calls, 2 effects, checkpoint).

Samples are interleaved (journal, raw, journal, …) so machine noise hits both alike; the ratio
journal ÷ raw is the figure. PostgreSQL runs on a throwaway local cluster (or the server in
``ROBOTA_TEST_POSTGRES_DSN``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench_models import ZeroLatency, echo

import robota
from robota import (
    AssistantMessage,
    EffectSettled,
    EffectStarted,
    ModelCallSettled,
    ModelCallStarted,
    ToolCall,
    ToolMessage,
    Usage,
    encode_journal_record,
)
from robota.host import PostgresJournal, SQLiteJournal

SAMPLES = 60
RUN_SAMPLES = 30


def _model_call_records(n: int) -> list[Any]:
    result = ToolMessage('{"temperature": 21, "unit": "C"}', tool_call_id="c0", tool_name="w")
    message = AssistantMessage(
        "",
        tool_calls=(ToolCall("c1", "weather", '{"city": "Paris"}'),),
        model="bench-model",
        usage=Usage.from_counts(prompt=812, completion=24),
    )
    return [
        ModelCallStarted(f"mcall_{n}", n, history=(result,)),
        ModelCallSettled(f"mcall_{n}", message),
    ]


def _effect_records(n: int) -> list[Any]:
    return [
        EffectStarted(f"mcall_{n}#0", f"tool_{n}", "c1", "weather", {"city": "Paris"}),
        EffectSettled(f"mcall_{n}#0", "completed", '{"temperature": 21, "unit": "C"}'),
    ]


class _Backend:
    name = ""

    def journal(self) -> robota.ExecutionJournal:
        raise NotImplementedError

    async def raw_open(self) -> None:
        raise NotImplementedError

    async def raw_insert(self, rows: list[str]) -> None:
        raise NotImplementedError

    async def raw_close(self) -> None:
        raise NotImplementedError


class _SQLite(_Backend):
    name = "SQLite"

    def __init__(self, folder: Path) -> None:
        self._path = folder / "journal.db"
        self._raw_path = folder / "raw.db"
        self._conn: sqlite3.Connection | None = None
        self._seq = 0

    def journal(self) -> robota.ExecutionJournal:
        return SQLiteJournal(self._path)

    async def raw_open(self) -> None:
        conn = sqlite3.connect(self._raw_path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS raw (execution_id TEXT NOT NULL, seq INTEGER NOT NULL, "
            "record TEXT NOT NULL, PRIMARY KEY (execution_id, seq))"
        )
        self._conn = conn

    async def raw_insert(self, rows: list[str]) -> None:
        assert self._conn is not None
        for row in rows:  # one commit per row, as the journal commits per record
            self._seq += 1
            self._conn.execute("BEGIN")
            self._conn.execute("INSERT INTO raw VALUES (?, ?, ?)", ("bench", self._seq, row))
            self._conn.execute("COMMIT")

    async def raw_close(self) -> None:
        assert self._conn is not None
        self._conn.close()


class _Postgres(_Backend):
    name = "PostgreSQL"

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._conn: Any = None
        self._seq = 0
        self._table = f"robota_bench_{os.getpid()}"

    def journal(self) -> robota.ExecutionJournal:
        return PostgresJournal(self._dsn, table=f"{self._table}_journal")

    async def raw_open(self) -> None:
        import psycopg

        self._conn = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True)
        await self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self._table} (execution_id text NOT NULL, "
            "seq bigint NOT NULL, record text NOT NULL, PRIMARY KEY (execution_id, seq))"
        )

    async def raw_insert(self, rows: list[str]) -> None:
        for row in rows:  # autocommit: each INSERT is its own committed transaction
            self._seq += 1
            await self._conn.execute(
                f"INSERT INTO {self._table} VALUES (%s, %s, %s)",  # noqa: S608 - our own name
                ("bench", self._seq, row),
            )

    async def raw_close(self) -> None:
        await self._conn.execute(f"DROP TABLE IF EXISTS {self._table}")
        await self._conn.execute(f"DROP TABLE IF EXISTS {self._table}_journal")
        await self._conn.close()


async def _boundaries(backend: _Backend) -> tuple[float, float, float, float]:
    """Medians (s): model call via journal, via raw; effect via journal, via raw."""
    journal = backend.journal()
    await backend.raw_open()
    lease = await journal.acquire(f"bench-{os.getpid()}")
    timings: dict[str, list[float]] = {"mj": [], "mr": [], "ej": [], "er": []}

    async def timed(key: str, work: Callable[[], Awaitable[None]]) -> None:
        start = time.perf_counter()
        await work()
        timings[key].append(time.perf_counter() - start)

    try:
        for n in range(SAMPLES + 5):
            model = _model_call_records(n)
            effect = _effect_records(n)
            model_rows = [encode_journal_record(r) for r in model]
            effect_rows = [encode_journal_record(r) for r in effect]

            async def journal_model(records: list[Any] = model) -> None:
                for record in records:
                    await lease.append(record)

            async def journal_effect(records: list[Any] = effect) -> None:
                for record in records:
                    await lease.append(record)

            await timed("mj", journal_model)
            await timed("mr", lambda rows=model_rows: backend.raw_insert(rows))
            await timed("ej", journal_effect)
            await timed("er", lambda rows=effect_rows: backend.raw_insert(rows))
    finally:
        await lease.release()
        await journal.aclose()
        await backend.raw_close()
    for values in timings.values():
        del values[:5]  # warm-up
    return (
        statistics.median(timings["mj"]),
        statistics.median(timings["mr"]),
        statistics.median(timings["ej"]),
        statistics.median(timings["er"]),
    )


async def _end_to_end(backend: _Backend) -> tuple[float, float]:
    """Medians (s) of one 3-round, 2-tool run: journaled, and without a journal."""
    journal = backend.journal()
    plain: list[float] = []
    journaled: list[float] = []
    try:
        for n in range(RUN_SAMPLES + 3):
            for target, use in ((plain, None), (journaled, journal)):
                agent = robota.Agent(provider=ZeroLatency(), model="m", tools=[echo], journal=use)
                start = time.perf_counter()
                await agent.run("go", execution_id=f"run-{os.getpid()}-{n}-{use is not None}")
                target.append(time.perf_counter() - start)
    finally:
        await journal.aclose()
    return statistics.median(journaled[3:]), statistics.median(plain[3:])


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


async def _report(backend: _Backend) -> None:
    mj, mr, ej, er = await _boundaries(backend)
    rj, rp = await _end_to_end(backend)
    print(f"  {backend.name}:")
    print(
        f"    per model call (2 records): journal {_us(mj)}, raw INSERT+commit of the same "
        f"rows {_us(mr)} — ratio {mj / mr:.2f}"
    )
    print(
        f"    per tool effect (2 records): journal {_us(ej)}, raw INSERT+commit of the same "
        f"rows {_us(er)} — ratio {ej / er:.2f}"
    )
    print(
        f"    one run (3 model calls, 2 effects): journaled {_us(rj)}, without a journal "
        f"{_us(rp)} — journal cost per run {_us(rj - rp)}"
    )


def _postgres_dsn() -> tuple[str, Any]:
    dsn = os.environ.get("ROBOTA_TEST_POSTGRES_DSN")
    if dsn:
        return dsn, None
    # The tests' throwaway cluster (tests/journal/postgres.py), loaded by path.
    spec = importlib.util.spec_from_file_location(
        "robota_bench_postgres", Path(__file__).resolve().parents[1] / "tests/journal/postgres.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    server = module.PostgresServer()
    server.__enter__()
    return server.dsn, server


def main() -> None:
    print("\nExecution journal overhead (S40), medians of interleaved samples:")
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_report(_SQLite(Path(folder))))
    dsn, server = _postgres_dsn()
    try:
        asyncio.run(_report(_Postgres(dsn)))
    finally:
        if server is not None:
            server.__exit__(None, None, None)


if __name__ == "__main__":
    main()
