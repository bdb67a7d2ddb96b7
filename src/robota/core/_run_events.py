"""What a streamed run yields to its consumer (``async for event in agent.run_stream(...)``).

Each is a frozen value with a ``kind`` literal; ``match`` on the class and end with
``assert_never``. The run's final value is not an event: ``await stream.result()`` returns it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias, final

from robota.core._errors import RobotaError
from robota.core._messages import Message, ToolCall
from robota.core.providers._contract import TextDelta

__all__ = [
    "MessageCommitted",
    "RetryStarted",
    "RoundStarted",
    "RunEvent",
    "SubagentEvent",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolOutcomeStatus",
]

ToolOutcomeStatus: TypeAlias = Literal[
    "completed", "failed", "refused", "unavailable", "interrupted", "not_dispatched"
]
"""How one tool call ended:

* ``completed`` / ``failed`` — the body ran and returned / raised;
* ``refused`` — stopped before any body ran (invalid arguments, permission, hook);
* ``unavailable`` — the model named a tool that is not registered (S37); nothing ran;
* ``interrupted`` — the run was cancelled: the body observed the abort, or never started;
* ``not_dispatched`` — a guard stopped the batch before it ran (S39).
"""


@final
@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A model round began.

    Attributes:
        round: 1-based round number (the forced summary counts as a round).
        observation_id: This round's fresh identity (S31): fragments of one round share it.
    """

    kind: ClassVar[Literal["round_started"]] = "round_started"
    round: int
    observation_id: str = ""


@final
@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """A tool body was admitted and is starting.

    Attributes:
        call: The model's call (its ``id`` is the provider's token).
        call_id: The body's own minted id (S36).
    """

    kind: ClassVar[Literal["tool_call_started"]] = "tool_call_started"
    call: ToolCall
    call_id: str


@final
@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A tool call has its result (whether or not a body ran).

    Attributes:
        call: The model's call.
        status: See :data:`ToolOutcomeStatus`.
        content: What the model is shown.
        is_error: Whether the result reports a failure.
        view: The result's display data (S39), never sent to the model.
    """

    kind: ClassVar[Literal["tool_call_finished"]] = "tool_call_finished"
    call: ToolCall
    status: ToolOutcomeStatus
    content: str
    is_error: bool
    view: object = None


@final
@dataclass(frozen=True, slots=True)
class MessageCommitted:
    """A message was added to history (the user input, a reply, a tool result)."""

    kind: ClassVar[Literal["message_committed"]] = "message_committed"
    message: Message


@final
@dataclass(frozen=True, slots=True)
class RetryStarted:
    """A model call failed and is tried again: the same model, or the next fallback (issue 28).

    The failed attempt's reply is discarded, never committed (S34): text it streamed — the
    :class:`TextDelta` events since this round's :class:`RoundStarted` — is not part of the
    answer, and a consumer that shows text should drop it. A new :class:`RoundStarted` with the
    same ``round`` and a fresh ``observation_id`` follows, and the retried reply streams after it.

    Attributes:
        round: The round whose call is tried again.
        attempt: The number of the attempt that follows on ``model`` (1 after a fallback).
        model: The model the next attempt goes to.
        provider: Its provider.
        delay: Seconds waited before the next attempt (backoff or ``Retry-After``).
        error: The failed attempt's error (its ``code``, ``status``, ``recoverable`` …).
        discarded: The text the failed attempt streamed, now discarded (``""`` when none).
        fallback: Whether the call moved to another model (else the same model is retried).
    """

    kind: ClassVar[Literal["retry_started"]] = "retry_started"
    round: int
    attempt: int
    model: str
    provider: str
    delay: float
    error: RobotaError
    discarded: str = ""
    fallback: bool = False


@final
@dataclass(frozen=True, slots=True)
class SubagentEvent:
    """A sub-agent's own stream event, surfaced in the stream of the run that called it.

    An agent called as a tool (``Agent.as_tool``, issue 29) streams to its caller's stream
    wrapped in this event, never as the caller's own: join the :class:`TextDelta` events a
    stream yields directly and you get the streamed agent's text alone. A grandchild's events
    arrive flat (one wrapper, its full path), so ``event`` is never a ``SubagentEvent``.

    Attributes:
        agent: The owner path of the agent that produced ``event``, from the streamed run's
            agent down (``"lead/researcher"``, ``"lead/researcher/helper"``) — the keys of
            ``RunResult.usage_by_agent``.
        call_id: The minted id (S36) of the tool call that runs that agent, in the agent one
            level up: the ``call_id`` of a :class:`ToolCallStarted` seen before (directly, or
            inside the ``SubagentEvent`` of the agent above).
        event: The sub-agent's event, as its own stream would yield it.
    """

    kind: ClassVar[Literal["subagent_event"]] = "subagent_event"
    agent: str
    call_id: str
    event: (
        TextDelta
        | RoundStarted
        | RetryStarted
        | ToolCallStarted
        | ToolCallFinished
        | MessageCommitted
    )


RunEvent: TypeAlias = (
    TextDelta
    | RoundStarted
    | RetryStarted
    | ToolCallStarted
    | ToolCallFinished
    | MessageCommitted
    | SubagentEvent
)
"""Anything a :class:`~robota.RunStream` yields."""
