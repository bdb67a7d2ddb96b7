"""`make test-fast` runs no test that needs a service, and cannot start one by accident.

Issue 25: the fast target runs `pytest -m "not service"` with ROBOTA_TEST_FAST=1. A test that
requests a service fixture is marked `service` at collection (tests/conftest.py); a test that
reaches a service without the mark fails loudly in a fast run instead of starting it.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _pytest(*args: str, fast: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"ROBOTA_TEST_FAST", "PYTEST_ADDOPTS"}}
    env.pop("ROBOTA_TEST_POSTGRES_DSN", None)
    if fast:
        env["ROBOTA_TEST_FAST"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--no-cov", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _collected(*args: str) -> set[str]:
    done = _pytest("--collect-only", "-q", *args, fast=False)
    assert done.returncode in {0, 5}, done.stdout + done.stderr
    return {line.split("::", 1)[1] for line in done.stdout.splitlines() if "::" in line}


def test_tests_requesting_a_service_are_marked_and_left_out_of_the_fast_selection() -> None:
    files = ("tests/providers/llama/test_tiny_model.py", "tests/journal/test_crash_trials.py")
    service = _collected("-m", "service", *files)
    fast = _collected("-m", "not service", *files)
    assert not service & fast
    # Requested directly, and through another fixture (`client` needs `llama_server`).
    assert "test_server_answers_health_and_models" in service
    assert "test_tools_offered_yields_a_tool_call" in service
    # A test of the same file that needs no server stays in the fast selection.
    assert "test_model_file_is_small_and_quick_to_write" in fast
    # A parametrised fixture marks only its service parameter.
    assert "test_s40_sigkill_at_every_boundary_on_postgres[tools]" in service
    assert "test_s40_sigkill_at_every_boundary_on_sqlite[tools]" in fast
    assert any(name.endswith("[postgres]") for name in service)
    assert any(name.endswith("[sqlite]") for name in fast)
    assert not any(name.endswith("[postgres]") for name in fast)


@pytest.mark.parametrize(
    ("test_file", "service"),
    [
        ("tests/journal/test_postgres_journal.py", "PostgreSQL"),
        ("tests/providers/llama/test_tiny_model.py", "llama-server"),
        ("tests/temporal_runs/test_agent_workflows.py", "Temporal"),
    ],
)
def test_a_service_reached_in_a_fast_run_fails_loudly(test_file: str, service: str) -> None:
    """Run a service test without deselecting it: it errors at once, naming the mark it needs."""
    done = _pytest("-x", "-q", "-m", "service", test_file, fast=True)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "ServiceInFastRunError" in output
    assert service in output
    assert "needs the `service` mark" in output
