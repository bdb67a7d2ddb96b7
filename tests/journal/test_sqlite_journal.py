"""SQLiteJournal (S40, S10) on a real file, with real processes holding and losing its leases."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import pathlib
import sqlite3
import stat
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

import special_files
from childproc import first_line, spawn
from robota.core import ConfigurationError, StorageError
from robota.core.execution._journal import (
    Checkpoint,
    EffectSettled,
    ExecutionLockedError,
    OutsideRequested,
    Reconciled,
)
from robota.host import InsecureModeError, SQLiteJournal

AT_ONCE = 0.5  # seconds: a refusal or a crash-released lock is answered well within this

HOLD_LEASE = """
import asyncio, sys
from robota.core.execution._journal import EffectSettled
from robota.host import SQLiteJournal

async def main():
    journal = SQLiteJournal(sys.argv[1])
    lease = await journal.acquire(sys.argv[2])
    for n in range(int(sys.argv[3])):
        await lease.append(EffectSettled(f"call#{n}", "ok", f"result {n}"))
    print("held", flush=True)
    await asyncio.to_thread(sys.stdin.read)  # hold the lease until stdin closes or a kill

asyncio.run(main())
"""


@pytest.fixture
def path(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "journal.db"


@pytest.fixture
def holders() -> Iterator[list[subprocess.Popen[str]]]:
    """Children appended here are killed (if still running) and reaped after the test."""
    children: list[subprocess.Popen[str]] = []
    yield children
    for child in children:
        if child.poll() is None:
            child.kill()
        if child.stdout is not None and not child.stdout.closed:
            child.communicate(timeout=30)


async def hold_in_child(
    holders: list[subprocess.Popen[str]], path: pathlib.Path, execution_id: str, appends: int = 0
) -> subprocess.Popen[str]:
    """A child process that holds ``execution_id``'s lease (after ``appends`` appends)."""
    child = spawn(HOLD_LEASE, str(path), execution_id, str(appends))
    holders.append(child)
    assert await asyncio.to_thread(first_line, child) == "held"
    return child


def records(n: int) -> list[EffectSettled]:
    return [EffectSettled(f"call#{i}", "ok", f"result {i}") for i in range(n)]


def wal_exists(path: pathlib.Path) -> bool:
    return os.path.exists(f"{path}-wal")


def relative(path: pathlib.Path) -> str:
    return os.path.relpath(path)


def listing(directory: pathlib.Path) -> list[str]:
    return sorted(os.listdir(directory))


def mode(path: pathlib.Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def garble(path: pathlib.Path) -> None:
    # Owner-only, as the journal's own file would be: a wider one is refused before it is read.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as stream:
        stream.write(b"this is not a database file at all" * 100)


@pytest.fixture
def umask_zero() -> Iterator[None]:
    """Run with umask 0 so a mode that is right must come from creation, not from the umask."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


# ------------------------------------------------------------------------ durability


async def test_s40_the_database_is_in_wal_mode_with_synchronous_full(path: pathlib.Path) -> None:
    async with SQLiteJournal(path) as journal:
        await journal.read("anything")  # first use opens the database

        def pragmas() -> tuple[object, ...]:
            connection = journal._connection
            assert connection is not None
            return tuple(
                connection.execute(f"PRAGMA {name}").fetchone()[0]
                for name in ("journal_mode", "synchronous", "fullfsync")
            )

        # The journal's own connection, on its own worker thread: synchronous is per connection.
        assert await journal._run(pragmas) == ("wal", 2, 1)  # 2 == FULL
    outside = sqlite3.connect(path)
    try:
        assert outside.execute("PRAGMA journal_mode").fetchone() == ("wal",)  # persistent
        meta = outside.execute("SELECT key, value FROM robota_journal_meta").fetchall()
        assert meta == [("schema_version", "1")]
        columns = [row[1] for row in outside.execute("PRAGMA table_info(robota_journal)")]
        assert columns == ["execution_id", "seq", "record"]
    finally:
        outside.close()


async def test_s40_append_is_durable_before_return(path: pathlib.Path) -> None:
    async with SQLiteJournal(path) as journal:
        lease = await journal.acquire("run-1")
        for n, record in enumerate(records(3), start=1):
            await lease.append(record)
            # Committed when append returned: another connection sees it at once.
            outside = sqlite3.connect(path)
            try:
                count = outside.execute(
                    "SELECT COUNT(*) FROM robota_journal WHERE execution_id = 'run-1'"
                ).fetchone()
            finally:
                outside.close()
            assert count == (n,)


async def test_s40_an_append_that_returned_survives_the_writer_being_killed(
    path: pathlib.Path, holders: list[subprocess.Popen[str]]
) -> None:
    child = await hold_in_child(holders, path, "run-1", appends=5)
    child.kill()  # SIGKILL: no close, no checkpoint, no release
    await asyncio.to_thread(child.wait)
    assert wal_exists(path)  # the records live in the WAL the killed writer left
    async with SQLiteJournal(path) as journal:
        assert await journal.read("run-1") == tuple(records(5))


async def test_s40_records_survive_closing_and_reopening(path: pathlib.Path) -> None:
    wanted = (
        OutsideRequested("req-1", "mc#0", "approval", {"ü": [1, None, {"deep": True}]}),
        Reconciled("item-1", happened=False),
        Checkpoint((), "complete", "end_turn"),
    )
    async with SQLiteJournal(path) as journal, await journal.acquire("run-1") as lease:
        for record in wanted:
            await lease.append(record)
    async with SQLiteJournal(str(path)) as reopened:
        assert await reopened.read("run-1") == wanted
        assert await reopened.read("run-2") == ()
        async with await reopened.acquire("run-1") as lease:
            await lease.append(Reconciled("item-2", happened=True, result="ok"))
        assert await reopened.read("run-1") == (*wanted, Reconciled("item-2", True, "ok"))


# ------------------------------------------------------------------------ one writer (S10)


async def test_s10_one_writer_per_execution_across_processes(
    path: pathlib.Path, holders: list[subprocess.Popen[str]]
) -> None:
    child = await hold_in_child(holders, path, "run-1", appends=1)
    async with SQLiteJournal(path) as journal:
        started = time.monotonic()
        with pytest.raises(ExecutionLockedError) as caught:
            await journal.acquire("run-1")
        assert time.monotonic() - started < AT_ONCE  # refused at once, never after a wait
        assert caught.value.execution_id == "run-1"
        assert "another writer" in str(caught.value)
        # Reading needs no lease, and other executions are free.
        assert await journal.read("run-1") == tuple(records(1))
        async with await journal.acquire("run-2"):
            pass
        # The holder exits normally without releasing: its process's end frees the lease.
        await asyncio.to_thread(child.communicate, timeout=30)  # closes its stdin, reaps it
        assert child.returncode == 0
        async with await journal.acquire("run-1") as lease:
            await lease.append(EffectSettled("call#1", "ok", "result 1"))
        assert await journal.read("run-1") == tuple(records(2))


async def test_s10_a_killed_holder_releases_its_lease_at_once(
    path: pathlib.Path, holders: list[subprocess.Popen[str]]
) -> None:
    child = await hold_in_child(holders, path, "run-1")
    async with SQLiteJournal(path) as journal:
        with pytest.raises(ExecutionLockedError):
            await journal.acquire("run-1")
        child.kill()
        await asyncio.to_thread(child.wait)
        started = time.monotonic()
        lease = await journal.acquire("run-1")  # no timeout to wait out: the kernel freed it
        assert time.monotonic() - started < AT_ONCE
        await lease.release()


async def test_s10_one_writer_per_execution_across_handles_in_one_process(
    tmp_path: pathlib.Path,
) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)  # S07: the journal's directory is owner-only
    (tmp_path / "link").symlink_to(real)
    first = SQLiteJournal(real / "journal.db")
    # The same file by another spelling (a symlinked directory, a relative path) is one store.
    second = SQLiteJournal(relative(tmp_path / "link" / "journal.db"))
    async with first, second:
        assert first.path == second.path
        lease = await first.acquire("run-1")
        with pytest.raises(ExecutionLockedError):
            await second.acquire("run-1")
        with pytest.raises(ExecutionLockedError, match="another lease of this journal"):
            await first.acquire("run-1")
        await lease.release()
        async with await second.acquire("run-1"):
            with pytest.raises(ExecutionLockedError):
                await first.acquire("run-1")


async def test_s10_lock_files_are_owner_only_named_by_digest_and_never_removed(
    path: pathlib.Path,
) -> None:
    execution_id = "run/../ü 1"
    async with SQLiteJournal(path) as journal, await journal.acquire(execution_id):
        pass
    locks = pathlib.Path(f"{path}.locks")
    digest = hashlib.sha256(execution_id.encode()).hexdigest()
    assert listing(locks) == [digest]  # the lock file is kept after release (S10)
    assert mode(locks) == 0o700
    assert mode(locks / digest) == 0o600
    assert mode(path) == 0o600  # the journal holds conversations


# ------------------------------------------------------------------------ owner-only (S07)

SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
WIDE_MODES = (0o644, 0o640, 0o604, 0o660, 0o606, 0o666)


async def make_journal(path: pathlib.Path) -> None:
    """A journal with one record in it, closed again."""
    async with SQLiteJournal(path) as journal, await journal.acquire("run-1") as lease:
        await lease.append(EffectSettled("call#0", "ok", "TOP-SECRET conversation"))


@pytest.mark.usefixtures("umask_zero")
async def test_s07_the_database_and_its_side_files_are_created_0600_from_the_start(
    path: pathlib.Path,
) -> None:
    # S07: created with the final mode, never wide and tightened. Under umask 0 a mode that is
    # right comes from creation; SQLite gives its side files the database's mode.
    async with SQLiteJournal(path) as journal, await journal.acquire("run-1") as lease:
        await lease.append(EffectSettled("call#0", "ok", "result"))
        assert mode(path) == 0o600
        assert wal_exists(path)
        for suffix in ("-wal", "-shm"):
            assert mode(pathlib.Path(f"{path}{suffix}")) == 0o600
        assert mode(pathlib.Path(f"{path}.locks")) == 0o700


@pytest.mark.parametrize("wide", WIDE_MODES)
async def test_s07_an_existing_database_readable_by_others_is_refused(
    path: pathlib.Path, wide: int
) -> None:
    await make_journal(path)
    os.chmod(path, wide)
    async with SQLiteJournal(path) as journal:
        with pytest.raises(InsecureModeError, match=f"{wide:#o}") as caught:
            await journal.read("run-1")
        assert caught.value.mode == wide
        assert "TOP-SECRET" not in str(caught.value)
        with pytest.raises(StorageError):
            await journal.acquire("run-1")
    assert mode(path) == wide  # refused, never tightened behind the caller's back


async def test_s07_a_database_another_program_created_with_the_umask_is_refused(
    path: pathlib.Path,
) -> None:
    # The reported case: a database SQLite itself created (0644 under the usual umask 022) was
    # adopted as it was, so every account could read the conversations in it.
    previous = os.umask(0o022)
    try:
        outside = sqlite3.connect(path)
        outside.execute("CREATE TABLE t (x)")
        outside.close()
    finally:
        os.umask(previous)
    assert mode(path) == 0o644
    async with SQLiteJournal(path) as journal:
        with pytest.raises(InsecureModeError, match="repair=True"):
            await journal.read("run-1")


@pytest.mark.parametrize("suffix", SIDE_SUFFIXES)
async def test_s07_an_existing_side_file_readable_by_others_is_refused(
    path: pathlib.Path, suffix: str
) -> None:
    # A -wal or -journal left beside the database is read into it; a -shm is mapped. One another
    # account can read or write is refused like the database itself.
    await make_journal(path)
    side = pathlib.Path(f"{path}{suffix}")
    os.close(os.open(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.chmod(side, 0o644)
    async with SQLiteJournal(path) as journal:
        with pytest.raises(InsecureModeError, match=suffix):
            await journal.read("run-1")
    assert mode(side) == 0o644


async def test_s07_a_lock_directory_open_to_others_is_refused(path: pathlib.Path) -> None:
    await make_journal(path)
    locks = pathlib.Path(f"{path}.locks")
    os.chmod(locks, 0o777)  # noqa: S103 - the wide mode under test
    async with SQLiteJournal(path) as journal:
        assert len(await journal.read("run-1")) == 1  # reading takes no lock
        with pytest.raises(InsecureModeError, match="0o777"):
            await journal.acquire("run-1")
    assert mode(locks) == 0o777


async def test_s07_repair_tightens_what_is_wider_and_the_journal_then_works(
    path: pathlib.Path,
) -> None:
    await make_journal(path)
    locks = pathlib.Path(f"{path}.locks")
    side = pathlib.Path(f"{path}-journal")
    os.close(os.open(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for entry, wide in ((path, 0o644), (side, 0o666), (locks, 0o755)):
        os.chmod(entry, wide)
    async with SQLiteJournal(path, repair=True) as journal:
        assert len(await journal.read("run-1")) == 1
        async with await journal.acquire("run-1") as lease:
            await lease.append(EffectSettled("call#1", "ok", "result"))
    assert mode(path) == 0o600
    assert mode(locks) == 0o700
    assert mode(side) == 0o600


@pytest.mark.parametrize("repair", [False, True])
async def test_s07_a_database_owned_by_another_account_is_refused_even_with_repair(
    path: pathlib.Path, repair: bool
) -> None:
    # Needs root to give a file away; the test environment runs as root.
    await make_journal(path)
    os.chown(path, os.geteuid() + 4242, -1)
    async with SQLiteJournal(path, repair=repair) as journal:
        with pytest.raises(InsecureModeError, match="another account") as caught:
            await journal.read("run-1")
        assert caught.value.uid == os.geteuid() + 4242
    assert os.stat(path).st_uid == os.geteuid() + 4242


# The database's directory (S07): SQLite opens the database and creates its side files by name,
# later than the journal checks them, so only a directory no other account can write keeps those
# names ours between the check and the open — and keeps a -wal or -shm from being planted there.

DIRECTORY_MODES = (0o777, 0o757, 0o775, 0o770, 0o730, 0o703)
# Others may list a journal's directory (an ordinary project folder): its files are 0600.
LISTABLE_MODES = (0o755, 0o711, 0o750, 0o700)


def state_directory(tmp_path: pathlib.Path, directory_mode: int) -> pathlib.Path:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    os.chmod(directory, directory_mode)
    return directory


@pytest.mark.parametrize("directory_mode", DIRECTORY_MODES, ids=oct)
async def test_s07_a_database_in_a_directory_other_accounts_can_reach_is_refused(
    tmp_path: pathlib.Path, directory_mode: int
) -> None:
    directory = state_directory(tmp_path, directory_mode)
    async with SQLiteJournal(directory / "j.db") as journal:
        with pytest.raises(InsecureModeError, match=f"{directory_mode:#o}") as caught:
            await journal.read("run-1")
        assert caught.value.mode == directory_mode
        assert caught.value.path == str(directory)
        with pytest.raises(InsecureModeError):
            await journal.acquire("run-1")
    assert listing(directory) == []  # refused before anything was created in it
    assert mode(directory) == directory_mode  # never tightened behind the caller's back


@pytest.mark.parametrize("directory_mode", LISTABLE_MODES, ids=oct)
async def test_s07_a_database_in_a_directory_others_may_only_list_works(
    tmp_path: pathlib.Path, directory_mode: int
) -> None:
    directory = state_directory(tmp_path, directory_mode)
    async with SQLiteJournal(directory / "j.db") as journal:
        assert await journal.read("run-1") == ()
    assert mode(directory) == directory_mode  # left as the caller made it
    assert mode(directory / "j.db") == 0o600


async def test_s07_an_existing_journal_whose_directory_was_opened_up_is_refused(
    tmp_path: pathlib.Path,
) -> None:
    directory = state_directory(tmp_path, 0o700)
    await make_journal(directory / "j.db")
    os.chmod(directory, 0o777)  # noqa: S103 - the wide mode under test
    async with SQLiteJournal(directory / "j.db") as journal:
        with pytest.raises(InsecureModeError, match="repair=True"):
            await journal.read("run-1")


async def test_s07_repair_tightens_the_databases_directory_and_the_journal_then_works(
    tmp_path: pathlib.Path,
) -> None:
    directory = state_directory(tmp_path, 0o777)
    async with SQLiteJournal(directory / "j.db", repair=True) as journal:
        async with await journal.acquire("run-1") as lease:
            await lease.append(EffectSettled("call#1", "ok", "result"))
        assert len(await journal.read("run-1")) == 1
    assert mode(directory) == 0o755  # the write bits others had are gone; listing stays
    async with SQLiteJournal(directory / "j.db") as journal:  # owner-only now: no repair needed
        assert len(await journal.read("run-1")) == 1


@pytest.mark.parametrize("repair", [False, True])
@pytest.mark.parametrize("directory_mode", [0o700, 0o777], ids=oct)
async def test_s07_a_directory_owned_by_another_account_is_refused_even_with_repair(
    tmp_path: pathlib.Path, repair: bool, directory_mode: int
) -> None:
    # Needs root to give a directory away; the test environment runs as root.
    directory = state_directory(tmp_path, directory_mode)
    os.chown(directory, os.geteuid() + 4242, -1)
    async with SQLiteJournal(directory / "j.db", repair=repair) as journal:
        with pytest.raises(InsecureModeError, match="another account") as caught:
            await journal.read("run-1")
        assert caught.value.uid == os.geteuid() + 4242
    assert mode(directory) == directory_mode
    assert listing(directory) == []


@pytest.mark.parametrize("directory_mode", [0o1777, 0o1770, 0o1733], ids=oct)
async def test_s07_a_shared_sticky_directory_is_refused_even_with_repair(
    tmp_path: pathlib.Path, directory_mode: int
) -> None:
    # Like /tmp: other accounts keep their own files there by design. Tightening it would take
    # it from them (as root, /tmp itself), and what they left in it stays; it is refused.
    directory = state_directory(tmp_path, directory_mode)
    async with SQLiteJournal(directory / "j.db", repair=True) as journal:
        with pytest.raises(InsecureModeError, match="shared") as caught:
            await journal.read("run-1")
        assert caught.value.mode == directory_mode
    assert mode(directory) == directory_mode
    assert listing(directory) == []


async def test_s07_a_journal_directly_in_the_system_temporary_directory_is_refused() -> None:
    name = f"/tmp/robota-journal-test-{os.getpid()}-{time.monotonic_ns()}.db"
    try:
        async with SQLiteJournal(name) as journal:
            with pytest.raises(InsecureModeError):
                await journal.read("run-1")
        assert os.path.basename(name) not in listing(pathlib.Path("/tmp"))
    finally:
        for leftover in (name, f"{name}-wal", f"{name}-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(f"{name}.locks")


@pytest.mark.parametrize("kind", ["fifo", "socket"])  # a directory: see the ConfigurationError
async def test_s07_a_special_file_at_the_database_path_is_refused_without_hanging(
    path: pathlib.Path, kind: str
) -> None:
    # A FIFO at the database's path made SQLite's first read wait for ever.
    special_files.plant(path, kind)
    journal = SQLiteJournal(path)

    def first_use() -> object:
        return asyncio.run(journal.read("run-1"))

    try:
        with pytest.raises(StorageError, match="not a regular file"):
            await asyncio.to_thread(
                special_files.finishes, first_use, fifos=special_files.planted_fifos(path, kind)
            )
    finally:
        await journal.aclose()


async def test_s40_aclose_releases_the_leases_it_holds_and_refuses_later_calls(
    path: pathlib.Path,
) -> None:
    journal = SQLiteJournal(path)
    lease = await journal.acquire("run-1")
    await lease.append(EffectSettled("call#0", "ok", "result 0"))
    await journal.aclose()
    await journal.aclose()  # idempotent
    assert "closed" in repr(journal)
    with pytest.raises(StorageError, match="closed"):
        await lease.append(EffectSettled("call#1", "ok", "result 1"))
    await lease.release()  # nothing left to give up; no error
    with pytest.raises(StorageError, match="closed"):
        await journal.acquire("run-2")
    with pytest.raises(StorageError, match="closed"):
        await journal.read("run-1")
    # The closed handle's lease is gone: another handle takes it.
    async with SQLiteJournal(path) as other, await other.acquire("run-1"):
        assert await other.read("run-1") == tuple(records(1))


async def test_s40_a_cancelled_acquire_gives_its_lock_back(path: pathlib.Path) -> None:
    async with SQLiteJournal(path) as journal:
        await journal.read("warm-up")
        gate = threading.Event()
        blocker = journal._executor.submit(gate.wait)  # the worker is busy: acquire queues
        task = asyncio.create_task(journal.acquire("run-1"))
        await asyncio.sleep(0)  # one loop step: the task submits its job and awaits it
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gate.set()
        await asyncio.wrap_future(blocker)
        # The abandoned job took the lock after its caller left; it was handed back.
        async with await journal.acquire("run-1"):
            pass


async def test_s40_sqlite_work_runs_on_one_worker_thread_off_the_loop(path: pathlib.Path) -> None:
    async with SQLiteJournal(path) as journal:
        seen = {await journal._run(threading.get_ident) for _ in range(5)}
        async with await journal.acquire("run-1") as lease:
            await lease.append(EffectSettled("call#0", "ok", "result 0"))
        seen.add(await journal._run(threading.get_ident))
    assert len(seen) == 1
    assert threading.get_ident() not in seen


# ------------------------------------------------------------------------ damage and misuse


async def test_s40_a_damaged_record_reads_as_storage_error(path: pathlib.Path) -> None:
    async with SQLiteJournal(path) as journal, await journal.acquire("run-1") as lease:
        await lease.append(EffectSettled("call#0", "ok", "result 0"))
        await lease.append(EffectSettled("call#1", "ok", "result 1"))
    outside = sqlite3.connect(path)
    with outside:
        outside.execute('UPDATE robota_journal SET record = \'{"v": 1, "kind"\' WHERE seq = 2')
    outside.close()
    async with SQLiteJournal(path) as journal:
        with pytest.raises(StorageError, match="record 2 of execution 'run-1'") as caught:
            await journal.read("run-1")
        assert isinstance(caught.value.__cause__, StorageError)  # the codec's, with its cause
        assert await journal.read("run-2") == ()


@pytest.mark.parametrize(
    ("damage", "fragment"),
    [
        ("UPDATE robota_journal SET record = X'00ff' WHERE seq = 1", "stored as bytes, not text"),
        (
            "UPDATE robota_journal SET record = replace(record, '\"v\":1', '\"v\":99')",
            "format version 99",
        ),
        (
            "DELETE FROM robota_journal WHERE seq = 1",
            "record 1 of execution 'run-1' in .* is missing",
        ),
    ],
)
async def test_s40_a_tampered_log_is_refused_rather_than_guessed(
    path: pathlib.Path, damage: str, fragment: str
) -> None:
    async with SQLiteJournal(path) as journal, await journal.acquire("run-1") as lease:
        await lease.append(EffectSettled("call#0", "ok", "result 0"))
        await lease.append(EffectSettled("call#1", "ok", "result 1"))
    outside = sqlite3.connect(path)
    with outside:
        outside.execute(damage)
    outside.close()
    async with SQLiteJournal(path) as journal:
        with pytest.raises(StorageError, match=fragment):
            await journal.read("run-1")


async def test_s40_an_unreadable_database_is_a_storage_error_with_its_cause(
    path: pathlib.Path,
) -> None:
    garble(path)
    async with SQLiteJournal(path) as journal:
        with pytest.raises(StorageError, match="could not open the SQLite journal") as caught:
            await journal.read("run-1")
        assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)
        with pytest.raises(StorageError):
            await journal.acquire("run-1")  # a journal that cannot be used refuses the lease


async def test_s40_a_newer_schema_is_refused(path: pathlib.Path) -> None:
    async with SQLiteJournal(path) as journal:
        await journal.read("run-1")
    outside = sqlite3.connect(path)
    with outside:
        outside.execute("UPDATE robota_journal_meta SET value = '2' WHERE key = 'schema_version'")
    outside.close()
    async with SQLiteJournal(path) as journal:
        with pytest.raises(StorageError, match="schema version '2'") as caught:
            await journal.read("run-1")
        assert caught.value.code == "journal_version"


async def test_s40_a_record_that_is_not_json_stores_nothing(path: pathlib.Path) -> None:
    async with SQLiteJournal(path) as journal, await journal.acquire("run-1") as lease:
        with pytest.raises(StorageError, match="not JSON"):
            await lease.append(OutsideRequested("req-1", "mc#0", "approval", object()))
        assert await journal.read("run-1") == ()
        # A lone surrogate (text decoded with surrogateescape) is kept, as a JSON escape.
        await lease.append(EffectSettled("call#0", "ok", "lone \ud800 surrogate"))
        assert await journal.read("run-1") == (
            EffectSettled("call#0", "ok", "lone \ud800 surrogate"),
        )


def test_s40_a_missing_parent_directory_is_a_configuration_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist; create it"):
        SQLiteJournal(tmp_path / "missing" / "journal.db")
    with pytest.raises(ConfigurationError, match="names a directory"):
        SQLiteJournal(tmp_path)


@pytest.mark.parametrize("bad", [":memory:", ""])
def test_s40_an_in_memory_or_empty_path_is_refused(bad: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        SQLiteJournal(bad)
    if bad == ":memory:":
        assert "robota.testing.InMemoryJournal" in str(caught.value)


def test_s40_a_path_that_is_not_text_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"str or os\.PathLike"):
        SQLiteJournal(b"journal.db")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"str or os\.PathLike"):
        SQLiteJournal(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "lone \ud800", 7])
async def test_s40_an_execution_id_must_be_non_empty_text(path: pathlib.Path, bad: object) -> None:
    async with SQLiteJournal(path) as journal:
        with pytest.raises(ConfigurationError):
            await journal.acquire(bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError):
            await journal.read(bad)  # type: ignore[arg-type]


def test_sqlite_journal_is_exported_from_robota_host() -> None:
    import robota.host
    import robota.host.journal

    assert robota.host.SQLiteJournal is robota.host.journal.SQLiteJournal is SQLiteJournal
    assert "SQLiteJournal" in robota.host.__all__
