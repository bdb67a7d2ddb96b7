"""Context-window accounting (S31, S39, S13).

How many tokens will the next request occupy? The provider's own report is the best answer, but
it arrives only with a completed response and covers only what that request contained. The rule
(S31):

* trust the latest provider report at a completed response (its prompt plus its completion: the
  context as it stood once that reply was in it),
* add the *estimated* size of every message appended after it,
* never go below the estimate of the serialised history, nor below an optional caller floor —
  a floor, never an extra charge — and never sum historical full-request reports.

The :class:`ContextLedger` keeps all of it incrementally: every history change costs O(1) (a trim
costs the messages it drops), so the per-round cost does not grow with the conversation.

Estimates are deliberately simple — about four characters per token plus a small per-message
overhead, and media parts by the rule in :mod:`robota.core._media_tokens` — and only ever used
where no report exists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, final

from robota.core._media_tokens import estimate_part_tokens
from robota.core._messages import AssistantMessage, Message, ToolMessage
from robota.core._parts import TextPart
from robota.core.providers._contract import ToolSpec

__all__ = [
    "CONTEXT_GUARD_THRESHOLD",
    "ContextLedger",
    "ContextUsage",
    "estimate_message_tokens",
    "estimate_text_tokens",
    "estimate_tools_tokens",
]

CONTEXT_GUARD_THRESHOLD: Final = 0.95
"""The share of the window above which a request is not sent (S39 pre-send guard)."""

_MESSAGE_OVERHEAD: Final = 4
_CALL_OVERHEAD: Final = 6


def estimate_text_tokens(text: str) -> int:
    """A rough token count of ``text``: about four characters per token, rounded up."""
    return (len(text) + 3) // 4


def estimate_message_tokens(message: Message) -> int:
    """A rough token count of one message as a request would carry it."""
    content = message.content
    if isinstance(content, str):
        tokens = _MESSAGE_OVERHEAD + estimate_text_tokens(content)
    else:
        tokens = _MESSAGE_OVERHEAD + sum(
            estimate_text_tokens(part.text)
            if isinstance(part, TextPart)
            else estimate_part_tokens(part)
            for part in content
        )
    if isinstance(message, ToolMessage):
        tokens += sum(estimate_part_tokens(part) for part in message.parts)
    elif isinstance(message, AssistantMessage):
        for call in message.tool_calls:
            tokens += (
                _CALL_OVERHEAD
                + estimate_text_tokens(call.name)
                + estimate_text_tokens(call.arguments)
            )
    return tokens


def estimate_tools_tokens(tools: Iterable[ToolSpec]) -> int:
    """A rough token count of the tool schemas offered on a request."""
    total = 0
    for spec in tools:
        schema = json.dumps(spec.parameters, separators=(",", ":"), default=str)
        total += _CALL_OVERHEAD + estimate_text_tokens(spec.name + spec.description + schema)
    return total


@final
@dataclass(frozen=True, slots=True)
class ContextUsage:
    """How full a model's context window is.

    Attributes:
        tokens: Effective tokens the history occupies (S31 rule).
        window: The model's context window: the caller's, the server's report or the
            registered one; ``None`` when it is unknown (S13: no default is assumed).
        reported: Whether a provider report anchors ``tokens`` (else it is all estimate).
    """

    tokens: int
    window: int | None
    reported: bool

    @property
    def ratio(self) -> float | None:
        """``tokens / window``; ``None`` when the window is unknown."""
        if self.window is None:
            return None
        return self.tokens / self.window if self.window else 0.0


@final
class ContextLedger:
    """The incremental S31 account of one conversation store (owned and fed by the store)."""

    # No per-message list: a message's estimate is a pure function of it, so the rare writes that
    # remove messages (a new system head, a host-configured trim) estimate those again.
    __slots__ = ("_base", "_tail", "_total")

    def __init__(self) -> None:
        self._total = 0
        self._base: int | None = None
        self._tail = 0

    @property
    def estimated_tokens(self) -> int:
        """The estimate of the serialised history."""
        return self._total

    def effective_tokens(self, floor: int = 0) -> int:
        """Tokens the history occupies: ``max(report + later estimates, estimate, floor)``."""
        anchored = self._base + self._tail if self._base is not None else 0
        return max(anchored, self._total, floor)

    @property
    def reported(self) -> bool:
        """Whether a provider report currently anchors the count."""
        return self._base is not None

    # The store calls these, in step with its own lists.

    def appended(self, message: Message) -> None:
        estimate = estimate_message_tokens(message)
        self._total += estimate
        usage = message.usage if isinstance(message, AssistantMessage) else None
        if usage is not None and not usage.partial and usage.total_tokens > 0:
            # S31: the latest completed report is the new anchor; later messages add estimates.
            self._base = usage.prompt_tokens + usage.completion_tokens
            self._tail = 0
        else:
            self._tail += estimate

    def head_set(self, head: Message | None, *, old: Message | None) -> None:
        """The system head ``old`` (if any) was replaced by ``head`` or removed (``None``)."""
        if old is not None:
            self._total -= estimate_message_tokens(old)
        if head is not None:
            self._total += estimate_message_tokens(head)
        self._base = None  # the report no longer describes this history
        self._tail = 0

    def forget_report(self) -> None:
        """The anchoring report does not describe this history: estimate until the next one."""
        self._base = None
        self._tail = 0

    def dropped(self, messages: Iterable[Message]) -> None:
        """``messages`` (as :meth:`appended` saw them) were trimmed."""
        self._total -= sum(estimate_message_tokens(message) for message in messages)
        self._base = None
        self._tail = 0
