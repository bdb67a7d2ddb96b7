"""What a session store keeps: a header per session and an append-only log of entries.

A session is its :class:`SessionHeader` (id, creation time, the fork it came from) and an ordered
log of :data:`SessionEntry` values. Nothing in the log is ever changed or removed — a rewind is
an entry, not an erasure, so the store is the session's full record (its audit) — and the
session's state is the fold of the log (``robota.sessions._state``):

* :class:`TurnStarted` — a journaled turn is about to run as execution ``execution_id``; written
  before the run, so a crash leaves the turn *pending* and the next open resumes it (S40).
* :class:`TurnSaved` — a turn's messages, usage and cost, written once when the turn ends; the
  one atomic write that makes a turn part of the conversation.
* :class:`Rewound` — keep only the first ``to`` turns of the active conversation.
* :class:`MetadataSet` — the session's title, user id and tags from here on.
* :class:`CompactionStarted` — a journaled compaction's summary call is about to run (S39, S40);
  a crash leaves it pending and the next turn resumes it instead of repeating the call.
* :class:`Compacted` — the first ``upto`` active turns are replaced, for the model, by a summary
  (S39); the turns themselves stay in the log.

A store never interprets entries: it keeps their text
(:func:`~robota.sessions.encode_session_entry`, ``robota.sessions._codec``) in order, so a new
entry kind needs no store change. A reader meeting a kind it
does not know refuses the log (:class:`~robota.StorageError`, code ``session_entry_unknown``)
instead of showing a conversation without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias, final

from robota.core import Message, Usage

__all__ = [
    "Compacted",
    "CompactionSource",
    "CompactionStarted",
    "CompactionTrigger",
    "MetadataSet",
    "Rewound",
    "SessionEntry",
    "SessionHeader",
    "StoredSession",
    "TurnSaved",
    "TurnStarted",
    "TurnStatus",
]

TurnStatus: TypeAlias = Literal["complete", "interrupted", "failed", "abandoned"]
"""How a saved turn ended:

* ``complete`` — the run returned ``status="complete"``;
* ``interrupted`` — the run was aborted or cancelled; its messages are as the agent committed them
  (an interrupted reply is annotated for the model, S34);
* ``failed`` — the run raised (a provider error …); the messages it had added are kept, as the
  agent itself keeps them;
* ``abandoned`` — nothing of it ran: a pending turn whose execution never reached the journal
  (S40), or a turn whose prompt a ``UserPromptSubmit`` hook blocked (S22).
"""


@final
@dataclass(frozen=True, slots=True)
class SessionHeader:
    """What never changes about a session.

    Attributes:
        id: The session id (1–180 characters).
        created_at: When it was created (seconds since the epoch).
        parent_id: The session it was forked from, or ``None``.
        fork_at: How many of the parent's active turns it started with (with ``parent_id``).
    """

    id: str
    created_at: float
    parent_id: str | None = None
    fork_at: int | None = None


@final
@dataclass(frozen=True, slots=True)
class TurnStarted:
    """A journaled turn is about to run (written before the run, S40).

    Attributes:
        turn: The turn's number: unique in the session, never reused (a rewind does not free
            numbers), increasing in the order turns were started.
        execution_id: The journal's execution that runs the turn.
        system_prompt: The system prompt the execution starts with; a continuation keeps it
            (S35), while a new turn uses the agent's live prompt.
        at: When (seconds since the epoch).
    """

    turn: int
    execution_id: str
    system_prompt: str | None
    at: float
    kind: Literal["turn_started"] = field(default="turn_started", init=False)


@final
@dataclass(frozen=True, slots=True)
class TurnSaved:
    """A turn's outcome, saved atomically when it ends.

    Attributes:
        turn: The turn's number (see :class:`TurnStarted`).
        status: See :data:`TurnStatus`.
        messages: The messages the turn added, its user input first (``RunResult.messages``).
        usage: Usage summed over the turn's provider calls.
        cost: Its estimated USD cost; ``None`` when unknown (S13: never a guess).
        execution_id: The execution that ran it, when the agent is journaled.
        at: When it was saved.
        error: For a ``failed`` turn, what was raised (class and message); empty otherwise.
    """

    turn: int
    status: TurnStatus
    messages: tuple[Message, ...]
    usage: Usage
    cost: float | None
    execution_id: str | None
    at: float
    error: str = ""
    kind: Literal["turn_saved"] = field(default="turn_saved", init=False)


@final
@dataclass(frozen=True, slots=True)
class Rewound:
    """Keep only the first ``to`` turns of the active conversation; later ones stay stored.

    Attributes:
        to: How many active turns to keep (0 empties the conversation).
        at: When.
    """

    to: int
    at: float
    kind: Literal["rewound"] = field(default="rewound", init=False)


@final
@dataclass(frozen=True, slots=True)
class MetadataSet:
    """The session's metadata from this entry on (the latest one wins).

    Attributes:
        title: A title for lists, or ``None``.
        user_id: The user the session belongs to, or ``None``.
        tags: Labels, in the caller's order.
        at: When.
    """

    title: str | None
    user_id: str | None
    tags: tuple[str, ...]
    at: float
    kind: Literal["metadata"] = field(default="metadata", init=False)


CompactionTrigger: TypeAlias = Literal["auto", "manual"]
"""What started a compaction: the session's policy (``auto``) or ``session.compact()``."""

CompactionSource: TypeAlias = Literal["model", "summarizer", "hook"]
"""Who wrote a compaction's summary: the agent's provider, the caller's summariser, or a
``PreCompact`` hook (``hookSpecificOutput.summary``)."""


@final
@dataclass(frozen=True, slots=True)
class CompactionStarted:
    """A journaled compaction's summary call is about to run (written before it, S40).

    Attributes:
        number: The compaction's number: unique in the session, never reused.
        execution_id: The journal execution of the summary call
            (``"<session id>/compact-<number>"``).
        upto: How many active turns it replaces (from the first).
        instruction: The system prompt of the summary call; a continuation keeps it.
        custom_instructions: What the caller added to the instruction (``compact()``).
        trigger: See :data:`CompactionTrigger`.
        at: When.
    """

    number: int
    execution_id: str
    upto: int
    instruction: str
    custom_instructions: str
    trigger: CompactionTrigger
    at: float
    kind: Literal["compaction_started"] = field(default="compaction_started", init=False)


@final
@dataclass(frozen=True, slots=True)
class Compacted:
    """The first ``upto`` active turns are replaced, for the model, by ``summary`` (S39).

    The replaced turns stay in the log and in ``session.turns`` (marked ``compacted``); the
    conversation the model is sent is the summary message, then the turns from ``upto`` on. A
    rewind to before ``upto`` drops this compaction (an earlier one that still fits applies
    again).

    Attributes:
        number: The compaction's number (see :class:`CompactionStarted`).
        upto: How many active turns the summary replaces (from the first; a later compaction's
            summary includes the earlier one's).
        active_turns: How many active turns the conversation had when it was compacted: the
            provider reports of turns before that saw the replaced turns (S31).
        summary: The summary text.
        header: The text placed before it in the summary message (the policy's marker).
        source: See :data:`CompactionSource`.
        trigger: See :data:`CompactionTrigger`.
        usage: The summary call's usage (empty for a hook's or a summariser's summary).
        cost: Its estimated USD cost; ``None`` when unknown.
        execution_id: The summary call's execution, when it ran on the agent.
        at: When.
    """

    number: int
    upto: int
    active_turns: int
    summary: str
    header: str
    source: CompactionSource
    trigger: CompactionTrigger
    usage: Usage
    cost: float | None
    execution_id: str | None
    at: float
    kind: Literal["compacted"] = field(default="compacted", init=False)


SessionEntry: TypeAlias = (
    TurnStarted | TurnSaved | Rewound | MetadataSet | CompactionStarted | Compacted
)
"""One entry of a session's log."""


@final
@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session as its store holds it: the header and every entry, in append order."""

    header: SessionHeader
    entries: tuple[SessionEntry, ...]
