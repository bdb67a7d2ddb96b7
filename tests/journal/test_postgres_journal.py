"""PostgresJournal on a real PostgreSQL server (S40 journal, S10 one writer per execution).

Every test runs against the session's server (``postgres_dsn``: ``ROBOTA_TEST_POSTGRES_DSN``, or
a throwaway cluster) in a table of its own (``journal_table``).
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg.rows import TupleRow

import robota
from childproc import finish, first_line, spawn
from robota.core._install import install_command
from robota.core.execution._journal import (
    Checkpoint,
    EffectSettled,
    EffectStarted,
    ExecutionStarted,
    JournalLease,
    JournalRecord,
    ModelCallSettled,
    ModelCallStarted,
    OutsideRequested,
    OutsideResponded,
    Reconciled,
    RuntimeState,
    encode_journal_record,
)
from robota.host import PostgresJournal
from robota.host.journal._postgres import _lock_keys
from robota.testing import run_journal_conformance

#: A child process that holds the lease on one execution until it is killed.
HOLDER = """
import asyncio, sys
from robota.host import PostgresJournal

async def main():
    journal = PostgresJournal(sys.argv[1], table=sys.argv[2])
    lease = await journal.acquire(sys.argv[3])
    await lease.append(robota_record())
    print("held", flush=True)
    await asyncio.sleep(3600)

def robota_record():
    from robota.core.execution._journal import Reconciled
    return Reconciled("held-by-child", True)

asyncio.run(main())
"""

#: S10: refused "at once" — the time a refused acquire may take on a local server.
AT_ONCE_S = 0.5


@pytest.fixture
async def journal(postgres_dsn: str, journal_table: str) -> AsyncIterator[PostgresJournal]:
    handle = PostgresJournal(postgres_dsn, table=journal_table)
    yield handle
    await handle.aclose()


def _state() -> RuntimeState:
    return RuntimeState(
        agent_name="agent",
        provider="scripted",
        model="m",
        system_prompt="be brief",
        tool_catalog_digest="0" * 64,
        tool_residency=(("search", "resident"), ("fetch", "deferred")),
        max_rounds=8,
        max_same_tool_inputs=3,
        allow_tool_only_completion=False,
        tool_choice="auto",
    )


@pytest.fixture
def worker_dsn(postgres_dsn: str) -> Iterator[str]:
    """A DSN for a fresh login role with no privileges beyond PostgreSQL's defaults.

    PostgreSQL 15 gives ``PUBLIC`` no ``CREATE`` on the ``public`` schema, so the role cannot
    make the journal's table. It sets ``idle_session_timeout = 1s`` for itself, as a server or
    role configuration might. Dropped afterwards.
    """
    role = f"worker_{uuid.uuid4().hex[:12]}"
    word = uuid.uuid4().hex  # its password, for a server that does not trust 127.0.0.1
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(word)
            )
        )
        admin.execute(
            sql.SQL("ALTER ROLE {} SET idle_session_timeout = '1s'").format(sql.Identifier(role))
        )
    yield make_conninfo(postgres_dsn, user=role, password=word)
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE usename = %s",
            (role,),
        )
        admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def _every_kind() -> list[JournalRecord]:
    call = robota.ToolCall("call_1", "search", '{"q": "ünïcode ✓"}')
    reply = robota.AssistantMessage(
        "looking",
        tool_calls=(call,),
        model="m-2025",
        usage=robota.Usage(10, 5, 15, 2),
        continuation="opaque",
    )
    return [
        ExecutionStarted("exec-1", _state(), (robota.UserMessage("find it\x00 — with NUL"),)),
        ModelCallStarted("mc-1", 1),
        ModelCallSettled("mc-1", reply),
        EffectStarted("mc-1#0", "tc-1", "call_1", "search", {"q": "ünïcode ✓", "n": [1, 2.5]}),
        EffectSettled("mc-1#0", "ok", "found 3"),
        OutsideRequested("req-1", "mc-1#0", "approval", {"amount": 12}),
        OutsideResponded("req-1", {"approved": True}),
        Reconciled("item-1", happened=False),
        Checkpoint(
            (robota.ToolMessage("found 3", tool_call_id="call_1", tool_name="search"),),
            "complete",
            "end_turn",
        ),
    ]


def _items(records: Sequence[JournalRecord]) -> list[str]:
    """The item ids of a log of :class:`Reconciled` records (any other kind by its kind)."""
    return [r.item_id if isinstance(r, Reconciled) else r.kind for r in records]


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed when the probe closes: nothing listens there


def _holder(dsn: str, table: str, execution_id: str) -> subprocess.Popen[str]:
    child = spawn(HOLDER, dsn, table, execution_id)
    assert first_line(child) == "held"
    return child


async def _acquire_within(journal: PostgresJournal, execution_id: str, limit_s: float) -> float:
    """Poll ``acquire`` until it succeeds; the seconds it took (fails the test past ``limit_s``)."""
    started = time.monotonic()
    while True:
        try:
            lease = await journal.acquire(execution_id)
        except robota.ExecutionLockedError:
            if time.monotonic() - started > limit_s:
                pytest.fail(f"execution {execution_id!r} still locked after {limit_s} s")
            await asyncio.sleep(0.05)
            continue
        await lease.release()
        return time.monotonic() - started


Admin = psycopg.AsyncConnection[TupleRow]


@pytest.fixture
async def admin(postgres_dsn: str) -> AsyncIterator[Admin]:
    """A session of the test's own, to look at the journal's sessions and locks from outside."""
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
        yield conn


async def _lock_holders(admin: Admin, table: str, execution_id: str) -> list[int]:
    """The backend pids of the sessions holding ``execution_id``'s advisory lock."""
    k1, k2 = _lock_keys("execution", table, execution_id)
    cursor = await admin.execute(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s::oid "
        "AND objid = %s::oid AND objsubid = 2 AND granted",
        (k1 & 0xFFFFFFFF, k2 & 0xFFFFFFFF),
    )
    return [int(pid) for (pid,) in await cursor.fetchall()]


async def _holder_pid(admin: Admin, table: str, execution_id: str) -> int:
    holders = await _lock_holders(admin, table, execution_id)
    assert len(holders) == 1, holders
    return holders[0]


async def _advisory_locks_of(admin: Admin, pid: int) -> int:
    cursor = await admin.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = %s", (pid,)
    )
    row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def _alive(admin: Admin, pids: Sequence[int]) -> set[int]:
    """Those of ``pids`` that still have a session on the server."""
    cursor = await admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)", (list(pids),)
    )
    return {int(pid) for (pid,) in await cursor.fetchall()}


async def _settled_alive(admin: Admin, pids: Sequence[int], *, limit_s: float = 5.0) -> set[int]:
    """``_alive`` once it stops shrinking (a closed session's backend exits a moment later)."""
    deadline = time.monotonic() + limit_s
    alive = await _alive(admin, pids)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        again = await _alive(admin, pids)
        if again == alive:
            return alive
        alive = again
    return alive


async def _wait_gone(admin: Admin, pids: Sequence[int], *, limit_s: float = 5.0) -> None:
    deadline = time.monotonic() + limit_s
    while alive := await _alive(admin, pids):
        if time.monotonic() > deadline:
            pytest.fail(f"sessions {sorted(alive)} still open after {limit_s} s")
        await asyncio.sleep(0.05)


async def _terminate(admin: Admin, pids: Sequence[int]) -> None:
    cursor = await admin.execute(
        "SELECT pg_terminate_backend(pid, 5000) FROM unnest(%s::int[]) AS pid", (list(pids),)
    )
    assert await cursor.fetchall() == [(True,)] * len(pids)


# ------------------------------------------------------------------------------ records


async def test_s40_append_then_read_round_trips_every_record_kind_in_order(
    journal: PostgresJournal,
) -> None:
    records = _every_kind()
    async with await journal.acquire("exec-1") as lease:
        for record in records:
            await lease.append(record)
    assert await journal.read("exec-1") == tuple(records)
    assert await journal.read("never-written") == ()


async def test_s40_records_are_stored_as_the_versioned_json_text(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str
) -> None:
    record = Reconciled("item-1", happened=True, result="done")
    async with await journal.acquire("exec-1") as lease:
        await lease.append(record)
    async with await psycopg.AsyncConnection.connect(postgres_dsn) as conn:
        cursor = await conn.execute(
            sql.SQL("SELECT execution_id, seq, record FROM {}").format(
                sql.Identifier(journal_table)
            )
        )
        rows = await cursor.fetchall()
    assert rows == [("exec-1", 1, encode_journal_record(record))]


async def test_s40_every_committed_append_is_visible_to_another_handle_at_once(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str
) -> None:
    async with PostgresJournal(postgres_dsn, table=journal_table) as reader:
        lease = await journal.acquire("exec-1")
        for n in range(5):
            await lease.append(Reconciled(f"item-{n}", happened=True))
            assert _items(await reader.read("exec-1")) == [f"item-{i}" for i in range(n + 1)]
        await lease.release()


async def test_s40_a_new_lease_continues_the_log_after_the_last_record(
    postgres_dsn: str, journal_table: str
) -> None:
    async with (
        PostgresJournal(postgres_dsn, table=journal_table) as first,
        await first.acquire("exec-1") as lease,
    ):
        await lease.append(Reconciled("a", happened=True))
        await lease.append(Reconciled("b", happened=True))
    async with PostgresJournal(postgres_dsn, table=journal_table) as second:
        async with await second.acquire("exec-1") as lease:
            await lease.append(Reconciled("c", happened=True))
        records = await second.read("exec-1")
    assert _items(records) == ["a", "b", "c"]


async def test_s40_an_append_whose_outcome_is_unknown_does_not_break_the_order(
    journal: PostgresJournal,
) -> None:
    # A cancelled append may or may not have committed; the next one must neither collide with
    # it nor leave a gap, and the log stays in append order.
    lease = await journal.acquire("exec-1")
    sure: list[str] = []
    cancelled = 0
    for n, delay in enumerate((0.0, 0.0, 0.0, 0.0005, 0.002, 0.01)):
        task = asyncio.create_task(lease.append(Reconciled(f"maybe-{n}", happened=True)))
        await asyncio.sleep(delay)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            cancelled += 1
        else:
            sure.append(f"maybe-{n}")  # it finished before the cancel: it must be there
        await lease.append(Reconciled(f"sure-{n}", happened=True))
        sure.append(f"sure-{n}")
    await lease.release()
    assert cancelled  # sleep(0) cancels while the INSERT is in flight
    ids = _items(await journal.read("exec-1"))
    assert [i for i in ids if i in sure] == sure
    assert ids == sorted(ids, key=lambda i: (int(i.split("-")[1]), i.startswith("sure")))


async def test_s40_a_record_that_cannot_be_saved_is_a_storage_error(
    journal: PostgresJournal,
) -> None:
    async with await journal.acquire("exec-1") as lease:
        with pytest.raises(robota.StorageError):
            await lease.append(OutsideResponded("req-1", {"not json": object()}))
        # A lone surrogate (text decoded with surrogateescape) is kept as a JSON escape.
        await lease.append(Reconciled("odd-\ud800", happened=True))
        await lease.append(Reconciled("fine", happened=True))
    assert _items(await journal.read("exec-1")) == ["odd-\ud800", "fine"]


async def test_s40_a_released_lease_cannot_append(journal: PostgresJournal) -> None:
    lease = await journal.acquire("exec-1")
    await lease.release()
    await lease.release()  # idempotent
    with pytest.raises(robota.StorageError, match="released"):
        await lease.append(Reconciled("late", happened=True))
    assert await journal.read("exec-1") == ()


async def test_s40_postgres_journal_passes_the_journal_conformance_kit(
    postgres_dsn: str, journal_table: str
) -> None:
    report = await run_journal_conformance(
        lambda: PostgresJournal(postgres_dsn, table=journal_table)
    )
    report.raise_for_failures()
    assert report.passed
    assert report.not_run == ()
    assert report.journal == "PostgresJournal"


# ------------------------------------------------------------------------------ one writer (S10)


async def test_s10_one_writer_per_execution_on_postgres(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str
) -> None:
    lease = await journal.acquire("exec-1")
    async with PostgresJournal(postgres_dsn, table=journal_table) as other:
        with pytest.raises(robota.ExecutionLockedError) as info:
            await other.acquire("exec-1")
        assert info.value.execution_id == "exec-1"
        with pytest.raises(robota.ExecutionLockedError):
            await journal.acquire("exec-1")  # the same handle is refused too
        second = await other.acquire("exec-2")  # another execution is free
        await second.release()
        await lease.release()
        # release() returns once the server dropped the lock: no wait for a session to end.
        async with await other.acquire("exec-1") as again:
            await again.append(Reconciled("second writer", happened=True))


async def test_s10_another_process_holding_the_lease_is_refused_at_once(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str
) -> None:
    child = _holder(postgres_dsn, journal_table, "exec-1")
    try:
        started = time.monotonic()
        with pytest.raises(robota.ExecutionLockedError):
            await journal.acquire("exec-1")
        assert time.monotonic() - started < AT_ONCE_S
        assert _items(await journal.read("exec-1")) == ["held-by-child"]
    finally:
        child.kill()
        finish(child)


async def test_s40_crashed_holder_releases_its_lock(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str
) -> None:
    child = _holder(postgres_dsn, journal_table, "exec-1")
    try:
        with pytest.raises(robota.ExecutionLockedError):
            await journal.acquire("exec-1")
    finally:
        child.send_signal(signal.SIGKILL)
        finish(child)
    assert child.returncode == -signal.SIGKILL
    # The server ends the dead process's session when its socket closes, and the lock with it.
    await _acquire_within(journal, "exec-1", limit_s=10.0)
    async with await journal.acquire("exec-1") as lease:
        await lease.append(Reconciled("after the crash", happened=True))
    assert _items(await journal.read("exec-1")) == [
        "held-by-child",
        "after the crash",
    ]


async def test_s10_a_lease_whose_session_was_terminated_fails_its_next_append(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str
) -> None:
    lease = await journal.acquire("exec-1")
    await lease.append(Reconciled("before", happened=True))
    k1, k2 = _lock_keys("execution", journal_table, "exec-1")
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        cursor = await admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_locks WHERE locktype = 'advisory' "
            "AND classid = %s::oid AND objid = %s::oid AND objsubid = 2 AND granted",
            (k1 & 0xFFFFFFFF, k2 & 0xFFFFFFFF),
        )
        assert await cursor.fetchall() == [(True,)]  # exactly one session held it
    with pytest.raises(robota.StorageError) as info:
        await lease.append(Reconciled("after", happened=True))
    assert isinstance(info.value.__cause__, psycopg.Error)
    with pytest.raises(robota.StorageError):
        await lease.append(Reconciled("after, again", happened=True))
    await lease.release()  # nothing left to unlock; still quiet
    # The lock went with the session: another writer may take over at once.
    async with (
        PostgresJournal(postgres_dsn, table=journal_table) as other,
        await other.acquire("exec-1") as taken,
    ):
        await taken.append(Reconciled("new writer", happened=True))
    assert _items(await journal.read("exec-1")) == ["before", "new writer"]


async def test_s10_two_handles_racing_acquire_exactly_one_wins(
    postgres_dsn: str, journal_table: str
) -> None:
    async with (
        PostgresJournal(postgres_dsn, table=journal_table) as left,
        PostgresJournal(postgres_dsn, table=journal_table) as right,
    ):
        for n in range(5):
            execution_id = f"race-{n}"
            outcomes = await asyncio.gather(
                left.acquire(execution_id), right.acquire(execution_id), return_exceptions=True
            )
            leases = [o for o in outcomes if isinstance(o, JournalLease)]
            refused = [o for o in outcomes if isinstance(o, robota.ExecutionLockedError)]
            assert (len(leases), len(refused)) == (1, 1), outcomes
            await leases[0].release()


async def test_s40_reads_survive_a_terminated_read_session(
    journal: PostgresJournal, postgres_dsn: str
) -> None:
    async with await journal.acquire("exec-1") as lease:
        await lease.append(Reconciled("kept", happened=True))
    assert len(await journal.read("exec-1")) == 1
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        await admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
            "WHERE application_name = 'robota-journal' AND pid <> pg_backend_pid()"
        )
    assert _items(await journal.read("exec-1")) == ["kept"]


async def test_s10_a_server_idle_timeout_does_not_end_a_live_holders_lease(
    postgres_dsn: str, worker_dsn: str, journal_table: str
) -> None:
    # Elapsed time never takes the lease from a live holder: the worker role's own
    # idle_session_timeout (1 s) would end an idle session, and with it the lock.
    async with PostgresJournal(postgres_dsn, table=journal_table) as owner:
        await owner.read("exec-1")  # the owner makes the table
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("GRANT SELECT, INSERT ON {} TO {}").format(
                sql.Identifier(journal_table),
                sql.Identifier(str(psycopg.conninfo.conninfo_to_dict(worker_dsn)["user"])),
            )
        )
    async with PostgresJournal(worker_dsn, table=journal_table) as journal:
        lease = await journal.acquire("exec-1")
        await lease.append(Reconciled("first", happened=True))
        await asyncio.sleep(1.5)
        await lease.append(Reconciled("after idling", happened=True))
        async with PostgresJournal(worker_dsn, table=journal_table) as other:
            with pytest.raises(robota.ExecutionLockedError):
                await other.acquire("exec-1")
        await lease.release()
        assert _items(await journal.read("exec-1")) == ["first", "after idling"]


@pytest.mark.parametrize(
    ("extra", "client", "server"),
    [
        ("", ("10", "5", "3"), ("10", "5", "3")),
        (" keepalives_idle=30 keepalives_count=4", ("30", "5", "4"), ("30", "5", "4")),
    ],
)
async def test_s10_a_vanished_worker_or_server_is_found_by_tcp_keepalives(
    postgres_dsn: str,
    journal_table: str,
    extra: str,
    client: tuple[str, str, str],
    server: tuple[str, str, str],
) -> None:
    # A crashed machine closes no socket: the server's keepalives end its session (and free
    # its lock), the client's notice a server gone. Both sides, DSN overrides winning. The
    # lease's own connection is private; read through it only to see its session's settings.
    async with PostgresJournal(postgres_dsn + extra, table=journal_table) as journal:
        lease = await journal.acquire("exec-1")
        conn = lease._conn  # type: ignore[attr-defined]
        params = conn.info.get_parameters()
        keys = ("keepalives_idle", "keepalives_interval", "keepalives_count")
        assert params["keepalives"] == "1"
        assert tuple(params[k] for k in keys) == client
        cursor = await conn.execute(
            "SELECT current_setting('tcp_keepalives_idle'), "
            "current_setting('tcp_keepalives_interval'), current_setting('tcp_keepalives_count'), "
            "current_setting('synchronous_commit'), current_setting('idle_session_timeout'), "
            "current_setting('idle_in_transaction_session_timeout')"
        )
        assert await cursor.fetchone() == (*server, "on", "0", "0")
        await lease.release()


# ------------------------------------------------------------------------------ idle writer sessions


async def test_s10_a_released_leases_session_serves_the_next_lease_without_its_lock(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str, admin: Admin
) -> None:
    lease = await journal.acquire("exec-1")
    await lease.append(Reconciled("first", happened=True))
    pid = await _holder_pid(admin, journal_table, "exec-1")
    await lease.release()
    # The unlock was confirmed before the session went idle: it holds no lock at all.
    assert await _lock_holders(admin, journal_table, "exec-1") == []
    assert await _advisory_locks_of(admin, pid) == 0
    assert await _alive(admin, [pid]) == {pid}
    async with (
        PostgresJournal(postgres_dsn, table=journal_table) as other,
        await other.acquire("exec-1") as taken,
    ):
        await taken.append(Reconciled("other handle", happened=True))
    # The next lease writes through the same session, with its own lock and nothing else.
    async with await journal.acquire("exec-2") as again:
        assert await _holder_pid(admin, journal_table, "exec-2") == pid
        assert await _advisory_locks_of(admin, pid) == 1
        with pytest.raises(robota.ExecutionLockedError):
            await journal.acquire("exec-2")  # one writer still: the held session is not idle
        await again.append(Reconciled("reused", happened=True))
    assert await _advisory_locks_of(admin, pid) == 0
    assert _items(await journal.read("exec-1")) == ["first", "other handle"]
    assert _items(await journal.read("exec-2")) == ["reused"]


async def test_s10_an_idle_session_keeps_its_writer_settings(
    postgres_dsn: str, worker_dsn: str, journal_table: str, admin: Admin
) -> None:
    # The worker role's idle_session_timeout (1 s) would end an idle session that lost the
    # writer settings; a reused session is not prepared again, so it must still have them.
    async with PostgresJournal(postgres_dsn, table=journal_table) as owner:
        await owner.read("exec-1")  # the owner makes the table
    await admin.execute(
        sql.SQL("GRANT SELECT, INSERT ON {} TO {}").format(
            sql.Identifier(journal_table),
            sql.Identifier(str(psycopg.conninfo.conninfo_to_dict(worker_dsn)["user"])),
        )
    )
    async with PostgresJournal(worker_dsn, table=journal_table) as journal:
        async with await journal.acquire("exec-1") as lease:
            await lease.append(Reconciled("first", happened=True))
            pid = await _holder_pid(admin, journal_table, "exec-1")
        await asyncio.sleep(1.5)
        async with await journal.acquire("exec-1") as lease:
            assert await _holder_pid(admin, journal_table, "exec-1") == pid
            await lease.append(Reconciled("after idling", happened=True))
        assert _items(await journal.read("exec-1")) == ["first", "after idling"]


async def test_s10_idle_sessions_that_died_are_replaced_without_an_error(
    journal: PostgresJournal, journal_table: str, admin: Admin
) -> None:
    leases = [await journal.acquire(f"exec-{n}") for n in range(3)]
    pids = [await _holder_pid(admin, journal_table, f"exec-{n}") for n in range(3)]
    for lease in leases:
        await lease.release()
    survivor, dead = pids[0], pids[1:]
    await _terminate(admin, dead)
    await _wait_gone(admin, dead)
    # Whichever idle session it tries first, the only live one is the survivor.
    first = await journal.acquire("exec-a")
    assert await _holder_pid(admin, journal_table, "exec-a") == survivor
    # Only dead ones are left idle: each is closed quietly, then a new session serves.
    second = await journal.acquire("exec-b")
    fresh = await _holder_pid(admin, journal_table, "exec-b")
    assert fresh not in pids
    await first.append(Reconciled("a", happened=True))
    await second.append(Reconciled("b", happened=True))
    await first.release()
    await second.release()
    assert _items(await journal.read("exec-a")) == ["a"]
    assert _items(await journal.read("exec-b")) == ["b"]
    assert await _alive(admin, pids) == {survivor}


async def test_s40_a_journal_keeps_at_most_four_idle_sessions(
    postgres_dsn: str, journal_table: str, admin: Admin
) -> None:
    journal = PostgresJournal(postgres_dsn, table=journal_table)
    leases = [await journal.acquire(f"exec-{n}") for n in range(6)]
    pids = [await _holder_pid(admin, journal_table, f"exec-{n}") for n in range(6)]
    for lease in leases:
        await lease.release()
    assert len(await _settled_alive(admin, pids)) == 4
    await journal.aclose()
    await _wait_gone(admin, pids)


async def test_s40_aclose_closes_the_idle_sessions(
    postgres_dsn: str, journal_table: str, admin: Admin
) -> None:
    journal = PostgresJournal(postgres_dsn, table=journal_table)
    held = await journal.acquire("exec-1")
    released = await journal.acquire("exec-2")
    pids = [
        await _holder_pid(admin, journal_table, "exec-1"),
        await _holder_pid(admin, journal_table, "exec-2"),
    ]
    await released.release()
    assert await _alive(admin, pids) == set(pids)
    await journal.aclose()
    await _wait_gone(admin, pids)  # the idle one and the held lease's alike
    with pytest.raises(robota.StorageError, match="released"):
        await held.append(Reconciled("late", happened=True))


async def test_s10_a_refused_acquire_leaves_no_lock_on_its_session(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str, admin: Admin
) -> None:
    async with PostgresJournal(postgres_dsn, table=journal_table) as other:
        held = await other.acquire("exec-1")
        holder = await _holder_pid(admin, journal_table, "exec-1")
        for _ in range(3):
            with pytest.raises(robota.ExecutionLockedError):
                await journal.acquire("exec-1")
        assert await _lock_holders(admin, journal_table, "exec-1") == [holder]
        await held.release()
    async with await journal.acquire("exec-1") as lease:
        pid = await _holder_pid(admin, journal_table, "exec-1")
        assert await _advisory_locks_of(admin, pid) == 1
        await lease.append(Reconciled("x", happened=True))


async def test_s10_a_cancelled_release_closes_its_session_and_frees_the_lock(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str, admin: Admin
) -> None:
    lease = await journal.acquire("exec-1")
    pid = await _holder_pid(admin, journal_table, "exec-1")
    task = asyncio.create_task(lease.release())
    await asyncio.sleep(0)  # the unlock is in flight
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Whether the unlock ran is unknown, so the session was not kept: it ends, and its lock too.
    await _wait_gone(admin, [pid])
    assert await _lock_holders(admin, journal_table, "exec-1") == []
    async with PostgresJournal(postgres_dsn, table=journal_table) as other:
        assert await _acquire_within(other, "exec-1", limit_s=1.0) < AT_ONCE_S
    async with await journal.acquire("exec-1") as again:
        assert await _holder_pid(admin, journal_table, "exec-1") != pid
        await again.append(Reconciled("after", happened=True))


async def test_s10_a_cancelled_acquire_on_an_idle_session_leaks_neither_it_nor_the_lock(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str, admin: Admin
) -> None:
    async with await journal.acquire("exec-0"):
        pid = await _holder_pid(admin, journal_table, "exec-0")
    task = asyncio.create_task(journal.acquire("exec-1"))
    await asyncio.sleep(0)  # the lock is being taken on the idle session
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _wait_gone(admin, [pid])
    assert await _lock_holders(admin, journal_table, "exec-1") == []
    async with PostgresJournal(postgres_dsn, table=journal_table) as other:
        assert await _acquire_within(other, "exec-1", limit_s=1.0) < AT_ONCE_S
    async with await journal.acquire("exec-1") as lease:
        await lease.append(Reconciled("after", happened=True))
    assert _items(await journal.read("exec-1")) == ["after"]


# ------------------------------------------------------------------------------ schema


async def test_s40_schema_is_created_by_many_handles_at_once(
    postgres_dsn: str, journal_table: str
) -> None:
    handles = [PostgresJournal(postgres_dsn, table=journal_table) for _ in range(6)]
    try:
        reads = [handle.read("exec-1") for handle in handles[:3]]
        writes = [handle.acquire(f"exec-{n}") for n, handle in enumerate(handles[3:])]
        outcomes = await asyncio.gather(*reads, *writes)
        assert outcomes[:3] == [(), (), ()]
        for lease in outcomes[3:]:
            assert isinstance(lease, JournalLease)
            await lease.append(Reconciled("x", happened=True))
    finally:
        for handle in handles:
            await handle.aclose()


def test_s40_schema_is_created_by_two_processes_at_once(
    postgres_dsn: str, journal_table: str
) -> None:
    code = """
import asyncio, sys
from robota.host import PostgresJournal
from robota.core.execution._journal import Reconciled

async def main():
    sys.stdin.readline()  # both start together
    async with PostgresJournal(sys.argv[1], table=sys.argv[2]) as journal:
        async with await journal.acquire(sys.argv[3]) as lease:
            await lease.append(Reconciled(sys.argv[3], True))
    print("ok", flush=True)

asyncio.run(main())
"""
    children = [spawn(code, postgres_dsn, journal_table, f"proc-{n}") for n in range(2)]
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    results = [finish(child) for child in children]
    assert [(code, out.strip()) for code, out, _ in results] == [(0, "ok"), (0, "ok")], results


async def test_s40_table_name_is_one_quoted_identifier(postgres_dsn: str) -> None:
    name = 'Journal "quoted"; DROP TABLE x'
    async with PostgresJournal(postgres_dsn, table=name) as odd:
        async with await odd.acquire("exec-1") as lease:
            await lease.append(Reconciled("x", happened=True))
        assert len(await odd.read("exec-1")) == 1
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        await admin.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(name)))


async def test_s40_a_role_without_create_uses_an_existing_table(
    postgres_dsn: str, worker_dsn: str, journal_table: str
) -> None:
    assert PostgresJournal(worker_dsn, table=journal_table).table == journal_table
    async with PostgresJournal(worker_dsn, table=journal_table) as journal:
        with pytest.raises(robota.StorageError, match="permission denied") as info:
            await journal.acquire("exec-1")  # no table, and no right to make one
        assert isinstance(info.value.__cause__, psycopg.errors.InsufficientPrivilege)
    async with PostgresJournal(postgres_dsn, table=journal_table) as owner:
        await owner.read("exec-1")  # the owner makes the table
    async with PostgresJournal(worker_dsn, table=journal_table) as journal:
        with pytest.raises(robota.StorageError, match="permission denied"):
            await journal.read("exec-1")  # the table exists; reading it is not granted yet
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("GRANT SELECT, INSERT ON {} TO {}").format(
                sql.Identifier(journal_table),
                sql.Identifier(str(psycopg.conninfo.conninfo_to_dict(worker_dsn)["user"])),
            )
        )
    async with PostgresJournal(worker_dsn, table=journal_table) as journal:
        async with await journal.acquire("exec-1") as lease:
            await lease.append(Reconciled("x", happened=True))
        assert _items(await journal.read("exec-1")) == ["x"]


async def test_s40_a_damaged_record_reads_as_a_storage_error(
    journal: PostgresJournal, postgres_dsn: str, journal_table: str
) -> None:
    async with await journal.acquire("exec-1") as lease:
        await lease.append(Reconciled("x", happened=True))
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("INSERT INTO {} VALUES ('exec-1', 2, '{{\"v\": 1, \"kind\"')").format(
                sql.Identifier(journal_table)
            )
        )
    with pytest.raises(robota.StorageError, match="damaged"):
        await journal.read("exec-1")


@pytest.mark.parametrize("table", ["", "x" * 64, "é" * 32, "nul\x00name", "bad\ud800", 7])
def test_s40_a_table_name_that_is_no_identifier_is_refused(table: object) -> None:
    with pytest.raises(robota.ConfigurationError, match="table"):
        PostgresJournal("host=127.0.0.1", table=table)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ errors and lifecycle


async def test_s40_unreachable_server_is_a_storage_error_without_the_password() -> None:
    word = "hunter2-very-secret"  # the DSN's password
    port = _closed_port()
    for dsn in (
        f"host=127.0.0.1 port={port} dbname=jobs user=robota password={word}",
        f"postgresql://robota:{word}@127.0.0.1:{port}/jobs",
    ):
        journal = PostgresJournal(dsn)
        assert word not in repr(journal)
        for attempt in (journal.acquire("exec-1"), journal.read("exec-1")):
            with pytest.raises(robota.StorageError) as info:
                await attempt
            error = info.value
            assert not isinstance(error, psycopg.Error)
            assert isinstance(error.__cause__, psycopg.OperationalError)
            assert "cannot be reached" in str(error)
            assert word not in str(error)
            assert word not in repr(error)
            assert error.recoverable
        await journal.aclose()


def test_s40_a_dsn_that_does_not_parse_is_a_configuration_error_without_its_text() -> None:
    with pytest.raises(robota.ConfigurationError) as info:
        PostgresJournal("host=127.0.0.1 password secret-value")
    assert "secret-value" not in str(info.value)
    assert info.value.__cause__ is None
    with pytest.raises(robota.ConfigurationError, match="keepalives"):
        PostgresJournal("host=127.0.0.1 keepalives_idle=soon")
    with pytest.raises(robota.ConfigurationError, match="dsn must be a string"):
        PostgresJournal(b"host=127.0.0.1")  # type: ignore[arg-type]


async def test_s40_aclose_releases_held_leases_and_closes_the_journal(
    postgres_dsn: str, journal_table: str
) -> None:
    journal = PostgresJournal(postgres_dsn, table=journal_table)
    lease = await journal.acquire("exec-1")
    await lease.append(Reconciled("x", happened=True))
    await journal.aclose()
    await journal.aclose()  # idempotent
    assert "closed" in repr(journal)
    with pytest.raises(robota.StorageError, match="released"):
        await lease.append(Reconciled("y", happened=True))
    with pytest.raises(robota.StorageError, match="closed"):
        await journal.acquire("exec-1")
    with pytest.raises(robota.StorageError, match="closed"):
        await journal.read("exec-1")
    async with (
        PostgresJournal(postgres_dsn, table=journal_table) as other,
        await other.acquire("exec-1") as lease_again,
    ):
        assert lease_again.execution_id == "exec-1"  # free at once: aclose unlocked it


@pytest.mark.parametrize("execution_id", ["", "nul\x00id", "bad\ud800", None])
async def test_s40_an_execution_id_that_cannot_be_stored_is_refused(
    journal: PostgresJournal, execution_id: object
) -> None:
    with pytest.raises(robota.ConfigurationError):
        await journal.acquire(execution_id)  # type: ignore[arg-type]


def test_s40_import_robota_does_not_import_psycopg() -> None:
    code = """
import sys
import robota, robota.host, robota.testing
print(sorted(name for name in sys.modules if name.split(".")[0] == "psycopg"))
"""
    returncode, out, err = finish(spawn(code))
    assert (returncode, out.strip()) == (0, "[]"), err


def test_s40_missing_psycopg_names_the_extra_to_install() -> None:
    code = """
import sys
sys.modules["psycopg"] = None  # as if it were not installed
import robota
from robota.host import PostgresJournal
try:
    PostgresJournal("host=127.0.0.1")
except robota.ConfigurationError as error:
    print(error)
"""
    returncode, out, err = finish(spawn(code))
    assert returncode == 0, err
    assert install_command("postgres") in out
