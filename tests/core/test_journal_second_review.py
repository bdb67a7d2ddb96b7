"""S23/S34/S38/S40: regressions for what a second review of durable execution proved.

A response that did not complete leaves no call unanswered, whatever cut it short and even across
a crash; a further cancellation reaches bodies already cancelled; a journal's own control outcome
keeps its kind; a model call reconciled with a reply is settled in one record; a stray
cancellation inside the tool gate is that call's failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

import robota
from journal_hooks import Crash, HookedJournal, crash_at
from robota.testing import InMemoryJournal, ScriptedProvider


def _unanswered(messages: Sequence[robota.Message]) -> set[str]:
    calls = {c.id for m in messages if isinstance(m, robota.AssistantMessage) for c in m.tool_calls}
    return calls - {m.tool_call_id for m in messages if isinstance(m, robota.ToolMessage)}


@robota.tool
def echo() -> str:
    """Echo."""
    return "x"


class _CutAfterCall(ScriptedProvider):
    """First call: one tool call, then a network failure (``fail``) or a long wait (``hang``)."""

    def __init__(self, mode: str, turns: list[Any]) -> None:
        super().__init__(turns)
        self.mode = mode
        self.calls = 0
        self.yielded = asyncio.Event()

    async def chat_stream(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[robota.StreamEvent]:
        self.calls += 1
        if self.calls == 1:
            self.requests.append(request)
            yield robota.ToolCallReady(robota.ToolCall("call_0", "echo", "{}"))
            self.yielded.set()
            if self.mode == "fail":
                raise ConnectionError("network dropped")
            await asyncio.sleep(60)
            return
        async for event in super().chat_stream(request, signal=signal):
            yield event


async def test_s34_calls_of_a_failed_response_are_answered() -> None:
    provider = _CutAfterCall("fail", ["hi"])
    agent = robota.Agent(provider=provider, model="m", tools=[echo])
    with pytest.raises(robota.ProviderError):
        await agent.run("go")
    assert _unanswered(list(agent.history)) == set()
    await agent.run("again")
    assert _unanswered(list(provider.requests[-1].messages)) == set()


async def test_s34_calls_of_a_response_whose_task_was_cancelled_are_answered() -> None:
    provider = _CutAfterCall("hang", ["hi"])
    agent = robota.Agent(provider=provider, model="m", tools=[echo])
    task = asyncio.create_task(agent.run("go"))
    await provider.yielded.wait()
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _unanswered(list(agent.history)) == set()


async def test_s40_a_failed_response_resumed_after_a_crash_sends_no_unanswered_call() -> None:
    inner = InMemoryJournal()
    # The process dies right after the failed response was recorded, before anything else.
    journal = HookedJournal(inner, after=crash_at("model_call_settled"))
    provider = _CutAfterCall("fail", ["hi"])
    agent = robota.Agent(provider=provider, model="m", tools=[echo], journal=journal)
    with pytest.raises(Crash):
        await agent.run("go", execution_id="e")
    fresh = robota.Agent(provider=provider, model="m", tools=[echo], journal=inner)
    result = await fresh.resume("e")
    assert result.status == "complete"
    assert _unanswered(list(provider.requests[-1].messages)) == set()


async def test_s23_a_further_cancellation_reaches_bodies_already_cancelled() -> None:
    started: list[str] = []
    both_started = asyncio.Event()
    cleaning = asyncio.Event()

    def slow(name: str) -> robota.Tool:
        @robota.tool(name=name)
        async def body() -> str:
            """Slow, with a slow cleanup."""
            started.append(name)
            if len(started) == 2:
                both_started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cleaning.set()
                await asyncio.sleep(60)  # a cleanup a second cancellation must cut short
                raise
            return "done"

        return body

    provider = ScriptedProvider([[("a", {}), ("b", {})], "never"])
    agent = robota.Agent(provider=provider, model="m", tools=[slow("a"), slow("b")])
    task = asyncio.create_task(agent.run("go"))
    await both_started.wait()
    task.cancel()
    await cleaning.wait()
    task.cancel()  # the second cancellation
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done  # like gather: it does not wait out the 60 s cleanup


class _LockedJournal(robota.ExecutionJournal):
    """A journal that detects a takeover on the second model call."""

    def __init__(self) -> None:
        self.inner = InMemoryJournal()

    async def acquire(self, execution_id: str) -> robota.JournalLease:
        return _LockedLease(await self.inner.acquire(execution_id))

    async def read(self, execution_id: str) -> tuple[robota.JournalRecord, ...]:
        return await self.inner.read(execution_id)


class _LockedLease(robota.JournalLease):
    def __init__(self, inner: robota.JournalLease) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def execution_id(self) -> str:
        return self.inner.execution_id

    async def append(self, record: robota.JournalRecord) -> None:
        if isinstance(record, robota.ModelCallStarted):
            self.calls += 1
            if self.calls == 2:
                raise robota.ExecutionLockedError("taken over", execution_id=self.execution_id)
        await self.inner.append(record)

    async def release(self) -> None:
        await self.inner.release()


async def test_s40_a_journals_own_control_outcome_keeps_its_kind() -> None:
    provider = ScriptedProvider([[("echo", {})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[echo], journal=_LockedJournal())
    with pytest.raises(robota.ExecutionLockedError) as caught:
        await agent.run("go", execution_id="e")
    assert caught.value.recoverable


async def test_s40_a_model_call_reconciled_with_a_reply_is_settled_in_one_record() -> None:
    inner = InMemoryJournal()
    journal = HookedJournal(inner, after=crash_at("model_call_started"))
    agent = robota.Agent(provider=ScriptedProvider(["lost"]), model="m", journal=journal)
    with pytest.raises(Crash):
        await agent.run("go", execution_id="e")
    host = robota.Agent(provider=ScriptedProvider([]), model="m", journal=inner)
    with pytest.raises(robota.ReconciliationRequired) as required:
        await host.resume("e")
    (item,) = required.value.items
    before = len(await inner.read("e"))
    await host.reconcile("e", item.id, happened=True, result="the reply")
    added = (await inner.read("e"))[before:]
    assert [record.kind for record in added] == ["model_call_settled"]
    result = await host.resume("e")
    assert result.output == "the reply"


class _CancellingGate:
    """A gate whose post-hook hits a cancelled await of its own for tool ``a``."""

    async def admit(self, invocation: robota.ToolInvocation) -> robota.Admission:
        return robota.Admission(allowed=True)

    async def settled(self, invocation: robota.ToolInvocation, result: robota.ToolResult) -> None:
        if invocation.tool.name == "a":
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            future.cancel()
            await future


@pytest.mark.parametrize("calls", [[("a", {})], [("a", {}), ("b", {})]], ids=["one", "two"])
async def test_s38_a_stray_cancellation_in_the_gate_is_that_calls_failure(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    ran: list[str] = []

    def named(name: str) -> robota.Tool:
        @robota.tool(name=name)
        def body() -> str:
            """A tool."""
            ran.append(name)
            return f"{name} result"

        return body

    provider = ScriptedProvider([calls, "done"])
    agent = robota.Agent(
        provider=provider, model="m", tools=[named("a"), named("b")], tool_gate=_CancellingGate()
    )
    result = await agent.run("go")
    assert result.status == "complete"
    answers = {m.tool_name: m for m in agent.history if isinstance(m, robota.ToolMessage)}
    assert "a" in ran
    assert answers["a"].is_error
    assert "CancelledError" in answers["a"].content
    assert "did not run" not in answers["a"].content
