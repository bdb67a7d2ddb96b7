"""A session's automatic-compaction policy (S39) and the pure parts of compacting.

Core's pre-send guard is a hard stop at a high share of the window; compaction is the session
layer's own policy, below it: when the conversation the model would be sent next passes
``threshold`` of the agent's context window (or ``max_tokens``), the oldest turns are replaced —
for the model, never in the store — by a summary. What is kept intact: the system prompt (the
agent's live one, never summarised, S35), the ``keep_recent_turns`` most recent turns, and every
tool call with its result (the cut lands on a turn boundary, and a turn is summarised or kept
whole).

Who writes the summary, in order: a ``PreCompact`` hook that supplies one
(``hookSpecificOutput.summary``), else the policy's ``summarizer``, else the agent's own provider
in a metered (and, for a journaled agent, journaled) run of its own — see
:class:`CompactionPolicy`.

The model-facing texts (S35) are neutral and overridable: :data:`DEFAULT_COMPACTION_INSTRUCTION`
(the system prompt of the summary call), :data:`DEFAULT_SUMMARY_HEADER` (before the summary in
the conversation) and the transcript's mechanism labels (``[user]``, ``[assistant]``,
``[tool call NAME]``, ``[tool result NAME]``, ``[earlier summary]``, ``[additional
instructions]``, ``[… N characters omitted]``).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias, final

from robota.core import (
    AssistantMessage,
    ConfigurationError,
    Message,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
    estimate_text_tokens,
)
from robota.sessions._records import CompactionTrigger, TurnSaved

__all__ = [
    "DEFAULT_COMPACTION_INSTRUCTION",
    "DEFAULT_SUMMARY_HEADER",
    "CompactionPolicy",
    "CompactionRequest",
    "Summarizer",
    "plan_summary",
]

DEFAULT_COMPACTION_INSTRUCTION: Final = (
    "You write a summary of a conversation transcript that the user message contains. The "
    "conversation will continue from your summary alone, so keep everything needed for that: "
    "the requests made, the decisions and facts established, the tool calls that mattered and "
    "their results, names, identifiers, file paths and numbers, and any work still open. Write "
    "only the summary."
)
"""The system prompt of the summary call (S35: neutral; ``CompactionPolicy(instruction=)``)."""

DEFAULT_SUMMARY_HEADER: Final = "Summary of the earlier part of this conversation:\n\n"
"""The text before a summary in the conversation (``CompactionPolicy(summary_header=)``)."""

_SHARE_OF_WINDOW_FOR_REQUEST: Final = 0.75  # the rest of the window is the summary's room
_MIN_CHARS: Final = 200


@final
@dataclass(frozen=True, slots=True)
class CompactionRequest:
    """What a caller's :data:`Summarizer` is asked to summarise.

    Attributes:
        session_id: The session.
        messages: The messages the summary replaces, in order: the earlier summary's message
            first when there is one (it is replaced too), then every message of the replaced
            turns, tool calls with their results.
        instruction: The policy's instruction (:attr:`CompactionPolicy.instruction`).
        custom_instructions: What ``session.compact(instructions=...)`` added; ``""`` if none.
        trigger: ``"auto"`` (the policy) or ``"manual"`` (``session.compact()``).
    """

    session_id: str
    messages: tuple[Message, ...]
    instruction: str
    custom_instructions: str
    trigger: CompactionTrigger


Summarizer: TypeAlias = Callable[[CompactionRequest], Awaitable[str]]
"""A caller's summariser: returns the summary text (non-empty) for a :class:`CompactionRequest`.

Its own model spend is the caller's: the session records no usage for it."""


@final
@dataclass(frozen=True, slots=True)
class CompactionPolicy:
    """When and how a session compacts its conversation (S39); ``Session.open(compaction=)``.

    Before each turn, the conversation the model would be sent next — the agent's live system
    prompt, the session's history, the agent's tool schemas and the turn's input — is estimated
    the way core estimates context (:meth:`robota.Agent.context_usage`, S31). When it passes
    ``threshold`` of the agent's context window (the caller's ``Agent(context_window=)``, the
    server's report or the registered one), or ``max_tokens`` when given, the oldest turns are
    summarised, as many as one summary request can carry (within ¾ of the window, or
    ``max_tokens``), always leaving the ``keep_recent_turns`` most recent ones; this repeats
    while the conversation is still above the mark and older turns remain. With an unknown
    window only ``max_tokens`` can trigger compaction.

    When even the kept turns do not fit (nothing older is left to summarise, or a ``PreCompact``
    hook vetoed), the turn goes on uncompacted, and core's pre-send guard stops a request that
    would overflow the window (``stop_reason == "context_limit"``, nothing sent): lower
    ``keep_recent_turns`` or compact by hand.

    Attributes:
        threshold: The share of the context window (0 < threshold ≤ 1) above which to compact;
            default 0.8, below core's pre-send guard (0.95).
        max_tokens: Compact above this many estimated tokens too (the only trigger when the
            window is unknown); ``None``: by share only.
        keep_recent_turns: How many of the latest turns are never summarised; default 2.
        summarizer: Writes the summary instead of the agent's provider (see :data:`Summarizer`).
        instruction: The system prompt of the agent's summary call (S35: neutral default
            :data:`DEFAULT_COMPACTION_INSTRUCTION`); the replaced turns come as a transcript
            in its user message.
        summary_header: The text before the summary in its message
            (:data:`DEFAULT_SUMMARY_HEADER`). The message is marked by its id, whatever the
            wording (:func:`~robota.sessions.is_compaction_summary`).

    Raises:
        ConfigurationError: a value out of range (the message names the accepted one).
    """

    threshold: float = 0.8
    max_tokens: int | None = None
    keep_recent_turns: int = 2
    summarizer: Summarizer | None = None
    instruction: str = DEFAULT_COMPACTION_INSTRUCTION
    summary_header: str = DEFAULT_SUMMARY_HEADER

    def __post_init__(self) -> None:
        share: object = self.threshold
        if (
            isinstance(share, bool)
            or not isinstance(share, (int, float))
            or not math.isfinite(share)
            or not 0 < share <= 1
        ):
            raise ConfigurationError(
                f"CompactionPolicy(threshold=) must be a share of the window above 0 and at most "
                f"1 (e.g. 0.8), got {share!r}"
            )
        for name, value, least in (
            ("max_tokens", self.max_tokens, 1),
            ("keep_recent_turns", self.keep_recent_turns, 0),
        ):
            if value is None and name == "max_tokens":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigurationError(
                    f"CompactionPolicy({name}=) must be an integer of at least {least}, got "
                    f"{value!r}"
                )
        if self.summarizer is not None and not callable(self.summarizer):
            raise ConfigurationError(
                f"CompactionPolicy(summarizer=) must be an async callable, got {self.summarizer!r}"
            )
        for name, text in (
            ("instruction", self.instruction),
            ("summary_header", self.summary_header),
        ):
            if not isinstance(text, str):
                raise ConfigurationError(f"CompactionPolicy({name}=) must be a string")
        if not self.instruction.strip():
            raise ConfigurationError("CompactionPolicy(instruction=) must not be empty")

    def limit(self, window: int | None) -> int | None:
        """The token count above which to compact, for ``window``; ``None``: it cannot trigger."""
        limits = [] if window is None else [int(self.threshold * window)]
        if self.max_tokens is not None:
            limits.append(self.max_tokens)
        return min(limits) if limits else None

    def request_budget(self, window: int | None) -> int | None:
        """How many tokens one summary request may carry, for ``window``; ``None``: no bound."""
        budgets = [] if window is None else [int(_SHARE_OF_WINDOW_FOR_REQUEST * window)]
        if self.max_tokens is not None:
            budgets.append(self.max_tokens)
        return min(budgets) if budgets else None


def _omitted(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    cap = max(cap, _MIN_CHARS)
    return f"{text[:cap]}\n[… {len(text) - cap} characters omitted]"


def _content(message: Message) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(
        part.text if isinstance(part, TextPart) else f"[{part.kind}]" for part in content
    )


def render_message(message: Message, cap: int | None) -> str:
    """One message as transcript text; every text longer than ``cap`` characters is shortened."""

    def fit(text: str) -> str:
        return text if cap is None else _omitted(text, cap)

    if isinstance(message, ToolMessage):
        label = "tool error" if message.is_error else "tool result"
        media = "".join(f"\n[{part.kind}]" for part in message.parts)
        return f"[{label} {message.tool_name}]\n{fit(message.content)}{media}"
    if isinstance(message, AssistantMessage):
        parts = [f"[assistant]\n{fit(message.content)}"] if message.content else []
        parts.extend(
            f"[tool call {call.name}]\n{fit(call.arguments)}" for call in message.tool_calls
        )
        return "\n\n".join(parts) if parts else "[assistant]"
    if isinstance(message, SystemMessage):
        return f"[system]\n{fit(message.content)}"
    return f"[user]\n{fit(_content(message))}"


def plan_summary(
    turns: Sequence[TurnSaved],
    *,
    previous: str | None,
    upto: int | None,
    budget: int | None,
    instruction: str,
    custom_instructions: str,
) -> tuple[int, str]:
    """Which turns one summary request replaces, and its transcript (the request's user text).

    ``turns`` are the candidates, oldest first (after the compaction in force). With ``upto``
    the count is fixed (a pending compaction redone); otherwise as many whole turns as fit
    ``budget`` tokens, at least one: a turn that alone does not fit is shortened, text by text
    (a long text keeps its start and says how much was omitted) — so every compaction makes
    progress. ``previous`` is the summary in force, which the new one replaces and includes.
    Returns ``(count, transcript)``; ``count`` is 0 only when ``turns`` is empty.
    """
    fixed = estimate_text_tokens(instruction) + estimate_text_tokens(custom_instructions) + 16
    left = None if budget is None else max(budget - fixed, _MIN_CHARS // 4) * 4  # characters
    pieces: list[str] = []
    if previous is not None:
        cap = None if left is None else left // 2
        pieces.append(
            "[earlier summary]\n" + (previous if cap is None else _omitted(previous, cap))
        )
        if left is not None:
            left -= len(pieces[-1])
    count = 0
    limit = len(turns) if upto is None else upto
    for turn in turns[:limit]:
        cap = None if left is None else max(left // 4, _MIN_CHARS)
        text = "\n\n".join(render_message(message, cap) for message in turn.messages)
        if left is not None and len(text) > left:
            if count and upto is None:
                break
            text = _omitted(text, max(left, _MIN_CHARS))
        pieces.append(text)
        count += 1
        if left is not None:
            left -= len(text) + 2
    if custom_instructions:
        pieces.append(f"[additional instructions]\n{custom_instructions}")
    return count, "\n\n".join(pieces)


def replaced_messages(
    turns: Sequence[TurnSaved], previous: UserMessage | None
) -> tuple[Message, ...]:
    """The messages a summary replaces: the earlier summary's, then the turns'."""
    head: tuple[Message, ...] = () if previous is None else (previous,)
    return (*head, *(message for turn in turns for message in turn.messages))
