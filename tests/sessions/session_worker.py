"""A worker process for the session trials: one turn on a session in a SQLite store.

Usage: ``python session_worker.py MODE DB SESSION_ID WORKDIR JOURNAL [TEXT]``

* ``MODE``: ``turn`` runs one turn with ``TEXT``; ``slow`` does too, but its model call writes
  ``WORKDIR/started`` and waits until ``WORKDIR/go`` exists (so a second worker can race it);
  ``kill`` runs a turn and SIGKILLs itself mid-turn — after its tool's effect (and, with a
  journal, after the effect's settlement was journaled); ``show`` only opens the session (which
  resumes a pending turn) and reports it; ``race`` does too, once ``WORKDIR/go`` exists (so
  several workers open one new session on a fresh file at once).
* ``JOURNAL``: a SQLite journal path, or ``-`` for none.
* ``SYSTEM_PROMPT`` (environment, optional): the agent's system prompt (default ``be brief``;
  empty for none).
* ``HOOK_LOG`` (environment, optional): a file that ``UserPromptSubmit`` and ``Stop`` command
  hooks append their JSON input to, one line each.

The model answers from the conversation: a user turn first gets a tool call (``effect``, whose
body appends ``label`` to ``WORKDIR/effects``), then ``done <label>``. Every model call is
appended to ``WORKDIR/calls`` before it answers. The last stdout line is a JSON report.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import robota
from robota import (
    ChatRequest,
    ExecutionJournal,
    JournalLease,
    JournalRecord,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolMessage,
    Usage,
    UserMessage,
)
from robota.core import HookRunner
from robota.host import CommandHookExecutor, SQLiteJournal
from robota.sessions import Session, SessionBusyError, SQLiteSessionStore

MODE, DB, SESSION_ID, WORKDIR, JOURNAL = sys.argv[1:6]
TEXT = sys.argv[6] if len(sys.argv) > 6 else ""
WORK = Path(WORKDIR)


def _kill() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class _Model(robota.Provider):
    @property
    def name(self) -> str:
        return "sessionmodel"

    async def chat(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> robota.ChatResponse:
        return await robota.collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        last_user = [m for m in request.messages if isinstance(m, UserMessage)][-1]
        label = str(last_user.content)
        after_user = request.messages[request.messages.index(last_user) :]
        answered = any(isinstance(m, ToolMessage) for m in after_user)
        with (WORK / "calls").open("a") as out:
            out.write(f"{os.getpid()} {label} {'second' if answered else 'first'}\n")
        if MODE == "slow":
            (WORK / "started").touch()
            # A rendezvous with the test (a file it creates), not a timing check.
            while not (WORK / "go").exists():  # noqa: ASYNC110 - another process sets it
                await asyncio.sleep(0.02)
        if answered:
            yield TextDelta(f"done {label}")
        else:
            yield ToolCallReady(ToolCall("call_1", "effect", json.dumps({"label": label})))
        yield ResponseDone(model=request.model, usage=Usage.from_counts(prompt=10, completion=5))


@robota.tool
def effect(label: str) -> str:
    """Record an external effect."""
    with (WORK / "effects").open("a") as out:
        out.write(label + "\n")
    if MODE == "kill" and JOURNAL == "-":
        _kill()  # mid-turn, after the effect, with nothing saved
    return f"did {label}"


class _KillingLease(JournalLease):
    def __init__(self, inner: JournalLease) -> None:
        self._inner = inner

    @property
    def execution_id(self) -> str:
        return self._inner.execution_id

    async def append(self, record: JournalRecord) -> None:
        await self._inner.append(record)
        if MODE == "kill" and record.kind == "effect_settled":
            _kill()  # mid-turn: the effect is journaled, the second model call is not made

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
    journal = None if JOURNAL == "-" else _KillingJournal(SQLiteJournal(JOURNAL))
    hooks = None
    if os.environ.get("HOOK_LOG"):
        record = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read().strip() + '\\n')"
        command = shlex.join([sys.executable, "-c", record, os.environ["HOOK_LOG"]])
        entry = [{"hooks": [{"type": "command", "command": command}]}]
        hooks = HookRunner(
            {"UserPromptSubmit": entry, "Stop": entry}, {"command": CommandHookExecutor()}
        )
    agent = robota.Agent(
        "m",
        provider=_Model(),
        tools=[effect],
        journal=journal,
        system_prompt=os.environ.get("SYSTEM_PROMPT", "be brief") or None,
        hooks=hooks,
    )
    store = SQLiteSessionStore(DB)
    report: dict[str, object] = {}
    if MODE in ("race", "race-open"):
        if MODE == "race-open":
            await store.list_sessions()  # the file is open: the race is the session's create
        # A rendezvous with the test (a file it creates), not a timing check.
        while not (WORK / "go").exists():  # noqa: ASYNC110 - another process sets it
            await asyncio.sleep(0.002)
    try:
        session = await Session.open(agent, store, SESSION_ID)
        try:
            if MODE in ("turn", "slow", "kill"):
                started = time.monotonic()
                try:
                    result = await session.run(TEXT)
                    report["output"] = result.output
                except SessionBusyError as exc:
                    report["busy"] = str(exc)
                    report["seconds"] = time.monotonic() - started
            report["history"] = [
                [m.kind, m.content if isinstance(m.content, str) else ""] for m in session.history
            ]
            report["statuses"] = [t.status for t in session.turns]
            report["pending"] = session.info.pending
        finally:
            await session.aclose()
    finally:
        await store.aclose()
        if journal is not None:
            await journal.aclose()
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
