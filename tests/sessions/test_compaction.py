"""S39 automatic compaction of a session: policy, records, hooks, fork and rewind, the store."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import robota
from robota import (
    AbortSignal,
    ConfigurationError,
    HookOutcome,
    HookRunner,
    HookSpec,
    StorageError,
    Usage,
    estimate_message_tokens,
)
from robota.host import CommandHookExecutor
from robota.sessions import (
    DEFAULT_COMPACTION_INSTRUCTION,
    ENTRY_FORMAT_VERSION,
    Compacted,
    CompactionPolicy,
    CompactionRequest,
    CompactionStarted,
    Session,
    SQLiteSessionStore,
    TurnSaved,
    decode_session_entry,
    encode_session_entry,
    is_compaction_summary,
)
from robota.testing import InMemorySessionStore
from sessions.compaction_model import FILLER, CompactionModel, lookup, pairs_intact

WINDOW = 2_000


class _Recorder:
    """A hook executor (the S22 protocol) that records each payload and allows."""

    def __init__(self) -> None:
        self.payloads: list[Mapping[str, Any]] = []

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: AbortSignal | None = None
    ) -> HookOutcome:
        self.payloads.append(dict(payload))
        return HookOutcome.allow()

    def events(self) -> list[str]:
        return [str(p["hook_event_name"]) for p in self.payloads]


def _recording_runner(recorder: _Recorder, *events: str) -> HookRunner:
    hook = {"hooks": [{"type": "command", "command": "recorded"}]}
    return HookRunner({event: [hook] for event in events}, {"command": recorder})


def _command_runner(event: str, command: str) -> HookRunner:
    hook = {"type": "command", "command": command, "timeout": 60}
    return HookRunner({event: [{"hooks": [hook]}]}, {"command": CommandHookExecutor()})


def _agent(model: CompactionModel, **kwargs: Any) -> robota.Agent:
    return robota.Agent(
        "m",
        provider=model,
        tools=[lookup],
        context_window=WINDOW,
        system_prompt="live prompt",
        **kwargs,
    )


def _size(messages: Any) -> int:
    return sum(estimate_message_tokens(m) for m in messages)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return InMemorySessionStore()
    return SQLiteSessionStore(tmp_path / "sessions.db")


async def test_s39_a_conversation_twenty_times_the_window_goes_on_with_tool_pairs_intact(
    store: Any,
) -> None:
    model = CompactionModel()
    recorder = _Recorder()
    agent = _agent(model, hooks=_recording_runner(recorder, "UserPromptSubmit", "Stop"))
    turns = 0
    async with await Session.open(agent, store) as session:
        stored = 0
        while stored < 20 * WINDOW:
            result = await session.run(f"q{turns} {FILLER}")
            assert result.status == "complete"
            assert result.stop_reason == "end_turn"  # never the pre-send guard
            assert result.text == f"answer q{turns}"
            turns += 1
            stored = sum(_size(t.messages) for t in session.turns)
        # Every request the model was sent fits the window, and never splits a call from its
        # result; the turns' requests offer tools, the summary calls none.
        for request in model.requests:
            assert _size(request.messages) < 0.95 * WINDOW
            assert pairs_intact(request.messages)
            summary = request.messages[0].content == DEFAULT_COMPACTION_INSTRUCTION
            assert (request.tool_choice == "none" and not request.tools) is summary
        summaries = model.calls.count("summary")
        assert summaries >= 5, (turns, summaries)
        # The replaced turns are still in the store, in the session's record.
        entries = (await store.load(session.id)).entries
        saved = [e for e in entries if isinstance(e, TurnSaved)]
        assert [e.turn for e in saved] == list(range(turns))
        assert len(session.turns) == turns
        compacted = [e for e in entries if isinstance(e, Compacted)]
        assert len(compacted) == summaries
        last = compacted[-1]
        assert [t.compacted for t in session.turns] == [i < last.upto for i in range(turns)]
        assert turns - last.upto >= 2  # keep_recent_turns
        # The history: the marked summary, then the kept turns whole.
        history = session.history
        assert is_compaction_summary(history[0])
        assert history[0].content.endswith(f"summary {summaries}")
        assert not any(is_compaction_summary(m) for m in history[1:])
        assert history[1:] == tuple(m for t in session.turns[last.upto :] for m in t.messages)
        assert pairs_intact(history)
        # Metered: the summary calls' usage is in the session's totals.
        turn_usage = sum((t.usage for t in session.turns), Usage())
        compaction_usage = sum((c.usage for c in compacted), Usage())
        assert compaction_usage.total_tokens > 0
        assert session.usage == turn_usage + compaction_usage
    # The summary runs fired no UserPromptSubmit or Stop hook: one of each per turn.
    assert recorder.events().count("UserPromptSubmit") == turns
    assert recorder.events().count("Stop") == turns


async def test_s39_a_restored_session_continues_from_its_summary(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SQLiteSessionStore(path) as store:
        session = await Session.open(_agent(CompactionModel()), store)
        for i in range(8):
            await session.run(f"q{i} {FILLER}")
        assert session.compactions
        session_id, history = session.id, session.history
        await session.aclose()
    model = CompactionModel()
    async with SQLiteSessionStore(path) as store:
        restored = await Session.open(_agent(model), store, session_id)
        assert restored.history == history
        await restored.run("next")
        sent = model.requests[0].messages
        assert isinstance(sent[0], robota.SystemMessage)
        assert sent[0].content == "live prompt"
        assert is_compaction_summary(sent[1])
        await restored.aclose()


async def test_s39_compaction_is_off_with_none_and_cannot_trigger_without_a_window() -> None:
    store = InMemorySessionStore()
    model = CompactionModel()
    off = await Session.open(_agent(model), store, compaction=None)
    for i in range(4):
        await off.run(f"q{i} {FILLER}")
    assert model.calls.count("summary") == 0
    assert off.compaction is None
    await off.aclose()
    # No window known (the model is registered nowhere): only max_tokens can trigger.
    unknown = CompactionModel()
    agent = robota.Agent("m", provider=unknown, tools=[lookup])
    plain = await Session.open(agent, store)
    for i in range(4):
        await plain.run(f"q{i} {FILLER}")
    assert unknown.calls.count("summary") == 0
    await plain.aclose()
    counted = CompactionModel()
    agent = robota.Agent("m", provider=counted, tools=[lookup])
    by_tokens = await Session.open(agent, store, compaction=CompactionPolicy(max_tokens=1_500))
    for i in range(4):
        await by_tokens.run(f"q{i} {FILLER}")
    assert counted.calls.count("summary") >= 1
    assert is_compaction_summary(by_tokens.history[0])
    await by_tokens.aclose()


async def _compacted_session(store: Any, turns: int = 6) -> Session:
    session = await Session.open(
        _agent(CompactionModel()), store, compaction=CompactionPolicy(keep_recent_turns=1)
    )
    for i in range(turns):
        await session.run(f"q{i} {FILLER}")
    assert session.compactions
    return session


async def test_s39_rewinding_to_before_a_compaction_point_drops_it(store: Any) -> None:
    session = await _compacted_session(store)
    point = session.compactions[-1].upto
    # Rewinding to the compaction point or later keeps it.
    await session.rewind(len(session.turns))
    assert session.compactions[-1].upto == point
    await session.rewind(point - 1)
    assert all(c.upto <= point - 1 for c in session.compactions)
    kept = session.turns
    upto = session.compactions[-1].upto if session.compactions else 0
    assert [t.compacted for t in kept] == [i < upto for i in range(len(kept))]
    replaced = (session.history[0],) if upto else ()
    assert all(is_compaction_summary(m) for m in replaced)
    assert session.history == (*replaced, *(m for t in kept[upto:] for m in t.messages))
    # The dropped compaction stays in the store's record.
    entries = (await store.load(session.id)).entries
    assert point in [e.upto for e in entries if isinstance(e, Compacted)]
    await session.aclose()


async def test_s39_a_fork_keeps_the_compactions_within_its_turns(store: Any) -> None:
    session = await _compacted_session(store)
    point = session.compactions[-1].upto
    parent_history = session.history
    after = await session.fork()
    assert after.history == parent_history
    assert after.compactions[-1].summary == session.compactions[-1].summary
    before = await session.fork(at=point - 1)
    assert all(c.upto <= point - 1 for c in before.compactions)
    assert session.history == parent_history  # the parent is untouched
    await before.run("go on")
    assert session.history == parent_history
    for handle in (after, before, session):
        await handle.aclose()


async def test_s39_manual_compaction_with_instructions_and_a_summarizer() -> None:
    seen: list[CompactionRequest] = []

    async def summarizer(request: CompactionRequest) -> str:
        seen.append(request)
        return f"my summary of {len(request.messages)} messages"

    recorder = _Recorder()
    model = CompactionModel()
    agent = _agent(model, hooks=_recording_runner(recorder, "PreCompact"))
    session = await Session.open(
        agent, InMemorySessionStore(), compaction=CompactionPolicy(summarizer=summarizer)
    )
    await session.run("one")
    await session.run("two")
    assert await session.compact() is None  # both turns are the kept recent ones
    entry = await session.compact(instructions="keep the numbers", keep_recent_turns=0)
    assert entry is not None
    assert (entry.upto, entry.source, entry.trigger) == (2, "summarizer", "manual")
    assert entry.usage == Usage()
    assert entry.cost == 0.0
    assert seen[0].custom_instructions == "keep the numbers"
    assert pairs_intact(seen[0].messages)
    assert len(seen[0].messages) == 8
    assert session.history == (session.history[0],)
    assert session.history[0].content.endswith("my summary of 8 messages")
    assert model.calls.count("summary") == 0
    assert recorder.payloads[-1] == {
        "hook_event_name": "PreCompact",
        "session_id": session.id,
        "trigger": "manual",
        "custom_instructions": "keep the numbers",
    }
    await session.run("three")  # the next turn is sent the summary
    assert is_compaction_summary(model.requests[-2].messages[1])
    await session.aclose()


async def test_s22_a_pre_compact_command_hook_vetoes_with_exit_2(tmp_path: Path) -> None:
    payload = tmp_path / "payload.json"
    hooks = _command_runner("PreCompact", f'cat > "{payload}"; echo no >&2; exit 2')
    model = CompactionModel()
    session = await Session.open(_agent(model, hooks=hooks), InMemorySessionStore())
    for i in range(6):
        result = await session.run(f"q{i} {FILLER}")
        assert result.status == "complete"
    assert not session.compactions  # every compaction was vetoed; the turns went on
    assert model.calls.count("summary") == 0
    assert not any(is_compaction_summary(m) for m in session.history)
    sent = json.loads(payload.read_text())
    assert sent.pop("cwd")  # every command hook's input names its directory (S22)
    assert sent == {
        "hook_event_name": "PreCompact",
        "session_id": session.id,
        "trigger": "auto",
        "custom_instructions": "",
    }
    await session.aclose()


async def test_s22_a_pre_compact_command_hook_supplies_the_summary(tmp_path: Path) -> None:
    body = {"hookSpecificOutput": {"hookEventName": "PreCompact", "summary": "from the hook"}}
    script = tmp_path / "summary.py"
    script.write_text(f"import sys\nsys.stdin.read()\nprint({json.dumps(json.dumps(body))})\n")
    hooks = _command_runner("PreCompact", f'"{sys.executable}" "{script}"')
    model = CompactionModel()
    session = await Session.open(_agent(model, hooks=hooks), InMemorySessionStore())
    for i in range(6):
        await session.run(f"q{i} {FILLER}")
    assert session.compactions
    assert {c.source for c in session.compactions} == {"hook"}
    assert session.history[0].content.endswith("from the hook")
    assert model.calls.count("summary") == 0  # no model call wrote it
    await session.aclose()


async def test_s39_a_failed_summary_call_compacts_nothing() -> None:
    class Empty(CompactionModel):
        async def chat_stream(self, request: Any, *, signal: Any = None) -> Any:
            if request.messages[0].content == DEFAULT_COMPACTION_INSTRUCTION:
                yield robota.ResponseDone(model=request.model, usage=Usage())
                return
            async for event in super().chat_stream(request, signal=signal):
                yield event

    session = await Session.open(_agent(Empty()), InMemorySessionStore())
    await session.run("one")
    await session.run("two")
    with pytest.raises(robota.sessions.SessionStateError) as caught:
        await session.compact(keep_recent_turns=0)
    assert caught.value.code == "compaction_failed"
    assert not session.compactions
    await session.aclose()


def test_compaction_entries_round_trip_through_their_json() -> None:
    started = CompactionStarted(3, "s/compact-3", 4, "instr", "custom", "manual", 1.5)
    done = Compacted(
        3,
        4,
        6,
        "text",
        "head: ",
        "model",
        "auto",
        Usage.from_counts(prompt=9, completion=2),
        None,
        "s/compact-3",
        2.5,
    )
    for entry in (started, done):
        text = encode_session_entry(entry)
        assert json.loads(text)[:2] == [ENTRY_FORMAT_VERSION, entry.kind]
        assert decode_session_entry(text) == entry
    damaged = json.loads(encode_session_entry(done))
    damaged[7] = "elsewhere"  # the source
    with pytest.raises(StorageError) as caught:
        decode_session_entry(json.dumps(damaged))
    assert caught.value.code == "session_entry_damaged"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"threshold": 0},
        {"threshold": 1.5},
        {"threshold": True},
        {"max_tokens": 0},
        {"keep_recent_turns": -1},
        {"instruction": " "},
        {"summarizer": "nope"},
    ],
)
def test_a_bad_compaction_policy_names_the_fix(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="CompactionPolicy"):
        CompactionPolicy(**kwargs)


async def test_session_open_refuses_a_compaction_that_is_not_a_policy() -> None:
    with pytest.raises(ConfigurationError, match="CompactionPolicy"):
        await Session.open(_agent(CompactionModel()), InMemorySessionStore(), compaction=0.8)  # type: ignore[arg-type]


async def test_lifecycle_hooks_false_fires_no_run_hooks_and_is_checked() -> None:
    recorder = _Recorder()
    agent = robota.Agent(
        "m",
        provider=CompactionModel(),
        hooks=_recording_runner(recorder, "UserPromptSubmit", "Stop"),
    )
    await agent.run("plain", lifecycle_hooks=False)
    assert recorder.payloads == []
    await agent.run("again")
    assert recorder.events() == ["UserPromptSubmit", "Stop"]
    with pytest.raises(ConfigurationError, match="lifecycle_hooks"):
        await agent.run("x", lifecycle_hooks="no")  # type: ignore[typeddict-item]
