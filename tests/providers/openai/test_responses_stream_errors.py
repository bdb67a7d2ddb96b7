"""S42 for errors that arrive inside a 200 Responses stream (no HTTP status, only a code)."""

from __future__ import annotations

import json

import pytest

import robota
from providers.replay import Exchange, ReplayServer
from robota.core import ChatRequest, UserMessage
from robota.providers.openai import OpenAIProvider


def _sse(*events: dict[str, object]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


_CREATED = {
    "type": "response.created",
    "response": {"id": "resp_1", "model": "gpt-5", "status": "in_progress"},
}


@pytest.mark.parametrize(
    ("event", "kind", "switchable", "recoverable"),
    [
        (
            {"type": "error", "code": "server_error", "message": "boom"},
            robota.ProviderError,
            True,
            True,
        ),
        (
            {"type": "error", "code": "rate_limit_exceeded", "message": "slow"},
            robota.RateLimitError,
            True,
            True,
        ),
        (
            {"type": "error", "code": "insufficient_quota", "message": "quota"},
            robota.RateLimitError,
            False,
            False,
        ),
        (
            {"type": "error", "code": "invalid_prompt", "message": "no"},
            robota.ProviderError,
            False,
            False,
        ),
        (
            {"type": "error", "code": "something_new", "message": "?"},
            robota.ProviderError,
            False,
            False,
        ),
        (
            {
                "type": "response.failed",
                "response": {
                    "id": "resp_1",
                    "model": "gpt-5",
                    "status": "failed",
                    "error": {"code": "server_error", "message": "The model failed."},
                },
            },
            robota.ProviderError,
            True,
            True,
        ),
    ],
)
async def test_s42_a_stream_error_event_maps_by_its_documented_code(
    event: dict[str, object], kind: type[robota.ProviderError], switchable: bool, recoverable: bool
) -> None:
    """S42: no HTTP status, so the documented code alone decides the class, whether another
    model could serve it, and whether another attempt can succeed (a server error or a rate
    limit can; a quota, a refused prompt or an unknown code cannot)."""
    with ReplayServer([Exchange.sse(_sse(_CREATED, event))]) as server:
        provider = OpenAIProvider(api_key="k", base_url=server.base_url + "/v1", max_retries=0)
        request = ChatRequest(model="gpt-5", messages=(UserMessage("x"),))
        with pytest.raises(robota.ProviderError) as caught:
            async for _ in provider.chat_stream(request):
                pass
        await provider.aclose()
    assert type(caught.value) is kind
    assert caught.value.switchable is switchable
    assert caught.value.recoverable is recoverable
    assert caught.value.status is None  # no HTTP status: the stream itself was a 200
    assert caught.value.provider == "openai"
    assert caught.value.message


@pytest.mark.parametrize(
    "event",
    [
        {"type": "error", "code": "server_error", "message": "boom", "param": None},
        {
            "type": "response.failed",
            "response": {
                "id": "resp_1",
                "model": "gpt-5",
                "status": "failed",
                "error": {"code": "server_error", "message": "The model failed."},
            },
        },
    ],
    ids=["error", "response.failed"],
)
async def test_s42_a_stream_error_keeps_its_documented_code_as_the_vendor_type(
    event: dict[str, object],
) -> None:
    """S42 keeps the vendor's error type: for a stream failure that is its ``code``, never the
    event's own ``type`` (``"error"`` on every ``error`` event, so it says nothing)."""
    with ReplayServer([Exchange.sse(_sse(_CREATED, event))]) as server:
        provider = OpenAIProvider(api_key="k", base_url=server.base_url + "/v1", max_retries=0)
        request = ChatRequest(model="gpt-5", messages=(UserMessage("x"),))
        with pytest.raises(robota.ProviderError) as caught:
            async for _ in provider.chat_stream(request):
                pass
        await provider.aclose()
    assert caught.value.vendor_type == "server_error"
    assert caught.value.code == "server_error"
