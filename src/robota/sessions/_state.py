"""A session's state: the fold of its stored log (``robota.sessions._records``).

The fold is the one place the log's meaning lives: which turns are active (after rewinds), which
one is pending, the compactions in force, the metadata, and the totals. A new entry kind extends
:meth:`SessionState.apply` and nothing else.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, final

from robota.core import (
    AssistantMessage,
    ConfigurationError,
    Message,
    StorageError,
    Usage,
    UserMessage,
)
from robota.sessions._limits import unattested_output
from robota.sessions._records import (
    Compacted,
    CompactionStarted,
    MetadataSet,
    Rewound,
    SessionEntry,
    SessionHeader,
    StoredSession,
    TurnSaved,
    TurnStarted,
    TurnStatus,
)

__all__ = [
    "SUMMARY_ID_PREFIX",
    "SessionInfo",
    "SessionMetadata",
    "SessionState",
    "Turn",
    "is_compaction_summary",
    "summary_message",
]

SUMMARY_ID_PREFIX: Final = "compaction_"
"""The id prefix of a compaction's summary message (see :func:`is_compaction_summary`)."""


def summary_message(entry: Compacted) -> UserMessage:
    """The marked message that stands for ``entry``'s replaced turns in the conversation."""
    return UserMessage(
        entry.header + entry.summary, id=f"{SUMMARY_ID_PREFIX}{entry.number}", created_at=entry.at
    )


def is_compaction_summary(message: Message) -> bool:
    """Whether ``message`` is a compaction's summary message (S39) in ``session.history``.

    The mark is the message id, ``"compaction_<number>"`` (its text starts with the policy's
    ``summary_header`` too, but a caller may change that wording): a reader tests this, not
    the text.
    """
    return isinstance(message, UserMessage) and message.id.startswith(SUMMARY_ID_PREFIX)


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
        compacted: Whether a compaction's summary stands for it in what the model is sent
            (S39); it stays here, in the store and in ``fork``/``rewind`` positions.
    """

    position: int
    number: int
    status: TurnStatus
    messages: tuple[Message, ...]
    usage: Usage
    cost: float | None
    execution_id: str | None
    at: float
    compacted: bool = False


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

    __slots__ = (
        "active",
        "compacting",
        "compactions",
        "cost",
        "folded",
        "header",
        "metadata",
        "next_compaction",
        "next_turn",
        "pending",
        "spent",
        "unattested",
        "updated",
        "usage_so_far",
    )

    def __init__(self, stored: StoredSession) -> None:
        self.header: SessionHeader = stored.header
        self.active: list[TurnSaved] = []
        self.pending: TurnStarted | None = None
        self.metadata = SessionMetadata()
        # The usage total is summed when read (:attr:`usage`): a long log folds faster.
        self.usage_so_far = Usage()
        self.spent: list[Usage] = []
        self.cost: float | None = 0.0
        self.unattested = 0  # S31: estimated output tokens no provider reported (limits count)
        self.next_turn = 0
        # S39: the compactions in force, oldest first (each one's summary includes the one
        # before it, so the last is the one the model sees); a rewind pops those it cuts into.
        self.compactions: list[Compacted] = []
        self.compacting: CompactionStarted | None = None
        self.next_compaction = 0
        self.updated = stored.header.created_at
        # How many of the log's entries are folded in: the next read needs only those after
        # (SessionStore.load_after), since the log is append-only.
        self.folded = 0
        for entry in stored.entries:
            self.apply(entry)

    def advanced(self, entries: Iterable[SessionEntry]) -> SessionState:
        """A copy of this state with ``entries`` (the log's next ones) folded in.

        This state is left as it was, also when an entry is refused (``StorageError``).
        """
        state = copy.copy(self)
        state.active = self.active.copy()
        state.compactions = self.compactions.copy()
        state.spent = self.spent.copy()
        for entry in entries:
            state.apply(entry)
        return state

    def apply(self, entry: SessionEntry) -> None:
        """Fold ``entry`` in (the entry after the :attr:`folded` ones)."""
        self.folded += 1
        self.updated = max(self.updated, entry.at)
        if type(entry) is TurnSaved:  # the common entry first
            if self.pending is not None and self.pending.turn == entry.turn:
                self.pending = None
            if entry.turn >= self.next_turn:
                self.next_turn = entry.turn + 1
            if entry.status == "abandoned":
                return  # S40: nothing of it ran
            self.active.append(entry)
            self.spent.append(entry.usage)
            self.unattested += unattested_output(entry.messages)
            self.cost = None if self.cost is None or entry.cost is None else self.cost + entry.cost
        elif isinstance(entry, TurnStarted):
            self.pending = entry
            self.next_turn = max(self.next_turn, entry.turn + 1)
        elif isinstance(entry, Rewound):
            del self.active[entry.to :]
            # Rewinding to before a compaction point drops that compaction.
            while self.compactions and self.compactions[-1].upto > entry.to:
                self.compactions.pop()
            if self.compacting is not None and self.compacting.upto > entry.to:
                self.compacting = None
        elif isinstance(entry, MetadataSet):
            self.metadata = SessionMetadata(entry.title, entry.user_id, entry.tags)
        elif isinstance(entry, CompactionStarted):
            self.compacting = entry
            self.next_compaction = max(self.next_compaction, entry.number + 1)
        elif isinstance(entry, Compacted):
            if not self.compacted <= entry.upto <= min(entry.active_turns, len(self.active)):
                raise StorageError(
                    f"a compaction of session {self.header.id!r} replaces {entry.upto} turns of "
                    f"{len(self.active)}; the store was changed outside robota",
                    code="session_entry_damaged",
                )
            self.compacting = None
            self.next_compaction = max(self.next_compaction, entry.number + 1)
            self.compactions.append(entry)
            self.spent.append(entry.usage)
            self.cost = None if self.cost is None or entry.cost is None else self.cost + entry.cost

    @property
    def usage(self) -> Usage:
        """Usage over every turn and compaction folded in (rewound turns included)."""
        if self.spent:
            total = self.usage_so_far
            for usage in self.spent:
                total = total + usage
            self.usage_so_far = total
            self.spent.clear()
        return self.usage_so_far

    @property
    def limit_usage(self) -> Usage:
        """:attr:`usage`, with the output no provider reported estimated: what limits count."""
        usage = self.usage
        if not self.unattested:
            return usage
        return usage + Usage.from_counts(prompt=0, completion=self.unattested)

    @property
    def compacted(self) -> int:
        """How many active turns the compaction in force replaces (0: none)."""
        return self.compactions[-1].upto if self.compactions else 0

    @property
    def history(self) -> tuple[Message, ...]:
        """The conversation the model is sent, without a system prompt (S35).

        With a compaction in force (S39): its marked summary message, then the turns after it.
        """
        if not self.compactions:
            messages: list[Message] = []
            for turn in self.active:
                messages.extend(turn.messages)
            return tuple(messages)
        last = self.compactions[-1]
        return (
            summary_message(last),
            *(message for turn in self.active[last.upto :] for message in turn.messages),
        )

    @property
    def reports_current(self) -> bool:
        """Whether the latest provider report in :attr:`history` was made for it (S31).

        After a compaction the kept turns' reports saw the replaced turns; a turn run since
        reports on the compacted conversation again.
        """
        if not self.compactions:
            return True
        return any(
            isinstance(message, AssistantMessage) and message.usage is not None
            for turn in self.active[self.compactions[-1].active_turns :]
            for message in turn.messages
        )

    def turns(self) -> tuple[Turn, ...]:
        """The active turns."""
        upto = self.compacted
        return tuple(
            Turn(i, t.turn, t.status, t.messages, t.usage, t.cost, t.execution_id, t.at, i < upto)
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


def check_metadata(title: object, user_id: object, tags: object) -> SessionMetadata:
    """Session metadata from a caller's values, each checked (a clear error names the bad one)."""
    for name, value in (("title", title), ("user_id", user_id)):
        if value is not None and not isinstance(value, str):
            raise ConfigurationError(f"{name} must be a string or None, got {value!r}")
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        raise ConfigurationError(f"tags must be an iterable of strings, got {tags!r}")
    items = tuple(tags)
    if not all(isinstance(tag, str) for tag in items):
        raise ConfigurationError(f"tags must be strings, got {items!r}")
    return SessionMetadata(title, user_id, items)  # type: ignore[arg-type]
