"""The session store conformance kit on the in-memory and SQLite stores (real files)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from robota.core import ConfigurationError
from robota.sessions import SessionHeader, SQLiteSessionStore
from robota.testing import (
    SESSION_STORE_CHECKS,
    InMemorySessionStore,
    run_session_store_conformance,
)


async def test_in_memory_store_conforms() -> None:
    store = InMemorySessionStore()
    report = await run_session_store_conformance(lambda: store)
    report.raise_for_failures()
    assert report.passed
    assert [r.check for r in report.results] == list(SESSION_STORE_CHECKS)


async def test_sqlite_store_conforms(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    report = await run_session_store_conformance(lambda: SQLiteSessionStore(path))
    report.raise_for_failures()
    assert report.store == "SQLiteSessionStore"


async def test_kit_reports_a_store_that_breaks_the_contract() -> None:
    """A store whose second writer is not refused fails ``second_writer_refused``."""

    store = InMemorySessionStore()
    original = store.acquire

    async def lax_acquire(session_id: str):  # type: ignore[no-untyped-def]
        store._held.pop(session_id, None)  # forget the holder: a broken lock
        return await original(session_id)

    store.acquire = lax_acquire  # type: ignore[method-assign]
    report = await run_session_store_conformance(lambda: store, checks=["second_writer_refused"])
    assert not report.passed
    assert "not refused" in report.failures[0].message
    with pytest.raises(AssertionError, match="second_writer_refused"):
        report.raise_for_failures()


async def test_kit_refuses_unknown_checks() -> None:
    with pytest.raises(ConfigurationError, match="choose among"):
        await run_session_store_conformance(InMemorySessionStore, checks=["nope"])  # type: ignore[list-item]


async def test_s07_sqlite_store_file_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SQLiteSessionStore(path) as store:
        await store.create(SessionHeader("s1", 0.0))
        await (await store.acquire("s1")).release()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(f"{path}.locks").st_mode) == 0o700


async def test_s07_sqlite_store_refuses_a_file_others_can_read(tmp_path: Path) -> None:
    from robota.host import InsecureModeError

    path = tmp_path / "sessions.db"
    path.write_bytes(b"")
    os.chmod(path, 0o644)
    store = SQLiteSessionStore(path)
    with pytest.raises(InsecureModeError, match="open the session store with repair=True"):
        await store.list_sessions()
    await store.aclose()
    async with SQLiteSessionStore(path, repair=True) as repaired:
        assert await repaired.list_sessions() == ()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


@pytest.mark.parametrize("bad", [":memory:", "", b"x.db"])
def test_sqlite_store_refuses_bad_paths(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="SQLiteSessionStore"):
        SQLiteSessionStore(bad)  # type: ignore[arg-type]


def test_sqlite_store_names_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist; create it"):
        SQLiteSessionStore(tmp_path / "nope" / "s.db")


async def test_closed_store_refuses_calls(tmp_path: Path) -> None:
    from robota.core import StorageError

    store = SQLiteSessionStore(tmp_path / "s.db")
    await store.aclose()
    await store.aclose()
    with pytest.raises(StorageError, match="closed"):
        await store.list_sessions()


async def test_kit_reports_infos_that_disagree_with_the_log() -> None:
    """A store whose summaries miss a turn fails ``session_infos``."""
    import dataclasses

    store = InMemorySessionStore()
    original = store.list_session_infos

    async def stale_infos():  # type: ignore[no-untyped-def]
        return tuple(dataclasses.replace(i, turns=i.turns + 1) for i in await original())

    store.list_session_infos = stale_infos  # type: ignore[method-assign]
    report = await run_session_store_conformance(lambda: store, checks=["session_infos"])
    assert not report.passed
    assert "the logs fold to" in report.failures[0].message


async def test_sqlite_listing_reads_the_summaries_not_the_logs(tmp_path: Path) -> None:
    """``list_sessions`` on 3 sessions whose logs are unreadable still lists them (issue 27)."""
    import sqlite3

    from robota.core import StorageError, Usage, UserMessage
    from robota.sessions import MetadataSet, TurnSaved, list_sessions

    path = tmp_path / "s.db"
    async with SQLiteSessionStore(path) as store:
        for n in range(3):
            turn = TurnSaved(0, "complete", (UserMessage("q"),), Usage(2, 3), 0.5, None, 10.0 + n)
            await store.create(SessionHeader(f"s{n}", float(n)), [turn])
            async with await store.acquire(f"s{n}") as lease:
                await lease.append(MetadataSet(f"chat {n}", None, (), 20.0 + n))
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE robota_session_entries SET entry = 'damaged'")
    raw.close()
    async with SQLiteSessionStore(path) as store:
        infos = await list_sessions(store)
        with pytest.raises(StorageError, match="damaged"):
            await store.load("s0")
    assert [(i.id, i.metadata.title, i.turns, i.cost, i.updated_at) for i in infos] == [
        ("s0", "chat 0", 1, 0.5, 20.0),
        ("s1", "chat 1", 1, 0.5, 21.0),
        ("s2", "chat 2", 1, 0.5, 22.0),
    ]
    assert infos[0].usage == Usage(2, 3)


async def test_sqlite_store_refuses_a_schema_1_file_naming_the_fix(tmp_path: Path) -> None:
    """A file from before session summaries (schema 1) is refused, not misread."""
    import sqlite3

    from robota.core import StorageError

    path = tmp_path / "s.db"
    async with SQLiteSessionStore(path) as store:
        await store.list_sessions()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE robota_sessions_meta SET value = '1' WHERE key = 'schema_version'")
    raw.close()
    async with SQLiteSessionStore(path) as store:
        with pytest.raises(StorageError, match="move the file aside") as caught:
            await store.list_sessions()
    assert caught.value.code == "session_store_version"
