"""Issue 29: a journaled handoff survives SIGKILL at every boundary of both agents (S40).

``handoff_crash_worker.py`` runs ``triage`` (one batch: effect ``a`` and ``transfer_to_billing``)
handing off to ``billing`` (effect ``b``, then its reply), journaled in SQLite. Killed at a
boundary of either agent, then recovered by a new process built with the same agents, the
execution must finish on ``billing`` with the history an uncrashed run has and every external
effect exactly once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

WORKER = Path(__file__).with_name("handoff_crash_worker.py")
SRC = Path(__file__).resolve().parents[2] / "src"

# Across both agents: triage's reply and effect, the transfer's settlement, billing's first
# model call, its effect (inside the body too) and the final checkpoint.
KILL_POINTS = (
    "execution_started:1:after",
    "model_call_settled:1:after",
    "effect_settled:1:after",
    "body:1",
    "effect_settled:2:after",
    "model_call_started:2:after",
    "model_call_settled:2:after",
    "body:2",
    "effect_settled:3:after",
    "model_call_settled:3:after",
    "checkpoint:1:before",
)


def _worker(mode: str, journal: Path, eid: str, effects: Path, kill: str = "") -> tuple[int, Any]:
    args = [sys.executable, str(WORKER), mode, str(journal), eid, str(effects)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [*args, kill] if kill else args,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, json.loads(lines[-1]) if lines else done.stderr


def _labels(effects: Path) -> Counter[str]:
    lines = effects.read_text(encoding="utf-8").splitlines() if effects.exists() else []
    return Counter(line.partition(" ")[2] for line in lines)


@pytest.fixture(scope="module")
def uncrashed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    where = tmp_path_factory.mktemp("uncrashed")
    code, report = _worker("run", where / "j.db", "base", where / "base.effects")
    assert code == 0, report
    assert _labels(where / "base.effects") == Counter({"a": 1, "b": 1})
    return dict(report)


def test_an_uncrashed_journaled_handoff_finishes_on_the_receiver(
    uncrashed: dict[str, Any],
) -> None:
    assert uncrashed["statuses"] == ["complete"]
    assert uncrashed["agent"] == "billing"
    assert uncrashed["output"].startswith("done: did a, Transferred to 'billing'")
    assert uncrashed["output"].endswith(", did b")
    assert uncrashed["by_agent"] == ["billing", "triage"]


@pytest.mark.parametrize("kill", KILL_POINTS)
def test_s40_sigkill_anywhere_in_a_handoff_then_recover_repeats_no_effect(
    tmp_path: Path, kill: str, uncrashed: dict[str, Any]
) -> None:
    journal = tmp_path / "j.db"
    eid = f"handoff-{uuid.uuid4().hex[:8]}"
    effects = tmp_path / f"{eid}.effects"
    code, report = _worker("run", journal, eid, effects, kill)
    assert code == -9, report  # SIGKILL
    code, report = _worker("recover", journal, eid, effects)
    assert code == 0, report
    assert report["statuses"][-1] == "complete"
    assert (report["output"], report["agent"]) == (uncrashed["output"], "billing")
    assert report["history"] == uncrashed["history"]
    assert _labels(effects) == Counter({"a": 1, "b": 1})  # every effect exactly once
