"""robota.testing's provider conformance kit: every scenario passes a conformant provider and
fails, with a message naming the fault, a provider broken in that scenario's way."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypedDict

import pytest

import robota
import robota.testing
from robota.core.providers import (
    ChatRequest,
    ChatResponse,
    Provider,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    collect_stream,
)
from robota.testing import (
    CONFORMANCE_SCENARIOS,
    ConformanceReport,
    ConformanceScenario,
    ConformanceTarget,
    ScenarioResult,
    ScriptedProvider,
    ScriptedTurn,
    run_provider_conformance,
)

COUNTING = " ".join(str(n) for n in range(1, 120))


class Bounds(TypedDict):
    call_timeout: float
    abort_timeout: float
    settle_delay: float


FAST: Bounds = {"call_timeout": 2.0, "abort_timeout": 0.5, "settle_delay": 0.05}


class FakeSDKError(Exception):
    """Stands in for a vendor SDK's exception type."""


def _overloaded() -> robota.ProviderError:
    return robota.ProviderError("the model is overloaded", status=503, provider="scripted")


def conformant(scenario: ConformanceScenario) -> ConformanceTarget:
    """A ScriptedProvider scripted so that every scenario passes."""
    answer = "The capital of France is Paris."
    capital: list[tuple[str, Mapping[str, Any] | str]] = [("get_capital", {"country": "France"})]
    match scenario:
        case "text":
            return ConformanceTarget(ScriptedProvider([answer]), "m", expected_text=answer)
        case "stream":
            provider = ScriptedProvider([answer, answer], chunk_delay=0.001)
            return ConformanceTarget(provider, "m", expected_text=answer)
        case "tool_round_trip":
            provider = ScriptedProvider([capital, "It is Paris.", capital, "It is Paris."])
            return ConformanceTarget(
                provider, "m", expected_text="It is Paris.", expected_tool_call_ids=("call_0",)
            )
        case "parallel_tool_calls":
            both = [*capital, ("get_capital", {"country": "Japan"})]
            return ConformanceTarget(
                ScriptedProvider([both, "Paris and Tokyo."]),
                "m",
                tool_result="Paris",
                expected_tool_call_ids=("call_0", "call_1"),
            )
        case "structured_output":
            reply = '{"country": "France", "capital": "Paris"}'
            return ConformanceTarget(ScriptedProvider([reply, reply]), "m")
        case "abort_mid_stream":
            # Three aborted streams, then two calls with an already-aborted signal.
            return ConformanceTarget(ScriptedProvider([COUNTING] * 5, chunk_delay=0.01), "m")
        case "error_mapping":
            return ConformanceTarget(
                ScriptedProvider([_overloaded(), _overloaded()]),
                "m",
                expected_error_status=503,
                expected_error_switchable=True,
            )
        case "usage_and_model":
            turn = ScriptedTurn(
                text="Paris.",
                usage=robota.Usage.from_counts(prompt=12, completion=3, cache_read=4),
                model="m-2025-01",
            )
            return ConformanceTarget(ScriptedProvider([turn] * 3), "m", expected_model="m-2025-01")


async def test_a_conformant_provider_passes_every_scenario() -> None:
    report = await run_provider_conformance(conformant, **FAST)
    assert [r.status for r in report.results] == ["passed"] * len(CONFORMANCE_SCENARIOS), str(
        report
    )
    assert report.passed
    assert report.not_run == ()
    assert report.provider == "scripted"
    report.raise_for_failures()


async def test_scenarios_not_requested_are_reported_not_run_never_passed() -> None:
    report = await run_provider_conformance(conformant, scenarios=["text", "stream"], **FAST)
    assert report.result("text").status == "passed"
    assert report.not_run == tuple(s for s in CONFORMANCE_SCENARIOS if s not in ("text", "stream"))
    assert report.result("error_mapping") == ScenarioResult(
        "error_mapping", "not_run", "not requested"
    )
    assert report.passed
    assert "error_mapping: not_run" in str(report)


async def test_the_factory_may_be_async_and_every_provider_is_closed() -> None:
    built: list[ScriptedProvider] = []

    async def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        target = conformant(scenario)
        assert isinstance(target.provider, ScriptedProvider)
        built.append(target.provider)
        return target

    report = await run_provider_conformance(factory, **FAST)
    assert report.passed, str(report)
    assert len(built) == len(CONFORMANCE_SCENARIOS)
    assert all(provider.closed for provider in built)
    assert all(provider.remaining == 0 for provider in built)


# ---------------------------------------------------------------------------- broken providers


class Transforming(Provider):
    """Wraps a provider and rewrites its stream with ``edit`` (which may drop or add events)."""

    def __init__(
        self,
        inner: Provider,
        edit: Callable[[StreamEvent], list[StreamEvent]],
        *,
        strip_aborted_signal: bool = False,
    ) -> None:
        self.inner = inner
        self.edit = edit
        self.strip_aborted_signal = strip_aborted_signal

    @property
    def name(self) -> str:
        return self.inner.name

    async def chat(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> ChatResponse:
        return await collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        if self.strip_aborted_signal and signal is not None and signal.aborted:
            signal = None  # the fault under test: a call sent despite an aborted signal
        async for event in self.inner.chat_stream(request, signal=signal):
            for edited in self.edit(event):
                yield edited


class Hand(Provider):
    """A provider whose stream is the given async generator function."""

    def __init__(
        self, stream: Callable[[ChatRequest, robota.AbortSignal | None], AsyncIterator[StreamEvent]]
    ) -> None:
        self.stream = stream

    @property
    def name(self) -> str:
        return "hand"

    async def chat(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> ChatResponse:
        return await collect_stream(self.chat_stream(request, signal=signal))

    def chat_stream(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        return self.stream(request, signal)


def rewrite_ids(event: StreamEvent) -> list[StreamEvent]:
    if isinstance(event, ToolCallReady):
        return [ToolCallReady(dataclasses.replace(event.call, id=f"robota-{event.call.id}"))]
    return [event]


def strip_model(event: StreamEvent) -> list[StreamEvent]:
    if isinstance(event, ResponseDone):
        return [dataclasses.replace(event, model=None)]
    return [event]


def after_done(event: StreamEvent) -> list[StreamEvent]:
    return [event, TextDelta("late")] if isinstance(event, ResponseDone) else [event]


def double_done(event: StreamEvent) -> list[StreamEvent]:
    return [event, event] if isinstance(event, ResponseDone) else [event]


def no_done(event: StreamEvent) -> list[StreamEvent]:
    return [] if isinstance(event, ResponseDone) else [event]


async def ignores_generator_exit(
    request: ChatRequest, signal: robota.AbortSignal | None
) -> AsyncIterator[StreamEvent]:
    try:
        yield TextDelta("Paris")
        yield ResponseDone(model="m", usage=robota.Usage.from_counts(prompt=1, completion=1))
    except GeneratorExit:
        yield TextDelta("still talking")  # the fault: a yield while being closed


async def ignores_signal(
    request: ChatRequest, signal: robota.AbortSignal | None
) -> AsyncIterator[StreamEvent]:
    for word in COUNTING.split():
        await asyncio.sleep(0.01)
        yield TextDelta(word + " ")
    yield ResponseDone(model="m")


async def ignores_signal_while_the_loop_is_busy(
    request: ChatRequest, signal: robota.AbortSignal | None
) -> AsyncIterator[StreamEvent]:
    # After the abort, the next event comes only after the kit's abort_timeout has passed, with no
    # chance for a timeout to fire first (a loaded machine: the read returns late, not never).
    yield TextDelta("1 ")
    while True:
        time.sleep(0.6)  # noqa: ASYNC251 - the point: a busy loop; FAST abort_timeout is 0.5 s
        yield TextDelta("2 ")


async def reports_abort_as_failure(
    request: ChatRequest, signal: robota.AbortSignal | None
) -> AsyncIterator[StreamEvent]:
    for word in COUNTING.split():
        await asyncio.sleep(0.01)
        if signal is not None and signal.aborted:
            raise robota.ProviderError("request aborted", provider="hand")
        yield TextDelta(word + " ")
    yield ResponseDone(model="m")


async def swallows_cancellation(
    request: ChatRequest, signal: robota.AbortSignal | None
) -> AsyncIterator[StreamEvent]:
    for word in COUNTING.split():
        if signal is not None:
            signal.throw_if_aborted()
        with contextlib.suppress(asyncio.CancelledError):  # the fault: cancellation swallowed
            await asyncio.sleep(0.01)
        yield TextDelta(word + " ")
    yield ResponseDone(model="m")


async def hangs(
    request: ChatRequest, signal: robota.AbortSignal | None
) -> AsyncIterator[StreamEvent]:
    await asyncio.sleep(30)
    yield ResponseDone()


def target(provider: Provider, **fields: Any) -> Callable[[ConformanceScenario], ConformanceTarget]:
    return lambda scenario: ConformanceTarget(provider, "m", **fields)


BROKEN: list[
    tuple[ConformanceScenario, Callable[[ConformanceScenario], ConformanceTarget], str]
] = [
    ("text", target(ScriptedProvider([""])), "chat() produced no text"),
    ("text", target(ScriptedProvider(["Lyon"]), expected_text="Paris"), "expects exactly 'Paris'"),
    (
        "text",
        target(ScriptedProvider([[("get_capital", {"country": "France"})]])),
        "returned tool calls",
    ),
    (
        "stream",
        target(Transforming(ScriptedProvider(["Paris"]), after_done)),
        "yielded TextDelta(text='late') after its ResponseDone",
    ),
    (
        "stream",
        target(Transforming(ScriptedProvider(["Paris"]), double_done)),
        "after its ResponseDone; ResponseDone must be the last event, exactly once",
    ),
    (
        "stream",
        target(Transforming(ScriptedProvider(["Paris"]), no_done)),
        "ended without a ResponseDone",
    ),
    ("stream", target(Hand(ignores_generator_exit)), "aclose() of a second chat_stream()"),
    (
        "tool_round_trip",
        target(
            Transforming(ScriptedProvider([[("get_capital", {"country": "France"})]]), rewrite_ids),
            expected_tool_call_ids=("call_0",),
        ),
        "yielded tool-call ids ('robota-call_0',), but the target expects ('call_0',)",
    ),
    (
        "tool_round_trip",
        target(ScriptedProvider([[("get_capital", "{not json")]])),
        "which are not JSON text",
    ),
    (
        "tool_round_trip",
        target(ScriptedProvider([[("get_capital", "[1, 2]")]])),
        "which are not a JSON object",
    ),
    (
        "tool_round_trip",
        target(ScriptedProvider([[("get_weather", {"city": "Paris"})]])),
        "names 'get_weather', not an offered tool ['get_capital']",
    ),
    (
        "tool_round_trip",
        target(ScriptedProvider(["I will not use tools."])),
        "yielded 0 ToolCallReady (at least 1 expected",
    ),
    (
        "tool_round_trip",
        target(
            ScriptedProvider(
                [
                    [("get_capital", {"country": "France"})],
                    "Paris.",
                    [("get_capital", {"country": "France"})],
                    "Paris.",
                ]
            ),
            expected_text="It is Paris.",
        ),
        "produced 'Paris.', but the target expects exactly 'It is Paris.'",
    ),
    (
        "tool_round_trip",
        target(
            ScriptedProvider(
                [
                    [("get_capital", {"country": "France"})],
                    "Paris.",
                    [("get_capital", {"population": 3})],
                    "Paris.",
                ]
            )
        ),
        "Agent.run() with tools: no tool body ran",
    ),
    (
        "parallel_tool_calls",
        target(ScriptedProvider([[("get_capital", {"country": "France"})]])),
        "yielded 1 ToolCallReady (at least 2 expected",
    ),
    (
        "parallel_tool_calls",
        target(
            Transforming(
                ScriptedProvider(
                    [
                        [
                            ("get_capital", {"country": "France"}),
                            ("get_capital", {"country": "Japan"}),
                        ]
                    ]
                ),
                rewrite_ids,
            ),
            expected_tool_call_ids=("call_0", "call_1"),
        ),
        "pass the vendor's ids through untouched (S36)",
    ),
    (
        "structured_output",
        target(ScriptedProvider(['{"country": "France"}'])),
        "which breaks the schema",
    ),
    ("structured_output", target(ScriptedProvider(["Paris!"])), "which is not JSON"),
    (
        "structured_output",
        target(ScriptedProvider(['{"country": "France", "capital": "Paris"}', "Paris"])),
        "Agent.run(output=<schema>) raised robota.StructuredOutputError",
    ),
    (
        "abort_mid_stream",
        target(Hand(ignores_signal)),
        "chat_stream() aborted after its first text delta did not stop within 0.5 s",
    ),
    (
        "abort_mid_stream",
        target(Hand(ignores_signal_while_the_loop_is_busy)),
        "chat_stream() aborted after its first text delta did not stop within 0.5 s",
    ),
    (
        "abort_mid_stream",
        target(Hand(reports_abort_as_failure)),
        "raised robota.ProviderError: request aborted after the abort; an abort must surface as "
        "AbortError",
    ),
    (
        "abort_mid_stream",
        target(Hand(swallows_cancellation)),
        "instead of propagating CancelledError",
    ),
    (
        "abort_mid_stream",
        target(
            Transforming(
                ScriptedProvider([COUNTING] * 5, chunk_delay=0.01),
                lambda e: [e],
                strip_aborted_signal=True,
            )
        ),
        "chat_stream() with an already-aborted signal yielded TextDelta",
    ),
    (
        "abort_mid_stream",
        target(ScriptedProvider([COUNTING] * 5)),
        "every event was ready at once",
    ),
    (
        "error_mapping",
        target(ScriptedProvider([FakeSDKError("HTTP 503")])),
        f"chat() raised {__name__}.FakeSDKError: HTTP 503, not a robota.ProviderError",
    ),
    (
        "error_mapping",
        target(ScriptedProvider([_overloaded(), FakeSDKError("HTTP 503")])),
        f"chat_stream() raised {__name__}.FakeSDKError",
    ),
    (
        "error_mapping",
        target(ScriptedProvider([_overloaded()]), expected_error_status=429),
        "with status=503, expected 429",
    ),
    (
        "error_mapping",
        target(ScriptedProvider([_overloaded()]), expected_error_switchable=False),
        "with switchable=True, expected False (S42)",
    ),
    (
        "error_mapping",
        target(ScriptedProvider([robota.ProviderError("overloaded", status=503)])),
        "with provider=None; set it to the provider's name 'scripted'",
    ),
    (
        "error_mapping",
        target(ScriptedProvider(["all good"])),
        "chat() succeeded with ChatResponse(",
    ),
    (
        "usage_and_model",
        target(ScriptedProvider([ScriptedTurn(text="Paris", usage=robota.Usage(10, 5, 99))])),
        "total_tokens is not prompt + completion, yet the usage is not marked partial",
    ),
    (
        "usage_and_model",
        target(ScriptedProvider([ScriptedTurn(text="Paris", usage=robota.Usage(0, 0, 0))])),
        "cannot cost zero tokens",
    ),
    (
        "usage_and_model",
        target(ScriptedProvider([ScriptedTurn(text="Paris", usage=robota.Usage(3, 2, 5, 4))])),
        "the cache read is part of prompt_tokens",
    ),
    (
        "usage_and_model",
        target(Transforming(ScriptedProvider(["Paris"]), strip_model)),
        "chat_stream()'s ResponseDone reported model None",
    ),
    (
        "usage_and_model",
        target(ScriptedProvider(["Paris"]), expected_model="m-2025"),
        "reported model 'm', but the target expects 'm-2025'",
    ),
]


@pytest.mark.parametrize(
    ("scenario", "factory", "fragment"),
    BROKEN,
    ids=[f"{scenario}-{i}" for i, (scenario, _, _) in enumerate(BROKEN)],
)
async def test_a_broken_provider_fails_the_scenario_with_a_precise_message(
    scenario: ConformanceScenario,
    factory: Callable[[ConformanceScenario], ConformanceTarget],
    fragment: str,
) -> None:
    report = await run_provider_conformance(factory, scenarios=[scenario], **FAST)
    result = report.result(scenario)
    assert result.status == "failed", str(report)
    assert fragment in result.message
    assert not report.passed
    with pytest.raises(AssertionError, match=f"{scenario}: failed"):
        report.raise_for_failures()


def test_every_scenario_has_a_broken_provider_proving_it_can_fail() -> None:
    assert {scenario for scenario, _, _ in BROKEN} == set(CONFORMANCE_SCENARIOS)


async def test_partial_usage_is_accepted_as_reported() -> None:
    turn = ScriptedTurn(text="Paris", usage=robota.Usage.from_counts(prompt=10, completion=None))
    report = await run_provider_conformance(
        target(ScriptedProvider([turn] * 3)), scenarios=["usage_and_model"], **FAST
    )
    assert report.passed, str(report)


async def test_a_hanging_provider_fails_on_the_call_timeout_instead_of_hanging() -> None:
    report = await run_provider_conformance(
        target(Hand(hangs)), scenarios=["text"], call_timeout=0.1
    )
    assert "chat() did not finish within 0.1 s" in report.result("text").message


# ------------------------------------------------------------------------- factory and report


async def test_raise_for_failures_names_every_failed_scenario() -> None:
    def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        if scenario == "text":
            return ConformanceTarget(ScriptedProvider([""]), "m")
        if scenario == "error_mapping":
            return ConformanceTarget(ScriptedProvider([FakeSDKError("boom")]), "m")
        return conformant(scenario)

    report = await run_provider_conformance(
        factory, scenarios=["text", "stream", "error_mapping"], **FAST
    )
    with pytest.raises(AssertionError) as caught:
        report.raise_for_failures()
    message = str(caught.value)
    assert "text: failed — chat() produced no text" in message
    assert f"error_mapping: failed — chat() raised {__name__}.FakeSDKError: boom" in message
    assert "stream" not in message.split("(not run", maxsplit=1)[0]
    assert "(not run: tool_round_trip, parallel_tool_calls" in message
    assert [f.scenario for f in report.failures] == ["text", "error_mapping"]


async def test_a_factory_failure_fails_only_its_scenario() -> None:
    def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        if scenario == "stream":
            raise RuntimeError("replay server not started")
        return conformant(scenario)

    report = await run_provider_conformance(factory, scenarios=["text", "stream"], **FAST)
    assert report.result("text").status == "passed"
    assert report.result("stream").message == (
        "the factory raised RuntimeError: replay server not started"
    )


async def test_a_factory_returning_something_else_fails_the_scenario() -> None:
    report = await run_provider_conformance(
        lambda scenario: ScriptedProvider(["x"]),  # type: ignore[arg-type,return-value]
        scenarios=["text"],
    )
    assert "not a ConformanceTarget" in report.result("text").message


async def test_verify_runs_after_the_checks_and_can_fail_the_scenario() -> None:
    provider = ScriptedProvider(["Paris"])
    seen: list[int] = []

    async def verify() -> None:
        seen.append(len(provider.requests))
        raise AssertionError("the replay server saw an unexpected request")

    report = await run_provider_conformance(
        target(provider, verify=verify), scenarios=["text"], **FAST
    )
    assert seen == [1]
    assert report.result("text").message == (
        "the target's verify() failed: AssertionError: the replay server saw an unexpected request"
    )
    assert provider.closed


async def test_a_provider_whose_aclose_raises_fails_the_scenario() -> None:
    class Leaky(ScriptedProvider):
        async def aclose(self) -> None:
            raise FakeSDKError("connection pool already closed")

    report = await run_provider_conformance(target(Leaky(["Paris"])), scenarios=["text"], **FAST)
    assert report.result("text").message == (
        f"provider.aclose() raised {__name__}.FakeSDKError: connection pool already closed"
    )


@pytest.mark.parametrize(
    ("scenarios", "fragment"),
    [
        ([], "no conformance scenario requested"),
        (["txt"], "unknown conformance scenarios ['txt']"),
        ("text", "not the string 'text'"),
    ],
)
async def test_misused_scenarios_are_refused(scenarios: Any, fragment: str) -> None:
    with pytest.raises(robota.ConfigurationError, match=re.escape(fragment)):
        await run_provider_conformance(conformant, scenarios=scenarios)


async def test_non_positive_time_bounds_are_refused() -> None:
    with pytest.raises(robota.ConfigurationError, match="abort_timeout must be a positive"):
        await run_provider_conformance(conformant, abort_timeout=0)


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"model": ""}, "model must be a non-empty string"),
        ({"tools": ()}, "tools must be a non-empty tuple of ToolSpec"),
        ({"tool_choice": "none"}, "tool_choice must be 'auto' or 'required'"),
        ({"output_schema": {"type": "string"}}, "output_schema must be an object schema"),
        ({"expected_tool_call_ids": ["call_0"]}, "expected_tool_call_ids must be a tuple"),
    ],
)
def test_a_target_that_cannot_work_is_refused(fields: dict[str, Any], fragment: str) -> None:
    arguments: dict[str, Any] = {"provider": ScriptedProvider([]), "model": "m", **fields}
    with pytest.raises(robota.ConfigurationError, match=fragment):
        ConformanceTarget(**arguments)


async def test_custom_tools_and_schema_are_offered_and_used() -> None:
    weather = robota.ToolSpec(
        "get_weather",
        "Current weather.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    providers: list[ScriptedProvider] = []

    def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        call = [("get_weather", {"city": "Oslo"})]
        turns: list[Any] = (
            [call, "Sunny.", call, "Sunny."]
            if scenario == "tool_round_trip"
            else ['{"ok": true}'] * 2
        )
        providers.append(ScriptedProvider(turns))
        return ConformanceTarget(
            providers[-1], "m", tools=(weather,), tool_result="sunny", output_schema=schema
        )

    report = await run_provider_conformance(
        factory, scenarios=["tool_round_trip", "structured_output"], **FAST
    )
    assert report.passed, str(report)
    tool_requests, structured_requests = providers[0].requests, providers[1].requests
    assert tool_requests[0].tools == (weather,)
    assert [m.content for m in tool_requests[1].messages if m.kind == "tool"] == ["sunny"]
    fmt = structured_requests[0].response_format
    assert fmt is not None
    assert (fmt.type, fmt.schema) == ("json_schema", schema)


def test_conformance_names_are_exported() -> None:
    assert {
        "CONFORMANCE_SCENARIOS",
        "ConformanceReport",
        "ConformanceScenario",
        "ConformanceTarget",
        "DEFAULT_OUTPUT_SCHEMA",
        "DEFAULT_TOOL",
        "ProviderFactory",
        "ScenarioResult",
        "ScenarioStatus",
        "run_provider_conformance",
    } <= set(robota.testing.__all__)
    assert isinstance(ConformanceReport((), None), ConformanceReport)
