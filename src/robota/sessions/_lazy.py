"""A session's log as :meth:`Session.open` read it: decoded on first use (issue 27).

Opening a long session reads its log in one query, as before, but keeps the entries' text:
decoding every entry into message objects costs many times the read itself (``json.loads``
alone does, on CPython), and a caller that opens a session to run one turn, list it, or show
its last reply need not pay for all of it up front. The log is decoded and folded
(:class:`~robota.sessions._state.SessionState`) once, in full, on first use: reading
``session.history`` (its length, an item, iteration, comparison), or anything else of the
session's state (``turns``, ``info``, ``usage`` …), or a turn, compaction, fork or rewind
starting — the agent is then given the whole history, decoded.

Damage: an entry the decoder refuses is reported when the log is decoded, with the same
:class:`~robota.StorageError` (code ``session_entry_damaged``, or ``session_entry_unknown``
for a newer robota's entry) that :meth:`SessionStore.load` raises, and again on every later
use. Opening checks only the entries' fixed prefixes: the one thing it must know — whether a
turn is pending (S40), to resume it — is read from them without decoding, and an entry whose
prefix is not one robota writes for an entry that cannot leave a turn pending (a
``TurnStarted`` whose turn was not saved after it, a format-1 entry, text robota did not
write) makes opening decode the whole log — so such damage is still reported by ``open``;
damage after a sound prefix is reported on first use.

Stores that keep the entries' text (SQLite, PostgreSQL) give it through
``SessionStore._load_texts``; any other store's entries arrive decoded and are folded at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Final, final, overload

from robota.core import Message
from robota.sessions._codec import decode_session_entry
from robota.sessions._records import SessionHeader, StoredSession
from robota.sessions._state import SessionState
from robota.sessions._store import SessionStore

__all__ = ["LazyHistory", "SessionLog", "read_log"]

_TURN_STARTED: Final = '[2,"turn_started",'
# Entries (format 2) that never leave a turn pending: only a TurnStarted sets it (S40).
_CANNOT_PEND: Final = (
    '[2,"turn_saved",',
    '[2,"rewound",',
    '[2,"metadata",',
    '[2,"compaction_started",',
    '[2,"compacted",',
)


async def read_log(store: SessionStore, session_id: str) -> SessionLog:
    """Session ``session_id``'s log: its texts when ``store`` gives them, else folded now.

    Raises:
        SessionNotFoundError: no such session.
        StorageError: the store failed (or, for a store without texts, an entry is damaged).
    """
    texts = await store._load_texts(session_id)
    if texts is None:
        return SessionLog.folded(SessionState(await store.load(session_id)))
    return SessionLog.unread(*texts)


@final
class SessionLog:
    """One read of a session's log: folded at once, or its texts decoded on first use.

    Thread-safe: the texts are decoded once even when two threads first use the log together.
    """

    __slots__ = ("_history", "_lock", "_state", "_texts", "header")

    def __init__(
        self, header: SessionHeader, texts: list[str] | None, state: SessionState | None
    ) -> None:
        self.header = header
        self._texts = texts
        self._state = state
        self._history: LazyHistory | None = None
        self._lock = threading.Lock()

    @classmethod
    def folded(cls, state: SessionState) -> SessionLog:
        """A log already decoded and folded."""
        return cls(state.header, None, state)

    @classmethod
    def unread(cls, header: SessionHeader, texts: list[str]) -> SessionLog:
        """A log kept as the store's entry texts, decoded on first use."""
        return cls(header, texts, None)

    @property
    def decoded(self) -> bool:
        """Whether the log has been decoded (or never needed to be)."""
        return self._state is not None

    def state(self) -> SessionState:
        """The fold of the log, decoding every entry the first time.

        Raises:
            StorageError: an entry is damaged or newer (on every call until one succeeds).
        """
        state = self._state
        if state is not None:
            return state
        with self._lock:
            if self._state is None:
                texts = self._texts
                assert texts is not None  # an unread log has its texts until decoded
                entries = tuple([decode_session_entry(text) for text in texts])
                self._state = SessionState(StoredSession(self.header, entries))
                self._texts = None  # decoded: the messages are what is kept now
            return self._state

    def history(self) -> Sequence[Message]:
        """The conversation the model is sent: a tuple once decoded, else a lazy view."""
        state = self._state
        if state is not None:
            return state.history
        if self._history is None:
            self._history = LazyHistory(self)
        return self._history

    def may_have_pending_turn(self) -> bool:
        """Whether a turn may be pending (S40), from the entries' prefixes; ``True`` if unsure.

        ``False`` means certainly none: no entry is a TurnStarted, or the last one's turn was
        saved after it. A folded log answers exactly.
        """
        if self._state is not None:
            return self._state.pending is not None
        texts = self._texts
        assert texts is not None
        plain = list(map(str.startswith, texts, repeat(_CANNOT_PEND)))
        if all(plain):
            return False
        last = len(plain) - 1 - plain[::-1].index(False)
        text = texts[last]
        if not text.startswith(_TURN_STARTED):
            return True  # format 1, or text robota did not write: decode to know
        number = text[len(_TURN_STARTED) : text.find(",", len(_TURN_STARTED))]
        saved = f'[2,"turn_saved",{number},'
        return not any(later.startswith(saved) for later in texts[last + 1 :])


@final
class LazyHistory(Sequence[Message]):
    """``session.history`` of a session whose log is not decoded yet (see the module doc).

    A read-only sequence of messages that decodes the whole log on its first read (length,
    item, iteration, comparison) and keeps the result; it then reads as the tuple of those
    messages: it compares equal to an equal tuple, slices to a tuple, hashes as one and
    concatenates with one. ``tuple(history)`` gives the tuple itself. It shows the session as
    opened, also after later turns (as a tuple read then would).

    Raises:
        StorageError: on a read, when the log holds a damaged entry (code
            ``session_entry_damaged``) or a newer robota's (``session_entry_unknown``).
    """

    __slots__ = ("_log", "_messages")

    def __init__(self, log: SessionLog) -> None:
        self._log = log
        self._messages: tuple[Message, ...] | None = None

    def _items(self) -> tuple[Message, ...]:
        messages = self._messages
        if messages is None:
            messages = self._messages = self._log.state().history
        return messages

    def __len__(self) -> int:
        return len(self._items())

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        return self._items()[index]

    def __iter__(self) -> Iterator[Message]:
        return iter(self._items())

    def __reversed__(self) -> Iterator[Message]:
        return reversed(self._items())

    def __contains__(self, value: object) -> bool:
        return value in self._items()

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        """The first position of ``value`` (as :meth:`tuple.index`)."""
        items = self._items()
        return items.index(value, start, len(items) if stop is None else stop)

    def count(self, value: object) -> int:
        """How many times ``value`` occurs (as :meth:`tuple.count`)."""
        return self._items().count(value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyHistory):
            other = other._items()
        return isinstance(other, tuple) and self._items() == other

    def __hash__(self) -> int:
        return hash(self._items())

    def __add__(self, other: tuple[Message, ...] | LazyHistory) -> tuple[Message, ...]:
        if isinstance(other, LazyHistory):
            other = other._items()
        if not isinstance(other, tuple):
            return NotImplemented
        return self._items() + other

    def __radd__(self, other: tuple[Message, ...]) -> tuple[Message, ...]:
        if not isinstance(other, tuple):
            return NotImplemented
        return other + self._items()

    def __repr__(self) -> str:
        return repr(self._items())
