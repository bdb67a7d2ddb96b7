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

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from robota.temporal import create_replayer
from temporal_runs.agents import AGENTS

HISTORIES = Path(__file__).parent / "histories"


@pytest.mark.parametrize("name", ["main-08dffba-approve-signal", "main-08dffba-respond-signal"])
async def test_a_run_answered_by_the_old_signals_replays_under_the_update_handlers(
    name: str,
) -> None:
    history = WorkflowHistory.from_json(name, (HISTORIES / f"{name}.json").read_text())
    replayer = create_replayer(AGENTS, namespace="default", build_id=f"compat-{name}")
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None
