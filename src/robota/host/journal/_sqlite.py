"""The embedded execution journal (S40): one SQLite file, one writer per execution by ``flock``.

On disk, beside each other:

* ``<path>``'s directory — owner-only (``0700``, this account's), as an owner-only store's
  directories are (S07): the journal's files are checked by name and opened by name later, which
  holds only where no other account can create or replace a name. A wider directory is refused
  (:class:`~robota.host.InsecureModeError`) and tightened only on ``repair=True``; another
  account's, or a shared one like ``/tmp``, is refused even then.
* ``<path>`` — the database, in WAL mode with ``synchronous=FULL`` (and ``fullfsync`` where the
  platform has it), so every committed append is on stable storage before it returns.
  ``robota_journal`` holds one row per record — the execution id, its sequence number counted
  from 1, and the record's versioned JSON text from
  :func:`~robota.core.execution._journal.encode_journal_record`; ``robota_journal_meta`` holds
  the schema version. Created ``0600`` from the start on first use (S07: never created wide and
  tightened, and verified); SQLite gives its ``-wal``, ``-shm`` and ``-journal`` files the same
  mode. An existing database or side file that is not a regular file, belongs to another
  account, or that another account could read or write is refused
  (:class:`~robota.host.InsecureModeError`) rather than adopted, and tightened only when the
  caller passes ``repair=True``.
* ``<path>.locks/`` — an owner-only directory (checked as an owner-only store checks its own) of
  lock files, one per execution ever acquired, named by the SHA-256 of the execution id. A lease
  is an exclusive non-blocking ``flock`` on its file (S10): a second writer — another handle in
  this process or another process — is refused at once with
  :class:`~robota.ExecutionLockedError`, the kernel drops the lock when the holding process
  dies, and no amount of elapsed time takes it from a live holder. Lock files are never removed:
  replacing a file someone may hold would split the lock.

Threading: every SQLite call and every lock-file operation runs on the journal's one worker
thread, in submission order, so the event loop never blocks on the disk and one connection is
used serially. A job, once submitted, runs to its end even when the awaiting task is cancelled
(the result is then dropped, and a lock an abandoned acquire took is given back), so a cancelled
append is either durable or absent, never half-written. Every ``sqlite3`` and OS error is
translated to :class:`~robota.StorageError` in one place (:func:`_translated`), keeping the
original as its cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final, Literal, TypeAlias, TypeVar, final

from robota.core import (
    ConfigurationError,
    ExecutionJournal,
    ExecutionLockedError,
    JournalLease,
    JournalRecord,
    StorageError,
    decode_journal_record,
    encode_journal_record,
)
from robota.host.store._sqlite_files import prepare_owner_only_database
from robota.host.store._store import OwnerOnlyStore

__all__ = ["SQLiteJournal"]

T = TypeVar("T")

_SCHEMA_VERSION: Final = "1"
_LOCKS_SUFFIX: Final = ".locks"
_FILE_MODE: Final = 0o600
#: Seconds SQLite waits for another process's write transaction (appends are one short
#: transaction each). This is never a wait for an execution's lease, which is refused at once.
_BUSY_TIMEOUT: Final = 10.0

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS robota_journal_meta ( key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS robota_journal ("
    " execution_id TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL,"
    " PRIMARY KEY (execution_id, seq)) WITHOUT ROWID",
)

_State: TypeAlias = Literal["open", "closing", "closed"]


@final
class SQLiteJournal(ExecutionJournal):
    """An :class:`~robota.ExecutionJournal` in one SQLite file: the embedded default (S40).

    Durable at each append (WAL, ``synchronous=FULL``): an append that returned survives a
    process crash or a power loss. Several processes may share the file; one writer per
    execution is enforced across all of them and across handles in one process (S10) by a
    crash-released ``flock`` on ``<path>.locks/<sha256 of the id>``. POSIX only. The file and
    its tables are created on first use; a database written by a newer schema is refused.

    Use it as an async context manager or call :meth:`aclose`, which gives up the leases this
    handle still holds. Each handle runs its own worker thread; open one per process and share
    it rather than one per run. A network filesystem whose ``flock`` is not honoured between
    machines cannot keep one writer per execution: use
    :class:`~robota.host.PostgresJournal` for workers on several machines.

    The journal holds conversations and tool results, so it is owner-only (S07): its directory
    must be owner-only (``0700``, this account's — a directory of its own, not ``/tmp`` or a
    shared folder), a new database is created ``0600`` and its lock directory ``0700``. A
    directory, database, side file (``-wal``, ``-shm``, ``-journal``) or lock directory that
    another account could read or write, or that belongs to another account, is refused at first
    use with :class:`~robota.host.InsecureModeError` (a :class:`~robota.StorageError`): its
    records may have been read or changed, or files planted beside them.

    Args:
        path: The database file (``str`` or :class:`os.PathLike`). Its directory must exist
            and be owner-only. ``":memory:"`` is refused — use
            :class:`robota.testing.InMemoryJournal` for a journal that need not outlive the
            process.
        repair: Tighten the directory, an existing database, side file or lock directory found
            wider than owner-only instead of refusing it. Only pass it after making sure nobody
            read or changed the records, or planted a file beside them, while it was open,
            because the journal then trusts them. Another account's file or directory, and a
            shared directory like ``/tmp`` (sticky, writable by others), are refused all the
            same.

    Raises:
        ConfigurationError: for ``":memory:"``, an empty path, a path that is not text, a
            directory, or a path whose parent directory does not exist.
    """

    __slots__ = (
        "_close_job",
        "_connection",
        "_executor",
        "_held",
        "_locks",
        "_path",
        "_repair",
        "_state",
    )

    def __init__(self, path: str | os.PathLike[str], *, repair: bool = False) -> None:
        self._path = _database_path(path)
        self._repair = repair
        self._locks = self._path + _LOCKS_SUFFIX
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="robota-sqlite-journal"
        )
        self._state: _State = "open"
        self._close_job: Future[None] | None = None
        # Touched only on the worker thread: the connection, and each held lease's lock file
        # descriptor under the token of the lease that took it.
        self._connection: sqlite3.Connection | None = None
        self._held: dict[str, tuple[object, int]] = {}

    @property
    def path(self) -> str:
        """The database file, as an absolute path with symbolic links resolved."""
        return self._path

    async def acquire(self, execution_id: str) -> JournalLease:
        """Take the one writer's lease on ``execution_id`` (known or new).

        Raises:
            ExecutionLockedError: at once, when another lease holds it — from this handle,
                another handle or another process.
            ConfigurationError: ``execution_id`` is not a non-empty string.
            StorageError: the journal is closed, or its database or lock file cannot be used.
        """
        _check_id(execution_id)
        token = object()
        try:
            await self._run(functools.partial(self._lock, execution_id, token))
        except asyncio.CancelledError:
            # The job still runs; queued after it, this gives back whatever lock it took.
            with contextlib.suppress(RuntimeError):  # shut down: closing released every lock
                self._executor.submit(self._unlock, execution_id, token)
            raise
        return _SQLiteLease(self, execution_id, token)

    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        """Every record of ``execution_id`` in append order; ``()`` for an unknown execution.

        Needs no lease, and sees every append that has returned, from any handle or process.

        Raises:
            ConfigurationError: ``execution_id`` is not a non-empty string.
            StorageError: the journal is closed or unreadable, a record is damaged, or the log
                has a gap (a record is missing).
        """
        _check_id(execution_id)
        return await self._run(functools.partial(self._read, execution_id))

    async def aclose(self) -> None:
        """Close the connection, give up the leases still held and stop the worker thread.

        Idempotent; concurrent calls wait for the same close. Afterwards :meth:`acquire`,
        :meth:`read` and every lease's ``append`` raise :class:`~robota.StorageError`.
        """
        if self._close_job is not None:
            with contextlib.suppress(StorageError):  # the first aclose() reported it
                await asyncio.shield(asyncio.wrap_future(self._close_job))
            return
        self._state = "closing"
        self._close_job = self._executor.submit(self._close)
        self._executor.shutdown(wait=False)  # the close job still runs; the thread then ends
        try:
            await asyncio.shield(asyncio.wrap_future(self._close_job))
        finally:
            self._state = "closed"

    def __repr__(self) -> str:
        return f"<SQLiteJournal {self._path!r} {self._state}>"

    # ------------------------------------------------------------------ the loop's side

    async def _run(self, job: Callable[[], T]) -> T:
        if self._state != "open":
            raise StorageError(f"the SQLite journal {self._path} is closed", code="journal_closed")
        future = self._executor.submit(job)
        # S40: once submitted a job runs to its end, so cancelling the caller never tears a write.
        return await asyncio.shield(asyncio.wrap_future(future))

    async def _append(self, execution_id: str, token: object, text: str) -> None:
        await self._run(functools.partial(self._write, execution_id, token, text))

    async def _release(self, execution_id: str, token: object) -> None:
        if self._state == "open":
            await self._run(functools.partial(self._unlock, execution_id, token))
        # Otherwise the journal's close gave the lock up already.

    # ------------------------------------------------------------------ the worker's side

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        with _translated(f"open the SQLite journal {self._path}"):
            prepare_owner_only_database(self._path, repair=self._repair, holder="journal")
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

    def _lock(self, execution_id: str, token: object) -> None:
        self._connect()  # a journal that cannot be used refuses the lease, not the first append
        if execution_id in self._held:
            raise ExecutionLockedError(
                f"execution {execution_id!r} is held by another lease of this journal",
                execution_id=execution_id,
            )
        # POSIX-only: imported on use, so `import robota.host` works where fcntl does not exist.
        import fcntl  # noqa: PLC0415

        lock_path = os.path.join(self._lock_directory(), _lock_name(execution_id))
        with _translated(f"open the lock file {lock_path}"):
            fd = os.open(
                lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, _FILE_MODE
            )
        try:
            # S10: exclusive and non-blocking; the kernel drops it when this process dies.
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ExecutionLockedError(
                f"execution {execution_id!r} is held by another writer (another journal handle "
                f"or process on {self._path}); it is released when that writer releases its "
                "lease or its process ends",
                execution_id=execution_id,
            ) from None
        except OSError as exc:
            os.close(fd)
            raise StorageError(
                f"cannot lock {lock_path}: {exc}", cause=exc, context={"path": self._path}
            ) from exc
        self._held[execution_id] = (token, fd)

    def _unlock(self, execution_id: str, token: object) -> None:
        held = self._held.get(execution_id)
        if held is None or held[0] is not token:
            return  # released already, or never taken by this lease
        del self._held[execution_id]
        with contextlib.suppress(OSError):
            os.close(held[1])  # closing the descriptor drops the flock; the file stays (S10)

    def _lock_directory(self) -> str:
        with _translated(f"inspect the lock directory {self._locks}"):
            found = _mode_at(self._locks)
        if found is not None and not stat.S_ISDIR(found):
            raise StorageError(
                f"the journal's lock directory {self._locks} is not a directory; move it away",
                context={"path": self._path},
            )
        # S07: created 0700 and verified, or an existing one checked (tightened on repair=True).
        with _translated(f"create the lock directory {self._locks}"):
            OwnerOnlyStore(self._locks, repair=self._repair)
        return self._locks

    def _write(self, execution_id: str, token: object, text: str) -> None:
        held = self._held.get(execution_id)
        if held is None or held[0] is not token:
            raise StorageError(
                f"the lease on execution {execution_id!r} is no longer held; nothing was written",
                context={"path": self._path},
            )
        connection = self._connect()
        with _translated(f"append to execution {execution_id!r} in {self._path}"):
            connection.execute("BEGIN IMMEDIATE")
            try:
                (seq,) = connection.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM robota_journal WHERE execution_id = ?",
                    (execution_id,),
                ).fetchone()
                connection.execute(
                    "INSERT INTO robota_journal (execution_id, seq, record) VALUES (?, ?, ?)",
                    (execution_id, seq, text),
                )
                connection.execute("COMMIT")  # durable here: WAL, synchronous=FULL
            except BaseException:
                _rollback(connection)
                raise

    def _read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        connection = self._connect()
        with _translated(f"read execution {execution_id!r} from {self._path}"):
            rows = connection.execute(
                "SELECT seq, record FROM robota_journal WHERE execution_id = ? ORDER BY seq",
                (execution_id,),
            ).fetchall()
        records: list[JournalRecord] = []
        for expected, (seq, text) in enumerate(rows, start=1):
            where = f"record {seq!r} of execution {execution_id!r} in {self._path}"
            if seq != expected:
                # A gap means a record was lost; recovery must not guess around it (S40).
                raise StorageError(
                    f"record {expected} of execution {execution_id!r} in {self._path} is "
                    f"missing (the next one is {seq!r})",
                    context={"path": self._path},
                )
            if not isinstance(text, str):
                raise StorageError(
                    f"{where} is damaged: stored as {type(text).__name__}, not text",
                    context={"path": self._path},
                )
            try:
                records.append(decode_journal_record(text))
            except StorageError as exc:
                raise StorageError(
                    f"{where} cannot be read: {exc.message}",
                    code=exc.code,
                    cause=exc,
                    context={"path": self._path},
                ) from exc
        return tuple(records)

    def _close(self) -> None:
        for _, fd in self._held.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._held.clear()
        connection, self._connection = self._connection, None
        if connection is not None:
            with _translated(f"close the SQLite journal {self._path}"):
                connection.close()


@final
class _SQLiteLease(JournalLease):
    __slots__ = ("_id", "_journal", "_released", "_token")

    def __init__(self, journal: SQLiteJournal, execution_id: str, token: object) -> None:
        self._journal = journal
        self._id = execution_id
        self._token = token
        self._released = False

    @property
    def execution_id(self) -> str:
        return self._id

    async def append(self, record: JournalRecord) -> None:
        if self._released:
            raise StorageError(
                f"the lease on execution {self._id!r} was released; acquire it again to write"
            )
        # Encoded before anything is written: a record that is not JSON stores nothing.
        text = encode_journal_record(record)
        await self._journal._append(self._id, self._token, text)

    async def release(self) -> None:
        if self._released:
            return
        self._released = True
        await self._journal._release(self._id, self._token)

    def __repr__(self) -> str:
        state = "released" if self._released else "held"
        return f"<SQLiteJournal lease on {self._id!r} {state}>"


# ---------------------------------------------------------------------------------- helpers


def _database_path(path: object) -> str:
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise ConfigurationError(
            f"SQLiteJournal needs a file path (str or os.PathLike), got {path!r}"
        )
    raw = os.fspath(path)
    if not isinstance(raw, str):
        raise ConfigurationError(f"SQLiteJournal needs a text path, got {raw!r}")
    if raw == ":memory:":
        raise ConfigurationError(
            "SQLiteJournal(':memory:') would lose every record with the process; use "
            "robota.testing.InMemoryJournal for a journal that need not be durable"
        )
    if not raw or "\x00" in raw:
        raise ConfigurationError(f"SQLiteJournal needs a file path, got {raw!r}")
    full = os.path.realpath(raw)
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        raise ConfigurationError(
            f"the journal's directory {parent} does not exist; create it before opening "
            f"SQLiteJournal({raw!r})"
        )
    if os.path.isdir(full):
        raise ConfigurationError(
            f"SQLiteJournal({raw!r}) names a directory; give the database file's path"
        )
    return full


def _check_id(execution_id: object) -> None:
    if not isinstance(execution_id, str) or not execution_id:
        raise ConfigurationError(
            f"an execution id must be a non-empty string, got {execution_id!r}"
        )
    try:
        execution_id.encode()
    except UnicodeEncodeError as exc:
        raise ConfigurationError(
            f"an execution id must be valid Unicode text (no lone surrogates), got {execution_id!r}"
        ) from exc


def _lock_name(execution_id: str) -> str:
    return hashlib.sha256(execution_id.encode()).hexdigest()


def _mode_at(path: str) -> int | None:
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return None


def _configure(connection: sqlite3.Connection, path: str) -> None:
    (mode,) = connection.execute("PRAGMA journal_mode=WAL").fetchone()
    if str(mode).lower() != "wal":
        raise StorageError(
            f"the SQLite journal {path} cannot use write-ahead logging (journal_mode is "
            f"{mode!r}); put it on a local filesystem",
            context={"path": path},
        )
    # S40: an append is durable when it returns — fsync the WAL at every commit.
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute("PRAGMA fullfsync=ON")  # macOS: F_FULLFSYNC; ignored elsewhere
    connection.execute("PRAGMA checkpoint_fullfsync=ON")


def _create_schema(connection: sqlite3.Connection, path: str) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA:
            connection.execute(statement)
        connection.execute(
            "INSERT OR IGNORE INTO robota_journal_meta (key, value) VALUES ('schema_version', ?)",
            (_SCHEMA_VERSION,),
        )
        (version,) = connection.execute(
            "SELECT value FROM robota_journal_meta WHERE key = 'schema_version'"
        ).fetchone()
        connection.execute("COMMIT")
    except BaseException:
        _rollback(connection)
        raise
    if version != _SCHEMA_VERSION:
        raise StorageError(
            f"the SQLite journal {path} has schema version {version!r}; this robota reads "
            f"version {_SCHEMA_VERSION}",
            code="journal_version",
            context={"path": path},
        )


def _rollback(connection: sqlite3.Connection) -> None:
    if connection.in_transaction:
        # A failed rollback leaves nothing to add: the original error is what is reported.
        with contextlib.suppress(sqlite3.Error):
            connection.execute("ROLLBACK")


@contextlib.contextmanager
def _translated(what: str) -> Iterator[None]:
    """The one place SQLite and OS errors become :class:`StorageError` (STYLE: wrap at the edge)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StorageError(f"could not {what}: {exc}", cause=exc) from exc
    except OSError as exc:
        raise StorageError(f"could not {what}: {exc}", cause=exc) from exc
    except UnicodeEncodeError as exc:  # text SQLite cannot store (a lone surrogate)
        raise StorageError(
            f"could not {what}: the text is not valid Unicode ({exc})", cause=exc
        ) from exc
