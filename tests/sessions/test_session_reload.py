"""A session reads only what was appended since its last read (issue 27, ``load_after``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import robota
from robota.sessions import (
    Session,
    SessionEntry,
    SessionHeader,
    SessionLease,
    SessionStore,
    SQLiteSessionStore,
    StoredSession,
)
from robota.testing import ScriptedProvider


class _Counting(SessionStore):
    """A SQLite store that records how many entries each read returned."""

    def __init__(self, inner: SQLiteSessionStore) -> None:
        self.inner = inner
        self.reads: list[tuple[str, int]] = []

    async def create(self, header: SessionHeader, entries: Sequence[SessionEntry] = ()) -> None:
        await self.inner.create(header, entries)

    async def load(self, session_id: str) -> StoredSession:
        stored = await self.inner.load(session_id)
        self.reads.append(("load", len(stored.entries)))
        return stored

    async def load_after(self, session_id: str, after: int) -> StoredSession:
        stored = await self.inner.load_after(session_id, after)
        self.reads.append(("load_after", len(stored.entries)))
        return stored

    async def list_sessions(self) -> tuple[SessionHeader, ...]:
        return await self.inner.list_sessions()

    async def acquire(self, session_id: str) -> SessionLease:
        return await self.inner.acquire(session_id)

    async def delete(self, session_id: str) -> None:
        await self.inner.delete(session_id)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _agent(*replies: str) -> robota.Agent:
    return robota.Agent("m", provider=ScriptedProvider(list(replies)))


async def test_a_turn_reads_only_the_entries_appended_since_the_last_read(tmp_path: Path) -> None:
    store = _Counting(SQLiteSessionStore(tmp_path / "s.db"))
    session = await Session.open(_agent("a", "b", "c"), store, "chat")
    for text in ("one", "two", "three"):
        await session.run(text)
    # Each turn's read under the lease finds nothing new: this handle wrote every entry.
    assert [n for kind, n in store.reads if kind == "load_after"] == [0, 0, 0]
    assert len(session.history) == 6
    await session.aclose()
    await store.aclose()


async def test_another_handles_turns_appear_at_the_next_turn_and_refresh(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    first_store, second_store = SQLiteSessionStore(path), SQLiteSessionStore(path)
    first = await Session.open(_agent("a1", "a2"), first_store, "chat")
    second = await Session.open(_agent("b1"), second_store, "chat")
    await first.run("from first")
    await second.refresh()
    assert [m.content for m in second.history] == ["from first", "a1"]
    await second.run("from second")
    await first.run("first again")
    assert [m.content for m in first.history] == [
        "from first",
        "a1",
        "from second",
        "b1",
        "first again",
        "a2",
    ]
    assert [t.number for t in first.turns] == [0, 1, 2]
    for session in (first, second):
        await session.aclose()
    await first_store.aclose()
    await second_store.aclose()


async def test_a_session_deleted_and_made_again_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    mine, theirs = SQLiteSessionStore(path), SQLiteSessionStore(path)
    session = await Session.open(_agent("a1", "a2"), mine, "chat")
    await session.run("old")
    await theirs.delete("chat")
    await theirs.create(SessionHeader("chat", 12345.0))
    await session.refresh()
    assert session.history == ()
    assert session.info.created_at == 12345.0
    await session.run("new")
    assert [m.content for m in session.history] == ["new", "a2"]
    await session.aclose()
    await mine.aclose()
    await theirs.aclose()


def test_a_refused_entry_leaves_the_state_it_was_folded_into_as_it_was() -> None:
    import pytest

    from robota.core import StorageError, Usage
    from robota.sessions import Compacted, TurnSaved
    from robota.sessions._state import SessionState

    turn = TurnSaved(0, "complete", (robota.UserMessage("q"),), Usage(1, 1, 2), 0.5, None, 2.0)
    state = SessionState(StoredSession(SessionHeader("s", 1.0), (turn,)))
    bad = Compacted(0, 5, 5, "x", "", "hook", "auto", Usage(), None, None, 3.0)  # 5 of 1 turns
    with pytest.raises(StorageError):
        state.advanced([turn, bad])
    assert (state.folded, len(state.active), state.usage, state.cost) == (1, 1, Usage(1, 1, 2), 0.5)
    later = state.advanced([TurnSaved(1, "complete", (), Usage(1, 0, 1), 0.25, None, 4.0)])
    assert (later.folded, len(later.active), later.usage, later.cost) == (
        2,
        2,
        Usage(2, 1, 3),
        0.75,
    )
    assert (state.folded, len(state.active)) == (1, 1)
