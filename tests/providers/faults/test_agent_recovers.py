"""Issue 28 end to end: an Agent with a RetryPolicy recovers from every fault, on every vendor.

The adapter is the real one on the vendor's real SDK, built with ``max_retries=0`` (the policy is
the one owner of retries), pointed at a real HTTP server on 127.0.0.1 that answers the first
request with a fault in that vendor's wire format and the second with the vendor's recorded
streamed success. Each case checks what the issue promises: exactly the policy's attempts reach
the server, the answer is the retried reply, history holds it once and never the failed
attempt's partial text (S34), a stream that had delivered text is told (``RetryStarted``), and a
429's wait is honoured but capped (``max_retry_after``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import robota
from providers.faults.vendors import FaultServer, Vendor
from providers.replay import Exchange

POLICY = robota.RetryPolicy(
    attempts=2, initial_delay=0.01, max_delay=0.05, jitter=0.0, max_retry_after=0.2
)
# Every attempt's deadline, the successful retry's included: 0.5 s let a loaded CI machine time
# out the retry of "slow first byte" (its fault holds the status line back 4 × this).
TIMEOUT = 2.0

FAULTS: dict[str, Callable[[Vendor], Exchange]] = {
    "429 without a hint": lambda v: v.rate_limited("none"),
    "429 with Retry-After": lambda v: v.rate_limited("retry-after", seconds=30),
    "500": lambda v: v.status_error(500),
    "503": lambda v: v.status_error(503),
    "error inside a 200 stream": lambda v: v.error_in_stream(),
    "reset mid-stream": lambda v: v.reset_mid_stream(),
    "reset before any answer": lambda v: v.reset_before_answer(),
    "slow first byte": lambda v: v.slow_first_byte(TIMEOUT * 4),
}
MID_STREAM = {"error inside a 200 stream", "reset mid-stream"}


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_S42_a_retry_policy_recovers_from_each_fault_under_the_real_sdk(
    vendor: Vendor, fault: str, fault_server: FaultServer
) -> None:
    server = fault_server([FAULTS[fault](vendor), vendor.success()])
    provider = vendor.provider(server, sdk_retries=0, timeout=TIMEOUT)
    recorder = robota.RecordingEventService()
    agent = robota.Agent(
        provider=provider, model=vendor.model, retry=POLICY, event_service=recorder
    )
    try:
        stream = agent.run_stream("hi")
        events = [event async for event in stream]
        result = await stream.result()
    finally:
        await agent.aclose()
        await provider.aclose()
    assert len(server.requests) == 2  # the policy's two attempts, nothing from the SDK
    assert result.status == "complete"
    assert result.text == vendor.success_text
    replies = [m for m in agent.history if isinstance(m, robota.AssistantMessage)]
    assert [m.content for m in replies] == [vendor.success_text]  # S34: one reply, the retried
    (told,) = [e for e in events if isinstance(e, robota.RetryStarted)]
    assert told.attempt == 2
    assert told.error.recoverable
    assert told.delay <= POLICY.max_retry_after  # a 30 s Retry-After is capped
    if fault in MID_STREAM:
        # The caller saw the first text event's text, and is told it is not the answer.
        assert told.discarded == vendor.prefix_text
    else:
        assert told.discarded == ""
    (retry,) = [e for e in recorder.events if e.name == robota.EventNames.MODEL_RETRY]
    assert retry.data["attempt"] == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_S42_an_input_error_is_not_retried_under_the_real_sdk(
    vendor: Vendor, status: int, fault_server: FaultServer
) -> None:
    body = vendor.error_body(status, None, "refused by the test")
    server = fault_server([Exchange.json(status, body), vendor.success()])
    provider = vendor.provider(server, sdk_retries=0, timeout=TIMEOUT)
    agent = robota.Agent(provider=provider, model=vendor.model, retry=POLICY)
    try:
        with pytest.raises(robota.ProviderError) as caught:
            await agent.run("hi")
    finally:
        await agent.aclose()
        await provider.aclose()
    assert caught.value.status == status
    assert len(server.requests) == 1


async def test_S42_a_503_with_retry_after_keeps_the_wait_and_the_policy_honours_it(
    vendor: Vendor, fault_server: FaultServer
) -> None:
    # Not only a 429: a 503 (or Anthropic's 529) may say how long to wait, and the wait is kept
    # on the ProviderError (retry_after) and honoured by the policy, capped.
    fault = vendor.status_error(503, {"retry-after": "0.15"})
    server = fault_server([fault, vendor.success()])
    provider = vendor.provider(server, sdk_retries=0, timeout=TIMEOUT)
    agent = robota.Agent(provider=provider, model=vendor.model, retry=POLICY)
    try:
        stream = agent.run_stream("hi")
        events = [event async for event in stream]
        await stream.result()
    finally:
        await agent.aclose()
        await provider.aclose()
    (told,) = [e for e in events if isinstance(e, robota.RetryStarted)]
    assert told.error.retry_after == pytest.approx(0.15)
    assert told.delay == pytest.approx(0.15)
