"""An execution journal in PostgreSQL (S40), for workers on several machines (S10).

One table holds every execution's log, one row per record::

    execution_id text, seq bigint, record text, primary key (execution_id, seq)

``record`` is the versioned JSON text of :func:`~robota.core.execution._journal.
encode_journal_record`, read back with ``decode_journal_record``.

One writer per execution (S10) is a *session-level* advisory lock, ``pg_try_advisory_lock(k1,
k2)`` with two int4 keys from a SHA-256 of the table name and the execution id, taken on a
connection the lease owns alone. Every append goes through that connection, so the lock and the
right to write are one thing: a lost connection is a lost lock, and the next append fails instead
of writing unguarded. A crashed holder's session ends when its socket closes (or, for a vanished
machine, when TCP keepalives give up), and the server drops the lock with it; nothing takes the
lock from a live holder because time has passed (the lease session turns the idle-session
timeouts off). Reads go through one shared connection in autocommit mode, so each sees every
committed append.

Opening a session costs more than a whole run's appends, so a released lease's connection waits
in a small idle pool for the next :meth:`PostgresJournal.acquire` — only once the server said its
unlock succeeded and the session is idle, so a pooled session holds no lock and a lock never
outlives its lease. A pooled session that died while idle (a terminated backend, a restarted
server) is closed and replaced on the next acquire, never reported.

psycopg 3 is imported only when a journal is built, never by ``import robota``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
from typing import TYPE_CHECKING, Any, Final, final

from robota.core import (
    ConfigurationError,
    ExecutionJournal,
    ExecutionLockedError,
    JournalLease,
    JournalRecord,
    StorageError,
    decode_journal_record,
    encode_journal_record,
    install_command,
)

if TYPE_CHECKING:
    import psycopg
    from psycopg import AsyncConnection, pq, sql
    from psycopg.rows import TupleRow

__all__ = ["PostgresJournal"]

#: PostgreSQL truncates longer identifiers silently (NAMEDATALEN - 1), so two long names could
#: name one table; refuse them instead.
_MAX_IDENTIFIER_BYTES: Final = 63
#: Writer sessions a journal keeps open between leases (each one a server connection).
_IDLE_WRITERS: Final = 4

#: Connection parameters a DSN may override. Keepalives let each side notice a vanished peer
#: (a dead worker's lock is released when the server's session ends); ``connect_timeout`` bounds
#: only the connection attempt, never a held lease.
_CLIENT_DEFAULTS: Final[dict[str, str]] = {
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "connect_timeout": "10",
    "application_name": "robota-journal",
}


@final
class _Psycopg:
    """The parts of psycopg this module uses, imported on first use and typed."""

    __slots__ = (
        "connection",
        "conninfo_to_dict",
        "error",
        "identifier",
        "idle_status",
        "make_conninfo",
        "operational_error",
        "sql",
    )

    def __init__(self) -> None:
        try:
            # The optional back-end: imported when a journal is built, never by `import robota`.
            import psycopg  # noqa: PLC0415
            from psycopg import pq, sql  # noqa: PLC0415
            from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: PLC0415
        except ImportError as exc:
            raise ConfigurationError(
                f"PostgresJournal needs psycopg 3: {install_command('postgres')}",
                code="missing_dependency",
                cause=exc,
            ) from exc
        self.connection: type[psycopg.AsyncConnection[TupleRow]] = psycopg.AsyncConnection
        self.conninfo_to_dict = conninfo_to_dict
        self.make_conninfo = make_conninfo
        self.error: type[psycopg.Error] = psycopg.Error
        self.operational_error: type[psycopg.OperationalError] = psycopg.OperationalError
        self.identifier: type[sql.Identifier] = sql.Identifier
        self.sql: type[sql.SQL] = sql.SQL
        self.idle_status: pq.TransactionStatus = pq.TransactionStatus.IDLE


@functools.cache
def _psycopg() -> _Psycopg:
    return _Psycopg()


def _check_table(table: object) -> str:
    if not isinstance(table, str) or not table:
        raise ConfigurationError(f"table must be a non-empty string, got {table!r}")
    if "\x00" in table:
        raise ConfigurationError("a table name cannot contain a NUL character")
    try:
        size = len(table.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ConfigurationError(f"table {table!r} is not valid text", cause=exc) from exc
    if size > _MAX_IDENTIFIER_BYTES:
        raise ConfigurationError(
            f"table {table!r} is {size} bytes long; PostgreSQL identifiers have at most "
            f"{_MAX_IDENTIFIER_BYTES}"
        )
    return table


def _lock_keys(namespace: str, table: str, name: str) -> tuple[int, int]:
    """Two signed int4 advisory-lock keys for ``name`` in ``table``'s ``namespace``."""
    digest = hashlib.sha256(
        "\x00".join(("robota-journal", namespace, table, name)).encode("utf-8", "surrogatepass")
    ).digest()
    return (
        int.from_bytes(digest[0:4], "big", signed=True),
        int.from_bytes(digest[4:8], "big", signed=True),
    )


@final
class PostgresJournal(ExecutionJournal):
    """An :class:`~robota.ExecutionJournal` in a PostgreSQL table, shared by many workers.

    Usage::

        async with PostgresJournal("postgresql://robota@db.internal/jobs") as journal:
            lease = await journal.acquire("order-1842")
            ...

    The table is created on first use (safe when several processes start at once); a role
    without ``CREATE`` works once it exists. Each lease holds a connection of its own for as long
    as it lives; a released one is kept for the next :meth:`acquire`, up to 4 per journal. Size
    ``max_connections`` for the leases held at once plus five per journal (4 idle writers and
    one for reads).

    Misuse to avoid: pointing ``dsn`` at a pooler in *transaction* mode (PgBouncer's default) —
    a session advisory lock needs a server session of its own, so connect directly or through
    session pooling. The lock is per database, table name and execution id: journals on
    different tables do not exclude each other.

    Args:
        dsn: A libpq connection string or ``postgresql://`` URI. ``keepalives*``,
            ``connect_timeout`` and ``application_name`` given in it win over this journal's
            defaults (TCP keepalives after 10 s idle, 5 s apart, 3 probes; 10 s to connect).
            It never appears in an error message or repr.
        table: The table's name: one identifier, quoted (so case-sensitive), at most 63 bytes.

    Raises:
        ConfigurationError: psycopg is not installed, the DSN does not parse, or the table name
            is not an identifier.
    """

    __slots__ = (
        "_closed",
        "_conninfo",
        "_idle",
        "_keepalive",
        "_leases",
        "_password",
        "_pg",
        "_read_lock",
        "_reader",
        "_schema_lock",
        "_schema_ready",
        "_sql",
        "_table",
        "_where",
    )

    def __init__(self, dsn: str, *, table: str = "robota_journal") -> None:
        pg = _psycopg()
        self._pg = pg
        self._table = _check_table(table)
        if not isinstance(dsn, str):
            raise ConfigurationError(f"dsn must be a string, got {type(dsn).__name__}")
        try:
            parsed: dict[str, Any] = pg.conninfo_to_dict(dsn)
        except pg.error:
            # libpq's parse error may quote part of the string, a password included: not kept.
            raise ConfigurationError(
                "dsn is not a valid PostgreSQL connection string (libpq key=value pairs or a "
                "postgresql:// URI)"
            ) from None
        self._password = str(parsed.get("password") or "")
        self._where = (
            " ".join(f"{k}={parsed[k]}" for k in ("host", "port", "dbname") if parsed.get(k))
            or "the default server"
        )
        defaults = {k: v for k, v in _CLIENT_DEFAULTS.items() if k not in parsed}
        self._conninfo = pg.make_conninfo(dsn, **defaults)
        effective = {**_CLIENT_DEFAULTS, **parsed}
        try:
            self._keepalive = (
                int(effective["keepalives_idle"]),
                int(effective["keepalives_interval"]),
                int(effective["keepalives_count"]),
            )
        except (TypeError, ValueError):
            raise ConfigurationError(
                "dsn: keepalives_idle, keepalives_interval and keepalives_count must be integers"
            ) from None
        self._sql = _Statements(pg, self._table)
        self._reader: AsyncConnection[TupleRow] | None = None
        self._read_lock = asyncio.Lock()
        self._schema_lock = asyncio.Lock()
        self._schema_ready = asyncio.Event()
        self._leases: set[_PostgresLease] = set()
        # Writer sessions between leases, most recently released last. Invariant: each is
        # prepared (_prepare_writer), idle, and holds no advisory lock.
        self._idle: list[AsyncConnection[TupleRow]] = []
        self._closed = False

    @property
    def table(self) -> str:
        """The table this journal keeps its records in."""
        return self._table

    async def acquire(self, execution_id: str) -> JournalLease:
        """Take the one writer's lease on ``execution_id`` over a connection of its own.

        Raises:
            ExecutionLockedError: at once, when another session (any process or handle) holds
                the execution.
            StorageError: when the database cannot be reached or the table cannot be made.
        """
        self._check(execution_id)
        keys = _lock_keys("execution", self._table, execution_id)
        conn = await self._lock_writer(execution_id, keys)
        try:
            # Read once, under the lock: from here on this lease is the only writer.
            next_seq = await _next_seq(conn, self._sql, execution_id)
            if self._closed:
                raise StorageError("the journal was closed while a lease was being acquired")
        except self._pg.error as exc:
            await _close_quietly(conn)
            raise self._storage_error(exc, f"acquire execution {execution_id!r}") from exc
        except BaseException:
            # StorageError, cancellation: the connection (and the lock it took) goes with the
            # failed attempt; the exception propagates unchanged.
            await _close_quietly(conn)
            raise
        lease = _PostgresLease(self, conn, execution_id, keys, next_seq)
        self._leases.add(lease)
        return lease

    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        """Every committed record of ``execution_id`` in append order (``()`` when unknown).

        Raises:
            StorageError: when the database cannot be read or a record cannot be decoded.
        """
        self._check(execution_id)
        async with self._read_lock:
            texts = await self._read_texts(execution_id, retry=True)
        return tuple(decode_journal_record(text) for text in texts)

    async def aclose(self) -> None:
        """Release every lease still held, close the idle writer and read connections; idempotent.

        Later :meth:`acquire` and :meth:`read` calls raise :class:`~robota.StorageError`.
        """
        self._closed = True
        leases, self._leases = list(self._leases), set()
        for lease in leases:
            await lease.release()
        # A release still under way finds the journal closed and closes its own connection.
        idle, self._idle = self._idle, []
        for conn in idle:
            await _close_quietly(conn)
        async with self._read_lock:
            reader, self._reader = self._reader, None
            if reader is not None:
                await _close_quietly(reader)

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<PostgresJournal {self._where} table={self._table!r}{state}>"

    # ------------------------------------------------------------------------------ internals

    def _check(self, execution_id: object) -> None:
        if self._closed:
            raise StorageError("the journal is closed")
        if not isinstance(execution_id, str) or not execution_id:
            raise ConfigurationError(
                f"an execution id must be a non-empty string, got {execution_id!r}"
            )
        if "\x00" in execution_id:
            raise ConfigurationError("an execution id kept in PostgreSQL cannot contain NUL")
        try:
            execution_id.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConfigurationError(
                f"execution id {execution_id!r} is not valid text", cause=exc
            ) from exc

    async def _connect(self) -> AsyncConnection[TupleRow]:
        try:
            return await self._pg.connection.connect(self._conninfo, autocommit=True)
        except self._pg.error as exc:
            raise StorageError(
                f"the journal database cannot be reached ({self._where}): {self._scrub(exc)}",
                code="journal_unreachable",
                recoverable=True,
                cause=exc,
            ) from exc

    async def _lock_writer(
        self, execution_id: str, keys: tuple[int, int]
    ) -> AsyncConnection[TupleRow]:
        """A writer session holding ``keys``' lock: an idle one that still answers, else a new one.

        Raises:
            ExecutionLockedError: another session holds the lock (this one goes back idle).
            StorageError: a new session cannot be opened, prepared, or take the lock.
        """
        while True:
            if self._closed:
                raise StorageError("the journal was closed while a lease was being acquired")
            reused = bool(self._idle)
            # Taken off the list before the first await: no other acquire can share it.
            conn = self._idle.pop() if reused else await self._connect()
            try:
                if not reused:
                    await self._prepare_writer(conn)
                    await self._ensure_schema(conn)
                # S10: never pg_advisory_lock — a second writer is refused at once, never queued.
                cursor = await conn.execute(self._sql.try_lock, keys)
                row = await cursor.fetchone()
            except self._pg.error as exc:
                await _close_quietly(conn)
                if reused:
                    continue  # it died while idle: the caller asked for a lease, not that session
                raise self._storage_error(exc, f"acquire execution {execution_id!r}") from exc
            except BaseException:
                # Cancellation: the lock may have been taken, so the session goes with it.
                await _close_quietly(conn)
                raise
            if row is not None and row[0] is True:
                return conn
            # pg_try_advisory_lock refused takes nothing: the session is as clean as it came.
            await self._give_back(conn)
            raise ExecutionLockedError(
                f"execution {execution_id!r} is held by another writer",
                execution_id=execution_id,
            )

    async def _give_back(self, conn: AsyncConnection[TupleRow]) -> None:
        """Keep ``conn`` idle for the next acquire, or close it.

        The caller vouches that it holds no advisory lock (S10: a lock never outlives its
        lease); kept only while the journal is open, there is room, and the session is idle —
        neither broken nor inside a transaction or an unfinished query.
        """
        if (
            not self._closed
            and len(self._idle) < _IDLE_WRITERS
            and not conn.closed
            and conn.info.transaction_status == self._pg.idle_status
        ):
            self._idle.append(conn)
        else:
            await _close_quietly(conn)

    async def _prepare_writer(self, conn: AsyncConnection[TupleRow]) -> None:
        # S10: a lease lives as long as its session, so no server-side idle timeout may end a
        # live holder's session, while the server's own keepalives find a vanished worker. An
        # append returns only once its commit is flushed (synchronous_commit on).
        idle, interval, count = self._keepalive
        settings: list[tuple[str, str]] = [
            ("synchronous_commit", "on"),
            ("idle_in_transaction_session_timeout", "0"),
            ("tcp_keepalives_idle", str(idle)),
            ("tcp_keepalives_interval", str(interval)),
            ("tcp_keepalives_count", str(count)),
        ]
        version = conn.info.server_version
        if version >= 140000:
            settings.append(("idle_session_timeout", "0"))
        if version >= 170000:
            settings.append(("transaction_timeout", "0"))
        query = self._pg.sql("SELECT {}").format(
            self._pg.sql(", ").join([self._pg.sql("set_config(%s, %s, false)")] * len(settings))
        )
        await conn.execute(query, [value for pair in settings for value in pair])

    async def _ensure_schema(self, conn: AsyncConnection[TupleRow]) -> None:
        if self._schema_ready.is_set():
            return
        async with self._schema_lock:
            if self._schema_ready.is_set():
                return  # another task of this handle made it while this one waited
            # Look first: a role without CREATE on the schema may still use an existing table.
            cursor = await conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (self._sql.table.as_string(conn),)
            )
            row = await cursor.fetchone()
            if row is None or row[0] is not True:
                # Two sessions running CREATE TABLE IF NOT EXISTS at once can both pass the
                # check and one then fails on the catalog's unique index; a transaction-level
                # advisory lock serialises them.
                async with conn.transaction():
                    await conn.execute(
                        "SELECT pg_advisory_xact_lock(%s, %s)",
                        _lock_keys("schema", self._table, ""),
                    )
                    await conn.execute(self._sql.create)
            self._schema_ready.set()

    async def _read_texts(self, execution_id: str, *, retry: bool) -> list[str]:
        reader = self._reader
        if reader is None or _lost(reader):
            reader = self._reader = await self._connect()
        try:
            await self._ensure_schema(reader)
            cursor = await reader.execute(self._sql.select, (execution_id,))
            rows = await cursor.fetchall()
        except self._pg.error as exc:
            if _lost(reader):
                self._reader = None
                if retry:
                    # A read is idempotent: one fresh connection after a lost one (a server
                    # restart, a terminated backend) before giving up.
                    return await self._read_texts(execution_id, retry=False)
            raise self._storage_error(exc, f"read execution {execution_id!r}") from exc
        return [str(text) for (text,) in rows]

    def _storage_error(self, exc: BaseException, doing: str) -> StorageError:
        if isinstance(exc, self._pg.operational_error):
            return StorageError(
                f"the journal could not {doing}: the database connection failed "
                f"({self._scrub(exc)})",
                cause=exc,
            )
        return StorageError(f"the journal could not {doing}: {self._scrub(exc)}", cause=exc)

    def _scrub(self, exc: BaseException) -> str:
        text = " ".join(str(exc).split()) or type(exc).__name__
        if self._password:
            text = text.replace(self._password, "***")
        return text

    def _forget(self, lease: _PostgresLease) -> None:
        self._leases.discard(lease)


@final
class _Statements:
    """The journal's SQL, composed once with the table's quoted identifier."""

    __slots__ = ("create", "insert", "max_seq", "select", "table", "try_lock", "unlock")

    def __init__(self, pg: _Psycopg, table: str) -> None:
        self.table = pg.identifier(table)
        named = {"table": self.table}
        self.create = pg.sql(
            "CREATE TABLE IF NOT EXISTS {table} ("
            "execution_id text NOT NULL, seq bigint NOT NULL, record text NOT NULL, "
            "PRIMARY KEY (execution_id, seq))"
        ).format(**named)
        self.insert = pg.sql(
            "INSERT INTO {table} (execution_id, seq, record) VALUES (%s, %s, %s)"
        ).format(**named)
        self.select = pg.sql(
            "SELECT record FROM {table} WHERE execution_id = %s ORDER BY seq"
        ).format(**named)
        self.max_seq = pg.sql(
            "SELECT coalesce(max(seq), 0) FROM {table} WHERE execution_id = %s"
        ).format(**named)
        self.try_lock = pg.sql("SELECT pg_try_advisory_lock(%s, %s)")
        self.unlock = pg.sql("SELECT pg_advisory_unlock(%s, %s)")


async def _next_seq(conn: AsyncConnection[TupleRow], sql: _Statements, execution_id: str) -> int:
    cursor = await conn.execute(sql.max_seq, (execution_id,))
    row = await cursor.fetchone()
    assert row is not None  # an aggregate without GROUP BY returns one row
    return int(row[0]) + 1


def _lost(conn: AsyncConnection[TupleRow]) -> bool:
    """Whether ``conn`` is closed or broken (a fresh look, never a narrowed one)."""
    return conn.closed


async def _close_quietly(conn: AsyncConnection[TupleRow]) -> None:
    try:
        await conn.close()
    except Exception:  # noqa: BLE001 - closing a broken connection has nothing left to report
        return


@final
class _PostgresLease(JournalLease):
    """A held session advisory lock and the connection it lives on."""

    __slots__ = ("_conn", "_id", "_journal", "_keys", "_lock", "_next_seq", "_released")

    def __init__(
        self,
        journal: PostgresJournal,
        conn: AsyncConnection[TupleRow],
        execution_id: str,
        keys: tuple[int, int],
        next_seq: int,
    ) -> None:
        self._journal = journal
        self._conn = conn
        self._id = execution_id
        self._keys = keys
        # None after an append whose outcome is unknown (cancelled, or failed after sending):
        # the next append reads it again — safe because this lease is the only writer.
        self._next_seq: int | None = next_seq
        self._lock = asyncio.Lock()
        self._released = False

    @property
    def execution_id(self) -> str:
        """The execution this lease writes."""
        return self._id

    async def append(self, record: JournalRecord) -> None:
        """Insert ``record`` through the lease's own session; committed when this returns.

        Raises:
            StorageError: the record is not JSON, the lease was released, or its session (and
                with it the lock) is gone — never a write without the lock.
        """
        text = encode_journal_record(record)
        journal = self._journal
        async with self._lock:
            if self._released:
                raise StorageError(f"the lease on execution {self._id!r} was released")
            seq, self._next_seq = self._next_seq, None
            try:
                if seq is None:
                    seq = await _next_seq(self._conn, journal._sql, self._id)
                # Autocommit: the INSERT is its own transaction, flushed before it answers.
                await self._conn.execute(journal._sql.insert, (self._id, seq, text))
            except journal._pg.error as exc:
                raise journal._storage_error(exc, f"append to execution {self._id!r}") from exc
            except UnicodeEncodeError as exc:
                raise StorageError(
                    f"a {record.kind} record cannot be saved: it holds text that is not valid "
                    f"Unicode ({exc.reason})",
                    cause=exc,
                ) from exc
            self._next_seq = seq + 1

    async def release(self) -> None:
        """Unlock the execution and hand the lease's connection back to the journal; idempotent.

        Returns once the server has dropped the lock, so another writer may acquire at once.
        A connection already lost needs no unlock: the server dropped the lock with it. The
        connection is kept for the next acquire only when the server confirmed the unlock;
        otherwise (an error, a cancellation, a lock it no longer held) it is closed, and the
        lock, if any, ends with the session.
        """
        if self._released:
            return
        self._released = True
        self._journal._forget(self)
        journal = self._journal
        unlocked = False
        try:
            async with self._lock:
                if not self._conn.closed:
                    with contextlib.suppress(journal._pg.error):
                        cursor = await self._conn.execute(journal._sql.unlock, self._keys)
                        row = await cursor.fetchone()
                        unlocked = row is not None and row[0] is True
        finally:
            # S10: a lock never outlives its lease — only a confirmed unlock lets the session
            # serve another. An append can no longer reach it: _released is set.
            if unlocked:
                await journal._give_back(self._conn)
            else:
                await _close_quietly(self._conn)

    def __repr__(self) -> str:
        state = "released" if self._released else "held"
        return f"<PostgresJournal lease {self._id!r} {state}>"
