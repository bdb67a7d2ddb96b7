"""Sub-agents and guardrails on Temporal (issue 29), on a real dev server.

A child (``Agent.as_tool``) runs inside the parent's workflow: its loop is workflow code and
its model calls and tool bodies are activities of the parent's run, so a worker killed
mid-child never repeats a completed model call or a settled tool effect (S40). Guardrails run
too: a plain function guardrail in the ``robota.guardrail`` activity (never in replayed
workflow code), a guardrail agent's model calls as model-call activities.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHandle

import robota
from robota.temporal import (
    approve,
    create_replayer,
    get_result,
    reconcile,
    run_state,
    start_agent_run,
)
from temporal_runs.agents import AGENTS
from temporal_runs.engine import Workers
from temporal_runs.test_agent_workflows import effects, serving, until, wait_for_file


async def activities(handle: WorkflowHandle[object, object]) -> list[str]:
    history = await handle.fetch_history()
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


def lines(path: Path) -> list[str]:
    return [line.rsplit(" ", 1)[0] for line in effects(path)]  # without the pid


async def test_issue29_a_child_runs_in_the_parents_workflow_its_calls_activities(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "boss", "go", task_queue=queue)
        result = await get_result(handle)
    assert result.status == "complete"
    assert result.text == "boss: helper: recorded go-boss-helper"
    assert lines(tmp_path / "effects.txt") == [
        "model boss 0",
        "model helper 0",
        "go-boss-helper",
        "model helper 1",
        "model boss 1",
    ]
    # The child's model calls and its tool body are activities of the parent's run; the
    # delegation itself is workflow code (no activity for the "helper" tool).
    assert await activities(handle) == [
        "robota.model_call",
        "robota.model_call",
        "robota.tool_call",
        "robota.model_call",
        "robota.model_call",
    ]
    # Usage rolls up, with the per-agent breakdown (issue 29).
    by_agent = result.usage_by_agent
    assert set(by_agent) == {"boss", "boss/helper"}
    assert by_agent["boss"].usage.total_tokens == 24
    assert by_agent["boss/helper"].usage.total_tokens == 24
    assert result.usage.total_tokens == 48
    assert result.agent == "boss"
    # The child's loop is workflow code: a replay of the history takes the same steps.
    replayed = await create_replayer(AGENTS).replay_workflow(await handle.fetch_history())
    assert replayed.replay_failure is None


async def test_issue29_the_parents_limits_bound_the_child_on_temporal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(
            client, "boss", "go", task_queue=queue, limits=robota.UsageLimits(requests=2)
        )
        with pytest.raises(robota.UsageLimitExceeded):
            await get_result(handle)
    # The parent's first call and the child's first: the child's second was never sent.
    assert (await activities(handle)).count("robota.model_call") == 2
    assert "model helper 1" not in lines(tmp_path / "effects.txt")


async def test_issue29_s23_a_cancel_of_the_parent_reaches_the_childs_tool_body(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = tmp_path / "started.txt"
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    monkeypatch.setenv("ROBOTA_TEST_STARTED", str(started))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "waiting_boss", "p", task_queue=queue)
        deadline = time.monotonic() + 30
        while not started.exists():
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        began = time.monotonic()
        await handle.cancel()
        result = await asyncio.wait_for(get_result(handle), 30)
    assert time.monotonic() - began < 5  # the child's body stopped on the parent's signal
    assert result.status == "interrupted"
    assert "patient" not in " ".join(lines(tmp_path / "effects.txt"))  # no effect


async def test_issue29_s21_a_childs_ask_reaches_the_parents_approve_signal_named(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "asking_boss", "ask", task_queue=queue)
        state = await until(handle, lambda s: bool(s.approvals))
        (pending,) = state.approvals
        assert (pending.tool, pending.agent) == ("record", "boss/helper")
        assert "ask-boss-helper" not in lines(tmp_path / "effects.txt")  # not before the answer
        await approve(handle, pending.id, approved=True)
        result = await get_result(handle)
    assert result.text == "boss: helper: recorded ask-boss-helper"
    assert lines(tmp_path / "effects.txt").count("ask-boss-helper") == 1


async def test_issue29_s40_a_worker_killed_mid_child_repeats_no_model_call_or_effect(
    client: Client, workers: Workers, tmp_path: Path
) -> None:
    hold = tmp_path / "holder.txt"
    # Worker A holds the child's second model call (after the child's effect settled).
    workers.start(ROBOTA_TEST_HOLD_MODEL=str(hold))
    handle = await start_agent_run(
        client, "boss", "kill", task_queue=workers.queue, heartbeat_timeout=2
    )
    pid = int(wait_for_file(hold))
    workers.start()
    assert pid == workers.processes[0].pid
    os.kill(pid, signal.SIGKILL)
    result = await asyncio.wait_for(get_result(handle), 60)
    assert result.status == "complete"
    assert result.text == "boss: helper: recorded kill-boss-helper"
    # Every completed model call and the child's effect exactly once, across both workers.
    assert lines(workers.effects) == [
        "model boss 0",
        "model helper 0",
        "kill-boss-helper",
        "model helper 1",
        "model boss 1",
    ]
    assert set(result.usage_by_agent) == {"boss", "boss/helper"}


async def test_issue29_s40_a_worker_killed_mid_childs_body_never_repeats_the_effect(
    client: Client, workers: Workers, tmp_path: Path
) -> None:
    hold = tmp_path / "holder.txt"
    # Worker A holds the child's tool body before its effect; worker B takes over.
    workers.start(ROBOTA_TEST_HOLD=str(hold), ROBOTA_TEST_HOLD_SECONDS="60")
    handle = await start_agent_run(
        client, "boss", "body", task_queue=workers.queue, heartbeat_timeout=2
    )
    pid = int(wait_for_file(hold))
    workers.start()
    os.kill(pid, signal.SIGKILL)
    # The child's body started without a result: reconciled like the parent's, never re-run.
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await get_result(handle)
    (item,) = caught.value.items
    assert (item.tool_name, dict(item.arguments or {})) == ("record", {"text": "body-boss-helper"})
    await reconcile(handle, item.call_id or "", outcome="settled", content="recorded by hand")
    result = await asyncio.wait_for(get_result(handle), 60)
    assert result.text == "boss: helper: recorded by hand"
    assert lines(workers.effects) == [
        "model boss 0",
        "model helper 0",
        "model helper 1",
        "model boss 1",
    ]


# ------------------------------------------------------------------ guardrails


async def test_issue29_an_input_guardrail_trips_on_temporal_before_any_model_call_or_tool(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "guarded_recorder", "forbidden", task_queue=queue)
        with pytest.raises(robota.GuardrailTripped) as caught:
            await get_result(handle)
    assert (caught.value.guardrail, caught.value.phase) == ("words", "input")
    assert caught.value.reason == "the input says forbidden"
    # The check ran in an activity; no model call and no tool body ran.
    assert await activities(handle) == ["robota.guardrail"]
    assert lines(tmp_path / "effects.txt") == ["guard input forbidden"]


async def test_issue29_tool_and_output_guardrails_run_as_activities_on_temporal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "guarded_recorder", "go", task_queue=queue)
        result = await get_result(handle)
        refused = await start_agent_run(client, "guarded_recorder", "stop", task_queue=queue)
        stopped = await get_result(refused)
    # after= replaced what the model saw; the effect ran once.
    assert result.text == "guarded: [kept] go-guarded"
    assert lines(tmp_path / "effects.txt")[:7] == [
        "guard input go",
        "model guarded 0",
        "guard tool_before record",
        "go-guarded",
        "guard tool_after record",
        "model guarded 1",
        "guard output",
    ]
    assert await activities(handle) == [
        "robota.guardrail",
        "robota.model_call",
        "robota.guardrail",
        "robota.tool_call",
        "robota.guardrail",
        "robota.model_call",
        "robota.guardrail",
    ]
    assert [(g.guardrail, g.phase, g.outcome) for g in result.guardrails] == [
        ("words", "input", "passed"),
        ("calls", "tool_before", "passed"),
        ("calls", "tool_after", "replaced"),
        ("reply", "output", "passed"),
    ]
    replayed = await create_replayer(AGENTS).replay_workflow(await handle.fetch_history())
    assert replayed.replay_failure is None
    # before= refused the call: the body never ran, the model saw the refusal.
    assert "stop-guarded" not in lines(tmp_path / "effects.txt")
    assert "refused by guardrail 'calls'" in stopped.text
    assert "robota.tool_call" not in await activities(refused)


async def test_issue29_an_output_guardrail_trips_on_temporal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "guarded_recorder", "secret", task_queue=queue)
        with pytest.raises(robota.GuardrailTripped) as caught:
            await get_result(handle)
    assert (caught.value.guardrail, caught.value.phase) == ("reply", "output")


async def test_issue29_a_parallel_input_guardrail_trips_before_any_tool_body_on_temporal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "hasty_recorder", "forbidden", task_queue=queue)
        with pytest.raises(robota.GuardrailTripped) as caught:
            await get_result(handle)
    assert (caught.value.guardrail, caught.value.phase) == ("slow", "input")
    # The model call ran beside the check and asked for the tool; the body never started.
    assert lines(tmp_path / "effects.txt") == ["model hasty 0", "guard input forbidden"]
    assert "robota.tool_call" not in await activities(handle)


async def test_issue29_a_guardrail_check_that_raises_fails_the_run_on_temporal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "guarded_recorder", "explode", task_queue=queue)
        with pytest.raises(robota.RobotaError, match="ValueError: the check broke") as caught:
            await get_result(handle)
    assert caught.value.code == "guardrail_failed"  # fails closed: no model call, no tool
    assert await activities(handle) == ["robota.guardrail"]


async def test_issue29_a_guardrail_agents_model_calls_are_activities_on_temporal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "judged_recorder", "forbidden", task_queue=queue)
        with pytest.raises(robota.GuardrailTripped) as caught:
            await get_result(handle)
        passed = await start_agent_run(client, "judged_recorder", "fine", task_queue=queue)
        result = await get_result(passed)
    assert (caught.value.guardrail, caught.value.phase) == ("judge", "input")
    assert await activities(handle) == ["robota.model_call"]  # the judge's, and nothing else
    assert result.text == "judged: recorded fine-judged"
    assert (await activities(passed))[0] == "robota.model_call"
    assert lines(tmp_path / "effects.txt") == [
        "model judge 0",
        "model judge 0",
        "model judged 0",
        "fine-judged",
        "model judged 1",
    ]


# ------------------------------------------------------------------ review (issue 29)


async def test_issue29_run_state_text_is_the_registered_agents_own_not_a_childs(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RunState.text is the run's assistant text (its TextDelta view): a sub-agent's reply and a
    # guardrail agent's verdict are not part of it (the in-process stream keeps them apart too).
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "boss", "go", task_queue=queue)
        result = await get_result(handle)
        state = await run_state(handle)
        judged = await start_agent_run(client, "judged_recorder", "fine", task_queue=queue)
        verdict = await get_result(judged)
        judged_state = await run_state(judged)
    assert result.text == "boss: helper: recorded go-boss-helper"
    assert state.text == result.text
    assert judged_state.text == verdict.text == "judged: recorded fine-judged"


async def test_issue29_a_grandchild_runs_in_the_workflow_routed_by_its_path(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "grand_boss", "go", task_queue=queue)
        result = await get_result(handle)
    assert result.text == "boss: mid: helper: recorded go-boss-mid-helper"
    assert lines(tmp_path / "effects.txt") == [
        "model boss 0",
        "model mid 0",
        "model helper 0",
        "go-boss-mid-helper",
        "model helper 1",
        "model mid 1",
        "model boss 1",
    ]
    assert set(result.usage_by_agent) == {"boss", "boss/mid", "boss/mid/helper"}
    assert result.usage.total_tokens == 72
    replayed = await create_replayer(AGENTS).replay_workflow(await handle.fetch_history())
    assert replayed.replay_failure is None


async def test_issue29_a_sub_agent_shared_across_factory_calls_is_refused_by_name(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A factory that hands every call the same sub-agent object: the workflow routes it, and
    # the worker's own instance of the agent (where activities find the real provider) would
    # then be the routed one. Every run is refused with the configuration error, none runs it.
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        for _ in range(2):
            handle = await start_agent_run(client, "sharing_boss", "go", task_queue=queue)
            with pytest.raises(robota.ConfigurationError, match="fresh") as caught:
                await asyncio.wait_for(get_result(handle), 60)
            assert "shared" in str(caught.value)
    assert "go-boss-shared" not in lines(tmp_path / "effects.txt")


async def test_issue29_a_blocking_sync_check_does_not_starve_the_guardrail_activitys_heartbeat(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A plain sync check that blocks longer than the heartbeat timeout: run on the worker's
    # event loop it would stop the heartbeats, the attempt would time out and the check run
    # again (and again). It runs in a thread, like a sync tool body: once, and the run goes on.
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(
            client, "blocking_guarded", "go", task_queue=queue, heartbeat_timeout=1
        )
        result = await asyncio.wait_for(get_result(handle), 60)
    assert result.text == "blocking: recorded go-blocking"
    assert lines(tmp_path / "effects.txt").count("guard input go") == 1


async def test_issue29_a_typed_sub_agents_output_guardrail_is_given_its_json_value(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check runs in an activity: it is given the output's JSON value (as a run started
    # with output= is), whatever the type holds — a Decimal here, which Temporal's own JSON
    # encoding of the object could not carry.
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "pricing_boss", "price", task_queue=queue)
        result = await get_result(handle)
    assert lines(tmp_path / "effects.txt") == [
        "model boss 0",
        "model pricer 0",
        'guard output {"amount": "1.50", "currency": "EUR"}',
        "model boss 1",
    ]
    assert result.text == 'boss: {"amount":"1.50","currency":"EUR"}'


async def test_issue29_a_tool_after_check_reviews_a_large_result_stored_aside(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A result over INLINE_RESULT_BYTES travels through the workflow as a marker and is
    # restored from the journal for the model call. The after= check must review the result
    # itself, not the marker — else a redacting guardrail passes it to the model unredacted.
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "redacting", "big", task_queue=queue)
        result = await get_result(handle)
    assert "guard tool_after saw the needle" in lines(tmp_path / "effects.txt")
    assert result.text == "redacting: redacted"
    (record,) = result.guardrails
    assert (record.guardrail, record.outcome) == ("needles", "replaced")
