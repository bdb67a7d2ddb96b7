"""S33 events: ownerType.localName names, owner paths, null service, tool spans, replay."""

from __future__ import annotations

import re

import pytest

import robota
from robota import EventNames, RecordingEventService, rebuild_history
from robota.testing import ScriptedProvider


@robota.tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


async def _run_with_events(
    **options: object,
) -> tuple[robota.Agent, RecordingEventService, robota.RunResult]:
    recorder = RecordingEventService()
    provider = ScriptedProvider([[("lookup", {"key": "a"})], "done"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[lookup],
        event_service=recorder,
        system_prompt="sys",
        **options,  # type: ignore[arg-type]
    )
    result = await agent.run("go")
    return agent, recorder, result


async def test_s33_event_names_are_owner_type_dot_local_name() -> None:
    _, recorder, _ = await _run_with_events()
    assert recorder.events
    for event in recorder.events:
        assert re.fullmatch(r"(agent|execution|history|tool)\.[a-z_]+", event.name), event.name


async def test_s33_every_event_carries_the_owner_path_agent_execution_round_tool() -> None:
    agent, recorder, result = await _run_with_events()
    run_events = [e for e in recorder.events if e.name != EventNames.HISTORY_SYSTEM_PROMPT_SET]
    for event in run_events:
        assert event.owner_path[0] == robota.OwnerRef("agent", agent.id)
        assert event.owner_path[1] == robota.OwnerRef("execution", result.run_id)
    started = next(e for e in recorder.events if e.name == EventNames.TOOL_STARTED)
    assert [ref.type for ref in started.owner_path] == ["agent", "execution", "round", "tool"]
    assert started.owner_id("round") == "1"
    assert started.owner_id("tool") == started.data["call_id"]
    request = next(e for e in recorder.events if e.name == EventNames.PROVIDER_REQUEST)
    assert [ref.type for ref in request.owner_path] == ["agent", "execution", "round"]
    assert started.owner_type == "tool"


async def test_s33_null_event_service_by_default_builds_nothing() -> None:
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m")
    assert not robota.NullEventService().enabled
    assert (await agent.run("hi")).output == "x"


async def test_s33_a_per_call_event_service_gets_that_calls_tool_span_and_no_other() -> None:
    shared = lookup  # one tool instance serving two agents
    service_a, service_b = RecordingEventService(), RecordingEventService()
    agent_a = robota.Agent(
        provider=ScriptedProvider([[("lookup", {"key": "a"})], "A"]), model="m", tools=[shared]
    )
    agent_b = robota.Agent(
        provider=ScriptedProvider([[("lookup", {"key": "b"})], "B"]), model="m", tools=[shared]
    )
    await agent_a.run("go", event_service=service_a)
    await agent_b.run("go", event_service=service_b)
    spans_a = [e for e in service_a.events if e.name == EventNames.TOOL_COMPLETED]
    spans_b = [e for e in service_b.events if e.name == EventNames.TOOL_COMPLETED]
    assert [e.data["content"] for e in spans_a] == ["A"]
    assert [e.data["content"] for e in spans_b] == ["B"]


async def test_s33_a_call_carrying_no_service_reports_to_the_one_set_on_the_tool_instance() -> None:
    @robota.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    last_setter = RecordingEventService()
    robota.Agent(provider=ScriptedProvider([]), model="m", tools=[echo], event_service=last_setter)
    silent = robota.Agent(
        provider=ScriptedProvider([[("echo", {"text": "hi"})], "ok"]), model="m", tools=[echo]
    )
    await silent.run("go")
    assert [e.name for e in last_setter.events if e.name.startswith("tool.")] == [
        EventNames.TOOL_STARTED,
        EventNames.TOOL_COMPLETED,
    ]


async def test_s33_pre_execution_refusals_are_never_reported_as_tool_spans() -> None:
    recorder = RecordingEventService()
    provider = ScriptedProvider([[("lookup", {"wrong": 1}), ("missing", {})], "ok"])
    agent = robota.Agent(provider=provider, model="m", tools=[lookup], event_service=recorder)
    await agent.run("go")
    names = recorder.names()
    assert EventNames.TOOL_REFUSED in names
    assert EventNames.TOOL_SKIPPED in names
    assert EventNames.TOOL_STARTED not in names
    assert EventNames.TOOL_COMPLETED not in names


async def test_s33_replay_from_history_mutation_events_reconstructs_the_real_history() -> None:
    recorder = RecordingEventService()
    provider = ScriptedProvider([[("lookup", {"key": "a"})], "done", "second answer"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[lookup],
        event_service=recorder,
        system_prompt="first prompt",
    )
    await agent.run("go")
    agent.update_system_prompt("second prompt")
    await agent.run("more")
    assert rebuild_history(recorder.events) == tuple(agent.history)


async def test_s33_replay_covers_a_trimmed_history() -> None:
    recorder = RecordingEventService()
    provider = ScriptedProvider(["one", "two", "three"])
    agent = robota.Agent(
        provider=provider, model="m", event_service=recorder, max_history_messages=3
    )
    for text in ("a", "b", "c"):
        await agent.run(text)
    assert rebuild_history(recorder.events) == tuple(agent.history)
    assert len(agent.history) <= 3


async def test_replay_grade_events_reach_a_per_run_callback() -> None:
    seen: list[robota.AgentEvent] = []
    agent = robota.Agent(provider=ScriptedProvider(["hi"]), model="m")
    await agent.run("hello", on_event=seen.append)
    names = [e.name for e in seen]
    assert names[0] == EventNames.RUN_STARTED
    assert names[-1] == EventNames.RUN_COMPLETED
    request = next(e for e in seen if e.name == EventNames.PROVIDER_REQUEST)
    assert request.data["request"].messages[-1].content == "hello"
    committed = next(e for e in seen if e.name == EventNames.ASSISTANT_COMMITTED)
    assert committed.data["message"].content == "hi"


async def test_s39_each_provider_round_emits_one_content_free_observation() -> None:
    _, recorder, _ = await _run_with_events()
    observations = [e for e in recorder.events if e.name == EventNames.ROUND_COMPLETED]
    assert [o.data["round"] for o in observations] == [1, 2]
    for observation in observations:
        assert set(observation.data) == {
            "round",
            "observation_id",
            "started_at",
            "ended_at",
            "outcome",
            "forced",
            "model",
            "dispatched",
            # S27: what the exporter builds a provider-call span from — still no content
            "provider",
            "requested_model",
            "call_id",
            "finish_reason",
            "usage",
            "attempt",  # issue 28: which try of the round's call (1 without a retry)
        }
        assert observation.data["outcome"] == "success"
        assert observation.data["ended_at"] >= observation.data["started_at"]


async def test_a_raising_event_service_never_changes_execution(
    memory_sink: robota.MemorySink,
) -> None:
    def explode(event: robota.AgentEvent) -> None:
        raise RuntimeError("observer bug")

    agent = robota.Agent(provider=ScriptedProvider(["fine"]), model="m")
    assert (await agent.run("x", on_event=explode)).output == "fine"
    assert any(e.message == "event service raised" for e in memory_sink.events)


def test_event_service_protocol_is_checked() -> None:
    with pytest.raises(robota.ConfigurationError, match="event_service"):
        robota.Agent(provider=ScriptedProvider([]), model="m", event_service=object())  # type: ignore[arg-type]


async def test_s25_native_payloads_are_stamped_with_round_identity_and_order() -> None:
    class Native(ScriptedProvider):
        def chat_stream_raw(self, request, *, signal=None, capture):  # type: ignore[no-untyped-def, override]
            capture(robota.NativePayload("request", "demo.create", {"raw": True}))
            capture(robota.NativePayload("response", "demo.create", {"raw": "resp"}, order=7))
            capture(robota.NativePayload("stream_event", "demo.create", {"raw": "late"}))
            return self.chat_stream(request, signal=signal)

    recorder = RecordingEventService()
    agent = robota.Agent(provider=Native(["ok"]), model="m", event_service=recorder)
    await agent.run("go")
    native = [e for e in recorder.events if e.name == EventNames.PROVIDER_NATIVE]
    assert [e.data["order"] for e in native] == [0, 7, 8]
    assert all(e.owner_id("round") == "1" for e in native)
    assert native[0].data["body"] == {"raw": True}
