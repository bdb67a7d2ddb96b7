"""S27 on the wire: every adapter declares propagation and sends ``traceparent`` only to a listed
origin, naming the provider call's span, and never puts it into a captured native request.

Each adapter runs under its real SDK against the local replay server, whose origin is listed (or
not) in the run's trace context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import robota
from providers.openai._wire import chat_provider, completion, restreamed
from providers.replay import Exchange, ReplayServer
from robota import EventNames, TraceContext, derive_span_id
from robota.providers.anthropic import AnthropicProvider
from robota.providers.gemini import GeminiProvider
from robota.providers.openai import OpenAIProvider
from robota.providers.openai_compatible import OpenAICompatibleProvider

HOST = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

_ANTHROPIC = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "done"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
_GEMINI = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "done"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
}
_RESPONSES = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "status": "completed",
    "model": "gpt-4o",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "done", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 3,
        "output_tokens": 1,
        "total_tokens": 4,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    },
}

Factory = Callable[[ReplayServer], robota.Provider]
CASES: dict[str, tuple[Factory, str, Exchange]] = {
    "openai-chat": (
        lambda s: chat_provider(s, streaming=False),
        "gpt-4o",
        Exchange.json(200, completion("done")),
    ),
    "openai-chat-stream": (
        lambda s: chat_provider(s, streaming=True),
        "gpt-4o",
        restreamed(Exchange.json(200, completion("done"))),
    ),
    "openai-responses": (
        lambda s: OpenAIProvider(
            api_key="k", base_url=s.base_url + "/v1", max_retries=0, streaming=False
        ),
        "gpt-4o",
        Exchange.json(200, _RESPONSES),
    ),
    "openai-compatible": (
        lambda s: OpenAICompatibleProvider(
            base_url=s.base_url + "/v1", max_retries=0, streaming=False
        ),
        "local",
        Exchange.json(200, completion("done")),
    ),
    "anthropic": (
        lambda s: AnthropicProvider(
            api_key="k", base_url=s.base_url, max_retries=0, streaming=False
        ),
        "claude-sonnet-4-5",
        Exchange.json(200, _ANTHROPIC),
    ),
    "gemini": (
        lambda s: GeminiProvider(
            api_key="k", streaming=False, http_options={"base_url": s.base_url + "/"}
        ),
        "gemini-2.5-flash",
        Exchange.json(200, _GEMINI),
    ),
}


async def _run(case: str, listed: bool) -> tuple[dict[str, str], list[robota.AgentEvent]]:
    make, model, answer = CASES[case]
    events: list[robota.AgentEvent] = []
    with ReplayServer([answer]) as server:
        provider = make(server)
        assert provider.propagates_trace_context()
        origins = [server.base_url] if listed else ["https://somewhere-else.example"]
        trace = TraceContext.from_traceparent(HOST, origins=origins, tracestate="ours=1")
        agent = robota.Agent(provider=provider, model=model)
        result = await agent.run("hi", trace=trace, on_event=events.append)
        await provider.aclose()
        server.assert_all_served()
        headers = server.requests[0].headers
    assert result.text == "done"
    return headers, events


@pytest.mark.parametrize("case", sorted(CASES))
async def test_s27_adapter_sends_traceparent_naming_the_call_span_to_a_listed_origin(
    case: str,
) -> None:
    headers, events = await _run(case, listed=True)
    (call_id,) = [e.data["call_id"] for e in events if e.name == EventNames.ROUND_COMPLETED]
    assert headers["traceparent"] == (
        f"00-0af7651916cd43dd8448eb211c80319c-{derive_span_id(str(call_id))}-01"
    )
    assert headers["tracestate"] == "ours=1"
    # Resolved at invocation: the captured native request and every other event lack it.
    dump = repr([(e.name, dict(e.data)) for e in events])
    assert headers["traceparent"] not in dump
    assert any(e.name == EventNames.PROVIDER_NATIVE for e in events)


@pytest.mark.parametrize("case", sorted(CASES))
async def test_s27_adapter_sends_nothing_to_an_origin_the_host_did_not_list(case: str) -> None:
    headers, events = await _run(case, listed=False)
    assert "traceparent" not in headers
    assert "tracestate" not in headers
    assert not [e for e in events if e.name == EventNames.TRACE_NOT_PROPAGATED]


def test_s27_origin_listing_compares_the_whole_origin() -> None:
    # The replay server's origin differs from a listed one only by port: not listed.
    listed: Any = TraceContext.from_traceparent(HOST, origins=["http://127.0.0.1:1"])
    assert not listed.allows("http://127.0.0.1:2/v1")
    assert listed.allows("http://127.0.0.1:1/v1/chat/completions")


REDIRECTING = {
    "openai-chat": (
        lambda s: chat_provider(s, streaming=False),
        "gpt-4o",
        Exchange.json(200, completion("done")),
        "/v1/chat/completions",
    ),
    "openai-chat-stream": (
        lambda s: chat_provider(s, streaming=True),
        "gpt-4o",
        restreamed(Exchange.json(200, completion("done"))),
        "/v1/chat/completions",
    ),
    "anthropic": (
        lambda s: AnthropicProvider(
            api_key="k", base_url=s.base_url, max_retries=0, streaming=False
        ),
        "claude-sonnet-4-5",
        Exchange.json(200, _ANTHROPIC),
        "/v1/messages",
    ),
}


@pytest.mark.parametrize("case", sorted(REDIRECTING))
async def test_s27_a_redirect_off_the_listed_origin_carries_no_trace_header(case: str) -> None:
    # Regression (review of issue 14): the SDKs follow redirects and httpx2 strips only
    # Authorization, so a listed origin answering 307 forwarded traceparent to an unlisted one.
    make, model, answer, path = REDIRECTING[case]
    with ReplayServer([answer]) as elsewhere:
        moved = Exchange.json(307, {}, headers={"location": elsewhere.base_url + path})
        with ReplayServer([moved]) as listed:
            provider = make(listed)
            trace = TraceContext.from_traceparent(HOST, origins=[listed.base_url])
            result = await robota.Agent(provider=provider, model=model).run("hi", trace=trace)
            await provider.aclose()
            first = listed.requests[0].headers
        landed = elsewhere.requests[0].headers
    assert result.text == "done"
    assert "traceparent" in first  # the listed origin got it
    assert "traceparent" not in landed
    assert "tracestate" not in landed
