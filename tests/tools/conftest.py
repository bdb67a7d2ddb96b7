"""Fixtures for the built-in tools: a real workspace on disk, and a way to call a tool directly."""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any, Protocol

import pytest

import robota


@pytest.fixture
def workspace(tmp_path: pathlib.Path) -> pathlib.Path:
    """An empty workspace directory, with a sibling ``outside`` directory holding a secret."""
    root = tmp_path / "work"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n")
    return root


class Call(Protocol):
    def __call__(self, tool: robota.Tool, /, **args: Any) -> robota.ToolResult: ...


def _call(tool: robota.Tool, /, **args: Any) -> robota.ToolResult:
    checked = tool.validate_arguments(args)
    ctx = robota.ToolContext(
        signal=robota.AbortController().signal, call_id="c1", tool_name=tool.name
    )
    result = asyncio.run(tool.execute(checked, ctx))
    assert isinstance(result, robota.ToolResult)
    return result


@pytest.fixture
def call() -> Call:
    """Run a tool with arguments as the executor would: validated, then executed."""
    return _call


@pytest.fixture(autouse=True)
def undo_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> pathlib.Path:
    """S08: the undo scratch of this test process lives under a session directory, not ``~``.

    The scratch directory is made once per process on first use, so every test in a worker
    points ``XDG_STATE_HOME`` at the same directory.
    """
    state = tmp_path_factory.getbasetemp() / "state"
    state.mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state
