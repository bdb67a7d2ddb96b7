"""Orchestration over the S32 contracts (issue 29 item 5): robota/agents.

Every agent runs on its own scripted provider. Concurrency is asserted with events (a branch's
run started before another's finished), never with timing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from robota import (
    AbortController,
    Agent,
    ConfigurationError,
    EventNames,
    OwnerRef,
    ProviderError,
    RecordingEventService,
    TraceContext,
    Usage,
    UsageLimitExceeded,
    UsageLimits,
)
from robota.agents import (
    OrchestrationError,
    from_spec,
    map_reduce,
    parallel,
    sequential,
)
from robota.core.orchestration import (
    HierarchicalSpec,
    OrchestrationEventNames,
    OrchestrationResult,
    OrchestrationStep,
    ParallelSpec,
    SequentialSpec,
)
from robota.testing import ScriptedProvider, ScriptedTurn


def _usage(prompt: int, completion: int) -> Usage:
    return Usage(prompt, completion, prompt + completion)


def _agent(name: str, turns: list[Any], **kwargs: Any) -> tuple[Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns, name=f"{name}-vendor", **kwargs.pop("provider_kw", {}))
    return Agent(f"{name}-model", provider=provider, name=name, **kwargs), provider


def _last_user(provider: ScriptedProvider, index: int = -1) -> str:
    content = provider.requests[index].messages[-1].content
    assert isinstance(content, str)
    return content


# ---------------------------------------------------------------- sequential


async def test_sequential_passes_each_output_to_the_next_step() -> None:
    researcher, first = _agent("researcher", ["facts about tides"])
    writer, second = _agent("writer", ["an essay on tides"])
    flow = sequential(researcher, str.upper, writer)

    result = await flow.run("tides")

    assert result.status == "complete"
    assert result.output == "an essay on tides"
    assert _last_user(first) == "tides"
    assert _last_user(second) == "FACTS ABOUT TIDES"  # the function step ran in between
    assert [s.id for s in result.steps] == ["researcher", "upper", "writer"]
    assert [s.output for s in result.steps] == [
        "facts about tides",
        "FACTS ABOUT TIDES",
        "an essay on tides",
    ]
    # S32: the same result in core's neutral contract shape.
    contract = result.contract()
    assert isinstance(contract, OrchestrationResult)
    assert contract.primitive == "sequential"
    assert contract.output == "an essay on tides"


async def test_each_agent_run_starts_a_fresh_conversation_unless_history_is_kept() -> None:
    agent, provider = _agent("echo", ["one", "two", "three", "four"], system_prompt="be brief")
    flow = sequential(agent)
    await flow.run("a")
    await flow.run("b")
    # Fresh: the second run saw its system prompt and its own input only.
    assert [type(m).__name__ for m in provider.requests[1].messages] == [
        "SystemMessage",
        "UserMessage",
    ]
    await flow.run("c", keep_history=True)
    await flow.run("d", keep_history=True)
    # Kept: the agent's own conversation, which the fresh runs never touched (S34).
    assert len(provider.requests[2].messages) == 2  # system, c
    assert len(provider.requests[3].messages) == 4  # system, c, three, d


async def test_a_flow_leaves_an_agents_own_conversation_untouched() -> None:
    # S34: a user's conversation with an agent survives the agent's use as a flow step.
    agent, provider = _agent("helper", ["hi", "step output", "where were we"])
    await agent.run("hello")
    before = agent.history

    result = await sequential(agent).run("a task")

    assert result.output == "step output"
    assert len(provider.requests[1].messages) == 1  # the step saw its input only
    assert agent.history == before
    await agent.run("go on")
    assert len(provider.requests[2].messages) == 3  # hello, hi, go on


async def test_an_abort_reaches_a_step_waiting_for_an_agent_busy_elsewhere() -> None:
    # S38: a run queued behind another fails as soon as its signal aborts; a flow step waiting
    # for an agent its user is running directly ends interrupted at once, not after that run.
    shared, _ = _agent(
        "shared", ["one two three four five six", "never"], provider_kw={"chunk_delay": 0.5}
    )
    started = asyncio.Event()

    def on_event(event: Any) -> None:
        if event.name == EventNames.PROVIDER_REQUEST:
            started.set()

    direct = asyncio.create_task(shared.run("direct", on_event=on_event))
    await started.wait()
    controller = AbortController()
    flow = asyncio.create_task(sequential(shared).run("queued", signal=controller.signal))
    await asyncio.sleep(0)
    controller.abort("stop")
    result = await flow
    try:
        assert result.status == "interrupted"
        assert not direct.done()  # it ended while the direct run was still streaming
    finally:
        direct.cancel()
        await asyncio.gather(direct, return_exceptions=True)


async def test_sequential_emits_the_s32_lifecycle_events_and_nests_agent_events() -> None:
    a, _ = _agent("a", ["x"])
    b, _ = _agent("b", ["y"])
    events = RecordingEventService()
    result = await sequential(a, b).run("go", event_service=events)

    flow_events = [e for e in events.events if e.name.startswith("orchestration.")]
    assert [(e.name, e.data.get("step_id")) for e in flow_events] == [
        (OrchestrationEventNames.STARTED, None),
        (OrchestrationEventNames.STEP_STARTED, "a"),
        (OrchestrationEventNames.STEP_COMPLETED, "a"),
        (OrchestrationEventNames.STEP_STARTED, "b"),
        (OrchestrationEventNames.STEP_COMPLETED, "b"),
        (OrchestrationEventNames.COMPLETED, None),
    ]
    assert all(e.data["primitive"] == "sequential" for e in flow_events)
    # S33: every agent event sits under the flow's owner path, then its step.
    root = OwnerRef("orchestration", result.run_id)
    runs = [e for e in events.events if e.name == EventNames.RUN_STARTED]
    assert len(runs) == 2
    assert all(e.owner_path[0] == root for e in events.events)
    assert [e.owner_path[1] for e in runs] == [OwnerRef("step", "a"), OwnerRef("step", "b")]


async def test_a_failing_step_stops_the_pipeline_with_the_partial_result() -> None:
    first, _ = _agent("first", ["draft"])
    broken, _ = _agent("broken", [ProviderError("boom", status=500)])
    never, never_provider = _agent("never", ["unused"])

    with pytest.raises(OrchestrationError) as caught:
        await sequential(first, broken, never).run("go")

    error = caught.value
    assert error.step_id == "broken"
    assert isinstance(error.__cause__, ProviderError)
    assert [(s.id, s.status) for s in error.result.steps] == [
        ("first", "complete"),
        ("broken", "failed"),
    ]
    assert not never_provider.requests
    assert error.result.requests == 2  # the failed call was a model call too


async def test_every_started_step_has_its_step_completed_event_however_it_ended() -> None:
    # S32: step_started and step_completed pair up, for a step that failed too, in a pipeline, a
    # fan-out and a join alike; the run's own end (failed) names the failing step.
    def boom(text: str) -> str:
        raise ValueError("no")

    ok, _ = _agent("ok", ["fine"])
    for flow, failing in (
        (sequential(ok, boom), "boom"),
        (parallel(str.upper, boom, on_error="collect", join=boom), "join"),
    ):
        events = RecordingEventService()
        with pytest.raises(OrchestrationError):
            await flow.run("go", event_service=events)
        steps = [e for e in events.events if e.name.startswith("orchestration.step_")]
        started = [e.data["step_id"] for e in steps if e.name.endswith("started")]
        completed = [e.data["step_id"] for e in steps if e.name.endswith("completed")]
        assert sorted(started) == sorted(completed), (started, completed)
        assert events.events[-1].name == OrchestrationEventNames.FAILED
        assert events.events[-1].data["step_id"] == failing


# ---------------------------------------------------------------- parallel


def _overlapping(events: RecordingEventService, a: str, b: str) -> bool:
    """Whether step ``a``'s agent run started before step ``b``'s finished, and vice versa."""
    order = [
        (e.name, e.owner_path[1].id)
        for e in events.events
        if e.name in (EventNames.RUN_STARTED, EventNames.RUN_COMPLETED)
    ]
    a_start = order.index((EventNames.RUN_STARTED, a))
    b_start = order.index((EventNames.RUN_STARTED, b))
    a_end = order.index((EventNames.RUN_COMPLETED, a))
    b_end = order.index((EventNames.RUN_COMPLETED, b))
    return a_start < b_end and b_start < a_end


async def test_parallel_branches_run_concurrently_and_join_in_branch_order() -> None:
    slow, _ = _agent("slow", [ScriptedTurn(text="slow answer", delay=0.05)])
    fast, _ = _agent("fast", ["fast answer"])
    events = RecordingEventService()
    joined: list[list[str]] = []

    def join(outputs: list[str]) -> str:
        joined.append(outputs)
        return " + ".join(outputs)

    result = await parallel(slow, fast, join=join).run("q", event_service=events)

    assert result.output == "slow answer + fast answer"
    assert joined == [["slow answer", "fast answer"]]  # branch order, not finishing order
    assert _overlapping(events, "slow", "fast")
    assert result.primitive == "parallel"
    assert [s.id for s in result.steps] == ["slow", "fast", "join"]


async def test_max_concurrency_one_runs_branches_one_after_another() -> None:
    a, _ = _agent("a", [ScriptedTurn(text="A", delay=0.02)])
    b, _ = _agent("b", ["B"])
    events = RecordingEventService()
    result = await parallel(a, b, max_concurrency=1).run("q", event_service=events)
    assert result.output == "A\n\nB"  # the default join: a blank line between outputs
    assert not _overlapping(events, "a", "b")


async def test_a_join_agent_gets_every_output_under_its_branch_id() -> None:
    a, _ = _agent("pro", ["for it"])
    b, _ = _agent("con", ["against it"])
    judge, judge_provider = _agent("judge", ["verdict"])
    result = await parallel(a, b, join=judge).run("motion")
    assert result.output == "verdict"
    assert _last_user(judge_provider) == "[pro]\nfor it\n\n[con]\nagainst it"
    assert set(result.usage_by_agent) == {"pro", "con", "judge"}


async def test_fail_fast_aborts_the_other_branches_and_records_their_partial_text() -> None:
    slow, slow_provider = _agent(
        "slow",
        ["one two three four five six seven eight nine ten"],
        provider_kw={"chunk_delay": 0.05},
    )
    broken, _ = _agent(
        "broken", [ScriptedTurn(error=ProviderError("boom", status=500), delay=0.08)]
    )

    with pytest.raises(OrchestrationError) as caught:
        await parallel(slow, broken).run("go")

    result = caught.value.result
    by_id = {s.id: s for s in result.steps}
    assert by_id["broken"].status == "failed"
    assert by_id["slow"].status == "interrupted"
    assert by_id["slow"].output.startswith("one")  # the partial text is recorded
    assert by_id["slow"].output != "one two three four five six seven eight nine ten"
    assert slow_provider.aborted_calls == 1


async def test_collect_lets_the_others_finish_and_lists_the_failures() -> None:
    good, _ = _agent("good", [ScriptedTurn(text="fine", delay=0.03)])
    broken, _ = _agent("broken", [ProviderError("boom", status=500)])
    result = await parallel(good, broken, on_error="collect").run("go")
    assert result.status == "complete"
    assert result.output == "fine"  # the join got the outputs that succeeded
    assert [(f.id, type(f.error)) for f in result.failures] == [("broken", ProviderError)]


async def test_failures_collected_in_a_nested_fan_out_reach_the_result() -> None:
    good, _ = _agent("good", ["fine"])
    broken, _ = _agent("broken", [ProviderError("boom", status=500)])
    writer, writer_provider = _agent("writer", ["written"])
    flow = sequential(parallel(good, broken, on_error="collect"), writer)
    events = RecordingEventService()

    result = await flow.run("go", event_service=events)

    assert result.output == "written"
    assert _last_user(writer_provider) == "fine"
    assert [f.id for f in result.failures] == ["parallel/broken"]
    assert events.names()[-1] == OrchestrationEventNames.COMPLETED


async def test_a_map_without_items_is_refused_before_anything_runs() -> None:
    mapper, provider = _agent("m", ["x"])
    events = RecordingEventService()
    with pytest.raises(ConfigurationError):
        await map_reduce(mapper).run("\n\n", event_service=events)
    assert not provider.requests
    assert events.names() == [OrchestrationEventNames.STARTED, OrchestrationEventNames.FAILED]


async def test_a_map_input_that_is_no_text_nor_items_is_a_clear_error() -> None:
    mapper, provider = _agent("m", ["x"])
    events = RecordingEventService()
    with pytest.raises(ConfigurationError, match="items"):
        await map_reduce(mapper).run(42, event_service=events)  # type: ignore[arg-type]

    def broken_split(text: str) -> list[str]:
        raise ValueError("cannot split " + text)

    with pytest.raises(ValueError, match="cannot split"):
        await map_reduce(mapper, split=broken_split).run("a", event_service=events)
    assert not provider.requests
    assert events.names() == [
        OrchestrationEventNames.STARTED,
        OrchestrationEventNames.FAILED,
        OrchestrationEventNames.STARTED,
        OrchestrationEventNames.FAILED,  # S32: a run that started always ends with an event
    ]


async def test_collect_still_raises_when_every_branch_failed() -> None:
    a, _ = _agent("a", [ProviderError("boom", status=500)])
    b, _ = _agent("b", [ProviderError("bang", status=500)])
    with pytest.raises(OrchestrationError):
        await parallel(a, b, on_error="collect").run("go")


# ---------------------------------------------------------------- map-reduce


async def test_map_reduce_maps_each_item_and_reduces_the_outputs() -> None:
    mapper, mapper_provider = _agent("summarise", ["s1", "s2", "s3"])
    reducer, reducer_provider = _agent("combine", ["all three"])
    flow = map_reduce(mapper, reducer)

    result = await flow.run(["doc one", "doc two", "doc three"])

    assert result.output == "all three"
    # One agent runs one item at a time (S38), each in a fresh conversation.
    assert [_last_user(mapper_provider, i) for i in range(3)] == ["doc one", "doc two", "doc three"]
    assert all(len(r.messages) == 1 for r in mapper_provider.requests)
    assert _last_user(reducer_provider) == (
        "[summarise[0]]\ns1\n\n[summarise[1]]\ns2\n\n[summarise[2]]\ns3"
    )
    assert result.usage_by_agent["summarise"].runs == 3
    assert result.usage_by_agent["combine"].runs == 1


async def test_a_pool_of_mappers_runs_items_concurrently() -> None:
    pool = [_agent("worker", [ScriptedTurn(text=f"w{i}", delay=0.03)])[0] for i in range(2)]
    events = RecordingEventService()
    result = await map_reduce(pool, lambda outs: "|".join(sorted(outs))).run(
        ["a", "b"], event_service=events
    )
    assert result.output == "w0|w1"
    assert _overlapping(events, "worker[0]", "worker[1]")


async def test_a_map_reduce_numbers_its_steps_items_first_then_the_reducer() -> None:
    events = RecordingEventService()
    await map_reduce(str.upper, "+".join).run(["a", "b", "c"], event_service=events)
    started = [
        (e.data["step_id"], e.data["step_index"])
        for e in events.events
        if e.name == OrchestrationEventNames.STEP_STARTED
    ]
    assert sorted(started, key=lambda s: s[1]) == [
        ("upper[0]", 0),
        ("upper[1]", 1),
        ("upper[2]", 2),
        ("join", 3),
    ]


def test_a_map_over_a_pool_runs_again_on_another_event_loop() -> None:
    # A flow is built once and run many times — also by asyncio.run after asyncio.run, each on
    # a loop of its own; a pool's items then wait for a free worker on that loop.
    turns = [ScriptedTurn(text=f"r{i}", delay=0.01) for i in range(6)]
    pool = [_agent("worker", list(turns))[0] for _ in range(2)]
    flow = map_reduce(pool, lambda outs: str(len(outs)))
    assert asyncio.run(flow.run(["a", "b", "c"])).output == "3"
    assert asyncio.run(flow.run(["a", "b", "c"])).output == "3"


async def test_map_reduce_nests_in_a_pipeline_splitting_the_previous_output() -> None:
    lister, _ = _agent("lister", ["apples\n\npears\n"])
    mapper, mapper_provider = _agent("price", ["1", "2"])
    flow = sequential(lister, map_reduce(mapper, lambda outs: str(sum(map(int, outs)))))
    result = await flow.run("fruit")
    assert result.output == "3"
    assert [_last_user(mapper_provider, i) for i in range(2)] == ["apples", "pears"]
    assert [s.id for s in result.steps] == [
        "lister",
        "map_reduce/price[0]",
        "map_reduce/price[1]",
        "map_reduce/join",
    ]


# ---------------------------------------------------------------- cancel, limits, usage


async def test_cancel_mid_branch_interrupts_every_branch_and_starts_nothing_more() -> None:
    a, a_provider = _agent(
        "a", ["alpha beta gamma delta epsilon zeta"], provider_kw={"chunk_delay": 0.05}
    )
    b, b_provider = _agent("b", ["one two three four five six"], provider_kw={"chunk_delay": 0.05})
    after, after_provider = _agent("after", ["never"])
    controller = AbortController()
    flow = sequential(parallel(a, b), after)

    def on_event(event: Any) -> None:
        if event.name == EventNames.PROVIDER_REQUEST and event.owner_path[1].id == "parallel":
            asyncio.get_running_loop().call_later(0.08, controller.abort, "stop")

    result = await flow.run("go", signal=controller.signal, on_event=on_event)

    assert result.status == "interrupted"
    assert {s.id: s.status for s in result.steps} == {
        "parallel/a": "interrupted",
        "parallel/b": "interrupted",
    }
    assert all(s.output for s in result.steps)  # partial text recorded
    assert a_provider.aborted_calls == b_provider.aborted_calls == 1
    assert not after_provider.requests
    assert result.usage_by_agent.keys() == {"a", "b"}


async def test_limits_hold_across_branches_each_run_getting_what_is_left() -> None:
    # Under limits the branches take turns; each is sent with what the ones before it left.
    a, a_provider = _agent("a", [ScriptedTurn(text="done", usage=_usage(5, 10))])
    b, b_provider = _agent("b", [ScriptedTurn(text="done", usage=_usage(5, 10))])
    events = RecordingEventService()

    result = await parallel(a, b).run(
        "go", limits=UsageLimits(output_tokens=25), event_service=events
    )

    assert result.usage.completion_tokens == 20
    caps = sorted(p.requests[0].max_output_tokens or 0 for p in (a_provider, b_provider))
    assert caps == [15, 25]  # the second branch was capped at what the first one left
    assert not _overlapping(events, "a", "b")


async def test_concurrent_branches_never_pass_the_flows_request_limit() -> None:
    agents = [_agent(f"w{i}", ["ok"]) for i in range(3)]

    with pytest.raises(OrchestrationError) as caught:
        await parallel(*(a for a, _ in agents)).run("go", limits=UsageLimits(requests=2))

    assert isinstance(caught.value.__cause__, UsageLimitExceeded)
    assert sum(len(p.requests) for _, p in agents) == 2
    assert caught.value.result.requests == 2


async def test_request_limits_count_every_model_call_of_every_branch() -> None:
    a, _ = _agent("a", ["x"])
    b, _ = _agent("b", ["y"])
    c, c_provider = _agent("c", ["z"])
    with pytest.raises(OrchestrationError) as caught:
        await sequential(a, b, c).run("go", limits=UsageLimits(requests=2))
    assert caught.value.step_id == "c"
    assert isinstance(caught.value.__cause__, UsageLimitExceeded)
    assert not c_provider.requests
    assert caught.value.result.requests == 2


async def test_collected_branches_under_limits_never_pass_them() -> None:
    agents = [_agent(f"w{i}", ["ok"]) for i in range(5)]
    result = await parallel(*(a for a, _ in agents), on_error="collect").run(
        "go", limits=UsageLimits(requests=2)
    )
    assert result.requests == 2
    assert sum(len(p.requests) for _, p in agents) == 2
    assert result.output == "ok\n\nok"
    assert len(result.failures) == 3
    assert all(isinstance(f.error, UsageLimitExceeded) for f in result.failures)


async def test_an_agents_own_tighter_limit_still_holds_under_the_flows() -> None:
    tight, provider = _agent("tight", [[("nothing", {})], "x"], limits=UsageLimits(requests=1))
    with pytest.raises(OrchestrationError) as caught:
        await sequential(tight).run("go", limits=UsageLimits(requests=10))
    assert isinstance(caught.value.__cause__, UsageLimitExceeded)
    assert len(provider.requests) == 1


async def test_usage_rolls_up_with_a_per_agent_breakdown_sub_agents_included() -> None:
    child, _ = _agent("researcher", [ScriptedTurn(text="found", usage=_usage(5, 1))])
    lead, _ = _agent(
        "lead",
        [
            ScriptedTurn(tool_calls=[("researcher", {"input": "look"})], usage=_usage(10, 2)),
            ScriptedTurn(text="summary", usage=_usage(20, 3)),
        ],
        tools=[child.as_tool()],
    )
    editor, _ = _agent("editor", [ScriptedTurn(text="edited", usage=_usage(7, 1))])
    result = await sequential(lead, editor).run("topic")

    assert result.usage_by_agent["lead"].usage == _usage(30, 5)
    assert result.usage_by_agent["lead/researcher"].usage == _usage(5, 1)
    assert result.usage_by_agent["editor"].usage == _usage(7, 1)
    assert result.usage == _usage(42, 7)
    assert result.requests == 4
    assert result.tool_calls == 1


async def test_a_failed_runs_usage_is_kept_by_agent_its_sub_agents_apart() -> None:
    # S29: a step that raised after calling a sub-agent: each agent's spend under its own path.
    child, _ = _agent("researcher", [ScriptedTurn(text="found", usage=_usage(5, 1))] * 2)
    calls = [("researcher", {"input": "look"}), ("researcher", {"input": "look again"})]
    lead, _ = _agent(
        "lead",
        [
            ScriptedTurn(tool_calls=calls, usage=_usage(10, 2)),
            ProviderError("boom", status=400),
        ],
        tools=[child.as_tool()],
    )
    with pytest.raises(OrchestrationError) as caught:
        await sequential(lead).run("topic")

    result = caught.value.result
    assert result.usage == _usage(20, 4)
    assert result.requests == 4
    assert {p: (u.usage, u.runs) for p, u in result.usage_by_agent.items()} == {
        "lead": (_usage(10, 2), 1),
        "lead/researcher": (_usage(10, 2), 2),
    }


async def test_a_bad_configuration_is_refused_when_built() -> None:
    with pytest.raises(ConfigurationError):
        sequential()
    with pytest.raises(ConfigurationError):
        parallel(str.upper, max_concurrency=0)
    with pytest.raises(ConfigurationError):
        parallel(str.upper, on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        sequential(42)  # type: ignore[arg-type]


async def test_a_join_that_is_no_join_is_refused_when_built_not_after_the_branches_ran() -> None:
    a, _ = _agent("a", ["x"])
    b, _ = _agent("b", ["y"])
    judge, _ = _agent("judge", ["z"])
    with pytest.raises(ConfigurationError, match="join"):
        parallel(a, b, join="judge")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="reducer"):
        map_reduce(a, [judge])  # type: ignore[arg-type]


async def test_step_ids_stay_unique_in_one_run() -> None:
    # A branch whose name is the join's id, and a name that collides with a repeat's id.
    named_join, _ = _agent("join", ["j"])
    first, _ = _agent("w", ["1"])
    second, _ = _agent("w", ["2"])
    third, _ = _agent("w#2", ["3"])
    result = await parallel(named_join, first, second, third, join="|".join).run("go")
    ids = [s.id for s in result.steps]
    assert len(set(ids)) == len(ids), ids
    assert result.output == "j|1|2|3"


async def test_run_arguments_of_the_wrong_kind_are_clear_errors_before_anything_runs() -> None:
    agent, provider = _agent("a", ["x"])
    for flow in (sequential(agent), parallel(agent)):
        with pytest.raises(ConfigurationError, match=r"controller\.signal"):
            await flow.run("go", signal=AbortController())  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="on_event"):
            await flow.run("go", on_event="print")  # type: ignore[arg-type]
    assert not provider.requests


async def test_s27_every_agent_run_of_the_flow_is_in_the_callers_trace() -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    trace = TraceContext.from_traceparent(f"00-{trace_id}-00f067aa0ba902b7-01")
    a, a_provider = _agent("a", ["x"])
    b, b_provider = _agent("b", ["y"])
    await parallel(a, b).run("go", trace=trace)
    for provider in (a_provider, b_provider):
        sent = provider.requests[0].trace
        assert sent is not None
        assert sent.traceparent.split("-")[1] == trace_id


async def test_cancelling_the_flows_task_interrupts_its_agents_and_propagates() -> None:
    a, a_provider = _agent("a", ["one two three four five six"], provider_kw={"chunk_delay": 0.05})
    b, _ = _agent("b", ["never"])
    started = asyncio.Event()
    names: list[str] = []

    def on_event(event: Any) -> None:
        names.append(event.name)
        if event.name == EventNames.PROVIDER_REQUEST:
            started.set()

    task = asyncio.create_task(sequential(a, b).run("go", on_event=on_event))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert a_provider.aborted_calls == 1
    assert names[-1] == OrchestrationEventNames.FAILED  # S32: the run's end is an event too
    assert len(a.history) == 0  # S34: the step ran in a conversation of its own


async def test_an_abort_reaching_branches_queued_under_limits_runs_none_of_them() -> None:
    first, _ = _agent(
        "first", ["alpha beta gamma delta epsilon"], provider_kw={"chunk_delay": 0.05}
    )
    queued = [_agent(f"q{i}", ["never"]) for i in range(2)]
    controller = AbortController()

    def on_event(event: Any) -> None:
        if event.name == EventNames.PROVIDER_REQUEST:
            asyncio.get_running_loop().call_later(0.06, controller.abort, "stop")

    result = await parallel(first, *(a for a, _ in queued)).run(
        "go", limits=UsageLimits(requests=10), signal=controller.signal, on_event=on_event
    )

    assert result.status == "interrupted"
    assert {s.id: s.status for s in result.steps} == {
        "first": "interrupted",
        "q0": "interrupted",
        "q1": "interrupted",
    }
    assert not any(p.requests for _, p in queued)
    assert result.requests == 1


async def test_an_abort_reaches_a_branch_waiting_for_the_limits_turn() -> None:
    # A nested fan-out fails fast while its other branch waits for the flow's limits turn, which
    # an outer branch holds: the waiting branch ends at once, so the failure reaches the outer
    # fan-out (and interrupts that branch) instead of waiting for its whole run.
    slow, slow_provider = _agent(
        "slow", ["one two three four five six seven eight"], provider_kw={"chunk_delay": 0.1}
    )
    queued, queued_provider = _agent("queued", ["never"])

    async def fails(text: str) -> str:
        await asyncio.sleep(0.05)
        raise ValueError("broken")

    with pytest.raises(OrchestrationError) as caught:
        await parallel(slow, parallel(fails, queued)).run("go", limits=UsageLimits(requests=9))

    statuses = {s.id: s.status for s in caught.value.result.steps}
    assert statuses["slow"] == "interrupted"
    assert statuses["parallel/queued"] == "interrupted"
    assert not queued_provider.requests
    assert slow_provider.aborted_calls == 1


async def test_a_fan_out_leaves_no_branch_running_when_it_raises_what_it_does_not_catch() -> None:
    # A branch raising a BaseException (here a CancelledError of its own): the flow propagates
    # it unchanged, and only once every other branch settled (interrupted), none left behind.
    slow, slow_provider = _agent(
        "slow", ["one two three four five six seven eight"], provider_kw={"chunk_delay": 0.05}
    )

    async def gives_up(text: str) -> str:
        await asyncio.sleep(0.03)
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await parallel(slow, gives_up).run("go")
    assert slow_provider.aborted_calls == 1  # settled before the flow raised
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_two_flows_sharing_an_agent_never_start_from_each_others_history() -> None:
    shared, provider = _agent(
        "shared", [ScriptedTurn(text="first", delay=0.02), ScriptedTurn(text="second")]
    )
    results = await asyncio.gather(sequential(shared).run("one"), sequential(shared).run("two"))
    assert sorted(r.output for r in results) == ["first", "second"]
    # Each run saw only its own input: the second one's fresh conversation came after the first.
    assert [len(r.messages) for r in provider.requests] == [1, 1]


# ---------------------------------------------------------------- core's neutral specs (S32)


async def test_s32_a_sequential_spec_runs_with_its_prompts_and_ids() -> None:
    researcher, first = _agent("researcher", ["facts"])
    writer, second = _agent("writer", ["essay"])
    spec = SequentialSpec(
        steps=(
            OrchestrationStep("find", "", "research", "Find facts about:"),
            OrchestrationStep("write", "", "writing", "Write an essay from these facts."),
        )
    )
    flow = from_spec(spec, {"research": researcher, "writing": writer})

    result = await flow.run("tides")

    assert result.output == "essay"
    assert _last_user(first) == "Find facts about:\n\ntides"
    assert _last_user(second) == "Write an essay from these facts.\n\nfacts"
    assert [s.id for s in result.contract().steps] == ["find", "write"]


async def test_s32_a_parallel_spec_joins_outputs_in_step_order() -> None:
    a, a_provider = _agent("a", [ScriptedTurn(text="A", delay=0.02)])
    b, _ = _agent("b", ["B"])
    spec = ParallelSpec(
        steps=(
            OrchestrationStep("one", "", "a", "Say A"),
            OrchestrationStep("two", "", "b", "Say B"),
        ),
        max_concurrency=2,
    )
    result = await from_spec(spec, {"a": a, "b": b}).run("")
    assert result.output == "A\n\nB"  # the contract's parallel output
    assert _last_user(a_provider) == "Say A"  # no input: the prompt alone


def test_s32_specs_the_flows_cannot_honour_are_refused() -> None:
    agent, _ = _agent("a", [])
    step = OrchestrationStep("s", "", "a", "p", model="other-model")
    with pytest.raises(ConfigurationError, match="model"):
        from_spec(SequentialSpec(steps=(step,)), {"a": agent})
    with pytest.raises(ConfigurationError, match="agent_type"):
        from_spec(SequentialSpec(steps=(OrchestrationStep("s", "", "zz", "p"),)), {"a": agent})
    with pytest.raises(ConfigurationError, match=r"Agent\.as_tool"):
        from_spec(
            HierarchicalSpec(steps=(OrchestrationStep("m", "", "a", "p"),), manager_step_id="m"),
            {"a": agent},
        )
    spec = SequentialSpec(steps=(OrchestrationStep("s", "", "a", "p"),))
    with pytest.raises(ConfigurationError, match="mapping"):
        from_spec(spec, None)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="SequentialSpec"):
        from_spec("sequential", {"a": agent})  # type: ignore[arg-type]
