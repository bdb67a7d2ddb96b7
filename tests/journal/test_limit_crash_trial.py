"""Issue 28: a usage limit survives SIGKILL (S31, S40).

``crash_worker.py``'s ``limited`` scenario runs the three-call ``tools`` execution with
``limits=UsageLimits(requests=2)`` given to the run only. Killed at a boundary, then recovered by a
new process whose agent has no limits at all, the execution must still stop before its third model
call — counting the calls the killed process made — with every effect exactly once.
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

WORKER = Path(__file__).with_name("crash_worker.py")
SRC = Path(__file__).resolve().parents[2] / "src"

# Boundaries across both model calls and all three effects; body:3 leaves an effect the journal
# cannot prove (the recovering host settles it from the effects file).
KILL_POINTS = (
    "model_call_settled:1:after",
    "effect_settled:2:after",
    "model_call_started:2:after",
    "model_call_settled:2:after",
    "body:3",
    "effect_settled:3:after",
)


def _worker(mode: str, journal: str, eid: str, effects: Path, kill: str = "") -> tuple[int, Any]:
    args = [sys.executable, str(WORKER), mode, "limited", journal, eid, str(effects)]
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


def _model_calls(effects: Path) -> list[str]:
    log = effects.with_name(effects.name + ".model")
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_S31_uncrashed_limited_run_stops_before_its_third_model_call(tmp_path: Path) -> None:
    effects = tmp_path / "base.effects"
    code, report = _worker("run", f"sqlite:{tmp_path / 'j.db'}", "base", effects)
    assert code == 0, report
    assert report["limit"] == {"limit": "requests", "requests": 2}
    assert _model_calls(effects) == ["after 0 results", "after 2 results"]
    assert _labels(effects) == Counter({"a": 1, "b": 1, "c": 1})


@pytest.mark.parametrize("kill", KILL_POINTS)
def test_S40_sigkill_then_resume_keeps_the_limit_counting_the_calls_before_the_crash(
    tmp_path: Path, kill: str
) -> None:
    journal = f"sqlite:{tmp_path / 'j.db'}"
    eid = f"limited-{uuid.uuid4().hex[:8]}"
    effects = tmp_path / f"{eid}.effects"
    code, report = _worker("run", journal, eid, effects, kill)
    assert code == -9, report  # SIGKILL
    code, report = _worker("recover", journal, eid, effects)
    assert code == 0, report
    # The recovering agent has no limits: the journal's kept the run's, and counted its calls.
    assert report["limit"] == {"limit": "requests", "requests": 2}
    assert _model_calls(effects) == ["after 0 results", "after 2 results"]
    assert _labels(effects) == Counter({"a": 1, "b": 1, "c": 1})  # no effect twice
    assert report["history"][-1][0] == "tool"  # stopped after the last batch, before a call
