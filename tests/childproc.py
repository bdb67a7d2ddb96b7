"""Helpers for tests that run real Python child processes (importable: ``tests`` is on the path).

Children start with the default action for the signals the tests send (:func:`default_signals`):
a suite started in the background (``cmd &`` in a script ignores SIGINT and SIGQUIT) or under
``nohup`` (SIGHUP) must not hand those ignored dispositions to the processes it tests.
"""

from __future__ import annotations

import pathlib
import signal
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from typing import Final

import pytest

DEFAULT_SIGNALS: Final = tuple(
    int(getattr(signal, name)) for name in ("SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM")
)
"""The signals the tests send to their children, which a child must receive as a person's would."""

# A fixed program: reset DEFAULT_SIGNALS (given as argv[1]), optionally take the terminal on
# stdin as the controlling one (argv[2] == "tty", in a new session), then exec the real command.
# An exec'd program keeps ignored dispositions, so the reset must happen between the two: a tiny
# interpreter does it (no preexec_fn: it is not safe in a process with threads, and the test
# process has them).
_LAUNCHER: Final = """
import os, signal, sys
for number in sys.argv[1].split(","):
    signal.signal(int(number), signal.SIG_DFL)
if sys.argv[2] == "tty":
    import fcntl, termios
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
os.execv(sys.argv[3], sys.argv[3:])
"""


def default_signals(argv: Sequence[str], *, controlling_tty: bool = False) -> list[str]:
    """``argv`` run so that it starts with :data:`DEFAULT_SIGNALS` at their default action.

    With ``controlling_tty``, the terminal on the child's stdin also becomes its controlling
    terminal (start it with ``start_new_session=True``): Ctrl-C typed there reaches it as SIGINT.
    ``argv[0]`` must be a path (it is exec'd without a PATH search).
    """
    numbers = ",".join(str(number) for number in DEFAULT_SIGNALS)
    mode = "tty" if controlling_tty else "-"
    return [sys.executable, "-S", "-c", _LAUNCHER, numbers, mode, *argv]


def spawn(code: str, *args: str) -> subprocess.Popen[str]:
    """Start ``python -c code args…`` with all three standard streams piped."""
    return subprocess.Popen(
        default_signals([sys.executable, "-c", textwrap.dedent(code), *args]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def first_line(child: subprocess.Popen[str]) -> str:
    """The child's first line of output; fails the test with its stderr if it printed none."""
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if not line:
        _, err = child.communicate(timeout=30)
        pytest.fail(f"child said nothing; stderr: {err}")
    return line


def finish(child: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Wait for the child; its exit code, stdout and stderr."""
    out, err = child.communicate(timeout=60)
    return child.returncode, out, err


def alive(pid: int) -> bool:
    """Running (a killed process this sandbox's init has not reaped yet is a zombie: not alive)."""
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
