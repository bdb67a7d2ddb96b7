"""`robota chat --tools builtin --workspace DIR`: the terminal coding agent (issue 30, item 2).

The real command runs as a child process against the replay server on 127.0.0.1 (a scripted
model: each request gets the next scripted reply). The piped tests read stdout/stderr; the tmux
tests type into a real terminal (a tmux server of their own per test) and read the pane.
"""

from __future__ import annotations

import json
import pathlib
import re
import secrets
import subprocess
import time
from collections.abc import Callable

import pytest

from cli._support import Child, Tmux, chat_sse, robota, tool_call_sse
from providers.replay import Exchange, ReplayServer

# A write tool (risk "modify", its rules scoped to `path`, S12) whose result view carries a
# unified diff like the built-in edit tools' FileChange; and a long tool that stops when the
# run is cancelled (S23), as the shell tool kills its command.
AGENT_TOOLS = '''
import asyncio, difflib, os
from dataclasses import dataclass

import robota


@dataclass(frozen=True)
class Change:
    path: str
    diff: str


@robota.tool(risk="modify", argument=robota.PermissionArgument("path", "path"))
def write_note(path: str, text: str) -> robota.ToolResult:
    """Write a note file in the workspace.

    Args:
        path: The file, relative to the workspace.
        text: Its new content.
    """
    target = os.path.join(os.environ["NOTE_ROOT"], path)
    old = open(target).read() if os.path.exists(target) else ""
    with open(target, "w") as handle:
        handle.write(text + "\\n")
    diff = "".join(
        difflib.unified_diff(
            old.splitlines(True), [text + "\\n"], f"a/{path}", f"b/{path}"
        )
    )
    return robota.ToolResult(content=f"wrote {path}", view=Change(path, diff))


@robota.tool(risk="inspect")
async def wait_long(seconds: int, ctx: robota.ToolContext) -> str:
    """Wait, stopping early when the run is cancelled.

    Args:
        seconds: How long.
    """
    open(os.environ["NOTE_ROOT"] + "/wait-started", "w").close()
    try:
        await asyncio.wait_for(ctx.signal.wait(), seconds)
    except TimeoutError:
        return "waited"
    return "stopped early"
'''


@pytest.fixture
def workspace(tmp_path: pathlib.Path, workdir: pathlib.Path) -> pathlib.Path:
    """The agent's workspace (not the command's working directory), with one note in it."""
    (workdir / "agenttools.py").write_text(AGENT_TOOLS)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("the note says hi\n")
    return root


def _args(server: ReplayServer, workspace: pathlib.Path, *extra: str) -> list[str]:
    return [
        "chat",
        "--model",
        "openai-compatible:m",
        "--base-url",
        server.base_url + "/v1",
        "--tools",
        "builtin",
        "--workspace",
        str(workspace),
        *extra,
    ]


def _env(env: dict[str, str], workspace: pathlib.Path) -> dict[str, str]:
    return {**env, "NOTE_ROOT": str(workspace)}


# --- flags -----------------------------------------------------------------------------------


def test_workspace_without_builtin_tools_is_a_usage_error(
    workdir: pathlib.Path, env: dict[str, str], tmp_path: pathlib.Path
) -> None:
    result = robota(
        [
            "chat",
            "--model",
            "openai-compatible:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--workspace",
            str(tmp_path),
        ],
        env=env,
        cwd=workdir,
        input="/exit\n",
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --workspace sets the root of the built-in tools; add --tools builtin (or drop "
        "--workspace)"
    ]


def test_a_missing_workspace_is_a_usage_error(
    workdir: pathlib.Path, env: dict[str, str], tmp_path: pathlib.Path
) -> None:
    missing = tmp_path / "nowhere"
    result = robota(
        [
            "chat",
            "--model",
            "openai-compatible:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--tools",
            "builtin",
            "--workspace",
            str(missing),
        ],
        env=env,
        cwd=workdir,
        input="/exit\n",
    )
    assert result.returncode == 2
    assert f"error: --workspace {str(missing)!r} is not an existing directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_builtin_read_runs_in_the_workspace_without_asking(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path
) -> None:
    # S21 default mode: an inspect-class tool runs without a prompt.
    script = [
        Exchange.sse(tool_call_sse("Read", json.dumps({"path": "notes.txt"}))),
        Exchange.sse(chat_sse("It says hi.")),
    ]
    with ReplayServer(script) as server:
        result = robota(
            _args(server, workspace), env=env, cwd=workdir, input="read the note\n/exit\n"
        )
        server.assert_all_served()
        tool_message = server.requests[1].json()["messages"][-1]
    assert result.returncode == 0, result.stderr
    assert "-> Read(path='notes.txt')" in result.stderr
    assert "allow" not in result.stderr
    assert "the note says hi" in tool_message["content"]
    assert f"workspace: {workspace}" in result.stderr


def test_builtin_tools_ask_before_a_write_in_the_default_mode_and_show_its_diff(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path
) -> None:
    # S21: --tools builtin with no --permission-mode gates in default mode: a modify-class call
    # asks; the prompt names the rule-scoped argument (S12) first.
    script = [
        Exchange.sse(tool_call_sse("write_note", json.dumps({"text": "hello", "path": "a.txt"}))),
        Exchange.sse(chat_sse("Wrote it.")),
    ]
    with ReplayServer(script) as server:
        result = robota(
            _args(server, workspace, "--tools", "agenttools:write_note"),
            env=_env(env, workspace),
            cwd=workdir,
            input="write a\ny\n/exit\n",
        )
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    assert "allow write_note(path='a.txt', text='hello')?" in result.stderr
    assert (workspace / "a.txt").read_text() == "hello\n"
    # Not a terminal: the diff is plain text, no escape codes.
    assert "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hello\n" in result.stderr
    assert "\x1b[" not in result.stderr


def test_always_is_remembered_for_the_rest_of_the_session(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path
) -> None:
    arguments = json.dumps({"path": "a.txt", "text": "again"})
    script = [
        Exchange.sse(tool_call_sse("write_note", arguments, call_id="call_1")),
        Exchange.sse(chat_sse("Once.")),
        Exchange.sse(tool_call_sse("write_note", arguments, call_id="call_2")),
        Exchange.sse(chat_sse("Twice.")),
    ]
    with ReplayServer(script) as server:
        result = robota(
            _args(server, workspace, "--tools", "agenttools:write_note"),
            env=_env(env, workspace),
            cwd=workdir,
            input="write\na\nwrite again\n/exit\n",
        )
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("allow write_note(") == 1  # the second call was not asked
    assert result.stderr.count("<- wrote a.txt") == 2


def test_always_holds_for_a_command_no_rule_can_name(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path
) -> None:
    # S21: the gate keeps "always" as an allow rule only when a rule can name the call exactly;
    # one with a redirection cannot be (the gate remembers nothing). The prompt offered `a`, so
    # the chat itself keeps the consent for this exact call for the rest of the session.
    append = json.dumps({"command": "echo run >> runs.txt"})
    script = [
        Exchange.sse(tool_call_sse("Bash", append, call_id="c1")),
        Exchange.sse(chat_sse("Once.")),
        Exchange.sse(tool_call_sse("Bash", append, call_id="c2")),
        Exchange.sse(chat_sse("Twice.")),
        Exchange.sse(tool_call_sse("Bash", json.dumps({"command": "echo other >> runs.txt"}))),
        Exchange.sse(chat_sse("Not the same.")),
    ]
    with ReplayServer(script) as server:
        result = robota(
            _args(server, workspace),
            env=env,
            cwd=workdir,
            input="append\na\nappend again\nanother\nn\n/exit\n",
        )
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("allow Bash(command='echo run >> runs.txt')?") == 1
    assert result.stderr.count("allow Bash(command='echo other >> runs.txt')?") == 1
    assert (workspace / "runs.txt").read_text() == "run\nrun\n"


def test_slash_commands_are_never_sent_to_the_model(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path
) -> None:
    with ReplayServer([]) as server:
        result = robota(
            _args(server, workspace),
            env=env,
            cwd=workdir,
            input="/frobnicate now\n/help\n/cost\n/undo\n/exit\n",
        )
        assert server.requests == []
    assert result.returncode == 0, result.stderr
    assert "error: unknown command /frobnicate: /help lists the commands" in result.stderr
    for command in ("/help", "/cost", "/undo", "/exit"):
        assert f"\n{command} " in result.stderr
    assert "this chat: 0 in + 0 out = 0 tokens in 0 turns; cost $0.000000" in result.stderr
    assert "nothing to undo" in result.stderr


def test_undo_without_builtin_tools_says_so(workdir: pathlib.Path, env: dict[str, str]) -> None:
    with ReplayServer([]) as server:
        result = robota(
            ["chat", "--model", "openai-compatible:m", "--base-url", server.base_url + "/v1"],
            env=env,
            cwd=workdir,
            input="/undo\n/exit\n",
        )
    assert result.returncode == 0, result.stderr
    assert "error: /undo works with --tools builtin: nothing to undo" in result.stderr


def test_cost_adds_up_the_turns_of_the_chat(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path
) -> None:
    script = [
        Exchange.sse(chat_sse("one", usage=(10, 5))),
        Exchange.sse(chat_sse("two", usage=(30, 7))),
    ]
    with ReplayServer(script) as server:
        result = robota(
            _args(server, workspace),
            env=env,
            cwd=workdir,
            input="first\nsecond\n/cost\n/exit\n",
        )
    assert result.returncode == 0, result.stderr
    assert (
        "this chat: 40 in + 12 out = 52 tokens in 2 turns; cost unknown (the model has no known "
        "price)" in result.stderr
    )


# --- tmux: a person at a real terminal ------------------------------------------------------


def _pane(
    server: ReplayServer,
    workspace: pathlib.Path,
    workdir: pathlib.Path,
    env: dict[str, str],
    tmp_path: pathlib.Path,
    *extra: str,
) -> Tmux:
    return Tmux(
        _args(
            server,
            workspace,
            "--tools",
            "agenttools:write_note",
            "--tools",
            "agenttools:wait_long",
            *extra,
        ),
        env={**_env(env, workspace), "TERM": "xterm-256color"},
        cwd=workdir,
        directory=tmp_path,
    )


def test_tmux_a_read_call_is_shown_with_its_arguments_and_cost_and_exit_work(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    script = [
        Exchange.sse(tool_call_sse("Read", json.dumps({"path": "notes.txt"}))),
        Exchange.sse(chat_sse("The note says hi.")),
    ]
    with ReplayServer(script) as server:
        pane = _pane(server, workspace, workdir, env, tmp_path)
        try:
            pane.wait_for("you> ")
            pane.type_line("what does the note say?")
            screen = pane.wait_for("The note says hi.")
            assert "-> Read(path='notes.txt')" in screen
            assert "allow" not in screen  # S21: a read runs without a prompt
            pane.wait_for("you> ", count=2)
            pane.type_line("/cost")
            pane.wait_for("this chat: 10 in + 5 out = 15 tokens in 1 turn")
            pane.type_line("/exit")
            pane.wait_exit(timeout=10)
        finally:
            pane.close()
        server.assert_all_served()


def test_tmux_a_permission_prompt_answered_yes_then_no(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    script = [
        Exchange.sse(
            tool_call_sse("write_note", json.dumps({"path": "a.txt", "text": "hi"}), call_id="c1")
        ),
        Exchange.sse(chat_sse("Wrote a.")),
        Exchange.sse(
            tool_call_sse("write_note", json.dumps({"path": "b.txt", "text": "no"}), call_id="c2")
        ),
        Exchange.sse(chat_sse("Did not write b.")),
    ]
    with ReplayServer(script) as server:
        pane = _pane(server, workspace, workdir, env, tmp_path)
        try:
            pane.wait_for("you> ")
            pane.type_line("write a")
            pane.wait_for("allow write_note(path='a.txt', text='hi')?")
            pane.type_line("y")
            screen = pane.wait_for("Wrote a.")
            assert "+++ b/a.txt" in screen
            assert "\n+hi\n" in screen
            # A terminal: the added line is green (SGR 32), the hunk header cyan (36).
            coloured = pane.screen(escapes=True)
            assert "\x1b[32m+hi\n" in coloured
            assert re.search(r"\x1b\[36m(\x1b\[\d+m)*@@ -0,0 \+1 @@", coloured)
            pane.wait_for("you> ", count=2)
            pane.type_line("write b")
            pane.wait_for("allow write_note(path='b.txt', text='no')?")
            pane.type_line("n")
            screen = pane.wait_for("Did not write b.")
            assert "<- [refused] The user declined this call" in screen
            pane.type_line("/exit")
            pane.wait_exit(timeout=10)
        finally:
            pane.close()
        server.assert_all_served()
    assert (workspace / "a.txt").read_text() == "hi\n"
    assert not (workspace / "b.txt").exists()


def _wait_for_file(path: pathlib.Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was not created"
        time.sleep(0.02)


def test_tmux_ctrl_c_during_a_long_tool_cancels_the_turn_and_the_prompt_returns(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    # S23: the abort reaches the running tool, which stops; the turn ends interrupted.
    script = [
        Exchange.sse(tool_call_sse("wait_long", json.dumps({"seconds": 60}))),
        Exchange.sse(chat_sse("back again")),
    ]
    with ReplayServer(script) as server:
        pane = _pane(server, workspace, workdir, env, tmp_path)
        try:
            pane.wait_for("you> ")
            pane.type_line("wait a minute")
            pane.wait_for("-> wait_long(seconds=60)")
            _wait_for_file(workspace / "wait-started")  # the body is running
            pane.keys("C-c")
            screen = pane.wait_for("you> ", count=2, timeout=10)
            assert "[interrupted] the turn was cancelled" in screen
            assert "back again" not in screen
            pane.type_line("still there?")
            pane.wait_for("back again")
            pane.type_line("/exit")
            pane.wait_exit(timeout=10)
        finally:
            pane.close()
        second = server.requests[1].json()["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "user"]


# --- tmux: the real built-in tools (Edit, Bash) ------------------------------------------------


def _builtin_pane(
    server: ReplayServer,
    workspace: pathlib.Path,
    workdir: pathlib.Path,
    env: dict[str, str],
    tmp_path: pathlib.Path,
) -> Tmux:
    return Tmux(
        _args(server, workspace),
        env={**env, "TERM": "xterm-256color"},
        cwd=workdir,
        directory=tmp_path,
        status_file=tmp_path / "exit-status",
    )


def _processes(pattern: str) -> list[str]:
    """The command lines of the processes whose command line matches ``pattern``."""
    found = subprocess.run(
        ["pgrep", "-a", "-f", "--", pattern], capture_output=True, text=True, check=False
    )
    return found.stdout.splitlines()


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_tmux_a_real_edit_is_shown_as_a_diff_undone_and_exit_ends_with_status_0(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    script = [
        Exchange.sse(tool_call_sse("Edit", EDIT_NOTE)),
        Exchange.sse(chat_sse("Changed it.")),
    ]
    with ReplayServer(script) as server:
        pane = _builtin_pane(server, workspace, workdir, env, tmp_path)
        try:
            pane.wait_for("you> ")
            pane.type_line("change the note")
            # S12: the prompt names the path, the argument Edit's rules judge, first.
            screen = pane.wait_for("allow Edit(")
            assert (
                "allow Edit(path='notes.txt', old_string='says hi', new_string='says bye')? "
                in screen
            )
            pane.type_line("y")
            screen = pane.wait_for("Changed it.")
            assert "\n-the note says hi\n+the note says bye\n" in screen
            assert (workspace / "notes.txt").read_bytes() == b"the note says bye\n"
            pane.wait_for("you> ", count=2)
            pane.type_line("/undo")
            pane.wait_for("undone: restored notes.txt (before Edit)")
            assert (workspace / "notes.txt").read_bytes() == b"the note says hi\n"
            pane.type_line("/exit")
            assert pane.exit_status(timeout=10) == 0
        finally:
            pane.close()
        server.assert_all_served()


def test_tmux_bash_always_is_remembered_and_no_means_the_command_did_not_run(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    append = json.dumps({"command": "echo run >> runs.txt"})
    script = [
        Exchange.sse(tool_call_sse("Bash", append, call_id="c1")),
        Exchange.sse(chat_sse("Ran once.")),
        Exchange.sse(tool_call_sse("Bash", append, call_id="c2")),
        Exchange.sse(chat_sse("Ran twice.")),
        Exchange.sse(tool_call_sse("Bash", json.dumps({"command": "touch marker"}), call_id="c3")),
        Exchange.sse(chat_sse("Did not touch.")),
    ]
    with ReplayServer(script) as server:
        pane = _builtin_pane(server, workspace, workdir, env, tmp_path)
        try:
            pane.wait_for("you> ")
            pane.type_line("append")
            screen = pane.wait_for("allow Bash(")
            assert "allow Bash(command='echo run >> runs.txt')? " in screen
            assert "a=always]" in screen
            pane.type_line("a")
            pane.wait_for("Ran once.")
            pane.wait_for("you> ", count=2)
            pane.type_line("append again")
            screen = pane.wait_for("Ran twice.")
            assert screen.count("allow Bash(") == 1  # the second call was not asked
            assert screen.count("-> Bash(command='echo run >> runs.txt')") == 2
            assert (workspace / "runs.txt").read_text() == "run\nrun\n"
            pane.wait_for("you> ", count=3)
            pane.type_line("touch it")
            pane.wait_for("allow Bash(command='touch marker')?")
            pane.type_line("n")
            screen = pane.wait_for("Did not touch.")
            assert "<- [refused] The user declined this call" in screen
            pane.type_line("/exit")
            pane.wait_exit(timeout=10)
        finally:
            pane.close()
        server.assert_all_served()
    assert not (workspace / "marker").exists()


def test_tmux_ctrl_c_during_a_long_bash_command_kills_it_and_the_prompt_returns(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    # S23: cancelling the turn aborts the run; the shell tool kills its command's process
    # group, so no process of the command is left. The fraction makes its command line unique.
    command = f"sleep 301.{secrets.randbelow(10**9):09d}"
    pattern = re.escape(command)
    script = [
        Exchange.sse(tool_call_sse("Bash", json.dumps({"command": command}))),
        Exchange.sse(chat_sse("back again")),
    ]
    with ReplayServer(script) as server:
        pane = _builtin_pane(server, workspace, workdir, env, tmp_path)
        try:
            pane.wait_for("you> ")
            pane.type_line("sleep a while")
            pane.wait_for(f"allow Bash(command={command!r})?")
            pane.type_line("y")
            pane.wait_for(f"-> Bash(command={command!r})")
            _wait_until(lambda: bool(_processes(pattern)), "the command never started")
            pane.keys("C-c")
            screen = pane.wait_for("you> ", count=2, timeout=10)
            assert "[interrupted] the turn was cancelled" in screen
            _wait_until(
                lambda: not _processes(pattern),
                f"processes of the command are left: {_processes(pattern)}",
                timeout=5,
            )
            pane.type_line("still there?")
            pane.wait_for("back again")
            pane.type_line("/exit")
            pane.wait_exit(timeout=10)
        finally:
            pane.close()
        server.assert_all_served()


# --- /undo: the real robota.tools.undo after a real Edit ---------------------------------------

EDIT_NOTE = json.dumps({"path": "notes.txt", "old_string": "says hi", "new_string": "says bye"})


def _edit_through_the_chat(child: Child, workspace: pathlib.Path) -> None:
    """Type a turn in which the scripted model calls Edit; answer its prompt y."""
    child.wait_for("you> ")
    child.send("change the note")
    child.wait_for("allow Edit(path='notes.txt'", stream="stderr")
    child.send("y")
    child.wait_for("Changed it.")
    child.wait_for("you> ", count=2)
    assert (workspace / "notes.txt").read_bytes() == b"the note says bye\n"


def test_undo_restores_the_file_a_real_edit_changed_then_has_nothing_to_undo(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path
) -> None:
    script = [
        Exchange.sse(tool_call_sse("Edit", EDIT_NOTE)),
        Exchange.sse(chat_sse("Changed it.")),
    ]
    with ReplayServer(script) as server:
        child = Child(_args(server, workspace), env=env, cwd=workdir)
        try:
            _edit_through_the_chat(child, workspace)
            child.send("/undo")
            child.wait_for("undone: ", stream="stderr")
            assert (workspace / "notes.txt").read_bytes() == b"the note says hi\n"
            child.send("/undo")
            child.wait_for("nothing to undo", stream="stderr")
            child.send("/exit")
            assert child.finish() == 0
        finally:
            child.kill()
        server.assert_all_served()
    undone = [line for line in child.stderr.splitlines() if line.startswith("undone: ")]
    assert undone == ["undone: restored notes.txt (before Edit)"]
    assert (workspace / "notes.txt").read_bytes() == b"the note says hi\n"
    assert "Traceback" not in child.stderr


def test_undo_after_a_hand_edit_prints_why_and_keeps_the_hand_edit(
    workdir: pathlib.Path, env: dict[str, str], workspace: pathlib.Path
) -> None:
    script = [
        Exchange.sse(tool_call_sse("Edit", EDIT_NOTE)),
        Exchange.sse(chat_sse("Changed it.")),
    ]
    with ReplayServer(script) as server:
        child = Child(_args(server, workspace), env=env, cwd=workdir)
        try:
            _edit_through_the_chat(child, workspace)
            (workspace / "notes.txt").write_bytes(b"typed by hand\n")
            child.send("/undo")
            child.wait_for("error: /undo: ", stream="stderr")
            child.send("/exit")
            assert child.finish() == 0
        finally:
            child.kill()
    errors = [line for line in child.stderr.splitlines() if line.startswith("error: /undo: ")]
    assert len(errors) == 1
    assert "cannot undo the Edit of notes.txt" in errors[0]
    assert (workspace / "notes.txt").read_bytes() == b"typed by hand\n"
    assert "Traceback" not in child.stderr
