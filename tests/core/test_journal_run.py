"""S40/S23/S39: what a journaled run writes, in which order, and how a rejected write ends it.

A journaled run awaits its journal before every boundary whose loss would make a model call or a
tool effect ambiguous. These tests read the journal back (from inside the provider and the tool
body, where the order matters) and break it at each boundary with a wrapping journal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import pytest

import robota
from journal_hooks import HookedJournal, fail_at, records_of
from robota.testing import InMemoryJournal, ScriptedProvider, ScriptedTurn

# --------------------------------------------------------------------------- helpers


class RewritingGate:
    """A tool gate that admits every call with replaced arguments."""

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments

    async def admit(self, invocation: robota.ToolInvocation) -> robota.Admission:
        return robota.Admission(allowed=True, arguments=self.arguments)

    async def settled(self, invocation: robota.ToolInvocation, result: robota.ToolResult) -> None:
        return None


class JournalReadingProvider(ScriptedProvider):
    """A scripted provider that reads the execution's journal each time it is called."""

    def __init__(
        self, turns: Iterable[robota.testing.TurnLike], journal: robota.ExecutionJournal, eid: str
    ) -> None:
        super().__init__(turns)
        self._journal = journal
        self._eid = eid
        self.journal_at_call: list[list[str]] = []

    async def chat_stream(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[robota.StreamEvent]:
        self.journal_at_call.append([r.kind for r in await self._journal.read(self._eid)])
        async for event in super().chat_stream(request, signal=signal):
            yield event


class HeldProvider(robota.Provider):
    """Streams ``"partial "``, then holds the response until the run's signal aborts.

    On the abort it either raises it (``late=None``, a well-behaved adapter) or still delivers
    ``late`` — its tool calls and a ResponseDone with ``usage`` (a provider whose response was
    already on its way: chargeable usage and tool intents arrive after the abort).
    """

    def __init__(
        self, *, late: tuple[tuple[robota.ToolCall, ...], robota.Usage] | None = None
    ) -> None:
        self.late = late
        self.streaming = asyncio.Event()
        self.calls = 0

    @property
    def name(self) -> str:
        return "held"

    async def chat(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> robota.ChatResponse:
        return await robota.collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[robota.StreamEvent]:
        assert signal is not None
        self.calls += 1
        yield robota.TextDelta("partial ")
        self.streaming.set()
        await signal.wait()
        if self.late is None:
            signal.throw_if_aborted()
            return
        calls, usage = self.late
        for call in calls:
            yield robota.ToolCallReady(call)
        yield robota.ResponseDone(model=request.model, usage=usage, finish_reason="stop")


async def _records(
    journal: robota.ExecutionJournal, execution_id: str
) -> tuple[robota.JournalRecord, ...]:
    return await journal.read(execution_id)


async def _kinds(journal: robota.ExecutionJournal, execution_id: str) -> list[str]:
    return [r.kind for r in await journal.read(execution_id)]


def _probe_tool(log: list[str]) -> robota.Tool:
    @robota.tool
    def probe(n: int = 0) -> str:
        """A cheap tool."""
        log.append(f"probe {n}")
        return f"probed {n}"

    return probe


# --------------------------------------------------------------------------- 1. what is written


async def test_s40_execution_started_holds_runtime_state_and_history_with_input_last() -> None:
    journal = InMemoryJournal()
    provider = ScriptedProvider(["hello"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        system_prompt="be brief",
        tools=[_probe_tool([])],
        journal=journal,
        max_same_tool_inputs=3,
    )
    await agent.run("hi", execution_id="exec-1", max_rounds=4)
    records = await _records(journal, "exec-1")
    started = records[0]
    assert isinstance(started, robota.ExecutionStarted)
    assert started.execution_id == "exec-1"
    state = started.state
    assert (state.provider, state.model, state.system_prompt) == ("scripted", "m", "be brief")
    assert (state.max_rounds, state.max_same_tool_inputs) == (4, 3)  # the run-scoped limit wins
    assert state.tool_residency == (("probe", "resident"),)
    assert len(state.tool_catalog_digest) == 64
    int(state.tool_catalog_digest, 16)  # a hex digest
    history = started.history
    assert isinstance(history[0], robota.SystemMessage)
    assert history[0].content == "be brief"
    assert isinstance(history[-1], robota.UserMessage)
    assert history[-1].content == "hi"


async def test_s40_tool_catalog_digest_changes_with_the_tool_set() -> None:
    journal = InMemoryJournal()

    @robota.tool
    def other(x: str) -> str:
        """Another tool."""
        return x

    plain = robota.Agent(provider=ScriptedProvider(["a"]), model="m", journal=journal)
    tooled = robota.Agent(
        provider=ScriptedProvider(["b"]), model="m", tools=[other], journal=journal
    )
    await plain.run("x", execution_id="e-plain")
    await tooled.run("x", execution_id="e-tooled")
    first = (await _records(journal, "e-plain"))[0]
    second = (await _records(journal, "e-tooled"))[0]
    assert isinstance(first, robota.ExecutionStarted)
    assert isinstance(second, robota.ExecutionStarted)
    assert first.state.tool_catalog_digest != second.state.tool_catalog_digest
    assert first.state.tool_residency == ()


async def test_s40_model_call_started_is_durable_before_the_provider_is_called() -> None:
    journal = InMemoryJournal()
    provider = JournalReadingProvider([[("probe", {"n": 1})], "done"], journal, "e")
    agent = robota.Agent(provider=provider, model="m", tools=[_probe_tool([])], journal=journal)
    await agent.run("go", execution_id="e")
    first, second = provider.journal_at_call
    assert first == ["execution_started", "model_call_started"]
    assert second[-1] == "model_call_started"
    assert second[:-1] == [
        "execution_started",
        "model_call_started",
        "model_call_settled",
        "effect_started",
        "effect_settled",
    ]


async def test_s40_model_call_started_carries_the_history_committed_since_the_last_record() -> None:
    journal = InMemoryJournal()
    provider = ScriptedProvider([[("probe", {"n": 1})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[_probe_tool([])], journal=journal)
    await agent.run("go", execution_id="e")
    calls = records_of(await _records(journal, "e"), robota.ModelCallStarted)
    assert [c.round for c in calls] == [1, 2]
    assert calls[0].history == ()  # the input is in execution_started
    (tool_message,) = calls[1].history
    assert isinstance(tool_message, robota.ToolMessage)
    assert tool_message.content == "probed 1"


async def test_s40_model_call_settled_holds_usage_model_and_continuation_before_tools_run() -> None:
    journal = InMemoryJournal()
    seen: list[list[robota.JournalRecord]] = []

    @robota.tool
    async def probe(ctx: robota.ToolContext) -> str:
        """Probe."""
        assert ctx.execution_id is not None
        seen.append(list(await journal.read(ctx.execution_id)))
        return "ok"

    usage = robota.Usage.from_counts(prompt=11, completion=7)
    provider = ScriptedProvider(
        [
            ScriptedTurn(
                tool_calls=[("probe", {})], usage=usage, model="m-answer", continuation="cont-1"
            ),
            "done",
        ]
    )
    agent = robota.Agent(provider=provider, model="m", tools=[probe], journal=journal)
    await agent.run("go", execution_id="e")
    (inside,) = seen
    settled = records_of(inside, robota.ModelCallSettled)
    assert len(settled) == 1  # durable before the tool ran
    record = settled[0]
    started = records_of(inside, robota.ModelCallStarted)[0]
    assert record.call_id == started.call_id
    assert record.outcome == "success"
    assert record.dispatched is True
    message = record.message
    assert message.usage == usage
    assert message.model == "m-answer"
    assert message.continuation == "cont-1"
    assert [(c.id, c.name) for c in message.tool_calls] == [("call_0", "probe")]


async def test_s40_effect_recorded_with_final_arguments_before_body() -> None:
    journal = InMemoryJournal()
    seen: list[tuple[int, str, list[robota.JournalRecord]]] = []

    @robota.tool
    async def probe(n: int, ctx: robota.ToolContext) -> str:
        """Probe."""
        assert ctx.execution_id is not None
        seen.append((n, ctx.call_id, list(await journal.read(ctx.execution_id))))
        return f"probed {n}"

    provider = ScriptedProvider([[("probe", {"n": 1})], "done"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[probe],
        journal=journal,
        tool_gate=RewritingGate({"n": 42}),
    )
    await agent.run("go", execution_id="e")
    ((n, call_id, inside),) = seen
    assert n == 42  # the body ran with the gate's rewrite
    last = inside[-1]
    assert isinstance(last, robota.EffectStarted)  # its own start, durable before it began
    assert dict(last.arguments) == {"n": 42}  # what the body ran with, not what the model sent
    assert last.call_id == call_id
    assert last.tool_name == "probe"
    assert last.provider_call_id == "call_0"
    assert not records_of(inside, robota.EffectSettled)


async def test_s40_effect_settled_follows_the_body_and_a_checkpoint_ends_the_run() -> None:
    journal = InMemoryJournal()
    log: list[str] = []
    provider = ScriptedProvider([[("probe", {"n": 1})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[_probe_tool(log)], journal=journal)
    result = await agent.run("go", execution_id="e")
    records = await _records(journal, "e")
    assert [r.kind for r in records] == [
        "execution_started",
        "model_call_started",
        "model_call_settled",
        "effect_started",
        "effect_settled",
        "model_call_started",
        "model_call_settled",
        "checkpoint",
    ]
    effect_started = records_of(records, robota.EffectStarted)[0]
    settled = records_of(records, robota.EffectSettled)[0]
    assert settled.call_key == effect_started.call_key
    assert (settled.status, settled.content, settled.is_error) == ("completed", "probed 1", False)
    checkpoint = records[-1]
    assert isinstance(checkpoint, robota.Checkpoint)
    assert (checkpoint.outcome, checkpoint.stop_reason) == ("complete", "end_turn")
    assert result.status == "complete"
    assert log == ["probe 1"]


# --------------------------------------------------------------------------- 2. identities


def _execution_id_agent(
    journal: robota.ExecutionJournal | None, seen: list[str | None]
) -> robota.Agent:
    """An agent making one tool call whose body logs the ``ctx.execution_id`` it saw to ``seen``."""

    @robota.tool
    def probe(ctx: robota.ToolContext) -> str:
        """Probe."""
        seen.append(ctx.execution_id)
        return "ok"

    return robota.Agent(
        provider=ScriptedProvider([[("probe", {})], "done"]),
        model="m",
        tools=[probe],
        journal=journal,
    )


@pytest.mark.parametrize("journaled", [True, False])
async def test_s40_tool_context_and_result_carry_the_chosen_execution_id(journaled: bool) -> None:
    seen: list[str | None] = []
    journal = InMemoryJournal() if journaled else None
    agent = _execution_id_agent(journal, seen)
    result = await agent.run("go", execution_id="host-chosen-1")
    assert seen == ["host-chosen-1"]
    assert result.execution_id == "host-chosen-1"
    if journal is not None:
        assert await _records(journal, "host-chosen-1")


@pytest.mark.parametrize("journaled", [True, False])
async def test_s40_without_execution_id_a_minted_one_is_used_and_equals_run_id(
    journaled: bool,
) -> None:
    seen: list[str | None] = []
    journal = InMemoryJournal() if journaled else None
    agent = _execution_id_agent(journal, seen)
    result = await agent.run("go")
    assert result.execution_id
    assert result.execution_id == result.run_id
    assert seen == [result.execution_id]
    if journal is not None:
        first = (await _records(journal, result.execution_id))[0]
        assert isinstance(first, robota.ExecutionStarted)
        assert first.execution_id == result.execution_id


# --------------------------------------------------------------------------- 3. rejected writes


@pytest.mark.parametrize(
    ("kind", "nth", "provider_calls", "bodies"),
    [
        ("execution_started", 1, 0, 0),
        ("model_call_started", 1, 0, 0),
        ("model_call_settled", 1, 1, 0),
        ("effect_started", 1, 1, 0),
        ("effect_settled", 1, 1, 1),
        ("model_call_started", 2, 1, 1),
        ("model_call_settled", 2, 2, 1),
        ("checkpoint", 1, 2, 1),
    ],
)
async def test_s40_rejected_write_fails_the_run_with_storage_error_never_retried(
    kind: str, nth: int, provider_calls: int, bodies: int
) -> None:
    cause = OSError("disk full")
    journal = HookedJournal(InMemoryJournal(), before=fail_at(kind, nth=nth, error=cause))
    log: list[str] = []
    provider = ScriptedProvider([[("probe", {"n": 1})], "done", "never asked"])
    agent = robota.Agent(provider=provider, model="m", tools=[_probe_tool(log)], journal=journal)
    with pytest.raises(robota.StorageError) as info:
        await agent.run("go", execution_id="e")
    assert info.value.__cause__ is cause  # the original cause is kept
    assert len(provider.requests) == provider_calls  # no provider call after the failure
    assert len(log) == bodies  # no body started after a failed effect_started
    assert journal.attempts.count(kind) == nth  # the failed write was not retried
    assert journal.attempts[-1] == kind  # and nothing was written after it
    # Never a tool result the model sees: no failed (or any error) tool message was invented.
    tool_messages = [m for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert not [m for m in tool_messages if m.is_error]
    if kind in ("effect_started", "effect_settled"):
        assert tool_messages == []


async def test_s40_rejected_write_does_not_become_a_tool_failure_the_model_retries() -> None:
    journal = HookedJournal(InMemoryJournal(), before=fail_at("effect_started"))
    log: list[str] = []
    provider = ScriptedProvider([[("probe", {"n": 1})], [("probe", {"n": 1})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[_probe_tool(log)], journal=journal)
    with pytest.raises(robota.StorageError):
        await agent.run("go", execution_id="e")
    assert len(provider.requests) == 1
    assert log == []
    assert provider.remaining == 2


async def test_s40_rejected_effect_write_lets_running_siblings_finish_and_starts_no_more() -> None:
    events: list[str] = []

    @robota.tool
    async def slow(ctx: robota.ToolContext) -> str:
        """Slow."""
        events.append("slow started")
        await asyncio.sleep(0.05)
        events.append("slow finished")
        return "slow done"

    @robota.tool
    def fragile() -> str:
        """Its start cannot be recorded."""
        events.append("fragile started")
        return "fragile done"

    @robota.tool
    def late() -> str:
        """Queued behind the others."""
        events.append("late started")
        return "late done"

    inner = InMemoryJournal()
    journal = HookedJournal(inner, before=fail_at("effect_started", tool="fragile"))
    provider = ScriptedProvider([[("slow", {}), ("fragile", {}), ("late", {})], "never"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[slow, fragile, late],
        journal=journal,
        tool_concurrency=2,
    )
    with pytest.raises(robota.StorageError):
        await agent.run("go", execution_id="e")
    # The running sibling finished (it was not cancelled) before the failure was raised; the
    # failed one never started, and the queued one never started either.
    assert events == ["slow started", "slow finished"]
    records = await _records(inner, "e")
    started = {r.call_key: r.tool_name for r in records_of(records, robota.EffectStarted)}
    settled = [started[r.call_key] for r in records_of(records, robota.EffectSettled)]
    assert sorted(started.values()) == ["slow"]
    assert settled == ["slow"]
    assert len(provider.requests) == 1
    assert not [m for m in agent.history if isinstance(m, robota.ToolMessage) and m.is_error]


# --------------------------------------------------------------------------- 4. S23 races


async def test_s23_persistence_failure_wins_over_a_racing_cancellation() -> None:
    cause = OSError("disk full")
    journal = HookedJournal(InMemoryJournal(), before=fail_at("model_call_settled", error=cause))
    provider = HeldProvider()
    agent = robota.Agent(provider=provider, model="m", journal=journal)
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("go", signal=controller.signal, execution_id="e"))
    await asyncio.wait_for(provider.streaming.wait(), timeout=5)
    controller.abort()
    with pytest.raises(robota.StorageError) as info:
        await task
    assert info.value.__cause__ is cause
    assert not robota.is_abort(info.value)


async def test_s23_journaled_run_joins_provider_settlement_and_records_late_usage() -> None:
    journal = InMemoryJournal()
    usage = robota.Usage.from_counts(prompt=120, completion=30)
    provider = HeldProvider(late=((), usage))
    agent = robota.Agent(provider=provider, model="m", journal=journal)
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("go", signal=controller.signal, execution_id="e"))
    await asyncio.wait_for(provider.streaming.wait(), timeout=5)
    controller.abort()
    result = await asyncio.wait_for(task, timeout=5)
    (settled,) = records_of(await _records(journal, "e"), robota.ModelCallSettled)
    assert settled.message.usage == usage  # the late, chargeable usage is recorded
    assert result.usage.prompt_tokens == 120


async def test_s23_late_response_after_abort_does_not_replace_the_interruption() -> None:
    journal = InMemoryJournal()
    log: list[str] = []
    usage = robota.Usage.from_counts(prompt=10, completion=5)
    provider = HeldProvider(late=((), usage))
    agent = robota.Agent(provider=provider, model="m", tools=[_probe_tool(log)], journal=journal)
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("go", signal=controller.signal, execution_id="e"))
    await asyncio.wait_for(provider.streaming.wait(), timeout=5)
    controller.abort()
    result = await asyncio.wait_for(task, timeout=5)
    # S23: the cancellation won; a late provider result never replaces it.
    assert result.status == "interrupted"
    assert result.stop_reason == "interrupted"
    checkpoint = (await _records(journal, "e"))[-1]
    assert isinstance(checkpoint, robota.Checkpoint)
    assert checkpoint.outcome == "interrupted"


async def test_s23_late_tool_intents_after_abort_are_recorded_but_never_dispatched() -> None:
    journal = InMemoryJournal()
    log: list[str] = []
    usage = robota.Usage.from_counts(prompt=10, completion=5)
    late_call = robota.ToolCall("late_0", "probe", '{"n": 7}')
    provider = HeldProvider(late=((late_call,), usage))
    agent = robota.Agent(provider=provider, model="m", tools=[_probe_tool(log)], journal=journal)
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("go", signal=controller.signal, execution_id="e"))
    await asyncio.wait_for(provider.streaming.wait(), timeout=5)
    controller.abort()
    result = await asyncio.wait_for(task, timeout=5)
    records = await _records(journal, "e")
    (settled,) = records_of(records, robota.ModelCallSettled)
    assert [c.id for c in settled.message.tool_calls] == ["late_0"]  # the intent is recorded
    assert log == []  # and never dispatched
    assert not records_of(records, robota.EffectStarted)
    assert result.status == "interrupted"
    assert provider.calls == 1


# --------------------------------------------------------------------------- 5. S39 guard


def _identical_input_agent(
    journal: robota.ExecutionJournal | None,
) -> tuple[robota.Agent, ScriptedProvider, list[str]]:
    log: list[str] = []
    same = ("probe", {"n": 1})
    provider = ScriptedProvider([[same], [same], "never"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[_probe_tool(log)],
        journal=journal,
        max_same_tool_inputs=1,
    )
    return agent, provider, log


def _undispatched(history: Iterable[robota.Message]) -> list[robota.ToolMessage]:
    return [
        m for m in history if isinstance(m, robota.ToolMessage) and "not dispatched" in m.content
    ]


async def test_s39_identical_input_guard_in_a_journaled_run_invents_no_undispatched_results() -> (
    None
):
    journal = InMemoryJournal()
    agent, provider, log = _identical_input_agent(journal)
    with pytest.raises(robota.SameToolInputLoopError):
        await agent.run("go", execution_id="e")
    assert log == ["probe 1"]
    assert len(provider.requests) == 2
    assert _undispatched(agent.history) == []  # S39: the journal keeps recovery authority
    records = await _records(journal, "e")
    assert len(records_of(records, robota.EffectStarted)) == 1
    assert all("not dispatched" not in m.content for m in _history_in(records))


async def test_s39_identical_input_guard_without_a_journal_answers_the_batch() -> None:
    agent, _, log = _identical_input_agent(None)
    with pytest.raises(robota.SameToolInputLoopError):
        await agent.run("go")
    assert log == ["probe 1"]
    last_assistant = [m for m in agent.history if isinstance(m, robota.AssistantMessage)][-1]
    answers = _undispatched(agent.history)
    assert [m.tool_call_id for m in answers] == [c.id for c in last_assistant.tool_calls]


def _history_in(records: Iterable[robota.JournalRecord]) -> list[robota.Message]:
    messages: list[robota.Message] = []
    for record in records:
        if isinstance(
            record, (robota.ExecutionStarted, robota.ModelCallStarted, robota.Checkpoint)
        ):
            messages.extend(record.history)
        elif isinstance(record, robota.ModelCallSettled):
            messages.append(record.message)
    return messages
