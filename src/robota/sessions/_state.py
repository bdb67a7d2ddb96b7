"""A session's state: the fold of its stored log (``robota.sessions._records``).

The fold is the one place the log's meaning lives: which turns are active (after rewinds), which
one is pending, the metadata in force, and the totals. A new entry kind (compaction) extends
:meth:`SessionState.apply` and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from robota.core import Message, Usage
from robota.sessions._records import (
    MetadataSet,
    Rewound,
    SessionEntry,
    SessionHeader,
    StoredSession,
    TurnSaved,
    TurnStarted,
    TurnStatus,
)

__all__ = ["SessionInfo", "SessionMetadata", "SessionState", "Turn"]


@final
@dataclass(frozen=True, slots=True)
class SessionMetadata:
    """A session's descriptive fields.

    Attributes:
        title: A title for lists, or ``None``.
        user_id: The user the session belongs to, or ``None``.
        tags: Labels, in the caller's order.
    """

    title: str | None = None
    user_id: str | None = None
    tags: tuple[str, ...] = ()


@final
@dataclass(frozen=True, slots=True)
class Turn:
    """One active turn of a session's conversation.

    Attributes:
        position: Its place in the active conversation, from 0 (what ``fork(at=)`` and
            ``rewind(to=)`` count).
        number: Its number in the session's log: unique, never reused after a rewind.
        status: How it ended (:data:`~robota.sessions.TurnStatus`).
        messages: The messages it added, its user input first.
        usage: Its provider usage.
        cost: Its estimated USD cost, or ``None`` when unknown.
        execution_id: The journal execution that ran it, when the agent is journaled.
        at: When it was saved.
    """

    position: int
    number: int
    status: TurnStatus
    messages: tuple[Message, ...]
    usage: Usage
    cost: float | None
    execution_id: str | None
    at: float


@final
@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What a list of sessions shows about one.

    Attributes:
        id: The session id.
        created_at: When it was created; ``updated_at``: its latest entry's time.
        metadata: Title, user id and tags.
        turns: How many turns the active conversation has.
        usage: Usage over every turn run in this session (rewound turns included: the spend
            happened; a fork starts with its inherited turns' figures).
        cost: Their estimated USD cost; ``None`` when any turn's cost is unknown.
        parent_id: The session it was forked from, and ``fork_at`` how many turns it took.
        pending: Whether a turn was interrupted mid-run and waits to be resumed (S40).
    """

    id: str
    created_at: float
    updated_at: float
    metadata: SessionMetadata
    turns: int
    usage: Usage
    cost: float | None
    parent_id: str | None
    fork_at: int | None
    pending: bool


@final
class SessionState:
    """The fold of one session's log; :meth:`apply` takes one more entry."""

    __slots__ = ("active", "cost", "header", "metadata", "next_turn", "pending", "updated", "usage")

    def __init__(self, stored: StoredSession) -> None:
        self.header: SessionHeader = stored.header
        self.active: list[TurnSaved] = []
        self.pending: TurnStarted | None = None
        self.metadata = SessionMetadata()
        self.usage = Usage()
        self.cost: float | None = 0.0
        self.next_turn = 0
        self.updated = stored.header.created_at
        for entry in stored.entries:
            self.apply(entry)

    def apply(self, entry: SessionEntry) -> None:
        """Fold ``entry`` in (the compaction record will be one more case here)."""
        self.updated = max(self.updated, entry.at)
        if isinstance(entry, TurnStarted):
            self.pending = entry
            self.next_turn = max(self.next_turn, entry.turn + 1)
        elif isinstance(entry, TurnSaved):
            if self.pending is not None and self.pending.turn == entry.turn:
                self.pending = None
            self.next_turn = max(self.next_turn, entry.turn + 1)
            if entry.status == "abandoned":
                return  # S40: nothing of it ran
            self.active.append(entry)
            self.usage = self.usage + entry.usage
            self.cost = None if self.cost is None or entry.cost is None else self.cost + entry.cost
        elif isinstance(entry, Rewound):
            del self.active[entry.to :]
        elif isinstance(entry, MetadataSet):
            self.metadata = SessionMetadata(entry.title, entry.user_id, entry.tags)

    @property
    def history(self) -> tuple[Message, ...]:
        """The active conversation's messages, without a system prompt (S35)."""
        return tuple(message for turn in self.active for message in turn.messages)

    def turns(self) -> tuple[Turn, ...]:
        """The active turns."""
        return tuple(
            Turn(i, t.turn, t.status, t.messages, t.usage, t.cost, t.execution_id, t.at)
            for i, t in enumerate(self.active)
        )

    def info(self) -> SessionInfo:
        """The session's :class:`SessionInfo`."""
        header = self.header
        return SessionInfo(
            header.id,
            header.created_at,
            self.updated,
            self.metadata,
            len(self.active),
            self.usage,
            self.cost,
            header.parent_id,
            header.fork_at,
            self.pending is not None,
        )
