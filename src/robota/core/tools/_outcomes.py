"""The recorded end of a tool call (S34, S37, S38, S39), and the outcomes core writes itself.

Every committed call gets one :class:`ToolCallOutcome` whatever ended it — a body that ran, a
refusal, an unavailable tool, a call interrupted before it started (:func:`interrupted`) or one a
guard stopped before dispatch (:func:`not_dispatched`) — so history never holds a call without its
answer. :class:`ToolCallOutcome` is public as ``robota.ToolCallOutcome``; the tool execution
service (:mod:`robota.core.tools._executor`) produces the outcomes of the calls it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from robota.core._messages import ToolCall, ToolMessage
from robota.core._run_events import ToolOutcomeStatus
from robota.core._texts import ModelTexts, render
from robota.core.tools._tool import ToolResult

__all__ = ["ToolCallOutcome", "interrupted", "not_dispatched"]

_DEFAULT_TEXTS: Final = ModelTexts()


@final
@dataclass(frozen=True, slots=True)
class ToolCallOutcome:
    """The recorded end of one tool call.

    Attributes:
        call: The model's call (``None`` for a direct invocation).
        status: See :data:`~robota.core._run_events.ToolOutcomeStatus`.
        result: What the model is shown (``view`` included for display).
        call_id: The body's minted id when one was minted.
        started: Whether a body started.
        source: The host-declared source of the tool (S39 attribution), when it declared one.
    """

    call: ToolCall | None
    status: ToolOutcomeStatus
    result: ToolResult
    call_id: str | None = None
    started: bool = False
    source: str | None = None

    @property
    def executed(self) -> bool:
        """Whether a tool body ran (S37: an unavailable or refused call is not counted)."""
        return self.started

    def to_message(self) -> ToolMessage:
        """The history message answering the call (the display ``view`` is not in it)."""
        assert self.call is not None, "a direct invocation has no transcript message"
        return ToolMessage(
            self.result.content,
            tool_call_id=self.call.id,
            tool_name=self.call.name,
            is_error=self.result.is_error,
            parts=self.result.parts,
        )


def interrupted(call: ToolCall, texts: ModelTexts = _DEFAULT_TEXTS) -> ToolCallOutcome:
    """The outcome of a call that never started because the run was interrupted (S38)."""
    result = ToolResult(texts.interrupted_before_start, is_error=True)
    return ToolCallOutcome(call, "interrupted", result)


def not_dispatched(
    call: ToolCall, reason: str, texts: ModelTexts = _DEFAULT_TEXTS
) -> ToolCallOutcome:
    """The outcome of a committed call a guard stopped before dispatch (S39)."""
    text = render(texts.not_dispatched_result, reason=reason)
    return ToolCallOutcome(call, "not_dispatched", ToolResult(text, is_error=True))
