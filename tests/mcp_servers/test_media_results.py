"""Issue 26: an MCP image result reaches the model as an image part of the tool message."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

import robota
from mcp_servers.servers import PIXEL, Served, http_server
from robota.mcp import MCPServerHTTP
from robota.mcp._results import map_result
from robota.testing import ScriptedProvider


@pytest.fixture
def served() -> Iterator[Served]:
    with http_server(allowed_hosts=("mcp.test",)) as server:
        yield server


async def test_an_mcp_image_result_is_an_image_part_of_the_tool_message(served: Served) -> None:
    server = MCPServerHTTP(served.url, name="web", allow_private_network=True)
    provider = ScriptedProvider([[("mcp__web__pixel", {})], "a pixel"])
    async with robota.Agent(provider=provider, model="m", tools=[server]) as agent:
        await agent.run("show me")
    [tool] = [m for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert tool.content.startswith("[image: image/png, ")  # the line the model reads, as before
    assert tool.parts == (robota.ImagePart(data=PIXEL, media_type="image/png"),)
    # The next request carries it: the adapter sends it in its vendor's form.
    sent = provider.requests[1].messages[-1]
    assert isinstance(sent, robota.ToolMessage)
    assert sent.parts == tool.parts


def test_audio_maps_and_a_type_the_parts_do_not_take_stays_a_line() -> None:
    result = map_result(
        SimpleNamespace(
            content=[
                SimpleNamespace(type="audio", data="SUQz", mime_type="audio/mpeg"),
                SimpleNamespace(type="image", data="PHN2Zz4=", mime_type="image/svg+xml"),
                SimpleNamespace(type="image", data="not base64!", mime_type="image/png"),
            ],
            structured_content=None,
            is_error=False,
        )
    )
    assert result.parts == (robota.AudioPart(data=b"ID3", media_type="audio/mpeg"),)
    assert result.content.splitlines()[1].startswith("[image: image/svg+xml")
