"""Clean-up for tests that keep sessions in PostgreSQL under a table prefix of their own."""

from __future__ import annotations

import psycopg
from psycopg import sql

SUFFIXES = ("_sessions", "_session_entries", "_sessions_meta")
"""The tables ``PostgresSessionStore(dsn, prefix=...)`` makes, after the prefix."""


def drop_postgres_tables(dsn: str, prefix: str) -> None:
    """Drop the session tables of ``prefix`` (those that exist)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        for suffix in SUFFIXES:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(prefix + suffix)))
