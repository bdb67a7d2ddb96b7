"""The session store port: where sessions live, and the one writer per session (S10).

A store keeps, per session, a :class:`~robota.sessions.SessionHeader` and an append-only log of
entries (``robota.sessions._records``), and hands out one :class:`SessionLease` per session at a
time, across handles, processes and — for a networked store — machines. Implementations:
:class:`robota.sessions.SQLiteSessionStore` (embedded, one file), ``PostgresSessionStore`` (many
workers), and :class:`robota.testing.InMemorySessionStore`; a third party's store is held to the
same contract by :func:`robota.testing.run_session_store_conformance`.

The contract, rule by rule (the conformance kit checks each):

* **Create once.** :meth:`SessionStore.create` stores a header and its first entries in one
  atomic write; an id that exists is refused (:class:`~robota.ConfigurationError`, code
  ``session_exists``) and the stored session is left as it was.
* **One writer.** :meth:`SessionStore.acquire` returns the session's lease or raises
  :class:`~robota.sessions.SessionBusyError` *at once* when another lease holds it; a holder
  that dies loses it without anyone waiting for a timeout, and elapsed time never takes it from
  a live holder. An unknown id raises :class:`~robota.sessions.SessionNotFoundError`.
* **Durable, ordered appends.** :meth:`SessionLease.append` writes one entry atomically; when
  it returns, every handle (and process) reads it, after every entry appended before it. A
  released lease appends nothing (:class:`~robota.StorageError`).
* **Reads need no lease.** :meth:`SessionStore.load` returns the header and every entry in
  append order, exactly as written; :meth:`SessionStore.load_after` the header and the entries
  after a given count (what was appended since a session's last read);
  :meth:`SessionStore.list_sessions` every header;
  :meth:`SessionStore.list_session_infos` every session's :class:`~robota.sessions.SessionInfo`,
  exactly as the fold of its log gives it (a durable store keeps a summary per session beside
  the log, so listing reads no log).
* **Delete is the owner's.** :meth:`SessionStore.delete` takes the lease itself (so it refuses,
  with ``SessionBusyError``, a session in use) and removes the session and its log.
* **Close.** :meth:`SessionStore.aclose` is idempotent and gives up the leases it holds; every
  later call raises :class:`~robota.StorageError`.

Entries are opaque to a store: it keeps :func:`~robota.sessions.encode_session_entry`'s text in
order and gives back :func:`~robota.sessions.decode_session_entry`'s values, so a new entry kind
(compaction, issue 27 item 2) needs no store change.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from types import TracebackType
from typing import Final, Self

from robota.core import ConfigurationError
from robota.sessions._errors import SessionNotFoundError
from robota.sessions._records import SessionEntry, SessionHeader, StoredSession
from robota.sessions._state import SessionInfo, SessionState

__all__ = [
    "MAX_SESSION_ID_LENGTH",
    "SessionLease",
    "SessionStore",
    "check_entry_count",
    "check_session_id",
]

MAX_SESSION_ID_LENGTH: Final = 180
"""The longest session id, in characters."""

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def check_session_id(value: object) -> str:
    """``value`` as a session id, or a :class:`~robota.ConfigurationError` naming the fix.

    A session id is 1–180 characters of valid Unicode text without control characters and
    without ``/``: a turn's execution id is ``"<session id>/<turn>"``, within the journal's 200.
    """
    if not isinstance(value, str):
        raise ConfigurationError(f"a session id must be a string, got {type(value).__name__}")
    problem = ""
    if not value or len(value) > MAX_SESSION_ID_LENGTH:
        problem = f"must be 1 to {MAX_SESSION_ID_LENGTH} characters long"
    elif _CONTROL.search(value) or "/" in value:
        problem = "must not contain control characters or '/'"
    else:
        try:
            value.encode()
        except UnicodeEncodeError:
            problem = "must be valid Unicode text (no lone surrogates)"
    if problem:
        raise ConfigurationError(
            f"session id {value[:60]!r} {problem}; choose another id (or pass none for a new one)"
        )
    return value


def check_entry_count(after: object) -> int:
    """``after`` as a count of log entries for :meth:`SessionStore.load_after`."""
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise ConfigurationError(
            f"load_after() takes how many entries to skip, a non-negative integer; got {after!r}"
        )
    return after


class SessionLease(ABC):
    """The one writer's hold on a session (S10), from :meth:`SessionStore.acquire`.

    Release it when done (``async with`` does); a holder that crashes loses it without anyone
    waiting for a timeout.
    """

    @property
    @abstractmethod
    def session_id(self) -> str:
        """The session this lease writes."""

    @abstractmethod
    async def append(self, entry: SessionEntry) -> None:
        """Append ``entry`` to the session's log, atomically; durable when this returns.

        Raises:
            StorageError: the write failed, or the lease is released or no longer held. A write
                that failed or was cancelled may still have been stored.
            ConfigurationError: the entry is not storable (nothing was written).
        """

    @abstractmethod
    async def release(self) -> None:
        """Give the session up; idempotent. Appending afterwards raises StorageError."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.release()


class SessionStore(ABC):
    """Sessions by id: headers, append-only entry logs, one writer each (see the module doc).

    Lifecycle: a store is usable once built (a durable store opens its file or pool on first
    use) until :meth:`aclose`; it is also an async context manager. Sessions do not close the
    store they were given.
    """

    @abstractmethod
    async def create(self, header: SessionHeader, entries: Sequence[SessionEntry] = ()) -> None:
        """Store a new session with its first entries, atomically (all or nothing).

        Raises:
            ConfigurationError: a session with ``header.id`` exists (code ``session_exists``);
                nothing was changed.
            StorageError: the store failed or is closed.
        """

    @abstractmethod
    async def load(self, session_id: str) -> StoredSession:
        """The session's header and every entry, in append order; needs no lease.

        Raises:
            SessionNotFoundError: no such session.
            StorageError: the store failed, is closed, or holds a damaged entry.
        """

    async def load_after(self, session_id: str, after: int) -> StoredSession:
        """The session's header and its entries after the first ``after``, in append order.

        What :meth:`load` returns with ``entries[after:]``; a session reads only what was
        appended since its last read (issue 27), so a store that can select by position
        overrides this default (which loads every entry and drops the first ``after``).
        ``after`` past the end gives no entries.

        Raises:
            ConfigurationError: ``after`` is not a non-negative integer.
            SessionNotFoundError: no such session.
            StorageError: the store failed, is closed, or holds a damaged entry.
        """
        check_entry_count(after)
        stored = await self.load(session_id)
        return StoredSession(stored.header, stored.entries[after:])

    async def _load_texts(self, session_id: str) -> tuple[SessionHeader, list[str]] | None:
        """The header and every entry's stored text, undecoded; ``None``: not kept as text.

        What :meth:`load` reads, before decoding: ``Session.open`` decodes a long log on first
        use instead (issue 27). A store that keeps :func:`encode_session_entry`'s text may
        override this; the default, ``None``, makes ``Session.open`` use :meth:`load`.

        Raises:
            SessionNotFoundError: no such session.
            StorageError: the store failed or is closed.
        """
        return None

    @abstractmethod
    async def list_sessions(self) -> tuple[SessionHeader, ...]:
        """Every session's header, oldest first (by ``created_at``, then id).

        Raises:
            StorageError: the store failed or is closed.
        """

    async def list_session_infos(self) -> tuple[SessionInfo, ...]:
        """Every session's :class:`~robota.sessions.SessionInfo`, oldest first.

        In :meth:`list_sessions`'s order. Each must equal the fold of the session's log as
        :meth:`load` returns it. This default reads every log (one load per session); a store
        that keeps a summary per session, updated in the same write as each entry, overrides
        it so listing reads no log.

        Raises:
            StorageError: the store failed or is closed.
        """
        infos: list[SessionInfo] = []
        for header in await self.list_sessions():
            try:
                infos.append(SessionState(await self.load(header.id)).info())
            except SessionNotFoundError:
                continue  # deleted meanwhile
        return tuple(infos)

    @abstractmethod
    async def acquire(self, session_id: str) -> SessionLease:
        """Take the session's one writer's lease.

        Raises:
            SessionBusyError: at once, when another lease holds it (this handle, another handle
                or another process).
            SessionNotFoundError: no such session.
            StorageError: the store failed or is closed.
        """

    @abstractmethod
    async def delete(self, session_id: str) -> None:
        """Remove the session and its whole log, under its lease (taken and given up here).

        Raises:
            SessionBusyError: another writer holds it.
            SessionNotFoundError: no such session.
            StorageError: the store failed or is closed.
        """

    @abstractmethod
    async def aclose(self) -> None:
        """Close the store and give up its leases; idempotent."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
