"""Issue 4: execution loop guards (S13, S29, S30, S31, S36, S37, S39, S42)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

import robota
from robota import EventNames, RecordingEventService
from robota.testing import ScriptedProvider, ScriptedTurn


@robota.tool
def probe(n: int = 0) -> str:
    """A cheap tool."""
    return f"probed {n}"


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(1_000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached")


def always_tools(count: int) -> list[robota.testing.TurnLike]:
    return [[("probe", {"n": i})] for i in range(count)]


def _agent(
    turns: list[robota.testing.TurnLike], **options: object
) -> tuple[robota.Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns)
    agent = robota.Agent(provider=provider, model="m", tools=[probe], **options)  # type: ignore[arg-type]
    return agent, provider


@pytest.fixture
def small_model(model_name: str) -> Iterator[str]:
    robota.register_model_metadata(model_name, context_window=1_000, provider="scripted")
    yield model_name
    robota.unregister_model_metadata(model_name, provider="scripted")


# --------------------------------------------------------------------------- 1. round budget


async def test_s39_default_round_budget_is_ten() -> None:
    agent, provider = _agent([*always_tools(10), "summary"])
    result = await agent.run("go")
    assert robota.DEFAULT_MAX_ROUNDS == 10
    assert result.stop_reason == "max_rounds"
    assert len(provider.requests) == 11
    assert provider.requests[-1].tools == ()


async def test_s39_run_budget_wins_over_config_budget() -> None:
    agent, provider = _agent([*always_tools(3), "summary"], max_rounds=5)
    await agent.run("go", max_rounds=3)
    assert len(provider.requests) == 4


async def test_s39_budget_zero_disables_the_cap() -> None:
    agent, provider = _agent([*always_tools(15), "finally text"], max_rounds=0)
    result = await agent.run("go")
    assert result.output == "finally text"
    assert result.stop_reason == "end_turn"
    assert len(provider.requests) == 16


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True])
def test_s39_negative_or_non_integer_budget_is_a_configuration_error(bad: object) -> None:
    with pytest.raises(robota.ConfigurationError, match="max_rounds"):
        _agent([], max_rounds=bad)


# --------------------------------------------------------------------------- 2. forced summary


async def test_s39_budget_two_gives_two_tool_rounds_then_one_summary_call_without_tools() -> None:
    agent, provider = _agent([*always_tools(2), "Here is what I found."], max_rounds=2)
    result = await agent.run("go")
    assert len(provider.requests) == 3
    assert [len(r.tools) for r in provider.requests[:2]] == [1, 1]
    summary = provider.requests[2]
    assert summary.tools == ()
    assert summary.tool_choice == "none"
    assert summary.messages[-1].content == robota.DEFAULT_SUMMARY_INSTRUCTION
    history_text = [m.content for m in agent.history]
    assert robota.DEFAULT_SUMMARY_INSTRUCTION not in history_text
    assert result.output == "Here is what I found."
    assert result.stop_reason == "max_rounds"
    assert result.tool_calls_executed == 2
    assert result.rounds == 3


async def test_s39_summary_tool_calls_are_not_dispatched() -> None:
    ran: list[int] = []

    @robota.tool
    def record(n: int) -> str:
        """Record."""
        ran.append(n)
        return "ok"

    provider = ScriptedProvider(
        [[("record", {"n": 1})], ScriptedTurn(text="summary", tool_calls=[("record", {"n": 2})])]
    )
    agent = robota.Agent(provider=provider, model="m", tools=[record], max_rounds=1)
    result = await agent.run("go")
    assert ran == [1]
    assert result.output == "summary"
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert last.tool_calls == ()  # never committed as a call without an answer


async def test_s39_empty_summary_returns_the_fixed_fallback() -> None:
    agent, _ = _agent([*always_tools(1), ""], max_rounds=1)
    result = await agent.run("go")
    assert result.output == robota.DEFAULT_SUMMARY_FALLBACK
    assert agent.history[-1].content == ""  # history keeps what the model actually said


async def test_s39_failing_summary_call_fails_the_run_with_that_calls_own_error() -> None:
    error = robota.ProviderError("summary refused", status=500)
    agent, _ = _agent([*always_tools(1), error], max_rounds=1)
    with pytest.raises(robota.ProviderError) as info:
        await agent.run("go")
    assert info.value is error


async def test_s23_summary_call_carries_the_runs_signal() -> None:
    provider = ScriptedProvider([*always_tools(1), ScriptedTurn(text="late", delay=5)])
    agent = robota.Agent(provider=provider, model="m", tools=[probe], max_rounds=1)
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("go", signal=controller.signal))
    await _until(lambda: len(provider.requests) == 2)
    controller.abort()
    result = await asyncio.wait_for(task, 2)
    assert result.status == "interrupted"


async def test_s39_an_empty_reply_also_gets_the_summary_call() -> None:
    agent, provider = _agent(["", "now with text"])
    result = await agent.run("go")
    assert result.output == "now with text"
    assert result.stop_reason == "empty_reply"
    assert provider.requests[1].tool_choice == "none"


async def test_s39_tool_only_completion_makes_no_summary_call() -> None:
    agent, provider = _agent(always_tools(2), max_rounds=2, allow_tool_only_completion=True)
    result = await agent.run("go")
    assert len(provider.requests) == 2
    assert result.stop_reason == "tool_only"
    assert result.status == "complete"
    assert isinstance(agent.history[-1], robota.ToolMessage)


async def test_s39_tool_only_turn_with_neither_text_nor_tool_result_is_a_named_error() -> None:
    agent, provider = _agent([""])
    with pytest.raises(robota.EmptyCompletionError):
        await agent.run("go", allow_tool_only_completion=True)
    assert len(provider.requests) == 1


# --------------------------------------------------------------------------- 3. tool_choice none


async def test_s39_tool_choice_none_omits_tools_from_every_ordinary_round() -> None:
    agent, provider = _agent(["a"])
    await agent.run("go", tool_choice="none")
    assert provider.requests[0].tools == ()


async def test_s39_tool_call_despite_tool_choice_none_fails_before_any_body() -> None:
    ran: list[str] = []

    @robota.tool
    def act() -> str:
        """Act."""
        ran.append("x")
        return "x"

    provider = ScriptedProvider([[("act", {})], "next run"])
    agent = robota.Agent(provider=provider, model="m", tools=[act])
    with pytest.raises(robota.ProviderError) as info:
        await agent.run("go", tool_choice="none")
    assert info.value.code == "tool_choice_violated"
    assert ran == []
    tool_message = agent.history[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert "not dispatched" in tool_message.content
    await agent.run("again")
    assert [t.name for t in provider.requests[1].tools] == ["act"]


# --------------------------------------------------------------------------- 4. identical input


async def test_s39_identical_input_limit_two_third_call_raises_batch_not_dispatched() -> None:
    ran: list[str] = []

    @robota.tool
    def fetch(url: str) -> str:
        """Fetch."""
        ran.append(url)
        return "page"

    same = ("fetch", {"url": "https://example.com"})
    other = ("fetch", {"url": "https://example.org"})
    provider = ScriptedProvider([[same], [same], [other, same]])
    agent = robota.Agent(provider=provider, model="m", tools=[fetch], max_same_tool_inputs=2)
    with pytest.raises(robota.SameToolInputLoopError) as info:
        await agent.run("go")
    error = info.value
    assert (error.tool_name, error.limit, error.recoverable) == ("fetch", 2, True)
    assert not robota.is_abort(error)
    assert ran == ["https://example.com", "https://example.com"]
    last_two = list(agent.history)[-2:]
    assert all(
        isinstance(m, robota.ToolMessage) and "not dispatched" in m.content for m in last_two
    )
    assistant = [m for m in agent.history if isinstance(m, robota.AssistantMessage)][-1]
    assert [m.tool_call_id for m in last_two] == [c.id for c in assistant.tool_calls]


async def test_s39_identical_input_means_byte_identical() -> None:
    @robota.tool
    def fetch(url: str) -> str:
        """Fetch."""
        return "page"

    provider = ScriptedProvider(
        [
            [("fetch", '{"url": "a"}')],
            [("fetch", '{"url":"a"}')],
            [("fetch", '{"url": "a"}')],
            "done",
        ]
    )
    agent = robota.Agent(provider=provider, model="m", tools=[fetch], max_same_tool_inputs=2)
    assert (await agent.run("go")).output == "done"


async def test_s39_identical_input_limit_run_override_wins() -> None:
    agent, _ = _agent([[("probe", {})], [("probe", {})], "done"], max_same_tool_inputs=1)
    assert (await agent.run("go", max_same_tool_inputs=5)).output == "done"


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_s39_identical_input_limit_must_be_positive(bad: object) -> None:
    with pytest.raises(robota.ConfigurationError, match="max_same_tool_inputs"):
        _agent([], max_same_tool_inputs=bad)


# --------------------------------------------------------------------------- 5. unavailable tools


async def test_s37_unknown_tool_twice_in_a_row_forces_a_final_call_naming_it() -> None:
    agent, provider = _agent([[("serach", {})], [("serach", {})], "answer without tools"])
    result = await agent.run("go")
    assert len(provider.requests) == 3
    final = provider.requests[2]
    assert final.tools == ()
    assert final.tool_choice == "none"
    assert "'serach'" in final.messages[-1].content
    assert "not executed" in final.messages[-1].content
    assert final.messages[-1].content not in [m.content for m in agent.history]
    assert result.stop_reason == "unavailable_tools"
    assert result.output == "answer without tools"
    assert result.tool_calls_executed == 0


async def test_s37_a_round_with_available_tools_resets_the_streak() -> None:
    agent, provider = _agent([[("serach", {})], [("probe", {})], [("serach", {})], "done"])
    result = await agent.run("go")
    assert result.stop_reason == "end_turn"
    assert len(provider.requests) == 4


async def test_s37_unavailable_tools_instruction_has_an_override_seam() -> None:
    agent, provider = _agent(
        [[("x", {})], [("x", {})], "ok"],
        texts=robota.ModelTexts(unavailable_tools_instruction="Missing: {calls}."),
    )
    await agent.run("go")
    assert provider.requests[2].messages[-1].content == "Missing: 'x'."


# --------------------------------------------------------------------------- 6. context guard


async def test_s39_context_guard_trips_on_a_small_window_and_does_not_call_the_provider(
    small_model: str, memory_sink: robota.MemorySink
) -> None:
    provider = ScriptedProvider(["never sent"])
    recorder = RecordingEventService()
    agent = robota.Agent(provider=provider, model=small_model, event_service=recorder)
    result = await agent.run("word " * 2_000)
    assert provider.requests == []
    assert result.stop_reason == "context_limit"
    assert "not sent" in result.output
    assert "1,000-token context window" in result.output
    assert agent.history[-1].content == result.output
    blocked = [e for e in recorder.events if e.name == EventNames.CONTEXT_BLOCKED]
    assert blocked[0].data["window"] == 1_000
    assert not any(e.name == EventNames.ROUND_COMPLETED for e in recorder.events)
    assert memory_sink.events == []  # a registered model: no unknown-model warning


async def test_s39_context_guard_message_has_an_override_seam(small_model: str) -> None:
    agent = robota.Agent(
        provider=ScriptedProvider([]),
        model=small_model,
        texts=robota.ModelTexts(
            context_limit_message=lambda usage: f"Too long: {usage.tokens}/{usage.window}"
        ),
    )
    result = await agent.run("word " * 2_000)
    assert result.output.startswith("Too long: ")


async def test_s13_unknown_model_has_an_unknown_window_with_its_one_warning(
    model_name: str, memory_sink: robota.MemorySink
) -> None:
    agent = robota.Agent(provider=ScriptedProvider(["a", "b"]), model=model_name)
    first = await agent.run("x")
    await agent.run("y")
    warnings = [e for e in memory_sink.events if e.logger == "robota.models"]
    assert len(warnings) == 1
    assert agent.context_usage().window is None
    assert agent.context_usage().ratio is None
    assert first.context_window == robota.ContextWindow(None, "unknown")


async def test_s31_context_floor_is_a_lower_bound_not_a_charge(small_model: str) -> None:
    agent = robota.Agent(provider=ScriptedProvider(["fine"]), model=small_model)
    assert agent.context_usage(floor=900).tokens == 900
    result = await agent.run("hi", context_floor=990)
    assert result.stop_reason == "context_limit"


# --------------------------------------------------------------------------- 7. tool-result budget


async def test_s39_results_past_the_budget_become_notices_that_tell_outcomes_apart(
    small_model: str,
) -> None:
    @robota.tool(source="demo-package")
    def big() -> robota.ToolResult:
        """Big output."""
        return robota.ToolResult("x" * 4_000, view={"chart": "display only"})

    @robota.tool
    def broken() -> str:
        """Fails."""
        raise RuntimeError("half-written file")

    recorder = RecordingEventService()
    provider = ScriptedProvider([[("big", {}), ("broken", {}), ("missing", {})], "ok"])
    agent = robota.Agent(
        provider=provider, model=small_model, tools=[big, broken], event_service=recorder
    )
    await agent.run("go")
    results = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert "completed and its effects happened; do not repeat it" in results[0]
    assert "(source: demo-package)" in results[0]
    assert "effects may be partial or uncertain" in results[1]
    assert "was not executed (unavailable)" in results[2]
    omitted = [e for e in recorder.events if e.name == EventNames.TOOL_RESULT_OMITTED]
    assert [e.data["status"] for e in omitted] == ["completed", "failed", "unavailable"]
    assert omitted[0].data["content"] == "x" * 4_000  # the full receipt stays on the record
    assert omitted[0].data["source"] == "demo-package"
    assert "display only" not in repr(list(agent.history))
    assert all(len(r) < 300 for r in results)


async def test_s39_results_within_the_budget_are_kept_whole() -> None:
    agent, _ = _agent([[("probe", {"n": 7})], "ok"])
    await agent.run("go")
    assert "probed 7" in [m.content for m in agent.history]


# --------------------------------------------------------------------------- 8. context tracking


async def test_s31_latest_report_is_trusted_and_later_messages_add_estimates(
    model_name: str,
) -> None:
    usage = robota.Usage.from_counts(prompt=5_000, completion=100)
    provider = ScriptedProvider([ScriptedTurn(text="answer", usage=usage)])
    agent = robota.Agent(provider=provider, model=model_name)
    await agent.run("hi")
    after_reply = agent.context_usage()
    assert after_reply.reported
    assert after_reply.tokens == 5_100  # the report covers the reply it came with
    # Messages appended after the report add their estimates to it (the next turn's input).
    store = robota.ConversationStore(messages=agent.history)
    store.append(robota.UserMessage("x" * 400))
    assert store.context.effective_tokens() == 5_100 + 4 + 100


def test_s31_a_trim_or_new_system_head_drops_the_stale_report() -> None:
    store = robota.ConversationStore(system_prompt="s")
    with store.begin_assistant() as pending:
        pending.usage = robota.Usage.from_counts(prompt=9_000, completion=10)
    assert store.context.reported
    store.set_system_prompt("another head")
    assert not store.context.reported
    assert store.context.effective_tokens() == store.context.estimated_tokens


def test_s31_partial_reports_never_anchor_the_count() -> None:
    store = robota.ConversationStore()
    with store.begin_assistant() as pending:
        pending.usage = robota.Usage.from_counts(prompt=None, completion=10)
    assert not store.context.reported


async def test_s31_historical_reports_are_never_summed(model_name: str) -> None:
    reports = [robota.Usage.from_counts(prompt=1_000 * i, completion=10) for i in (1, 2, 3)]
    provider = ScriptedProvider(
        [ScriptedTurn(text=f"r{i}", usage=u) for i, u in enumerate(reports)]
    )
    agent = robota.Agent(provider=provider, model=model_name)
    for text in ("a", "b", "c"):
        await agent.run(text)
    assert agent.context_usage().tokens == 3_010  # the latest report, not 1,010 + 2,010 + 3,010


async def test_s31_estimate_is_a_lower_bound_under_a_stale_small_report(model_name: str) -> None:
    tiny = robota.Usage.from_counts(prompt=1, completion=1)
    provider = ScriptedProvider([ScriptedTurn(text="ok", usage=tiny)])
    agent = robota.Agent(provider=provider, model=model_name)
    await agent.run("word " * 400)
    assert agent.context_usage().tokens >= 400


async def test_s31_each_round_has_a_fresh_observation_id() -> None:
    agent, _ = _agent([[("probe", {})], "done"])
    ids = [
        e.observation_id async for e in agent.run_stream("go") if isinstance(e, robota.RoundStarted)
    ]
    assert len(ids) == 2
    assert len(set(ids)) == 2
    assert all(i.startswith("obs_") for i in ids)


# --------------------------------------------------------------------------- 9. usage and cost


async def test_s29_run_usage_sums_every_call_including_the_summary(model_name: str) -> None:
    u1 = robota.Usage.from_counts(prompt=100, completion=10, cache_read=60)
    u2 = robota.Usage.from_counts(prompt=200, completion=20)
    provider = ScriptedProvider(
        [ScriptedTurn(tool_calls=[("probe", {})], usage=u1), ScriptedTurn(text="s", usage=u2)]
    )
    agent = robota.Agent(provider=provider, model=model_name, tools=[probe], max_rounds=1)
    result = await agent.run("go")
    assert result.usage.to_triple() == {
        "prompt_tokens": 300,
        "completion_tokens": 30,
        "total_tokens": 330,
    }
    assert result.usage.cache_read_tokens == 60
    assert not result.usage.partial


async def test_s31_a_round_without_reported_usage_marks_the_run_partial() -> None:
    class NoUsage(ScriptedProvider):
        async def chat_stream(self, request, *, signal=None):  # type: ignore[no-untyped-def, override]
            async for event in super().chat_stream(request, signal=signal):
                if isinstance(event, robota.ResponseDone):
                    yield robota.ResponseDone(model=event.model)
                else:
                    yield event

    agent = robota.Agent(provider=NoUsage(["x"]), model="m")
    assert (await agent.run("go")).usage.partial


async def test_s04_cost_comes_from_the_pricing_table_per_answering_model(model_name: str) -> None:
    answering = model_name + "-answering"
    robota.register_model_pricing(answering, input_per_million=1_000, output_per_million=2_000)
    try:
        usage = robota.Usage.from_counts(prompt=1_000, completion=500)
        provider = ScriptedProvider([ScriptedTurn(text="x", usage=usage, model=answering)])
        agent = robota.Agent(provider=provider, model=model_name)
        result = await agent.run("go")
        assert result.cost == pytest.approx(1.0 + 1.0)
    finally:
        robota.unregister_model_pricing(answering)


async def test_s04_cost_is_none_when_the_model_has_no_price(model_name: str) -> None:
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model=model_name)
    assert (await agent.run("go")).cost is None


# --------------------------------------------------------------------------- 10. provider failures


async def test_s42_provider_failure_keeps_status_type_and_switchability() -> None:
    error = robota.ProviderError("overloaded", status=529, vendor_type="overloaded_error")
    agent, _ = _agent([error])
    with pytest.raises(robota.ProviderError) as info:
        await agent.run("go")
    assert (info.value.status, info.value.vendor_type, info.value.switchable) == (
        529,
        "overloaded_error",
        True,
    )
    assert agent.history[-1].content == "Request failed: overloaded"


async def test_s39_an_untyped_provider_exception_is_raised_as_a_provider_error_with_its_cause() -> (
    None
):
    agent, _ = _agent([ConnectionResetError("peer reset")])
    with pytest.raises(robota.ProviderError) as info:
        await agent.run("go")
    assert isinstance(info.value.__cause__, ConnectionResetError)
    assert info.value.switchable is False
    assert "ConnectionResetError: peer reset" in agent.history[-1].content


async def test_s39_partial_text_before_a_failure_is_kept_with_the_notice() -> None:
    class FailsMidStream(ScriptedProvider):
        async def chat_stream(self, request, *, signal=None):  # type: ignore[no-untyped-def, override]
            self.requests.append(request)
            yield robota.TextDelta("Half an answer")
            raise robota.ProviderError("stream cut", status=502)

    agent = robota.Agent(provider=FailsMidStream([]), model="m")
    with pytest.raises(robota.ProviderError):
        await agent.run("go")
    last = agent.history[-1]
    assert last.content == "Half an answer\n\nRequest failed: stream cut"
    assert last.state == "interrupted"


async def test_s39_execution_control_failures_propagate_and_never_become_tool_results() -> None:
    @robota.tool
    def persist() -> str:
        """Persist."""
        raise robota.StorageError("journal write refused")

    agent = robota.Agent(
        provider=ScriptedProvider([[("persist", {})], "never"]), model="m", tools=[persist]
    )
    with pytest.raises(robota.StorageError):
        await agent.run("go")
    tool_message = agent.history[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert "journal write refused" not in tool_message.content  # not a model-visible failure


async def test_s39_a_crash_of_the_pipeline_becomes_a_typed_error() -> None:
    class Broken(robota.Plugin):
        pass

    class ExplodingGate:
        async def admit(self, invocation: robota.ToolInvocation) -> robota.Admission:
            raise KeyError("bug in the gate")

        async def settled(
            self, invocation: robota.ToolInvocation, result: robota.ToolResult
        ) -> None:
            return None

    agent, _ = _agent([[("probe", {})], "x"], tool_gate=ExplodingGate(), plugins=[Broken()])
    with pytest.raises(robota.InternalError) as info:
        await agent.run("go")
    assert isinstance(info.value.__cause__, KeyError)
    assert isinstance(agent.history[-1], robota.ToolMessage)  # the call still got its answer


# --------------------------------------------------------------------------- 11. attribution, cache


async def test_s30_every_record_names_the_model_that_actually_answered(model_name: str) -> None:
    recorder = RecordingEventService()
    provider = ScriptedProvider([ScriptedTurn(text="hi", model="fallback")])
    agent = robota.Agent(provider=provider, model=model_name, event_service=recorder)
    result = await agent.run("go")
    request = next(e for e in recorder.events if e.name == EventNames.PROVIDER_REQUEST)
    observation = next(e for e in recorder.events if e.name == EventNames.ROUND_COMPLETED)
    response = next(e for e in recorder.events if e.name == EventNames.PROVIDER_RESPONSE)
    assert request.data["requested_model"] == model_name
    assert observation.data["model"] == "fallback"
    assert response.data["message"].model == "fallback"
    assert result.model == "fallback"


async def test_s30_response_cache_hit_is_a_no_dispatch_round() -> None:
    cache = robota.InMemoryResponseCache()
    recorder = RecordingEventService()
    first = ScriptedProvider(["cached answer"])
    await robota.Agent(provider=first, model="m", response_cache=cache).run("same question")
    second = ScriptedProvider([])
    agent = robota.Agent(provider=second, model="m", response_cache=cache, event_service=recorder)
    result = await agent.run("same question")
    assert result.output == "cached answer"
    assert second.requests == []
    observation = next(e for e in recorder.events if e.name == EventNames.ROUND_COMPLETED)
    assert observation.data["dispatched"] is False
    assert cache.hits == 1


async def test_s30_a_cached_answer_is_never_served_for_another_model() -> None:
    cache = robota.InMemoryResponseCache()
    fallback = ScriptedProvider([ScriptedTurn(text="from fallback", model="small")])
    await robota.Agent(provider=fallback, model="big", response_cache=cache).run("q")
    again = ScriptedProvider(["from big"])
    result = await robota.Agent(provider=again, model="big", response_cache=cache).run("q")
    assert result.output == "from big"  # the fallback's answer was not served as "big"
    direct = ScriptedProvider([])
    hit = await robota.Agent(provider=direct, model="small", response_cache=cache).run("q")
    assert hit.output == "from fallback"


def test_response_cache_size_is_validated_and_bounded() -> None:
    with pytest.raises(robota.ConfigurationError):
        robota.InMemoryResponseCache(0)
    cache = robota.InMemoryResponseCache(1)
    asyncio.run(cache.put("a", robota.CachedResponse("m", ())))
    asyncio.run(cache.put("b", robota.CachedResponse("m", ())))
    assert len(cache) == 1


# --------------------------------------------------------------------------- 12. observations


async def test_s39_forced_summary_round_emits_its_observation_too() -> None:
    recorder = RecordingEventService()
    agent, _ = _agent([*always_tools(1), "summary"], max_rounds=1, event_service=recorder)
    await agent.run("go")
    observations = [e.data for e in recorder.events if e.name == EventNames.ROUND_COMPLETED]
    assert [(o["round"], o["forced"], o["outcome"]) for o in observations] == [
        (1, False, "success"),
        (2, True, "success"),
    ]


async def test_s39_failed_and_interrupted_rounds_are_observed_with_their_outcome() -> None:
    recorder = RecordingEventService()
    agent, _ = _agent([robota.ProviderError("x")], event_service=recorder)
    with pytest.raises(robota.ProviderError):
        await agent.run("go")
    observation = next(e for e in recorder.events if e.name == EventNames.ROUND_COMPLETED)
    assert observation.data["outcome"] == "failure"
