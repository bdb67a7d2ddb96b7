"""Fixtures shared by the host tests (real processes, real file modes)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest


@pytest.fixture
def umask_zero() -> Iterator[None]:
    """Run with umask 0 so a mode that is right must come from creation, not from the umask."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def reaped() -> Iterator[list[subprocess.Popen[str]]]:
    """Children appended here are killed (if still running) and reaped after the test."""
    children: list[subprocess.Popen[str]] = []
    yield children
    for child in children:
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=30)
