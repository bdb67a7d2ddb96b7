"""How the conformance kit talks to a provider: bounded calls, stream reading, clear failures.

Every provider call the kit makes goes through one of these helpers, so each is bounded by a
timeout and each failure becomes a :class:`ScenarioFailed` whose message names the call, the
exception's full type and what the contract wanted instead. Cancellation of the kit's own task
always propagates (STYLE: control-flow signals are not errors).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar, final

from robota.core import Agent, AssistantMessage, Message, Tool, ToolCall
from robota.core.providers import (
    ChatRequest,
    ResponseDone,
    ResponseFormat,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    ToolChoice,
    ToolSpec,
)
from robota.testing._conformance_target import ConformanceTarget

__all__ = [
    "AGENT_ROUNDS",
    "TEXT_PROMPT",
    "Collected",
    "Limits",
    "ScenarioFailed",
    "being_cancelled",
    "bounded",
    "build_agent",
    "build_request",
    "check_text_reply",
    "close_stream",
    "collect",
    "describe",
    "discard_stream",
    "last_assistant",
    "next_event",
    "offered_tools",
    "open_stream",
    "output_schema",
    "plain_json",
    "raise_for_failures",
    "raw_next",
]

T = TypeVar("T")

TEXT_PROMPT: Final = "What is the capital of France? Answer in one short sentence."
AGENT_ROUNDS: Final = 4  # tool_round_trip's agent needs two rounds; the rest are headroom


class ScenarioFailed(Exception):
    """A conformance check failed; the message says which check and why."""


@final
@dataclass(frozen=True, slots=True)
class Limits:
    """The kit's time bounds (see :func:`robota.testing.run_provider_conformance`)."""

    call_timeout: float
    abort_timeout: float
    settle_delay: float


def raise_for_failures(title: str, failures: Sequence[object], not_run: Sequence[str]) -> None:
    """Raise ``AssertionError`` listing ``failures`` under ``title``; nothing when there are none.

    What was not run is named too, so a green test never hides it (both conformance kits).
    """
    if not failures:
        return
    lines = [f"{title}:"]
    lines.extend(f"  - {failure}" for failure in failures)
    if not_run:
        lines.append(f"  (not run: {', '.join(not_run)})")
    raise AssertionError("\n".join(lines))


def describe(error: BaseException) -> str:
    """``module.Type: message`` — the full type, so a leaked SDK exception is recognisable."""
    kind = type(error)
    module = "" if kind.__module__ == "builtins" else f"{kind.__module__}."
    text = str(error)
    return f"{module}{kind.__qualname__}: {text}" if text else f"{module}{kind.__qualname__}"


def being_cancelled() -> bool:
    """Whether the kit's own task is being cancelled (then ``CancelledError`` must propagate)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def bounded(what: str, call: Callable[[], Awaitable[T]], seconds: float) -> T:
    """Await ``call()`` within ``seconds``; any failure becomes a :class:`ScenarioFailed`."""
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await call()
    except ScenarioFailed:
        raise
    except TimeoutError as exc:
        if scope.expired():
            raise ScenarioFailed(f"{what} did not finish within {seconds:g} s") from None
        raise ScenarioFailed(f"{what} raised {describe(exc)}") from exc
    except asyncio.CancelledError:
        if being_cancelled():
            raise
        raise ScenarioFailed(
            f"{what} raised CancelledError though nothing cancelled it; report a failure as "
            "robota.ProviderError and an abort as robota.AbortError"
        ) from None
    except Exception as exc:
        raise ScenarioFailed(f"{what} raised {describe(exc)}") from exc


def open_stream(
    what: str, start: Callable[[], AsyncIterator[StreamEvent]]
) -> AsyncIterator[StreamEvent]:
    """Call ``chat_stream`` (a plain method may raise before returning an iterator)."""
    try:
        return start()
    except Exception as exc:
        raise ScenarioFailed(f"{what} raised {describe(exc)} before returning a stream") from exc


async def raw_next(stream: AsyncIterator[StreamEvent], seconds: float) -> StreamEvent | None:
    """The next event, ``None`` at the end; raises what the stream raises.

    Raises:
        ScenarioFailed: nothing arrived within ``seconds`` (the pending read is cancelled).
    """
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await stream.__anext__()
    except StopAsyncIteration:
        return None
    except TimeoutError:
        if scope.expired():
            raise ScenarioFailed(f"no stream event arrived within {seconds:g} s") from None
        raise


async def next_event(
    what: str, stream: AsyncIterator[StreamEvent], limits: Limits
) -> StreamEvent | None:
    """The next event of ``stream`` (``None`` at its end), checked to be a stream event."""

    async def read() -> StreamEvent | None:
        try:
            return await stream.__anext__()
        except StopAsyncIteration:
            return None

    event = await bounded(what, read, limits.call_timeout)
    if event is not None and not isinstance(event, (TextDelta, ToolCallReady, ResponseDone)):
        raise ScenarioFailed(
            f"{what} yielded {event!r}, which is not a TextDelta, ToolCallReady or ResponseDone"
        )
    if isinstance(event, TextDelta) and not isinstance(event.text, str):
        raise ScenarioFailed(f"{what} yielded a TextDelta whose text is not a str: {event!r}")
    if isinstance(event, ToolCallReady) and not isinstance(event.call, ToolCall):
        raise ScenarioFailed(f"{what} yielded a ToolCallReady without a ToolCall: {event!r}")
    return event


async def close_stream(what: str, stream: AsyncIterator[StreamEvent], limits: Limits) -> None:
    """Close ``stream`` the way the runtime does (``aclose`` when it has one); must not raise."""
    aclose = getattr(stream, "aclose", None)
    if callable(aclose):

        async def close() -> None:
            await aclose()

        await bounded(f"aclose() of {what}", close, limits.call_timeout)


async def discard_stream(stream: AsyncIterator[StreamEvent]) -> None:
    """Best-effort close after a failure was already found (the failure is what is reported)."""
    aclose = getattr(stream, "aclose", None)
    if callable(aclose):
        # A second fault while closing would only hide the first; cancellation still propagates.
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await aclose()


@final
@dataclass(slots=True)
class Collected:
    """A stream read to its end: its events, checked against the stream protocol."""

    events: list[StreamEvent] = field(default_factory=list)
    done: ResponseDone = field(default_factory=ResponseDone)

    @property
    def text(self) -> str:
        """The concatenated text deltas."""
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))

    @property
    def deltas(self) -> int:
        """How many text deltas arrived."""
        return sum(isinstance(e, TextDelta) for e in self.events)

    @property
    def calls(self) -> list[ToolCall]:
        """The tool calls, in the order they arrived."""
        return [e.call for e in self.events if isinstance(e, ToolCallReady)]


async def collect(
    what: str, start: Callable[[], AsyncIterator[StreamEvent]], limits: Limits
) -> Collected:
    """Read a whole ``chat_stream`` and hold it to the stream protocol (S28).

    Text deltas and tool calls, then exactly one :class:`ResponseDone`, last: after it the
    stream must end (the kit reads once more to see that it does). The stream is closed after.
    """
    stream = open_stream(what, start)
    got = Collected()
    try:
        while True:
            event = await next_event(f"{what} (event #{len(got.events) + 1})", stream, limits)
            if event is None:
                raise ScenarioFailed(
                    f"{what} ended without a ResponseDone after {len(got.events)} events; a "
                    "stream ends with exactly one ResponseDone"
                )
            if isinstance(event, ResponseDone):
                got.done = event
                break
            got.events.append(event)
        extra = await next_event(f"{what} (after its ResponseDone)", stream, limits)
        if extra is not None:
            raise ScenarioFailed(
                f"{what} yielded {extra!r} after its ResponseDone; ResponseDone must be the last "
                "event, exactly once"
            )
    except BaseException:
        await discard_stream(stream)
        raise
    await close_stream(what, stream, limits)
    return got


# ---------------------------------------------------------------------- requests and agents


def plain_json(value: object) -> Any:
    """A deep copy of a JSON-like value as plain dicts and lists.

    The kit's defaults are read-only mappings; an adapter serialising a request (``json.dumps``,
    ``httpx``) needs plain ones.
    """
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(item) for item in value]
    return value


def offered_tools(target: ConformanceTarget) -> tuple[ToolSpec, ...]:
    """The target's tools as sent: parameter schemas as plain JSON values."""
    return tuple(
        ToolSpec(spec.name, spec.description, plain_json(spec.parameters)) for spec in target.tools
    )


def output_schema(target: ConformanceTarget) -> dict[str, Any]:
    """The target's structured-output schema as a plain JSON value."""
    schema: dict[str, Any] = plain_json(target.output_schema)
    return schema


def build_request(
    target: ConformanceTarget,
    messages: Sequence[Message],
    *,
    tools: bool = False,
    tool_choice: ToolChoice = "auto",
    response_format: ResponseFormat | None = None,
) -> ChatRequest:
    """A request for ``target``'s model, offering its tools when ``tools``."""
    return ChatRequest(
        model=target.model,
        messages=tuple(messages),
        tools=offered_tools(target) if tools else (),
        tool_choice=tool_choice,
        response_format=response_format,
    )


def build_agent(target: ConformanceTarget, tools: Sequence[Tool] = ()) -> Agent:
    """An agent on ``target``'s provider (borrowed: the kit closes the provider itself)."""
    # "provider:model" always resolves to this provider, whatever the model name contains.
    return Agent(
        model=f"{target.provider.name}:{target.model}",
        provider=target.provider,
        tools=tools,
        max_rounds=AGENT_ROUNDS,
        name="conformance",
    )


def check_text_reply(what: str, text: object, target: ConformanceTarget) -> None:
    """A final text reply: non-empty, and exactly ``expected_text`` when the target states it."""
    if not isinstance(text, str) or not text.strip():
        raise ScenarioFailed(f"{what} produced no text (got {text!r}); a reply must carry text")
    if target.expected_text is not None and text != target.expected_text:
        raise ScenarioFailed(
            f"{what} produced {text!r}, but the target expects exactly {target.expected_text!r}"
        )


def last_assistant(messages: Sequence[Message]) -> AssistantMessage | None:
    """The last assistant message of ``messages``, if any."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message
    return None
