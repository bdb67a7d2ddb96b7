"""The embedded session store: one SQLite file, one writer per session by ``flock`` (S07, S10).

On disk, beside each other (the layout of :class:`~robota.host.SQLiteJournal`):

* ``<path>`` — the database, owner-only (``0600`` from creation, checked, S07; its directory
  must not let another account create or replace names), in WAL mode with ``synchronous=FULL``
  so an append that returned survives a crash or power loss. Tables: ``robota_sessions_meta``
  (the schema version), ``robota_sessions`` (one header per session, with its summary: the
  totals :func:`~robota.sessions.list_sessions` shows, folded in the same write as each entry so
  listing reads no log) and
  ``robota_session_entries`` (the session's log: id, sequence from 1, the entry's versioned JSON
  text). A database of another schema version is refused, except version 2 (entries in format
  1), which is marked version 3 in place: its entries still read.
* ``<path>.locks/`` — an owner-only directory of lock files named by the SHA-256 of the session
  id. A lease is an exclusive non-blocking ``flock`` on its file: a second writer in this or
  another process is refused at once (:class:`~robota.sessions.SessionBusyError`), and the
  kernel drops the lock when the holder dies — a crashed turn never blocks the session.

Every SQLite call and lock operation runs on the store's one worker thread in submission order;
a submitted job runs to its end even when its caller is cancelled, so an append is whole or
absent. ``sqlite3`` and OS errors become :class:`~robota.StorageError` in one place.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final, TypeVar, final

from robota.core import ConfigurationError, StorageError
from robota.host import OwnerOnlyStore, prepare_owner_only_database, try_lock_file
from robota.sessions._codec import decode_session_entry, encode_session_entry
from robota.sessions._errors import SessionBusyError, SessionNotFoundError
from robota.sessions._records import (
    SessionEntry,
    SessionHeader,
    StoredSession,
)
from robota.sessions._state import SessionInfo
from robota.sessions._store import (
    SessionLease,
    SessionStore,
    check_entry_count,
    check_session_id,
)
from robota.sessions._summary import (
    Summary,
    decode_summary,
    encode_summary,
    fold_summary,
    summary_info,
)

__all__ = ["SQLiteSessionStore"]

T = TypeVar("T")

_SCHEMA_VERSION: Final = "3"  # 2: robota_sessions.summary; 3: entries in format 2 (issue 27)
# A version-2 file differs only in its entries' format, which this robota reads in both forms:
# opening one marks it version 3, so a robota that reads only format 1 refuses it by its version.
_UPGRADABLE: Final = "2"
_BUSY_TIMEOUT: Final = 10.0  # seconds SQLite waits for another process's short write
_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS robota_sessions_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS robota_sessions (id TEXT PRIMARY KEY, created_at REAL NOT NULL,"
    " parent_id TEXT, fork_at INTEGER, summary TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS robota_session_entries (session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID",
)


@final
class SQLiteSessionStore(SessionStore):
    """A :class:`~robota.sessions.SessionStore` in one SQLite file: the embedded default.

    Several processes may share the file; one writer per session is enforced across all of them
    by a crash-released ``flock`` (POSIX only). For workers on several machines use
    ``PostgresSessionStore``: a network filesystem's ``flock`` is not a cross-machine lock.
    The file holds conversations, so it is owner-only (S07) exactly as the journal's is: a file,
    side file or lock directory another account could read or write is refused with
    :class:`~robota.host.InsecureModeError` unless ``repair=True`` (after checking nobody did).

    Args:
        path: The database file (``str`` or :class:`os.PathLike`); its directory must exist.
        repair: Tighten a database, side file or lock directory found wider than owner-only
            instead of refusing it.

    Raises:
        ConfigurationError: ``":memory:"`` (use :class:`robota.testing.InMemorySessionStore`),
            an empty path, a directory, or a path whose directory does not exist.
    """

    __slots__ = ("_close_job", "_connection", "_executor", "_held", "_locks", "_path", "_repair")

    def __init__(self, path: str | os.PathLike[str], *, repair: bool = False) -> None:
        self._path = _database_path(path)
        self._repair = repair
        self._locks = self._path + ".locks"
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="robota-sessions")
        self._close_job: Future[None] | None = None
        self._connection: sqlite3.Connection | None = None  # worker thread only
        self._held: dict[str, tuple[object, int]] = {}  # worker thread only

    @property
    def path(self) -> str:
        """The database file, absolute, links resolved."""
        return self._path

    async def create(self, header: SessionHeader, entries: Sequence[SessionEntry] = ()) -> None:
        """See :meth:`SessionStore.create`."""
        check_session_id(header.id)
        texts = [encode_session_entry(entry) for entry in entries]
        summary = encode_summary(fold_summary(Summary(header.created_at), entries))
        await self._run(functools.partial(self._create, header, texts, summary))

    async def load(self, session_id: str) -> StoredSession:
        """See :meth:`SessionStore.load`."""
        check_session_id(session_id)
        header, texts = await self._run(functools.partial(self._load, session_id))
        return StoredSession(header, tuple(decode_session_entry(text) for text in texts))

    async def _load_texts(self, session_id: str) -> tuple[SessionHeader, list[str]]:
        """See :meth:`SessionStore._load_texts`: :meth:`load`'s one read, not decoded."""
        check_session_id(session_id)
        return await self._run(functools.partial(self._load, session_id))

    async def load_after(self, session_id: str, after: int) -> StoredSession:
        """See :meth:`SessionStore.load_after`: reads only the entries after ``after``."""
        check_session_id(session_id)
        check_entry_count(after)
        header, texts = await self._run(functools.partial(self._load, session_id, after))
        return StoredSession(header, tuple(decode_session_entry(text) for text in texts))

    async def list_sessions(self) -> tuple[SessionHeader, ...]:
        """See :meth:`SessionStore.list_sessions`."""
        return await self._run(self._list)

    async def list_session_infos(self) -> tuple[SessionInfo, ...]:
        """See :meth:`SessionStore.list_session_infos`: reads the summaries, no log."""
        rows = await self._run(self._list_summaries)
        return tuple(summary_info(header, decode_summary(text)) for header, text in rows)

    async def acquire(self, session_id: str) -> SessionLease:
        """See :meth:`SessionStore.acquire`."""
        check_session_id(session_id)
        token = object()
        try:
            await self._run(functools.partial(self._lock, session_id, token))
        except asyncio.CancelledError:
            with contextlib.suppress(RuntimeError):  # shut down: closing released every lock
                self._executor.submit(self._unlock, session_id, token)
            raise
        return _SQLiteLease(self, session_id, token)

    async def delete(self, session_id: str) -> None:
        """See :meth:`SessionStore.delete`."""
        lease = await self.acquire(session_id)
        try:
            await self._run(functools.partial(self._delete, session_id))
        finally:
            await lease.release()

    async def aclose(self) -> None:
        """See :meth:`SessionStore.aclose`."""
        if self._close_job is None:
            self._close_job = self._executor.submit(self._close)
            self._executor.shutdown(wait=False)
        with contextlib.suppress(StorageError):
            await asyncio.shield(asyncio.wrap_future(self._close_job))

    def __repr__(self) -> str:
        state = "closed" if self._close_job is not None else "open"
        return f"<SQLiteSessionStore {self._path!r} {state}>"

    # ------------------------------------------------------------------ the loop's side

    async def _run(self, job: Callable[[], T]) -> T:
        if self._close_job is not None:
            raise StorageError(f"the session store {self._path} is closed", code="store_closed")
        return await asyncio.shield(asyncio.wrap_future(self._executor.submit(job)))

    # ------------------------------------------------------------------ the worker's side

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        with _translated(f"open the session store {self._path}"):
            prepare_owner_only_database(self._path, repair=self._repair, holder="session store")
            connection = sqlite3.connect(
                self._path, timeout=_BUSY_TIMEOUT, isolation_level=None, check_same_thread=True
            )
            try:
                _configure(connection, self._path)
                _create_schema(connection, self._path)
            except BaseException:
                connection.close()
                raise
        self._connection = connection
        return connection

    @contextlib.contextmanager
    def _write(self, what: str) -> Iterator[sqlite3.Connection]:
        connection = self._connect()
        with _translated(what):
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")  # durable here: WAL, synchronous=FULL
            except BaseException:
                if connection.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        connection.execute("ROLLBACK")
                raise

    def _create(self, header: SessionHeader, texts: list[str], summary: str) -> None:
        with self._write(f"create session {header.id!r} in {self._path}") as connection:
            if connection.execute(
                "SELECT 1 FROM robota_sessions WHERE id = ?", (header.id,)
            ).fetchone():
                raise ConfigurationError(
                    f"a session {header.id!r} exists already in {self._path}; choose another id",
                    code="session_exists",
                )
            connection.execute(
                "INSERT INTO robota_sessions (id, created_at, parent_id, fork_at, summary)"
                " VALUES (?, ?, ?, ?, ?)",
                (header.id, header.created_at, header.parent_id, header.fork_at, summary),
            )
            connection.executemany(
                "INSERT INTO robota_session_entries (session_id, seq, entry) VALUES (?, ?, ?)",
                [(header.id, seq, text) for seq, text in enumerate(texts, start=1)],
            )

    def _header(self, connection: sqlite3.Connection, session_id: str) -> SessionHeader:
        row = connection.execute(
            "SELECT id, created_at, parent_id, fork_at FROM robota_sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
        if row is None:
            raise SessionNotFoundError(
                f"no session {session_id!r} in {self._path}; open it with session_id=None for a "
                "new one, or list the store's sessions",
                session_id=session_id,
            )
        return SessionHeader(row[0], float(row[1]), row[2], row[3])

    def _load(self, session_id: str, after: int = 0) -> tuple[SessionHeader, list[str]]:
        connection = self._connect()
        with _translated(f"read session {session_id!r} from {self._path}"):
            connection.execute("BEGIN")  # one snapshot: the header and the log agree
            try:
                header = self._header(connection, session_id)
                # seq counts from 1 with no gaps (append takes max + 1 under the lease), so the
                # entries after the first ``after`` are those with seq > after.
                rows = connection.execute(
                    "SELECT entry FROM robota_session_entries WHERE session_id = ? AND seq > ?"
                    " ORDER BY seq",
                    (session_id, after),
                ).fetchall()
            finally:
                connection.execute("COMMIT")
        return header, [row[0] for row in rows]

    def _list(self) -> tuple[SessionHeader, ...]:
        connection = self._connect()
        with _translated(f"list the sessions in {self._path}"):
            rows = connection.execute(
                "SELECT id, created_at, parent_id, fork_at FROM robota_sessions"
                " ORDER BY created_at, id"
            ).fetchall()
        return tuple(SessionHeader(r[0], float(r[1]), r[2], r[3]) for r in rows)

    def _list_summaries(self) -> list[tuple[SessionHeader, str]]:
        connection = self._connect()
        with _translated(f"list the sessions in {self._path}"):
            rows = connection.execute(
                "SELECT id, created_at, parent_id, fork_at, summary FROM robota_sessions"
                " ORDER BY created_at, id"
            ).fetchall()
        return [(SessionHeader(r[0], float(r[1]), r[2], r[3]), r[4]) for r in rows]

    def _lock(self, session_id: str, token: object) -> None:
        connection = self._connect()
        if session_id in self._held:
            raise _busy(session_id, self._path)
        with _translated(f"create the lock directory {self._locks}"):
            OwnerOnlyStore(self._locks, repair=self._repair)  # S07: 0700, checked
        lock_path = os.path.join(self._locks, hashlib.sha256(session_id.encode()).hexdigest())
        with _translated(f"lock {lock_path}"):
            fd = try_lock_file(lock_path)
        if fd is None:
            raise _busy(session_id, self._path)
        try:
            with _translated(f"read session {session_id!r} from {self._path}"):
                self._header(connection, session_id)
        except BaseException:
            os.close(fd)
            raise
        self._held[session_id] = (token, fd)

    def _unlock(self, session_id: str, token: object) -> None:
        held = self._held.get(session_id)
        if held is None or held[0] is not token:
            return
        del self._held[session_id]
        with contextlib.suppress(OSError):
            os.close(held[1])  # drops the flock; the file stays (S10)

    def _append(self, session_id: str, token: object, entry: SessionEntry, text: str) -> None:
        held = self._held.get(session_id)
        if held is None or held[0] is not token:
            raise StorageError(
                f"the lease on session {session_id!r} is no longer held; nothing was written"
            )
        with self._write(f"append to session {session_id!r} in {self._path}") as connection:
            (seq,) = connection.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM robota_session_entries WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            connection.execute(
                "INSERT INTO robota_session_entries (session_id, seq, entry) VALUES (?, ?, ?)",
                (session_id, seq, text),
            )
            (summary,) = connection.execute(
                "SELECT summary FROM robota_sessions WHERE id = ?", (session_id,)
            ).fetchone()
            connection.execute(
                "UPDATE robota_sessions SET summary = ? WHERE id = ?",
                (encode_summary(fold_summary(decode_summary(summary), (entry,))), session_id),
            )

    def _delete(self, session_id: str) -> None:
        with self._write(f"delete session {session_id!r} from {self._path}") as connection:
            connection.execute(
                "DELETE FROM robota_session_entries WHERE session_id = ?", (session_id,)
            )
            connection.execute("DELETE FROM robota_sessions WHERE id = ?", (session_id,))

    def _close(self) -> None:
        for _, fd in self._held.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._held.clear()
        connection, self._connection = self._connection, None
        if connection is not None:
            with _translated(f"close the session store {self._path}"):
                connection.close()


@final
class _SQLiteLease(SessionLease):
    __slots__ = ("_id", "_released", "_store", "_token")

    def __init__(self, store: SQLiteSessionStore, session_id: str, token: object) -> None:
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
        text = encode_session_entry(entry)  # not JSON: nothing is written
        await self._store._run(
            functools.partial(self._store._append, self._id, self._token, entry, text)
        )

    async def release(self) -> None:
        if self._released:
            return
        self._released = True
        if self._store._close_job is None:
            await self._store._run(functools.partial(self._store._unlock, self._id, self._token))

    def __repr__(self) -> str:
        return f"<SQLiteSessionStore lease on {self._id!r}>"


def _busy(session_id: str, path: str) -> SessionBusyError:
    return SessionBusyError(
        f"session {session_id!r} is in use by another writer (a turn in this or another process "
        f"on {path}); try again when that turn has ended — a crashed writer releases it at once",
        session_id=session_id,
    )


def _database_path(path: object) -> str:
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise ConfigurationError(
            f"SQLiteSessionStore needs a file path (str or os.PathLike), got {path!r}"
        )
    raw = os.fspath(path)
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        raise ConfigurationError(f"SQLiteSessionStore needs a file path, got {raw!r}")
    if raw == ":memory:":
        raise ConfigurationError(
            "SQLiteSessionStore(':memory:') would lose every session with the process; use "
            "robota.testing.InMemorySessionStore() for sessions that need not be durable"
        )
    full = os.path.realpath(raw)
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        raise ConfigurationError(
            f"the session store's directory {parent} does not exist; create it before opening "
            f"SQLiteSessionStore({raw!r})"
        )
    if os.path.isdir(full):
        raise ConfigurationError(
            f"SQLiteSessionStore({raw!r}) names a directory; give the database file's path, "
            f"e.g. {os.path.join(raw, 'sessions.db')!r}"
        )
    return full


def _configure(connection: sqlite3.Connection, path: str) -> None:
    mode = _switch_to_wal(connection)
    if str(mode).lower() != "wal":
        raise StorageError(
            f"the session store {path} cannot use write-ahead logging (journal_mode is {mode!r}); "
            "put it on a local filesystem"
        )
    connection.execute("PRAGMA synchronous=FULL")  # a saved turn is on stable storage
    connection.execute("PRAGMA fullfsync=ON")
    connection.execute("PRAGMA checkpoint_fullfsync=ON")


def _switch_to_wal(connection: sqlite3.Connection) -> object:
    """``PRAGMA journal_mode=WAL``'s answer, retried while another opener holds the file.

    The first opens of a fresh file race to switch it to write-ahead logging, and the switch
    can answer "database is locked" at once instead of waiting out the busy timeout: retry,
    bounded by that timeout, so concurrent first opens all succeed.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT
    delay = 0.005
    while True:
        try:
            (mode,) = connection.execute("PRAGMA journal_mode=WAL").fetchone()
            return mode
        except sqlite3.OperationalError as exc:
            busy = (exc.sqlite_errorcode & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)  # on the store's worker thread, never the event loop
        delay = min(delay * 2, 0.25)


def _create_schema(connection: sqlite3.Connection, path: str) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA:
            connection.execute(statement)
        connection.execute(
            "INSERT OR IGNORE INTO robota_sessions_meta (key, value) VALUES ('schema_version', ?)",
            (_SCHEMA_VERSION,),
        )
        connection.execute(
            "UPDATE robota_sessions_meta SET value = ? WHERE key = 'schema_version' AND value = ?",
            (_SCHEMA_VERSION, _UPGRADABLE),
        )
        (version,) = connection.execute(
            "SELECT value FROM robota_sessions_meta WHERE key = 'schema_version'"
        ).fetchone()
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        raise
    if version != _SCHEMA_VERSION:
        raise StorageError(
            f"the session store {path} has schema version {version!r}; this robota reads "
            f"version {_SCHEMA_VERSION} (a newer version: upgrade robota; version 1, from a "
            "development build before session summaries: move the file aside and start a new one)",
            code="session_store_version",
        )


@contextlib.contextmanager
def _translated(what: str) -> Iterator[None]:
    """The one place SQLite and OS errors become :class:`~robota.StorageError`."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StorageError(f"could not {what}: {exc}", cause=exc) from exc
    except OSError as exc:
        raise StorageError(f"could not {what}: {exc}", cause=exc) from exc
    except UnicodeEncodeError as exc:
        raise StorageError(f"could not {what}: the text is not valid Unicode", cause=exc) from exc
