"""Ctrl-C while a tool runs, typed in a real pseudo-terminal (issue 25).

The first Ctrl-C cancels the turn and says which tool it is waiting for; the second stops
waiting: the tool's result is recorded as interrupted and `run` exits 130, `chat` comes back to
its prompt. The tools sleep 20 s; the tests prove the command does not wait for them.
"""

from __future__ import annotations

import pathlib
import time

import pytest

from cli._support import Terminal, chat_sse, robota, tool_call_sse
from providers.replay import Exchange, ReplayServer

SLOW_TOOLS = '''
import asyncio, os, signal, sys, time

import robota


def sleep(seconds: int) -> str:
    """Sleep in this process, ignoring every signal a tool could observe.

    Args:
        seconds: How long.
    """
    open(os.environ["TOOL_STARTED"], "w").write(str(os.getpid()))
    time.sleep(seconds)
    return "slept"


async def sleep_in_child(seconds: int) -> str:
    """Sleep in a child process that leads its own process group.

    Args:
        seconds: How long.
    """
    process = await asyncio.create_subprocess_exec("sleep", str(seconds), start_new_session=True)
    try:
        open(os.environ["TOOL_STARTED"], "w").write(str(process.pid))
        await process.wait()
    finally:
        if process.returncode is None:  # stopped waiting for: end what this tool started
            os.killpg(process.pid, signal.SIGKILL)
    return "slept"
'''

BOUND = 10.0  # seconds after the second Ctrl-C: far less than the tool's 20 s


@pytest.fixture
def started_file(tmp_path: pathlib.Path, workdir: pathlib.Path) -> pathlib.Path:
    (workdir / "slowtools.py").write_text(SLOW_TOOLS)
    return tmp_path / "tool-started"


def _group_alive(pgid: int) -> bool:
    """Whether any process of group `pgid` still runs (a zombie does not)."""
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _wait_for_file(path: pathlib.Path, terminal: Terminal) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        assert terminal.poll() is None, terminal.text
        time.sleep(0.02)
    raise AssertionError(f"the tool never started; terminal: {terminal.text!r}")


def _args(command: str, server: ReplayServer, tool: str, *prompt: str) -> list[str]:
    return [
        command,
        *prompt,
        "--model",
        "openai-compatible:gpt-4o-mini",
        "--base-url",
        server.base_url + "/v1",
        "--tools",
        f"slowtools:{tool}",
    ]


@pytest.mark.parametrize("tool", ["sleep", "sleep_in_child"])
def test_run_first_ctrl_c_waits_for_the_named_tool_second_stops_waiting_and_exits_130(
    workdir: pathlib.Path, env: dict[str, str], started_file: pathlib.Path, tool: str
) -> None:
    script = [Exchange.sse(tool_call_sse(tool, '{"seconds": 20}'))]
    with ReplayServer(script) as server:
        terminal = Terminal(
            _args("run", server, tool, "nap"),
            env={**env, "TOOL_STARTED": str(started_file)},
            cwd=workdir,
        )
        try:
            pid = _wait_for_file(started_file, terminal)
            terminal.ctrl_c()
            terminal.wait_for(
                f"Stopping: waiting for tool '{tool}' to finish (Ctrl-C again to stop waiting)"
            )
            assert terminal.poll() is None  # the first Ctrl-C waits for the tool
            terminal.ctrl_c()
            pressed = time.monotonic()
            code = terminal.wait(timeout=30)
            elapsed = time.monotonic() - pressed
        finally:
            terminal.close()
        assert len(server.requests) == 1  # no model call after the interruption
    assert code == 130, terminal.text
    assert elapsed < BOUND, terminal.text
    assert f"Stopped waiting for tool '{tool}'" in terminal.text
    assert "[interrupted] Interrupted by user while this tool was running" in terminal.text
    assert "Traceback" not in terminal.text
    if tool == "sleep_in_child":
        assert not _group_alive(pid)  # the tool's process group was killed


def test_chat_second_ctrl_c_stops_waiting_and_the_session_goes_on(
    workdir: pathlib.Path, env: dict[str, str], started_file: pathlib.Path
) -> None:
    script = [
        Exchange.sse(tool_call_sse("sleep_in_child", '{"seconds": 20}')),
        Exchange.sse(chat_sse("awake again")),
    ]
    with ReplayServer(script) as server:
        terminal = Terminal(
            _args("chat", server, "sleep_in_child"),
            env={**env, "TOOL_STARTED": str(started_file)},
            cwd=workdir,
        )
        try:
            terminal.wait_for("you> ")
            terminal.type("nap\n")
            pid = _wait_for_file(started_file, terminal)
            terminal.ctrl_c()
            terminal.wait_for("Stopping: waiting for tool 'sleep_in_child' to finish")
            terminal.ctrl_c()
            pressed = time.monotonic()
            terminal.wait_for("you> ", count=2, timeout=BOUND)  # the prompt is back
            assert time.monotonic() - pressed < BOUND
            assert terminal.poll() is None  # the session goes on
            assert not _group_alive(pid)
            terminal.type("still there?\n")
            terminal.wait_for("awake again")
            terminal.wait_for("you> ", count=3)
            terminal.ctrl_c()  # at the idle prompt: leaves
            code = terminal.wait(timeout=30)
        finally:
            terminal.close()
        second = server.requests[1].json()["messages"]
    assert code == 0, terminal.text
    assert "Traceback" not in terminal.text
    # History answers the call, as interrupted while running, and the next turn carries it.
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "user"]
    assert second[2]["content"].startswith("Interrupted by user while this tool was running")


@pytest.mark.parametrize(
    ("command", "ending"),
    [
        ("run", "and the command exits with 130 at once"),
        ("chat", "and the prompt comes back"),
    ],
)
def test_the_help_of_run_and_chat_says_what_ctrl_c_does(
    workdir: pathlib.Path, env: dict[str, str], command: str, ending: str
) -> None:
    result = robota([command, "--help"], env=env, cwd=workdir)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert (
        "If a tool is running, the first Ctrl-C says it is waiting for that tool (naming it) to "
        "finish; a second Ctrl-C stops waiting: the tool's result is recorded as interrupted "
        f"{ending}."
    ) in text
