"""Helpers for tests that run real Python child processes (importable: ``tests`` is on the path)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap

import pytest


def spawn(code: str, *args: str) -> subprocess.Popen[str]:
    """Start ``python -c code args…`` with all three standard streams piped."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
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
