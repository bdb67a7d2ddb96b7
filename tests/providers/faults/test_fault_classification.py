"""S42 under real faults: every vendor's failure becomes the right robota error (issue 28).

Each test drives a Robota adapter built on the vendor's real SDK (``max_retries=0``: one attempt)
against a real HTTP server on 127.0.0.1 that answers in that vendor's wire format: a 429 with
and without a retry hint, a 500 and a 503, an error event inside a 200 stream, a TCP reset after
some text was streamed, and a slow first byte past the adapter's timeout. What a retry policy
and a fallback decide from is checked on each: the class, ``recoverable`` (another attempt can
succeed), ``switchable`` (another model could serve it, per the adapter's S42 table),
``retry_after``, the HTTP status and the vendor's error type.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

import robota
from providers.faults.vendors import RETRY_HINTS, VENDORS, FaultServer, RetryHint, Vendor, request
from robota import Provider, StreamEvent, TextDelta

SURFACES = pytest.mark.parametrize("surface", ["chat", "stream"])
TIMEOUT = 0.25
"""Seconds the adapters wait in the timeout tests; the server holds its answer longer."""
SLOW = 1.0


async def _delivered(events: AsyncIterator[StreamEvent], text: list[str]) -> None:
    """Drain a stream, keeping the text the caller saw before any error."""
    async for event in events:
        if isinstance(event, TextDelta):
            text.append(event.text)  # noqa: PERF401 - the partial text is the point


async def _failure(
    provider: Provider, vendor: Vendor, *, surface: str = "stream", seen: list[str] | None = None
) -> robota.ProviderError:
    seen = [] if seen is None else seen

    async def call() -> None:
        if surface == "chat":
            await provider.chat(request(vendor))
        else:
            await _delivered(provider.chat_stream(request(vendor)), seen)

    try:
        with pytest.raises(robota.ProviderError) as caught:
            await call()
    finally:
        await provider.aclose()
    error = caught.value
    assert error.provider == provider.name
    # The model the call was addressed to, or (once the stream named it) the one that answered.
    assert error.model is not None
    assert error.model.startswith(vendor.model)
    return error


def _hint_cases() -> list[Any]:
    return [
        pytest.param(name, hint, id=f"{name}-{hint}")
        for name, hints in RETRY_HINTS.items()
        for hint in hints
    ]


@SURFACES
@pytest.mark.parametrize(("name", "hint"), _hint_cases())
async def test_s42_a_429_is_a_recoverable_switchable_rate_limit_with_its_retry_after(
    fault_server: FaultServer, name: str, hint: RetryHint, surface: str
) -> None:
    vendor = VENDORS[name]
    server = fault_server([vendor.rate_limited(hint, seconds=2.0)])
    error = await _failure(vendor.provider(server), vendor, surface=surface)
    assert type(error) is robota.RateLimitError
    assert error.retry_after == (None if hint == "none" else 2.0)
    assert error.status == 429
    assert error.vendor_type == vendor.status_types[429]
    assert error.recoverable is True
    assert error.switchable is True
    assert len(server.requests) == 1  # max_retries=0: the SDK sent it once


async def test_s42_a_429_retry_after_given_as_an_http_date_is_seconds_from_now(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    server = fault_server([vendor.rate_limited("retry-after-date", seconds=60.0)])
    error = await _failure(vendor.provider(server), vendor)
    assert isinstance(error, robota.RateLimitError)
    assert error.retry_after is not None
    # The date has whole seconds, and the script was built before the SDK was even loaded.
    assert 45.0 <= error.retry_after <= 60.0


@SURFACES
@pytest.mark.parametrize("status", [500, 503])
async def test_s42_a_5xx_is_a_recoverable_switchable_provider_error(
    fault_server: FaultServer, vendor: Vendor, status: int, surface: str
) -> None:
    server = fault_server([vendor.status_error(status)])
    error = await _failure(vendor.provider(server), vendor, surface=surface)
    assert type(error) is robota.ProviderError
    assert error.status == status
    assert error.vendor_type == vendor.status_types[status]
    assert error.recoverable is True
    assert error.switchable is True
    assert len(server.requests) == 1


async def test_s42_anthropic_529_overloaded_is_recoverable_and_switchable(
    fault_server: FaultServer,
) -> None:
    vendor = VENDORS["anthropic"]
    server = fault_server([vendor.status_error(529)])
    error = await _failure(vendor.provider(server), vendor)
    assert type(error) is robota.ProviderError
    assert (error.status, error.vendor_type) == (529, "overloaded_error")
    assert error.recoverable is True
    assert error.switchable is True


async def test_s42_an_error_event_inside_a_200_stream_is_recoverable_after_the_text_it_followed(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    server = fault_server([vendor.error_in_stream()])
    seen: list[str] = []
    error = await _failure(vendor.provider(server), vendor, seen=seen)
    assert "".join(seen) == vendor.prefix_text  # what the caller saw before the failure
    assert isinstance(error, robota.ProviderError)
    assert not isinstance(error, robota.NetworkError)
    assert error.vendor_type == vendor.stream_error_type
    # Gemini's and OpenRouter's stream error objects name an HTTP code; the others have none.
    assert error.status == vendor.stream_error_status
    assert error.recoverable is True  # an overloaded or failing server: another attempt may pass
    assert error.switchable is True
    assert len(server.requests) == 1


async def test_s42_a_connection_reset_mid_stream_is_recoverable_not_switchable(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    server = fault_server([vendor.reset_mid_stream()])
    seen: list[str] = []
    error = await _failure(vendor.provider(server), vendor, seen=seen)
    assert "".join(seen) == vendor.prefix_text  # the deltas delivered before the reset stay
    assert type(error) is robota.NetworkError
    assert error.vendor_type == "connection_error"
    assert error.status is None
    assert error.recoverable is True
    assert error.switchable is False  # S42: the cause is between us and the vendor
    causes = []
    cause: BaseException | None = error
    while cause is not None:
        causes.append(cause)
        cause = cause.__cause__ or cause.__context__
    assert any(isinstance(c, ConnectionResetError) for c in causes), causes  # a real RST
    assert len(server.requests) == 1


@SURFACES
async def test_s42_a_connection_reset_before_any_answer_is_recoverable_not_switchable(
    fault_server: FaultServer, vendor: Vendor, surface: str
) -> None:
    server = fault_server([vendor.reset_before_answer()])
    error = await _failure(vendor.provider(server), vendor, surface=surface)
    assert type(error) is robota.NetworkError
    assert error.vendor_type == "connection_error"
    assert error.status is None
    assert error.recoverable is True
    assert error.switchable is False
    assert len(server.requests) == 1


@SURFACES
async def test_s42_a_slow_first_byte_past_the_timeout_is_a_recoverable_timeout(
    fault_server: FaultServer, vendor: Vendor, surface: str
) -> None:
    server = fault_server([vendor.slow_first_byte(SLOW)])
    error = await _failure(vendor.provider(server, timeout=TIMEOUT), vendor, surface=surface)
    assert type(error) is robota.NetworkError
    assert error.vendor_type == "timeout"
    assert error.status is None
    assert error.recoverable is True
    assert error.switchable is True  # S42: a slower model; another may answer
    assert len(server.requests) == 1


async def test_s42_a_stream_that_stalls_after_its_headers_is_a_recoverable_timeout(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    server = fault_server([vendor.stalled_stream(SLOW)])
    error = await _failure(vendor.provider(server, timeout=TIMEOUT), vendor)
    assert type(error) is robota.NetworkError
    assert error.vendor_type == "timeout"
    assert error.recoverable is True
    assert error.switchable is True


async def test_a_slow_first_byte_within_the_timeout_is_an_answer(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    server = fault_server([vendor.slow_first_byte(0.1)])
    provider = vendor.provider(server, timeout=5.0)
    text: list[str] = []
    try:
        await _delivered(provider.chat_stream(request(vendor)), text)
    finally:
        await provider.aclose()
    assert "".join(text) == vendor.success_text


async def test_a_script_of_failures_then_the_recorded_success_answers_in_order(
    fault_server: FaultServer, vendor: Vendor
) -> None:
    """What a retry test builds on: each call gets the next scripted answer."""
    hint: RetryHint = "retry-info" if vendor.name == "gemini" else "retry-after"
    server = fault_server(
        [vendor.rate_limited(hint, seconds=2.0), vendor.status_error(503), vendor.success()]
    )
    provider = vendor.provider(server)
    try:
        with pytest.raises(robota.RateLimitError) as first:
            await _delivered(provider.chat_stream(request(vendor)), [])
        with pytest.raises(robota.ProviderError) as second:
            await _delivered(provider.chat_stream(request(vendor)), [])
        text: list[str] = []
        await _delivered(provider.chat_stream(request(vendor)), text)
    finally:
        await provider.aclose()
    assert first.value.retry_after == 2.0
    assert second.value.status == 503
    assert "".join(text) == vendor.success_text
    server.assert_all_served()
