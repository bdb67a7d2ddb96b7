"""S39/S40 a journaled compaction across a SIGKILL: resumed, its model call not repeated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

WORKER = Path(__file__).with_name("compaction_worker.py")
TESTS = Path(__file__).resolve().parents[1]
SRC = TESTS.parent / "src"


def _run(mode: str, tmp: Path, turns: int) -> tuple[int, Any]:
    done = subprocess.run(
        [
            sys.executable,
            str(WORKER),
            mode,
            str(tmp / "sessions.db"),
            str(tmp / "journal.db"),
            str(tmp),
            str(turns),
        ],
        check=False,
        env={**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{TESTS}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    lines = done.stdout.strip().splitlines()
    return done.returncode, json.loads(lines[-1]) if done.returncode == 0 else None


def _calls(tmp: Path) -> list[str]:
    return (tmp / "calls").read_text().splitlines()


def test_s40_a_compaction_killed_after_its_summary_call_resumes_without_repeating_it(
    tmp_path: Path,
) -> None:
    code, _ = _run("kill", tmp_path, 10)
    assert code == -signal.SIGKILL
    before = _calls(tmp_path)
    assert before[-1] == "summary"  # killed right after the summary call was journaled
    assert before.count("summary") == 1
    code, report = _run("turn", tmp_path, 1)
    assert code == 0
    after = _calls(tmp_path)[len(before) :]
    assert report["head_marked"] is True
    numbers = [number for number, _, _ in report["compactions"]]
    assert numbers == list(range(len(numbers)))
    assert report["compactions"][0][2] == "summary 1"  # the answer the journal kept
    # Compaction 0 was resumed from the journal; only later compactions called the model.
    assert after.count("summary") == len(numbers) - 1
    assert after[-2:] == ["tool", "answer"]
