"""The networked session store: PostgreSQL, one writer per session by advisory lock (S10).

Three tables, named from a prefix (default ``robota``, the names of the SQLite store)::

    robota_sessions_meta    key text primary key, value text      -- 'schema_version' = '3'
    robota_sessions         id text primary key, created_at float8, parent_id text, fork_at int
    robota_session_entries  session_id text, seq bigint, entry text,
                            primary key (session_id, seq)

``entry`` is :func:`~robota.sessions.encode_session_entry`'s versioned JSON text, kept as written.
The tables are made on first use under a transaction-level advisory lock (safe when several
processes start at once); a database whose schema version is not this one is refused, except
version 2 (entries in format 1), which is marked version 3 in place: its entries still read.

One writer per session (S10) is a *session-level* advisory lock, ``pg_try_advisory_lock(k1,
k2)`` with two int4 keys from a SHA-256 of the prefix and the session id, taken on a connection
the lease owns alone — the approach of :class:`robota.host.PostgresJournal`. Every append goes
through that connection, so the lock and the right to write are one thing: a lost connection is
a lost lock, and the next append fails instead of writing unguarded. A crashed holder's server
session ends when its socket closes (a vanished machine: when TCP keepalives give up) and the
lock with it; nothing takes the lock from a live holder because time has passed (the lease
session turns the server's idle timeouts off). A refused ``pg_try_advisory_lock`` answers at
once: a second writer fails with :class:`~robota.sessions.SessionBusyError`, never queues.

Creates, loads and lists go through one shared connection in autocommit mode (a load is one
statement, so the header and the log it reads are one snapshot). A released lease's connection
waits in a small idle pool for the next acquire — only once the server confirmed its unlock, so
a pooled session holds no lock. psycopg 3 is imported only when a store is built, never by
``import robota.sessions``; driver errors become :class:`~robota.StorageError` in one place
(:meth:`PostgresSessionStore._translated`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, final

from robota.core import ConfigurationError, StorageError
from robota.sessions._codec import decode_session_entry, encode_session_entry
from robota.sessions._errors import SessionBusyError, SessionNotFoundError
from robota.sessions._postgres_sql import (
    CLIENT_DEFAULTS,
    IDLE_WRITERS,
    SCHEMA_VERSION,
    UPGRADABLE,
    Statements,
    check_prefix,
    header_of,
    load_psycopg,
    lock_keys,
)
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

if TYPE_CHECKING:
    from psycopg import AsyncConnection, sql
    from psycopg.rows import TupleRow

__all__ = ["PostgresSessionStore"]


@final
class PostgresSessionStore(SessionStore):
    """A :class:`~robota.sessions.SessionStore` in PostgreSQL, shared by workers on many machines.

    Usage::

        async with PostgresSessionStore("postgresql://robota@db.internal/app") as store:
            session = await Session.open(agent, store, session_id="ticket-1842")
            await session.run("Where is my order?")

    One writer per session across every process and machine that uses the database: a turn
    holds the session's advisory lock on a connection of its own, a second concurrent turn fails
    at once with :class:`~robota.sessions.SessionBusyError`, and a crashed worker's lock is
    released by the server as soon as its connection drops. The tables are created on first use;
    a role without ``CREATE`` works once they exist. Needs the ``postgres`` extra (psycopg 3).

    Each held lease is a server connection; a released one is kept for the next :meth:`acquire`,
    up to 4 per store. Size ``max_connections`` for the leases held at once plus five per store
    (4 idle writers and one for reads and creates).

    Misuse to avoid: pointing ``dsn`` at a pooler in *transaction* mode (PgBouncer's default) —
    a session advisory lock needs a server session of its own, so connect directly or through
    session pooling. Stores with different prefixes do not exclude each other.

    Args:
        dsn: A libpq connection string or ``postgresql://`` URI. ``keepalives*``,
            ``connect_timeout`` and ``application_name`` given in it win over this store's
            defaults (TCP keepalives after 10 s idle, 5 s apart, 3 probes; 10 s to connect).
            It never appears in an error message or repr.
        prefix: The tables' prefix: ``<prefix>_sessions``, ``<prefix>_session_entries`` and
            ``<prefix>_sessions_meta``, each one quoted identifier (so case-sensitive).

    Raises:
        ConfigurationError: psycopg is not installed (the message names the install command),
            the DSN does not parse, or the prefix makes a table name PostgreSQL would truncate.
    """

    __slots__ = (
        "_closed",
        "_conninfo",
        "_idle",
        "_keepalive",
        "_leases",
        "_main",
        "_main_lock",
        "_password",
        "_pg",
        "_prefix",
        "_schema_lock",
        "_schema_ready",
        "_sql",
        "_where",
    )

    def __init__(self, dsn: str, *, prefix: str = "robota") -> None:
        pg = load_psycopg()
        self._pg = pg
        self._prefix = check_prefix(prefix)
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
        defaults = {k: v for k, v in CLIENT_DEFAULTS.items() if k not in parsed}
        self._conninfo = pg.make_conninfo(dsn, **defaults)
        effective = {**CLIENT_DEFAULTS, **parsed}
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
        self._sql = Statements(pg, self._prefix)
        self._main: AsyncConnection[TupleRow] | None = None
        self._main_lock = asyncio.Lock()
        self._schema_lock = asyncio.Lock()
        self._schema_ready = asyncio.Event()
        self._leases: set[_PostgresLease] = set()
        # Writer sessions between leases. Invariant: each is prepared, idle, holds no lock.
        self._idle: list[AsyncConnection[TupleRow]] = []
        self._closed = False

    @property
    def prefix(self) -> str:
        """The prefix of this store's table names."""
        return self._prefix

    async def create(self, header: SessionHeader, entries: Sequence[SessionEntry] = ()) -> None:
        """See :meth:`SessionStore.create`."""
        check_session_id(header.id)
        texts = [encode_session_entry(entry) for entry in entries]
        rows = [(header.id, seq, text) for seq, text in enumerate(texts, start=1)]
        summary = encode_summary(fold_summary(Summary(header.created_at), entries))
        async with self._main_lock:
            conn = await self._main_connection()
            try:
                with self._translated(f"create session {header.id!r}"):
                    async with conn.transaction():
                        cursor = await conn.execute(
                            self._sql.insert_header,
                            (
                                header.id,
                                header.created_at,
                                header.parent_id,
                                header.fork_at,
                                summary,
                            ),
                        )
                        if await cursor.fetchone() is None:
                            raise ConfigurationError(
                                f"a session {header.id!r} exists already in {self._where}; "
                                "choose another id",
                                code="session_exists",
                            )
                        if rows:
                            async with conn.cursor() as many:
                                await many.executemany(self._sql.insert_entry, rows)
            except BaseException as exc:
                await self._drop_main_if_unusable(conn, exc)
                raise

    async def load(self, session_id: str) -> StoredSession:
        """See :meth:`SessionStore.load`."""
        return await self.load_after(session_id, 0)

    async def load_after(self, session_id: str, after: int) -> StoredSession:
        """See :meth:`SessionStore.load_after`: reads only the entries after ``after``."""
        check_session_id(session_id)
        check_entry_count(after)
        rows = await self._read(self._sql.load, (after, session_id), f"read session {session_id!r}")
        if not rows:
            raise self._not_found(session_id)
        header = header_of(rows[0])
        return StoredSession(
            header, tuple(decode_session_entry(str(row[4])) for row in rows if row[4] is not None)
        )

    async def _load_texts(self, session_id: str) -> tuple[SessionHeader, list[str]]:
        """See :meth:`SessionStore._load_texts`: :meth:`load`'s one read, not decoded."""
        check_session_id(session_id)
        rows = await self._read(self._sql.load, (0, session_id), f"read session {session_id!r}")
        if not rows:
            raise self._not_found(session_id)
        return header_of(rows[0]), [str(row[4]) for row in rows if row[4] is not None]

    async def list_sessions(self) -> tuple[SessionHeader, ...]:
        """See :meth:`SessionStore.list_sessions`."""
        rows = await self._read(self._sql.list, (), "list the sessions")
        return tuple(header_of(row) for row in rows)

    async def list_session_infos(self) -> tuple[SessionInfo, ...]:
        """See :meth:`SessionStore.list_session_infos`: reads the summaries, no log."""
        rows = await self._read(self._sql.list_summaries, (), "list the sessions")
        return tuple(summary_info(header_of(row), decode_summary(str(row[4]))) for row in rows)

    async def acquire(self, session_id: str) -> SessionLease:
        """See :meth:`SessionStore.acquire`."""
        check_session_id(session_id)
        self._check_open()
        keys = lock_keys("session", self._prefix, session_id)
        conn = await self._lock_writer(session_id, keys)
        try:
            # Under the lock: a session deleted before it was taken is not leased.
            with self._translated(f"acquire session {session_id!r}"):
                cursor = await conn.execute(self._sql.summary, (session_id,))
                row = await cursor.fetchone()
                found = row is not None
            if self._closed:
                raise StorageError(
                    "the session store was closed while a lease was being acquired",
                    code="store_closed",
                )
        except BaseException:
            # StorageError, cancellation: the connection and its lock go with the attempt.
            await _close_quietly(conn)
            raise
        if not found:
            await _PostgresLease(self, conn, session_id, keys).release()
            raise self._not_found(session_id)
        lease = _PostgresLease(self, conn, session_id, keys)
        assert row is not None
        lease._summary = decode_summary(str(row[0]))  # under the lock: only this lease changes it
        self._leases.add(lease)
        return lease

    async def delete(self, session_id: str) -> None:
        """See :meth:`SessionStore.delete`."""
        lease = await self.acquire(session_id)
        assert isinstance(lease, _PostgresLease)
        try:
            await lease.delete_session()
        finally:
            await lease.release()

    async def aclose(self) -> None:
        """See :meth:`SessionStore.aclose`: releases every lease, closes every connection."""
        self._closed = True
        leases, self._leases = list(self._leases), set()
        for lease in leases:
            await lease.release()
        idle, self._idle = self._idle, []
        for conn in idle:
            await _close_quietly(conn)
        async with self._main_lock:
            main, self._main = self._main, None
            if main is not None:
                await _close_quietly(main)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<PostgresSessionStore {self._where} prefix={self._prefix!r} {state}>"

    # ------------------------------------------------------------------------------ internals

    @contextlib.contextmanager
    def _translated(self, doing: str) -> Iterator[None]:
        """The one place psycopg and encoding errors become :class:`~robota.StorageError`.

        The message never holds the DSN's password.
        """
        try:
            yield
        except self._pg.operational_error as exc:
            raise StorageError(
                f"the session store could not {doing}: the database connection failed "
                f"({self._scrub(exc)})",
                cause=exc,
            ) from exc
        except self._pg.error as exc:
            raise StorageError(
                f"the session store could not {doing}: {self._scrub(exc)}", cause=exc
            ) from exc
        except UnicodeEncodeError as exc:
            raise StorageError(
                f"the session store could not {doing}: the text is not valid Unicode "
                f"({exc.reason})",
                cause=exc,
            ) from exc

    def _scrub(self, exc: BaseException) -> str:
        text = " ".join(str(exc).split()) or type(exc).__name__
        if self._password:
            text = text.replace(self._password, "***")
        return text

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"the session store on {self._where} is closed", code="store_closed")

    def _not_found(self, session_id: str) -> SessionNotFoundError:
        return SessionNotFoundError(
            f"no session {session_id!r} in {self._where}; open it with session_id=None for a "
            "new one, or list the store's sessions",
            session_id=session_id,
        )

    async def _connect(self) -> AsyncConnection[TupleRow]:
        self._check_open()
        try:
            conn = await self._pg.connection.connect(self._conninfo, autocommit=True)
        except self._pg.error as exc:
            raise StorageError(
                f"the session store's database cannot be reached ({self._where}): "
                f"{self._scrub(exc)}",
                code="session_store_unreachable",
                recoverable=True,
                cause=exc,
            ) from exc
        try:
            with self._translated(f"prepare the session store on {self._where}"):
                await self._ensure_schema(conn)
        except BaseException:
            await _close_quietly(conn)
            raise
        return conn

    async def _main_connection(self) -> AsyncConnection[TupleRow]:
        """The shared connection (caller holds ``_main_lock``); a lost one is replaced."""
        self._check_open()
        if self._main is None or self._main.closed:
            self._main = await self._connect()
        return self._main

    async def _read(self, query: sql.Composed, args: tuple[object, ...], doing: str) -> list[Any]:
        async with self._main_lock:
            for attempt in (1, 2):
                conn = await self._main_connection()
                try:
                    with self._translated(doing):
                        cursor = await conn.execute(query, args)
                        return await cursor.fetchall()
                except BaseException as exc:
                    await self._drop_main_if_unusable(conn, exc)
                    # A read is idempotent: one fresh connection after a lost one (a server
                    # restart, a terminated backend) before giving up.
                    if attempt == 1 and isinstance(exc, StorageError) and conn.closed:
                        continue
                    raise
            raise AssertionError("unreachable")  # pragma: no cover

    async def _drop_main_if_unusable(
        self, conn: AsyncConnection[TupleRow], exc: BaseException
    ) -> None:
        """Close the shared connection when lost, or cancelled mid-statement (state unknown)."""
        if conn.closed or not isinstance(exc, Exception):
            if self._main is conn:
                self._main = None
            await _close_quietly(conn)

    async def _ensure_schema(self, conn: AsyncConnection[TupleRow]) -> None:
        if self._schema_ready.is_set():
            return
        async with self._schema_lock:
            if self._schema_ready.is_set():
                return
            # Look first: a role without CREATE may still use existing tables.
            cursor = await conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (self._sql.meta.as_string(conn),)
            )
            row = await cursor.fetchone()
            if row is None or row[0] is not True:
                # Two sessions creating at once could both pass the look and one fail on the
                # catalog's unique index: a transaction-level advisory lock serialises them.
                async with conn.transaction():
                    await conn.execute(
                        "SELECT pg_advisory_xact_lock(%s, %s)",
                        lock_keys("schema", self._prefix, ""),
                    )
                    for statement in self._sql.schema:
                        await conn.execute(statement)
                    await conn.execute(self._sql.init_version, (SCHEMA_VERSION,))
            cursor = await conn.execute(self._sql.version)
            row = await cursor.fetchone()
            version = None if row is None else row[0]
            if version == UPGRADABLE:
                await conn.execute(self._sql.upgrade_version, (SCHEMA_VERSION, UPGRADABLE))
                cursor = await conn.execute(self._sql.version)
                row = await cursor.fetchone()
                version = None if row is None else row[0]
            if version != SCHEMA_VERSION:
                raise StorageError(
                    f"the session store on {self._where} (prefix {self._prefix!r}) has schema "
                    f"version {version!r}; this robota reads version {SCHEMA_VERSION} "
                    "(upgrade robota, or use another prefix)",
                    code="session_store_version",
                )
            self._schema_ready.set()

    async def _lock_writer(
        self, session_id: str, keys: tuple[int, int]
    ) -> AsyncConnection[TupleRow]:
        """A writer session holding ``keys``' lock: an idle one that still answers, else new.

        Raises:
            SessionBusyError: another session holds the lock (this one goes back idle).
            StorageError: a new session cannot be opened, prepared, or take the lock.
        """
        while True:
            self._check_open()
            reused = bool(self._idle)
            # Taken off the list before the first await: no other acquire can share it.
            conn = self._idle.pop() if reused else await self._connect()
            try:
                with self._translated(f"acquire session {session_id!r}"):
                    if not reused:
                        await self._prepare_writer(conn)
                    # S10: never pg_advisory_lock — a second writer is refused, never queued.
                    cursor = await conn.execute(self._sql.try_lock, keys)
                    row = await cursor.fetchone()
            except StorageError:
                await _close_quietly(conn)
                if reused:
                    continue  # it died while idle: the caller asked for a lease, not that one
                raise
            except BaseException:
                # Cancellation: the lock may have been taken, so the session goes with it.
                await _close_quietly(conn)
                raise
            if row is not None and row[0] is True:
                return conn
            # A refused pg_try_advisory_lock takes nothing: the session is as clean as it came.
            await self._give_back(conn)
            raise SessionBusyError(
                f"session {session_id!r} is in use by another writer (a turn in this or another "
                f"process or machine on {self._where}); try again when that turn has ended — a "
                "crashed writer releases it at once",
                session_id=session_id,
            )

    async def _prepare_writer(self, conn: AsyncConnection[TupleRow]) -> None:
        # S10: a lease lives as long as its server session, so no idle timeout may end a live
        # holder's session, while the server's own keepalives find a vanished worker. An append
        # returns only once its commit is flushed (synchronous_commit on).
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

    async def _give_back(self, conn: AsyncConnection[TupleRow]) -> None:
        """Keep ``conn`` idle for the next acquire, or close it.

        The caller vouches that it holds no advisory lock (S10: a lock never outlives its
        lease); kept only while the store is open, there is room, and the session is idle.
        """
        if (
            not self._closed
            and len(self._idle) < IDLE_WRITERS
            and not conn.closed
            and conn.info.transaction_status == self._pg.idle_status
        ):
            self._idle.append(conn)
        else:
            await _close_quietly(conn)

    def _forget(self, lease: _PostgresLease) -> None:
        self._leases.discard(lease)


async def _close_quietly(conn: AsyncConnection[TupleRow]) -> None:
    try:
        await conn.close()
    except Exception:  # noqa: BLE001 - closing a broken connection has nothing left to report
        return


@final
class _PostgresLease(SessionLease):
    """A held session advisory lock and the connection it lives on."""

    __slots__ = ("_conn", "_id", "_keys", "_lock", "_released", "_store", "_summary")

    def __init__(
        self,
        store: PostgresSessionStore,
        conn: AsyncConnection[TupleRow],
        session_id: str,
        keys: tuple[int, int],
    ) -> None:
        self._store = store
        self._conn = conn
        self._id = session_id
        self._keys = keys
        self._lock = asyncio.Lock()
        self._released = False
        # The session's summary as stored; None after a write whose outcome is unknown.
        self._summary: Summary | None = None

    @property
    def session_id(self) -> str:
        return self._id

    async def append(self, entry: SessionEntry) -> None:
        text = encode_session_entry(entry)  # not JSON: nothing is written
        store = self._store
        async with self._lock:
            self._check_held()
            # Autocommit: the statement is its own transaction, flushed before it answers.
            with store._translated(f"append to session {self._id!r}"):
                summary = self._summary
                if summary is None:
                    cursor = await self._conn.execute(store._sql.summary, (self._id,))
                    row = await cursor.fetchone()
                    if row is None:
                        raise StorageError(f"session {self._id!r} is gone; nothing was written")
                    summary = decode_summary(str(row[0]))
                summary = fold_summary(summary, (entry,))
                self._summary = None  # unknown until the write is known to have succeeded
                await self._conn.execute(
                    store._sql.append,
                    (self._id, text, self._id, encode_summary(summary), self._id),
                )
                self._summary = summary

    async def delete_session(self) -> None:
        """Remove the session's header and log in one transaction, under this lease."""
        store = self._store
        async with self._lock:
            self._check_held()
            with store._translated(f"delete session {self._id!r}"):
                async with self._conn.transaction():
                    await self._conn.execute(store._sql.delete_entries, (self._id,))
                    await self._conn.execute(store._sql.delete_header, (self._id,))

    def _check_held(self) -> None:
        if self._released:
            raise StorageError(f"the lease on session {self._id!r} was released; acquire it again")

    async def release(self) -> None:
        """Unlock the session and hand the connection back to the store; idempotent.

        Returns once the server has dropped the lock, so another writer may acquire at once. A
        connection already lost needs no unlock (the server dropped the lock with it); it is
        kept for the next acquire only when the server confirmed the unlock, else closed.
        """
        if self._released:
            return
        self._released = True
        store = self._store
        store._forget(self)
        unlocked = False
        try:
            async with self._lock:
                if not self._conn.closed:
                    with contextlib.suppress(store._pg.error):
                        cursor = await self._conn.execute(store._sql.unlock, self._keys)
                        row = await cursor.fetchone()
                        unlocked = row is not None and row[0] is True
        finally:
            # S10: a lock never outlives its lease — only a confirmed unlock lets the session
            # serve another.
            if unlocked:
                await store._give_back(self._conn)
            else:
                await _close_quietly(self._conn)

    def __repr__(self) -> str:
        state = "released" if self._released else "held"
        return f"<PostgresSessionStore lease on {self._id!r} {state}>"
