"""Sessions in one process: persistence, the live system prompt, fork, rewind, hooks, errors."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robota
from robota.core import ConfigurationError, HookRunner, Message, SystemMessage, Usage
from robota.host import CommandHookExecutor
from robota.sessions import (
    PostgresSessionStore,
    Session,
    SessionBusyError,
    SessionNotFoundError,
    SessionStateError,
    SessionStore,
    SQLiteSessionStore,
    TurnSaved,
    list_sessions,
)
from robota.testing import InMemorySessionStore, ScriptedProvider, ScriptedTurn
from sessions.postgres_tables import drop_postgres_tables


def _agent(provider: ScriptedProvider, **kwargs: Any) -> robota.Agent:
    return robota.Agent("m", provider=provider, **kwargs)


def _texts(messages: Any) -> list[tuple[str, str]]:
    return [(m.kind, m.content if isinstance(m.content, str) else "") for m in messages]


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.service)])
async def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        shared = InMemorySessionStore()
        yield lambda: shared
    elif request.param == "sqlite":
        yield lambda: SQLiteSessionStore(tmp_path / "sessions.db")
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        prefix = f"s_{uuid.uuid4().hex[:12]}"  # tables of this test's own
        handles: list[PostgresSessionStore] = []

        def make() -> PostgresSessionStore:
            handles.append(PostgresSessionStore(dsn, prefix=prefix))
            return handles[-1]

        yield make
        for handle in handles:  # each holds server connections until closed
            await handle.aclose()
        drop_postgres_tables(dsn, prefix)


async def test_a_session_outlives_its_agent_and_store_handle(store_factory: Any) -> None:
    store = store_factory()
    async with await Session.open(_agent(ScriptedProvider(["hi", "again"])), store) as session:
        first = await session.run("hello")
        assert first.output == "hi"
        session_id = session.id
    provider = ScriptedProvider(["third"])
    other = store_factory()
    async with await Session.open(_agent(provider), other, session_id) as restored:
        assert _texts(restored.history) == [("user", "hello"), ("assistant", "hi")]
        await restored.run("more")
        sent = provider.requests[0].messages
        assert _texts(sent) == [("user", "hello"), ("assistant", "hi"), ("user", "more")]
        assert [t.position for t in restored.turns] == [0, 1]


async def test_s35_a_restored_session_carries_the_live_system_prompt(store_factory: Any) -> None:
    store = store_factory()
    agent = _agent(ScriptedProvider(["a"]), system_prompt="old prompt")
    async with await Session.open(agent, store, "chat") as session:
        await session.run("q1")
    provider = ScriptedProvider(["b"])
    async with await Session.open(_agent(provider, system_prompt="new prompt"), store, "chat") as s:
        assert not any(isinstance(m, SystemMessage) for m in s.history)
        await s.run("q2")
    head = provider.requests[0].messages[0]
    assert isinstance(head, SystemMessage)
    assert head.content == "new prompt"
    assert sum(isinstance(m, SystemMessage) for m in provider.requests[0].messages) == 1


async def test_rewind_then_continue_equals_a_fresh_conversation_of_the_kept_turns() -> None:
    store = InMemorySessionStore()
    provider = ScriptedProvider(["r1", "r2", "r3", "r2b"])
    session = await Session.open(_agent(provider), store)
    for text in ("one", "two", "three"):
        await session.run(text)
    await session.rewind(to=1)
    assert _texts(session.history) == [("user", "one"), ("assistant", "r1")]
    await session.run("two-b")
    rewound_request = provider.requests[-1].messages

    fresh_provider = ScriptedProvider(["r1", "r2b"])
    fresh = await Session.open(_agent(fresh_provider), InMemorySessionStore())
    await fresh.run("one")
    await fresh.run("two-b")
    assert _texts(rewound_request) == _texts(fresh_provider.requests[-1].messages)
    # The dropped turns are kept in the store's record, and new turns get fresh numbers.
    stored = await store.load(session.id)
    assert sum(e.kind == "turn_saved" for e in stored.entries) == 4
    assert [t.number for t in session.turns] == [0, 3]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.integers(0, 4), data=st.data())
async def test_fork_never_changes_its_parent(turns: int, data: st.DataObject) -> None:
    store = InMemorySessionStore()
    provider = ScriptedProvider([f"r{i}" for i in range(turns)] + ["f1", "f2"])
    parent = await Session.open(_agent(provider), store, title="t", tags=["x"])
    for index in range(turns):
        await parent.run(f"q{index}")
    before = await store.load(parent.id)
    at = data.draw(st.integers(0, turns))
    child = await parent.fork(at=at)
    await child.run("in the fork")
    await child.rewind(to=0)
    await child.set_metadata(title="other")
    assert await store.load(parent.id) == before
    assert child.info.parent_id == parent.id
    assert child.info.fork_at == at
    await parent.refresh()
    assert len(parent.turns) == turns
    await child.aclose()
    await parent.aclose()


async def test_fork_copies_the_kept_turns_and_metadata() -> None:
    store = InMemorySessionStore()
    session = await Session.open(_agent(ScriptedProvider(["a", "b", "c"])), store, user_id="u1")
    await session.run("one")
    await session.run("two")
    child = await session.fork(at=1, session_id="child")
    assert child.id == "child"
    assert child.metadata.user_id == "u1"
    assert _texts(child.history) == [("user", "one"), ("assistant", "a")]
    with pytest.raises(ConfigurationError, match="pass an integer from 0 to 2"):
        await session.fork(at=3)


async def test_metadata_usage_and_cost_totals(store_factory: Any) -> None:
    usage = Usage(10, 5, 15)
    provider = ScriptedProvider([ScriptedTurn(text="a", usage=usage)] * 2)
    store = store_factory()
    session = await Session.open(_agent(provider), store, title="Trip", user_id="u", tags=["x"])
    await session.run("one")
    await session.run("two")
    assert session.usage.total_tokens == 30
    assert session.cost is None  # the scripted model has no registered price (never a guess)
    await session.rewind(to=0)
    assert session.usage.total_tokens == 30  # rewound turns were still spent
    await session.set_metadata(title="Trip 2", tags=("a", "b"))
    again = await Session.open(_agent(ScriptedProvider([])), store_factory(), session.id)
    assert again.metadata.title == "Trip 2"
    assert again.metadata.tags == ("a", "b")
    assert again.metadata.user_id is None
    info = again.info
    assert (info.turns, info.usage.total_tokens, info.pending) == (0, 30, False)


async def test_list_and_delete(store_factory: Any) -> None:
    store = store_factory()
    first = await Session.open(_agent(ScriptedProvider(["a"])), store, "first", title="One")
    await first.run("x")
    await Session.open(_agent(ScriptedProvider([])), store, "second")
    listed = await list_sessions(store)
    assert [i.id for i in listed] == ["first", "second"]
    assert listed[0].metadata.title == "One"
    assert listed[0].turns == 1
    await first.delete()
    assert first.closed
    assert [i.id for i in await list_sessions(store)] == ["second"]
    with pytest.raises(SessionNotFoundError, match="no session 'first'"):
        await store.load("first")


async def test_a_second_concurrent_turn_fails_at_once(store_factory: Any) -> None:
    store = store_factory()
    session = await Session.open(_agent(ScriptedProvider([])), store, "busy")
    lease = await store_factory().acquire("busy")  # another writer holds the session
    with pytest.raises(SessionBusyError, match="in use by another writer") as caught:
        await session.run("hello")
    assert caught.value.session_id == "busy"
    assert caught.value.recoverable
    await lease.release()


async def test_a_failed_turn_is_saved_with_what_the_agent_kept() -> None:
    store = InMemorySessionStore()
    error = robota.ProviderError("down", provider="scripted", status=500)
    session = await Session.open(_agent(ScriptedProvider([error, "ok"])), store)
    with pytest.raises(robota.ProviderError):
        await session.run("first")
    assert session.turns[0].status == "failed"
    assert session.turns[0].messages[0].content == "first"
    result = await session.run("second")
    assert result.output == "ok"


async def test_clear_errors_for_bad_ids_and_inputs() -> None:
    store = InMemorySessionStore()
    agent = _agent(ScriptedProvider([]))
    with pytest.raises(ConfigurationError, match="1 to 180 characters"):
        await Session.open(agent, store, "x" * 181)
    with pytest.raises(ConfigurationError, match="must not contain control characters or '/'"):
        await Session.open(agent, store, "a/b")
    with pytest.raises(ConfigurationError, match=r"needs a robota\.Agent"):
        await Session.open("agent", store)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="needs a SessionStore"):
        await Session.open(agent, {})  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="tags must be"):
        await Session.open(agent, store, tags="abc")
    session = await Session.open(agent, store)
    with pytest.raises(ConfigurationError, match="do not pass execution_id"):
        await session.run("x", execution_id="mine")
    with pytest.raises(ConfigurationError, match="do not pass fresh_conversation"):
        await session.run("x", fresh_conversation=True)  # the turn would not see the session
    with pytest.raises(ConfigurationError):
        await session.run(42)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"rewind\(to=-1\)"):
        await session.rewind(to=-1)
    await session.aclose()
    with pytest.raises(SessionStateError, match="is closed; open it again"):
        await session.run("x")
    with pytest.raises(TypeError, match=r"Session\.open"):
        Session(agent, store, None, _token=None)  # type: ignore[arg-type]
    assert isinstance(store, SessionStore)


async def test_replace_history_keeps_a_given_head_and_otherwise_the_live_prompt() -> None:
    agent = _agent(ScriptedProvider([]), system_prompt="live")
    saved: tuple[Message, ...] = (robota.UserMessage("u"),)
    await agent.replace_history(saved)
    assert [m.content for m in agent.history] == ["live", "u"]
    await agent.replace_history((SystemMessage("kept"), *saved))
    assert [m.content for m in agent.history] == ["kept", "u"]
    assert agent.system_prompt == "live"


_HOOK = """
import json, sys
payload = json.load(sys.stdin)
with open(sys.argv[1], "a") as out:
    out.write(json.dumps(payload) + "\\n")
"""


async def test_s22_session_start_and_end_fire_through_the_agents_hooks(tmp_path: Path) -> None:
    script = tmp_path / "hook.py"
    script.write_text(_HOOK)
    log = tmp_path / "events.jsonl"
    command = f"{sys.executable} {script} {log}"
    entry = [{"hooks": [{"type": "command", "command": command}]}]
    hooks = HookRunner(
        {"SessionStart": entry, "SessionEnd": entry}, {"command": CommandHookExecutor()}
    )
    store = InMemorySessionStore()
    agent = _agent(ScriptedProvider([]), hooks=hooks)
    async with await Session.open(agent, store, "s1"):
        pass
    async with await Session.open(agent, store, "s1"):
        pass
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["hook_event_name"], e.get("source")) for e in events] == [
        ("SessionStart", "startup"),
        ("SessionEnd", None),
        ("SessionStart", "resume"),
        ("SessionEnd", None),
    ]
    assert {e["session_id"] for e in events} == {"s1"}


def test_s22_posture_rows_match_the_session_fire_sites() -> None:
    from robota.core.hooks import HOOK_EVENTS

    for event in ("SessionStart", "SessionEnd"):
        posture = HOOK_EVENTS[event]
        assert (posture.awaited, posture.inspected, posture.enforces) == (True, False, False)


async def test_an_agents_turn_lock_goes_with_the_agent_even_when_a_session_is_never_closed() -> (
    None
):
    import gc
    import weakref

    store = InMemorySessionStore()
    agent = _agent(ScriptedProvider([]))
    session = await Session.open(agent, store)  # dropped below without aclose()
    lock = weakref.ref(session._lock)
    agent_ref = weakref.ref(agent)
    del session, agent
    gc.collect()
    assert agent_ref() is None
    # The lock was keyed by id(agent): it outlived the agent, and a new agent given the same
    # id would have shared it (a stale, possibly held lock).
    assert lock() is None


async def test_sessions_share_a_turn_lock_only_when_they_share_the_agent() -> None:
    store = InMemorySessionStore()
    first, second = _agent(ScriptedProvider([])), _agent(ScriptedProvider([]))
    a = await Session.open(first, store)
    b = await Session.open(second, store)
    c = await Session.open(first, store)
    assert a._lock is not b._lock
    assert a._lock is c._lock
    await a.aclose()
    assert c._lock is (await Session.open(first, store))._lock  # still one lock for `first`


_BLOCK_PROMPT = """
import json, sys
payload = json.load(sys.stdin)
if "forbidden" in payload["prompt"]:
    print("no such prompts", file=sys.stderr)
    sys.exit(2)
"""


@pytest.mark.parametrize("journaled", [False, True])
async def test_s22_a_turn_whose_prompt_a_hook_blocks_is_saved_abandoned(
    tmp_path: Path, journaled: bool
) -> None:
    script = tmp_path / "block.py"
    script.write_text(_BLOCK_PROMPT)
    entry = [{"hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}]
    hooks = HookRunner({"UserPromptSubmit": entry}, {"command": CommandHookExecutor()})
    journal = robota.testing.InMemoryJournal() if journaled else None
    provider = ScriptedProvider(["one", "two"])
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    session = await Session.open(_agent(provider, hooks=hooks, journal=journal), store, "s")
    await session.run("hello")
    before = session.history
    with pytest.raises(robota.HookBlockedError, match="no such prompts"):
        await session.run("a forbidden prompt")
    # S22: nothing of the blocked turn ran: no model call, no turn, no pending turn.
    assert len(provider.requests) == 1
    assert session.history == before
    assert [t.status for t in session.turns] == ["complete"]
    assert session.info.pending is False
    entries = (await store.load("s")).entries
    saved = [e for e in entries if isinstance(e, TurnSaved)]
    assert [(e.status, e.messages) for e in saved[1:]] == [("abandoned", ())]
    result = await session.run("again")
    assert result.output == "two"
    assert _texts(session.history) == [
        ("user", "hello"),
        ("assistant", "one"),
        ("user", "again"),
        ("assistant", "two"),
    ]
    reopened = await Session.open(_agent(ScriptedProvider([])), store, "s")
    assert reopened.history == session.history
    await store.aclose()


async def test_a_failed_turn_adds_the_usage_of_its_model_calls_to_the_totals(
    store_factory: Any,
) -> None:
    @robota.tool
    def echo(x: str) -> str:
        """Echo."""
        return x

    usage = Usage(10, 5, 15)
    error = robota.ProviderError("down", provider="scripted", status=500)
    provider = ScriptedProvider(
        [ScriptedTurn(tool_calls=[("echo", {"x": "a"})], usage=usage), error]
    )
    store = store_factory()
    session = await Session.open(_agent(provider, tools=[echo]), store, "s")
    with pytest.raises(robota.ProviderError):
        await session.run("hello")
    assert session.turns[0].status == "failed"
    assert session.turns[0].usage == usage
    assert session.usage.total_tokens == 15
    # The failing call was sent and reported nothing: what it cost nobody can say (never a guess).
    assert session.cost is None
    reopened = await Session.open(_agent(ScriptedProvider([])), store_factory(), "s")
    assert reopened.info.usage.total_tokens == 15


async def test_an_interrupted_turn_adds_its_usage_and_cost_to_the_totals(tmp_path: Path) -> None:
    import asyncio

    model = f"priced-{uuid.uuid4().hex[:8]}"
    robota.register_model_pricing(model, input_per_million=1.0, output_per_million=2.0)
    started = asyncio.Event()

    @robota.tool
    async def wait(x: str) -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.sleep(60)
        return x

    usage = Usage(1000, 500, 1500)
    provider = ScriptedProvider(
        [
            ScriptedTurn(text="hi", usage=usage),
            ScriptedTurn(tool_calls=[("wait", {"x": "a"})], usage=usage),
        ]
    )
    try:
        store = SQLiteSessionStore(tmp_path / "sessions.db")
        agent = robota.Agent(model, provider=provider, tools=[wait])
        session = await Session.open(agent, store, "s")
        await session.run("first")
        one = robota.estimate_cost(usage, model)
        assert one is not None
        assert session.cost == pytest.approx(one)
        turn = asyncio.create_task(session.run("second"))
        await started.wait()  # the model call was made and reported; its tool is running
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        assert [t.status for t in session.turns] == ["complete", "interrupted"]
        assert session.usage.total_tokens == 3000
        assert session.cost == pytest.approx(2 * one)
        reopened = await Session.open(_agent(ScriptedProvider([])), store, "s")
        assert reopened.info.usage.total_tokens == 3000
        assert reopened.info.cost == pytest.approx(2 * one)
        await store.aclose()
    finally:
        robota.unregister_model_pricing(model)


async def test_concurrent_opens_of_one_new_session_all_succeed(tmp_path: Path) -> None:
    import asyncio

    stores = [SQLiteSessionStore(tmp_path / "sessions.db") for _ in range(4)]
    for store in stores:
        await store.list_sessions()  # each handle's file is open: the race is the create
    sessions = await asyncio.gather(
        *(Session.open(_agent(ScriptedProvider(["hi"])), store, "x") for store in stores)
    )
    assert {s.id for s in sessions} == {"x"}
    assert [i.id for i in await list_sessions(stores[0])] == ["x"]
    await sessions[3].run("hello")  # the losers resumed the one session the winner created
    await sessions[0].refresh()
    assert _texts(sessions[0].history) == [("user", "hello"), ("assistant", "hi")]
    for store in stores:
        await store.aclose()


async def test_s22_hooks_fired_in_a_sessions_turns_and_compaction_carry_its_id(
    tmp_path: Path,
) -> None:
    script = tmp_path / "hook.py"
    script.write_text(_HOOK)
    log = tmp_path / "events.jsonl"
    entry = [{"hooks": [{"type": "command", "command": f"{sys.executable} {script} {log}"}]}]
    events = ("UserPromptSubmit", "Stop", "PreCompact")
    hooks = HookRunner(dict.fromkeys(events, entry), {"command": CommandHookExecutor()})
    provider = ScriptedProvider(["one", "two", "the summary"])
    session = await Session.open(_agent(provider, hooks=hooks), InMemorySessionStore(), "s")
    await session.run("first")
    async with session.run_stream("second") as stream:
        async for _ in stream:
            pass
    assert await session.compact(keep_recent_turns=0) is not None
    fired = [json.loads(line) for line in log.read_text().splitlines()]
    # S22: as in Claude Code's hook inputs, every event names the session it fired in.
    assert [(e["hook_event_name"], e.get("session_id")) for e in fired] == [
        ("UserPromptSubmit", "s"),
        ("Stop", "s"),
        ("UserPromptSubmit", "s"),
        ("Stop", "s"),
        ("PreCompact", "s"),
    ]
