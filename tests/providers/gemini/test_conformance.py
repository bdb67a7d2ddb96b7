"""The whole provider conformance kit, run on GeminiProvider over replayed Gemini exchanges.

All eight scenarios of :func:`robota.testing.run_provider_conformance` under the real
``google-genai`` SDK. Each scenario's :class:`~providers.replay.ReplayServer` answers exactly the
calls the kit documents for it, in order: a JSON body for each ``chat()``, an SSE stream for each
``chat_stream()`` (an agent run streams).

The answers are the real recordings in ``tests/providers/recordings/gemini`` wherever one has the
needed shape. Where none has, the exchange is written in Gemini's documented wire format:
:func:`gemini_stream` re-frames a complete recorded ``GenerateContentResponse`` as the stream
``:streamGenerateContent?alt=sse`` sends (``data:`` lines separated by CRLF CRLF, every chunk a
whole ``GenerateContentResponse``, text cut into pieces, a function call whole in one chunk, the
finish reason on the last chunk), and :func:`_unavailable` is Google's documented 503 error body.

The tool scenarios use Gemini's sharpest edge, calls *without* ids (S36): the recorded
``get_capital`` call (gemini-2.0-flash) and three parallel ``generate_topic`` calls
(gemini-3-flash-preview) come back with the adapter's positional ids, and the results must go
back as ``functionResponse`` parts in call order, named after their calls, without ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import pytest

from providers.gemini._replay import body, recorded
from providers.replay import Exchange, ReplayServer
from robota.core import Provider, ToolSpec
from robota.providers.gemini import GeminiProvider
from robota.testing import (
    CONFORMANCE_SCENARIOS,
    DEFAULT_OUTPUT_SCHEMA,
    DEFAULT_TOOL,
    ConformanceScenario,
    ConformanceTarget,
    run_provider_conformance,
)

Call = Literal["chat()", "chat_stream()"]


def _words(text: str) -> list[str]:
    words: list[str] = re.findall(r"\s*\S+|\s+$", text)
    return words


def gemini_stream(response: Mapping[str, Any], *, chunk_delay: float = 0.0) -> Exchange:
    """A complete ``GenerateContentResponse`` as the SSE stream Gemini documents for it."""
    candidate = response["candidates"][0]
    head = {k: v for k, v in response.items() if k != "candidates"}
    pieces: list[dict[str, Any]] = []
    for part in candidate["content"]["parts"]:
        if "text" in part:
            words = _words(part["text"]) or [""]
            pieces.extend({"text": word} for word in words[:-1])
            last = {"text": words[-1]}
            if "thoughtSignature" in part:
                last["thoughtSignature"] = part["thoughtSignature"]
            pieces.append(last)
        else:
            pieces.append(dict(part))  # a function call is whole in one chunk
    chunks = []
    for index, piece in enumerate(pieces):
        step: dict[str, Any] = {"content": {"parts": [piece], "role": "model"}, "index": 0}
        if index == len(pieces) - 1:
            step["finishReason"] = candidate["finishReason"]
        chunks.append({"candidates": [step], **head})
    text = "".join(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks)
    return Exchange.sse(text, chunk_delay=chunk_delay)


def _unavailable() -> Exchange:
    """Google's documented answer when a model is overloaded: 503 ``UNAVAILABLE``."""
    error = {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
    return Exchange.json(503, {"error": error})


def _strings(*names: str) -> Mapping[str, Any]:
    properties = {name: {"type": "string"} for name in names}
    return MappingProxyType({"type": "object", "properties": properties, "required": list(names)})


CITY_LOCATION = _strings("city", "country")
GENERATE_TOPIC = ToolSpec(
    "generate_topic", "Generate a joke topic.", {"type": "object", "properties": {}}
)


@dataclass(frozen=True)
class Script:
    """One scenario's replay: its exchanges, each with the call it answers, and what they tell."""

    model: str
    calls: tuple[tuple[Call, Exchange], ...]
    expected_text: str | None = None
    expected_model: str | None = None
    expected_tool_call_ids: tuple[str, ...] | None = None
    expected_error_status: int | None = None
    expected_error_switchable: bool | None = None
    tools: tuple[ToolSpec, ...] = (DEFAULT_TOOL,)
    tool_choice: Literal["auto", "required"] = "auto"
    tool_result: str = "Paris"
    output_schema: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_OUTPUT_SCHEMA)
    results_sent_in: tuple[int, ...] = ()
    """Requests (by index) that must carry the tool results back, one per expected call."""


def _chat(exchange: Exchange) -> tuple[Call, Exchange]:
    return ("chat()", exchange)


def _stream(exchange: Exchange) -> tuple[Call, Exchange]:
    return ("chat_stream()", exchange)


def scripts() -> dict[ConformanceScenario, Script]:
    """Gemini's scripts, from ``gemini/`` recordings."""
    instructions = recorded("test_google_model_instructions")[0]
    streamed = recorded("test_google_model_stream")[0]
    call_capital, _, temperature_answer = recorded("test_google_model_iter_stream")
    three_calls = body(recorded("test_google_instructions_only_with_tool_calls")[0])
    structured = recorded("test_google_native_output")[0]
    thinking = recorded("test_google_model")[0]
    capital = "The capital of France is Paris.\n"
    return {
        "text": Script("gemini-2.0-flash", (_chat(instructions),), expected_text=capital),
        "stream": Script(
            "gemini-2.0-flash-exp", (_stream(streamed), _stream(streamed)), expected_text=capital
        ),
        "tool_round_trip": Script(
            "gemini-2.0-flash",
            (_stream(call_capital), _stream(temperature_answer)) * 2,  # direct, then an agent run
            expected_text="The temperature in Paris is 30°C.\n",
            expected_tool_call_ids=("gemini-call-0",),
            results_sent_in=(1, 3),
        ),
        "parallel_tool_calls": Script(
            "gemini-3-flash-preview",
            (_stream(gemini_stream(three_calls)), _stream(streamed)),
            expected_text=capital,
            expected_tool_call_ids=("gemini-call-0", "gemini-call-1", "gemini-call-2"),
            tools=(GENERATE_TOPIC,),
            tool_choice="required",
            tool_result="cars",
            results_sent_in=(1,),
        ),
        "structured_output": Script(
            "gemini-2.0-flash",
            (_chat(structured), _stream(gemini_stream(body(structured)))),
            output_schema=CITY_LOCATION,
        ),
        "abort_mid_stream": Script(
            "gemini-2.0-flash",
            (_stream(Exchange.sse(streamed.body.decode(), chunk_delay=0.1)),) * 3,
        ),
        "error_mapping": Script(
            "gemini-2.5-flash",
            (_chat(_unavailable()), _stream(_unavailable())),
            expected_error_status=503,
            expected_error_switchable=True,
        ),
        "usage_and_model": Script(
            "gemini-2.5-flash",
            (
                _stream(gemini_stream(body(thinking))),
                _chat(thinking),
                _stream(gemini_stream(body(thinking))),
            ),
            expected_model="gemini-2.5-flash",
        ),
    }


class Replays:
    """The replay servers of one conformance run, released scenario by scenario."""

    def __init__(self) -> None:
        self._servers: list[ReplayServer] = []

    def serve(self, exchanges: Sequence[Exchange]) -> ReplayServer:
        server = ReplayServer(exchanges)
        self._servers.append(server)
        return server.start()

    def release(self) -> None:
        while self._servers:
            self._servers.pop().stop()


@pytest.fixture
async def replays() -> AsyncIterator[Replays]:
    held = Replays()
    try:
        yield held
    finally:
        held.release()


def _results(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    last = payload["contents"][-1]
    return [part["functionResponse"] for part in last["parts"] if "functionResponse" in part]


def _verify(server: ReplayServer, script: Script) -> Callable[[], None]:
    def verify() -> None:
        server.assert_all_served()
        for index, (request, (call, _)) in enumerate(
            zip(server.requests, script.calls, strict=True)
        ):
            streamed = ":streamGenerateContent" in request.path
            assert streamed == (call == "chat_stream()"), (
                f"request #{index + 1} streamed={streamed}, but its exchange answers {call}"
            )
        for index in script.results_sent_in:
            sent = _results(server.requests[index].json())
            expected = script.expected_tool_call_ids or ()
            assert len(sent) == len(expected), f"request #{index + 1} sent {sent}"
            # S36: Gemini gave no ids, so none go back; results follow call order, by name.
            assert all("id" not in result for result in sent), sent
            assert {result["name"] for result in sent} <= {tool.name for tool in script.tools}

    return verify


async def test_gemini_adapter_passes_the_conformance_kit(replays: Replays) -> None:
    table = scripts()

    async def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        replays.release()  # the previous scenario is over
        script = table[scenario]
        server = replays.serve([exchange for _, exchange in script.calls])
        provider: Provider = GeminiProvider(
            api_key="test", http_options={"base_url": server.base_url + "/"}
        )
        return ConformanceTarget(
            provider,
            script.model,
            expected_text=script.expected_text,
            expected_model=script.expected_model,
            expected_error_status=script.expected_error_status,
            expected_error_switchable=script.expected_error_switchable,
            expected_tool_call_ids=script.expected_tool_call_ids,
            tools=script.tools,
            tool_choice=script.tool_choice,
            tool_result=script.tool_result,
            output_schema=script.output_schema,
            verify=_verify(server, script),
        )

    report = await run_provider_conformance(factory, scenarios=CONFORMANCE_SCENARIOS)
    report.raise_for_failures()
    assert report.passed
    assert report.not_run == ()
    assert [r.status for r in report.results] == ["passed"] * len(CONFORMANCE_SCENARIOS)
    assert report.provider == "gemini"
