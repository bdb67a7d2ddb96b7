"""``Bash`` (robota.tools.shell): real bash in a real workspace (issue 30, S09, S12, S21, S23)."""

from __future__ import annotations

import asyncio
import os
import pathlib
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

import robota
import robota.host
import robota.tools
from robota.testing import ScriptedProvider
from robota.tools._shell import ShellTool
from robota.tools._workspace import Workspace

from .conftest import Call

# Prints the command's process group id (the leader's pid) into `pgid.txt`, then the command.
_PGID = 'read -r s < /proc/$$/stat; set -- ${s##*) }; echo "$3" > pgid.txt; '


def _context(signal: robota.AbortSignal | None = None) -> robota.ToolContext:
    return robota.ToolContext(
        signal=signal or robota.AbortController().signal, call_id="c", tool_name="Bash"
    )


async def _group_of(workspace: pathlib.Path) -> int:
    path = workspace / "pgid.txt"
    for _ in range(500):  # bounded: the command writes it at once
        text = path.read_text() if path.exists() else ""
        if text.endswith("\n"):
            return int(text)
        await asyncio.sleep(0.01)
    raise AssertionError("the command never reported its process group")


async def _group_is_gone(pgid: int) -> bool:
    # Bounded wait: a killed background job is reparented and lingers as a zombie (still a
    # group member) until init reaps it, which some inits do only every few seconds.
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.02)
    return False


def test_output_of_stdout_and_stderr_interleaves_in_order(
    workspace: pathlib.Path, call: Call
) -> None:
    tool = robota.tools.shell(workspace=workspace)
    result = call(tool, command="echo one; echo two >&2; echo three")
    assert result.content == "one\ntwo\nthree\n"
    assert result.is_error is False


def test_a_non_zero_exit_is_an_error_with_its_output_and_exit_code(
    workspace: pathlib.Path, call: Call
) -> None:
    tool = robota.tools.shell(workspace=workspace)
    result = call(tool, command="echo partial; ls no-such-file; exit 2")
    assert result.is_error is True
    assert result.content.startswith("partial\n")
    assert "no-such-file" in result.content
    assert result.content.endswith("\nexit code 2")


def test_no_output_says_so(workspace: pathlib.Path, call: Call) -> None:
    tool = robota.tools.shell(workspace=workspace)
    assert call(tool, command="true").content == "(no output)"
    failed = call(tool, command="false")
    assert (failed.content, failed.is_error) == ("(no output)\nexit code 1", True)


def test_each_call_starts_in_the_workspace_root_and_cd_does_not_persist(
    workspace: pathlib.Path, call: Call
) -> None:
    (workspace / "sub").mkdir()
    tool = robota.tools.shell(workspace=workspace)
    assert call(tool, command="cd sub && pwd").content == f"{workspace / 'sub'}\n"
    assert call(tool, command="pwd").content == f"{workspace}\n"


def test_stdin_is_empty(workspace: pathlib.Path, call: Call) -> None:
    tool = robota.tools.shell(workspace=workspace)
    assert call(tool, command="cat; echo done").content == "done\n"


def test_output_past_the_cap_keeps_head_and_tail_and_says_what_was_cut(
    workspace: pathlib.Path, call: Call
) -> None:
    # 10 MB through the pipe: drained continuously, only the head and the tail kept.
    tool = robota.tools.shell(workspace=workspace, output_limit=1000)
    result = call(tool, command="echo BEGIN; yes x | head -c 10000000; echo END")
    assert result.is_error is False
    assert len(result.content) < 1500
    assert result.content.startswith("BEGIN\nx\n")
    assert result.content.endswith("x\nEND\n")
    assert "output cut: about 9,99" in result.content
    assert "of 10,000,010 bytes" in result.content


def test_output_just_past_the_cap_is_cut_by_characters(workspace: pathlib.Path, call: Call) -> None:
    tool = robota.tools.shell(workspace=workspace, output_limit=100)
    result = call(tool, command="printf 'é%.0s' $(seq 150)")
    assert result.content.startswith("é" * 50 + "\n\n[... output cut: 50 characters omitted")
    assert result.content.endswith("é" * 50)


def test_bytes_that_are_not_utf8_show_as_replacement_characters(
    workspace: pathlib.Path, call: Call
) -> None:
    tool = robota.tools.shell(workspace=workspace)
    result = call(tool, command=r"printf 'ok \xff\xfe end\n'")
    assert result.content == "ok \ufffd\ufffd end\n"


def test_the_environment_carries_no_api_keys(
    workspace: pathlib.Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("LC_TIME", "C")
    tool = robota.tools.shell(workspace=workspace, env={"PROJECT_MODE": "test"})
    result = call(tool, command="env")
    names = {line.split("=", 1)[0] for line in result.content.splitlines()}
    assert "secret" not in result.content
    assert not names & {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN"}
    assert {"PATH", "PROJECT_MODE", "LC_TIME"} <= names


def test_a_variable_named_in_env_passes_as_given_even_a_secret(
    workspace: pathlib.Path, call: Call
) -> None:
    # The documented choice: env= is explicit, so it wins over the allow-list.
    tool = robota.tools.shell(workspace=workspace, env={"DEPLOY_TOKEN": "t0k"})
    assert call(tool, command='echo "$DEPLOY_TOKEN"').content == "t0k\n"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": 0}, "timeout must be"),
        ({"timeout": 700.0}, "no larger than max_timeout"),
        ({"max_timeout": -1.0}, "max_timeout must be"),
        ({"output_limit": 10}, "output_limit"),
        ({"env": {"BAD=NAME": "x"}}, "not a valid environment variable name"),
        ({"env": {"OK": 1}}, "must be a string"),
    ],
)
def test_bad_factory_options_are_refused(
    workspace: pathlib.Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        robota.tools.shell(workspace=workspace, **options)


def test_an_empty_command_is_an_error_the_model_reads(workspace: pathlib.Path, call: Call) -> None:
    tool = robota.tools.shell(workspace=workspace)
    result = call(tool, command="   ")
    assert (result.content, result.is_error) == ("the command is empty", True)


async def test_a_timeout_kills_the_whole_group_and_reports_the_output_so_far(
    workspace: pathlib.Path,
) -> None:
    tool = robota.tools.shell(workspace=workspace)
    args = tool.validate_arguments(
        {"command": _PGID + "echo early; sleep 30 & sleep 30; wait", "timeout": 0.5}
    )
    result = await tool.execute(args, _context())
    assert isinstance(result, robota.ToolResult)
    assert result.is_error is True
    assert result.content.startswith("early\n")
    assert "timed out after 0.5 seconds" in result.content
    assert await _group_is_gone(int((workspace / "pgid.txt").read_text()))


async def test_a_command_that_ignores_sigterm_is_killed_after_the_grace(
    workspace: pathlib.Path,
) -> None:
    tool = ShellTool(Workspace(workspace), kill_grace=0.2)
    args = tool.validate_arguments({"command": _PGID + "trap '' TERM; sleep 30", "timeout": 0.3})
    result = await tool.execute(args, _context())
    assert isinstance(result, robota.ToolResult)
    assert "timed out" in result.content
    assert await _group_is_gone(int((workspace / "pgid.txt").read_text()))


async def test_the_model_timeout_is_lowered_to_the_factory_maximum(
    workspace: pathlib.Path,
) -> None:
    tool = robota.tools.shell(workspace=workspace, timeout=0.2, max_timeout=0.3)
    args = tool.validate_arguments({"command": "sleep 30", "timeout": 500})
    result = await tool.execute(args, _context())
    assert isinstance(result, robota.ToolResult)
    assert "timed out after 0.3 seconds" in result.content


async def test_s23_cancel_kills_the_group_background_children_included(
    workspace: pathlib.Path,
) -> None:
    tool = robota.tools.shell(workspace=workspace)
    args = tool.validate_arguments({"command": _PGID + "sleep 300 & sleep 300; wait"})
    controller = robota.AbortController()
    task = asyncio.ensure_future(tool.execute(args, _context(controller.signal)))
    pgid = await _group_of(workspace)
    os.killpg(pgid, 0)  # the group is there while the command runs
    controller.abort("stop")
    with pytest.raises(robota.AbortError):
        await task
    assert await _group_is_gone(pgid)


async def test_a_cancelled_call_kills_the_group(workspace: pathlib.Path) -> None:
    tool = robota.tools.shell(workspace=workspace)
    args = tool.validate_arguments({"command": _PGID + "sleep 300"})
    task = asyncio.ensure_future(tool.execute(args, _context()))
    pgid = await _group_of(workspace)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _group_is_gone(pgid)


async def test_background_jobs_end_with_the_command_even_holding_the_output_pipe(
    workspace: pathlib.Path,
) -> None:
    # `sleep 300 &` keeps stdout open; the call still answers when the command ends, and the
    # background job is killed with the group rather than left behind.
    tool = robota.tools.shell(workspace=workspace)
    args = tool.validate_arguments({"command": _PGID + "sleep 300 & echo started"})
    result = await tool.execute(args, _context())
    assert isinstance(result, robota.ToolResult)
    assert (result.content, result.is_error) == ("started\n", False)
    assert await _group_is_gone(int((workspace / "pgid.txt").read_text()))


async def test_a_command_that_closes_its_output_but_keeps_running_is_still_timed(
    workspace: pathlib.Path,
) -> None:
    # The end of the output is not the end of the command: it runs until its time limit.
    tool = robota.tools.shell(workspace=workspace)
    args = tool.validate_arguments(
        {"command": _PGID + "echo before; exec >&- 2>&-; sleep 30", "timeout": 0.5}
    )
    result = await tool.execute(args, _context())
    assert isinstance(result, robota.ToolResult)
    assert result.is_error is True
    assert result.content.startswith("before\n")
    assert "timed out" in result.content
    assert await _group_is_gone(int((workspace / "pgid.txt").read_text()))


def test_the_tool_declares_bash_execute_and_a_command_argument(workspace: pathlib.Path) -> None:
    tool = robota.tools.shell(workspace=workspace)
    assert tool.name == "Bash"
    assert tool.risk == "execute"
    assert tool.permission_argument == robota.PermissionArgument("command", "command")
    assert "Bash" in [t.name for t in robota.tools.builtin(workspace=workspace)]


# Through a real agent and the permission gate (S12, S21).


@pytest.fixture
def repo(workspace: pathlib.Path) -> pathlib.Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "x").write_text("keep\n")
    return workspace


async def _agent_run(
    repo: pathlib.Path, policy: robota.PermissionPolicy, *commands: str
) -> tuple[list[str], list[str]]:
    asked: list[str] = []

    async def approver(request: robota.ApprovalRequest) -> robota.Approval:
        asked.append(request.arguments["command"])
        return robota.Approval(False, reason="no")

    agent = robota.Agent(
        provider=ScriptedProvider([[("Bash", {"command": c}) for c in commands], "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=repo),
        tool_gate=robota.PermissionGate(
            policy, robota.host.permission_context(repo), approver=approver
        ),
    )
    await agent.run("go")
    results = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    return results, asked


async def test_s21_read_only_commands_run_without_asking_and_writes_ask(
    repo: pathlib.Path,
) -> None:
    results, asked = await _agent_run(
        repo, robota.PermissionPolicy(), "git status", "ls", "touch y", "rm x"
    )
    status, listing, touched, removed = results
    assert "No commits yet" in status
    assert listing == "x\n"
    assert asked == ["touch y", "rm x"]  # only the commands that change something asked
    assert touched == removed == "The user declined this call: no."
    assert not (repo / "y").exists()
    assert (repo / "x").exists()


async def test_s12_a_deny_rule_bash_rm_refuses_without_asking(repo: pathlib.Path) -> None:
    results, asked = await _agent_run(repo, robota.PermissionPolicy(deny=["Bash(rm:*)"]), "rm x")
    assert results[0].startswith("Permission denied: denied by rule 'Bash(rm:*)'")
    assert asked == []
    assert (repo / "x").exists()


async def test_s12_an_allow_rule_lets_a_named_command_run(repo: pathlib.Path) -> None:
    results, asked = await _agent_run(
        repo, robota.PermissionPolicy(allow=["Bash(touch:*)"]), "touch y"
    )
    assert results == ["(no output)"]
    assert asked == []
    assert (repo / "y").exists()


async def test_a_process_that_leaves_the_group_is_reported_and_the_call_still_ends(
    workspace: pathlib.Path,
) -> None:
    # S09's residual: `setsid` escapes the group and keeps the output open; the call ends
    # anyway (a bounded wait) and says so rather than hanging.
    tool = robota.tools.shell(workspace=workspace)
    command = "setsid sh -c 'echo $$ > escaped.txt; exec sleep 30' & sleep 0.2; echo started"
    result = await tool.execute(tool.validate_arguments({"command": command}), _context())
    os.kill(int((workspace / "escaped.txt").read_text()), signal.SIGKILL)
    assert isinstance(result, robota.ToolResult)
    assert result.content.startswith("started\n")
    assert "left the command's process group" in result.content


_ISOLATED = """
import asyncio, os, sys
import robota, robota.host, robota.tools

robota.host.isolate_children()
tool = robota.tools.shell(workspace=sys.argv[1])
args = tool.validate_arguments(
    {"command": 'read -r s < /proc/$$/stat; set -- ${s##*) }; echo "$3 $4"'}
)
ctx = robota.ToolContext(signal=robota.AbortController().signal, call_id="c", tool_name="Bash")
result = asyncio.run(tool.execute(args, ctx))
print(result.content.strip(), os.getsid(0))
"""


def test_s09_with_children_isolated_the_command_leads_its_own_session(
    workspace: pathlib.Path,
) -> None:
    # isolate_children() is process-wide and never turns off: run it in a process of its own.
    done = subprocess.run(
        [sys.executable, "-c", _ISOLATED, str(workspace)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    pgid, sid, ours = done.stdout.split()
    assert pgid == sid  # the leader heads a session of its own, its group with it
    assert sid != ours
