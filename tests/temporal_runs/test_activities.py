"""The two activities and the payloads, under the SDK's own ActivityEnvironment (no server).

The journal is a real SQLite file. What a crash leaves behind — an ``EffectStarted`` with no
``EffectSettled``, or a settled effect whose activity never reported back — is written into it
directly, as a dead attempt would have, and the next attempt is run.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import ClassVar

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

import robota
from robota.core._messages import deterministic, new_id, now
from robota.core.execution._journal import EffectSettled, EffectStarted
from robota.core.providers import ChatRequest, ResponseFormat, ToolSpec
from robota.host import SQLiteJournal
from robota.temporal import AgentRegistry, RobotaActivities
from robota.temporal._activities import RECONCILIATION_REQUIRED, _effect_key
from robota.temporal._codec import (
    PayloadError,
    RunInput,
    RunOutput,
    ToolCallInput,
    decode_request,
    decode_response,
    decode_result,
    encode_request,
    encode_response,
    provider_error,
)
from robota.testing import ScriptedProvider
from temporal_runs.agents import AGENTS


@pytest.fixture
def effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "effects.txt"
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(path))
    return path


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _call(call_id: str = "tool_abc", **changes: object) -> ToolCallInput:
    call = ToolCallInput("recorder", "record", {"text": "x"}, call_id, "c0", 1)
    return dataclasses.replace(call, **changes)  # type: ignore[arg-type]


async def test_s40_an_effect_settled_by_a_dead_attempt_is_returned_not_run_again(
    tmp_path: Path, effects: Path
) -> None:
    journal = SQLiteJournal(tmp_path / "j.db")
    env = ActivityEnvironment()
    key = _effect_key(env.info.workflow_id or "", "tool_abc")
    async with await journal.acquire(key) as lease:
        await lease.append(EffectStarted("tool_abc", "tool_abc", "c0", "record", {"text": "x"}))
        await lease.append(EffectSettled("tool_abc", "succeeded", "recorded earlier"))
    activities = RobotaActivities(AgentRegistry(AGENTS), journal)
    result = decode_result(await env.run(activities.tool_call, _call().encode()))
    assert result.content == "recorded earlier"
    assert _lines(effects) == []  # the body did not run
    await journal.aclose()


async def test_s40_an_effect_started_without_a_result_raises_reconciliation(
    tmp_path: Path, effects: Path
) -> None:
    journal = SQLiteJournal(tmp_path / "j.db")
    env = ActivityEnvironment()
    key = _effect_key(env.info.workflow_id or "", "tool_abc")
    async with await journal.acquire(key) as lease:
        await lease.append(EffectStarted("tool_abc", "tool_abc", "c0", "record", {"text": "x"}))
    activities = RobotaActivities(AgentRegistry(AGENTS), journal)
    with pytest.raises(ApplicationError) as caught:
        await env.run(activities.tool_call, _call().encode())
    assert caught.value.type == RECONCILIATION_REQUIRED
    assert caught.value.non_retryable
    assert caught.value.details[0]["call_id"] == "tool_abc"
    assert _lines(effects) == []
    # The host chose to run it again: the body runs once and its result is recorded.
    result = decode_result(await env.run(activities.tool_call, _call(rerun=True).encode()))
    assert result.content == "recorded x"
    assert len(_lines(effects)) == 1
    records = await journal.read(key)
    assert isinstance(records[-1], EffectSettled)
    assert records[-1].content == "recorded x"
    await journal.aclose()


async def test_a_tool_body_failure_is_a_result_the_model_sees_and_is_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROBOTA_TEST_EFFECTS", raising=False)  # the body raises KeyError
    journal = SQLiteJournal(tmp_path / "j.db")
    env = ActivityEnvironment()
    activities = RobotaActivities(AgentRegistry(AGENTS), journal)
    result = decode_result(await env.run(activities.tool_call, _call().encode()))
    assert result.is_error
    assert result.content.startswith("Tool 'record' failed: KeyError")
    records = await journal.read(_effect_key(env.info.workflow_id or "", "tool_abc"))
    assert [type(r).__name__ for r in records] == ["EffectStarted", "EffectSettled"]
    await journal.aclose()


async def test_a_provider_refusal_is_a_non_retryable_application_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_ATTEMPTS", str(tmp_path / "a.txt"))
    activities = RobotaActivities(AgentRegistry(AGENTS))
    request = ChatRequest(model="rule-model", messages=(robota.UserMessage("x"),))
    payload = {"agent": "refused", "provider": "failing", "request": encode_request(request)}
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.model_call, payload)
    assert caught.value.type == "robota.AuthenticationError"
    assert caught.value.non_retryable
    assert caught.value.details[0]["status"] == 401


def test_the_registry_refuses_bad_agents_with_clear_errors() -> None:
    with pytest.raises(robota.ConfigurationError, match="non-empty mapping"):
        AgentRegistry({})
    with pytest.raises(robota.ConfigurationError, match="callable"):
        AgentRegistry({"a": 3})  # type: ignore[dict-item]
    registry = AgentRegistry({"a": lambda: "not an agent"})  # type: ignore[dict-item,return-value]
    with pytest.raises(robota.ConfigurationError, match="returned str, not an Agent"):
        registry.build("a")
    with pytest.raises(robota.ConfigurationError, match="no agent is registered as 'b'"):
        registry.build("b")


def test_payloads_round_trip_and_refuse_unknown_versions() -> None:
    request = ChatRequest(
        model="m",
        messages=(robota.UserMessage("hi"), robota.AssistantMessage("yo")),
        tools=(ToolSpec("t", "d", {"type": "object", "properties": {}}),),
        tool_choice="required",
        response_format=ResponseFormat("json_schema", {"type": "object"}, "out"),
        effort="high",
    )
    back = decode_request(encode_request(request))
    assert back.settings == robota.ModelSettings()
    assert [m.content for m in back.messages] == ["hi", "yo"]
    assert [m.id for m in back.messages] == [m.id for m in request.messages]
    assert (back.tools, back.tool_choice, back.effort) == (request.tools, "required", "high")
    assert back.response_format == request.response_format
    response = robota.ChatResponse(
        content="a",
        tool_calls=(robota.ToolCall("c", "t", "{}"),),
        model="m",
        usage=robota.Usage.from_counts(prompt=3, completion=4),
        finish_reason="stop",
    )
    assert decode_response(encode_response(response)) == response
    spec = RunInput("agent", "go", max_rounds=3, tool_choice="none", heartbeat_timeout=2.0)
    assert RunInput.decode(spec.encode()) == spec
    output = RunOutput(
        "t", "complete", "end_turn", 1, 0, robota.Usage.from_counts(prompt=1, completion=1)
    )
    assert RunOutput.decode(output.encode()) == output
    with pytest.raises(PayloadError, match="version 99"):
        RunInput.decode({**spec.encode(), "v": 99})
    with pytest.raises(PayloadError, match="must be an object"):
        decode_result([1])


def test_ids_and_timestamps_come_from_the_replayable_source_inside_deterministic() -> None:
    counter = iter(range(1000))
    with deterministic(lambda: f"{next(counter):024x}", lambda: 42.0):
        first, second = new_id("msg"), new_id("tool")
        message = robota.UserMessage("x")
        assert now() == 42.0
    assert (first, second) == (f"msg_{0:024x}", f"tool_{1:024x}")
    assert message.id == f"msg_{2:024x}"
    assert message.created_at == 42.0
    assert new_id("msg") != f"msg_{3:024x}"  # outside: from the OS again


async def test_only_a_fresh_agent_can_be_routed() -> None:
    routed = AGENTS["recorder"]()
    seen: list[str] = []

    def tool(real: robota.Tool) -> robota.Tool:
        seen.append(real.name)
        return real

    routed._route_dispatch(lambda provider: provider, tool)
    assert seen == ["record"]
    assert [t.name for t in routed.tools] == ["record"]
    used = robota.Agent(provider=ScriptedProvider(["hi"]), model="scripted-model")
    await used.run("x")
    with pytest.raises(robota.ConfigurationError, match="already run"):
        used._route_dispatch(lambda provider: provider, tool)


def test_a_tool_declares_itself_idempotent_and_bad_values_are_refused() -> None:
    @robota.tool(idempotent=True)
    async def once(text: str) -> str:
        """Echo.

        Args:
            text: The text.
        """
        return text

    assert once.idempotent

    class Lookup(robota.Tool):
        name = "lookup"
        parameters: ClassVar[dict[str, object]] = {"type": "object", "properties": {}}
        idempotent = True

        async def execute(self, args: object, ctx: object) -> str:
            return "x"

    assert Lookup().idempotent
    assert not Lookup(idempotent=False).idempotent
    with pytest.raises(robota.ConfigurationError, match="idempotent must be True or False"):
        Lookup(idempotent="yes")  # type: ignore[arg-type]


async def test_s40_a_rerun_covers_the_starts_the_host_saw_and_no_later_one(
    tmp_path: Path, effects: Path
) -> None:
    journal = SQLiteJournal(tmp_path / "j.db")
    env = ActivityEnvironment()
    key = _effect_key(env.info.workflow_id or "", "tool_abc")
    started = EffectStarted("tool_abc", "tool_abc", "c0", "record", {"text": "x"})
    async with await journal.acquire(key) as lease:
        await lease.append(started)  # the attempt that died
    activities = RobotaActivities(AgentRegistry(AGENTS), journal)
    with pytest.raises(ApplicationError) as caught:
        await env.run(activities.tool_call, _call().encode())
    assert caught.value.details[0]["starts"] == 1
    async with await journal.acquire(key) as lease:
        await lease.append(started)  # the host's rerun started too, and its worker died
    with pytest.raises(ApplicationError) as again:
        await env.run(activities.tool_call, _call(rerun=1).encode())  # Temporal's retry of it
    assert again.value.type == RECONCILIATION_REQUIRED
    assert again.value.details[0]["starts"] == 2
    assert _lines(effects) == []
    result = decode_result(await env.run(activities.tool_call, _call(rerun=2).encode()))
    assert result.content == "recorded x"
    await journal.aclose()


async def test_an_unknown_tool_or_a_newer_payload_is_not_retried() -> None:
    activities = RobotaActivities(AgentRegistry(AGENTS))
    env = ActivityEnvironment()
    with pytest.raises(ApplicationError, match="no tool named 'nope'") as caught:
        await env.run(activities.tool_call, _call(tool="nope").encode())
    assert caught.value.non_retryable
    with pytest.raises(ApplicationError, match="version 9") as newer:
        await env.run(activities.tool_call, {**_call().encode(), "v": 9})
    assert newer.value.non_retryable


def test_the_workers_own_providers_have_their_sdk_retries_turned_off() -> None:
    disabled: list[str] = []

    class Counting(ScriptedProvider):
        def disable_sdk_retries(self) -> None:
            disabled.append(self.name)

    registry = AgentRegistry({"a": lambda: robota.Agent(provider=Counting(["x"]), model="m")})
    registry.live("a")
    registry.live("a")
    assert disabled == ["scripted"]  # once, when the worker builds its instance


def test_provider_failures_keep_their_class_and_retry_after() -> None:
    throttled = provider_error(
        "RateLimitError", "slow down", {"retry_after": 2.5, "status": 429}, provider="p", model="m"
    )
    assert isinstance(throttled, robota.RateLimitError)
    assert (throttled.retry_after, throttled.status, throttled.provider) == (2.5, 429, "p")
    unreachable = provider_error("NetworkError", "reset", {}, provider="p", model="m")
    assert isinstance(unreachable, robota.NetworkError)


async def test_s35_a_tool_activity_cut_by_the_runs_abort_answers_with_the_agents_text() -> None:
    # The worker's agent comes from the same factory as the workflow's, so its ModelTexts
    # (S35) are what the activity writes when the run's abort stops a body.
    started = asyncio.Event()

    @robota.tool
    async def wait(ctx: robota.ToolContext) -> str:
        """Waits for the run's abort."""
        started.set()
        await ctx.signal.wait()
        raise robota.AbortError("stopped")

    def factory() -> robota.Agent:
        texts = robota.ModelTexts(interrupted_while_running="STOPPED BY THE RUN")
        return robota.Agent(provider=ScriptedProvider([]), model="m", tools=[wait], texts=texts)

    activities = RobotaActivities(AgentRegistry({"waiter": factory}))
    env = ActivityEnvironment()
    call = ToolCallInput("waiter", "wait", {}, "tool_w", "c0", 1)
    task = asyncio.ensure_future(env.run(activities.tool_call, call.encode()))
    await asyncio.wait_for(started.wait(), 5)
    env.cancel()
    result = decode_result(await asyncio.wait_for(task, 5))
    assert (result.content, result.is_error) == ("STOPPED BY THE RUN", True)


def test_s28_model_settings_survive_the_request_and_run_input_payloads() -> None:
    settings = robota.ModelSettings(
        temperature=0.5,
        top_p=0.9,
        max_output_tokens=12,
        stop=("a", "b"),
        seed=4,
        presence_penalty=0.1,
        frequency_penalty=-0.1,
        parallel_tool_calls=False,
        timeout=3.0,
        extra={"openai": {"service_tier": "flex"}},
    )
    request = ChatRequest(model="m", messages=(robota.UserMessage("hi"),), settings=settings)
    back = decode_request(encode_request(request))
    assert back.settings == settings
    assert (back.temperature, back.max_output_tokens) == (0.5, 12)
    spec = RunInput("agent", "go", settings=settings)
    assert RunInput.decode(spec.encode()) == spec
    assert RunInput.decode(RunInput("agent", "go").encode()).settings is None


@pytest.mark.parametrize(("index", "check"), [(7, "check"), (0, "nothing")])
async def test_issue29_a_guardrail_check_this_worker_lacks_is_a_setup_failure_not_retried(
    index: int, check: str
) -> None:
    # A worker whose agent has no such guardrail (another release's factory): retrying cannot
    # help, so the activity fails at once, as for an unknown tool or provider.
    from robota.temporal._activities import SETUP_FAILED
    from robota.temporal._codec import GuardrailInput

    activities = RobotaActivities(AgentRegistry(AGENTS))
    payload = GuardrailInput("guarded_recorder", (), index, check, "input", "go").encode()
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.guardrail, payload)
    assert (caught.value.type, caught.value.non_retryable) == (SETUP_FAILED, True)
