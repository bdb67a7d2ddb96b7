"""``Session.run_stream``: a streamed turn under the session's lease, saved when it ends."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import robota
from robota.core import ConfigurationError
from robota.sessions import (
    Session,
    SessionBusyError,
    SessionHeader,
    SessionStateError,
    SQLiteSessionStore,
    TurnSaved,
    TurnStarted,
)
from robota.testing import InMemoryJournal, InMemorySessionStore, ScriptedProvider, ScriptedTurn


def _agent(provider: ScriptedProvider, **kwargs: Any) -> robota.Agent:
    return robota.Agent("m", provider=provider, **kwargs)


def _texts(messages: Any) -> list[tuple[str, str]]:
    return [(m.kind, m.content if isinstance(m.content, str) else "") for m in messages]


async def test_a_streamed_turn_yields_events_and_is_saved(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SQLiteSessionStore(path) as store:
        agent = _agent(ScriptedProvider(["streamed hi"]))
        async with await Session.open(agent, store, "chat") as session:
            stream = session.run_stream("hello")
            kinds = [event.kind async for event in stream]
            result = await stream.result()
    assert result.output == "streamed hi"
    assert "round_started" in kinds
    assert "message_committed" in kinds
    provider = ScriptedProvider(["later"])
    async with (
        SQLiteSessionStore(path) as other,  # another handle reads the saved turn
        await Session.open(_agent(provider), other, "chat") as restored,
    ):
        assert _texts(restored.history) == [("user", "hello"), ("assistant", "streamed hi")]
        assert restored.turns[0].status == "complete"
        await restored.run("more")
    assert _texts(provider.requests[0].messages)[:2] == [
        ("user", "hello"),
        ("assistant", "streamed hi"),
    ]


async def test_s23_an_abandoned_stream_aborts_the_turn_and_saves_it_interrupted() -> None:
    store = InMemorySessionStore()
    provider = ScriptedProvider([ScriptedTurn(text="never arrives", delay=60), "after"])
    async with await Session.open(_agent(provider), store, "left") as session:
        stream = session.run_stream("first")
        async for _ in stream:
            break  # mid-turn: the provider has not answered
        await stream.aclose()  # the consumer leaves: the run aborts (S23)
        # The lease was given up: the next turn runs at once, after the interrupted one.
        result = await session.run("second")
        assert result.output == "after"
        assert [t.status for t in session.turns] == ["interrupted", "complete"]
        assert _texts(session.turns[0].messages)[0] == ("user", "first")


async def test_a_streamed_turn_holds_the_lease_until_it_is_saved() -> None:
    store = InMemorySessionStore()
    seen: list[str] = []

    async def probe() -> str:
        """Try to take the session while the turn runs."""
        try:
            lease = await store.acquire("held")
        except SessionBusyError:
            seen.append("busy")
        else:
            await lease.release()
            seen.append("free")
        return "probed"

    provider = ScriptedProvider([[("probe", {})], "done"])
    async with await Session.open(_agent(provider, tools=[probe]), store, "held") as session:
        stream = session.run_stream("hello")
        kinds = [event.kind async for event in stream]
        assert (await stream.result()).output == "done"
    assert "tool_call_finished" in kinds
    assert seen == ["busy"]  # mid-stream, the turn's writer held the session
    lease = await store.acquire("held")  # and gave it up when the turn was saved
    await lease.release()


async def test_a_busy_session_fails_the_stream_when_it_starts() -> None:
    store = InMemorySessionStore()
    async with await Session.open(_agent(ScriptedProvider(["x"])), store, "busy") as session:
        lease = await store.acquire("busy")
        stream = session.run_stream("hello")
        with pytest.raises(SessionBusyError):
            async for _ in stream:
                pass
        await lease.release()
        assert session.turns == ()


async def test_a_streamed_turn_resolves_a_pending_turn_first_and_uses_the_sessions_ids() -> None:
    store = InMemorySessionStore()
    journal = InMemoryJournal()
    await store.create(SessionHeader("pend", time.time()))
    lease = await store.acquire("pend")
    await lease.append(TurnStarted(0, "pend/0", None, time.time()))  # a crash before the run
    agent = _agent(ScriptedProvider(["fresh"]), journal=journal)
    session = await Session.open(agent, store, "pend")  # busy: open() leaves the turn pending
    await lease.release()
    assert session.info.pending
    stream = session.run_stream("hello")
    result = await stream.result()  # result() alone starts the turn
    assert result.execution_id == "pend/1"
    saved = [e for e in (await store.load("pend")).entries if isinstance(e, TurnSaved)]
    assert [(e.turn, e.status) for e in saved] == [(0, "abandoned"), (1, "complete")]
    assert not session.info.pending
    await session.aclose()


async def test_misuse_is_refused_before_anything_runs() -> None:
    store = InMemorySessionStore()
    session = await Session.open(_agent(ScriptedProvider([])), store)
    with pytest.raises(ConfigurationError, match="execution id"):
        session.run_stream("hi", execution_id="mine")
    with pytest.raises(ConfigurationError, match="do not pass fresh_conversation"):
        session.run_stream("hi", fresh_conversation=True)
    with pytest.raises(ConfigurationError):
        session.run_stream(42)  # type: ignore[arg-type]
    await session.aclose()
    with pytest.raises(SessionStateError, match="closed"):
        session.run_stream("hi")


async def test_s22_a_streamed_turn_whose_prompt_a_hook_blocks_is_saved_abandoned(
    tmp_path: Path,
) -> None:
    import sys

    from robota.core import HookRunner
    from robota.host import CommandHookExecutor

    script = tmp_path / "block.py"
    script.write_text("import sys\nprint('not this', file=sys.stderr)\nsys.exit(2)\n")
    entry = [{"hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}]
    hooks = HookRunner({"UserPromptSubmit": entry}, {"command": CommandHookExecutor()})
    store = InMemorySessionStore()
    provider = ScriptedProvider(["never"])
    session = await Session.open(_agent(provider, hooks=hooks), store, "s")
    with pytest.raises(robota.HookBlockedError, match="not this"):
        await session.run_stream("hello").result()
    assert provider.requests == []
    assert session.history == ()
    assert session.turns == ()
    entries = (await store.load("s")).entries
    assert [e.status for e in entries if isinstance(e, TurnSaved)] == ["abandoned"]
