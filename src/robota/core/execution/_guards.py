"""The loop's guards and their model-facing texts (S37, S39).

Every string here may be placed in front of a model, so each defaults to neutral mechanism text
and has an override seam on the :class:`~robota.Agent` (S35).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final, final

from robota.core._context import CONTEXT_GUARD_THRESHOLD, ContextUsage
from robota.core._messages import ToolCall
from robota.core.tools._executor import ToolCallOutcome

__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "DEFAULT_SUMMARY_FALLBACK",
    "DEFAULT_SUMMARY_INSTRUCTION",
    "DEFAULT_UNAVAILABLE_TOOLS_INSTRUCTION",
    "TOOL_RESULT_BUDGET",
    "UNAVAILABLE_TOOL_ROUNDS",
    "ContextLimitMessage",
    "SameInputCounter",
    "default_context_limit_message",
    "omitted_result_notice",
]

DEFAULT_MAX_ROUNDS: Final = 10
"""Model/tool rounds one run may take before the forced summary (S39)."""

UNAVAILABLE_TOOL_ROUNDS: Final = 2
"""Consecutive rounds calling unavailable tools after which the loop forces a final call (S37)."""

TOOL_RESULT_BUDGET: Final = 0.8
"""The share of the context window tool results may fill; past it they become notices (S39)."""

DEFAULT_SUMMARY_INSTRUCTION: Final = (
    "The tool-call budget for this turn is used up. Do not call any tools. Reply with what has "
    "been done and found so far, and what remains unfinished."
)
"""The per-call instruction of the forced summary (S39)."""

DEFAULT_SUMMARY_FALLBACK: Final = (
    "The tool-call budget for this turn was used up before a final answer was produced."
)
"""The run's output when the forced summary produces no text (S39)."""

DEFAULT_UNAVAILABLE_TOOLS_INSTRUCTION: Final = (
    "These tool calls were not executed because no tool of that name is available: {calls}. "
    "Do not call any tools. Reply using only what you already have."
)
"""The per-call instruction of the final call forced by repeated unavailable tools (S37);
``{calls}`` is replaced by the calls that never ran."""

ContextLimitMessage = Callable[[ContextUsage], str]
"""Builds the diagnostic committed when the pre-send guard blocks a request (S39 seam)."""


def default_context_limit_message(usage: ContextUsage) -> str:
    """The neutral diagnostic for a request the context guard did not send."""
    if usage.window is None:  # the guard only blocks against a known window; kept total
        return (
            f"The request was not sent: it needs about {usage.tokens:,} tokens. "
            "Shorten the conversation or start a new one."
        )
    return (
        f"The request was not sent: it needs about {usage.tokens:,} tokens, more than "
        f"{int(usage.window * CONTEXT_GUARD_THRESHOLD):,} of the model's "
        f"{usage.window:,}-token context window. "
        "Shorten the conversation or start a new one."
    )


def describe_calls(calls: Iterable[ToolCall]) -> str:
    """``name (n times)`` for each distinct tool name, in first-seen order."""
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.name] = counts.get(call.name, 0) + 1
    return ", ".join(f"{name!r}" + (f" ({n} times)" if n > 1 else "") for name, n in counts.items())


@final
class SameInputCounter:
    """Counts byte-identical invocations of each tool within one run (S39)."""

    __slots__ = ("_counts", "limit")

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._counts: dict[tuple[str, str], int] = {}

    def admit(self, calls: Iterable[ToolCall]) -> ToolCall | None:
        """Count ``calls``; return the first one past the limit, or ``None``."""
        offending: ToolCall | None = None
        for call in calls:
            key = (call.name, call.arguments)
            count = self._counts.get(key, 0) + 1
            self._counts[key] = count
            if self.limit is not None and count > self.limit and offending is None:
                offending = call
        return offending


def omitted_result_notice(outcome: ToolCallOutcome) -> str:
    """The bounded notice that replaces a result the context budget has no room for (S39).

    It tells apart a completed action (its effects happened; do not repeat it), a call that was
    never executed, and a failure whose effects may be partial — and keeps the tool's source.
    """
    call = outcome.call
    name = call.name if call is not None else "the tool"
    source = f" (source: {outcome.source})" if outcome.source else ""
    if outcome.status == "completed":
        return (
            f"[Result omitted: no room left in the context window. The call to {name!r}{source} "
            "completed and its effects happened; do not repeat it. Ask for a smaller part of the "
            "result if you need it.]"
        )
    if outcome.started:
        return (
            f"[Result omitted: no room left in the context window. The call to {name!r}{source} "
            "failed while running; its effects may be partial or uncertain. Check the current "
            "state before trying again.]"
        )
    return (
        f"[Result omitted: no room left in the context window. The call to {name!r}{source} was "
        f"not executed ({outcome.status.replace('_', ' ')}).]"
    )
