"""Agents as Temporal workflows, on a real dev server (issue 17).

In-process workers (``create_worker`` in the test's loop) for the paths that need no crash; real
worker processes (``robota temporal worker``) for killing one mid-body (``kill -9``) and for a
deploy (every worker stopped, new ones started). Tool effects are lines in a file, so "at most
once" is read off the file.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.worker import Worker

import robota
from robota.host import SQLiteJournal
from robota.temporal import (
    AgentFactory,
    RunState,
    approve,
    create_replayer,
    create_worker,
    get_result,
    reconcile,
    respond,
    run_state,
    start_agent_run,
)
from temporal_runs.agents import AGENTS, BROKEN, MeasuringProvider, RuleProvider, bulk, record
from temporal_runs.engine import TESTS, Workers


@asynccontextmanager
async def serving(
    client: Client,
    queue: str,
    journal: Path | None = None,
    agents: Mapping[str, AgentFactory] = AGENTS,
) -> AsyncIterator[Worker]:
    store = SQLiteJournal(journal) if journal is not None else None
    worker = create_worker(client, task_queue=queue, agents=agents, journal=store)
    async with worker:
        yield worker
    if store is not None:
        await store.aclose()


async def until(handle: object, check: object, timeout: float = 30.0) -> RunState:
    deadline = time.monotonic() + timeout
    while True:
        state = await run_state(handle)  # type: ignore[arg-type]
        if check(state):  # type: ignore[operator]
            return state
        assert time.monotonic() < deadline, state
        await asyncio.sleep(0.1)


def effects(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def wait_for_file(path: Path, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return path.read_text()


# ------------------------------------------------------------------ in-process workers


async def test_s28_run_settings_reach_the_model_call_activity_over_the_agents(
    client: Client, queue: str, tmp_path: Path
) -> None:
    run_settings = robota.ModelSettings(
        max_output_tokens=5, stop=("Z",), timeout=9.5, extra={"rules": {"a": 1}}
    )
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(
            client, "settings_echo", "hi", task_queue=queue, settings=run_settings
        )
        result = await get_result(handle)
    assert json.loads(result.text) == {
        "temperature": 0.2,
        "max_output_tokens": 5,
        "seed": 1,
        "stop": ["Z"],
        "timeout": 9.5,
        "extra": {"rules": {"a": 1}},
    }


async def test_S31_run_limits_reach_the_workflow_and_clamp_the_model_call_activity(
    client: Client, queue: str, tmp_path: Path
) -> None:
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(
            client,
            "settings_echo",
            "hi",
            task_queue=queue,
            limits=robota.UsageLimits(output_tokens=30),
        )
        result = await get_result(handle)
        # The agent's cap of 77, lowered to what the limit leaves, on the activity's request.
        assert json.loads(result.text)["max_output_tokens"] == 30
        refused = await start_agent_run(
            client, "settings_echo", "hi", task_queue=queue, limits=robota.UsageLimits(requests=0)
        )
        with pytest.raises(robota.UsageLimitExceeded) as info:
            await get_result(refused)
    assert (info.value.limit, info.value.requests) == ("requests", 0)
    assert info.value.limits == robota.UsageLimits(requests=0)
    with pytest.raises(robota.ConfigurationError, match="UsageLimits"):
        await start_agent_run(client, "settings_echo", "hi", task_queue=queue, limits=3)  # type: ignore[arg-type]


async def test_a_run_with_tool_calls_completes_through_activities(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "recorder", "hi", task_queue=queue)
        result = await get_result(handle)
    assert result.status == "complete"
    assert result.text.split() == ["done:", "recorded", "hi-0", "recorded", "hi-1"]
    assert (result.rounds, result.tool_calls_executed) == (3, 2)
    assert [line.split()[0] for line in effects(tmp_path / "effects.txt")] == ["hi-0", "hi-1"]
    kinds = [m.kind for m in result.messages]
    assert kinds == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert result.execution_id == handle.id
    # Every call is an activity with a stable name; the workflow type is robota.agent.
    history = await handle.fetch_history()
    names = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert names == [
        "robota.model_call",
        "robota.tool_call",
        "robota.model_call",
        "robota.tool_call",
        "robota.model_call",
    ]


async def test_s23_a_temporal_cancel_interrupts_the_run_with_the_text_so_far(
    client: Client, queue: str
) -> None:
    async with serving(client, queue):
        handle = await start_agent_run(client, "slow", "talk", task_queue=queue)
        live = await until(handle, lambda s: len(s.text.split()) >= 3)  # streamed by polling
        await handle.cancel()
        result = await get_result(handle)
    assert result.status == "interrupted"
    assert result.stop_reason == "interrupted"
    assert result.text.startswith("done: w0")
    assert live.text.startswith("done: w0")
    assert len(result.text.split()) < 101  # it never finished
    description = await handle.describe()
    assert description.status is not None
    assert description.status.name == "COMPLETED"


async def test_s21_an_ask_is_answered_by_a_signal_from_another_process(
    client: Client,
    queue: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    temporal_address: str,
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "asker", "ask", task_queue=queue)
        state = await until(handle, lambda s: s.status == "awaiting_approval")
        (pending,) = state.approvals
        assert (pending.tool, dict(pending.arguments)) == ("record", {"text": "ask-0"})
        assert effects(tmp_path / "effects.txt") == []  # nothing ran before the answer
        answer = (
            "import asyncio, sys\n"
            "from temporalio.client import Client\n"
            "from robota.temporal import approve\n"
            "async def main():\n"
            "    client = await Client.connect(sys.argv[1])\n"
            "    await approve(client.get_workflow_handle(sys.argv[2]), sys.argv[3], approved=True)\n"
            "asyncio.run(main())\n"
            "import os; os._exit(0)  # temporalio/sdk-python#300: its threads vs finalization\n"
        )
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", answer, temporal_address, handle.id, pending.id],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        result = await get_result(handle)
    assert result.text.split() == ["done:", "recorded", "ask-0"]
    assert len(effects(tmp_path / "effects.txt")) == 1


async def test_s21_a_declined_ask_is_refused_and_the_body_never_runs(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "asker", "no", task_queue=queue)
        state = await until(handle, lambda s: bool(s.approvals))
        await approve(handle, state.approvals[0].id, approved=False, reason="not today")
        result = await get_result(handle)
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.is_error
    assert "not today" in tool_message.content
    assert effects(tmp_path / "effects.txt") == []


async def test_a_refused_request_is_not_retried_and_fails_the_run(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = tmp_path / "attempts.txt"
    monkeypatch.setenv("ROBOTA_TEST_ATTEMPTS", str(attempts))
    async with serving(client, queue):
        handle = await start_agent_run(client, "refused", "x", task_queue=queue)
        with pytest.raises(robota.ProviderError) as caught:
            await get_result(handle)
    assert "refused" in caught.value.message
    assert len(attempts.read_text().splitlines()) == 1  # 401: Temporal never retried it


async def test_a_retryable_failure_is_retried_by_temporal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = tmp_path / "attempts.txt"
    monkeypatch.setenv("ROBOTA_TEST_ATTEMPTS", str(attempts))
    async with serving(client, queue):
        handle = await start_agent_run(client, "flaky", "x", task_queue=queue)
        result = await get_result(handle)
    assert result.text == "answered on attempt 3"  # 503 twice, then the answer
    assert result.rounds == 1  # one model round, three activity attempts


async def test_retry_after_is_honoured(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = tmp_path / "attempts.txt"
    monkeypatch.setenv("ROBOTA_TEST_ATTEMPTS", str(attempts))
    async with serving(client, queue):
        handle = await start_agent_run(client, "throttled", "x", task_queue=queue)
        result = await get_result(handle)
    first, second = (float(line) for line in attempts.read_text().splitlines())
    assert result.text == "answered on attempt 2"
    assert second - first >= 1.4  # the vendor asked for 1.5 s; Temporal's own first delay is 1 s


async def test_S42_the_agents_retry_policy_is_temporals_not_stacked_on_it(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 28, one owner of retries: RetryPolicy(attempts=2) is the activity's policy, and the
    # loop inside the workflow does not retry too (2 attempts, not 2 x 5 or 2 x 2).
    attempts = tmp_path / "attempts.txt"
    monkeypatch.setenv("ROBOTA_TEST_ATTEMPTS", str(attempts))
    async with serving(client, queue):
        handle = await start_agent_run(client, "flaky-policy", "x", task_queue=queue)
        with pytest.raises(robota.ProviderError) as caught:
            await get_result(handle)
    assert caught.value.status == 503
    assert len(attempts.read_text().splitlines()) == 2


async def test_S42_the_policys_max_retry_after_caps_the_vendors_wait_on_temporal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = tmp_path / "attempts.txt"
    monkeypatch.setenv("ROBOTA_TEST_ATTEMPTS", str(attempts))
    async with serving(client, queue):
        handle = await start_agent_run(client, "throttled-policy", "x", task_queue=queue)
        result = await get_result(handle)
    first, second = (float(line) for line in attempts.read_text().splitlines())
    assert result.text == "answered on attempt 2"
    assert second - first < 10  # the vendor asked for 30 s; the policy caps it at 0.2 s


async def test_an_unknown_agent_fails_the_run_with_a_clear_error(
    client: Client, queue: str
) -> None:
    async with serving(client, queue):
        handle = await start_agent_run(client, "nobody", "x", task_queue=queue)
        with pytest.raises(robota.RobotaError, match="no agent is registered as 'nobody'"):
            await get_result(handle)


async def test_start_agent_run_refuses_bad_input_before_reaching_the_server(
    client: Client,
) -> None:
    with pytest.raises(robota.ConfigurationError, match="agent_name"):
        await start_agent_run(client, "", "x", task_queue="q")
    with pytest.raises(robota.ConfigurationError, match="heartbeat_timeout"):
        await start_agent_run(client, "a", "x", task_queue="q", heartbeat_timeout=0)


# ------------------------------------------------------------------ real worker processes


def _kill_holder(hold: Path, workers: Workers) -> int:
    pid = int(wait_for_file(hold))
    assert pid in {p.pid for p in workers.processes}
    os.kill(pid, signal.SIGKILL)
    return pid


async def test_s40_a_worker_killed_mid_body_never_repeats_the_effect(
    client: Client, workers: Workers, tmp_path: Path
) -> None:
    hold = tmp_path / "holder.txt"
    # Worker A holds the body before its effect; worker B would run it at once.
    workers.start(ROBOTA_TEST_HOLD=str(hold), ROBOTA_TEST_HOLD_SECONDS="60")
    handle = await start_agent_run(
        client, "recorder", "kill", task_queue=workers.queue, heartbeat_timeout=2
    )
    wait_for_file(hold)
    workers.start()
    killed = _kill_holder(hold, workers)
    # The other worker retries the activity: the effect had started without a result, so it
    # is reconciled, never re-run — and the reconciliation names the call.
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await get_result(handle)
    (item,) = caught.value.items
    assert (item.kind, item.tool_name) == ("effect", "record")
    assert dict(item.arguments or {}) == {"text": "kill-0"}
    assert item.call_id is not None
    assert item.call_id in caught.value.message  # it names the call
    assert caught.value.execution_id == handle.id
    assert effects(workers.effects) == []  # the killed body never had its effect; none re-ran
    # The host settles it: the effect did not happen, so it asks for a rerun on the live worker.
    await reconcile(handle, item.call_id or "", outcome="rerun")
    result = await get_result(handle)
    assert result.status == "complete"
    lines = effects(workers.effects)
    assert [line.split()[0] for line in lines] == ["kill-0", "kill-1"]
    assert all(int(line.split()[1]) != killed for line in lines)


async def test_s40_an_idempotent_tool_is_run_again_after_its_worker_is_killed(
    client: Client, workers: Workers, tmp_path: Path
) -> None:
    hold = tmp_path / "holder.txt"
    keys = tmp_path / "keys.txt"
    workers.start(
        ROBOTA_TEST_HOLD=str(hold), ROBOTA_TEST_HOLD_SECONDS="60", ROBOTA_TEST_KEYS=str(keys)
    )
    handle = await start_agent_run(
        client, "looker", "again", task_queue=workers.queue, heartbeat_timeout=2
    )
    wait_for_file(hold)
    workers.start(ROBOTA_TEST_KEYS=str(keys))
    killed = _kill_holder(hold, workers)
    result = await get_result(handle)
    assert result.text.split() == ["done:", "found", "again-0"]
    (line,) = effects(workers.effects)
    assert line.startswith("lookup again-0")
    assert int(line.split()[-1]) != killed
    # Issue 32: both attempts of the call — the killed worker's and the retry on the other
    # worker — saw one idempotency key, derived from the run and the call.
    first, second = (line.split() for line in effects(keys))
    assert int(first[1]) == killed
    assert int(second[1]) != killed
    assert first[0] == second[0]
    assert first[0].startswith(f"{handle.id}:")


async def test_a_deploy_in_the_middle_continues_the_run(client: Client, workers: Workers) -> None:
    workers.start()
    workers.start()
    handle = await start_agent_run(client, "asker", "deploy", task_queue=workers.queue)
    state = await until(handle, lambda s: bool(s.approvals))
    workers.stop_all()  # the deploy: every worker stops …
    workers.start()  # … and new ones start, with no cache of the run
    workers.start()
    again = await until(handle, lambda s: bool(s.approvals))
    assert again.approvals == state.approvals  # the replay minted the same approval id
    await approve(handle, state.approvals[0].id, approved=True)
    result = await get_result(handle)
    assert result.text.split() == ["done:", "recorded", "deploy-0"]
    assert len(effects(workers.effects)) == 1


async def test_reconcile_refuses_a_call_that_is_not_waiting(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "asker", "r", task_queue=queue)
        state = await until(handle, lambda s: bool(s.approvals))
        with pytest.raises(WorkflowUpdateFailedError):
            await reconcile(handle, "tool_nothing", outcome="settled", content="x")
        with pytest.raises(robota.ConfigurationError, match="outcome"):
            await reconcile(handle, "tool_nothing", outcome="maybe")  # type: ignore[arg-type]
        await approve(handle, state.approvals[0].id, approved=True)
        await get_result(handle)


def test_the_worker_command_refuses_a_bad_agents_spec() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "robota",
            "temporal",
            "worker",
            "--agents",
            "nope",
            "--task-queue",
            "q",
        ],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: --agents must be module:attr")
    assert "Traceback" not in done.stderr


async def test_a_large_tool_result_travels_by_reference_and_the_model_gets_all_of_it(
    client: Client, queue: str, tmp_path: Path
) -> None:
    size = 3 * 1024 * 1024  # over Temporal's 2 MiB payload limit
    expected = hashlib.sha256(("0123456789abcdef" * (size // 16 + 1))[:size].encode()).hexdigest()
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "measurer", str(size), task_queue=queue)
        result = await get_result(handle)
    assert result.text == f"got {size} bytes {expected[:16]}"
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.content.startswith(f"[robota: a {size}-byte tool result stored aside")


async def test_without_a_journal_an_oversized_result_is_a_clear_error_the_model_sees(
    client: Client, queue: str
) -> None:
    async with serving(client, queue):
        handle = await start_agent_run(client, "measurer", str(3 * 1024 * 1024), task_queue=queue)
        result = await get_result(handle)
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.is_error
    assert "no execution journal is configured" in tool_message.content


@pytest.mark.parametrize("journaled", [True, False], ids=["journal", "no-journal"])
async def test_s40_an_outside_response_request_waits_for_a_signal_then_the_call_runs_on(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, journaled: bool
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db" if journaled else None):
        handle = await start_agent_run(client, "waiter", "pay", task_queue=queue)
        state = await until(handle, lambda s: bool(s.requests))
        assert state.status == "awaiting_response"
        (request,) = state.requests
        assert (request.kind, request.payload, request.tool_name) == (
            "approval",
            {"amount": 50},
            "wire",
        )
        assert effects(tmp_path / "effects.txt") == []  # it waits before its effect
        with pytest.raises(robota.ExecutionStateError) as unknown:  # issue 32: not ignored
            await respond(handle, "req_unknown", "approved")
        assert unknown.value.code == "unknown_request"
        await respond(handle, request.id, "approved")
        result = await get_result(handle)
    assert result.text == "done: sent 50"
    assert len(effects(tmp_path / "effects.txt")) == 1


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        ("sourced", "agent 'sourced' cannot run on Temporal: "),
        ("hooked", "has hooks"),
        ("lifecycle_hooked", "has hooks"),
        ("hooked_boss", "its sub-agent 'hooked_kid' at tool:hooked_kid): it has hooks"),
    ],
)
async def test_what_cannot_run_in_workflow_code_is_refused_with_a_clear_error(
    client: Client, queue: str, agent: str, says: str
) -> None:
    async with serving(client, queue):
        handle = await start_agent_run(client, agent, "x", task_queue=queue)
        with pytest.raises(robota.RobotaError, match=re.escape(says)):
            await get_result(handle)


async def test_a_request_over_temporals_payload_limit_fails_the_run_instead_of_wedging_it(
    client: Client, queue: str
) -> None:
    async with serving(client, queue):
        handle = await start_agent_run(client, "roomy", "x" * 1_600_000, task_queue=queue)
        with pytest.raises(robota.ProviderError, match="over the 1572864 a Temporal payload"):
            await get_result(handle)


# ------------------------------------------------------------------ review regressions


async def test_s23_a_cancel_during_an_ask_interrupts_the_run_and_the_tool_never_runs(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "asker", "c", task_queue=queue)
        state = await until(handle, lambda s: bool(s.approvals))
        await handle.cancel()
        result = await asyncio.wait_for(get_result(handle), 30)
        with pytest.raises(robota.ExecutionStateError) as late:  # too late: the run has ended
            await approve(handle, state.approvals[0].id, approved=True)
        assert late.value.code == "unknown_run"
    assert result.status == "interrupted"
    assert effects(tmp_path / "effects.txt") == []


async def test_s23_a_cancel_reaches_a_running_tool_body_through_its_signal(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = tmp_path / "started.txt"
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    monkeypatch.setenv("ROBOTA_TEST_STARTED", str(started))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "patient", "p", task_queue=queue)
        deadline = time.monotonic() + 30
        while not started.exists():
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        began = time.monotonic()
        await handle.cancel()
        result = await asyncio.wait_for(get_result(handle), 30)
    assert time.monotonic() - began < 5  # the body stopped on its signal, not after 30 s
    assert result.status == "interrupted"
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.content == "stopped when the run was aborted"
    assert effects(tmp_path / "effects.txt") == []


async def test_a_factory_that_raises_fails_the_run_instead_of_wedging_it(
    client: Client, queue: str
) -> None:
    async with serving(client, queue, agents={**AGENTS, **BROKEN}):
        handle = await start_agent_run(client, "broken", "x", task_queue=queue)
        with pytest.raises(robota.RobotaError, match="ROBOTA_TEST_UNSET_VARIABLE"):
            await asyncio.wait_for(get_result(handle), 30)


async def test_a_payload_of_an_unknown_version_fails_the_run_with_the_upgrade_message(
    client: Client, queue: str
) -> None:
    async with serving(client, queue):
        handle = await client.start_workflow(
            "robota.agent", {"v": 99, "agent": "recorder"}, id=f"v99-{queue}", task_queue=queue
        )
        with pytest.raises(robota.RobotaError, match=r"version 99.*upgrade the worker"):
            await asyncio.wait_for(get_result(handle), 30)


async def test_malformed_signals_are_ignored_and_never_wedge_the_run(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "asker", "m", task_queue=queue)
        state = await until(handle, lambda s: bool(s.approvals))
        approval = state.approvals[0].id
        await handle.signal("robota.text", {"key": "k", "attempt": "two", "text": "x"})
        await handle.signal("robota.text", {"key": "k", "attempt": None})
        await handle.signal("robota.approve", {"id": approval, "approved": "false"})
        await handle.signal("robota.respond", ["not", "an", "object"])
        await handle.signal("robota.approve", {"id": [approval], "approved": True})  # unhashable
        await handle.signal("robota.respond", {"request_id": {"a": 1}, "response": 1})
        still = await run_state(handle)  # the query answers: nothing failed
        assert still.approvals == state.approvals  # "false" is not an answer
        assert effects(tmp_path / "effects.txt") == []
        await approve(handle, approval, approved=True)
        result = await asyncio.wait_for(get_result(handle), 30)
    assert result.status == "complete"


async def test_without_a_journal_escaped_output_is_measured_as_sent(
    client: Client, queue: str
) -> None:
    # 300,000 emoji: 1.2 MB of UTF-8, 3.6 MB as Temporal's JSON escapes it.
    async with serving(client, queue):
        handle = await start_agent_run(client, "emojier", "300000", task_queue=queue)
        result = await asyncio.wait_for(get_result(handle), 60)
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.is_error
    assert "no execution journal is configured" in tool_message.content


async def test_an_agent_with_its_own_journal_is_refused(client: Client, queue: str) -> None:
    async with serving(client, queue):
        handle = await start_agent_run(client, "journaled", "x", task_queue=queue)
        with pytest.raises(robota.ConfigurationError, match="its own execution journal"):
            await asyncio.wait_for(get_result(handle), 30)


async def test_runs_whose_agents_share_a_gate_each_get_their_own_asks(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        first = await start_agent_run(client, "sharing", "A", task_queue=queue)
        second = await start_agent_run(client, "sharing", "B", task_queue=queue)
        one = await until(first, lambda s: bool(s.approvals))
        two = await until(second, lambda s: bool(s.approvals))
        assert [dict(a.arguments) for a in one.approvals] == [{"text": "A-0"}]
        assert [dict(a.arguments) for a in two.approvals] == [{"text": "B-0"}]
        await approve(first, one.approvals[0].id, approved=True)
        await approve(second, two.approvals[0].id, approved=False)
        assert (await get_result(first)).text.split() == ["done:", "recorded", "A-0"]
        declined = await get_result(second)
    refusal = next(m for m in declined.messages if isinstance(m, robota.ToolMessage))
    assert refusal.is_error
    assert len(effects(tmp_path / "effects.txt")) == 1  # A's, once


async def test_a_provider_failure_keeps_its_class_status_and_switchability(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_ATTEMPTS", str(tmp_path / "attempts.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "refused", "x", task_queue=queue)
        with pytest.raises(robota.AuthenticationError) as caught:
            await get_result(handle)
    assert caught.value.status == 401
    assert caught.value.switchable is False
    assert caught.value.provider == "failing"


async def test_a_finished_run_replays_under_the_sdks_replayer(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "recorder", "replay", task_queue=queue)
        await get_result(handle)
    history = await handle.fetch_history()
    replayed = await create_replayer(AGENTS).replay_workflow(history)
    assert replayed.replay_failure is None


def test_the_worker_command_says_a_wrong_namespace_before_it_serves(
    temporal_address: str,
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "robota",
            "temporal",
            "worker",
            "--agents",
            "temporal_runs.agents:AGENTS",
            "--task-queue",
            "q",
            "--address",
            temporal_address,
            "--namespace",
            "nope",
        ],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: namespace 'nope'")
    assert "serving" not in done.stderr
    assert "Traceback" not in done.stderr


async def test_s39_a_stored_result_past_the_tool_result_budget_reaches_the_model_as_a_notice(
    client: Client, queue: str, tmp_path: Path
) -> None:
    size = 1024 * 1024  # ~262,000 tokens: past 80% of the 100,000-token window
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "small-measurer", str(size), task_queue=queue)
        result = await get_result(handle)
    notice = (
        "[Result omitted: no room left in the context window. The call to 'bulk' completed and "
        "its effects happened; do not repeat it. Ask for a smaller part of the result if you "
        "need it.]"
    )
    digest = hashlib.sha256(notice.encode()).hexdigest()[:16]
    assert result.text == f"got {len(notice)} bytes {digest}"  # what the vendor was sent


async def test_a_run_input_that_is_not_an_object_fails_the_run(client: Client, queue: str) -> None:
    async with serving(client, queue):
        handle = await client.start_workflow(
            "robota.agent", "garbage", id=f"garbage-{queue}", task_queue=queue
        )
        with pytest.raises(robota.RobotaError, match="must be an object"):
            await asyncio.wait_for(get_result(handle), 30)


async def test_outside_responses_too_large_to_carry_fail_the_call_not_the_engine(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "waiter", "pay", task_queue=queue)
        state = await until(handle, lambda s: bool(s.requests))
        await respond(handle, state.requests[0].id, "x" * 1_700_000)
        result = await asyncio.wait_for(get_result(handle), 60)
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.is_error
    assert "over the 1572864 a Temporal payload carries" in tool_message.content
    assert effects(tmp_path / "effects.txt") == []


async def test_s40_a_deploy_that_cuts_a_running_body_off_reconciles_it_on_the_new_worker(
    client: Client, workers: Workers, tmp_path: Path
) -> None:
    started = tmp_path / "started.txt"
    workers.start(ROBOTA_TEST_STARTED=str(started))
    handle = await start_agent_run(
        client, "patient", "deploy", task_queue=workers.queue, heartbeat_timeout=2
    )
    wait_for_file(started)
    workers.stop_all()  # SIGTERM: the body outlives the graceful shutdown and is cut off
    workers.start()
    # The cut-off body recorded no result (it was not the run's abort), so the new worker does
    # not run it again: the host is asked.
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await asyncio.wait_for(get_result(handle), 60)
    assert caught.value.items[0].tool_name == "patient"
    assert effects(workers.effects) == []


# ------------------------------------------------------------------ S35: the agent's texts


async def test_s35_an_oversized_result_reaches_the_model_in_the_agents_text(
    client: Client, queue: str
) -> None:
    texts = robota.ModelTexts(oversized_result="TOO BIG: {tool} {size}>{limit}")

    def factory() -> robota.Agent:
        return robota.Agent(
            provider=MeasuringProvider(), model="roomy-model", tools=[bulk], texts=texts
        )

    size = 3 * 1024 * 1024
    async with serving(client, queue, agents={"big": factory}):
        handle = await start_agent_run(client, "big", str(size), task_queue=queue)
        result = await get_result(handle)
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.is_error
    assert re.fullmatch(r"TOO BIG: 'bulk' \d+>\d+", tool_message.content), tool_message.content


async def test_s35_a_tool_the_worker_cannot_start_reaches_the_model_in_the_agents_text(
    client: Client, queue: str
) -> None:
    # The workflow's agent (built first) offers `record`; the worker's own agent (built for
    # the model call) has no such tool, so the tool activity cannot start the body.
    texts = robota.ModelTexts(setup_failed_error="NO START ({error})")
    built: list[int] = []

    def factory() -> robota.Agent:
        built.append(1)
        tools = [record] if len(built) == 1 else []
        return robota.Agent(
            provider=RuleProvider("record"), model="rule-model", tools=tools, texts=texts
        )

    async with serving(client, queue, agents={"split": factory}):
        handle = await start_agent_run(client, "split", "x", task_queue=queue)
        result = await get_result(handle)
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.is_error
    # Inside tool_failure_result, as the RuntimeError it always was.
    assert tool_message.content == (
        "Tool 'record' failed: RuntimeError: NO START (this worker cannot run the activity: "
        "agent 'split' has no tool named 'record')"
    )


async def test_s35_an_effect_settled_as_failed_reaches_the_model_in_the_agents_text(
    client: Client, workers: Workers, tmp_path: Path
) -> None:
    started = tmp_path / "started.txt"
    texts = {"ROBOTA_TEST_SETTLED_FAILED": "IT NEVER HAPPENED"}
    workers.start(ROBOTA_TEST_STARTED=str(started), **texts)
    handle = await start_agent_run(
        client, "patient", "cut", task_queue=workers.queue, heartbeat_timeout=2
    )
    wait_for_file(started)
    workers.stop_all()  # the body is cut off with no result: the host is asked
    workers.start(**texts)
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await asyncio.wait_for(get_result(handle), 60)
    call_id = caught.value.items[0].call_id
    assert call_id is not None
    await reconcile(handle, call_id, outcome="failed")  # no content: the agent's text
    result = await asyncio.wait_for(get_result(handle), 60)
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert (tool_message.content, tool_message.is_error) == ("IT NEVER HAPPENED", True)
    assert effects(workers.effects) == []
