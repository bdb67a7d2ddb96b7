"""Opening a session decodes its log on first use (issue 27, ``robota.sessions._lazy``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import robota
from robota.core import StorageError, Usage
from robota.sessions import (
    Rewound,
    Session,
    SessionHeader,
    SessionStateError,
    SQLiteSessionStore,
    TurnSaved,
    TurnStarted,
)
from robota.sessions._state import SessionState
from robota.testing import ScriptedProvider

USAGE = Usage(10, 4, 14, 3, False, 2)


def _turn(n: int) -> TurnSaved:
    call = robota.ToolCall(f"call_{n}", "look", '{"q": "caf\\u00e9"}')
    messages = (
        robota.UserMessage(f"question {n}"),
        robota.AssistantMessage("", tool_calls=(call,), usage=USAGE, model="m-1"),
        robota.ToolMessage("found", tool_call_id=call.id, tool_name="look"),
        robota.AssistantMessage(f"answer {n}", usage=USAGE, model="m-1"),
    )
    return TurnSaved(n, "complete", messages, USAGE, 0.25, None, 100.0 + n)


async def _store(tmp_path: Path, *entries: object) -> SQLiteSessionStore:
    store = SQLiteSessionStore(tmp_path / "s.db")
    await store.create(SessionHeader("chat", 1.0), [*entries])  # type: ignore[list-item]
    return store


def _damage(tmp_path: Path, seq: int, text: str) -> None:
    with sqlite3.connect(tmp_path / "s.db") as raw:
        raw.execute("UPDATE robota_session_entries SET entry = ? WHERE seq = ?", (text, seq))
    raw.close()


async def test_a_lazily_loaded_history_equals_an_eagerly_decoded_copy(tmp_path: Path) -> None:
    store = await _store(tmp_path, *(_turn(n) for n in range(5)), Rewound(4, 200.0))
    eager = SessionState(await store.load("chat")).history
    session = await Session.open(robota.Agent("m", provider=ScriptedProvider([])), store, "chat")
    history = session.history
    assert type(history) is not tuple  # nothing decoded yet
    assert len(history) == 16 == len(eager)
    assert history == eager
    assert eager == history
    assert not history != eager  # noqa: SIM202 -- __ne__ is the tuple's too
    assert tuple(history) == eager
    assert list(history) == list(eager)
    assert history[0] == eager[0]
    assert history[-1] == eager[-1]
    assert history[1:3] == eager[1:3]
    assert type(history[1:3]) is tuple
    assert list(reversed(history)) == list(reversed(eager))
    assert eager[5] in history
    assert history.index(eager[5]) == 5
    assert history.count(eager[5]) == 1
    assert hash(history) == hash(eager)
    assert history + () == eager  # noqa: RUF005 -- concatenation is what is tested
    assert () + history == eager  # noqa: RUF005
    assert repr(history) == repr(eager)
    assert history != list(eager)  # like a tuple: not equal to a list
    assert session.history == eager  # now decoded: the session's history is the tuple
    assert [t.number for t in session.turns] == [0, 1, 2, 3]
    await session.aclose()
    await store.aclose()


async def test_a_history_read_later_still_shows_the_session_as_opened(tmp_path: Path) -> None:
    store = await _store(tmp_path, _turn(0))
    agent = robota.Agent("m", provider=ScriptedProvider(["later"]))
    session = await Session.open(agent, store, "chat")
    opened = session.history
    await session.run("next")
    assert len(opened) == 4  # the log as opened, decoded only now
    assert len(session.history) == 6
    await session.aclose()
    await store.aclose()


async def test_a_damaged_entry_is_reported_with_its_named_error_on_first_use(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path, _turn(0), _turn(1))
    # A sound prefix, a damaged body: opening reads only prefixes; the first read reports it.
    _damage(tmp_path, 2, '[2,"turn_saved",1,"complete",null,null,null,1.0,"",[["u"]]]')
    provider = ScriptedProvider(["never"])
    session = await Session.open(robota.Agent("m", provider=provider), store, "chat")
    history = session.history
    for read in (lambda: len(history), lambda: history[0], lambda: session.turns):
        with pytest.raises(StorageError) as caught:
            read()
        assert caught.value.code == "session_entry_damaged"  # on every use, not only the first
    with pytest.raises(StorageError) as caught:
        await session.run("hello")
    assert caught.value.code == "session_entry_damaged"
    assert provider.requests == []
    await session.aclose()
    await store.aclose()


async def test_text_robota_did_not_write_is_still_reported_by_open(tmp_path: Path) -> None:
    store = await _store(tmp_path, _turn(0))
    _damage(tmp_path, 1, "damaged")
    with pytest.raises(StorageError) as caught:
        await Session.open(robota.Agent("m", provider=ScriptedProvider([])), store, "chat")
    assert caught.value.code == "session_entry_damaged"
    await store.aclose()


async def test_a_turn_on_a_lazily_loaded_session_sends_the_whole_history(tmp_path: Path) -> None:
    store = await _store(tmp_path, *(_turn(n) for n in range(3)))
    eager = SessionState(await store.load("chat")).history
    provider = ScriptedProvider(["reply"])
    session = await Session.open(robota.Agent("m", provider=provider), store, "chat")
    assert type(session.history) is not tuple
    await session.run("and now?")
    (request,) = provider.requests
    sent = tuple(request.messages)
    assert sent[:-1] == eager  # every stored message, decoded, then the new question
    assert sent[-1].content == "and now?"
    assert session.history[:-2] == eager
    await session.aclose()
    await store.aclose()


async def test_s40_a_saved_journaled_turn_leaves_nothing_pending_without_decoding(
    tmp_path: Path,
) -> None:
    # Each journaled turn is a TurnStarted then its TurnSaved: opening tells from the prefixes
    # that none is pending, so it decodes nothing (and needs no journal).
    started = [TurnStarted(n, f"chat/{n}", None, 100.0 + n) for n in range(2)]
    store = await _store(tmp_path, started[0], _turn(0), started[1], _turn(1))
    session = await Session.open(robota.Agent("m", provider=ScriptedProvider([])), store, "chat")
    assert type(session.history) is not tuple
    assert "(not decoded)" in repr(session)
    assert len(session.history) == 8
    assert not session.info.pending
    await session.aclose()
    # A TurnStarted whose turn was not saved: opening decodes to find it pending (S40), and
    # an agent without a journal cannot resume it — refused at once, as before.
    async with await store.acquire("chat") as lease:
        await lease.append(TurnStarted(2, "chat/2", None, 300.0))
    with pytest.raises(SessionStateError, match="interrupted mid-run"):
        await Session.open(robota.Agent("m", provider=ScriptedProvider([])), store, "chat")
    await store.aclose()
