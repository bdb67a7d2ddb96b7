"""The MCP streamable-HTTP endpoint's JSON-RPC errors carry fixed text (issue 31: nothing leaked).

The ``mcp`` SDK answers a malformed message with its parser's or pydantic's text, which quotes
the client's input back (``input_value=...``) and names the validation library; as for the A2A
endpoint, each error is rewritten to its code and a short fixed message. A real uvicorn server
on 127.0.0.1, then the official MCP client to show the endpoint still serves.
"""

from __future__ import annotations

import json

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import robota
from robota.serve import mcp_server
from robota.testing import ScriptedProvider
from serve.support import running

SECRET = "SECRETINPUT-91c2"  # noqa: S105 - the text that must not come back

MALFORMED = [
    "{not json " + SECRET,
    json.dumps([1, SECRET]),
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": 5, "params": SECRET}),
    json.dumps({"jsonrpc": "2.0", "id": {"x": SECRET}, "method": "ping"}),
]


async def test_malformed_mcp_messages_get_fixed_error_text_never_their_input() -> None:
    server = mcp_server(robota.Agent("m", provider=ScriptedProvider(["ok"])))
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with running(server.http_app()) as url:  # type: ignore[arg-type]
        async with httpx2.AsyncClient(timeout=30) as http:
            for body in MALFORMED:
                sent = await http.post(f"{url}/mcp", content=body.encode(), headers=headers)
                text = sent.text
                assert 400 <= sent.status_code < 500, text
                for leak in (SECRET, "Traceback", "pydantic", "validation error", "column"):
                    assert leak.lower() not in text.lower(), (body, text)
                error = json.loads(text)["error"]
                assert isinstance(error["code"], int)
                assert len(error["message"]) < 80
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            result = await session.call_tool(server.tool_name, {"prompt": "hi"})
    assert [part.text for part in result.content if part.type == "text"] == ["ok"]


async def test_the_sdks_fixed_transport_messages_still_tell_a_client_what_to_fix() -> None:
    server = mcp_server(robota.Agent("m", provider=ScriptedProvider([])))
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    with running(server.http_app()) as url:  # type: ignore[arg-type]
        async with httpx2.AsyncClient(timeout=30) as http:
            sent = await http.post(
                f"{url}/mcp",
                content=ping,
                headers={"content-type": "application/json", "accept": "application/json"},
            )
    assert sent.status_code == 406
    assert "text/event-stream" in sent.json()["error"]["message"]
