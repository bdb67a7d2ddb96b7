"""S40 continuation: resuming a journaled execution after a crash, and what it refuses to guess.

A "crash" is an in-process stand-in: a journal wrapper raises a ``BaseException`` at a chosen
append (after or instead of the write), so the run dies there like a killed worker would. The
execution is then resumed on a NEW agent sharing the same :class:`InMemoryJournal`, with a fresh
:class:`ScriptedProvider` holding only the turns that remain.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

import pytest

import robota
from journal_hooks import Crash, HookedJournal, crash_at, fail_at
from robota.testing import InMemoryJournal, ScriptedProvider

# --------------------------------------------------------------------------- helpers


def _probe(calls: list[tuple[int, str]], hold: asyncio.Event | None = None) -> robota.Tool:
    """The same tool on every agent (same name, description, schema); its bodies log to calls."""

    @robota.tool
    async def probe(n: int, ctx: robota.ToolContext) -> str:
        """Probe."""
        calls.append((n, ctx.call_id))
        if hold is not None:
            await hold.wait()
        return f"probed {n}"

    return probe


async def _crash(
    inner: InMemoryJournal,
    *,
    kind: str,
    written: bool,
    nth: int = 1,
    turns: Sequence[robota.testing.TurnLike] = ([("probe", {"n": 1})],),
    calls: list[tuple[int, str]] | None = None,
    execution_id: str = "e",
    max_rounds: int = robota.DEFAULT_MAX_ROUNDS,
    system_prompt: str | None = None,
) -> robota.Agent:
    """Run an execution on its own agent until it crashes at the chosen write."""
    crash = crash_at(kind, nth=nth)
    journal = HookedJournal(inner, after=crash) if written else HookedJournal(inner, before=crash)
    agent = robota.Agent(
        provider=ScriptedProvider(turns),
        model="m",
        system_prompt=system_prompt,
        tools=[_probe(calls if calls is not None else [])],
        journal=journal,
        max_rounds=max_rounds,
    )
    with pytest.raises(Crash):
        await agent.run("go", execution_id=execution_id)
    return agent


def _fresh(
    inner: InMemoryJournal,
    turns: Iterable[robota.testing.TurnLike],
    calls: list[tuple[int, str]],
    **options: object,
) -> tuple[robota.Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns)
    tools = options.pop("tools", None) or [_probe(calls)]
    agent = robota.Agent(
        provider=provider,
        model=str(options.pop("model", "m")),
        tools=tools,  # type: ignore[arg-type]
        journal=inner,
        **options,  # type: ignore[arg-type]
    )
    return agent, provider


def _shape(
    messages: Iterable[robota.Message],
) -> list[tuple[str, str, tuple[str, ...], str | None]]:
    """What a transcript says: (kind, content, tool-call ids, tool name) per message."""
    shape: list[tuple[str, str, tuple[str, ...], str | None]] = []
    for m in messages:
        ids: tuple[str, ...] = ()
        name: str | None = None
        if isinstance(m, robota.AssistantMessage):
            ids = tuple(c.id for c in m.tool_calls)
        elif isinstance(m, robota.ToolMessage):
            ids = (m.tool_call_id,)
            name = m.tool_name
        shape.append((m.kind, m.content, ids, name))
    return shape


async def _reconciliation(agent: robota.Agent, eid: str = "e") -> robota.ReconciliationRequired:
    with pytest.raises(robota.ReconciliationRequired) as info:
        await agent.resume(eid)
    return info.value


# --------------------------------------------------------------------------- (a) uncertain effects

# (kind, written): the crash came right after effect_started was durable (the body never began),
# or while the body's settlement was being written (the body ran; its result was lost).
EFFECT_UNCERTAIN = [
    pytest.param("effect_started", True, 0, id="body-not-reached"),
    pytest.param("effect_settled", False, 1, id="body-reached"),
]


@pytest.mark.parametrize(("kind", "written", "bodies"), EFFECT_UNCERTAIN)
async def test_s40_effect_started_without_result_is_refused_for_reconciliation(
    kind: str, written: bool, bodies: int
) -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind=kind, written=written, calls=calls)
    assert len(calls) == bodies
    agent, provider = _fresh(inner, ["never"], calls)
    error = await _reconciliation(agent)
    assert error.execution_id == "e"
    (item,) = error.items
    assert item.kind == "effect"
    assert item.id
    assert item.tool_name == "probe"
    assert item.arguments is not None
    assert dict(item.arguments) == {"n": 1}
    if bodies:
        assert item.call_id == calls[0][1]  # the id the body saw
    assert len(agent.history) == 0  # history untouched
    assert provider.requests == []
    assert len(calls) == bodies  # nothing was re-run


@pytest.mark.parametrize(("kind", "written", "bodies"), EFFECT_UNCERTAIN)
async def test_s40_effect_reconciled_as_happened_is_not_run_again_and_the_model_sees_result(
    kind: str, written: bool, bodies: int
) -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind=kind, written=written, calls=calls)
    agent, provider = _fresh(inner, ["done"], calls)
    (item,) = (await _reconciliation(agent)).items
    await agent.reconcile("e", item.id, happened=True, result="it happened: 7 rows")
    result = await agent.resume("e")
    assert result.status == "complete"
    assert result.output == "done"
    assert len(calls) == bodies  # the body did not run again
    (request,) = provider.requests
    tool_message = request.messages[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert tool_message.content == "it happened: 7 rows"
    assert tool_message.tool_call_id == "call_0"


@pytest.mark.parametrize(("kind", "written", "bodies"), EFFECT_UNCERTAIN)
async def test_s40_effect_reconciled_as_not_happened_runs_again_exactly_once_with_same_call_id(
    kind: str, written: bool, bodies: int
) -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind=kind, written=written, calls=calls)
    agent, provider = _fresh(inner, ["done"], calls)
    (item,) = (await _reconciliation(agent)).items
    await agent.reconcile("e", item.id, happened=False)
    result = await agent.resume("e")
    assert result.output == "done"
    assert len(calls) == bodies + 1  # exactly one more run of the body
    assert calls[-1] == (1, item.call_id)  # the same logical call keeps its id (S40)
    (request,) = provider.requests
    assert request.messages[-1].content == "probed 1"


async def test_s40_reconcile_refuses_an_item_that_is_not_open() -> None:
    inner = InMemoryJournal()
    await _crash(inner, kind="effect_started", written=True)
    agent, _ = _fresh(inner, [], [])
    with pytest.raises(robota.ExecutionStateError):
        await agent.reconcile("e", "effect:nothing#9", happened=False)


# --------------------------------------------------------------------------- (b) model calls


async def test_s40_model_call_without_recorded_response_is_refused_for_reconciliation() -> None:
    inner = InMemoryJournal()
    await _crash(inner, kind="model_call_started", written=True)
    agent, provider = _fresh(inner, ["never"], [])
    error = await _reconciliation(agent)
    (item,) = error.items
    assert item.kind == "model_call"
    assert item.call_id
    assert provider.requests == []
    assert len(agent.history) == 0


async def test_s40_model_call_reconciled_as_not_happened_is_issued_again() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind="model_call_started", written=True)
    agent, provider = _fresh(inner, [[("probe", {"n": 2})], "done"], calls)
    (item,) = (await _reconciliation(agent)).items
    await agent.reconcile("e", item.id, happened=False)
    result = await agent.resume("e")
    assert result.output == "done"
    assert len(provider.requests) == 2
    assert [m.content for m in provider.requests[0].messages] == ["go"]
    assert [n for n, _ in calls] == [2]


async def test_s40_model_call_reconciled_as_happened_keeps_the_given_reply() -> None:
    inner = InMemoryJournal()
    await _crash(inner, kind="model_call_started", written=True)
    agent, provider = _fresh(inner, [], [])
    (item,) = (await _reconciliation(agent)).items
    await agent.reconcile("e", item.id, happened=True, result="the reply we saw")
    result = await agent.resume("e")
    assert result.output == "the reply we saw"
    assert provider.requests == []
    assert [m.content for m in agent.history] == ["go", "the reply we saw"]


# --------------------------------------------------------------------------- (c) settled effects


async def test_s40_resume_reuses_a_durable_settlement_without_running_or_observing_it() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind="effect_settled", written=True, calls=calls)
    assert len(calls) == 1
    agent, provider = _fresh(inner, ["done"], calls)
    seen: list[robota.AgentEvent] = []
    result = await agent.resume("e", on_event=seen.append)
    assert result.output == "done"
    assert len(calls) == 1  # the body did not run again
    assert [e.name for e in seen if e.name.startswith("tool.")] == []  # S40: nor re-observed
    (request,) = provider.requests
    assert request.messages[-1].content == "probed 1"


async def test_s40_resumed_history_equals_an_uncrashed_runs() -> None:
    turns: list[robota.testing.TurnLike] = [[("probe", {"n": 1})], [("probe", {"n": 2})], "done"]
    straight = robota.Agent(
        provider=ScriptedProvider(turns),
        model="m",
        tools=[_probe([])],
        journal=InMemoryJournal(),
    )
    await straight.run("go", execution_id="e")

    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind="effect_settled", written=True, nth=2, turns=turns, calls=calls)
    agent, _ = _fresh(inner, ["done"], calls)
    result = await agent.resume("e")
    assert [n for n, _ in calls] == [1, 2]
    assert _shape(agent.history) == _shape(straight.history)
    assert result.rounds == 3
    assert result.tool_calls_executed == 2


async def test_s40_resume_after_a_crash_at_the_final_checkpoint_reissues_no_call() -> None:
    inner = InMemoryJournal()
    await _crash(inner, kind="checkpoint", written=False, turns=["the answer"])
    agent, provider = _fresh(inner, [], [])
    result = await agent.resume("e")
    assert (result.status, result.output, result.stop_reason) == (
        "complete",
        "the answer",
        "end_turn",
    )
    assert provider.requests == []
    checkpoint = (await inner.read("e"))[-1]
    assert isinstance(checkpoint, robota.Checkpoint)
    assert checkpoint.outcome == "complete"


async def test_s40_a_rejected_settlement_write_leaves_the_effect_for_reconciliation() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    failing = robota.Agent(
        provider=ScriptedProvider([[("probe", {"n": 1})]]),
        model="m",
        tools=[_probe(calls)],
        journal=HookedJournal(inner, before=fail_at("effect_settled")),
    )
    with pytest.raises(robota.StorageError):
        await failing.run("go", execution_id="e")
    assert len(calls) == 1
    agent, provider = _fresh(inner, ["never"], calls)
    (item,) = (await _reconciliation(agent)).items  # the lease was released; nothing is guessed
    assert (item.kind, item.call_id) == ("effect", calls[0][1])
    assert provider.requests == []
    assert len(calls) == 1


async def test_s40_resume_keeps_the_identical_input_limit_for_the_refused_batch() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    same = ("probe", {"n": 1})
    first = robota.Agent(
        provider=ScriptedProvider([[same], [same]]),
        model="m",
        tools=[_probe(calls)],
        journal=inner,
        max_same_tool_inputs=1,
    )
    with pytest.raises(robota.SameToolInputLoopError):
        await first.run("go", execution_id="e")
    assert len(calls) == 1
    agent, provider = _fresh(inner, ["done"], calls, max_same_tool_inputs=1)
    with pytest.raises(robota.SameToolInputLoopError):
        await agent.resume("e")
    assert len(calls) == 1  # the refused batch is never dispatched
    assert provider.requests == []


# --------------------------------------------------------------------------- (d) runtime state


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param({"model": "m2"}, {"state:model"}, id="model"),
        pytest.param("extra-tool", {"state:tool_catalog", "state:tool_residency"}, id="tools"),
    ],
)
async def test_s40_a_runtime_state_difference_is_refused_until_accepted(
    options: dict[str, object] | str, expected: set[str]
) -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind="effect_settled", written=True, calls=calls, system_prompt="prompt")

    @robota.tool
    def extra() -> str:
        """An extra tool."""
        return "extra"

    kw: dict[str, object] = {"system_prompt": "prompt"}
    if options == "extra-tool":
        kw["tools"] = [_probe(calls), extra]
    else:
        assert isinstance(options, dict)
        kw.update(options)
    agent, provider = _fresh(inner, ["done"], calls, **kw)
    error = await _reconciliation(agent)
    assert {i.kind for i in error.items} == {"runtime_state"}
    assert {i.id for i in error.items} == expected
    before = list(agent.history)
    assert provider.requests == []
    for item in error.items:
        await agent.reconcile("e", item.id, happened=True)
    result = await agent.resume("e")
    assert result.status == "complete"
    assert result.output == "done"
    assert len(calls) == 1
    assert len(agent.history) > len(before)


async def test_s40_an_accepted_system_prompt_difference_can_be_resumed() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind="effect_settled", written=True, calls=calls, system_prompt="prompt")
    agent, provider = _fresh(inner, ["done"], calls, system_prompt="another prompt")
    error = await _reconciliation(agent)
    assert [(i.kind, i.id) for i in error.items] == [("runtime_state", "state:system_prompt")]
    assert provider.requests == []
    await agent.reconcile("e", "state:system_prompt", happened=True)
    result = await agent.resume("e")
    assert result.status == "complete"
    assert result.output == "done"
    assert len(calls) == 1  # the settlement is reused


async def test_s40_a_runtime_state_difference_cannot_be_declared_not_happened() -> None:
    inner = InMemoryJournal()
    await _crash(inner, kind="effect_settled", written=True)
    agent, _ = _fresh(inner, ["done"], [], model="m2")
    (item,) = (await _reconciliation(agent)).items
    with pytest.raises(robota.ConfigurationError):
        await agent.reconcile("e", item.id, happened=False)
    await _reconciliation(agent)  # still open


# --------------------------------------------------------------------------- (e) identities


async def test_s40_resuming_an_unknown_execution_is_a_state_error() -> None:
    agent, provider = _fresh(InMemoryJournal(), [], [])
    with pytest.raises(robota.ExecutionStateError):
        await agent.resume("never-ran")
    assert provider.requests == []


async def test_s40_running_with_an_id_that_already_exists_is_a_state_error() -> None:
    inner = InMemoryJournal()
    first, _ = _fresh(inner, ["one"], [])
    await first.run("x", execution_id="e")
    records = await inner.read("e")
    second, provider = _fresh(inner, ["two"], [])
    with pytest.raises(robota.ExecutionStateError):
        await second.run("y", execution_id="e")
    assert provider.requests == []
    assert len(second.history) == 0
    assert await inner.read("e") == records


async def test_s40_resuming_a_completed_execution_returns_its_output_without_a_call() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    first, _ = _fresh(inner, [[("probe", {"n": 1})], "the answer"], calls)
    original = await first.run("go", execution_id="e")
    records = await inner.read("e")

    agent, provider = _fresh(inner, [], calls)
    again = await agent.resume("e")
    assert again.status == "complete"
    assert again.output == original.output == "the answer"
    assert again.stop_reason == original.stop_reason
    assert provider.requests == []
    assert len(calls) == 1
    assert await inner.read("e") == records  # nothing written
    # The agent that ran it can resume it too: its live history is the checkpoint.
    same = await first.resume("e")
    assert same.output == "the answer"
    assert _shape(first.history) == _shape(agent.history)


# --------------------------------------------------------------------------- (f)-(h) history


async def test_s40_live_history_that_conflicts_with_the_checkpoint_is_never_overwritten() -> None:
    inner = InMemoryJournal()
    await _crash(inner, kind="effect_settled", written=True)
    agent, provider = _fresh(inner, ["something else", "never"], [])
    await agent.run("other question", execution_id="other")
    before = list(agent.history)
    with pytest.raises(robota.ExecutionStateError):
        await agent.resume("e")
    assert list(agent.history) == before
    assert len(provider.requests) == 1


async def test_s40_resume_keeps_the_limits_the_execution_started_with() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind="effect_settled", written=True, calls=calls, max_rounds=2)
    # This agent would force a summary after one round; the execution was started with two.
    agent, provider = _fresh(inner, ["done"], calls, max_rounds=1)
    result = await agent.resume("e")
    (request,) = provider.requests
    assert [t.name for t in request.tools] == ["probe"]  # an ordinary round, not a summary
    assert request.tool_choice == "auto"
    assert result.stop_reason == "end_turn"
    assert result.output == "done"


async def test_s40_restored_history_stays_with_the_agent() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    crashed = await _crash(inner, kind="effect_settled", written=True, calls=calls)
    original_input = crashed.history[0]
    agent, _ = _fresh(inner, ["done"], calls)
    result = await agent.resume("e")
    assert _shape(agent.history) == [
        ("user", "go", (), None),
        ("assistant", "", ("call_0",), None),
        ("tool", "probed 1", ("call_0",), "probe"),
        ("assistant", "done", (), None),
    ]
    assert agent.history[0] == original_input  # restored exactly, its id included
    assert _shape(result.messages) == _shape(agent.history)


# --------------------------------------------------------------------------- (i) hooks


class CountingPlugin(robota.Plugin):
    """Counts the hooks it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.before_run_calls: list[str] = []
        self.provider_calls = 0

    async def before_run(self, run: robota.RunInfo, input: str) -> None:
        self.before_run_calls.append(input)

    async def before_provider_call(self, run: robota.RunInfo, request: robota.ChatRequest) -> None:
        self.provider_calls += 1


async def test_s40_turn_level_hooks_are_not_replayed_on_resume() -> None:
    inner = InMemoryJournal()
    calls: list[tuple[int, str]] = []
    await _crash(inner, kind="effect_settled", written=True, calls=calls)
    plugin = CountingPlugin()
    agent, _ = _fresh(inner, ["done"], calls, plugins=[plugin])
    await agent.resume("e")
    assert plugin.before_run_calls == []
    assert plugin.provider_calls == 1  # the new call is observed as usual


# --------------------------------------------------------------------------- (j) one writer


async def test_s10_a_second_resume_while_the_first_runs_is_locked_out_at_once() -> None:
    inner = InMemoryJournal()
    await _crash(inner, kind="effect_started", written=False)  # nothing proven about the call
    hold = asyncio.Event()
    calls: list[tuple[int, str]] = []
    first, _ = _fresh(inner, ["done"], calls, tools=[_probe(calls, hold)])
    second, second_provider = _fresh(inner, ["never"], calls)
    running = asyncio.create_task(first.resume("e"))
    for _ in range(1_000):
        if calls:
            break
        await asyncio.sleep(0.002)
    assert len(calls) == 1  # the first resume is inside the slow body
    with pytest.raises(robota.ExecutionLockedError) as info:
        await asyncio.wait_for(second.resume("e"), timeout=1)
    assert info.value.execution_id == "e"
    assert second_provider.requests == []
    assert len(second.history) == 0
    hold.set()
    assert (await running).output == "done"
    assert len(calls) == 1


# --------------------------------------------------------------------------- events


async def test_s40_resume_emits_run_resumed() -> None:
    inner = InMemoryJournal()
    await _crash(inner, kind="effect_settled", written=True)
    agent, _ = _fresh(inner, ["done"], [])
    seen: list[robota.AgentEvent] = []
    await agent.resume("e", on_event=seen.append)
    names = [e.name for e in seen]
    assert robota.EventNames.RUN_RESUMED == "agent.run_resumed"
    assert "agent.run_resumed" in names
    assert "agent.run_started" not in names
    resumed = next(e for e in seen if e.name == "agent.run_resumed")
    assert resumed.data["execution_id"] == "e"
