"""A worker process for the handoff crash trial (issue 29, S40): run, die at a boundary, recover.

Usage: ``python handoff_crash_worker.py MODE JOURNAL EXECUTION_ID EFFECTS_FILE [KILL_AT]``

Two agents on two deterministic models: ``triage`` answers its first turn with a batch of an
external effect (``a``) and ``transfer_to_billing``; ``billing`` then performs effect ``b`` and
replies ``done: …`` with the results it saw. ``MODE`` is ``run`` (start the execution) or
``recover`` (a host after a crash: resume; settle every reconciliation item from the effects
file — an effect whose call id is there happened, anything else did not — and resume again).
``KILL_AT`` is ``<record kind>:<n>:<before|after>`` (SIGKILL around the n-th journal append of
that kind) or ``body:<n>`` (inside the n-th effect body, after its external effect was written).
The last stdout line is a JSON report.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any

import robota
import robota.host
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
)

MODE, JOURNAL, EXECUTION_ID, EFFECTS = sys.argv[1:5]
KILL_AT = sys.argv[5] if len(sys.argv) > 5 else ""
BODIES = [0]


def _kill() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class _KillingLease(JournalLease):
    def __init__(self, inner: JournalLease, counts: dict[str, int]) -> None:
        self._inner = inner
        self._counts = counts

    @property
    def execution_id(self) -> str:
        return self._inner.execution_id

    async def append(self, record: JournalRecord) -> None:
        self._counts[record.kind] = self._counts.get(record.kind, 0) + 1
        here = f"{record.kind}:{self._counts[record.kind]}"
        if f"{here}:before" == KILL_AT:
            _kill()
        await self._inner.append(record)
        if f"{here}:after" == KILL_AT:
            _kill()

    async def release(self) -> None:
        await self._inner.release()


class _KillingJournal(ExecutionJournal):
    def __init__(self, inner: ExecutionJournal) -> None:
        self._inner = inner
        self._counts: dict[str, int] = {}

    async def acquire(self, execution_id: str) -> JournalLease:
        return _KillingLease(await self._inner.acquire(execution_id), self._counts)

    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        return await self._inner.read(execution_id)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Model(robota.Provider):
    """Answers from what the conversation holds, so any process continues the same way."""

    def __init__(self, role: str) -> None:
        self._role = role

    @property
    def name(self) -> str:
        return f"{self._role}-vendor"

    async def chat(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> robota.ChatResponse:
        return await robota.collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        results = [m.content for m in request.messages if isinstance(m, ToolMessage)]
        if self._role == "triage":
            yield ToolCallReady(ToolCall("call_0", "effect", json.dumps({"label": "a"})))
            yield ToolCallReady(ToolCall("call_1", "transfer_to_billing", "{}"))
        elif not any(r == "did b" for r in results):
            yield ToolCallReady(ToolCall("call_0", "effect", json.dumps({"label": "b"})))
        else:
            yield TextDelta("done: " + ", ".join(results))
        yield ResponseDone(model=request.model, usage=Usage.from_counts(prompt=10, completion=5))


def _external_effect(call_id: str, label: str) -> None:
    # The external effect: one line per logical call, flushed to disk.
    with open(EFFECTS, "a", encoding="utf-8") as file:
        file.write(f"{call_id} {label}\n")
        file.flush()
        os.fsync(file.fileno())


def _tool() -> robota.Tool:
    @robota.tool
    async def effect(label: str, ctx: robota.ToolContext) -> str:
        """Perform a side effect outside the process."""
        _external_effect(ctx.call_id, label)
        BODIES[0] += 1
        if f"body:{BODIES[0]}" == KILL_AT:
            _kill()
        return f"did {label}"

    return effect


def _effect_of(call_id: str | None) -> str | None:
    if call_id is None or not os.path.exists(EFFECTS):
        return None
    with open(EFFECTS, encoding="utf-8") as file:
        for line in file:
            owner, _, label = line.strip().partition(" ")
            if owner == call_id:
                return f"did {label}"
    return None


def _history(agent: robota.Agent) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for m in agent.history:
        if isinstance(m, robota.AssistantMessage):
            rows.append(["assistant", m.content, [[c.name, c.arguments] for c in m.tool_calls]])
        elif isinstance(m, ToolMessage):
            rows.append(["tool", m.content, m.tool_name, m.is_error])
        else:
            rows.append([m.kind, m.content])
    return rows


async def main() -> None:
    report: dict[str, Any] = {"items": [], "statuses": []}
    journal = _KillingJournal(robota.host.SQLiteJournal(JOURNAL))
    billing = robota.Agent(
        provider=_Model("billing"),
        model="billing-model",
        name="billing",
        system_prompt="You handle billing.",
        tools=[_tool()],
    )
    triage = robota.Agent(
        provider=_Model("triage"),
        model="triage-model",
        name="triage",
        system_prompt="You route questions.",
        tools=[_tool()],
        handoffs=[billing],
        journal=journal,
        tool_concurrency=1,
    )
    try:
        if MODE == "run":
            result = await triage.run("start", execution_id=EXECUTION_ID)
        else:
            for _ in range(10):
                try:
                    result = await triage.resume(EXECUTION_ID)
                except robota.ExecutionStateError as error:
                    if error.code != "execution_unknown":
                        raise
                    report["statuses"].append("restarted")  # killed before its first record
                    result = await triage.run("start", execution_id=EXECUTION_ID)
                except robota.ReconciliationRequired as required:
                    for item in required.items:
                        proven = _effect_of(item.call_id) if item.kind == "effect" else None
                        report["items"].append([item.kind, proven is not None])
                        await triage.reconcile(
                            EXECUTION_ID, item.id, happened=proven is not None, result=proven
                        )
                    continue
                break
        report["statuses"].append(result.status)
        report["output"] = result.output
        report["agent"] = result.agent
        report["by_agent"] = sorted(result.usage_by_agent)
        report["history"] = _history(triage)
    finally:
        await triage.aclose()
        await billing.aclose()
        await journal.aclose()
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
