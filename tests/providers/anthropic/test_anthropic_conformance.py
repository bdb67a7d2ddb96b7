"""The whole provider conformance kit on ``AnthropicProvider`` over replayed Anthropic exchanges.

All eight scenarios of :func:`robota.testing.run_provider_conformance` run under the real
``anthropic`` SDK. Each scenario gets a replay server whose script answers exactly the calls the
scenario makes, in order: a JSON body for each ``chat()``, an SSE stream for each
``chat_stream()`` (an agent run streams). The answers are the real recordings in
``tests/providers/recordings/anthropic``; where a scenario needs a stream of a recorded JSON
answer (a streamed parallel call, a slow stream to abort) it is re-framed by
:func:`~providers.anthropic._helpers.stream_of` in Anthropic's documented stream format, and the
vendor failure is Anthropic's documented 529 ``overloaded_error`` body.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import pytest

from providers.anthropic._helpers import recorded, stream_of, tool
from providers.replay import Exchange, ReplayServer
from robota.core import ToolSpec
from robota.providers.anthropic import AnthropicProvider
from robota.testing import (
    CONFORMANCE_SCENARIOS,
    DEFAULT_OUTPUT_SCHEMA,
    ConformanceScenario,
    ConformanceTarget,
    run_provider_conformance,
)

Call = Literal["chat()", "chat_stream()"]


def _json(exchange: Exchange) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exchange.body)
    return body


def _text(body: Mapping[str, Any]) -> str:
    return "".join(b["text"] for b in body["content"] if b["type"] == "text")


def _ids(body: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(b["id"] for b in body["content"] if b["type"] == "tool_use")


@dataclass(frozen=True)
class Script:
    """One scenario's replay and what it makes known."""

    model: str
    calls: tuple[tuple[Call, Exchange], ...]
    expected_text: str | None = None
    expected_model: str | None = None
    expected_tool_call_ids: tuple[str, ...] | None = None
    expected_error_status: int | None = None
    expected_error_switchable: bool | None = None
    tools: tuple[ToolSpec, ...] | None = None
    tool_result: str = "Paris"
    output_schema: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_OUTPUT_SCHEMA)
    results_sent_in: tuple[int, ...] = ()


def _chat(exchange: Exchange) -> tuple[Call, Exchange]:
    return ("chat()", exchange)


def _stream(exchange: Exchange) -> tuple[Call, Exchange]:
    return ("chat_stream()", exchange)


def _overloaded() -> Exchange:
    """Anthropic's documented answer when it is overloaded: 529 ``overloaded_error``."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return Exchange.json(529, body)


AMOUNT = MappingProxyType(
    {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}
)


def scripts() -> dict[ConformanceScenario, Script]:
    instructions = recorded("test_anthropic_model_instructions")[0]
    streamed = recorded("test_request_stream_fallback_for_high_max_tokens")[0]
    call, answer = map(_json, recorded("test_anthropic_text_output_function"))
    parallel, parallel_answer = map(_json, recorded("test_multiple_parallel_tool_calls"))
    structured = recorded("test_anthropic_native_output_decimal_strict")[0]
    get_country = (tool("get_user_country"),)
    round_trip = (_stream(stream_of(call)), _stream(stream_of(answer)))
    return {
        "text": Script(
            "claude-3-opus-latest",
            (_chat(instructions),),
            expected_text="The capital of France is Paris.",
        ),
        "stream": Script(
            "claude-sonnet-4-5", (_stream(streamed), _stream(streamed)), expected_text="2"
        ),
        "tool_round_trip": Script(
            "claude-sonnet-4-5",
            round_trip * 2,  # direct, then an agent run
            expected_text=_text(answer),
            expected_tool_call_ids=_ids(call),
            tools=get_country,
            tool_result="Mexico",
            results_sent_in=(1, 3),
        ),
        "parallel_tool_calls": Script(
            "claude-haiku-4-5",
            (_stream(stream_of(parallel)), _stream(stream_of(parallel_answer))),
            expected_text=_text(parallel_answer),
            expected_tool_call_ids=_ids(parallel),
            tools=(tool("retrieve_entity_info", "name"),),
            results_sent_in=(1,),
        ),
        "structured_output": Script(
            "claude-sonnet-4-5",
            (_chat(structured), _stream(stream_of(_json(structured)))),
            output_schema=AMOUNT,
        ),
        "abort_mid_stream": Script(
            "claude-sonnet-4-5", (_stream(stream_of(answer, chunk_delay=0.1)),) * 3
        ),
        "error_mapping": Script(
            "claude-sonnet-4-5",
            (_chat(_overloaded()), _stream(_overloaded())),
            expected_error_status=529,
            expected_error_switchable=True,
        ),
        "usage_and_model": Script(
            "claude-3-opus-latest",
            (
                _stream(stream_of(_json(instructions))),
                _chat(instructions),
                _stream(stream_of(_json(instructions))),
            ),
            expected_model="claude-3-opus-20240229",
        ),
    }


def _results(body: Mapping[str, Any]) -> list[str]:
    return [
        block["tool_use_id"]
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.fixture
async def servers() -> AsyncIterator[list[ReplayServer]]:
    held: list[ReplayServer] = []
    try:
        yield held
    finally:
        while held:
            held.pop().stop()


async def test_anthropic_adapter_passes_the_conformance_kit(servers: list[ReplayServer]) -> None:
    table = scripts()

    async def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        while servers:
            servers.pop().stop()
        script = table[scenario]
        server = ReplayServer([exchange for _, exchange in script.calls]).start()
        servers.append(server)

        def verify() -> None:
            server.assert_all_served()
            for index, (sent, (call, _)) in enumerate(
                zip(server.requests, script.calls, strict=True)
            ):
                streamed = sent.json().get("stream") is True
                assert streamed == (call == "chat_stream()"), f"request #{index + 1}"
            for index in script.results_sent_in:
                ids = tuple(_results(server.requests[index].json()))
                assert ids == script.expected_tool_call_ids, f"request #{index + 1} (S36)"

        options: dict[str, Any] = {}
        if script.tools is not None:
            options["tools"] = script.tools
        return ConformanceTarget(
            AnthropicProvider(api_key="test", base_url=server.base_url, max_retries=0),
            script.model,
            expected_text=script.expected_text,
            expected_model=script.expected_model,
            expected_error_status=script.expected_error_status,
            expected_error_switchable=script.expected_error_switchable,
            expected_tool_call_ids=script.expected_tool_call_ids,
            tool_result=script.tool_result,
            output_schema=script.output_schema,
            verify=verify,
            **options,
        )

    report = await run_provider_conformance(factory, scenarios=CONFORMANCE_SCENARIOS)
    report.raise_for_failures()
    assert report.passed
    assert report.not_run == ()
    assert [r.status for r in report.results] == ["passed"] * len(CONFORMANCE_SCENARIOS)
    assert report.provider == "anthropic"
