"""S42: every row of the Anthropic error map, through the real SDK against a replay server."""

from __future__ import annotations

import json
import socket

import pytest

from providers.anthropic._helpers import collect, provider, request, sse
from providers.replay import Exchange, ReplayServer
from robota import AuthenticationError, NetworkError, ProviderError, RateLimitError
from robota.providers.anthropic import AnthropicProvider
from robota.providers.anthropic._errors import SWITCHABLE

MODEL = "claude-sonnet-4-5"


def _error(status: int, kind: str, headers: dict[str, str] | None = None) -> Exchange:
    body = {
        "type": "error",
        "error": {"type": kind, "message": f"{kind} happened"},
        "request_id": "req_test",
    }
    return Exchange.json(status, body, headers)


async def _raised(exchange: Exchange, *, stream: bool = False) -> ProviderError:
    async with ReplayServer([exchange]) as server:
        adapter = provider(server, streaming=stream)
        with pytest.raises(ProviderError) as caught:
            await collect(adapter.chat_stream(request(MODEL)))
        await adapter.aclose()
    return caught.value


@pytest.mark.parametrize(
    ("row", "status", "kind", "cls"),
    [
        ("overloaded", 529, "overloaded_error", ProviderError),
        ("api_error", 500, "api_error", ProviderError),
        ("invalid_request", 400, "invalid_request_error", ProviderError),
        ("authentication", 401, "authentication_error", AuthenticationError),
        ("permission", 403, "permission_error", AuthenticationError),
        ("not_found", 404, "not_found_error", ProviderError),
        ("request_too_large", 413, "request_too_large", ProviderError),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
async def test_s42_status_rows(
    row: str, status: int, kind: str, cls: type[ProviderError], stream: bool
) -> None:
    error = await _raised(_error(status, kind), stream=stream)
    assert type(error) is cls
    assert (error.status, error.vendor_type) == (status, kind)
    assert error.switchable is SWITCHABLE[row]
    assert error.request_id == "req_test"
    assert error.provider == "anthropic"
    assert error.model == MODEL


async def test_s42_overloaded_error() -> None:
    error = await _raised(_error(529, "overloaded_error"))
    assert error.switchable is True
    assert error.recoverable


async def test_s42_rate_limit_error_keeps_retry_after() -> None:
    error = await _raised(_error(429, "rate_limit_error", {"retry-after": "7"}))
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 7.0
    assert error.switchable is True


async def test_s42_api_error() -> None:
    assert (await _raised(_error(500, "api_error"))).switchable is True


async def test_s42_invalid_request_error() -> None:
    assert (await _raised(_error(400, "invalid_request_error"))).switchable is False


async def test_s42_authentication_error() -> None:
    assert (await _raised(_error(401, "authentication_error"))).switchable is False


async def test_s42_permission_error() -> None:
    assert (await _raised(_error(403, "permission_error"))).switchable is False


async def test_s42_not_found_error() -> None:
    assert (await _raised(_error(404, "not_found_error"))).switchable is True


async def test_s42_request_too_large() -> None:
    assert (await _raised(_error(413, "request_too_large"))).switchable is False


async def test_s42_unknown() -> None:
    error = await _raised(_error(418, "teapot_error"))
    assert error.status == 418
    assert error.switchable is False


async def test_s42_timeout() -> None:
    async with ReplayServer([Exchange.hang(5)]) as server:
        adapter = provider(server, streaming=False, timeout=0.3)
        with pytest.raises(NetworkError) as caught:
            await adapter.chat(request(MODEL))
        await adapter.aclose()
    assert caught.value.vendor_type == "timeout"
    assert caught.value.switchable is True


async def test_s42_connection() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    adapter = AnthropicProvider(api_key="test", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(NetworkError) as caught:
        await adapter.chat(request(MODEL))
    await adapter.aclose()
    assert caught.value.vendor_type == "connection_error"
    assert caught.value.switchable is False


_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
_TEXT = [
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
]


async def test_s42_error_event_mid_stream_mapped_by_type() -> None:
    """An ``overloaded_error`` inside a 200 stream is a switchable ProviderError, not a reply."""
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    async with ReplayServer([sse([_START, {"type": "ping"}, *_TEXT, overloaded])]) as server:
        adapter = provider(server)
        with pytest.raises(ProviderError) as caught:
            await collect(adapter.chat_stream(request(MODEL)))
        await adapter.aclose()
    error = caught.value
    assert error.vendor_type == "overloaded_error"
    assert error.status is None
    assert error.switchable is True
    assert error.recoverable


async def test_s42_stream_without_message_stop_is_incomplete() -> None:
    async with ReplayServer([sse([_START, *_TEXT])]) as server:
        adapter = provider(server)
        with pytest.raises(NetworkError) as caught:
            await collect(adapter.chat_stream(request(MODEL)))
        await adapter.aclose()
    assert caught.value.vendor_type == "incomplete_stream"


async def test_s42_connection_dropped_mid_stream() -> None:
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in [_START, *_TEXT])
    async with ReplayServer([Exchange.drop_mid_stream(text)]) as server:
        adapter = provider(server)
        with pytest.raises(NetworkError) as caught:
            await collect(adapter.chat_stream(request(MODEL)))
        await adapter.aclose()
    assert caught.value.switchable is False
