"""The Temporal host API a host can live with (issue 32, item 5), on a real dev server.

Robota errors instead of the SDK's for an unknown run; answers as updates that refuse a
mistyped or repeated id at the caller; a waiting run surfaced by ``get_result`` as a
reconciliation is, so a host needs one loop; the start options a host needs.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio import workflow
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

import robota
from robota.temporal import (
    WORKFLOW_NAME,
    InputRequired,
    RunOutput,
    approve,
    get_result,
    respond,
    run_state,
    start_agent_run,
)
from temporal_runs.test_agent_workflows import effects, serving, until


async def _drive(handle: object, answer: object) -> tuple[RunOutput, list[str]]:
    """The one host loop: answer what the run waits for, until it ends."""
    seen: list[str] = []
    while True:
        try:
            return await get_result(handle, stop_for_input=True, poll_interval=0.1), seen  # type: ignore[arg-type]
        except InputRequired as wait:
            seen.append(f"{wait.code} {wait.execution_id == handle.id}")  # type: ignore[attr-defined]
            for ask in wait.approvals:
                seen.append(f"approval {ask.tool}")
                await approve(handle, ask.id, approved=True)  # type: ignore[arg-type]
            for request in wait.requests:
                seen.append(f"request {request.tool_name}")
                await respond(handle, request.id, answer)  # type: ignore[arg-type]


# ------------------------------------------------------------------ unknown runs


async def test_get_result_of_an_unknown_run_is_an_execution_state_error(client: Client) -> None:
    handle = client.get_workflow_handle(f"robota-nothing-{uuid.uuid4().hex}")
    with pytest.raises(robota.ExecutionStateError) as caught:
        await get_result(handle)
    assert caught.value.code == "unknown_run"
    assert handle.id in caught.value.message
    with pytest.raises(robota.ExecutionStateError) as state:
        await run_state(handle)
    assert state.value.code == "unknown_run"
    with pytest.raises(robota.ExecutionStateError) as answer:
        await approve(handle, "approval_x", approved=True)
    assert answer.value.code == "unknown_run"


# ------------------------------------------------------------------ answers are updates


async def test_s21_approve_refuses_a_mistyped_and_a_repeated_approval_id(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "twice_asker", "t", task_queue=queue)
        first = (await until(handle, lambda s: bool(s.approvals))).approvals[0]
        with pytest.raises(robota.ExecutionStateError) as mistyped:
            await approve(handle, first.id + "x", approved=True)
        assert mistyped.value.code == "unknown_approval"
        assert first.id in mistyped.value.message  # it names what is pending
        assert (await run_state(handle)).approvals == (first,)  # the run still waits
        await approve(handle, first.id, approved=True)
        second = (await until(handle, lambda s: bool(s.approvals))).approvals[0]
        assert second.id != first.id
        with pytest.raises(robota.ExecutionStateError) as repeated:
            await approve(handle, first.id, approved=False)
        assert repeated.value.code == "already_answered"
        await approve(handle, second.id, approved=True)
        result = await get_result(handle)
    assert result.text.split() == ["done:", "recorded", "t-0", "recorded", "t-1"]
    assert [line.split()[0] for line in effects(tmp_path / "effects.txt")] == ["t-0", "t-1"]


async def test_s40_respond_refuses_a_mistyped_request_id_and_a_finished_run(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "waiter", "pay", task_queue=queue)
        (request,) = (await until(handle, lambda s: bool(s.requests))).requests
        with pytest.raises(robota.ExecutionStateError) as mistyped:
            await respond(handle, "req_typo", "approved")
        assert mistyped.value.code == "unknown_request"
        assert request.id in mistyped.value.message
        await respond(handle, request.id, "approved")
        result = await get_result(handle)
        with pytest.raises(robota.ExecutionStateError) as late:
            await respond(handle, request.id, "approved")
        assert late.value.code == "unknown_run"
    assert result.text == "done: sent 50"
    assert len(effects(tmp_path / "effects.txt")) == 1


async def test_an_answer_the_workflow_cannot_read_is_refused(client: Client, queue: str) -> None:
    async with serving(client, queue):
        handle = await start_agent_run(client, "asker", "m", task_queue=queue)
        (ask,) = (await until(handle, lambda s: bool(s.approvals))).approvals
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await handle.execute_update("robota.answer_approval", {"id": ask.id, "approved": 1})
        assert "approved: bool" in str(caught.value.cause)
        await approve(handle, ask.id, approved=False)
        result = await get_result(handle)
    assert result.status == "complete"


# ------------------------------------------------------------------ one loop


async def test_s21_get_result_raises_a_pending_ask_and_one_loop_drives_the_run(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "twice_asker", "l", task_queue=queue)
        with pytest.raises(InputRequired) as caught:
            await get_result(handle, stop_for_input=True, poll_interval=0.1)
        (ask,) = caught.value.approvals
        assert (ask.tool, dict(ask.arguments)) == ("record", {"text": "l-0"})
        assert caught.value.requests == ()
        assert ask.id in caught.value.message
        assert isinstance(caught.value, robota.ExecutionControlError)
        result, seen = await _drive(handle, None)
    assert seen == ["input_required True", "approval record"] * 2
    assert result.text.split() == ["done:", "recorded", "l-0", "recorded", "l-1"]


async def test_s40_get_result_raises_a_pending_outside_request_and_one_loop_answers_it(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "waiter", "pay", task_queue=queue)
        with pytest.raises(InputRequired) as caught:
            await get_result(handle, stop_for_input=True, poll_interval=0.1)
        (request,) = caught.value.requests
        assert (request.kind, request.payload, request.tool_name) == (
            "approval",
            {"amount": 50},
            "wire",
        )
        result, seen = await _drive(handle, "approved")
    assert seen == ["input_required True", "request wire"]
    assert result.text == "done: sent 50"


# ------------------------------------------------------------------ start options


async def test_start_agent_run_passes_timeouts_to_temporal(client: Client, queue: str) -> None:
    async with serving(client, queue):
        handle = await start_agent_run(
            client,
            "settings_echo",
            "hi",
            task_queue=queue,
            execution_timeout=timedelta(hours=2),
            run_timeout=3600,
            task_timeout=20.5,
        )
        await get_result(handle)
    config = (await handle.describe()).raw_description.execution_config
    assert config.workflow_execution_timeout.ToTimedelta() == timedelta(hours=2)
    assert config.workflow_run_timeout.ToTimedelta() == timedelta(hours=1)
    assert config.default_workflow_task_timeout.ToTimedelta() == timedelta(seconds=20.5)


async def test_start_agent_run_honours_the_id_reuse_and_conflict_policies(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    once = f"robota-once-{uuid.uuid4().hex}"
    held = f"robota-held-{uuid.uuid4().hex}"
    async with serving(client, queue):
        done = await start_agent_run(
            client,
            "settings_echo",
            "hi",
            task_queue=queue,
            id=once,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )
        await get_result(done)
        with pytest.raises(robota.ExecutionStateError) as reused:
            await start_agent_run(
                client,
                "settings_echo",
                "hi",
                task_queue=queue,
                id=once,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            )
        assert reused.value.code == "run_id_in_use"
        running = await start_agent_run(client, "asker", "h", task_queue=queue, id=held)
        (ask,) = (await until(running, lambda s: bool(s.approvals))).approvals
        with pytest.raises(robota.ExecutionStateError) as conflict:  # FAIL, Temporal's default
            await start_agent_run(client, "asker", "h", task_queue=queue, id=held)
        assert conflict.value.code == "run_id_in_use"
        same = await start_agent_run(
            client,
            "asker",
            "h",
            task_queue=queue,
            id=held,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
        assert same.first_execution_run_id == running.first_execution_run_id
        await approve(same, ask.id, approved=True)
        assert (await get_result(running)).text.split() == ["done:", "recorded", "h-0"]


async def _register_keyword(client: Client, name: str) -> None:
    request = AddSearchAttributesRequest(
        namespace=client.namespace,
        search_attributes={name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD},
    )
    try:
        await client.operator_service.add_search_attributes(request)
    except RPCError as error:
        if error.status != RPCStatusCode.ALREADY_EXISTS:  # another test registered it first
            raise


async def test_start_agent_run_sets_search_attributes(client: Client, queue: str) -> None:
    key = SearchAttributeKey.for_keyword("RobotaTenant")
    attributes = TypedSearchAttributes([SearchAttributePair(key, "robota-tenant-7")])
    unregistered = SearchAttributeKey.for_keyword(f"Nothing{uuid.uuid4().hex[:8]}")
    with pytest.raises(robota.ConfigurationError, match="search attribute"):
        await start_agent_run(
            client,
            "settings_echo",
            "hi",
            task_queue=queue,
            search_attributes=TypedSearchAttributes([SearchAttributePair(unregistered, "x")]),
        )
    await _register_keyword(client, "RobotaTenant")
    async with serving(client, queue):
        handle = await start_agent_run(
            client, "settings_echo", "hi", task_queue=queue, search_attributes=attributes
        )
        await get_result(handle)
    assert (await handle.describe()).typed_search_attributes.get(key) == "robota-tenant-7"


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("execution_timeout", 0, "execution_timeout must be a positive"),
        ("run_timeout", "1h", "run_timeout must be a positive"),
        ("task_timeout", timedelta(seconds=-1), "task_timeout must be a positive"),
        ("execution_timeout", True, "execution_timeout must be a positive"),
        ("id_reuse_policy", "reject", "WorkflowIDReusePolicy"),
        ("id_conflict_policy", 2, "WorkflowIDConflictPolicy"),
        ("search_attributes", {"CustomKeywordField": "x"}, "TypedSearchAttributes"),
    ],
)
async def test_start_agent_run_refuses_bad_start_options_before_reaching_the_server(
    client: Client, queue: str, option: str, value: object, says: str
) -> None:
    with pytest.raises(robota.ConfigurationError, match=says):
        await start_agent_run(client, "settings_echo", "hi", task_queue=queue, **{option: value})  # type: ignore[arg-type]


# ------------------------------------------------------------------ review regressions


async def test_s23_an_answer_cancelled_while_no_worker_takes_it_raises_cancelled_error(
    client: Client, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An update waits for a worker to take it; a host that gives up (asyncio.timeout, a task
    # group's cancel) must see asyncio's own cancellation, not the SDK's
    # WorkflowUpdateRPCTimeoutOrCancelledError, or asyncio.timeout never becomes TimeoutError.
    monkeypatch.setenv("ROBOTA_TEST_EFFECTS", str(tmp_path / "effects.txt"))
    async with serving(client, queue):
        handle = await start_agent_run(client, "asker", "z", task_queue=queue)
        (ask,) = (await until(handle, lambda s: bool(s.approvals))).approvals
    # No worker serves the run now: the update cannot be taken.
    answering = asyncio.ensure_future(approve(handle, ask.id, approved=True))
    await asyncio.sleep(0.5)  # the update's RPC is in flight (not a timing assertion)
    assert not answering.done()
    answering.cancel()
    with pytest.raises(asyncio.CancelledError):
        await answering
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await respond(handle, "req_x", "approved")
    async with serving(client, queue):
        await handle.cancel()
        result = await get_result(handle, poll_interval=0.1)
    assert result.status in ("interrupted", "complete")


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class EarlierReleaseWorkflow:
    """The control surface of ``robota.agent`` before issue 32: signals, no answer updates.

    A stand-in for a worker still running the previous release during a rolling deploy (its
    histories' replay under this code is ``test_replay_compat``).
    """

    def __init__(self) -> None:
        self.answers: list[Any] = []

    @workflow.run
    async def run(self, expected: Any) -> list[Any]:
        await workflow.wait_condition(lambda: len(self.answers) >= expected)
        return self.answers

    @workflow.signal(name="robota.approve")
    def approve(self, answer: Any) -> None:
        self.answers.append(answer)

    @workflow.signal(name="robota.respond")
    def respond(self, answer: Any) -> None:
        self.answers.append(answer)


async def test_answers_reach_a_run_on_a_worker_of_the_earlier_release(
    client: Client, queue: str
) -> None:
    # Rolling deploy: hosts upgraded before the workers. The update is unknown there, so the
    # answer goes as the earlier release's signal instead of failing every approve.
    async with Worker(client, task_queue=queue, workflows=[EarlierReleaseWorkflow]):
        handle = await client.start_workflow(
            WORKFLOW_NAME, 2, id=f"robota-old-{uuid.uuid4().hex}", task_queue=queue
        )
        await approve(handle, "approval_1", approved=True, reason="ok")
        await respond(handle, "req_1", {"by": "ops"})
        answers = await asyncio.wait_for(handle.result(), 60)  # a lost answer would hang
    assert answers == [
        {"id": "approval_1", "approved": True, "reason": "ok", "remember": False},
        {"request_id": "req_1", "response": {"by": "ops"}},
    ]
