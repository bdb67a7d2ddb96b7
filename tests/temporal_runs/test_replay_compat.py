"""Histories recorded by the previous release's workflow code replay under this code.

Issue 32 made ``approve``/``respond`` updates and kept the ``robota.approve`` and
``robota.respond`` signals for runs already in flight. A worker deployed with this code takes
over those runs and replays their histories: any change to the commands the workflow issues, or
to what an old signal does, would fail them with a nondeterminism error. The histories in
``histories/`` were recorded with main at 08dffba (before the change) on a real dev server:
``asker`` with its ask answered by the old signal, and ``waiter`` with one mistyped and one
real ``robota.respond`` signal.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle, WorkflowHistory

import robota
from robota.temporal import create_replayer, start_agent_run
from temporal_runs.agents import AGENTS, asker
from temporal_runs.test_agent_workflows import serving, until

HISTORIES = Path(__file__).parent / "histories"


@pytest.mark.parametrize("name", ["main-08dffba-approve-signal", "main-08dffba-respond-signal"])
async def test_a_run_answered_by_the_old_signals_replays_under_the_update_handlers(
    name: str,
) -> None:
    history = WorkflowHistory.from_json(name, (HISTORIES / f"{name}.json").read_text())
    replayer = create_replayer(AGENTS, namespace="default", build_id=f"compat-{name}")
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None


_FREED: list[int] = []


def _asker_after_a_collection() -> robota.Agent:
    # The factory runs inside the replayed workflow's activation: a full collection here frees
    # what stopped workers left behind at the worst moment, deterministically.
    before = _workflow_objects()
    gc.collect()
    _FREED.append(before - _workflow_objects())
    return asker()


def _workflow_objects() -> int:
    return sum(type(o).__name__ == "RobotaAgentWorkflow" for o in gc.get_objects())


async def test_S40_runs_a_stopped_worker_left_waiting_do_not_disturb_a_replay_in_its_process(
    client: Client, queue: str
) -> None:
    # A stopped worker hands its cached workflows to the garbage collector (the SDK does not
    # evict idle runs at shutdown). Collected during another workflow's activation, their
    # cleanup ran robota code in that workflow's context and took ids from its replayable
    # source: the replayed ask got another id than the recorded answer named, and the replay
    # failed with "No command scheduled for event ActivityTaskScheduled" (seen in CI).
    handles: list[WorkflowHandle[Any, Any]] = []
    gc.disable()  # the runs left behind must still be there when the replay's factory runs
    try:
        async with serving(client, queue):
            handles.extend(
                [await start_agent_run(client, "asker", "m", task_queue=queue) for _ in range(3)]
            )
            for handle in handles:
                await until(handle, lambda state: bool(state.approvals))
        _FREED.clear()
        name = "main-08dffba-approve-signal"
        history = WorkflowHistory.from_json(name, (HISTORIES / f"{name}.json").read_text())
        agents = {**AGENTS, "asker": _asker_after_a_collection}
        replayer = create_replayer(agents, namespace="default", build_id="compat-stranded")
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert _FREED[0] >= 3  # the three runs the stopped worker left were closed in the replay
        assert result.replay_failure is None
    finally:
        gc.enable()
        for handle in handles:
            await handle.terminate("test over")
