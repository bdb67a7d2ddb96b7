"""Every example in examples/ runs and prints what its docstring promises."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
EXPECTED = {
    "quickstart.py": ["tool add -> 42.0", "2 + 40 = 42.", "complete, 2 model calls"],
    "cancel_long_running_tool.py": ["status: interrupted", "stopped after"],
    # S40: killed mid-booking, reconciled from the file, resumed: one booking.
    "durable_booking.py": [
        "worker exited with -9",
        "reconciliation needed for book_flight",
        "status: complete",
        "bookings in file: 1",
    ],
    # With no server at its URL (none runs on this port here) it says how to start one; the
    # run against a real llama-server is in tests/providers/llama/test_local_model_example.py.
    "local_model.py": ["no server answers at", "llama-server"],
    # Issue 29: a supervisor with workers as tools; a map-reduce flow (robota.agents).
    "supervisor.py": [
        "Done: The Moon pulls",
        "complete, finished by supervisor",
        "supervisor/researcher: ",
        "supervisor/writer: ",
    ],
    "map_reduce.py": [
        "Mixed: praised battery and value",
        "complete: 5 steps, 5 model calls",
        "map_reduce/summariser[2]: good value",
        "summariser: 3 run(s)",
    ],
    # Issue 17: a worker killed mid-booking on Temporal; reconciled, rerun once: one booking.
    "temporal_agents.py": [
        "worker running book_flight killed (-9)",
        "reconciliation needed for book_flight",
        "status: complete",
        "bookings in file: 1",
    ],
}
ENVIRONMENT = {"local_model.py": {"LOCAL_MODEL_URL": "http://127.0.0.1:9/v1"}}


def test_every_example_has_expectations() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name: str) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        env={**os.environ, **ENVIRONMENT.get(name, {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for expected in EXPECTED[name]:
        assert expected in result.stdout
