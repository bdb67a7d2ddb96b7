"""MCP servers over stdio: real servers from PyPI (``mcp-server-time``, ``mcp-server-git``) and a
test server written with the SDK, run as real child processes.

Tools come in as ``mcp__<server>__<tool>`` through the usual path (schema, gate, events); results
map faithfully; a server error is a failure the model sees; a server dying mid-call fails that
call with a typed error and is started again by the next run; aborting a run cancels the call on
the server; ``aclose()`` leaves no process behind; permission rules name a server by prefix.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import robota
from robota import EventNames, PermissionGate, PermissionPolicy, ToolMessage
from robota.mcp import MCPServerStdio
from robota.testing import ScriptedProvider

HERE = Path(__file__).parent
TIME = ("-m", "mcp_server_time", "--local-timezone", "UTC")


def time_server(**options: Any) -> MCPServerStdio:
    return MCPServerStdio(sys.executable, TIME, name="time", **options)


def probe_server(tmp_path: Path, **options: Any) -> MCPServerStdio:
    log = tmp_path / "server.log"
    return MCPServerStdio(
        sys.executable,
        [str(HERE / "stdio_server.py")],
        env={"ROBOTA_MCP_LOG": str(log)},
        name="probe",
        **options,
    )


def answers(agent: robota.Agent) -> list[ToolMessage]:
    return [m for m in agent.history if isinstance(m, ToolMessage)]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not running either
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_mcp_time_server_tools_are_listed_offered_and_called_with_structured_results() -> (
    None
):
    provider = ScriptedProvider(
        [[("mcp__time__get_current_time", {"timezone": "UTC"})], "It is now."]
    )
    events: list[robota.AgentEvent] = []
    async with robota.Agent(provider=provider, model="m", tools=[time_server()]) as agent:
        result = await agent.run("What time is it?", on_event=events.append)
    assert result.text == "It is now."
    offered = [spec.name for spec in provider.requests[0].tools]
    assert offered == ["mcp__time__get_current_time", "mcp__time__convert_time"]
    schema = provider.requests[0].tools[0].parameters
    assert schema["properties"]["timezone"]["type"] == "string"
    (answer,) = answers(agent)
    assert not answer.is_error
    body = json.loads(answer.content)
    assert body["timezone"] == "UTC"
    assert set(body) >= {"datetime", "day_of_week", "is_dst"}
    started = [e for e in events if e.name == EventNames.TOOL_STARTED]
    assert started[0].data["source"] == "mcp:time"


async def test_mcp_git_server_over_a_real_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    (repo / "README.md").write_text("hello\n")
    git("add", "README.md")
    git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "first")
    (repo / "new.txt").write_text("untracked\n")
    server = MCPServerStdio(
        sys.executable, ["-m", "mcp_server_git", "--repository", str(repo)], name="git"
    )
    provider = ScriptedProvider(
        [
            [
                ("mcp__git__git_status", {"repo_path": str(repo)}),
                ("mcp__git__git_log", {"repo_path": str(repo)}),
                ("mcp__git__git_status", {"repo_path": "/etc"}),  # outside the repository
            ],
            "done",
        ]
    )
    async with robota.Agent(provider=provider, model="m", tools=[server]) as agent:
        await agent.run("status?")
    status, log, outside = answers(agent)
    assert "new.txt" in status.content
    assert not status.is_error
    assert "first" in log.content
    assert outside.is_error  # the server's own error: a failure the model sees
    assert "outside" in outside.content


async def test_mcp_invalid_arguments_are_refused_before_the_server_is_called() -> None:
    provider = ScriptedProvider([[("mcp__time__get_current_time", {"timezone": 7})], "ok"])
    async with robota.Agent(provider=provider, model="m", tools=[time_server()]) as agent:
        await agent.run("go")
    (answer,) = answers(agent)
    assert answer.is_error
    assert "invalid arguments" in answer.content.lower()


async def test_mcp_permission_rules_name_a_whole_server_or_one_tool() -> None:
    whole = PermissionGate(PermissionPolicy(mode="bypass", deny=["mcp__time__*"]))
    provider = ScriptedProvider([[("mcp__time__get_current_time", {"timezone": "UTC"})], "ok"])
    async with robota.Agent(
        provider=provider, model="m", tools=[time_server()], tool_gate=whole
    ) as agent:
        await agent.run("go")
    assert provider.requests[0].tools == ()  # denied outright: not offered
    (answer,) = answers(agent)
    assert answer.is_error
    assert answer.content.startswith("Permission denied")

    one = PermissionGate(PermissionPolicy(mode="bypass", deny=["mcp__time__convert_time"]))
    provider = ScriptedProvider([[("mcp__time__get_current_time", {"timezone": "UTC"})], "ok"])
    async with robota.Agent(
        provider=provider, model="m", tools=[time_server()], tool_gate=one
    ) as agent:
        await agent.run("go")
    assert [s.name for s in provider.requests[0].tools] == ["mcp__time__get_current_time"]
    assert not answers(agent)[0].is_error

    # An allow rule needs the literal server prefix (S12): mcp__time__* is allowed, asks stop.
    allowed = PermissionGate(PermissionPolicy(mode="default", allow=["mcp__time__*"]))
    provider = ScriptedProvider([[("mcp__time__get_current_time", {"timezone": "UTC"})], "ok"])
    async with robota.Agent(
        provider=provider, model="m", tools=[time_server()], tool_gate=allowed
    ) as agent:
        await agent.run("go")
    assert not answers(agent)[0].is_error


async def test_mcp_aclose_leaves_no_process_and_a_grandchild_goes_too(tmp_path: Path) -> None:
    server = probe_server(tmp_path)
    provider = ScriptedProvider([[("mcp__probe__spawn_child", {})], "ok"])
    agent = robota.Agent(provider=provider, model="m", tools=[server])
    await agent.run("go")
    pid = server.pid
    assert pid is not None
    assert alive(pid)
    grandchild = int(answers(agent)[0].content)
    assert alive(grandchild)
    assert await agent.aclose() == []
    assert server.pid is None
    for _ in range(100):
        if not alive(pid) and not alive(grandchild):
            break
        await asyncio.sleep(0.05)
    assert not alive(pid)
    assert not alive(grandchild)


async def test_mcp_one_server_process_is_shared_by_runs_and_direct_calls(tmp_path: Path) -> None:
    server = probe_server(tmp_path)
    provider = ScriptedProvider(
        [
            [("mcp__probe__hello", {"name": "a"})],
            "one",
            [("mcp__probe__hello", {"name": "b"})],
            "two",
        ]
    )
    async with robota.Agent(provider=provider, model="m", tools=[server]) as agent:
        pid = server.pid
        results = await asyncio.gather(
            agent.run("first"),
            agent.run("second"),
            agent.invoke_tool("mcp__probe__hello", {"name": "direct"}),
        )
        assert server.pid == pid
    assert results[2].result.content == "hello direct"
    assert server.restarts == 0


async def test_mcp_a_server_dying_mid_call_fails_that_call_typed_and_restarts_next_run(
    tmp_path: Path,
) -> None:
    server = probe_server(tmp_path)
    events: list[robota.AgentEvent] = []
    provider = ScriptedProvider(
        [[("mcp__probe__crash", {})], "it crashed", [("mcp__probe__hello", {"name": "x"})], "ok"]
    )
    async with robota.Agent(provider=provider, model="m", tools=[server]) as agent:
        first_pid = server.pid
        await agent.run("crash it", on_event=events.append)
        crashed = answers(agent)[0]
        assert crashed.is_error
        assert "MCP server 'probe' died during the call" in crashed.content
        failed = [e for e in events if e.name == EventNames.TOOL_FAILED]
        assert failed[0].data["status"] == "failed"
        await agent.run("again")
        assert server.restarts == 1  # started again by the next run, and said so
        assert server.pid != first_pid
        assert answers(agent)[-1].content == "hello x"


async def test_mcp_aborting_a_run_cancels_the_call_on_the_server(tmp_path: Path) -> None:
    server = probe_server(tmp_path)
    log = tmp_path / "server.log"
    controller = robota.AbortController()
    provider = ScriptedProvider([[("mcp__probe__slow", {"seconds": 30})]])
    async with robota.Agent(provider=provider, model="m", tools=[server]) as agent:
        run = asyncio.ensure_future(agent.run("wait", signal=controller.signal))
        for _ in range(200):
            if log.exists() and "slow:start" in log.read_text():
                break
            await asyncio.sleep(0.05)
        controller.abort()
        result = await asyncio.wait_for(run, 20)
        assert result.status == "interrupted"
        assert answers(agent)[0].content.startswith("Interrupted by user")
        for _ in range(100):
            if "slow:cancelled" in log.read_text():
                break
            await asyncio.sleep(0.05)
        assert "slow:cancelled" in log.read_text()  # notifications/cancelled reached it
        outcome = await agent.invoke_tool("mcp__probe__hello", {"name": "still here"})
        assert outcome.result.content == "hello still here"  # the server itself lives on


async def test_mcp_a_server_that_cannot_start_fails_the_run_with_a_typed_error() -> None:
    server = MCPServerStdio(sys.executable, ["-c", "import sys; sys.exit(4)"], name="broken")
    agent = robota.Agent(provider=ScriptedProvider(["never"]), model="m", tools=[server])
    with pytest.raises(robota.mcp.MCPConnectionError, match="broken"):
        await agent.run("go")
    missing = MCPServerStdio("/nonexistent/mcp-server", name="missing")
    agent = robota.Agent(provider=ScriptedProvider(["never"]), model="m", tools=[missing])
    with pytest.raises(robota.mcp.MCPConnectionError, match="could not be started"):
        await agent.run("go")


@pytest.mark.parametrize(
    ("args", "options", "match"),
    [
        (("",), {}, "command"),
        (("python", "-m x"), {}, "args"),
        (("python",), {"name": "has space"}, "server name"),
        (("python",), {"name": "a__b"}, "server name"),
        (("python",), {"env": {"A": 1}}, "env"),
    ],
)
def test_mcp_bad_server_arguments_are_clear_errors(
    args: tuple[Any, ...], options: dict[str, Any], match: str
) -> None:
    with pytest.raises(robota.ConfigurationError, match=match):
        MCPServerStdio(*args, **options)
