"""MCP over streamable HTTP: a server written with the SDK's own server API on 127.0.0.1.

Reached only through the egress policy (S06): a private address is refused unless the server is
given an explicit allowance (here the private-network allowance, or the test-only loopback
allowance for a name). Results map faithfully (structured content, images, embedded resources,
links, ``isError``); a schema outside the subset is reported and left out;
``tools/list_changed`` is offered from the next round; aborting cancels the call on the server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

import robota
from mcp_servers.servers import Served, http_server
from robota import EventNames, ToolMessage
from robota.mcp import MCPConnectionError, MCPServerHTTP
from robota.testing import ScriptedProvider, loopback_allowance


@pytest.fixture
def served() -> Iterator[Served]:
    with http_server(allowed_hosts=("mcp.test",)) as server:
        yield server


def reach(served: Served, **options: Any) -> MCPServerHTTP:
    return MCPServerHTTP(served.url, name="web", allow_private_network=True, **options)


def answers(agent: robota.Agent) -> list[ToolMessage]:
    return [m for m in agent.history if isinstance(m, ToolMessage)]


async def test_mcp_http_tools_results_and_errors_map_faithfully(served: Served) -> None:
    calls = [
        ("mcp__web__echo", {"text": "hi"}),
        ("mcp__web__add", {"a": 2, "b": 3}),
        ("mcp__web__fail", {"why": "no"}),
        ("mcp__web__pixel", {}),
        ("mcp__web__attachment", {}),
        ("mcp__web__link", {}),
    ]
    provider = ScriptedProvider([calls, "done"])
    async with robota.Agent(provider=provider, model="m", tools=[reach(served)]) as agent:
        await agent.run("go")
    echo, add, fail, pixel, attachment, link = answers(agent)
    assert echo.content == "hi"
    assert not echo.is_error
    assert json.loads(add.content) == {"total": 5, "expression": "2+3"}
    assert fail.is_error  # the server's isError: a failure the model sees
    assert "refused: no" in fail.content
    assert pixel.content.startswith("[image: image/png, ")
    assert "bytes]" in pixel.content
    assert attachment.content.splitlines()[:3] == [
        "see attached",
        "[resource file:///notes.txt]",
        "hello notes",
    ]
    assert "[resource file:///pixel.png: image/png, " in attachment.content
    assert link.content == "[resource link: notes file:///notes.txt]"


async def test_mcp_http_structured_content_and_binary_data_are_kept_for_display(
    served: Served,
) -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[reach(served)])
    async with agent:
        added = await agent.invoke_tool("mcp__web__add", {"a": 1, "b": 1})
        image = await agent.invoke_tool("mcp__web__pixel", {})
    assert added.result.view["structured_content"] == {"total": 2, "expression": "1+1"}  # type: ignore[index]
    block = image.result.view["content"][0]  # type: ignore[index]
    assert block["type"] == "image"
    assert block["mimeType"] == "image/png"
    assert block["data"]  # the data itself, for a display; never in the model's content


async def test_mcp_http_a_schema_outside_the_subset_is_reported_and_left_out(
    served: Served,
) -> None:
    recorder = robota.RecordingEventService()
    provider = ScriptedProvider(["ok"])
    agent = robota.Agent(
        provider=provider, model="m", tools=[reach(served)], event_service=recorder
    )
    async with agent:  # the server starts here, and its left-out tool is reported here
        await agent.run("go")
    offered = [spec.name for spec in provider.requests[0].tools]
    assert "mcp__web__plot" not in offered
    assert "mcp__web__echo" in offered
    reports = [e.data for e in recorder.events if e.name == EventNames.TOOL_SOURCE_REJECTED]
    assert [r["tool_name"] for r in reports] == ["mcp__web__plot"]
    assert "schema subset" in str(reports[0]["reason"])


async def test_mcp_http_tools_list_changed_is_offered_from_the_next_round(served: Served) -> None:
    provider = ScriptedProvider(
        [[("mcp__web__grow", {})], [("mcp__web__doubled", {"x": 21})], "done"]
    )
    async with robota.Agent(provider=provider, model="m", tools=[reach(served)]) as agent:
        await agent.run("go")
        for _ in range(100):  # the notification is asynchronous; the refresh follows it
            if "mcp__web__doubled" in [t.name for t in agent.tools]:
                break
            await asyncio.sleep(0.02)
    assert "mcp__web__doubled" not in [s.name for s in provider.requests[0].tools]
    assert "mcp__web__doubled" in [s.name for s in provider.requests[1].tools]
    assert answers(agent)[-1].content == "42"


async def test_mcp_http_aborting_cancels_the_call_on_the_server(served: Served) -> None:
    controller = robota.AbortController()
    provider = ScriptedProvider([[("mcp__web__slow", {"seconds": 30})]])
    async with robota.Agent(provider=provider, model="m", tools=[reach(served)]) as agent:
        run = asyncio.ensure_future(agent.run("wait", signal=controller.signal))
        for _ in range(200):
            if "slow:start" in served.record.events:
                break
            await asyncio.sleep(0.05)
        controller.abort()
        result = await asyncio.wait_for(run, 20)
        for _ in range(100):
            if "slow:cancelled" in served.record.events:
                break
            await asyncio.sleep(0.05)
    assert result.status == "interrupted"
    assert "slow:cancelled" in served.record.events
    assert "slow:done" not in served.record.events


async def test_mcp_http_headers_reach_the_server(served: Served) -> None:
    server = reach(served, headers={"Authorization": "Bearer t0ken"})
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[server])
    async with agent:
        await agent.invoke_tool("mcp__web__echo", {"text": "x"})
    assert served.record.headers[-1]["authorization"] == "Bearer t0ken"


async def test_s06_a_private_address_is_refused_without_an_allowance(served: Served) -> None:
    server = MCPServerHTTP(served.url, name="web")
    agent = robota.Agent(provider=ScriptedProvider(["never"]), model="m", tools=[server])
    with pytest.raises(MCPConnectionError, match="egress policy") as caught:
        await agent.run("go")
    assert "127.0.0.1" in str(caught.value)
    assert served.record.headers == []  # nothing reached it


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/mcp",
        "http://metadata.google.internal/mcp",
        "http://[fd00:ec2::254]/mcp",
        "http://100.100.100.200/mcp",
    ],
)
async def test_s06_metadata_addresses_stay_refused_even_with_the_private_allowance(
    url: str,
) -> None:
    server = MCPServerHTTP(url, name="meta", allow_private_network=True, start_timeout=10)
    agent = robota.Agent(provider=ScriptedProvider(["never"]), model="m", tools=[server])
    with pytest.raises(MCPConnectionError, match="egress policy"):
        await agent.run("go")


async def test_s06_the_test_only_loopback_allowance_admits_one_named_host(served: Served) -> None:
    async def resolve(host: str) -> list[str]:
        return ["127.0.0.1"] if host == "mcp.test" else []

    server = MCPServerHTTP(
        f"http://mcp.test:{served.port}/mcp",
        name="named",
        allowance=loopback_allowance("mcp.test"),
        resolver=resolve,
    )
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[server])
    async with agent:
        outcome = await agent.invoke_tool("mcp__named__echo", {"text": "via name"})
    assert outcome.result.content == "via name"


async def test_mcp_http_a_server_that_goes_away_fails_calls_typed_then_restarts() -> None:
    with http_server() as first:
        server = MCPServerHTTP(first.url, name="web", allow_private_network=True)
        agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[server])
        outcome = await agent.invoke_tool("mcp__web__echo", {"text": "up"})
        assert outcome.result.content == "up"
    # The server is gone: the call fails with the typed transport error, seen as a failure.
    gone = await agent.invoke_tool("mcp__web__echo", {"text": "down"})
    assert gone.status == "failed"
    assert "MCP server 'web'" in gone.result.content
    await agent.aclose()


@pytest.mark.parametrize(
    ("url", "options", "match"),
    [
        ("ftp://example.com/mcp", {}, "http"),
        ("https://example.com/mcp", {"headers": {"Host": "x"}}, "Host"),
        ("https://example.com/mcp", {"headers": {"a": 1}}, "headers"),
        ("https://example.com/mcp", {"allow_private_network": "yes"}, "allow_private_network"),
    ],
)
def test_mcp_http_bad_arguments_are_clear_errors(
    url: str, options: dict[str, Any], match: str
) -> None:
    with pytest.raises(robota.ConfigurationError, match=match):
        MCPServerHTTP(url, **options)
