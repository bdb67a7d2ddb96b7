"""Issue 28 part 1: usage limits per run (S29, S31, S34, S39).

Each limit is tried exactly at, one below and one above what the run needs, with scripted usage.
The pre-send input estimate of a run whose only message is ``"go"`` and that offers no tools is
what the S39 context guard computes for it (:func:`_estimate`); the tests derive their numbers
from it rather than hard-coding the estimator.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

import robota
from robota import UsageLimitExceeded, UsageLimits
from robota.testing import ScriptedProvider, ScriptedTurn


def _estimate(text: str = "go") -> int:
    """The pre-send input estimate of a first request holding only ``text`` (S31, S39)."""
    store = robota.ConversationStore(messages=[robota.UserMessage(text)])
    return store.context.effective_tokens(0)


def _usage(prompt: int, completion: int) -> robota.Usage:
    return robota.Usage.from_counts(prompt=prompt, completion=completion)


def _reply(text: str, prompt: int, completion: int) -> ScriptedTurn:
    return ScriptedTurn(text=text, usage=_usage(prompt, completion))


def _calls(*names: str, prompt: int = 1, completion: int = 1) -> ScriptedTurn:
    return ScriptedTurn(
        tool_calls=tuple((name, {}) for name in names), usage=_usage(prompt, completion)
    )


@dataclass
class _Probe:
    ran: int = 0


@pytest.fixture
def probe() -> tuple[robota.Tool, _Probe]:
    seen = _Probe()

    @robota.tool
    def look() -> str:
        """Look."""
        seen.ran += 1
        return "seen"

    return look, seen


def _agent(
    turns: list[robota.testing.TurnLike],
    *,
    tools: list[robota.Tool] | None = None,
    **options: object,
) -> tuple[robota.Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns)
    agent = robota.Agent(provider=provider, model="m", tools=tools or [], **options)  # type: ignore[arg-type]
    return agent, provider


def _caps(provider: ScriptedProvider) -> list[int | None]:
    return [request.settings.max_output_tokens for request in provider.requests]


# --------------------------------------------------------------------------- the type


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("requests", -1),
        ("requests", True),
        ("input_tokens", 2.5),
        ("output_tokens", "3"),
        ("total_tokens", -5),
        ("tool_calls", False),
        ("cost_usd", -0.01),
        ("cost_usd", float("nan")),
        ("cost_usd", float("inf")),
        ("cost_usd", True),
    ],
)
def test_S31_limits_refuse_what_is_not_a_non_negative_number_naming_the_field(
    field: str, bad: object
) -> None:
    with pytest.raises(robota.ConfigurationError, match=f"UsageLimits.{field}"):
        UsageLimits(**{field: bad})  # type: ignore[arg-type]


def test_S31_limits_are_frozen_and_merge_field_by_field() -> None:
    agent = UsageLimits(requests=1, tool_calls=5, cost_usd=1)
    run = UsageLimits(requests=3, output_tokens=10)
    assert agent.merged(run) == UsageLimits(
        requests=3, tool_calls=5, output_tokens=10, cost_usd=1.0
    )
    assert agent.merged(None) is agent
    with pytest.raises(AttributeError):
        agent.requests = 2  # type: ignore[misc]


def test_S31_remaining_is_what_earlier_runs_left_never_negative() -> None:
    limits = UsageLimits(requests=3, total_tokens=100, output_tokens=10, cost_usd=1.0)
    left = limits.remaining(usage=_usage(40, 15), requests=1, cost_usd=0.25)
    assert left == UsageLimits(requests=2, total_tokens=45, output_tokens=0, cost_usd=0.75)
    with pytest.raises(robota.ConfigurationError, match="cost"):
        limits.remaining(usage=robota.Usage(), cost_usd=None)


async def test_S31_limits_option_must_be_usage_limits() -> None:
    with pytest.raises(robota.ConfigurationError, match="limits"):
        _agent([], limits={"requests": 1})
    agent, provider = _agent(["hi"])
    with pytest.raises(robota.ConfigurationError, match="limits"):
        await agent.run("go", limits=3)  # type: ignore[typeddict-item]
    assert provider.requests == []


# --------------------------------------------------------------------------- requests


@pytest.mark.parametrize(("limit", "passes"), [(1, False), (2, True), (3, True)])
async def test_S31_requests_limit_at_below_and_above(
    probe: tuple[robota.Tool, _Probe], limit: int, passes: bool
) -> None:
    look, seen = probe
    agent, provider = _agent([_calls("look"), "done"], tools=[look])
    if passes:
        result = await agent.run("go", limits=UsageLimits(requests=limit))
        assert result.output == "done"
        return
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=UsageLimits(requests=limit))
    error = info.value
    assert (error.limit, error.requests, error.code, error.recoverable) == (
        "requests",
        1,
        "usage_limit_exceeded",
        False,
    )
    assert isinstance(error, robota.RobotaError)
    assert error.limits == UsageLimits(requests=1)
    assert error.usage.total_tokens == 2
    assert len(provider.requests) == 1  # S31: checked before the call, which was never sent
    assert seen.ran == 1
    assert isinstance(agent.history[-1], robota.ToolMessage)  # the answered batch stays


async def test_S31_limit_checked_before_the_forced_summary_call(
    probe: tuple[robota.Tool, _Probe],
) -> None:
    look, _ = probe
    agent, provider = _agent([_calls("look"), "summary"], tools=[look], max_rounds=1)
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=UsageLimits(requests=1))
    assert info.value.limit == "requests"
    assert len(provider.requests) == 1


async def test_S31_limit_checked_before_a_structured_output_retry() -> None:
    @dataclass
    class City:
        name: str

    agent, provider = _agent(['{"town": "Oslo"}', '{"name": "Oslo"}'])
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", output=City, limits=UsageLimits(requests=1))
    assert info.value.limit == "requests"
    assert len(provider.requests) == 1
    retried = await agent.run("go", output=City, limits=UsageLimits(requests=2))
    assert retried.output == City("Oslo")


async def test_S31_a_cached_response_is_not_a_request(probe: tuple[robota.Tool, _Probe]) -> None:
    look, _ = probe
    cache = robota.InMemoryResponseCache()
    first, _ = _agent([_calls("look"), "cached answer"], tools=[look], response_cache=cache)
    await first.run("go")
    second, provider = _agent([], tools=[look], response_cache=cache)
    # Both calls are served from the cache: the second one is admitted, since none was a request.
    result = await second.run("go", limits=UsageLimits(requests=1))
    assert result.output == "cached answer"
    assert provider.requests == []


class _Deaf(robota.Provider):
    """Finishes its reply whatever the signal says, reporting 50 output tokens (S23)."""

    @property
    def name(self) -> str:
        return "deaf"

    async def chat(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> robota.ChatResponse:
        return await robota.collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[robota.StreamEvent]:
        yield robota.TextDelta("a long reply")
        yield robota.ToolCallReady(robota.ToolCall("call_1", "look", "{}"))
        yield robota.ResponseDone(model=request.model, usage=_usage(1, 50))


async def test_S31_an_interrupted_reply_past_a_limit_keeps_its_abort_and_answers_once(
    probe: tuple[robota.Tool, _Probe],
) -> None:
    # S23: a journaled run joins provider settlement, so the late reply's usage (past the limit)
    # is recorded; the abort that won still decides how the run ends, and no call is answered
    # twice.
    look, seen = probe
    controller = robota.AbortController()
    agent = robota.Agent(
        provider=_Deaf(), model="m", tools=[look], journal=robota.testing.InMemoryJournal()
    )

    def abort_on_request(event: robota.AgentEvent) -> None:
        if event.name == robota.EventNames.PROVIDER_REQUEST:
            controller.abort()

    result = await agent.run(
        "go",
        signal=controller.signal,
        limits=UsageLimits(output_tokens=10),
        on_event=abort_on_request,
    )
    assert result.status == "interrupted"
    assert result.usage.completion_tokens == 50
    assert seen.ran == 0
    answers = [m for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert [m.tool_call_id for m in answers] == ["call_1"]


# --------------------------------------------------------------------------- run vs agent


async def test_S31_run_limits_win_over_the_agents_field_by_field(
    probe: tuple[robota.Tool, _Probe],
) -> None:
    look, _ = probe
    agent, provider = _agent(
        [_calls("look"), _calls("look"), "done"],
        tools=[look],
        limits=UsageLimits(requests=1, tool_calls=1),
    )
    with pytest.raises(UsageLimitExceeded) as info:
        # requests=3 wins over the agent's 1; the agent's tool_calls=1 still applies.
        await agent.run("go", limits=UsageLimits(requests=3))
    assert info.value.limit == "tool_calls"
    assert info.value.limits == UsageLimits(requests=3, tool_calls=1)
    assert len(provider.requests) == 2


async def test_S31_limits_apply_to_a_streamed_run() -> None:
    agent, provider = _agent([_reply("hello there", _estimate(), 5)])
    stream = agent.run_stream("go", limits=UsageLimits(output_tokens=4))

    async def consume() -> None:
        async with stream:
            async for _ in stream:
                pass
            await stream.result()

    with pytest.raises(UsageLimitExceeded) as info:
        await consume()
    assert info.value.limit == "output_tokens"
    assert _caps(provider) == [4]


# --------------------------------------------------------------------------- output tokens


@pytest.mark.parametrize(("limit", "passes"), [(29, False), (30, True), (31, True)])
async def test_S31_output_tokens_limit_at_below_and_above_checked_after_the_response(
    limit: int, passes: bool
) -> None:
    # The provider reports 30 whatever the cap said: the after-response check catches it.
    agent, provider = _agent([_reply("answer", _estimate(), 30)])
    if passes:
        result = await agent.run("go", limits=UsageLimits(output_tokens=limit))
        assert result.usage.completion_tokens == 30
    else:
        with pytest.raises(UsageLimitExceeded) as info:
            await agent.run("go", limits=UsageLimits(output_tokens=limit))
        assert info.value.limit == "output_tokens"
        assert info.value.usage.completion_tokens == 30
        # The response is committed as for any failure (S34).
        assert agent.history[-1].content == "answer"
    assert _caps(provider) == [limit]


async def test_S31_output_cap_is_clamped_to_what_remains_on_every_request(
    probe: tuple[robota.Tool, _Probe],
) -> None:
    look, _ = probe
    agent, provider = _agent(
        [_calls("look", completion=30), _calls("look", completion=60), "x"], tools=[look]
    )
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=UsageLimits(output_tokens=90))
    # 90, then 90 - 30; after 90 used no call can get an output token: the third is not sent.
    assert _caps(provider) == [90, 60]
    assert info.value.limit == "output_tokens"
    assert "not sent" in info.value.message


async def test_S31_a_cap_the_caller_set_is_never_raised() -> None:
    agent, provider = _agent([_reply("ok", _estimate(), 1), _reply("ok", _estimate(), 1)])
    settings = robota.ModelSettings(max_output_tokens=20)
    await agent.run("go", limits=UsageLimits(output_tokens=100), settings=settings)
    await agent.run("go", limits=UsageLimits(output_tokens=10), settings=settings)
    assert _caps(provider) == [20, 10]


async def test_S31_limits_without_an_output_bound_leave_the_cap_alone() -> None:
    agent, provider = _agent(["ok"])
    await agent.run("go", limits=UsageLimits(requests=5, tool_calls=5))
    assert _caps(provider) == [None]


# --------------------------------------------------------------------------- input tokens


@pytest.mark.parametrize(("delta", "passes"), [(-1, False), (0, True), (1, True)])
async def test_S31_input_tokens_limit_at_below_and_above_checked_before_the_call(
    delta: int, passes: bool
) -> None:
    estimate = _estimate()
    agent, provider = _agent([_reply("ok", estimate, 1)])
    limits = UsageLimits(input_tokens=estimate + delta)
    if passes:
        result = await agent.run("go", limits=limits)
        assert result.usage.prompt_tokens == estimate
        assert _caps(provider) == [None]  # an input limit leaves the output cap alone
        return
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=limits)
    assert info.value.limit == "input_tokens"
    assert provider.requests == []  # S31: refused before the call; nothing was sent


async def test_S31_input_tokens_reported_past_the_estimate_stop_after_the_response() -> None:
    estimate = _estimate()
    agent, _ = _agent([_reply("ok", estimate + 10, 1)])
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=UsageLimits(input_tokens=estimate + 5))
    assert info.value.limit == "input_tokens"
    assert info.value.usage.prompt_tokens == estimate + 10


# --------------------------------------------------------------------------- total tokens


@pytest.mark.parametrize(("delta", "passes"), [(0, False), (1, True), (2, True)])
async def test_S31_total_tokens_limit_needs_the_input_estimate_plus_one_output_token(
    delta: int, passes: bool
) -> None:
    estimate = _estimate()
    agent, provider = _agent([_reply("ok", estimate, 1)])
    limits = UsageLimits(total_tokens=estimate + delta)
    if passes:
        result = await agent.run("go", limits=limits)
        assert result.usage.total_tokens == estimate + 1
        assert _caps(provider) == [delta]  # clamped: what remains after the input estimate
        return
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=limits)
    assert info.value.limit == "total_tokens"
    assert provider.requests == []


async def test_S31_total_tokens_reported_past_the_limit_stop_after_the_response() -> None:
    estimate = _estimate()
    agent, _ = _agent([_reply("ok", estimate + 3, 2)])
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=UsageLimits(total_tokens=estimate + 4))
    assert info.value.limit == "total_tokens"
    assert info.value.usage.total_tokens == estimate + 5


# --------------------------------------------------------------------------- tool calls


@pytest.mark.parametrize(("limit", "passes"), [(1, False), (2, True), (3, True)])
async def test_S31_tool_calls_limit_refuses_the_whole_batch_before_dispatch(
    probe: tuple[robota.Tool, _Probe], limit: int, passes: bool
) -> None:
    look, seen = probe
    agent, provider = _agent([_calls("look", "look"), "done"], tools=[look])
    if passes:
        result = await agent.run("go", limits=UsageLimits(tool_calls=limit))
        assert result.output == "done"
        assert seen.ran == 2
        return
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=UsageLimits(tool_calls=limit))
    assert (info.value.limit, info.value.tool_calls) == ("tool_calls", 0)
    assert seen.ran == 0  # none of the batch was dispatched
    assert len(provider.requests) == 1
    # S34: every committed call has its answer, so the conversation stays usable.
    assistant = agent.history[-3]
    assert isinstance(assistant, robota.AssistantMessage)
    answers = list(agent.history)[-2:]
    assert [m.tool_call_id for m in answers] == [c.id for c in assistant.tool_calls]
    assert all(isinstance(m, robota.ToolMessage) and "not dispatched" in m.content for m in answers)
    assert (await agent.run("again")).output == "done"


# --------------------------------------------------------------------------- cost


@pytest.fixture
def priced(model_name: str) -> str:
    # $1 per input token and $2 per output token: every sum is exact in binary floating point.
    robota.register_model_pricing(
        model_name,
        input_per_million=1_000_000,
        output_per_million=2_000_000,
        provider="scripted",
    )
    return model_name


@pytest.mark.parametrize(("spare", "passes"), [(-0.01, False), (0.0, True), (1.0, True)])
async def test_S31_cost_limit_at_below_and_above_with_the_cap_clamped_to_what_remains(
    priced: str, spare: float, passes: bool
) -> None:
    estimate = _estimate()
    provider = ScriptedProvider([_reply("ok", estimate, 1)])
    agent = robota.Agent(provider=provider, model=priced)
    # The call may cost the input estimate ($1 a token) plus one output token ($2).
    limits = UsageLimits(cost_usd=estimate + 2 + spare)
    if passes:
        result = await agent.run("go", limits=limits)
        assert result.cost == pytest.approx(estimate + 2)
        assert _caps(provider) == [1 + int(spare // 2)]
        return
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=limits)
    assert info.value.limit == "cost_usd"
    assert info.value.cost_usd == 0.0
    assert provider.requests == []


async def test_S31_cost_reported_past_the_limit_stops_after_the_response(priced: str) -> None:
    estimate = _estimate()
    provider = ScriptedProvider([_reply("ok", estimate + 5, 1)])
    agent = robota.Agent(provider=provider, model=priced)
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=UsageLimits(cost_usd=estimate + 4))
    assert info.value.limit == "cost_usd"
    assert info.value.cost_usd == pytest.approx(estimate + 7)


async def test_S31_a_cost_limit_on_a_model_without_a_price_is_refused_before_any_call() -> None:
    agent, provider = _agent(["hi"])
    with pytest.raises(robota.ConfigurationError, match="no registered price"):
        await agent.run("go", limits=UsageLimits(cost_usd=1.0))
    with pytest.raises(robota.ConfigurationError, match="no registered price"):
        agent.run_stream("go", limits=UsageLimits(cost_usd=1.0))
    assert provider.requests == []
    assert list(agent.history) == []  # refused when the run starts: the input never entered
    assert (await agent.run("go", limits=UsageLimits(requests=1))).output == "hi"


async def test_S30_a_cost_limit_stops_when_an_unpriced_model_answered(priced: str) -> None:
    turn = ScriptedTurn(text="ok", usage=_usage(1, 1), model="unpriced-fallback")
    provider = ScriptedProvider([turn])
    agent = robota.Agent(provider=provider, model=priced)
    with pytest.raises(UsageLimitExceeded, match="no registered price") as info:
        await agent.run("go", limits=UsageLimits(cost_usd=100.0))
    assert info.value.cost_usd is None


async def test_S31_a_discarded_attempt_an_unpriced_model_answered_stops_the_retry_unsent(
    priced: str,
) -> None:
    # Issue 28: a failed attempt that reported usage from a model without a price makes the
    # run's cost unknown. The retry must not be sent as if nothing had been spent (its output
    # cap computed from $0): the cost limit can no longer be kept, so the run stops before it.
    class ReportsThenFails(ScriptedProvider):
        async def chat_stream(  # type: ignore[override]
            self, request: robota.ChatRequest, *, signal: object = None
        ) -> AsyncIterator[robota.StreamEvent]:
            first = not self.requests
            async for event in super().chat_stream(request, signal=signal):  # type: ignore[arg-type]
                yield event
            if first:
                raise robota.ProviderError("overloaded", status=503)

    draft = ScriptedTurn(text="draft", usage=_usage(1, 1), model="unpriced-snapshot")
    provider = ReportsThenFails([draft, _reply("final", 1, 1)])
    retry = robota.RetryPolicy(attempts=2, initial_delay=0.001, jitter=0.0)
    agent = robota.Agent(provider=provider, model=priced, retry=retry)
    with pytest.raises(UsageLimitExceeded, match="no registered price") as info:
        await agent.run("go", limits=UsageLimits(cost_usd=100.0))
    assert info.value.limit == "cost_usd"
    assert info.value.cost_usd is None
    assert len(provider.requests) == 1


class _Unreported(ScriptedProvider):
    """Answers as scripted, but reports no usage (a server without stream usage)."""

    async def chat_stream(  # type: ignore[override]
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[robota.StreamEvent]:
        async for event in super().chat_stream(request, signal=signal):
            if isinstance(event, robota.ResponseDone):
                yield robota.ResponseDone(model=event.model, usage=None)
            else:
                yield event


async def test_S31_responses_without_reported_usage_still_spend_the_limit() -> None:
    # S31: counts the adapter could not attest are recorded (estimated, partial), not dropped.
    # A provider that reports no usage used to add nothing: every call was capped at the whole
    # limit again, and a 60-token output limit let the run produce 300 tokens over 6 calls.
    words = " ".join(["word"] * 40)  # about 50 tokens a reply
    turns: list[robota.testing.TurnLike] = [
        ScriptedTurn(text=words, tool_calls=(("look", {}),)) for _ in range(5)
    ]

    @robota.tool
    def look() -> str:
        """Look."""
        return "seen"

    provider = _Unreported([*turns, words])
    agent = robota.Agent(provider=provider, model="m", tools=[look])
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go", limits=UsageLimits(output_tokens=60))
    assert info.value.limit == "output_tokens"
    caps = _caps(provider)
    assert caps[0] == 60
    assert len(caps) <= 2
    assert all(cap is not None and cap <= 10 for cap in caps[1:])
    assert info.value.usage.partial  # estimated, and said to be


async def test_S31_a_cap_limit_on_a_model_that_takes_no_output_cap_is_refused_at_start() -> None:
    # An output, total or cost limit is kept by lowering the request's max_output_tokens; a
    # model whose table states it does not honour that setting never receives the cap (the
    # adapter leaves it off the wire), so the reply would be unbounded. Refused when the run
    # starts, as a cost limit without a price is — never silently unenforced.
    from robota.core.providers import (
        ModelCapabilities,
        ProviderCapabilities,
        without_unsupported_settings,
    )

    table = ProviderCapabilities(default_model=ModelCapabilities(settings=frozenset({"seed"})))
    provider = ScriptedProvider(["ok", "ok"], capabilities=table)
    agent = robota.Agent(provider=provider, model="m")
    request = robota.ChatRequest(
        model="m", messages=(), settings=robota.ModelSettings(max_output_tokens=10)
    )
    assert without_unsupported_settings(provider, request).settings.max_output_tokens is None
    for limits in (UsageLimits(output_tokens=10), UsageLimits(total_tokens=100)):
        with pytest.raises(robota.ConfigurationError, match="max_output_tokens"):
            await agent.run("go", limits=limits)
    assert provider.requests == []
    # Limits that need no cap still run.
    assert (await agent.run("go", limits=UsageLimits(requests=1))).output == "ok"
