"""Regressions from an adversarial review: what a server (or a network) can do to an adapter."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncGenerator, Iterator

import pytest

import robota
from providers.replay import Exchange, ReplayServer
from robota.core import ChatRequest, EventNames, UserMessage
from robota.core.providers import TextDelta
from robota.providers.openai import OpenAIProvider
from robota.providers.openai._chat import ChatStreamAssembler, chat_messages
from robota.providers.openai_compatible import OpenAICompatibleProvider


def _chunk(delta: dict[str, object], finish: str | None = None) -> str:
    body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return f"data: {json.dumps(body)}\n\n"


def _responses_event(event: dict[str, object]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


_REQUEST = ChatRequest(model="gpt-5-mini", messages=(UserMessage("hi"),))


async def test_s24_the_effort_outcome_is_recorded_for_a_call_that_fails() -> None:
    # Regression: the resolution arrived only with the response's end, so a failed call claimed
    # no control although the request carried one.
    failure = Exchange.json(400, {"error": {"message": "bad", "type": "invalid_request_error"}})
    seen: list[robota.AgentEvent] = []
    with ReplayServer([failure]) as server:
        provider = OpenAIProvider(api_key="k", base_url=server.base_url + "/v1", max_retries=0)
        agent = robota.Agent(provider=provider, model="gpt-5-mini", effort="low")
        with pytest.raises(robota.ProviderError):
            await agent.run("x", on_event=seen.append)
        await provider.aclose()
    assert server.requests[0].json()["reasoning"] == {"effort": "low"}
    [response] = [e for e in seen if e.name == EventNames.PROVIDER_RESPONSE]
    outcome = response.data["effort"]
    assert outcome.native_control_sent
    assert outcome.dispatched
    assert outcome.resolution.disposition == "applied"


def _text_stream(chunks: int) -> str:
    return "".join(_chunk({"content": f"w{i} "}) for i in range(chunks)) + _chunk({}, "stop")


async def test_s23_an_abort_ends_the_wait_for_a_slow_server_at_once() -> None:
    # Regression: an abort took effect only when the server sent its next event.
    with ReplayServer([Exchange.sse(_text_stream(3), chunk_delay=3.0)]) as server:
        provider = OpenAICompatibleProvider(base_url=server.base_url + "/v1", max_retries=0)
        controller = robota.AbortController()
        started = time.monotonic()

        async def read() -> None:
            async for event in provider.chat_stream(_REQUEST, signal=controller.signal):
                if isinstance(event, TextDelta):
                    asyncio.get_running_loop().call_later(0.05, controller.abort)

        with pytest.raises(robota.AbortError):
            await read()
        elapsed = time.monotonic() - started
        await provider.aclose()
    assert elapsed < 3.0 + 2.0  # the first event's wait, not the second's


@contextlib.contextmanager
def _async_generators_started() -> Iterator[list[AsyncGenerator[object, object]]]:
    """Every async generator first iterated in the block, held so no collector finishes one."""
    hooks = sys.get_asyncgen_hooks()
    started: list[AsyncGenerator[object, object]] = []

    def firstiter(agen: AsyncGenerator[object, object]) -> None:
        started.append(agen)
        if hooks.firstiter is not None:
            hooks.firstiter(agen)

    sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=hooks.finalizer)
    try:
        yield started
    finally:
        sys.set_asyncgen_hooks(firstiter=hooks.firstiter, finalizer=hooks.finalizer)


def _suspended(started: list[AsyncGenerator[object, object]]) -> list[str]:
    return [agen.ag_code.co_qualname for agen in started if agen.ag_frame is not None]  # type: ignore[attr-defined]


@pytest.mark.parametrize("api", ["chat", "compatible"])
@pytest.mark.parametrize("end", ["abort", "aclose"])
async def test_s23_a_stream_ended_early_leaves_no_sdk_generator_for_the_collector(
    api: str, end: str
) -> None:
    # Regression (a conformance-kit flake, "async generator already executing"): an abort seen
    # between two events, or the caller closing the stream, closed the SDK's response but left
    # its generators (the SDK stream, the SSE decoder, the HTTP response's byte iterators)
    # suspended; the garbage collector finished them later, one by one, wherever it happened to
    # run. Ended early, the stream finishes every generator it started, in the caller's task.
    with ReplayServer([Exchange.sse(_text_stream(6))]) as server:
        if api == "chat":
            provider: robota.Provider = OpenAIProvider(
                api_key="k", base_url=server.base_url + "/v1", api="chat", max_retries=0
            )
        else:
            provider = OpenAICompatibleProvider(base_url=server.base_url + "/v1", max_retries=0)
        controller = robota.AbortController()
        with _async_generators_started() as started:
            stream = provider.chat_stream(_REQUEST, signal=controller.signal)
            assert isinstance(await anext(stream), TextDelta)
            if end == "abort":
                controller.abort()
                with pytest.raises(robota.AbortError):
                    await anext(stream)
            else:
                await stream.aclose()  # type: ignore[attr-defined]
        await provider.aclose()
    assert started
    assert _suspended(started) == []


@pytest.mark.parametrize(
    ("name", "stream"),
    [
        ("chat without a finish reason", _chunk({"content": "half an ans"})),
        (
            "responses without response.completed",
            _responses_event({"type": "response.created", "response": {"model": "gpt-5-mini"}})
            + _responses_event({"type": "response.output_text.delta", "delta": "half"}),
        ),
    ],
)
async def test_s42_a_stream_cut_short_is_a_failure_not_a_complete_reply(
    name: str, stream: str
) -> None:
    api = "chat" if name.startswith("chat") else "responses"
    with ReplayServer([Exchange.sse(stream)]) as server:
        provider = OpenAIProvider(
            api_key="k", base_url=server.base_url + "/v1", api=api, max_retries=0
        )
        agent = robota.Agent(provider=provider, model="gpt-5-mini")
        with pytest.raises(robota.NetworkError) as caught:
            await agent.run("x")
        await provider.aclose()
    assert caught.value.vendor_type == "incomplete_stream"
    assert not caught.value.switchable
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert "Request failed" in last.content
    assert not last.tool_calls  # a call the stream never finished is never dispatched


async def test_s29_a_compatible_stream_without_usage_has_an_unknown_cost() -> None:
    stream = _text_stream(2)  # no usage chunk at all
    with ReplayServer([Exchange.sse(stream)]) as server:
        provider = OpenAICompatibleProvider(
            base_url=server.base_url + "/v1",
            name="priced",
            max_retries=0,
            pricing=[robota.ModelPricing("m", 1.0, 1.0)],
        )
        result = await robota.Agent(provider=provider, model="m").run("x")
        await provider.aclose()
    assert result.usage.partial
    assert result.cost is None  # not zero: the server charged something nobody reported


@pytest.mark.parametrize(
    "fragments",
    [
        # Google's endpoint: no index, empty ids.
        [
            {"id": "", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"id": "", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}},
        ],
        # index 0 repeated with distinct ids.
        [
            {
                "index": 0,
                "id": "c1",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            },
            {
                "index": 0,
                "id": "c2",
                "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
            },
        ],
    ],
)
def test_s36_parallel_calls_stay_apart_when_a_server_omits_or_repeats_the_index(
    fragments: list[dict[str, object]],
) -> None:
    assembler = ChatStreamAssembler(provider="p", requested="m", effort=None)
    for fragment in fragments:
        list(assembler.feed(json.loads(_chunk({"tool_calls": [fragment]})[6:])))
    list(assembler.feed(json.loads(_chunk({}, "tool_calls")[6:])))
    calls = [e.call for e in assembler.finish() if isinstance(e, robota.ToolCallReady)]
    assert [json.loads(c.arguments)["city"] for c in calls] == ["Paris", "Rome"]
    assert [c.id for c in calls] == [str(f["id"]) for f in fragments]  # untouched (S36)


def test_s26_a_signature_on_each_tool_call_goes_back_on_that_call() -> None:
    assembler = ChatStreamAssembler(provider="p", requested="m", effort=None)
    signed = {"google": {"thought_signature": "sig-1"}}
    fragment = {
        "index": 0,
        "id": "",
        "function": {"name": "f", "arguments": "{}"},
        "extra_content": signed,
    }
    list(assembler.feed(json.loads(_chunk({"tool_calls": [fragment]})[6:])))
    list(assembler.feed(json.loads(_chunk({}, "tool_calls")[6:])))
    events = list(assembler.finish())
    done = events[-1]
    assert isinstance(done, robota.ResponseDone)
    calls = tuple(e.call for e in events if isinstance(e, robota.ToolCallReady))
    message = robota.AssistantMessage("", tool_calls=calls, continuation=done.continuation)
    [sent] = chat_messages([message])
    assert sent["tool_calls"][0]["extra_content"] == signed


async def test_s30_a_direct_call_for_a_hosted_tool_not_enabled_never_reaches_the_server() -> None:
    with ReplayServer([]) as server:
        for api in ("responses", "chat"):
            provider = OpenAIProvider(api_key="k", base_url=server.base_url + "/v1", api=api)
            request = ChatRequest(
                model="gpt-5", messages=(UserMessage("x"),), native_tools=("web_search",)
            )
            with pytest.raises(robota.NativeToolUnavailableError):
                async for _ in provider.chat_stream(request):
                    pass
            with pytest.raises(robota.NativeToolUnavailableError):
                await provider.chat(request)
            await provider.aclose()
    assert server.requests == []


@pytest.mark.parametrize(
    ("exchange", "streaming", "vendor_type"),
    [
        (Exchange.sse(_chunk({"content": "hi"}) + "data: {not json\n\n"), True, "invalid_response"),
        (
            Exchange(status=200, headers=(("content-type", "text/html"),), body=b"<html>UI</html>"),
            False,
            "invalid_response",
        ),
        (
            Exchange(status=200, headers=(("content-type", "text/html"),), body=b"<html>UI</html>"),
            True,
            "incomplete_stream",
        ),
        (
            Exchange.json(200, {"object": "chat.completion", "choices": {"0": {}}}),
            False,
            "invalid_response",
        ),
    ],
)
async def test_s42_an_answer_that_is_not_the_api_is_a_provider_error(
    exchange: Exchange, streaming: bool, vendor_type: str
) -> None:
    with ReplayServer([exchange]) as server:
        provider = OpenAICompatibleProvider(
            base_url=server.base_url + "/v1", max_retries=0, streaming=streaming
        )
        with pytest.raises(robota.ProviderError) as caught:
            async for _ in provider.chat_stream(_REQUEST):
                pass
        await provider.aclose()
    assert caught.value.vendor_type == vendor_type
    assert type(caught.value).__module__.startswith("robota")


async def test_s42_an_error_object_in_a_200_body_keeps_the_status_it_names() -> None:
    with ReplayServer(
        [Exchange.json(200, {"error": {"message": "upstream failed", "code": 502}})]
    ) as server:
        provider = OpenAICompatibleProvider(base_url=server.base_url + "/v1", max_retries=0)
        with pytest.raises(robota.ProviderError) as caught:
            await provider.chat(_REQUEST)
        await provider.aclose()
    assert caught.value.status == 502
    assert caught.value.switchable


async def test_no_openai_account_setting_from_the_environment_reaches_a_compatible_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_secret")
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "admin-secret")
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "X-Account: secret")
    with ReplayServer([Exchange.sse(_text_stream(1))]) as server:
        provider = OpenAICompatibleProvider(
            base_url=server.base_url + "/v1", headers={"X-Mine": "yes"}, max_retries=0
        )
        await robota.collect_stream(provider.chat_stream(_REQUEST))
        await provider.aclose()
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer not-needed"
    assert headers["x-mine"] == "yes"
    leaked = [k for k, v in headers.items() if "secret" in v]
    assert leaked == []
