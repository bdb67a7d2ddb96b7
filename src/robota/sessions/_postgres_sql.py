"""The PostgreSQL session store's SQL, driver loader and identifier checks (see ``_postgres``)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, final

from robota.core import ConfigurationError, install_command
from robota.sessions._records import SessionHeader

if TYPE_CHECKING:
    import psycopg
    from psycopg import pq, sql
    from psycopg.rows import TupleRow

__all__: list[str] = []

SCHEMA_VERSION: Final = "3"  # 2: {prefix}_sessions.summary; 3: entries in format 2 (issue 27)
# Version 2 differs only in its entries' format, which this robota reads in both forms: it is
# marked version 3 on first use, so a robota that reads only format 1 refuses it by its version.
UPGRADABLE: Final = "2"
#: PostgreSQL truncates longer identifiers silently (NAMEDATALEN - 1): refuse them instead.
_MAX_IDENTIFIER_BYTES: Final = 63
_LONGEST_SUFFIX: Final = "_session_entries"
#: Writer sessions a store keeps open between leases (each one a server connection).
IDLE_WRITERS: Final = 4

#: Connection parameters a DSN may override (as PostgresJournal's): keepalives let each side
#: notice a vanished peer, so a dead worker's lock is released when the server's session ends;
#: ``connect_timeout`` bounds only the connection attempt, never a held lease.
CLIENT_DEFAULTS: Final[dict[str, str]] = {
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "connect_timeout": "10",
    "application_name": "robota-sessions",
}


@final
class Psycopg:
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
            # The optional back-end: imported when a store is built, never by `import robota`.
            import psycopg  # noqa: PLC0415
            from psycopg import pq, sql  # noqa: PLC0415
            from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: PLC0415
        except ImportError as exc:
            raise ConfigurationError(
                f"PostgresSessionStore needs psycopg 3: {install_command('postgres')}",
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
def load_psycopg() -> Psycopg:
    return Psycopg()


def check_prefix(prefix: object) -> str:
    if not isinstance(prefix, str) or not prefix:
        raise ConfigurationError(f"prefix must be a non-empty string, got {prefix!r}")
    if "\x00" in prefix:
        raise ConfigurationError("a table prefix cannot contain a NUL character")
    try:
        size = len(prefix.encode("utf-8")) + len(_LONGEST_SUFFIX)
    except UnicodeEncodeError as exc:
        raise ConfigurationError(f"prefix {prefix!r} is not valid text", cause=exc) from exc
    if size > _MAX_IDENTIFIER_BYTES:
        raise ConfigurationError(
            f"prefix {prefix!r} is too long: its table {prefix}{_LONGEST_SUFFIX} would be {size} "
            f"bytes, and PostgreSQL identifiers have at most {_MAX_IDENTIFIER_BYTES}"
        )
    return prefix


def lock_keys(namespace: str, prefix: str, name: str) -> tuple[int, int]:
    """Two signed int4 advisory-lock keys for ``name`` among ``prefix``'s tables."""
    digest = hashlib.sha256(
        "\x00".join(("robota-sessions", namespace, prefix, name)).encode("utf-8")
    ).digest()
    return (
        int.from_bytes(digest[0:4], "big", signed=True),
        int.from_bytes(digest[4:8], "big", signed=True),
    )


@final
class Statements:
    """The store's SQL, composed once with its tables' quoted identifiers."""

    __slots__ = (
        "append",
        "delete_entries",
        "delete_header",
        "entries",
        "init_version",
        "insert_entry",
        "insert_header",
        "list",
        "list_summaries",
        "load",
        "meta",
        "schema",
        "sessions",
        "summary",
        "try_lock",
        "unlock",
        "upgrade_version",
        "version",
    )

    def __init__(self, pg: Psycopg, prefix: str) -> None:
        self.meta = pg.identifier(f"{prefix}_sessions_meta")
        self.sessions = pg.identifier(f"{prefix}_sessions")
        self.entries = pg.identifier(f"{prefix}_session_entries")
        named = {"meta": self.meta, "sessions": self.sessions, "entries": self.entries}
        self.schema = tuple(
            pg.sql(text).format(**named)
            for text in (
                "CREATE TABLE IF NOT EXISTS {meta} (key text PRIMARY KEY, value text NOT NULL)",
                "CREATE TABLE IF NOT EXISTS {sessions} (id text PRIMARY KEY, "
                "created_at double precision NOT NULL, parent_id text, fork_at integer, "
                "summary text NOT NULL)",
                "CREATE TABLE IF NOT EXISTS {entries} (session_id text NOT NULL, "
                "seq bigint NOT NULL, entry text NOT NULL, PRIMARY KEY (session_id, seq))",
            )
        )
        self.init_version = pg.sql(
            "INSERT INTO {meta} (key, value) VALUES ('schema_version', %s)"
            " ON CONFLICT (key) DO NOTHING"
        ).format(**named)
        self.version = pg.sql("SELECT value FROM {meta} WHERE key = 'schema_version'").format(
            **named
        )
        self.upgrade_version = pg.sql(
            "UPDATE {meta} SET value = %s WHERE key = 'schema_version' AND value = %s"
        ).format(**named)
        self.insert_header = pg.sql(
            "INSERT INTO {sessions} (id, created_at, parent_id, fork_at, summary)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id"
        ).format(**named)
        self.insert_entry = pg.sql(
            "INSERT INTO {entries} (session_id, seq, entry) VALUES (%s, %s, %s)"
        ).format(**named)
        # One statement, so one snapshot: the header and the log it returns agree. seq counts
        # from 1 with no gaps, so the entries after the first n are those with seq > n.
        self.load = pg.sql(
            "SELECT s.id, s.created_at, s.parent_id, s.fork_at, e.entry FROM {sessions} s "
            "LEFT JOIN {entries} e ON e.session_id = s.id AND e.seq > %s WHERE s.id = %s"
            " ORDER BY e.seq"
        ).format(**named)
        # COLLATE "C": code-point order, as Python orders the ids.
        self.list = pg.sql(
            "SELECT id, created_at, parent_id, fork_at FROM {sessions}"
            ' ORDER BY created_at, id COLLATE "C"'
        ).format(**named)
        self.list_summaries = pg.sql(
            "SELECT id, created_at, parent_id, fork_at, summary FROM {sessions}"
            ' ORDER BY created_at, id COLLATE "C"'
        ).format(**named)
        self.summary = pg.sql("SELECT summary FROM {sessions} WHERE id = %s").format(**named)
        # The lease's lock makes it the only writer: max(seq) + 1 cannot race. One statement,
        # so the entry and the session's new summary are stored together or not at all.
        self.append = pg.sql(
            "WITH added AS (INSERT INTO {entries} (session_id, seq, entry)"
            " SELECT %s, coalesce(max(seq), 0) + 1, %s FROM {entries} WHERE session_id = %s)"
            " UPDATE {sessions} SET summary = %s WHERE id = %s"
        ).format(**named)
        self.delete_entries = pg.sql("DELETE FROM {entries} WHERE session_id = %s").format(**named)
        self.delete_header = pg.sql("DELETE FROM {sessions} WHERE id = %s").format(**named)
        self.try_lock = pg.sql("SELECT pg_try_advisory_lock(%s, %s)")
        self.unlock = pg.sql("SELECT pg_advisory_unlock(%s, %s)")


def header_of(row: Sequence[Any]) -> SessionHeader:
    return SessionHeader(
        str(row[0]),
        float(row[1]),
        None if row[2] is None else str(row[2]),
        None if row[3] is None else int(row[3]),
    )
