"""The loop's guards and their model-facing texts (S37, S39).

Every string here may be placed in front of a model; the texts live in
:class:`~robota.ModelTexts`, the override seam (S35).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, final

from robota.core._messages import ToolCall
from robota.core._texts import ModelTexts, render
from robota.core.tools._executor import ToolCallOutcome

__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "TOOL_RESULT_BUDGET",
    "UNAVAILABLE_TOOL_ROUNDS",
    "SameInputCounter",
    "omitted_result_notice",
]

DEFAULT_MAX_ROUNDS: Final = 10
"""Model/tool rounds one run may take before the forced summary (S39)."""

UNAVAILABLE_TOOL_ROUNDS: Final = 2
"""Consecutive rounds calling unavailable tools after which the loop forces a final call (S37)."""

_DEFAULT_TEXTS: Final = ModelTexts()

TOOL_RESULT_BUDGET: Final = 0.8
"""The share of the context window tool results may fill; past it they become notices (S39)."""


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


def omitted_result_notice(outcome: ToolCallOutcome, texts: ModelTexts = _DEFAULT_TEXTS) -> str:
    """The bounded notice that replaces a result the context budget has no room for (S39).

    It tells apart a completed action (its effects happened; do not repeat it), a call that was
    never executed, and a failure whose effects may be partial — and keeps the tool's source.
    """
    call = outcome.call
    name = repr(call.name if call is not None else "the tool")
    source = f" (source: {outcome.source})" if outcome.source else ""
    if outcome.status == "completed":
        return render(texts.omitted_completed_notice, tool=name, source=source)
    if outcome.started:
        return render(texts.omitted_failed_notice, tool=name, source=source)
    status = outcome.status.replace("_", " ")
    return render(texts.omitted_unexecuted_notice, tool=name, source=source, status=status)
