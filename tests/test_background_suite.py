"""Tests pass however the suite is started, in the background included (issue 25).

A script's ``cmd &`` starts ``cmd`` with SIGINT and SIGQUIT ignored, ``nohup`` with SIGHUP
ignored, and an ignored disposition is inherited across fork and exec. Tests that send those
signals to children they start must therefore give the children the default action
(``childproc.default_signals``) — otherwise a child ignores the signal, and Python started with
SIGINT ignored never installs its own handler. This runs a representative of every such test in a
pytest started as ``nohup … &`` would start it.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
from typing import Final

import robota

ROOT: Final = pathlib.Path(__file__).resolve().parents[1]

# A fixed program: ignore the signals named in argv[1], then exec the rest, as a shell's `&` and
# `nohup` do before they run a command.
_IGNORE_THEN_EXEC: Final = """
import os, signal, sys
for number in sys.argv[1].split(","):
    signal.signal(int(number), signal.SIG_IGN)
os.execv(sys.argv[2], sys.argv[2:])
"""

REPRESENTATIVES: Final = (
    # SIGHUP, SIGTERM and SIGINT sent to children that must die by them (S08), and Python's own
    # SIGINT handler, which a child started with SIGINT ignored would never install.
    "tests/host/test_lifetime.py::test_s08_a_default_action_signal_runs_the_cleanups_then_kills_by_that_signal",
    "tests/host/test_lifetime.py::test_s08_sigint_is_taken_only_when_its_handler_is_the_default_action",
    "tests/host/test_lifetime.py::test_s08_pythons_own_sigint_handler_is_left_in_place",
    "tests/host/test_marker.py::test_s10_a_marker_is_released_when_sigterm_ends_its_process",
    # Ctrl-C sent to the `robota` command.
    "tests/cli/test_chat.py::test_ctrl_c_at_the_prompt_leaves_cleanly",
)

IGNORED: Final = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)


def test_signal_tests_pass_in_a_suite_started_with_sigint_sigquit_and_sighup_ignored() -> None:
    source_root = str(pathlib.Path(robota.__file__).resolve().parents[1])
    pytest_argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *REPRESENTATIVES,
    ]
    launcher = [
        sys.executable,
        "-S",
        "-c",
        _IGNORE_THEN_EXEC,
        ",".join(str(int(number)) for number in IGNORED),
        *pytest_argv,
    ]
    environment = {**os.environ, "PYTHONPATH": source_root}
    result = subprocess.run(
        launcher,
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        start_new_session=True,  # in the background for real: not this terminal's job
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert summary.startswith("6 passed"), summary  # the first representative has two cases
