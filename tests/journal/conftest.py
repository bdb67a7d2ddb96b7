"""Fixtures for the journal tests that need a real PostgreSQL server.

One server serves the whole session: the one ``ROBOTA_TEST_POSTGRES_DSN`` names (``.ci/run``
starts one with ``.ci/postgres``), else a throwaway cluster this session starts and stops. Each
test gets a table of its own, so no test sees another's rows or locks.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from journal.postgres import PostgresServer

DSN_VARIABLE = "ROBOTA_TEST_POSTGRES_DSN"


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A libpq DSN of a running PostgreSQL database the tests may create tables in."""
    given = os.environ.get(DSN_VARIABLE)
    if given:
        yield given
        return
    with PostgresServer() as server:
        yield server.dsn


@pytest.fixture
def journal_table(postgres_dsn: str) -> Iterator[str]:
    """A table name no other test uses; dropped afterwards."""
    name = f"journal_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
