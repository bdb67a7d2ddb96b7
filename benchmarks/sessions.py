"""Sessions at scale (issue 27): load, save, many sessions, memory per live session.

Every speed is a ratio to bare ``sqlite3`` work on the same file, measured in the same run with
the samples interleaved (ours, bare, ours, bare …), each figure the median; the machine is shared
and noisy, so absolute times vary more than ratios do. Both sides use the store's own settings:
WAL, ``synchronous=FULL``, ``fullfsync`` and ``checkpoint_fullfsync`` on, one connection opened
before timing starts.

1. **Load** a session of ``LOAD_TURNS`` turns (each a user question and a text reply, with usage
   and cost) from :class:`~robota.sessions.SQLiteSessionStore`, on a store whose connection is
   open. The goal line: ``await Session.open(agent, store, id)`` and ``session.history``
   obtained, ready to read (then ``aclose``). Opening reads the rows and keeps their text: the
   log is decoded on first use (reading the history, a turn starting — see
   ``robota.sessions._lazy``), so this line does **not** include decoding any message. The
   bare read, on its own connection to the same file: ``BEGIN``, the header row (``SELECT id,
   created_at, parent_id, fork_at FROM robota_sessions WHERE id = ?``), every entry row's text
   (``SELECT entry FROM robota_session_entries WHERE session_id = ? ORDER BY seq``,
   ``fetchall``), ``COMMIT`` — the rows the store reads, not decoded. The second line is the
   full cost: ``Session.open`` and every message decoded (``tuple(session.history)``), as a
   ratio to the bare read plus ``json.loads`` of every row (not held to the goal). A last
   reference line: only constructing the same 2,000 message objects from values already in
   memory (no SQLite, no parsing) — the least any load that returns message objects can cost,
   itself more than 4× the bare read on CPython 3.11, which is why an eager load cannot meet
   the goal.
2. **Save** one turn: the store's append of one ``TurnSaved`` entry (a question, a reply, usage)
   under a held lease — ``await lease.append(entry)``, which encodes the entry, hops to the
   store's worker thread, and commits — against a bare ``BEGIN IMMEDIATE``, ``INSERT INTO
   robota_session_entries (session_id, seq, entry)`` of the same entry's text, ``COMMIT``. Also
   shown, not held to the goal: one ``session.run(...)`` against a zero-latency model, less one
   ``agent.run(...)`` of the same agent on the same history, over the bare insert — the whole
   turn's session cost (lease, reading the log again, loading the agent, the append).
3. **Many sessions**: ``MANY`` sessions in one file, each created by ``Session.open(agent,
   store, title=...)`` and given one turn through the store; per-session creation time, the
   time of :func:`~robota.sessions.list_sessions` (every session's :class:`SessionInfo`) and of
   ``store.list_sessions()`` (headers), and the file's size (database plus WAL).
4. **Memory per live session**: an open :class:`~robota.sessions.Session` holding
   ``MEMORY_TURNS`` loaded turns, its history read (so decoded) inside the measured window,
   against a bare list of the same messages as plain dicts
   (``{"role", "content"}``, fresh strings), per message, by tracemalloc after the collector ran.

``python benchmarks/sessions.py`` prints the table; ``--many N`` changes the session count. The
load (open, history ready) and save figures print PASS or FAIL against the goal (≤ 3×); the
exit status is 0 only when both pass.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench_models import ZeroLatency

import robota
from robota.sessions import (
    Session,
    SessionHeader,
    SQLiteSessionStore,
    TurnSaved,
    encode_session_entry,
    list_sessions,
)

GOAL = 3.0
LOAD_TURNS = 1_000
LOAD_SAMPLES = 15
SAVE_SAMPLES = 60
RUN_SAMPLES = 40
MANY = 10_000
MEMORY_TURNS = 100
MEMORY_SESSIONS = 10
USAGE = robota.Usage.from_counts(prompt=1_200, completion=80, cache_read=900)
OUT = Path(__file__).with_name("out") / "sessions.json"


def _question(n: int) -> str:
    return f"Question number {n}: what is {n} times seven, and why does it matter here?"


def _reply(n: int) -> str:
    return f"The answer to question {n} is {n * 7}; it matters because the tests count it."


def _turn(n: int) -> TurnSaved:
    messages = (
        robota.UserMessage(_question(n)),
        robota.AssistantMessage(_reply(n), usage=USAGE, model="bench-model"),
    )
    return TurnSaved(n, "complete", messages, USAGE, 0.0012, None, time.time())


def _agent() -> robota.Agent:
    return robota.Agent(provider=ZeroLatency(((),)), model="bench-model")


def _bare_connection(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute("PRAGMA fullfsync=ON")
    connection.execute("PRAGMA checkpoint_fullfsync=ON")
    return connection


def _bare_read(connection: sqlite3.Connection, session_id: str) -> int:
    connection.execute("BEGIN")
    header = connection.execute(
        "SELECT id, created_at, parent_id, fork_at FROM robota_sessions WHERE id = ?",
        (session_id,),
    ).fetchone()
    rows = connection.execute(
        "SELECT entry FROM robota_session_entries WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ).fetchall()
    connection.execute("COMMIT")
    assert header is not None
    return len(rows)


def _build_floor() -> float:
    """The time to construct the loaded history's messages alone, from values in memory.

    No SQLite, no parsing: the question and reply strings, ids, times and usage counts exist
    already, and only the 2,000 ``UserMessage``/``AssistantMessage`` objects (with each reply's
    ``Usage``) are made — the least any load that returns message objects must spend.
    """
    values = [
        (
            _question(n),
            _reply(n),
            f"msg_{os.urandom(12).hex()}",
            f"msg_{os.urandom(12).hex()}",
            time.time(),
        )
        for n in range(LOAD_TURNS)
    ]
    counts = USAGE.prompt_tokens, USAGE.completion_tokens, USAGE.cache_read_tokens
    samples: list[float] = []
    for _ in range(LOAD_SAMPLES + 2):
        started = time.perf_counter()
        built: list[robota.Message] = []
        for question, reply, question_id, reply_id, at in values:
            built.append(robota.UserMessage(question, id=question_id, created_at=at))
            usage = robota.Usage.from_counts(
                prompt=counts[0], completion=counts[1], cache_read=counts[2]
            )
            built.append(
                robota.AssistantMessage(
                    reply, usage=usage, model="bench-model", id=reply_id, created_at=at
                )
            )
        samples.append(time.perf_counter() - started)
        assert len(built) == 2 * LOAD_TURNS
    return statistics.median(samples[2:])


def _bare_insert(connection: sqlite3.Connection, session_id: str, seq: int, text: str) -> None:
    connection.execute("BEGIN IMMEDIATE")
    connection.execute(
        "INSERT INTO robota_session_entries (session_id, seq, entry) VALUES (?, ?, ?)",
        (session_id, seq, text),
    )
    connection.execute("COMMIT")


@dataclass
class Figures:
    load_ours: float = 0.0  # Session.open + session.history obtained (not yet decoded)
    load_full: float = 0.0  # Session.open + every message decoded
    load_bare: float = 0.0
    load_decode: float = 0.0  # the bare read plus json.loads of every row, for reference
    load_build: float = 0.0  # only constructing the same messages from values in memory
    save_ours: float = 0.0
    save_bare: float = 0.0
    turn_session: float = 0.0  # session.run less agent.run
    turn_agent: float = 0.0
    many: int = 0
    create_per_session: float = 0.0
    list_infos: float = 0.0
    list_headers: float = 0.0
    file_bytes: int = 0
    memory_turns: int = 0
    memory_ours: float = 0.0  # bytes per message
    memory_bare: float = 0.0


async def _load_and_save(folder: str, figures: Figures) -> None:
    path = os.path.join(folder, "load.db")
    store = SQLiteSessionStore(path)
    agent = _agent()
    await store.create(SessionHeader("load", time.time()), [_turn(n) for n in range(LOAD_TURNS)])
    await store.create(SessionHeader("save", time.time()))
    await store.create(SessionHeader("bare-save", time.time()))
    bare = _bare_connection(path)
    ours: list[float] = []
    full: list[float] = []
    plain: list[float] = []
    decoded: list[float] = []
    for _ in range(LOAD_SAMPLES + 2):
        started = time.perf_counter()
        session = await Session.open(agent, store, "load")
        history = session.history
        ours.append(time.perf_counter() - started)
        await session.aclose()
        assert len(history) == 2 * LOAD_TURNS, len(history)  # decodes it, untimed
        started = time.perf_counter()
        session = await Session.open(agent, store, "load")
        count = len(tuple(session.history))
        full.append(time.perf_counter() - started)
        await session.aclose()
        assert count == 2 * LOAD_TURNS, count
        started = time.perf_counter()
        assert _bare_read(bare, "load") == LOAD_TURNS
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        bare.execute("BEGIN")
        rows = bare.execute(
            "SELECT entry FROM robota_session_entries WHERE session_id = ? ORDER BY seq",
            ("load",),
        ).fetchall()
        bare.execute("COMMIT")
        [json.loads(row[0]) for row in rows]
        decoded.append(time.perf_counter() - started)
    figures.load_build = _build_floor()
    figures.load_ours = statistics.median(ours[2:])
    figures.load_full = statistics.median(full[2:])
    figures.load_bare = statistics.median(plain[2:])
    figures.load_decode = statistics.median(decoded[2:])

    ours, plain = [], []
    lease = await store.acquire("save")
    try:
        for n in range(SAVE_SAMPLES + 5):
            entry = _turn(n)
            text = encode_session_entry(entry)
            started = time.perf_counter()
            await lease.append(entry)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            _bare_insert(bare, "bare-save", n + 1, text)
            plain.append(time.perf_counter() - started)
    finally:
        await lease.release()
    figures.save_ours = statistics.median(ours[5:])
    figures.save_bare = statistics.median(plain[5:])

    # One whole turn: session.run less agent.run on the same history (both zero-latency).
    session = await Session.open(agent, store, "turns")
    reference = _agent()
    turns: list[float] = []
    runs: list[float] = []
    try:
        for n in range(RUN_SAMPLES + 3):
            started = time.perf_counter()
            await session.run(_question(n))
            turns.append(time.perf_counter() - started)
            await reference.replace_history(session.history[:-2])
            started = time.perf_counter()
            await reference.run(_question(n))
            runs.append(time.perf_counter() - started)
    finally:
        await session.aclose()
    figures.turn_agent = statistics.median(runs[3:])
    figures.turn_session = statistics.median(turns[3:]) - figures.turn_agent
    bare.close()
    await store.aclose()


async def _many(folder: str, figures: Figures, count: int) -> None:
    path = os.path.join(folder, "many.db")
    store = SQLiteSessionStore(path)
    agent = _agent()
    created: list[float] = []
    for n in range(count):
        started = time.perf_counter()
        session = await Session.open(agent, store, f"s{n:06d}", title=f"Chat {n}")
        created.append(time.perf_counter() - started)
        async with await store.acquire(session.id) as lease:
            await lease.append(_turn(0))
        await session.aclose()
    started = time.perf_counter()
    infos = await list_sessions(store)
    figures.list_infos = time.perf_counter() - started
    assert len(infos) == count
    assert all(info.turns == 1 for info in infos)
    started = time.perf_counter()
    headers = await store.list_sessions()
    figures.list_headers = time.perf_counter() - started
    assert len(headers) == count
    await store.aclose()
    figures.many = count
    figures.create_per_session = statistics.median(created)
    figures.file_bytes = _file_bytes(path)


def _file_bytes(path: str) -> int:
    """The database file and its WAL, in bytes."""
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


async def _memory(folder: str, figures: Figures) -> None:
    path = os.path.join(folder, "memory.db")
    store = SQLiteSessionStore(path)
    agent = _agent()
    for index in range(MEMORY_SESSIONS):
        await store.create(
            SessionHeader(f"m{index}", time.time()), [_turn(n) for n in range(MEMORY_TURNS)]
        )
    warm = await Session.open(agent, store, "m0")  # the connection, lazy imports, caches
    await warm.aclose()

    def bare() -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        for n in range(MEMORY_TURNS):
            messages.append({"role": "user", "content": _question(n)})
            messages.append({"role": "assistant", "content": _reply(n)})
        return messages

    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        sessions = [await Session.open(agent, store, f"m{i}") for i in range(MEMORY_SESSIONS)]
        for session in sessions:
            len(session.history)  # decoded on first use: a live session that was read
        gc.collect()
        ours = tracemalloc.get_traced_memory()[0] - before
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        lists = [bare() for _ in range(MEMORY_SESSIONS)]
        gc.collect()
        plain = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    messages = MEMORY_SESSIONS * 2 * MEMORY_TURNS
    assert sum(len(s.history) for s in sessions) == sum(len(b) for b in lists) == messages
    for session in sessions:
        await session.aclose()
    await store.aclose()
    figures.memory_turns = MEMORY_TURNS
    figures.memory_ours = ours / messages
    figures.memory_bare = plain / messages


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def _verdict(ratio: float) -> str:
    return f"PASS (goal ≤ {GOAL:g})" if ratio <= GOAL else f"FAIL (goal ≤ {GOAL:g})"


def report(f: Figures) -> bool:
    """Print the table; whether both goal figures pass."""
    load = f.load_ours / f.load_bare
    save = f.save_ours / f.save_bare
    print("\nSessions (issue 27), SQLiteSessionStore, medians of interleaved samples:")
    print(
        f"  load {LOAD_TURNS:,} turns (Session.open + history ready, decoded on first use): "
        f"{_ms(f.load_ours)} vs bare read of the same rows {_ms(f.load_bare)} — ratio "
        f"{load:.2f} {_verdict(load)}"
    )
    print(
        f"    open + every message decoded: {_ms(f.load_full)} vs the bare read plus json.loads "
        f"of every row {_ms(f.load_decode)} — ratio {f.load_full / f.load_decode:.2f} "
        f"({f.load_full / f.load_bare:.2f}× the bare read; not held to the goal)"
    )
    print(
        f"    (only constructing the {2 * LOAD_TURNS:,} message objects from values in memory: "
        f"{_ms(f.load_build)}, {f.load_build / f.load_bare:.2f}× the bare read)"
    )
    print(
        f"  save one turn (lease.append of a TurnSaved): {_us(f.save_ours)} vs bare INSERT + "
        f"COMMIT of the same row {_us(f.save_bare)} — ratio {save:.2f} {_verdict(save)}"
    )
    print(
        f"    a whole session.run less agent.run ({_us(f.turn_agent)}): {_us(f.turn_session)}, "
        f"{f.turn_session / f.save_bare:.2f}× the bare insert"
    )
    print(
        f"  {f.many:,} sessions in one file: create {_us(f.create_per_session)} per session "
        f"(Session.open, new); list_sessions {_ms(f.list_infos)}; store.list_sessions (headers) "
        f"{_ms(f.list_headers)}; file {f.file_bytes / 2**20:,.1f} MiB "
        f"({f.file_bytes / max(f.many, 1):,.0f} B per session of one turn)"
    )
    print(
        f"  memory per live session ({f.memory_turns} turns loaded): {f.memory_ours:.0f} B vs "
        f"bare {f.memory_bare:.0f} B per message — ratio {f.memory_ours / f.memory_bare:.2f}"
    )
    return load <= GOAL and save <= GOAL


async def measure(many: int = MANY) -> Figures:
    """Every figure, in one temporary directory on the same filesystem as the system's temp."""
    robota.register_model_metadata("bench-model", context_window=10_000_000, provider="bench")
    figures = Figures()
    with tempfile.TemporaryDirectory() as folder:
        await _load_and_save(folder, figures)
        await _memory(folder, figures)
        if many:
            await _many(folder, figures, many)
    return figures


def main(argv: list[str] | None = None) -> bool:
    """Measure, print, write ``benchmarks/out/sessions.json``; whether the goals pass."""
    args = list(sys.argv[1:] if argv is None else argv)
    many = int(args[args.index("--many") + 1]) if "--many" in args else MANY
    figures = asyncio.run(measure(many))
    passed = report(figures)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(asdict(figures), indent=2) + "\n")
    return passed


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
