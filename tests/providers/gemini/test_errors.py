"""S42: every row of the Gemini error table, through the real SDK, streamed and not.

Error bodies are hand-written in Google's documented format
(``{"error": {"code", "message", "status"}}``, ai.google.dev/gemini-api/docs/troubleshooting).
"""

from __future__ import annotations

import json
import socket

import pytest

import robota
from providers.gemini._replay import gemini
from providers.replay import Exchange, ReplayServer
from robota.core import ChatRequest, UserMessage
from robota.providers.gemini import GeminiProvider
from robota.providers.gemini._errors import SWITCHABLE

REQUEST = ChatRequest(model="gemini-2.5-flash", messages=(UserMessage("x"),))


def _google_error(code: int, status: str, message: str = "the vendor said no") -> Exchange:
    return Exchange.json(code, {"error": {"code": code, "message": message, "status": status}})


async def _call(provider: GeminiProvider, *, stream: bool) -> None:
    if stream:
        _ = [event async for event in provider.chat_stream(REQUEST)]
    else:
        await provider.chat(REQUEST)


async def _fail(exchange: Exchange, *, stream: bool) -> robota.ProviderError:
    with ReplayServer([exchange]) as server:
        provider = gemini(server, streaming=stream)
        with pytest.raises(robota.ProviderError) as caught:
            await _call(provider, stream=stream)
        await provider.aclose()
    return caught.value


@pytest.fixture(params=[False, True], ids=["chat", "stream"])
def stream(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


async def test_s42_invalid_argument(stream: bool) -> None:
    error = await _fail(_google_error(400, "INVALID_ARGUMENT"), stream=stream)
    assert (error.status, error.vendor_type, error.switchable) == (400, "INVALID_ARGUMENT", False)
    assert type(error) is robota.ProviderError
    assert "the vendor said no" in str(error)


@pytest.mark.parametrize(("code", "status"), [(403, "PERMISSION_DENIED"), (401, "UNAUTHENTICATED")])
async def test_s42_permission_denied(code: int, status: str, stream: bool) -> None:
    error = await _fail(_google_error(code, status), stream=stream)
    assert isinstance(error, robota.AuthenticationError)
    assert (error.status, error.vendor_type, error.switchable) == (code, status, False)


async def test_s42_not_found(stream: bool) -> None:
    error = await _fail(_google_error(404, "NOT_FOUND"), stream=stream)
    assert (error.status, error.switchable) == (404, True)


async def test_s42_resource_exhausted(stream: bool) -> None:
    error = await _fail(_google_error(429, "RESOURCE_EXHAUSTED"), stream=stream)
    assert isinstance(error, robota.RateLimitError)
    assert (error.status, error.vendor_type, error.switchable) == (429, "RESOURCE_EXHAUSTED", True)
    assert error.retry_after is None  # no RetryInfo, no Retry-After: the vendor did not say


def _retry_info(delay: str) -> dict[str, object]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


@pytest.mark.parametrize(
    ("delay", "seconds"), [("37s", 37.0), ("1.5s", 1.5), ("0.250s", 0.25), ("0s", 0.0)]
)
async def test_s42_resource_exhausted_keeps_the_retry_info_delay(
    delay: str, seconds: float, stream: bool
) -> None:
    """Gemini names a 429's wait in a ``google.rpc.RetryInfo`` detail (a protobuf Duration):
    it is the :class:`~robota.RateLimitError`'s ``retry_after``, which a retry policy honours."""
    quota = {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []}
    body = {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [quota, _retry_info(delay)],
        }
    }
    error = await _fail(Exchange.json(429, body), stream=stream)
    assert isinstance(error, robota.RateLimitError)
    assert error.retry_after == seconds


async def test_s42_resource_exhausted_keeps_a_retry_after_header(stream: bool) -> None:
    exchange = _google_error(429, "RESOURCE_EXHAUSTED")
    error = await _fail(
        Exchange(status=429, headers=(*exchange.headers, ("retry-after", "3")), body=exchange.body),
        stream=stream,
    )
    assert isinstance(error, robota.RateLimitError)
    assert error.retry_after == 3.0


@pytest.mark.parametrize("delay", ["soon", "5m", "", "-2s"])
async def test_s42_an_unreadable_retry_info_delay_is_no_retry_after(
    delay: str, stream: bool
) -> None:
    body = {
        "error": {
            "code": 429,
            "message": "slow down",
            "status": "RESOURCE_EXHAUSTED",
            "details": [_retry_info(delay)],
        }
    }
    error = await _fail(Exchange.json(429, body), stream=stream)
    assert isinstance(error, robota.RateLimitError)
    assert error.retry_after is None


@pytest.mark.parametrize(
    ("code", "status"), [(500, "INTERNAL"), (503, "UNAVAILABLE"), (504, "DEADLINE_EXCEEDED")]
)
async def test_s42_internal_unavailable_and_deadline_exceeded(
    code: int, status: str, stream: bool
) -> None:
    error = await _fail(_google_error(code, status), stream=stream)
    assert (error.status, error.vendor_type, error.switchable) == (code, status, True)


async def test_s42_server_error(stream: bool) -> None:
    error = await _fail(_google_error(502, "UNKNOWN"), stream=stream)
    assert (error.status, error.switchable) == (502, True)


async def test_s42_unknown(stream: bool) -> None:
    error = await _fail(_google_error(409, "ABORTED"), stream=stream)
    assert (error.status, error.vendor_type, error.switchable) == (409, "ABORTED", False)


async def test_s42_timeout() -> None:
    with ReplayServer([Exchange.hang(5.0)]) as server:
        provider = gemini(server, http_options={"base_url": server.base_url + "/", "timeout": 200})
        with pytest.raises(robota.NetworkError) as caught:
            await provider.chat(REQUEST)
        await provider.aclose()
    assert caught.value.vendor_type == "timeout"
    assert caught.value.switchable is True


async def test_s42_connection() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = GeminiProvider(
        api_key="k", http_options={"base_url": f"http://127.0.0.1:{port}/"}, streaming=False
    )
    with pytest.raises(robota.NetworkError) as caught:
        await provider.chat(REQUEST)
    await provider.aclose()
    assert caught.value.vendor_type == "connection_error"
    assert caught.value.switchable is False


def test_s42_the_table_has_one_row_per_documented_failure() -> None:
    assert SWITCHABLE == {
        "invalid_argument": False,
        "permission_denied": False,
        "not_found": True,
        "resource_exhausted": True,
        "internal": True,
        "unavailable": True,
        "deadline_exceeded": True,
        "server_error": True,
        "timeout": True,
        "connection": False,
        "unknown": False,
    }


async def test_s42_resource_exhausted_inside_a_stream_keeps_its_retry_info_delay() -> None:
    """The SDK raises an error object that arrives as a stream chunk; its RetryInfo counts."""
    text = {"candidates": [{"content": {"parts": [{"text": "The"}], "role": "model"}}]}
    error = {
        "error": {
            "code": 429,
            "message": "slow down",
            "status": "RESOURCE_EXHAUSTED",
            "details": [_retry_info("4s")],
        }
    }
    stream = "".join(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in (text, error))
    mapped = await _fail(Exchange.sse(stream), stream=True)
    assert isinstance(mapped, robota.RateLimitError)
    assert (mapped.status, mapped.retry_after, mapped.recoverable) == (429, 4.0, True)
