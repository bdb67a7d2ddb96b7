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
    ("event", "kind", "switchable"),
    [
        ({"type": "error", "code": "server_error", "message": "boom"}, robota.ProviderError, True),
        (
            {"type": "error", "code": "rate_limit_exceeded", "message": "slow"},
            robota.RateLimitError,
            True,
        ),
        (
            {"type": "error", "code": "insufficient_quota", "message": "quota"},
            robota.RateLimitError,
            False,
        ),
        ({"type": "error", "code": "invalid_prompt", "message": "no"}, robota.ProviderError, False),
        ({"type": "error", "code": "something_new", "message": "?"}, robota.ProviderError, False),
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
        ),
    ],
)
async def test_s42_a_stream_error_event_maps_by_its_documented_code(
    event: dict[str, object], kind: type[robota.ProviderError], switchable: bool
) -> None:
    with ReplayServer([Exchange.sse(_sse(_CREATED, event))]) as server:
        provider = OpenAIProvider(api_key="k", base_url=server.base_url + "/v1", max_retries=0)
        request = ChatRequest(model="gpt-5", messages=(UserMessage("x"),))
        with pytest.raises(robota.ProviderError) as caught:
            async for _ in provider.chat_stream(request):
                pass
        await provider.aclose()
    assert type(caught.value) is kind
    assert caught.value.switchable is switchable
    assert caught.value.status is None  # no HTTP status: the stream itself was a 200
    assert caught.value.provider == "openai"
    assert caught.value.message
