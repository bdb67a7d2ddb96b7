"""An in-memory :class:`~robota.sessions.SessionStore`, for tests and examples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from robota.core import ConfigurationError, StorageError
from robota.sessions import (
    SessionBusyError,
    SessionEntry,
    SessionHeader,
    SessionLease,
    SessionNotFoundError,
    SessionStore,
    StoredSession,
    check_entry_count,
    check_session_id,
    decode_session_entry,
    encode_session_entry,
)

__all__ = ["InMemorySessionStore"]


@final
class InMemorySessionStore(SessionStore):
    """A session store in this process's memory: lost with the process.

    Holds the same contract as the durable stores (the conformance kit runs on it): one writer
    per session (a second :meth:`acquire` raises :class:`~robota.sessions.SessionBusyError` at
    once), ordered appends, entries kept in their encoded form (so a value that could not be
    stored durably is refused here too). Share the one instance between the sessions that should
    see each other; it is not shared between processes.
    """

    __slots__ = ("_closed", "_headers", "_held", "_logs")

    def __init__(self) -> None:
        self._headers: dict[str, SessionHeader] = {}
        self._logs: dict[str, list[str]] = {}
        self._held: dict[str, object] = {}
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("the in-memory session store is closed", code="store_closed")

    def _known(self, session_id: str) -> str:
        check_session_id(session_id)
        if session_id not in self._headers:
            raise SessionNotFoundError(
                f"no session {session_id!r} in this store; open it with session_id=None for a "
                "new one, or list the store's sessions",
                session_id=session_id,
            )
        return session_id

    async def create(self, header: SessionHeader, entries: Sequence[SessionEntry] = ()) -> None:
        """See :meth:`SessionStore.create`."""
        self._check_open()
        check_session_id(header.id)
        texts = [encode_session_entry(entry) for entry in entries]  # all or nothing
        if header.id in self._headers:
            raise ConfigurationError(
                f"a session {header.id!r} exists already; choose another id",
                code="session_exists",
            )
        self._headers[header.id] = header
        self._logs[header.id] = texts

    async def load(self, session_id: str) -> StoredSession:
        """See :meth:`SessionStore.load`."""
        self._check_open()
        self._known(session_id)
        entries = tuple(decode_session_entry(text) for text in self._logs[session_id])
        return StoredSession(self._headers[session_id], entries)

    async def load_after(self, session_id: str, after: int) -> StoredSession:
        """See :meth:`SessionStore.load_after`."""
        self._check_open()
        self._known(session_id)
        check_entry_count(after)
        texts = self._logs[session_id][after:]
        return StoredSession(self._headers[session_id], tuple(map(decode_session_entry, texts)))

    async def list_sessions(self) -> tuple[SessionHeader, ...]:
        """See :meth:`SessionStore.list_sessions`."""
        self._check_open()
        return tuple(sorted(self._headers.values(), key=lambda h: (h.created_at, h.id)))

    async def acquire(self, session_id: str) -> SessionLease:
        """See :meth:`SessionStore.acquire`."""
        self._check_open()
        self._known(session_id)
        if session_id in self._held:
            raise SessionBusyError(
                f"session {session_id!r} is in use by another writer (a turn in progress); "
                "try again when its turn has ended",
                session_id=session_id,
            )
        token = object()
        self._held[session_id] = token
        return _Lease(self, session_id, token)

    async def delete(self, session_id: str) -> None:
        """See :meth:`SessionStore.delete`."""
        lease = await self.acquire(session_id)
        try:
            del self._headers[session_id]
            del self._logs[session_id]
        finally:
            await lease.release()

    async def aclose(self) -> None:
        """See :meth:`SessionStore.aclose`."""
        self._closed = True
        self._held.clear()

    def _append(self, session_id: str, token: object, entry: SessionEntry) -> None:
        self._check_open()
        if self._held.get(session_id) is not token:
            raise StorageError(
                f"the lease on session {session_id!r} is no longer held; nothing was written"
            )
        self._logs[session_id].append(encode_session_entry(entry))

    def _release(self, session_id: str, token: object) -> None:
        if self._held.get(session_id) is token:
            del self._held[session_id]

    def __repr__(self) -> str:
        return f"<InMemorySessionStore {len(self._headers)} sessions>"


@final
class _Lease(SessionLease):
    __slots__ = ("_id", "_released", "_store", "_token")

    def __init__(self, store: InMemorySessionStore, session_id: str, token: object) -> None:
        self._store = store
        self._id = session_id
        self._token = token
        self._released = False

    @property
    def session_id(self) -> str:
        return self._id

    async def append(self, entry: SessionEntry) -> None:
        if self._released:
            raise StorageError(f"the lease on session {self._id!r} was released; acquire it again")
        self._store._append(self._id, self._token, entry)

    async def release(self) -> None:
        if not self._released:
            self._released = True
            self._store._release(self._id, self._token)
