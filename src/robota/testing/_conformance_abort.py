"""The ``abort_mid_stream`` scenario: cancellation stops a provider promptly (S23, S15).

Two ways of cancelling reach an adapter (see :class:`~robota.Provider`): the run's signal, which
the adapter observes, and cancellation of the task awaiting it, which it must let propagate. The
kit checks both directly, then through a streamed :class:`~robota.Agent` run, then with a signal
that had aborted before the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

from robota.core import AbortController, AbortError, Agent, RunResult, UserMessage, is_abort
from robota.core.providers import ResponseDone, StreamEvent, TextDelta
from robota.testing._conformance_io import (
    TEXT_PROMPT,
    Limits,
    ScenarioFailed,
    being_cancelled,
    bounded,
    build_agent,
    build_request,
    close_stream,
    describe,
    discard_stream,
    last_assistant,
    next_event,
    open_stream,
    raw_next,
)
from robota.testing._conformance_target import ConformanceTarget

__all__ = ["check_abort_mid_stream"]

_ABORT_PROMPT: Final = "Count from 1 to 200, one number per line, with no other text."
_ABORT_REASON: Final = "conformance kit: abort after the first text delta"


async def _until_first_delta(
    what: str, stream: AsyncIterator[StreamEvent], limits: Limits
) -> TextDelta:
    while True:
        event = await next_event(what, stream, limits)
        if isinstance(event, TextDelta):
            return event
        if event is None or isinstance(event, ResponseDone):
            raise ScenarioFailed(
                f"{what} completed before any text delta arrived; this scenario needs a reply "
                "streamed in several chunks"
            )


def _slow_stream_hint(what: str) -> ScenarioFailed:
    return ScenarioFailed(
        f"{what}: every event was ready at once, so nothing could be aborted mid-stream; script "
        "the abort_mid_stream response as several text chunks with pauses between them"
    )


async def _abort_direct(target: ConformanceTarget, limits: Limits) -> None:
    """Abort the signal after the first delta: the stream stops within ``abort_timeout``."""
    what = "chat_stream() aborted after its first text delta"
    controller = AbortController()
    request = build_request(target, [UserMessage(_ABORT_PROMPT)])
    stream = open_stream(
        what, lambda: target.provider.chat_stream(request, signal=controller.signal)
    )
    try:
        await _until_first_delta(what, stream, limits)
        controller.abort(AbortError(_ABORT_REASON))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limits.abort_timeout
        # One failure, one message: whether the deadline passes during a read (the timeout fires)
        # or between reads (a read returned late on a busy loop) depends only on timing.
        not_stopped = ScenarioFailed(
            f"{what} did not stop within {limits.abort_timeout:g} s after its signal aborted; "
            "an adapter must observe the signal (S23)"
        )
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise not_stopped
            try:
                event = await raw_next(stream, left)
            except ScenarioFailed:
                raise not_stopped from None
            except asyncio.CancelledError:
                if being_cancelled():
                    raise
                break  # an abort surfaced as CancelledError: accepted
            except Exception as exc:
                if is_abort(exc):
                    break
                raise ScenarioFailed(
                    f"{what} raised {describe(exc)} after the abort; an abort must surface as "
                    "AbortError (or CancelledError), never as another failure (S15)"
                ) from exc
            if event is None:
                break  # ended: the events it still yielded had already been received
    except BaseException:
        await discard_stream(stream)
        raise
    await close_stream(what, stream, limits)


async def _cancel_direct(target: ConformanceTarget, limits: Limits) -> None:
    """Cancel the task awaiting the next event: ``CancelledError`` must propagate (Provider)."""
    what = "chat_stream() whose reading task is cancelled mid-stream"
    request = build_request(target, [UserMessage(_ABORT_PROMPT)])
    stream = open_stream(what, lambda: target.provider.chat_stream(request))
    try:
        await _until_first_delta(what, stream, limits)
        while True:
            reader: asyncio.Future[Any] = asyncio.ensure_future(stream.__anext__())
            await asyncio.sleep(0)  # let the read start, so the cancel lands inside the adapter
            if reader.done():
                if reader.cancelled():
                    raise ScenarioFailed(
                        f"{what} raised CancelledError though nothing cancelled it"
                    )
                error = reader.exception()
                if isinstance(error, StopAsyncIteration) or (
                    error is None and isinstance(reader.result(), ResponseDone)
                ):
                    raise _slow_stream_hint(what)
                if error is not None:
                    raise ScenarioFailed(f"{what} raised {describe(error)}") from error
                continue
            reader.cancel()
            finished, _ = await asyncio.wait({reader}, timeout=limits.abort_timeout)
            if not finished:
                reader.add_done_callback(_forget)
                raise ScenarioFailed(
                    f"{what} did not finish within {limits.abort_timeout:g} s of being cancelled; "
                    "an adapter must let CancelledError propagate"
                )
            if reader.cancelled():
                break
            error = reader.exception()
            outcome = f"raised {describe(error)}" if error else f"returned {reader.result()!r}"
            raise ScenarioFailed(
                f"{what} {outcome} instead of propagating CancelledError; an adapter must let "
                "cancellation propagate (after releasing what it holds), never swallow it"
            )
    except BaseException:
        await discard_stream(stream)
        raise
    await close_stream(what, stream, limits)


def _forget(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved, so an abandoned read never logs as unhandled


def _history(agent: Agent) -> list[tuple[str, str, object]]:
    return [(m.id, m.state, m.content) for m in agent.history]


async def _abort_agent(target: ConformanceTarget, limits: Limits) -> None:
    """Abort a streamed agent run after its first delta: interrupted, then no late writes."""
    what = "Agent.run_stream() aborted after its first text delta"
    controller = AbortController()
    loop = asyncio.get_running_loop()
    first: list[str] = []
    aborted_at = 0.0
    async with build_agent(target) as agent:

        async def consume() -> RunResult[str]:
            nonlocal aborted_at
            async with agent.run_stream(_ABORT_PROMPT, signal=controller.signal) as stream:
                async for event in stream:
                    if isinstance(event, TextDelta) and not first:
                        first.append(event.text)
                        aborted_at = loop.time()
                        controller.abort(AbortError(_ABORT_REASON))
                return await stream.result()

        result = await bounded(what, consume, limits.call_timeout)
        took = loop.time() - aborted_at
        if not first:
            raise ScenarioFailed(f"{what}: the run streamed no text delta")
        if result.status != "interrupted":
            raise _slow_stream_hint(f"{what} (the run completed before the abort took effect)")
        if took > limits.abort_timeout:
            raise ScenarioFailed(
                f"{what} took {took:.2f} s to return after the abort (limit "
                f"{limits.abort_timeout:g} s)"
            )
        committed = last_assistant(result.messages)
        if committed is None or committed.state != "interrupted":
            state = None if committed is None else committed.state
            raise ScenarioFailed(
                f"{what}: the committed reply's state is {state!r}, not 'interrupted' (S23)"
            )
        if not committed.content.startswith(first[0]):
            raise ScenarioFailed(
                f"{what}: the committed reply {committed.content!r} lost the text streamed "
                f"before the abort ({first[0]!r}) (S23)"
            )
        before = _history(agent)
        await asyncio.sleep(limits.settle_delay)
        after = _history(agent)
        if after != before:
            raise ScenarioFailed(
                f"{what}: history changed {limits.settle_delay:g} s after the interrupted run "
                f"returned ({len(before)} -> {len(after)} messages): a late write (S23)"
            )


async def _abort_before(target: ConformanceTarget, limits: Limits) -> None:
    """An already-aborted signal: no content, an abort error, promptly (S23, S15)."""
    controller = AbortController()
    controller.abort(AbortError("conformance kit: aborted before the call"))
    request = build_request(target, [UserMessage(TEXT_PROMPT)])
    what = "chat_stream() with an already-aborted signal"
    stream = open_stream(
        what, lambda: target.provider.chat_stream(request, signal=controller.signal)
    )
    try:
        event = await _expect_abort(what, lambda: raw_next(stream, limits.abort_timeout), limits)
        if event is not None:
            raise ScenarioFailed(
                f"{what} yielded {event!r}; an aborted call must raise AbortError before sending "
                "anything (S23)"
            )
    finally:
        await discard_stream(stream)
    what = "chat() with an already-aborted signal"
    outcome = await _expect_abort(
        what, lambda: target.provider.chat(request, signal=controller.signal), limits
    )
    if outcome is not None:
        raise ScenarioFailed(f"{what} returned {outcome!r}; an aborted call must raise AbortError")


async def _expect_abort(what: str, call: Callable[[], Awaitable[Any]], limits: Limits) -> Any:
    """``call()``'s value, or ``None`` when it raised an abort; another failure fails."""
    scope = asyncio.timeout(limits.abort_timeout)
    try:
        async with scope:
            return await call()
    except asyncio.CancelledError:
        if being_cancelled():
            raise
        return None
    except ScenarioFailed:
        raise ScenarioFailed(
            f"{what} did not stop within {limits.abort_timeout:g} s (S23)"
        ) from None
    except Exception as exc:
        if isinstance(exc, TimeoutError) and scope.expired():
            raise ScenarioFailed(
                f"{what} did not stop within {limits.abort_timeout:g} s (S23)"
            ) from None
        if is_abort(exc):
            return None
        raise ScenarioFailed(
            f"{what} raised {describe(exc)}; an abort must surface as AbortError (S15)"
        ) from exc


async def check_abort_mid_stream(target: ConformanceTarget, limits: Limits) -> None:
    """Cancellation stops the provider promptly and leaves no late writes (S23, S15)."""
    await _abort_direct(target, limits)
    await _cancel_direct(target, limits)
    await _abort_agent(target, limits)
    await _abort_before(target, limits)  # last: it may never reach the transport
