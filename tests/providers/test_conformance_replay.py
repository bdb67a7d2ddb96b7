"""The whole provider conformance kit, run on OpenAI's adapters over replayed vendor exchanges.

Each adapter — ``OpenAIProvider`` on the Responses API, ``OpenAIProvider`` on Chat Completions and
``OpenAICompatibleProvider`` — runs all eight scenarios of :func:`robota.testing.
run_provider_conformance` under the real ``openai`` SDK. For every scenario the factory starts a
:class:`~providers.replay.ReplayServer` whose script answers exactly the calls that scenario makes,
in the order the kit documents them: a JSON body for each ``chat()``, an SSE stream for each
``chat_stream()`` (an agent run streams). Calls made with an already-aborted signal never reach the
transport, so they have no exchange.

The answers are the real recordings in ``tests/providers/recordings`` wherever one has the shape a
scenario needs. Where none has — a streamed *parallel* tool call, a streamed reply from the model a
recorded JSON answer came from, a slow stream to abort, a vendor failure — the exchange is written
in the vendor's documented wire format: :func:`responses_stream` and :func:`chat_stream` re-frame a
complete recorded response as the stream OpenAI documents for it, and :func:`_overloaded` is
OpenAI's documented error body. The targets state what the replay makes known (exact text,
answering model, call ids, error status and verdict), so the kit checks exact values; each
target's ``verify`` also checks that the script was served exactly, that every request was
streamed or not as its exchange expects, and that tool results went back linked by the vendor's
call ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import httpx2
import pytest

from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.core import Provider, ToolSpec
from robota.providers.openai import OpenAIProvider
from robota.providers.openai_compatible import OpenAICompatibleProvider
from robota.testing import (
    CONFORMANCE_SCENARIOS,
    DEFAULT_OUTPUT_SCHEMA,
    DEFAULT_TOOL,
    ConformanceReport,
    ConformanceScenario,
    ConformanceTarget,
    run_provider_conformance,
)

RESPONSES = "openai-responses"
CHAT = "openai-chat"

Call = Literal["chat()", "chat_stream()"]
"""Which provider call an exchange answers: a complete request or a streamed one."""


def _recorded(vendor: str, name: str) -> list[Exchange]:
    return load_cassette(cassette_path(vendor, name))


def _json(exchange: Exchange) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exchange.body)
    return body


# ------------------------------------------------------------------ documented wire formats


def _words(text: str) -> list[str]:
    """``text`` cut the way a model streams it: each word with the whitespace before it."""
    words: list[str] = re.findall(r"\s*\S+|\s+$", text)
    return words


def _pieces(arguments: str, size: int = 8) -> list[str]:
    """Tool-call arguments cut into fragments (a JSON string split anywhere, as vendors do)."""
    return [arguments[start : start + size] for start in range(0, len(arguments), size)]


def responses_stream(response: Mapping[str, Any], *, chunk_delay: float = 0.0) -> Exchange:
    """A complete Responses body as the stream OpenAI documents for it (``event:`` + ``data:``).

    ``response.created`` (the response in progress, no output yet); then, per output item,
    ``response.output_item.added`` (the item without its content), its pieces —
    ``response.function_call_arguments.delta`` fragments keyed by ``item_id`` or one
    ``response.output_text.delta`` per word — and ``response.output_item.done`` with the whole
    item; finally ``response.completed`` carrying the full response, usage included.
    """
    events: list[str] = []

    def emit(kind: str, **fields: Any) -> None:
        data = {"type": kind, "sequence_number": len(events), **fields}
        events.append(f"event: {kind}\ndata: {json.dumps(data)}\n\n")

    emit(
        "response.created",
        response={**response, "status": "in_progress", "output": [], "usage": None},
    )
    for index, item in enumerate(response["output"]):
        if item["type"] == "function_call":
            started = {**item, "arguments": "", "status": "in_progress"}
            emit("response.output_item.added", output_index=index, item=started)
            for piece in _pieces(item["arguments"]):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=piece,
                )
        elif item["type"] == "message":
            started = {**item, "content": [], "status": "in_progress"}
            emit("response.output_item.added", output_index=index, item=started)
            for part_index, part in enumerate(item["content"]):
                for word in _words(part.get("text", "")):
                    emit(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=part_index,
                        delta=word,
                        logprobs=[],
                    )
        else:
            emit("response.output_item.added", output_index=index, item=item)
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=dict(response))
    return Exchange.sse("".join(events), chunk_delay=chunk_delay)


def chat_stream(completion: Mapping[str, Any]) -> Exchange:
    """A complete ``chat.completion`` body as the stream OpenAI documents for it (``data:``).

    A first chunk with the role, one content delta per word, then per tool call a fragment with
    its ``index``, ``id`` and name followed by argument fragments keyed by that ``index`` only; a
    chunk with the finish reason; the usage on a chunk with ``choices: []`` (what
    ``stream_options.include_usage`` asks for); ``data: [DONE]``.
    """
    head = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
    }
    choice = completion["choices"][0]
    message = choice["message"]
    content = message.get("content")

    def chunk(delta: Mapping[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        step = {"index": 0, "delta": dict(delta), "finish_reason": finish_reason}
        return {**head, "choices": [step], "usage": None}

    chunks = [chunk({"role": "assistant", "content": "" if content else None})]
    chunks.extend(chunk({"content": word}) for word in _words(content or ""))
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call["function"]
        named = {"index": index, "id": call["id"], "type": "function"}
        chunks.append(
            chunk(
                {"tool_calls": [{**named, "function": {"name": function["name"], "arguments": ""}}]}
            )
        )
        chunks.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _pieces(function["arguments"])
        )
    chunks.append(chunk({}, choice["finish_reason"]))
    chunks.append({**head, "choices": [], "usage": completion["usage"]})
    text = "".join(f"data: {json.dumps(item)}\n\n" for item in chunks) + "data: [DONE]\n\n"
    return Exchange.sse(text)


def _overloaded() -> Exchange:
    """OpenAI's documented answer when it is overloaded: 503 with its JSON error object."""
    error = {
        "message": "The engine is currently overloaded, please try again later.",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    return Exchange.json(503, {"error": error})


# ---------------------------------------------------------------------------- scenario scripts


def _strings(*names: str) -> Mapping[str, Any]:
    """An object schema whose properties are all required strings."""
    properties = {name: {"type": "string"} for name in names}
    return MappingProxyType({"type": "object", "properties": properties, "required": list(names)})


CITY_LOCATION = _strings("city", "country")
"""The schema the structured-output recordings answered: ``{"city": ..., "country": ...}``."""

GET_LOCATION = ToolSpec("get_location", "Where a place is.", _strings("loc_name"))
GET_WEATHER = ToolSpec("get_weather", "Get the current weather for a city.", _strings("city"))
FINAL_RESULT = ToolSpec(
    "final_result", "The final response which ends this conversation", _strings("city", "summary")
)
"""The tools of the recorded requests whose answers call them."""


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
    """Requests (by index) that must carry the tool results back, linked by the expected ids."""


def _chat(exchange: Exchange) -> tuple[Call, Exchange]:
    return ("chat()", exchange)


def _stream(exchange: Exchange) -> tuple[Call, Exchange]:
    return ("chat_stream()", exchange)


def _slow(exchange: Exchange) -> Exchange:
    """A recorded stream replayed with a pause before every event after the first."""
    return Exchange.sse(exchange.body.decode(), chunk_delay=0.1)


def responses_scripts() -> dict[ConformanceScenario, Script]:
    """The Responses API's scripts, from ``openai-responses/`` recordings."""
    simple = _recorded(RESPONSES, "test_openai_responses_model_simple_response")[0]
    logprobs = _recorded(RESPONSES, "test_openai_instructions_with_responses_logprobs_streaming")[0]
    tool_call, tool_answer = _recorded(RESPONSES, "test_openai_responses_stream")
    parallel, parallel_answer = map(
        _json, _recorded(RESPONSES, "test_openai_responses_model_retry")
    )
    structured = _recorded(RESPONSES, "test_native_output")[1]
    return {
        "text": Script("gpt-4o", (_chat(simple),), expected_text="The capital of France is Paris."),
        "stream": Script(
            "gpt-4o-mini",
            (_stream(logprobs), _stream(logprobs)),
            expected_text="The capital of Minas Gerais is Belo Horizonte.",
        ),
        "tool_round_trip": Script(
            "gpt-4o",
            (_stream(tool_call), _stream(tool_answer)) * 2,  # direct, then an agent run
            expected_text="The capital of France is Paris.",
            expected_tool_call_ids=("call_kL0PCQV7M2WMoVX8V8OtYSAL",),
            results_sent_in=(1, 3),
        ),
        "parallel_tool_calls": Script(
            "gpt-4o",
            (_stream(responses_stream(parallel)), _stream(responses_stream(parallel_answer))),
            expected_text=(
                'It seems "Londos" might be incorrect or unknown. If you meant something else, '
                "please clarify.\n\nFor **London**, it's located at approximately latitude "
                "51\u00b0 N and longitude 0\u00b0 W."
            ),
            expected_tool_call_ids=(
                "call_LWVp74L5HaH2KNvgVz9PJsrj",
                "call_YnRAWeTyxI91m5uNa5bxXwVO",
            ),
            tools=(GET_LOCATION,),
            results_sent_in=(1,),
        ),
        "structured_output": Script(
            "gpt-4o",
            (_chat(structured), _stream(responses_stream(_json(structured)))),
            output_schema=CITY_LOCATION,
        ),
        "abort_mid_stream": Script("gpt-4o-mini", (_stream(_slow(logprobs)),) * 3),
        "error_mapping": Script(
            "gpt-4o",
            (_chat(_overloaded()), _stream(_overloaded())),
            expected_error_status=503,
            expected_error_switchable=True,
        ),
        "usage_and_model": Script(
            "gpt-4o",
            (_stream(tool_answer), _chat(simple), _stream(tool_answer)),
            expected_model="gpt-4o-2024-08-06",
        ),
    }


def chat_scripts(*, compatible: bool) -> dict[ConformanceScenario, Script]:
    """The Chat Completions scripts, from ``openai-chat/`` recordings.

    The compatible adapter is answered by compatible servers where one was recorded: Cerebras
    (plain text, a different answering model name) and OpenRouter (a 429).
    """
    valid = _recorded(CHAT, "test_valid_response")[0]
    moderation = _recorded(CHAT, "test_openai_moderation_stream")[0]
    tool_call, tool_answer = _recorded(CHAT, "test_run_stream_sync_streams_real_model")
    parallel = _json(_recorded(CHAT, "test_tool_choice_matrix[tools_plus_output-groq]")[0])
    structured = _recorded(CHAT, "test_openai_native_output")[1]
    scripts: dict[ConformanceScenario, Script] = {
        "text": Script("gpt-4o", (_chat(valid),), expected_text="The capital of France is Paris."),
        "stream": Script(
            "gpt-5", (_stream(moderation), _stream(moderation)), expected_text="Paris."
        ),
        "tool_round_trip": Script(
            "gpt-4o-mini",
            (_stream(tool_call), _stream(tool_answer)) * 2,  # direct, then an agent run
            expected_text="The capital of the UK is London.",
            expected_tool_call_ids=("call_ZR5UUuTt3pf61kjwAJIYdVMj",),
            tool_result="London",
            results_sent_in=(1, 3),
        ),
        "parallel_tool_calls": Script(
            "meta-llama/llama-4-scout-17b-16e-instruct",
            (_stream(chat_stream(parallel)), _stream(moderation)),
            expected_text="Paris.",
            expected_tool_call_ids=("rew01jq49", "gbpypqxpx"),
            tools=(GET_WEATHER, FINAL_RESULT),
            tool_choice="required",
            results_sent_in=(1,),
        ),
        "structured_output": Script(
            "gpt-4o",
            (_chat(structured), _stream(chat_stream(_json(structured)))),
            output_schema=CITY_LOCATION,
        ),
        "abort_mid_stream": Script("gpt-4o-mini", (_stream(_slow(tool_answer)),) * 3),
        "error_mapping": Script(
            "gpt-4o",
            (_chat(_overloaded()), _stream(_overloaded())),
            expected_error_status=503,
            expected_error_switchable=True,
        ),
        "usage_and_model": Script(
            "gpt-4o",
            (_stream(chat_stream(_json(valid))), _chat(valid), _stream(chat_stream(_json(valid)))),
            expected_model="gpt-4o-2024-08-06",
        ),
    }
    if compatible:
        cerebras = _recorded(CHAT, "test_openai_model_cerebras_provider")[0]
        rate_limited = _recorded(CHAT, "test_openrouter_errors_raised")  # 3 x 429: SDK retries
        scripts["text"] = Script(
            "llama3.3-70b", (_chat(cerebras),), expected_text="The capital of France is Paris."
        )
        scripts["error_mapping"] = Script(
            "google/gemini-2.0-flash-exp:free",
            (_chat(rate_limited[0]), _stream(rate_limited[1])),
            expected_error_status=429,
            expected_error_switchable=True,
        )
        restreamed = chat_stream(_json(cerebras))
        scripts["usage_and_model"] = Script(
            "llama3.3-70b",
            (_stream(restreamed), _chat(cerebras), _stream(restreamed)),
            expected_model="llama-3.3-70b",
        )
    return scripts


# ----------------------------------------------------------------------------- the harness


def _responses_results(body: Mapping[str, Any]) -> list[str]:
    return [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]


def _chat_results(body: Mapping[str, Any]) -> list[str]:
    return [m["tool_call_id"] for m in body["messages"] if m.get("role") == "tool"]


class _ToReplay(httpx2.AsyncBaseTransport):
    """Sends requests addressed to OpenAI's own URL to the replay server instead."""

    def __init__(self, server: ReplayServer) -> None:
        self._port = server.port
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=self._port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class Replays:
    """The replay servers and caller-owned HTTP clients of one conformance run.

    A scenario's are released when the next scenario's target is built (the kit has closed the
    scenario's provider by then), the last ones when the test ends, pass or fail.
    """

    def __init__(self) -> None:
        self._servers: list[ReplayServer] = []
        self._clients: list[httpx2.AsyncClient] = []

    def serve(self, exchanges: Sequence[Exchange]) -> ReplayServer:
        server = ReplayServer(exchanges)
        self._servers.append(server)
        return server.start()

    def client(self, server: ReplayServer) -> httpx2.AsyncClient:
        client = httpx2.AsyncClient(transport=_ToReplay(server))
        self._clients.append(client)
        return client

    async def release(self) -> None:
        try:
            while self._clients:
                await self._clients.pop().aclose()
        finally:
            while self._servers:
                self._servers.pop().stop()


@pytest.fixture
async def replays() -> AsyncIterator[Replays]:
    held = Replays()
    try:
        yield held
    finally:
        await held.release()


def _verify(
    server: ReplayServer, script: Script, results_of: Callable[[Mapping[str, Any]], list[str]]
) -> Callable[[], None]:
    def verify() -> None:
        server.assert_all_served()
        for index, (request, (call, _)) in enumerate(
            zip(server.requests, script.calls, strict=True)
        ):
            streamed = request.json().get("stream") is True
            assert streamed == (call == "chat_stream()"), (
                f"request #{index + 1} streamed={streamed}, but its exchange answers {call}"
            )
        for index in script.results_sent_in:
            sent = results_of(server.requests[index].json())
            assert tuple(sent) == script.expected_tool_call_ids, (
                f"request #{index + 1} sent tool results for ids {sent}, expected "
                f"{script.expected_tool_call_ids} (S36)"
            )

    return verify


async def _run(
    replays: Replays,
    scripts: Mapping[ConformanceScenario, Script],
    build: Callable[[ReplayServer], Provider],
    results_of: Callable[[Mapping[str, Any]], list[str]],
) -> ConformanceReport:
    async def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        await replays.release()  # the previous scenario is over
        script = scripts[scenario]
        server = replays.serve([exchange for _, exchange in script.calls])
        return ConformanceTarget(
            build(server),
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
            verify=_verify(server, script, results_of),
        )

    report = await run_provider_conformance(factory, scenarios=CONFORMANCE_SCENARIOS)
    report.raise_for_failures()
    assert report.passed
    assert report.not_run == ()
    assert [r.status for r in report.results] == ["passed"] * len(CONFORMANCE_SCENARIOS)
    return report


# ------------------------------------------------------------------------------------ the tests


async def test_openai_responses_adapter_passes_the_conformance_kit(replays: Replays) -> None:
    def build(server: ReplayServer) -> Provider:
        # OpenAI's own URL (vendor-default provenance), served by the replay server.
        return OpenAIProvider(
            api_key="test", api="responses", max_retries=0, http_client=replays.client(server)
        )

    report = await _run(replays, responses_scripts(), build, _responses_results)
    assert report.provider == "openai"


async def test_openai_chat_adapter_passes_the_conformance_kit(replays: Replays) -> None:
    def build(server: ReplayServer) -> Provider:
        return OpenAIProvider(
            api_key="test", api="chat", max_retries=0, http_client=replays.client(server)
        )

    report = await _run(replays, chat_scripts(compatible=False), build, _chat_results)
    assert report.provider == "openai"


async def test_openai_compatible_adapter_passes_the_conformance_kit(replays: Replays) -> None:
    def build(server: ReplayServer) -> Provider:
        return OpenAICompatibleProvider(base_url=server.base_url + "/v1", max_retries=0)

    report = await _run(replays, chat_scripts(compatible=True), build, _chat_results)
    assert report.provider == "openai-compatible"
