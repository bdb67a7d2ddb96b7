"""S23/S34/S38/S39/S40: regressions for the defects a review of durable execution proved.

Each test states the fixed behaviour of one reviewed defect: a control outcome a tool body
catches still wins, a stray cancellation is a body's failure, a start saved after the batch
halted never runs, cancellation waits for the bodies' cleanup, a resume neither counts a batch
twice nor replays turn-level observations, and every restored history is one a provider accepts.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import pytest

import robota
from journal_hooks import Crash, HookedJournal, fail_at, records_of
from robota.testing import InMemoryJournal, ScriptedProvider

# --------------------------------------------------------------------------- helpers


def _tool_messages(messages: Iterable[robota.Message]) -> list[robota.ToolMessage]:
    return [m for m in messages if isinstance(m, robota.ToolMessage)]


def _unanswered(messages: Sequence[robota.Message]) -> set[str]:
    """Tool-call ids of ``messages`` that no tool message answers."""
    calls = {c.id for m in messages if isinstance(m, robota.AssistantMessage) for c in m.tool_calls}
    return calls - {m.tool_call_id for m in _tool_messages(messages)}


class Gate:
    """A tool gate that admits every call and logs which tools it was asked about."""

    def __init__(self) -> None:
        self.admitted: list[str] = []

    async def admit(self, invocation: robota.ToolInvocation) -> robota.Admission:
        self.admitted.append(invocation.tool.name)
        return robota.Admission(allowed=True)

    async def settled(self, invocation: robota.ToolInvocation, result: robota.ToolResult) -> None:
        return None


def _deploy(effects: list[str]) -> robota.Tool:
    @robota.tool
    async def deploy(ctx: robota.ToolContext) -> str:
        """Deploys once a person approved it."""
        answer: Any = await ctx.request_outside_response("approval", {})
        effects.append(f"deployed by {answer['by']}")
        return "deployed"

    return deploy


def _late(effects: list[str]) -> robota.Tool:
    @robota.tool
    def late() -> str:
        """An effect beside the deploy."""
        effects.append("late")
        return "late done"

    return late


# --------------------------------------------------------------------------- 1. swallowed control


def _catching_deploy(variant: str, effects: list[str]) -> robota.Tool:
    """A deploy whose body catches what its approval request raises, the way ``variant`` says."""
    if variant == "broad-except":

        @robota.tool
        async def deploy(target: str, ctx: robota.ToolContext) -> str:
            """Deploys after approval; reports any failure to get it."""
            try:
                answer = await ctx.request_outside_response("approval", {"target": target})
            except Exception as exc:  # the common tool-author pattern under test
                return f"could not get approval: {exc}"
            effects.append(f"deployed {target} ({answer})")
            return "deployed"

    elif variant == "task-group":

        @robota.tool
        async def deploy(target: str, ctx: robota.ToolContext) -> str:
            """Deploys after approval, asked from a task group."""
            async with asyncio.TaskGroup() as group:
                waiting = group.create_task(
                    ctx.request_outside_response("approval", {"target": target})
                )
            effects.append(f"deployed {target} ({waiting.result()})")
            return "deployed"

    else:
        assert variant == "task-group-caught"

        @robota.tool
        async def deploy(target: str, ctx: robota.ToolContext) -> str:
            """Deploys after approval, asked from a task group whose failures it reports."""
            failed = False
            try:
                async with asyncio.TaskGroup() as group:
                    group.create_task(ctx.request_outside_response("approval", {"target": target}))
            except* Exception:
                failed = True
            if failed:
                return "could not get approval"
            effects.append(f"deployed {target}")
            return "deployed"

    return deploy


CATCHING = ["broad-except", "task-group", "task-group-caught"]


@pytest.mark.parametrize("variant", CATCHING)
async def test_s39_a_wait_the_tool_body_catches_still_suspends_the_execution(variant: str) -> None:
    journal = InMemoryJournal()
    effects: list[str] = []
    provider = ScriptedProvider([[("deploy", {"target": "prod"})], "ok, will retry"])
    agent = robota.Agent(
        provider=provider, model="m", tools=[_catching_deploy(variant, effects)], journal=journal
    )
    result = await agent.run("ship", execution_id="e")
    assert result.status == "suspended"
    (request,) = result.pending_requests
    assert (request.kind, request.payload, request.tool_name) == (
        "approval",
        {"target": "prod"},
        "deploy",
    )
    assert effects == []
    # The model never saw the body's text: no second call, no tool result.
    assert len(provider.requests) == 1
    assert _tool_messages(agent.history) == []
    records = await journal.read("e")
    assert [r.kind for r in records][-3:] == ["effect_started", "outside_requested", "checkpoint"]
    assert not records_of(records, robota.EffectSettled)
    checkpoint = records[-1]
    assert isinstance(checkpoint, robota.Checkpoint)
    assert checkpoint.outcome == "suspended"


@pytest.mark.parametrize("variant", CATCHING)
async def test_s40_a_rejected_write_the_tool_body_catches_still_fails_the_run(
    variant: str,
) -> None:
    inner = InMemoryJournal()
    cause = OSError("disk full")
    journal = HookedJournal(inner, before=fail_at("outside_requested", error=cause))
    effects: list[str] = []
    provider = ScriptedProvider([[("deploy", {"target": "prod"})], "retrying"])
    agent = robota.Agent(
        provider=provider, model="m", tools=[_catching_deploy(variant, effects)], journal=journal
    )
    with pytest.raises(robota.StorageError) as info:
        await agent.run("ship", execution_id="e")
    assert effects == []
    assert len(provider.requests) == 1  # never a tool failure the model is shown and retries
    assert _tool_messages(agent.history) == []
    # Nothing was written after the rejected write: no settlement, no checkpoint.
    assert journal.attempts[-1] == "outside_requested"
    assert [r.kind for r in await inner.read("e")][-1] == "effect_started"
    assert info.value.__cause__ is cause  # S39: the persistence failure keeps its own cause


# --------------------------------------------------------------------------- 2. stray cancellation


async def test_s40_a_stray_cancellation_raised_by_a_body_is_its_recorded_failure() -> None:
    inner = InMemoryJournal()
    effects: list[str] = []

    @robota.tool
    async def pay() -> str:
        """Charges a card, then awaits a future something else cancelled."""
        effects.append("charged")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.cancel()
        await future  # a CancelledError not aimed at the run
        return "paid"

    @robota.tool
    def other() -> str:
        """A neighbour in the same batch."""
        return "ok"

    model_calls: list[bool] = []

    async def crash_at_next_model_call(record: robota.JournalRecord) -> None:
        if isinstance(record, robota.ModelCallStarted):
            model_calls.append(True)
            if len(model_calls) == 2:
                raise Crash("died after the tool round")

    agent = robota.Agent(
        provider=ScriptedProvider([[("pay", {}), ("other", {})], "never"]),
        model="m",
        tools=[pay, other],
        journal=HookedJournal(inner, before=crash_at_next_model_call),
    )
    with pytest.raises(Crash):
        await agent.run("go", execution_id="e")
    records = await inner.read("e")
    started = {r.call_key: r.tool_name for r in records_of(records, robota.EffectStarted)}
    settled = {started[r.call_key]: r for r in records_of(records, robota.EffectSettled)}
    assert set(settled) == {"pay", "other"}
    assert (settled["pay"].status, settled["pay"].is_error) == ("failed", True)
    assert "before this tool started" not in settled["pay"].content  # never "did not start"
    (pay_message,) = [m for m in _tool_messages(agent.history) if m.tool_name == "pay"]
    assert pay_message.is_error
    assert "before this tool started" not in pay_message.content
    # Recovery reuses the failed settlement: no reconciliation, and the charge is not repeated.
    provider = ScriptedProvider(["done"])
    fresh = robota.Agent(provider=provider, model="m", tools=[pay, other], journal=inner)
    result = await fresh.resume("e")
    assert result.status == "complete"
    assert effects == ["charged"]
    (request,) = provider.requests
    answers = {m.tool_name: m for m in _tool_messages(request.messages)}
    assert answers["pay"].content == settled["pay"].content
    assert answers["other"].content == "ok"


# --------------------------------------------------------------------------- 3. start after halt


def _abandoned_after_start(
    records: Sequence[robota.JournalRecord], tool_name: str
) -> tuple[int, int]:
    """Indexes of ``tool_name``'s effect_started and of its ``reconciled`` happened=False."""
    (start_at,) = [
        i
        for i, r in enumerate(records)
        if isinstance(r, robota.EffectStarted) and r.tool_name == tool_name
    ]
    start = records[start_at]
    assert isinstance(start, robota.EffectStarted)
    marks = [
        i
        for i, r in enumerate(records)
        if isinstance(r, robota.Reconciled) and r.item_id == f"effect:{start.call_key}"
    ]
    assert len(marks) == 1, f"no single reconciled record for {start.call_key}: {records}"
    mark = records[marks[0]]
    assert isinstance(mark, robota.Reconciled)
    assert mark.happened is False
    return start_at, marks[0]


async def test_s40_a_start_saved_while_a_wait_halts_the_batch_never_runs_and_runs_once_later() -> (
    None
):
    inner = InMemoryJournal()
    effects: list[str] = []
    wait_saved = asyncio.Event()

    async def hold_late_start(record: robota.JournalRecord) -> None:
        if isinstance(record, robota.EffectStarted) and record.tool_name == "late":
            await wait_saved.wait()  # a slow write, still in flight when the batch halts

    async def note_wait(record: robota.JournalRecord) -> None:
        if isinstance(record, robota.OutsideRequested):
            wait_saved.set()

    journal = HookedJournal(inner, before=hold_late_start, after=note_wait)
    tools = [_deploy(effects), _late(effects)]
    agent = robota.Agent(
        provider=ScriptedProvider([[("late", {}), ("deploy", {})]]),
        model="m",
        tools=tools,
        journal=journal,
        tool_concurrency=2,
    )
    suspended = await agent.run("go", execution_id="e")
    assert suspended.status == "suspended"
    assert effects == []  # the late body never ran
    records = await inner.read("e")
    start_at, mark_at = _abandoned_after_start(records, "late")
    assert start_at < mark_at
    await agent.respond("e", suspended.pending_requests[0].id, {"by": "ops"})
    provider = ScriptedProvider(["done"])
    fresh = robota.Agent(
        provider=provider,
        model="m",
        tools=[_deploy(effects), _late(effects)],
        journal=inner,
        tool_concurrency=2,
    )
    result = await fresh.resume("e")  # no reconciliation is asked for the abandoned start
    assert result.status == "complete"
    assert sorted(effects) == ["deployed by ops", "late"]  # each effect exactly once
    (request,) = provider.requests
    assert {m.tool_name: m.content for m in _tool_messages(request.messages)} == {
        "late": "late done",
        "deploy": "deployed",
    }


async def test_s40_a_start_saved_while_a_storage_failure_halts_the_batch_never_runs() -> None:
    inner = InMemoryJournal()
    effects: list[str] = []
    failed = asyncio.Event()

    @robota.tool
    def quick() -> str:
        """Settles at once; its settlement is rejected."""
        effects.append("quick")
        return "quick done"

    async def before(record: robota.JournalRecord) -> None:
        if isinstance(record, robota.EffectStarted) and record.tool_name == "late":
            await failed.wait()  # a slow write, still in flight when the batch halts
        if isinstance(record, robota.EffectSettled) and not failed.is_set():
            failed.set()
            raise OSError("disk full")

    agent = robota.Agent(
        provider=ScriptedProvider([[("late", {}), ("quick", {})]]),
        model="m",
        tools=[quick, _late(effects)],
        journal=HookedJournal(inner, before=before),
        tool_concurrency=2,
    )
    with pytest.raises(robota.StorageError):
        await agent.run("go", execution_id="e")
    assert effects == ["quick"]  # the late body never ran
    records = await inner.read("e")
    start_at, mark_at = _abandoned_after_start(records, "late")
    assert start_at < mark_at
    # Only the quick call (its body ran, its result was lost) is left for the host to settle.
    provider = ScriptedProvider(["done"])
    fresh = robota.Agent(provider=provider, model="m", tools=[quick, _late(effects)], journal=inner)
    with pytest.raises(robota.ReconciliationRequired) as info:
        await fresh.resume("e")
    (item,) = info.value.items
    assert (item.kind, item.tool_name) == ("effect", "quick")
    await fresh.reconcile("e", item.id, happened=True, result="quick done")
    result = await fresh.resume("e")
    assert result.status == "complete"
    assert effects == ["quick", "late"]  # the late call ran exactly once, on resume


# --------------------------------------------------------------------------- 4. cancellation


async def test_s23_cancelling_the_run_mid_batch_returns_only_after_the_bodies_cleaned_up() -> None:
    journal = InMemoryJournal()
    log: list[str] = []
    running: set[int] = set()
    both_running = asyncio.Event()

    @robota.tool
    async def slow(n: int) -> str:
        """Runs until cancelled, then rolls back over several loop turns."""
        running.add(n)
        if len(running) == 2:
            both_running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            for _ in range(20):  # the rollback: several steps, each yielding to the loop
                await asyncio.sleep(0)
            try:
                lease = await journal.acquire("e")
            except robota.ExecutionLockedError:
                log.append(f"slow {n} cleaned up, lease held")
            else:
                await lease.release()
                log.append(f"slow {n} cleaned up, lease free")
            raise
        return "never"

    agent = robota.Agent(
        provider=ScriptedProvider([[("slow", {"n": 1}), ("slow", {"n": 2})], "never"]),
        model="m",
        tools=[slow],
        journal=journal,
    )
    task = asyncio.create_task(agent.run("go", execution_id="e"))
    await asyncio.wait_for(both_running.wait(), timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    log.append("run returned")
    assert sorted(log[:2]) == ["slow 1 cleaned up, lease held", "slow 2 cleaned up, lease held"]
    assert log[2:] == ["run returned"]
    lease = await journal.acquire("e")  # another writer gets it once the run returned
    await lease.release()


# --------------------------------------------------------------------------- 5. guard on resume


async def test_s39_resume_after_an_interrupted_tool_round_does_not_count_the_batch_twice() -> None:
    journal = InMemoryJournal()
    controller = robota.AbortController()
    bodies: list[int] = []

    @robota.tool
    def probe(x: int) -> str:
        """The user presses stop while it runs."""
        bodies.append(x)
        controller.abort()
        return "ok"

    agent = robota.Agent(
        provider=ScriptedProvider([[("probe", {"x": 1})]]),
        model="m",
        tools=[probe],
        journal=journal,
        max_same_tool_inputs=1,
    )
    first = await agent.run("go", execution_id="e", signal=controller.signal)
    assert first.status == "interrupted"
    provider = ScriptedProvider(["done"])
    fresh = robota.Agent(
        provider=provider, model="m", tools=[probe], journal=journal, max_same_tool_inputs=1
    )
    result = await fresh.resume("e")  # the model asked once: no SameToolInputLoopError
    assert result.status == "complete"
    assert result.output == "done"
    assert bodies == [1]
    assert len(provider.requests) == 1


async def test_s40_resume_of_an_execution_the_identical_input_guard_stopped_raises_it_again() -> (
    None
):
    journal = InMemoryJournal()
    bodies: list[int] = []

    @robota.tool
    def probe(x: int) -> str:
        """A tool the model keeps calling with the same input."""
        bodies.append(x)
        return "ok"

    agent = robota.Agent(
        provider=ScriptedProvider([[("probe", {"x": 1})]] * 3),
        model="m",
        tools=[probe],
        journal=journal,
        max_same_tool_inputs=2,
    )
    with pytest.raises(robota.SameToolInputLoopError):
        await agent.run("go", execution_id="e")
    ran = len(bodies)
    records = await journal.read("e")
    for _ in range(2):
        provider = ScriptedProvider(["done"])
        fresh = robota.Agent(
            provider=provider, model="m", tools=[probe], journal=journal, max_same_tool_inputs=2
        )
        with pytest.raises(robota.SameToolInputLoopError):
            await fresh.resume("e")
        assert len(bodies) == ran  # no tool body ran on resume
        assert provider.requests == []
    assert not records_of((await journal.read("e"))[len(records) :], robota.EffectStarted)


# --------------------------------------------------------------------------- 6. cut-short calls


class CutProvider(robota.Provider):
    """The first ``cuts`` responses stream text and two tool calls, then hold until the abort.

    With ``late=False`` it then raises the abort (the calls came before it); with ``late=True``
    the calls and a ResponseDone arrive only after the abort (a response already on its way).
    Every later call answers ``"done"``; each request is kept in ``requests``.
    """

    def __init__(self, *, late: bool, cuts: int = 1) -> None:
        self.late = late
        self.cuts = cuts
        self.streaming = asyncio.Event()
        self.requests: list[robota.ChatRequest] = []

    @property
    def name(self) -> str:
        return "cut"

    async def chat(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> robota.ChatResponse:
        return await robota.collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[robota.StreamEvent]:
        assert signal is not None
        self.requests.append(request)
        usage = robota.Usage.from_counts(prompt=10, completion=5)
        if len(self.requests) > self.cuts:
            yield robota.TextDelta("done")
            yield robota.ResponseDone(model=request.model, usage=usage, finish_reason="stop")
            return
        calls = [robota.ToolCall(f"c{i}", "probe", "{}") for i in (1, 2)]
        yield robota.TextDelta("partial ")
        if not self.late:
            for call in calls:
                yield robota.ToolCallReady(call)
        self.streaming.set()
        await signal.wait()
        if not self.late:
            signal.throw_if_aborted()
            return
        for call in calls:
            yield robota.ToolCallReady(call)
        yield robota.ResponseDone(model=request.model, usage=usage, finish_reason="stop")


@pytest.mark.parametrize(
    ("journaled", "late"),
    [
        pytest.param(False, False, id="not-journaled"),
        pytest.param(True, False, id="journaled"),
        pytest.param(True, True, id="journaled-late-calls"),
    ],
)
async def test_s34_calls_of_a_cut_short_response_are_answered_as_interrupted(
    journaled: bool, late: bool
) -> None:
    journal = InMemoryJournal() if journaled else None
    bodies: list[str] = []

    @robota.tool
    def probe() -> str:
        """A tool."""
        bodies.append("probe")
        return "ran"

    provider = CutProvider(late=late)
    agent = robota.Agent(provider=provider, model="m", tools=[probe], journal=journal)
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("go", execution_id="e", signal=controller.signal))
    await asyncio.wait_for(provider.streaming.wait(), timeout=5)
    controller.abort()
    result = await asyncio.wait_for(task, timeout=5)
    assert result.status == "interrupted"
    assert bodies == []
    (cut,) = [m for m in agent.history if isinstance(m, robota.AssistantMessage)]
    assert cut.state == "interrupted"
    assert [c.id for c in cut.tool_calls] == ["c1", "c2"]
    answers = _tool_messages(agent.history)
    assert [m.tool_call_id for m in answers] == ["c1", "c2"]
    assert all(m.is_error and "Interrupted" in m.content for m in answers)
    # The next request carries no call without its answer.
    if journal is not None:
        next_provider = CutProvider(late=late, cuts=0)  # the same provider, in a new process
        fresh = robota.Agent(provider=next_provider, model="m", tools=[probe], journal=journal)
        assert (await fresh.resume("e")).status == "complete"
        (request,) = next_provider.requests
    else:
        assert (await agent.run("go on")).status == "complete"
        request = provider.requests[-1]
    sent = [
        c.id
        for m in request.messages
        if isinstance(m, robota.AssistantMessage)
        for c in m.tool_calls
    ]
    assert sent == ["c1", "c2"]
    assert _unanswered(request.messages) == set()
    assert bodies == []


# --------------------------------------------------------------------------- 7. reconciled reply


async def test_s40_a_model_call_reconciled_with_a_reply_resumes_alike_every_time() -> None:
    inner = InMemoryJournal()
    first = robota.Agent(
        provider=ScriptedProvider(["lost reply"]),
        model="m",
        journal=HookedJournal(inner, before=fail_at("model_call_settled")),
    )
    with pytest.raises(robota.StorageError):
        await first.run("hi", execution_id="e")
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", journal=inner)
    with pytest.raises(robota.ReconciliationRequired) as info:
        await agent.resume("e")
    (item,) = info.value.items
    assert item.kind == "model_call"
    await agent.reconcile("e", item.id, happened=True, result="the reply")
    once = await agent.resume("e")
    twice = await agent.resume("e")  # the same agent again: no history_conflict
    for result in (once, twice):
        assert result.status == "complete"
        assert result.text == "the reply"
    reply_once, reply_twice = (
        [m for m in r.messages if isinstance(m, robota.AssistantMessage)][-1] for r in (once, twice)
    )
    assert reply_once.id == reply_twice.id
    assert [m.id for m in once.messages] == [m.id for m in twice.messages]
    elsewhere = await robota.Agent(provider=ScriptedProvider([]), model="m", journal=inner).resume(
        "e"
    )
    assert [m.id for m in elsewhere.messages] == [m.id for m in once.messages]


# --------------------------------------------------------------------------- 8. context guard


async def test_s39_an_execution_the_context_guard_stopped_resumes_with_its_diagnostic() -> None:
    journal = InMemoryJournal()
    provider = ScriptedProvider(["never"])
    # The window is the caller's: an unregistered model's window is unknown (issue 25).
    agent = robota.Agent(provider=provider, model="m", journal=journal, context_window=200_000)
    stopped = await agent.run("hi", execution_id="e", context_floor=199_000)
    assert stopped.stop_reason == "context_limit"
    assert "not sent" in stopped.text
    assert provider.requests == []
    fresh_provider = ScriptedProvider([])
    fresh = robota.Agent(provider=fresh_provider, model="m", journal=journal)
    elsewhere = await fresh.resume("e")
    assert (elsewhere.status, elsewhere.stop_reason) == (stopped.status, "context_limit")
    assert elsewhere.text == stopped.text
    assert [m.kind for m in fresh.history] == ["user", "assistant"]
    again = await agent.resume("e")  # the agent that ran it: its history matches the journal
    assert (again.stop_reason, again.text) == ("context_limit", stopped.text)
    assert fresh_provider.requests == []


# --------------------------------------------------------------------------- 9. no replayed hooks


class AfterRunCounter(robota.Plugin):
    """Counts the turn-level ``after_run`` hooks it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.after_run_calls = 0

    async def after_run(self, run: robota.RunInfo, result: robota.RunResult[Any]) -> None:
        self.after_run_calls += 1


@pytest.mark.parametrize(
    ("turns", "status"),
    [
        pytest.param(["hello"], "complete", id="complete"),
        pytest.param([[("deploy", {})]], "suspended", id="suspended"),
    ],
)
async def test_s40_resuming_a_stopped_execution_replays_no_after_run_nor_run_completed(
    turns: list[robota.testing.TurnLike], status: str
) -> None:
    journal = InMemoryJournal()
    plugin = AfterRunCounter()
    tools = [_deploy([])]
    agent = robota.Agent(
        provider=ScriptedProvider(turns), model="m", tools=tools, journal=journal, plugins=[plugin]
    )
    assert (await agent.run("hi", execution_id="e")).status == status
    after_the_run = plugin.after_run_calls
    for _ in range(2):
        seen: list[robota.AgentEvent] = []
        resumer = robota.Agent(
            provider=ScriptedProvider([]), model="m", tools=tools, journal=journal, plugins=[plugin]
        )
        result = await resumer.resume("e", on_event=seen.append)
        assert result.status == status
        assert robota.EventNames.RUN_COMPLETED not in [e.name for e in seen]
    assert plugin.after_run_calls == after_the_run


# --------------------------------------------------------------------------- 10. no admission


async def test_s40_calls_queued_when_the_batch_halts_are_not_admitted() -> None:
    journal = InMemoryJournal()
    effects: list[str] = []
    gate = Gate()
    tools = [_deploy(effects), _late(effects)]
    agent = robota.Agent(
        provider=ScriptedProvider([[("deploy", {}), ("late", {})]]),
        model="m",
        tools=tools,
        journal=journal,
        tool_gate=gate,
        tool_concurrency=1,
    )
    suspended = await agent.run("go", execution_id="e")
    assert suspended.status == "suspended"
    assert gate.admitted == ["deploy"]  # the queued call was never put to the gate
    assert effects == []
    await agent.respond("e", suspended.pending_requests[0].id, {"by": "ops"})
    resumed_gate = Gate()
    resumer = robota.Agent(
        provider=ScriptedProvider(["done"]),
        model="m",
        tools=tools,
        journal=journal,
        tool_gate=resumed_gate,
        tool_concurrency=1,
    )
    assert (await resumer.resume("e")).status == "complete"
    assert resumed_gate.admitted == ["deploy", "late"]  # each admitted once, when it runs
    assert effects == ["deployed by ops", "late"]
