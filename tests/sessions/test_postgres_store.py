"""PostgresSessionStore on a real PostgreSQL server (issue 27; S10 one writer per session).

Every test runs against the session's server (``postgres_dsn``: ``ROBOTA_TEST_POSTGRES_DSN``, or
a throwaway cluster) under a table prefix of its own (``prefix``), so no test sees another's
sessions. Locks are per prefix, so tests do not exclude each other either.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest
from psycopg import sql

import robota
from childproc import finish, first_line, spawn
from robota.core._install import install_command
from robota.sessions import (
    PostgresSessionStore,
    Rewound,
    SessionBusyError,
    SessionHeader,
    SessionLease,
    SessionNotFoundError,
)
from robota.testing import SESSION_STORE_CHECKS, run_session_store_conformance
from sessions.postgres_tables import drop_postgres_tables

#: A child that holds the lease on one session until it is killed.
HOLDER = """
import asyncio, sys
from robota.sessions import PostgresSessionStore, Rewound

async def main():
    store = PostgresSessionStore(sys.argv[1], prefix=sys.argv[2])
    lease = await store.acquire(sys.argv[3])
    await lease.append(Rewound(0, 1.0))
    print("held", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""

#: A child that runs one turn on a session: it waits for a start line on stdin (so two racers
#: go at once), and its turn's tool holds the turn open until a second line arrives.
RACER = """
import asyncio, sys
import robota
from robota.sessions import PostgresSessionStore, Session, SessionBusyError
from robota.testing import ScriptedProvider

@robota.tool
def gate(step: str) -> str:
    \"\"\"Hold the turn open until the test says go on.\"\"\"
    print("in turn", flush=True)
    sys.stdin.readline()
    return "passed " + step

async def main():
    dsn, prefix, session_id, name = sys.argv[1:5]
    provider = ScriptedProvider([[("gate", {"step": name})], "done by " + name])
    agent = robota.Agent(provider=provider, model="m", tools=[gate])
    async with PostgresSessionStore(dsn, prefix=prefix) as store:
        session = await Session.open(agent, store, session_id=session_id)
        sys.stdin.readline()
        try:
            result = await session.run("hello from " + name)
        except SessionBusyError as error:
            print("busy", error.code, flush=True)
        else:
            print(result.output, flush=True)
        await session.aclose()

asyncio.run(main())
"""

#: S10: refused "at once" — the time a refused acquire may take on a local server.
AT_ONCE_S = 0.5


@pytest.fixture
def prefix(postgres_dsn: str) -> Iterator[str]:
    """A table prefix no other test uses; its tables dropped afterwards."""
    name = f"s_{uuid.uuid4().hex[:12]}"
    yield name
    drop_postgres_tables(postgres_dsn, name)


@pytest.fixture
async def store(postgres_dsn: str, prefix: str) -> AsyncIterator[PostgresSessionStore]:
    handle = PostgresSessionStore(postgres_dsn, prefix=prefix)
    yield handle
    await handle.aclose()


async def _acquire_within(store: PostgresSessionStore, session_id: str, limit_s: float) -> None:
    """Poll ``acquire`` until it succeeds (fails the test past ``limit_s``); then release."""
    started = time.monotonic()
    while True:
        try:
            lease = await store.acquire(session_id)
        except SessionBusyError:
            if time.monotonic() - started > limit_s:
                pytest.fail(f"session {session_id!r} still locked after {limit_s} s")
            await asyncio.sleep(0.05)
            continue
        await lease.release()
        return


def _holder(dsn: str, prefix: str, session_id: str) -> subprocess.Popen[str]:
    child = spawn(HOLDER, dsn, prefix, session_id)
    assert first_line(child) == "held"
    return child


# ------------------------------------------------------------------------------ the port


async def test_postgres_store_passes_the_session_store_conformance_kit(
    postgres_dsn: str, prefix: str
) -> None:
    report = await run_session_store_conformance(
        lambda: PostgresSessionStore(postgres_dsn, prefix=prefix)
    )
    report.raise_for_failures()
    assert report.store == "PostgresSessionStore"
    assert [r.check for r in report.results] == list(SESSION_STORE_CHECKS)


async def test_entries_are_kept_as_their_versioned_json_text(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    await store.create(SessionHeader("s1", 1.5, "parent", 2), [Rewound(1, 2.0)])
    async with await psycopg.AsyncConnection.connect(postgres_dsn) as conn:
        cursor = await conn.execute(
            sql.SQL("SELECT session_id, seq, entry FROM {}").format(
                sql.Identifier(f"{prefix}_session_entries")
            )
        )
        assert await cursor.fetchall() == [
            ("s1", 1, robota.sessions.encode_session_entry(Rewound(1, 2.0)))
        ]
    stored = await store.load("s1")
    assert stored.header == SessionHeader("s1", 1.5, "parent", 2)


# ------------------------------------------------------------------------------ S10 one writer


async def test_s10_two_processes_racing_a_turn_on_one_session_one_is_refused(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    """Two workers start a turn on one session at once: one runs it, the other is refused."""
    await store.create(SessionHeader("shared", time.time()))
    racers = {name: spawn(RACER, postgres_dsn, prefix, "shared", name) for name in ("a", "b")}
    try:
        for child in racers.values():
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        first = {name: first_line(child) for name, child in racers.items()}
        assert sorted(first.values()) == ["busy session_busy", "in turn"], first
        (winner,) = [name for name, line in first.items() if line == "in turn"]
        # The loser's refusal came while the winner's turn was still open.
        loser = racers["b" if winner == "a" else "a"]
        assert finish(loser)[0] == 0
        out, err = racers[winner].communicate("go on\n", timeout=60)
        assert racers[winner].returncode == 0, err
        assert out.strip() == f"done by {winner}"
    finally:
        for child in racers.values():
            if child.poll() is None:
                child.kill()
                finish(child)
    # Exactly one turn is in the session: the winner's, never an interleaving of both.
    entries = (await store.load("shared")).entries
    saved = [e for e in entries if e.kind == "turn_saved"]
    assert len(saved) == 1
    assert saved[0].messages[0].content == f"hello from {winner}"


async def test_s10_another_process_holding_the_session_is_refused_at_once(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    await store.create(SessionHeader("s1", 0.0))
    child = _holder(postgres_dsn, prefix, "s1")
    try:
        started = time.monotonic()
        with pytest.raises(SessionBusyError) as info:
            await store.acquire("s1")
        assert time.monotonic() - started < AT_ONCE_S
        assert info.value.session_id == "s1"
        with pytest.raises(SessionBusyError):
            await store.delete("s1")
        assert (await store.load("s1")).entries == (Rewound(0, 1.0),)
    finally:
        child.kill()
        finish(child)


async def test_s10_a_holder_killed_with_sigkill_releases_the_session(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    await store.create(SessionHeader("s1", 0.0))
    child = _holder(postgres_dsn, prefix, "s1")
    try:
        with pytest.raises(SessionBusyError):
            await store.acquire("s1")
    finally:
        child.send_signal(signal.SIGKILL)
        finish(child)
    assert child.returncode == -signal.SIGKILL
    # The server ends the dead process's session when its socket closes, and the lock with it:
    # no lease timeout to wait out.
    await _acquire_within(store, "s1", limit_s=10.0)
    async with await store.acquire("s1") as lease:
        await lease.append(Rewound(0, 2.0))
    assert (await store.load("s1")).entries == (Rewound(0, 1.0), Rewound(0, 2.0))


async def test_s10_a_lease_whose_server_session_was_terminated_cannot_append(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    """A lost connection is a lost lock: the next append fails instead of writing unguarded."""
    await store.create(SessionHeader("s1", 0.0))
    lease = await store.acquire("s1")
    await lease.append(Rewound(0, 1.0))
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        cursor = await admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_locks "
            "WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()"
            " AND pid IN (SELECT pid FROM pg_stat_activity WHERE application_name = %s)",
            ("robota-sessions",),
        )
        assert await cursor.fetchall() == [(True,)]
    with pytest.raises(robota.StorageError) as info:
        await lease.append(Rewound(0, 2.0))
    assert isinstance(info.value.__cause__, psycopg.Error)
    await lease.release()
    async with await store.acquire("s1") as again:
        await again.append(Rewound(0, 3.0))
    assert (await store.load("s1")).entries == (Rewound(0, 1.0), Rewound(0, 3.0))


async def test_s10_two_handles_racing_acquire_exactly_one_wins(
    postgres_dsn: str, prefix: str
) -> None:
    async with (
        PostgresSessionStore(postgres_dsn, prefix=prefix) as left,
        PostgresSessionStore(postgres_dsn, prefix=prefix) as right,
    ):
        for n in range(5):
            await left.create(SessionHeader(f"race-{n}", 0.0))
            outcomes = await asyncio.gather(
                left.acquire(f"race-{n}"), right.acquire(f"race-{n}"), return_exceptions=True
            )
            leases = [o for o in outcomes if isinstance(o, SessionLease)]
            refused = [o for o in outcomes if isinstance(o, SessionBusyError)]
            assert (len(leases), len(refused)) == (1, 1), outcomes
            await leases[0].release()


async def test_reads_survive_a_terminated_shared_connection(
    store: PostgresSessionStore, postgres_dsn: str
) -> None:
    await store.create(SessionHeader("s1", 0.0))
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        await admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
            "WHERE application_name = %s AND pid <> pg_backend_pid()",
            ("robota-sessions",),
        )
    assert [h.id for h in await store.list_sessions()] == ["s1"]


async def test_aclose_releases_held_leases_and_refuses_later_calls(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    await store.create(SessionHeader("s1", 0.0))
    lease = await store.acquire("s1")
    await store.aclose()
    await store.aclose()
    with pytest.raises(robota.StorageError, match="released"):
        await lease.append(Rewound(0, 1.0))
    with pytest.raises(robota.StorageError, match="closed"):
        await store.list_sessions()
    async with (
        PostgresSessionStore(postgres_dsn, prefix=prefix) as other,
        await other.acquire("s1"),
    ):
        pass


# ------------------------------------------------------------------------------ sessions


async def test_a_session_continues_in_another_worker(postgres_dsn: str, prefix: str) -> None:
    """A conversation saved by one worker's store is the history another worker resumes."""
    from robota.sessions import Session
    from robota.testing import ScriptedProvider

    async with PostgresSessionStore(postgres_dsn, prefix=prefix) as first:
        agent = robota.Agent(provider=ScriptedProvider(["one"]), model="m")
        session = await Session.open(agent, first, session_id="chat")
        await session.run("first question")
        await session.aclose()
    provider = ScriptedProvider(["two"])
    async with PostgresSessionStore(postgres_dsn, prefix=prefix) as second:
        agent = robota.Agent(provider=provider, model="m", system_prompt="live prompt")
        session = await Session.open(agent, second, session_id="chat")
        result = await session.run("second question")
        await session.aclose()
    assert result.output == "two"
    sent = provider.requests[0].messages
    assert [m.kind for m in sent] == ["system", "user", "assistant", "user"]
    assert [m.content for m in sent] == ["live prompt", "first question", "one", "second question"]


# ------------------------------------------------------------------------------ schema, config


async def test_a_store_of_another_schema_version_is_refused(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    await store.list_sessions()  # makes the tables
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        await admin.execute(
            sql.SQL("UPDATE {} SET value = '99' WHERE key = 'schema_version'").format(
                sql.Identifier(f"{prefix}_sessions_meta")
            )
        )
    async with PostgresSessionStore(postgres_dsn, prefix=prefix) as newer:
        with pytest.raises(robota.StorageError, match="upgrade robota") as info:
            await newer.list_sessions()
    assert info.value.code == "session_store_version"


async def test_a_version_2_store_is_used_and_marked_version_3(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    from robota.sessions._codec_v1 import encode_v1

    await store.create(SessionHeader("old", 1.0))
    meta = sql.Identifier(f"{prefix}_sessions_meta")
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        await admin.execute(  # as a robota of schema 2 (entries in format 1) left it
            sql.SQL("UPDATE {} SET value = '2' WHERE key = 'schema_version'").format(meta)
        )
        await admin.execute(
            sql.SQL("INSERT INTO {} (session_id, seq, entry) VALUES ('old', 1, %s)").format(
                sql.Identifier(f"{prefix}_session_entries")
            ),
            (encode_v1(Rewound(0, 2.0)),),
        )
    async with PostgresSessionStore(postgres_dsn, prefix=prefix) as later:
        assert (await later.load("old")).entries == (Rewound(0, 2.0),)
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        cursor = await admin.execute(
            sql.SQL("SELECT value FROM {} WHERE key = 'schema_version'").format(meta)
        )
        assert await cursor.fetchone() == ("3",)


async def test_schema_is_created_by_many_handles_at_once(postgres_dsn: str, prefix: str) -> None:
    handles = [PostgresSessionStore(postgres_dsn, prefix=prefix) for _ in range(4)]
    try:
        await asyncio.gather(*(h.create(SessionHeader(f"s{n}", n)) for n, h in enumerate(handles)))
        assert [h.id for h in await handles[0].list_sessions()] == ["s0", "s1", "s2", "s3"]
    finally:
        for handle in handles:
            await handle.aclose()


async def test_a_damaged_entry_reads_as_a_storage_error(
    store: PostgresSessionStore, postgres_dsn: str, prefix: str
) -> None:
    await store.create(SessionHeader("s1", 0.0))
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        await admin.execute(
            sql.SQL("INSERT INTO {} VALUES ('s1', 1, 'not json')").format(
                sql.Identifier(f"{prefix}_session_entries")
            )
        )
    with pytest.raises(robota.StorageError):
        await store.load("s1")


async def test_unknown_session_names_the_fix(store: PostgresSessionStore) -> None:
    with pytest.raises(SessionNotFoundError, match="session_id=None"):
        await store.load("nope")


async def test_unreachable_server_is_a_storage_error_without_the_password() -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = PostgresSessionStore(
        f"host=127.0.0.1 port={port} user=u password=hunter2secret connect_timeout=2"
    )
    with pytest.raises(robota.StorageError) as info:
        await store.list_sessions()
    assert info.value.code == "session_store_unreachable"
    assert "hunter2secret" not in str(info.value)
    assert "hunter2secret" not in repr(store)
    await store.aclose()


def test_a_dsn_that_does_not_parse_is_a_configuration_error_without_its_text() -> None:
    with pytest.raises(robota.ConfigurationError) as info:
        PostgresSessionStore("host=x password='hunter2secret")
    assert "hunter2secret" not in str(info.value)


@pytest.mark.parametrize("bad", ["", "x" * 48, "a\x00b", 7])
def test_a_prefix_postgres_would_truncate_or_cannot_hold_is_refused(bad: object) -> None:
    with pytest.raises(robota.ConfigurationError, match="prefix"):
        PostgresSessionStore("host=127.0.0.1", prefix=bad)  # type: ignore[arg-type]


def test_import_robota_sessions_does_not_import_psycopg() -> None:
    code = """
import sys
import robota, robota.sessions, robota.testing
print(sorted(name for name in sys.modules if name.split(".")[0] == "psycopg"))
"""
    returncode, out, err = finish(spawn(code))
    assert (returncode, out.strip()) == (0, "[]"), err


def test_missing_psycopg_names_the_extra_to_install() -> None:
    code = """
import sys
sys.modules["psycopg"] = None  # as if it were not installed
import robota
from robota.sessions import PostgresSessionStore
try:
    PostgresSessionStore("host=127.0.0.1")
except robota.ConfigurationError as error:
    print(error.code, error)
"""
    returncode, out, err = finish(spawn(code))
    assert returncode == 0, err
    assert out.startswith("missing_dependency")
    assert install_command("postgres") in out
