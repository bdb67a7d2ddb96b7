"""A journaled parent's sub-agents (issue 29, S40): robota/core/_agent_children.py.

In process: a crash is a ``BaseException`` the journal raises right after a chosen append (the
process-level SIGKILL trials are ``tests/journal/test_crash_trials.py``, scenario ``child``).
After it, a new parent and a new child — fresh scripted providers holding only the turns still
to come — resume the execution; a scripted provider fails a test that asks it for more.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import robota
from robota import (
    Agent,
    EffectSettled,
    EffectStarted,
    ExecutionJournal,
    ExecutionStarted,
    JournalLease,
    JournalRecord,
    Usage,
    UsageLimits,
)
from robota.testing import InMemoryJournal, ScriptedProvider, ScriptedTurn


class _Crash(BaseException):
    """The process died (nothing after it runs, nothing catches it)."""


class _CrashingLease(JournalLease):
    def __init__(self, inner: JournalLease, journal: _CrashingJournal) -> None:
        self._inner = inner
        self._journal = journal

    @property
    def execution_id(self) -> str:
        return self._inner.execution_id

    async def append(self, record: JournalRecord) -> None:
        await self._inner.append(record)
        self._journal.appended(record)

    async def release(self) -> None:
        await self._inner.release()


class _CrashingJournal(ExecutionJournal):
    """Crashes right after the ``n``-th append of ``kind`` (over every execution)."""

    def __init__(self, inner: ExecutionJournal, kind: str = "", n: int = 0) -> None:
        self.inner = inner
        self._kind, self._n, self._seen = kind, n, 0

    def appended(self, record: JournalRecord) -> None:
        if record.kind == self._kind:
            self._seen += 1
            if self._seen == self._n:
                raise _Crash(f"after {self._kind} {self._n}")

    async def acquire(self, execution_id: str) -> JournalLease:
        return _CrashingLease(await self.inner.acquire(execution_id), self)

    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        return await self.inner.read(execution_id)


def _usage(prompt: int, completion: int) -> Usage:
    return Usage(prompt, completion, prompt + completion)


@robota.tool
def lookup() -> str:
    """Look something up."""
    LOOKUPS.append("lookup")
    return "found"


LOOKUPS: list[str] = []


def _agents(
    journal: ExecutionJournal,
    parent_turns: list[Any],
    child_turns: list[Any],
    **parent_options: Any,
) -> tuple[Agent, ScriptedProvider, ScriptedProvider]:
    child_provider = ScriptedProvider(child_turns, name="child-vendor")
    child = Agent("child-model", provider=child_provider, name="researcher", tools=[lookup])
    parent_provider = ScriptedProvider(parent_turns, name="parent-vendor")
    parent = Agent(
        "parent-model",
        provider=parent_provider,
        name="lead",
        tools=[child],
        journal=journal,
        **parent_options,
    )
    return parent, parent_provider, child_provider


PARENT_TURNS: list[Any] = [
    ScriptedTurn(tool_calls=[("researcher", {"input": "go"})], usage=_usage(50, 5)),
    ScriptedTurn("ok", usage=_usage(70, 7)),
]
CHILD_TURNS: list[Any] = [
    ScriptedTurn(tool_calls=[("lookup", {})], usage=_usage(10, 1)),
    ScriptedTurn("found it", usage=_usage(20, 2)),
]


async def _child_id(journal: ExecutionJournal, parent_id: str) -> str:
    # A call run again after a crash is started again, as the same call (the same body id).
    (call_id,) = {
        r.call_id
        for r in await journal.read(parent_id)
        if isinstance(r, EffectStarted) and r.tool_name == "researcher"
    }
    return f"{parent_id}/{call_id}"


@pytest.fixture(autouse=True)
def _fresh_lookups() -> None:
    LOOKUPS.clear()


async def test_s40_a_journaled_parents_child_is_an_execution_of_the_same_journal() -> None:
    journal = InMemoryJournal()
    parent, _, _ = _agents(journal, PARENT_TURNS, CHILD_TURNS)
    result = await parent.run("start", execution_id="job-1")
    assert result.output == "ok"
    child_id = await _child_id(journal, "job-1")
    records = await journal.read(child_id)
    assert isinstance(records[0], ExecutionStarted)
    assert records[0].state.agent_name == "researcher"
    assert records[-1].kind == "checkpoint"
    assert [r.kind for r in records].count("effect_settled") == 1  # its own lookup


async def test_s40_the_parents_journal_wins_over_a_childs_own() -> None:
    journal, own = InMemoryJournal(), InMemoryJournal()
    child = Agent(
        "child-model",
        provider=ScriptedProvider(["done"], name="child-vendor"),
        name="researcher",
        journal=own,
    )
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider([[("researcher", {"input": "go"})], "ok"]),
        name="lead",
        tools=[child],
        journal=journal,
    )
    await parent.run("start", execution_id="job-2")
    child_id = await _child_id(journal, "job-2")
    assert (await journal.read(child_id))[-1].kind == "checkpoint"
    assert await own.read(child_id) == ()


@pytest.mark.parametrize(
    ("kind", "n", "child_calls_left"),
    [
        ("model_call_settled", 2, 1),  # the child's first reply is durable
        ("effect_settled", 1, 1),  # the child's lookup settled
        ("checkpoint", 1, 0),  # the child completed; the parent did not record its result
    ],
)
async def test_s40_a_crash_inside_the_child_resumes_without_repeating_a_call_of_either(
    kind: str, n: int, child_calls_left: int
) -> None:
    store = InMemoryJournal()
    parent, _, _ = _agents(_CrashingJournal(store, kind, n), PARENT_TURNS, CHILD_TURNS)
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-3")
    assert len(LOOKUPS) == (0 if kind == "model_call_settled" else 1)
    # The new agents hold only the calls still to come: the parent's reply, the child's rest.
    parent, parent_provider, child_provider = _agents(
        store, PARENT_TURNS[1:], CHILD_TURNS[2 - child_calls_left :]
    )
    result = await parent.resume("job-3")
    assert result.output == "ok"
    assert len(parent_provider.requests) == 1
    assert len(child_provider.requests) == child_calls_left
    assert LOOKUPS == ["lookup"]  # the child's effect ran once
    # Its usage rolls up into the parent's exactly once, the calls before the crash included.
    assert result.usage_by_agent["lead/researcher"].usage == _usage(30, 3)
    assert result.usage == _usage(150, 15)
    kinds = [r.kind for r in await store.read("job-3")]
    assert kinds.count("effect_settled") == 1


async def test_s40_a_child_call_the_parent_settled_is_charged_once_on_resume() -> None:
    """Killed after the parent recorded the child's result: the child's calls still count."""
    store = InMemoryJournal()
    parent, _, _ = _agents(_CrashingJournal(store, "effect_settled", 2), PARENT_TURNS, CHILD_TURNS)
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-4")
    parent, parent_provider, child_provider = _agents(store, PARENT_TURNS[1:], [])
    result = await parent.resume("job-4")
    assert result.output == "ok"
    assert len(parent_provider.requests) == 1
    assert len(child_provider.requests) == 0
    assert result.usage_by_agent["lead/researcher"].usage == _usage(30, 3)
    assert result.usage_by_agent["lead/researcher"].runs == 1
    assert result.usage == _usage(150, 15)
    again = await parent.resume("job-4")  # a completed execution returns the same roll-up
    assert again.usage_by_agent == result.usage_by_agent


async def test_s40_s31_a_resumed_parents_limits_count_what_its_settled_child_used() -> None:
    """requests=3: the parent's call and the child's two; a fourth is refused after resume too."""
    store = InMemoryJournal()
    limits = UsageLimits(requests=3)
    parent, _, _ = _agents(
        _CrashingJournal(store, "effect_settled", 2), PARENT_TURNS, CHILD_TURNS, limits=limits
    )
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-5")
    parent, parent_provider, _ = _agents(store, PARENT_TURNS[1:], [])
    with pytest.raises(robota.UsageLimitExceeded) as caught:
        await parent.resume("job-5")
    assert caught.value.requests == 3
    assert len(parent_provider.requests) == 0


async def test_s40_the_childs_unproven_effect_is_reconciled_through_the_parent() -> None:
    """A crash inside the child's tool body: the child's own item, named by its execution."""

    store = InMemoryJournal()
    crashing = _CrashingJournal(store)

    @robota.tool
    def lookup() -> str:  # the same name and schema as the module's tool
        """Look something up."""
        LOOKUPS.append("lookup")
        raise _Crash("inside the body, after its effect")

    child = Agent(
        "child-model",
        provider=ScriptedProvider(CHILD_TURNS[:1], name="child-vendor"),
        name="researcher",
        tools=[lookup],
    )
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider(PARENT_TURNS[:1], name="parent-vendor"),
        name="lead",
        tools=[child],
        journal=crashing,
    )
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-6")
    parent, parent_provider, child_provider = _agents(store, PARENT_TURNS[1:], CHILD_TURNS[1:])
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await parent.resume("job-6")
    child_id = await _child_id(store, "job-6")
    assert caught.value.execution_id == child_id
    (item,) = caught.value.items
    assert item.kind == "effect"
    assert item.tool_name == "lookup"
    assert len(child_provider.requests) == 0
    await parent.reconcile(child_id, item.id, happened=True, result="found")
    result = await parent.resume("job-6")
    assert result.output == "ok"
    assert LOOKUPS == ["lookup"]
    assert len(child_provider.requests) == 1
    assert len(parent_provider.requests) == 1
    started = [r for r in await store.read(child_id) if isinstance(r, EffectStarted)]
    assert len(started) == 1
    settled = [r for r in await store.read("job-6") if isinstance(r, EffectSettled)]
    assert [s.content for s in settled] == ["found it"]


async def test_s40_a_grandchild_is_journaled_below_its_parent_and_charged_once_on_resume() -> None:
    """Killed after the child recorded the grandchild's result, before the child completed."""

    def build(
        journal: ExecutionJournal,
        parent_turns: list[Any],
        child_turns: list[Any],
        grand_turns: list[Any],
    ) -> tuple[Agent, ScriptedProvider, ScriptedProvider]:
        grand_provider = ScriptedProvider(grand_turns, name="grand-vendor")
        grand = Agent("grand-model", provider=grand_provider, name="grand", tools=[lookup])
        child_provider = ScriptedProvider(child_turns, name="child-vendor")
        child = Agent("child-model", provider=child_provider, name="researcher", tools=[grand])
        parent = Agent(
            "parent-model",
            provider=ScriptedProvider(parent_turns, name="parent-vendor"),
            name="lead",
            tools=[child],
            journal=journal,
        )
        return parent, child_provider, grand_provider

    child_turns: list[Any] = [
        ScriptedTurn(tool_calls=[("grand", {"input": "dig"})], usage=_usage(5, 1)),
        ScriptedTurn("child done", usage=_usage(6, 1)),
    ]
    store = InMemoryJournal()
    crashing = _CrashingJournal(store, "effect_settled", 2)  # the lookup, then the grand call
    parent, _, _ = build(crashing, PARENT_TURNS, child_turns, CHILD_TURNS)
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-7")
    assert LOOKUPS == ["lookup"]
    parent, child_provider, grand_provider = build(store, PARENT_TURNS[1:], child_turns[1:], [])
    result = await parent.resume("job-7")
    assert result.output == "ok"
    assert len(grand_provider.requests) == 0
    assert len(child_provider.requests) == 1
    assert LOOKUPS == ["lookup"]
    assert result.usage_by_agent["lead/researcher"].usage == _usage(11, 2)
    assert result.usage_by_agent["lead/researcher/grand"].usage == _usage(30, 3)
    child_id = await _child_id(store, "job-7")
    grand_ids = [
        f"{child_id}/{r.call_id}"
        for r in await store.read(child_id)
        if isinstance(r, EffectStarted) and r.tool_name == "grand"
    ]
    assert grand_ids
    assert (await store.read(grand_ids[0]))[-1].kind == "checkpoint"


async def test_s40_a_childs_runtime_state_difference_is_accepted_through_the_parent() -> None:
    """The child now runs on another model: its own item, accepted for the child's value."""
    store = InMemoryJournal()
    parent, _, _ = _agents(_CrashingJournal(store, "effect_settled", 1), PARENT_TURNS, CHILD_TURNS)
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-8")
    child_provider = ScriptedProvider(CHILD_TURNS[1:], name="child-vendor")
    child = Agent("child-model-2", provider=child_provider, name="researcher", tools=[lookup])
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider(PARENT_TURNS[1:], name="parent-vendor"),
        name="lead",
        tools=[child],
        journal=store,
    )
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await parent.resume("job-8")
    assert [item.id for item in caught.value.items] == ["state:model"]
    await parent.reconcile(caught.value.execution_id, "state:model", happened=True)
    result = await parent.resume("job-8")
    assert result.output == "ok"
    assert len(child_provider.requests) == 1
    assert LOOKUPS == ["lookup"]


async def test_s40_a_child_waiting_for_an_outside_response_stops_the_parent_until_answered() -> (
    None
):
    """The parent cannot suspend as the child yet: its run fails, naming the child's request."""
    asked: list[str] = []

    @robota.tool
    async def approve(ctx: robota.ToolContext) -> str:
        """Do it once someone approved."""
        answer = await ctx.request_outside_response("approval", {"what": "it"})
        asked.append(str(answer))
        return f"approved: {answer}"

    def build(parent_turns: list[Any], child_turns: list[Any]) -> Agent:
        child = Agent(
            "child-model",
            provider=ScriptedProvider(child_turns, name="child-vendor"),
            name="researcher",
            tools=[approve],
        )
        return Agent(
            "parent-model",
            provider=ScriptedProvider(parent_turns, name="parent-vendor"),
            name="lead",
            tools=[child],
            journal=store,
        )

    store = InMemoryJournal()
    parent = build(PARENT_TURNS[:1], [[("approve", {})]])
    with pytest.raises(robota.ExecutionControlError) as caught:
        await parent.run("start", execution_id="job-9")
    assert caught.value.code == "subagent_suspended"
    child_id = await _child_id(store, "job-9")
    assert caught.value.context["execution_id"] == child_id
    request = str(caught.value.context["requests"])
    assert asked == []
    parent = build(PARENT_TURNS[1:], ["approved"])
    await parent.respond(child_id, request, "yes")
    result = await parent.resume("job-9")
    assert result.output == "ok"
    assert asked == ["yes"]


async def test_s10_two_calls_of_one_child_in_a_batch_are_two_executions_with_their_own_leases() -> (
    None
):
    store = InMemoryJournal()
    child = Agent(
        "child-model",
        provider=ScriptedProvider(["one", "two"], name="child-vendor"),
        name="researcher",
    )
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider(
            [[("researcher", {"input": "1"}), ("researcher", {"input": "2"})], "ok"],
            name="parent-vendor",
        ),
        name="lead",
        tools=[child],
        journal=store,
    )
    result = await parent.run("start", execution_id="job-10")
    assert result.output == "ok"
    ids = [
        f"job-10/{r.call_id}"
        for r in await store.read("job-10")
        if isinstance(r, EffectStarted) and r.tool_name == "researcher"
    ]
    assert len(set(ids)) == 2
    for child_id in ids:
        assert (await store.read(child_id))[-1].kind == "checkpoint"
    assert result.usage_by_agent["lead/researcher"].runs == 2


async def test_s34_s40_a_continued_fresh_child_leaves_the_agents_own_history_untouched() -> None:
    """A crash inside the child, then resume: the child agent's own conversation is not replaced."""
    store = InMemoryJournal()
    parent, _, _ = _agents(_CrashingJournal(store, "effect_settled", 1), PARENT_TURNS, CHILD_TURNS)
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-own")
    parent, _, child_provider = _agents(store, PARENT_TURNS[1:], CHILD_TURNS[1:])
    (child_tool,) = [t for t in parent.tools if isinstance(t, robota.AgentTool)]
    child = child_tool.agent
    assert isinstance(child, Agent)
    await child.replace_history([robota.UserMessage("my own question")])
    own = child.history
    result = await parent.resume("job-own")
    assert result.output == "ok"
    assert len(child_provider.requests) == 1
    assert child.history == own  # the call ran in a conversation of its own


async def test_s40_a_streamed_journaled_parent_surfaces_its_childs_events() -> None:
    journal = InMemoryJournal()
    parent, _, _ = _agents(journal, PARENT_TURNS, CHILD_TURNS)
    seen: list[robota.SubagentEvent] = []
    async with parent.run_stream("start", execution_id="job-stream") as stream:
        seen.extend([e async for e in stream if isinstance(e, robota.SubagentEvent)])
        result = await stream.result()
    assert result.output == "ok"
    assert seen
    assert {e.agent for e in seen} == {"lead/researcher"}
    assert any(isinstance(e.event, robota.ToolCallStarted) for e in seen)


def _price_both() -> None:
    # The same prices as tests/core/test_agent_tool.py (a registration is process-wide).
    robota.register_model_pricing("child-model", input_per_million=1.0, output_per_million=2.0)
    robota.register_model_pricing("parent-model", input_per_million=3.0, output_per_million=4.0)


async def test_s29_s40_a_settled_childs_unknown_cost_stays_unknown_after_resume() -> None:
    """A child reply without attestable usage made its cost unknown; a resume never prices it."""
    _price_both()
    unattested: list[Any] = [
        ScriptedTurn(
            tool_calls=[("lookup", {})], usage=Usage.from_counts(prompt=10, completion=None)
        ),
        CHILD_TURNS[1],
    ]
    live_store = InMemoryJournal()
    parent, _, _ = _agents(live_store, PARENT_TURNS, unattested)
    live = await parent.run("start", execution_id="job-cost-live")
    assert live.cost is None
    store = InMemoryJournal()
    parent, _, _ = _agents(_CrashingJournal(store, "effect_settled", 2), PARENT_TURNS, unattested)
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-cost")
    parent, _, _ = _agents(store, PARENT_TURNS[1:], [])
    result = await parent.resume("job-cost")
    assert result.cost is None
    assert result.usage_by_agent["lead/researcher"] == live.usage_by_agent["lead/researcher"]
    assert result.usage == live.usage


async def test_s40_a_childs_state_is_compared_with_the_child_even_when_both_share_a_name() -> None:
    """Two unnamed agents are both "agent": the child's execution is the child's, by its call."""

    def build(
        journal: ExecutionJournal, child_model: str, parent_turns: list[Any], turns: list[Any]
    ) -> Agent:
        child = Agent(
            child_model,
            provider=ScriptedProvider(turns, name="child-vendor"),
            tools=[lookup],
        )
        return Agent(
            "parent-model",
            provider=ScriptedProvider(parent_turns, name="parent-vendor"),
            tools=[child.as_tool(name="researcher")],
            journal=journal,
        )

    store = InMemoryJournal()
    crashing = _CrashingJournal(store, "effect_settled", 1)  # the child's lookup settled
    with pytest.raises(_Crash):
        await build(crashing, "child-model", PARENT_TURNS, CHILD_TURNS).run(
            "start", execution_id="job-same-name"
        )
    parent = build(store, "child-model-2", PARENT_TURNS[1:], CHILD_TURNS[1:])
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await parent.resume("job-same-name")
    assert [item.id for item in caught.value.items] == ["state:model"]
    await parent.reconcile(caught.value.execution_id, "state:model", happened=True)
    result = await parent.resume("job-same-name")
    assert result.output == "ok"
    assert LOOKUPS == ["lookup"]


async def test_s40_a_child_that_cannot_be_continued_fails_the_parent_instead_of_settling() -> None:
    """keep_history: the child agent's live history conflicts with its checkpoint (S40).

    The call must not be settled as a tool failure the model sees — the child's effect already
    happened, and a model calling it again would repeat it — the parent's run fails, nothing of
    it settled, and resumes once the host gives the child a compatible agent.
    """

    def build(parent_turns: list[Any], turns: list[Any], journal: ExecutionJournal) -> Agent:
        child = Agent(
            "child-model",
            provider=ScriptedProvider(turns, name="child-vendor"),
            name="researcher",
            tools=[lookup],
        )
        return Agent(
            "parent-model",
            provider=ScriptedProvider(parent_turns, name="parent-vendor"),
            name="lead",
            tools=[child.as_tool(keep_history=True)],
            journal=journal,
        )

    store = InMemoryJournal()
    with pytest.raises(_Crash):
        await build(PARENT_TURNS, CHILD_TURNS, _CrashingJournal(store, "effect_settled", 1)).run(
            "start", execution_id="job-conflict"
        )
    parent = build(PARENT_TURNS[1:], CHILD_TURNS[1:], store)
    (tool,) = [t for t in parent.tools if isinstance(t, robota.AgentTool)]
    assert isinstance(tool.agent, Agent)
    await tool.agent.replace_history([robota.UserMessage("another conversation")])
    with pytest.raises(robota.ExecutionControlError) as caught:
        await parent.resume("job-conflict")
    assert caught.value.code == "subagent_not_resumable"
    assert caught.value.context["execution_id"] == await _child_id(store, "job-conflict")
    cause = caught.value.__cause__
    assert isinstance(cause, robota.ExecutionStateError)
    assert cause.code == "history_conflict"
    assert not [r for r in await store.read("job-conflict") if isinstance(r, EffectSettled)]
    result = await build(PARENT_TURNS[1:], CHILD_TURNS[1:], store).resume("job-conflict")
    assert result.output == "ok"
    assert LOOKUPS == ["lookup"]


async def test_s40_a_settled_childs_spend_counts_after_its_tool_was_removed() -> None:
    """The host accepted a changed catalog without the agent tool: what the child used stays."""
    store = InMemoryJournal()
    parent, _, _ = _agents(_CrashingJournal(store, "effect_settled", 2), PARENT_TURNS, CHILD_TURNS)
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-removed")
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider(PARENT_TURNS[1:], name="parent-vendor"),
        name="lead",
        journal=store,
    )
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await parent.resume("job-removed")
    for item in caught.value.items:
        assert item.kind == "runtime_state"
        await parent.reconcile("job-removed", item.id, happened=True)
    result = await parent.resume("job-removed")
    assert result.output == "ok"
    assert result.usage_by_agent["lead/researcher"].usage == _usage(30, 3)
    assert result.usage == _usage(150, 15)


async def test_s40_resuming_a_childs_execution_directly_is_refused_with_its_caller_named() -> None:
    """A host passing ReconciliationRequired.execution_id (the child's) to resume() by habit."""
    store = InMemoryJournal()
    parent, _, _ = _agents(_CrashingJournal(store, "effect_settled", 1), PARENT_TURNS, CHILD_TURNS)
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-direct")
    child_id = await _child_id(store, "job-direct")
    parent, parent_provider, child_provider = _agents(store, PARENT_TURNS[1:], CHILD_TURNS[1:])
    with pytest.raises(robota.ExecutionStateError) as caught:
        await parent.resume(child_id)
    assert caught.value.code == "subagent_execution"
    assert "job-direct" in str(caught.value)
    assert len(parent_provider.requests) == len(child_provider.requests) == 0
    result = await parent.resume("job-direct")
    assert result.output == "ok"
    assert LOOKUPS == ["lookup"]


async def test_s40_a_child_with_its_own_journal_waiting_under_an_unjournaled_caller_says_so() -> (
    None
):
    """The caller cannot be resumed: the error says so, and where the request can be answered."""

    @robota.tool
    async def approve(ctx: robota.ToolContext) -> str:
        """Do it once someone approved."""
        return f"approved: {await ctx.request_outside_response('approval', {})}"

    own = InMemoryJournal()
    child = Agent(
        "child-model",
        provider=ScriptedProvider([[("approve", {})]], name="child-vendor"),
        name="researcher",
        tools=[approve],
        journal=own,
    )
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider(PARENT_TURNS[:1], name="parent-vendor"),
        name="lead",
        tools=[child],
    )
    with pytest.raises(robota.ExecutionControlError) as caught:
        await parent.run("start")
    assert caught.value.code == "subagent_suspended"
    message = str(caught.value)
    assert "not journaled" in message
    assert "on the calling agent" not in message
    child_id = str(caught.value.context["execution_id"])
    assert (await own.read(child_id))[0].kind == "execution_started"


async def test_s40_an_uncertain_plain_effect_is_not_dropped_when_an_agent_tool_took_its_name() -> (
    None
):
    """Crashed inside a plain tool's body; resumed where an agent tool has that name (S40)."""

    @robota.tool
    def researcher(input: str) -> str:
        """A plain tool under the name a sub-agent gets later."""
        LOOKUPS.append("plain")
        raise _Crash("inside the plain body, after its effect")

    store = InMemoryJournal()
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider(PARENT_TURNS[:1], name="parent-vendor"),
        name="lead",
        tools=[researcher],
        journal=store,
    )
    with pytest.raises(_Crash):
        await parent.run("start", execution_id="job-shadow")
    parent, _, child_provider = _agents(store, PARENT_TURNS[1:], CHILD_TURNS)
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await parent.resume("job-shadow")
    for item in caught.value.items:  # the host accepts the new catalog, nothing more
        if item.kind == "runtime_state":
            await parent.reconcile("job-shadow", item.id, happened=True)
    with pytest.raises(robota.ReconciliationRequired) as again:
        await parent.resume("job-shadow")
    assert [item.kind for item in again.value.items] == ["effect"]
    assert len(child_provider.requests) == 0
    assert LOOKUPS == ["plain"]


async def test_s23_s40_an_interrupted_childs_partial_text_is_recorded_as_not_finished() -> None:
    """Aborting a journaled parent mid-child: the partial text is the call's recorded outcome,
    and it says the child did not finish — a resumed parent's model must not take it for an
    answer (S23: the partial result is recorded; S40: it is saved as the call's final outcome)."""
    controller = robota.AbortController()
    child = Agent(
        "child-model",
        provider=ScriptedProvider(
            ["one two three four five six seven eight nine ten"], chunk_delay=0.05
        ),
        name="researcher",
    )
    store = InMemoryJournal()
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider(PARENT_TURNS[:1], name="parent-vendor"),
        name="lead",
        tools=[child],
        journal=store,
    )

    async def abort_soon() -> None:
        await asyncio.sleep(0.12)
        controller.abort("stop")

    aborter = asyncio.ensure_future(abort_soon())
    result = await parent.run("start", execution_id="job-abort", signal=controller.signal)
    await aborter
    assert result.status == "interrupted"
    (settled,) = [r for r in await store.read("job-abort") if isinstance(r, EffectSettled)]
    assert str(settled.content).startswith("one")
    assert "ten" not in str(settled.content)
    assert settled.is_error
