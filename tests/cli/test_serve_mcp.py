"""``robota serve --mcp``: the real command serves an agent to the official MCP client."""

from __future__ import annotations

import pathlib
import subprocess
import sys
from contextlib import AbstractContextManager
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from cli._support import announced_server

AGENT_MODULE = """
import robota
from robota.testing import ScriptedProvider


def make():
    return robota.Agent(
        name="helper", provider=ScriptedProvider(["hi from the cli", "again"]), model="m"
    )


agent = make()
NOT_AN_AGENT = 42
"""

COMMAND = [sys.executable, "-m", "robota", "serve", "--mcp"]


@pytest.fixture
def served(workdir: pathlib.Path) -> pathlib.Path:
    (workdir / "served_agent.py").write_text(AGENT_MODULE)
    return workdir


def _text(result: Any) -> str:
    return "".join(p.text for p in result.content if p.type == "text")


async def test_serve_mcp_over_stdio(served: pathlib.Path, env: dict[str, str]) -> None:
    params = StdioServerParameters(
        command=COMMAND[0],
        args=[*COMMAND[1:], "--agent", "served_agent:agent"],
        env=env,
        cwd=served,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        result = await session.call_tool("helper", {"prompt": "hello"})
    assert [t.name for t in tools] == ["helper"]
    assert (result.is_error, _text(result)) == (False, "hi from the cli")


def _http_process(
    served: pathlib.Path, env: dict[str, str], spec: str
) -> AbstractContextManager[str]:
    return announced_server(
        [*COMMAND, "--agent", spec, "--http", "127.0.0.1:0"],
        cwd=served,
        env=env,
        announces="over MCP at ",
    )


async def test_serve_mcp_over_http_with_a_factory(
    served: pathlib.Path, env: dict[str, str]
) -> None:
    with _http_process(served, env, "served_agent:make") as url:
        assert url.startswith("http://127.0.0.1:")
        async with (
            httpx2.AsyncClient(timeout=30) as client,
            streamable_http_client(url, http_client=client) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            result = await session.call_tool("helper", {"prompt": "hello"})
    assert _text(result) == "hi from the cli"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "served_agent:NOT_AN_AGENT"], "must be a robota.Agent"),
        (["--agent", "no_such_module:agent"], "cannot import"),
        (["--agent", "served_agent"], "must be module:attr"),
        (["--agent", "served_agent:agent", "--http", "nowhere"], "must be HOST:PORT"),
        (["--agent", "served_agent:agent", "--http", "0.0.0.0:0"], "ROBOTA_SERVE_TOKEN"),
    ],
)
def test_serve_mcp_bad_input_is_one_error_line(
    served: pathlib.Path, env: dict[str, str], args: list[str], message: str
) -> None:
    done = subprocess.run(
        [*COMMAND, *args],
        cwd=served,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert message in done.stderr
    assert "Traceback" not in done.stderr
