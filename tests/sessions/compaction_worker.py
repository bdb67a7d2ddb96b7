"""A worker process for the compaction crash trial: turns on a session with a SQLite journal.

Usage: ``python compaction_worker.py MODE DB JOURNAL WORKDIR TURNS``

* ``MODE``: ``kill`` runs up to ``TURNS`` turns and SIGKILLs itself once a compaction's summary
  call is journaled as settled (the summary answered, the ``Compacted`` entry not yet written);
  ``turn`` runs ``TURNS`` turns.
* Every model call's kind (``summary``, ``tool``, ``answer``) is appended to ``WORKDIR/calls``.

The last stdout line is a JSON report: the session's compactions and its history's head.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import robota
from robota import ExecutionJournal, JournalLease, JournalRecord
from robota.host import SQLiteJournal
from robota.sessions import Session, SQLiteSessionStore, is_compaction_summary
from sessions.compaction_model import FILLER, CompactionModel, lookup

MODE, DB, JOURNAL, WORKDIR, TURNS = sys.argv[1:6]
WORK = Path(WORKDIR)


def _record(kind: str) -> None:
    with (WORK / "calls").open("a") as out:
        out.write(kind + "\n")


class _KillingLease(JournalLease):
    def __init__(self, inner: JournalLease) -> None:
        self._inner = inner

    @property
    def execution_id(self) -> str:
        return self._inner.execution_id

    async def append(self, record: JournalRecord) -> None:
        await self._inner.append(record)
        compaction = "/compact-" in self.execution_id
        if MODE == "kill" and compaction and record.kind == "model_call_settled":
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)  # the summary is journaled, not yet recorded

    async def release(self) -> None:
        await self._inner.release()


class _KillingJournal(ExecutionJournal):
    def __init__(self, inner: ExecutionJournal) -> None:
        self._inner = inner

    async def acquire(self, execution_id: str) -> JournalLease:
        return _KillingLease(await self._inner.acquire(execution_id))

    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        return await self._inner.read(execution_id)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def main() -> dict[str, object]:
    journal = _KillingJournal(SQLiteJournal(JOURNAL))
    agent = robota.Agent(
        "m",
        provider=CompactionModel(on_call=_record),
        tools=[lookup],
        journal=journal,
        context_window=2_000,
        system_prompt="live prompt",
    )
    store = SQLiteSessionStore(DB)
    try:
        session = await Session.open(agent, store, "chat")
        try:
            for i in range(int(TURNS)):
                await session.run(f"q{len(session.turns)}-{i} {FILLER}")
            return {
                "compactions": [[c.number, c.upto, c.summary] for c in session.compactions],
                "head_marked": is_compaction_summary(session.history[0]),
                "turns": len(session.turns),
            }
        finally:
            await session.aclose()
    finally:
        await store.aclose()
        await journal.aclose()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
