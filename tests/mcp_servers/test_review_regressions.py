"""Regressions from the adversarial review of the MCP integration (issue 15), one per defect."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

import robota
from mcp_servers.servers import http_server
from robota import ConfigurationError, ToolMessage
from robota.host import EgressTransport
from robota.mcp import MCPConnectionError, MCPProtocolError, MCPServerStdio
from robota.mcp._results import build_tools, normalise_schema
from robota.testing import ScriptedProvider

RAW = str(Path(__file__).parent / "raw_server.py")


def raw(
    mode: str, tmp_path: Path, *, tools: list[dict[str, Any]] | None = None, **options: Any
) -> MCPServerStdio:
    env = {"RAW_LOG": str(tmp_path / "raw.log")}
    if tools is not None:
        env["RAW_TOOLS"] = json.dumps(tools)
    return MCPServerStdio(sys.executable, [RAW, mode], env=env, name="raw", **options)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@robota.tool
def local(x: int) -> int:
    """A local tool."""
    return x + 1


@pytest.mark.parametrize("mode", ["never_list", "never_init"])
async def test_a_server_that_never_answers_fails_within_start_timeout(
    mode: str, tmp_path: Path
) -> None:
    server = raw(mode, tmp_path, start_timeout=1.5)
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m", tools=[server])
    started = time.monotonic()
    with pytest.raises(MCPConnectionError, match=r"did not answer within 1\.5 s"):
        await agent.run("go")
    assert time.monotonic() - started < 6  # not start_timeout plus a stop timeout
    assert server.pid is None  # its process was stopped


async def test_concurrent_callers_share_one_failed_start(tmp_path: Path) -> None:
    server = raw("never_init", tmp_path, start_timeout=1.0)
    started = time.monotonic()
    results = await asyncio.gather(*(server.start() for _ in range(3)), return_exceptions=True)
    assert all(isinstance(r, MCPConnectionError) for r in results)
    assert time.monotonic() - started < 6


async def test_an_abort_while_a_server_starts_ends_the_run_promptly(tmp_path: Path) -> None:
    server = raw("never_list", tmp_path, start_timeout=30)
    controller = robota.AbortController()
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m", tools=[server])
    run = asyncio.ensure_future(agent.run("go", signal=controller.signal))
    await asyncio.sleep(0.5)
    controller.abort()
    with pytest.raises(robota.AbortError):
        await asyncio.wait_for(run, 10)
    await agent.aclose()


async def test_a_broken_server_never_blocks_a_direct_call_of_a_local_tool(tmp_path: Path) -> None:
    server = raw("never_list", tmp_path, start_timeout=30)
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[local, server])
    outcome = await asyncio.wait_for(agent.invoke_tool("local", {"x": 1}), 5)
    assert outcome.result.content == "2"
    await agent.aclose()


async def test_a_server_without_tools_is_no_failure_and_a_failed_listing_is_retried(
    tmp_path: Path,
) -> None:
    server = raw("no_tools", tmp_path)
    agent = robota.Agent(provider=ScriptedProvider(["a"]), model="m", tools=[local, server])
    async with agent:
        result = await agent.run("go")
    assert result.text == "a"
    assert [t.name for t in agent.tools] == ["local"]


def test_typescript_sdk_schemas_with_dollar_schema_and_const_are_accepted() -> None:
    listed = [
        type(
            "T",
            (),
            {
                "name": "pick",
                "description": "d",
                "title": None,
                "input_schema": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "properties": {
                        "mode": {"const": "fast"},
                        "n": {"type": "integer", "$comment": "c"},
                    },
                    "required": ["mode"],
                    "additionalProperties": False,
                },
            },
        )()
    ]
    tools, rejected = build_tools("ts", listed, None)  # type: ignore[arg-type]
    assert rejected == []
    assert tools[0].parameters["properties"]["mode"] == {"enum": ["fast"], "type": "string"}
    assert "$schema" not in tools[0].parameters
    assert normalise_schema({"const": None}) == {"enum": [None], "type": "null"}


def test_a_tool_name_longer_than_the_vendors_accept_is_left_out() -> None:
    long_name = "x" * 60
    listed = [
        type(
            "T",
            (),
            {
                "name": long_name,
                "description": "",
                "title": None,
                "input_schema": {"type": "object", "properties": {}},
            },
        )()
    ]
    tools, rejected = build_tools("srv", listed, None)  # type: ignore[arg-type]
    assert tools == []
    assert "64" in rejected[0].reason


@pytest.mark.parametrize("name", ["hr_", "_hr", "a" * 33, "a__b", ""])
def test_server_names_that_would_blur_permission_prefixes_are_refused(name: str) -> None:
    with pytest.raises(ConfigurationError, match="server name"):
        MCPServerStdio(sys.executable, ["-c", "pass"], name=name)


async def test_aclose_during_a_start_leaves_no_process(tmp_path: Path) -> None:
    server = raw("never_list", tmp_path, start_timeout=30)
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[server])
    call = asyncio.ensure_future(agent.invoke_tool("mcp__raw__echo", {"text": "x"}))
    for _ in range(100):
        if server.pid is not None:
            break
        await asyncio.sleep(0.05)
    pid = server.pid
    assert pid is not None
    call.cancel()
    await agent.aclose()
    assert not server.running
    for _ in range(100):
        if not alive(pid):
            break
        await asyncio.sleep(0.05)
    assert not alive(pid)


async def test_a_storm_of_announcements_costs_a_bounded_number_of_listings(tmp_path: Path) -> None:
    server = raw("storm", tmp_path)
    provider = ScriptedProvider([[("mcp__raw__echo", {"text": "x"})], "ok"])
    async with robota.Agent(provider=provider, model="m", tools=[server]) as agent:
        await agent.run("go")
        assert "mcp__raw__grown" in [t.name for t in agent.tools]  # the newest list won
    listings = (tmp_path / "raw.log").read_text().splitlines().count("list")
    assert listings <= 4  # the first listing, then one or two refreshes — never 2,000


async def test_a_change_announced_during_a_call_is_offered_in_the_very_next_round(
    tmp_path: Path,
) -> None:
    server = raw("notify_first", tmp_path)
    provider = ScriptedProvider(
        [[("mcp__raw__echo", {"text": "x"})], [("mcp__raw__grown", {})], "ok"]
    )
    async with robota.Agent(provider=provider, model="m", tools=[server]) as agent:
        await agent.run("go")
    assert "mcp__raw__grown" in [s.name for s in provider.requests[1].tools]
    assert not [m for m in agent.history if isinstance(m, ToolMessage)][-1].is_error


async def test_a_malformed_result_is_a_protocol_error_not_a_dead_connection(tmp_path: Path) -> None:
    server = raw("bad_result", tmp_path)
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[server])
    async with agent:
        outcome = await agent.invoke_tool("mcp__raw__echo", {"text": "x"})
        assert outcome.status == "failed"
        assert "invalid result" in outcome.result.content
        assert server.running  # the connection is fine
    await server.start()
    with pytest.raises(MCPProtocolError):
        await server._call("echo", {}, robota.AbortSignal())
    await server.aclose()


async def test_the_servers_stderr_never_reaches_the_model(tmp_path: Path) -> None:
    script = tmp_path / "leaky.py"
    script.write_text(
        "import sys\n"
        "sys.stderr.write('SECRET-TOKEN-123\\n'); sys.stderr.flush()\n"
        f"exec(open({RAW!r}).read().replace('__main__', '__nope__'))\n"
        "import os\n"
        "for line in sys.stdin:\n"
        "    import json\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'tools/call': os._exit(1)\n"
        "    if m.get('method') == 'server/discover': print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32601, 'message': 'no'}}), flush=True)\n"
        "    elif m.get('method') == 'initialize': print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': '2025-11-25', 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'x', 'version': '1'}}}), flush=True)\n"
        "    elif m.get('method') == 'tools/list': print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': [{'name': 'echo', 'inputSchema': {'type': 'object'}}]}}), flush=True)\n"
    )
    server = MCPServerStdio(sys.executable, [str(script)], name="leaky")
    provider = ScriptedProvider([[("mcp__leaky__echo", {})], "ok"])
    async with robota.Agent(provider=provider, model="m", tools=[server]) as agent:
        await agent.run("go")
    answer = next(m for m in agent.history if isinstance(m, ToolMessage))
    assert answer.is_error
    assert "SECRET-TOKEN-123" not in answer.content


async def test_s06_egress_transport_never_forwards_a_callers_host_header() -> None:
    # The test server refuses a Host it does not know with 421 (its DNS-rebinding guard); the
    # transport must send the checked host, whatever Host the caller set.
    with http_server() as served:
        async with httpx2.AsyncClient(
            transport=EgressTransport(private_network=True), trust_env=False
        ) as client:
            response = await client.post(
                served.url,
                headers={"Host": "admin.internal", "content-type": "application/json"},
                content=b"{}",
            )
    assert response.status_code != 421
    assert response.status_code == 400  # it reached the MCP endpoint, which refuses "{}"


async def test_s06_metadata_over_ipv6_stays_refused_with_the_private_allowance() -> None:
    from robota.host import Rejected, check_url

    for url in ("http://[fd20:ce::254]/", "http://[fd00:ec2::23]/", "http://[fd00:42::42]/"):
        assert isinstance(await check_url(url, private_network=True), Rejected), url
