"""Fixtures for the journal tests that need a real PostgreSQL server.

One server serves the whole session: the one ``ROBOTA_TEST_POSTGRES_DSN`` names (``.ci/run``
starts one with ``.ci/postgres``), else a throwaway cluster this session starts and stops. Each
test gets a table of its own, so no test sees another's rows or locks. The server is
``postgres_dsn``, from ``tests/conftest.py`` (the Temporal tests share it).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql


@pytest.fixture
def journal_table(postgres_dsn: str) -> Iterator[str]:
    """A table name no other test uses; dropped afterwards."""
    name = f"journal_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
