"""One place owns retries (issue 28, S42): what each vendor SDK retries on its own, and that
``max_retries=0`` / :meth:`~robota.Provider.disable_sdk_retries` leave exactly one attempt.

A retry policy above the adapters relies on these facts: with the SDK's retries on, a 429 or a
503 is retried inside the SDK (the server sees every attempt, the caller only the last answer);
with them off, the server sees exactly one request per call and the caller sees the failure.
Failures inside a 200 stream are never retried by any SDK: they reach the caller once.
Each test serves the vendor's own wire format from a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import robota
from providers.faults.vendors import FaultServer, Vendor, request
from providers.replay import Exchange
from robota import Provider, StreamEvent, TextDelta

SDK_DEFAULT_RETRIES = {
    "openai-chat": 2,
    "openai-responses": 2,
    "anthropic": 2,
    "gemini": 0,
    "openai-compatible": 2,
}
"""Retries each SDK makes as built with no option: ``max_retries`` 2 (openai, anthropic); the
google-genai SDK makes one attempt unless given ``retry_options``."""


def _failures(vendor: Vendor) -> list[Exchange]:
    """A 429 then a 503, each asking for a 10 ms wait so the SDK's backoff stays short."""
    if vendor.name == "gemini":
        return [vendor.rate_limited("retry-info", seconds=0.01), vendor.status_error(503)]
    fast = {"retry-after-ms": "10"}
    return [vendor.rate_limited("retry-after-ms", seconds=0.01), vendor.status_error(503, fast)]


async def _text(events: AsyncIterator[StreamEvent]) -> str:
    return "".join([event.text async for event in events if isinstance(event, TextDelta)])


async def _answer(provider: Provider, vendor: Vendor) -> str:
    try:
        return await _text(provider.chat_stream(request(vendor)))
    finally:
        await provider.aclose()


async def _failure(provider: Provider, vendor: Vendor) -> robota.ProviderError:
    try:
        with pytest.raises(robota.ProviderError) as caught:
            await _text(provider.chat_stream(request(vendor)))
    finally:
        await provider.aclose()
    return caught.value


async def test_the_sdk_as_built_retries_a_429_and_a_503_itself(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    server = fault_server([*_failures(vendor), vendor.success()])
    provider = vendor.provider(server, sdk_retries=None)  # the SDK's default
    if SDK_DEFAULT_RETRIES[vendor.name] >= 2:
        assert await _answer(provider, vendor) == vendor.success_text
        assert len(server.requests) == 3  # the 429, the 503 and the answer: all in the SDK
    else:
        error = await _failure(provider, vendor)
        assert isinstance(error, robota.RateLimitError)
        assert len(server.requests) == 1  # google-genai without retry_options: one attempt


async def test_the_sdk_with_retries_configured_retries_a_429_and_a_503_itself(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    server = fault_server([*_failures(vendor), vendor.success()])
    provider = vendor.provider(server, sdk_retries=2)
    assert await _answer(provider, vendor) == vendor.success_text
    assert len(server.requests) == 3
    server.assert_all_served()


async def test_max_retries_0_sends_each_call_exactly_once(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    server = fault_server([*_failures(vendor), vendor.success()])
    provider = vendor.provider(server, sdk_retries=0)
    error = await _failure(provider, vendor)
    assert isinstance(error, robota.RateLimitError)
    assert error.recoverable is True  # the retry decision is left to the caller
    assert len(server.requests) == 1


async def test_disable_sdk_retries_leaves_exactly_one_attempt(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    """What a host that owns retries (a RetryPolicy, Temporal) calls: the SDK then never
    retries, whatever retries it was built with."""
    server = fault_server([*_failures(vendor), vendor.success()])
    provider = vendor.provider(server, sdk_retries=2)
    provider.disable_sdk_retries()
    error = await _failure(provider, vendor)
    assert isinstance(error, robota.RateLimitError)
    assert len(server.requests) == 1


@pytest.mark.parametrize("fault", ["error_in_stream", "reset_mid_stream"])
async def test_no_sdk_retries_a_failure_inside_a_200_stream(
    fault_server: FaultServer, vendor: Vendor, fault: str
) -> None:
    """With the SDK's retries on, a stream that fails after its 200 is still one request: a
    mid-stream failure is the caller's to retry (after telling its stream, issue 28)."""
    exchange = vendor.error_in_stream() if fault == "error_in_stream" else vendor.reset_mid_stream()
    server = fault_server([exchange, vendor.success()])
    error = await _failure(vendor.provider(server, sdk_retries=2), vendor)
    assert error.recoverable is True
    assert len(server.requests) == 1


async def test_which_sdk_retries_a_connection_reset_before_any_answer(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    """A reset before the status line is a request that may never have arrived: the openai
    and anthropic SDKs built with retries send it again. google-genai's ``retry_options``
    retry only timeouts and connect errors, not a read that was reset: the caller sees it."""
    server = fault_server([vendor.reset_before_answer(), vendor.success()])
    provider = vendor.provider(server, sdk_retries=2)
    if vendor.name == "gemini":
        error = await _failure(provider, vendor)
        assert isinstance(error, robota.NetworkError)
        assert error.recoverable is True  # a retry policy above the SDK may still retry it
        assert len(server.requests) == 1
    else:
        assert await _answer(provider, vendor) == vendor.success_text
        assert len(server.requests) == 2
