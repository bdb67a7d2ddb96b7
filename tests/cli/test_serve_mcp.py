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
from robota.cli._serve import _allowed_hosts

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
        (
            [
                "--agent",
                "served_agent:agent",
                "--http",
                "127.0.0.1:0",
                "--public-host",
                "a.example",
            ],
            "loopback",
        ),
        (["--agent", "served_agent:agent", "--public-host", "a.example"], "--http"),
        (
            ["--agent", "served_agent:agent", "--http", "0.0.0.0:0", "--public-host", "a b"],
            "--public-host",
        ),
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


TOKEN = "a-token-of-the-cli-tests-0123456789"  # noqa: S105 - made up


def _lan_address() -> str:
    """This machine's first non-loopback IPv4 address (what ``hostname -I`` lists)."""
    listed = subprocess.run(
        ["hostname", "-I"], capture_output=True, text=True, check=True, timeout=10
    ).stdout.split()
    found = [a for a in listed if "." in a and not a.startswith("127.")]
    assert found, f"the test needs a non-loopback IPv4 address; hostname -I listed {listed}"
    return found[0]


async def _call_over(url: str, host_header: str | None = None) -> str:
    headers = {"authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(timeout=30, headers=headers) as client,
        streamable_http_client(url, http_client=client) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        return _text(await session.call_tool("helper", {"prompt": "hello"}))


@pytest.mark.parametrize("wildcard", [True, False], ids=["wildcard", "lan-address"])
async def test_serve_mcp_http_on_a_non_loopback_bind_admits_its_own_host(
    served: pathlib.Path, env: dict[str, str], wildcard: bool
) -> None:
    # Issue 31: the SDK's DNS-rebinding allow-list held only loopback names, so a client
    # reaching a token-protected 0.0.0.0 (or LAN) bind by the machine's address was refused.
    address = _lan_address()
    bind = "0.0.0.0" if wildcard else address  # noqa: S104 - the bind under test
    extra = ["--public-host", address] if wildcard else []
    argv = [*COMMAND, "--agent", "served_agent:make", "--http", f"{bind}:0", *extra]
    with announced_server(
        argv, cwd=served, env={**env, "ROBOTA_SERVE_TOKEN": TOKEN}, announces="over MCP at "
    ) as announced:
        port = announced.rsplit(":", 1)[1].split("/")[0]
        url = f"http://{address}:{port}/mcp"
        assert await _call_over(url) == "hi from the cli"
        async with httpx2.AsyncClient(timeout=30) as client:
            # Any other Host is still refused, token or not (DNS rebinding).
            foreign = await client.post(
                url,
                headers={
                    "authorization": f"Bearer {TOKEN}",
                    "host": "rebound.example",
                    "accept": "application/json, text/event-stream",
                    "content-type": "application/json",
                },
                content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
            )
    assert foreign.status_code == 421


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "0:0:0:0:0:0:0:0", "::0"])  # noqa: S104
def test_every_spelling_of_the_wildcard_bind_admits_the_machines_names(bind: str) -> None:
    # "0:0:0:0:0:0:0:0" binds every interface as "::" does: it has no address of its own to
    # admit, so the Host allow-list must be the machine's names, not "[0:0:0:0:0:0:0:0]:8000".
    allowed = _allowed_hosts(bind, 8000, ())
    assert allowed == _allowed_hosts("0.0.0.0", 8000, ())  # noqa: S104
    assert not any(entry.startswith(("0", "[0", "[:", ":")) for entry in allowed)
