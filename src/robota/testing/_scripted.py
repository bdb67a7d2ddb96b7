"""``ScriptedProvider``: a provider that answers from a script, for offline tests."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, final

from robota.core import AbortError, AbortSignal, MessagePart, RobotaError, TextPart, ToolCall, Usage
from robota.core.providers import (
    ChatRequest,
    ChatResponse,
    Provider,
    ProviderCapabilities,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    collect_stream,
)

__all__ = ["ScriptExhaustedError", "ScriptedProvider", "ScriptedTurn", "TurnLike"]

_CHUNKS = re.compile(r"\s*\S+\s*|\s+")


class ScriptExhaustedError(RobotaError, AssertionError):
    """The script had no turn left: the code under test made more model calls than expected.

    A :class:`~robota.RobotaError` (so the loop raises it as itself) and an ``AssertionError``
    (so test runners report it as a failed expectation).
    """

    default_code = "script_exhausted"
    default_category = "user"


@final
@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One scripted model response, with everything a test may want to control.

    Attributes:
        text: The reply text.
        tool_calls: ``(tool_name, args)`` pairs; ``args`` is a dict (sent as JSON) or a raw
            JSON string (to script malformed arguments).
        usage: The usage to report; default: a rough estimate (4 characters per token).
        model: The model to report as the one that answered; default: the requested one.
        delay: Seconds to wait before answering.
        error: Raised instead of answering.
        error_after_text: Raise ``error`` after ``text`` streamed instead of before it: a
            stream that breaks mid-reply (a connection reset, an ``overloaded_error`` event).
        continuation: Opaque continuation text to report (S26).
        finish_reason: The stop reason to report.
    """

    text: str = ""
    tool_calls: Sequence[tuple[str, Mapping[str, Any] | str]] = ()
    usage: Usage | None = None
    model: str | None = None
    delay: float = 0.0
    error: BaseException | None = None
    continuation: str | None = None
    finish_reason: str | None = None
    error_after_text: bool = False


TurnLike: TypeAlias = str | list[tuple[str, Mapping[str, Any] | str]] | BaseException | ScriptedTurn
"""A turn: reply text, a list of ``(tool_name, args)`` calls, an exception to raise, or a
:class:`ScriptedTurn`."""


def _as_turn(item: TurnLike) -> ScriptedTurn:
    if isinstance(item, ScriptedTurn):
        return item
    if isinstance(item, str):
        return ScriptedTurn(text=item)
    if isinstance(item, BaseException):
        return ScriptedTurn(error=item)
    if isinstance(item, list):
        for entry in item:
            candidate: object = entry  # untyped test code can pass anything
            if not (
                isinstance(candidate, tuple)
                and len(candidate) == 2
                and isinstance(candidate[0], str)
            ):
                raise TypeError(
                    f"a tool-call turn is a list of (tool_name, args) tuples; got {entry!r}"
                )
        return ScriptedTurn(tool_calls=tuple(item))
    raise TypeError(
        "a scripted turn is a str, a list of tool calls, an exception or ScriptedTurn; "
        f"got {item!r}"
    )


def _text(content: str | tuple[MessagePart, ...]) -> str:
    if isinstance(content, str):
        return content
    return "\n\n".join(p.text if isinstance(p, TextPart) else f"[{p.kind}]" for p in content)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


class ScriptedProvider(Provider):
    """Answers each request with the next scripted turn and records what it received.

    Args:
        turns: The script, in order (see :data:`TurnLike`).
        chunk_delay: With ``> 0``, text streams word by word with this pause between chunks,
            so a test can abort mid-stream.
        name: The provider name.
        capabilities: A capability table to publish (default: none).
        propagates_trace: Declare trace propagation (S27, default ``True``): in a traced run
            each request it receives carries ``.trace`` (its ``traceparent``). ``False`` makes it
            a provider that declares none, so it receives nothing.

    Attributes:
        requests: Every :class:`~robota.core.providers.ChatRequest` received, in order (each
            with ``.messages``, ``.tools``, ``.tool_choice``, ``.model``, ``.trace``).
        aborted_calls: How many calls were cancelled mid-response.
    """

    def __init__(
        self,
        turns: Iterable[TurnLike],
        *,
        chunk_delay: float = 0.0,
        name: str = "scripted",
        capabilities: ProviderCapabilities | None = None,
        propagates_trace: bool = True,
    ) -> None:
        self._turns = [_as_turn(turn) for turn in turns]
        self._propagates = bool(propagates_trace)
        self._next = 0
        self._chunk_delay = chunk_delay
        self._name = name
        self._capabilities = capabilities
        self._aborted = 0
        self.requests: list[ChatRequest] = []
        self.closed = False

    @property
    def name(self) -> str:
        """The provider name."""
        return self._name

    @property
    def aborted_calls(self) -> int:
        """Calls cancelled before their response completed."""
        return self._aborted

    @property
    def remaining(self) -> int:
        """Scripted turns not used yet."""
        return len(self._turns) - self._next

    def capabilities(self) -> ProviderCapabilities | None:
        """The table given at construction, if any."""
        return self._capabilities

    def propagates_trace_context(self) -> bool:
        """As given at construction (S27); it sends nothing anywhere, it records."""
        return self._propagates

    def assert_complete(self) -> None:
        """Fail unless every scripted turn was used."""
        if self.remaining:
            raise AssertionError(
                f"ScriptedProvider {self._name!r}: {self.remaining} of {len(self._turns)} scripted "
                f"turns were never requested (only {self._next} calls were made)"
            )

    def _take(self, request: ChatRequest) -> ScriptedTurn:
        self.requests.append(request)
        if self._next >= len(self._turns):
            last = _text(request.messages[-1].content) if request.messages else ""
            raise ScriptExhaustedError(
                f"ScriptedProvider {self._name!r} has no turn left for request "
                f"#{len(self.requests)} (the script has {len(self._turns)} turns; the request's "
                f"last message: {last[:120]!r}). Add a turn to the script, or check why the "
                "code made this extra call."
            )
        turn = self._turns[self._next]
        self._next += 1
        return turn

    async def chat(
        self, request: ChatRequest, *, signal: AbortSignal | None = None
    ) -> ChatResponse:
        """The next turn as a complete response."""
        return await collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: ChatRequest, *, signal: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        """The next turn as stream events."""
        turn = self._take(request)
        try:
            if signal is not None:
                signal.throw_if_aborted()
            if turn.delay:
                await asyncio.sleep(turn.delay)
            if turn.error is not None and not turn.error_after_text:
                raise turn.error
            if turn.text:
                if self._chunk_delay > 0:
                    for index, chunk in enumerate(_CHUNKS.findall(turn.text)):
                        if index:
                            await asyncio.sleep(self._chunk_delay)
                        if signal is not None:
                            signal.throw_if_aborted()
                        yield TextDelta(chunk)
                else:
                    yield TextDelta(turn.text)
            if turn.error is not None:
                raise turn.error
            arguments_text = ""
            for index, (tool_name, args) in enumerate(turn.tool_calls):
                arguments = args if isinstance(args, str) else json.dumps(args)
                arguments_text += arguments
                # Ids restart every turn, as some vendors' do: ids are not unique (S36).
                yield ToolCallReady(ToolCall(f"call_{index}", tool_name, arguments))
            usage = turn.usage or Usage.from_counts(
                prompt=sum(_estimate_tokens(_text(m.content)) for m in request.messages),
                completion=_estimate_tokens(turn.text) + _estimate_tokens(arguments_text),
            )
            yield ResponseDone(
                model=turn.model or request.model,
                usage=usage,
                finish_reason=turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop"),
                continuation=turn.continuation,
            )
        except (asyncio.CancelledError, GeneratorExit, AbortError):
            self._aborted += 1
            raise

    async def aclose(self) -> None:
        """Mark the provider closed (tests check ownership rules with it)."""
        self.closed = True

    def __repr__(self) -> str:
        return f"<ScriptedProvider {self._name!r} {self._next}/{len(self._turns)} turns used>"
