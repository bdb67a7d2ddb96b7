"""MCP servers written with the SDK's own server API, for the MCP tests.

``http_server()`` serves a streamable-HTTP server on 127.0.0.1 (a free port) from a thread with
its own event loop; ``stdio_server.py`` (run as a child process) serves over stdio. Both record
what happened server-side (a started or cancelled slow call …) where the test can read it.
"""

from __future__ import annotations

import base64
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio
import mcp_types as types
import uvicorn
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


class Sum(BaseModel):
    total: int
    expression: str


class Point(BaseModel):
    x: int
    y: int


@dataclass
class Record:
    """What the server saw (written from the server's thread, read by the test)."""

    events: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def build(record: Record) -> MCPServer:
    server = MCPServer("robota-test-server", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False, description="Echo the text back.")
    def echo(text: str, ctx: Context) -> str:
        record.headers.append(dict(ctx.headers or {}))
        return text

    @server.tool(description="Add two integers (structured result).")
    def add(a: int, b: int) -> Sum:
        return Sum(total=a + b, expression=f"{a}+{b}")

    @server.tool(description="Always fails.")
    def fail(why: str = "broken") -> str:
        raise ToolError(f"refused: {why}")

    @server.tool(structured_output=False, description="Sleep, observing cancellation.")
    async def slow(seconds: float) -> str:
        record.events.append("slow:start")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            record.events.append("slow:cancelled")
            raise
        record.events.append("slow:done")
        return "slept"

    @server.tool(description="A one-pixel image.")
    def pixel() -> Image:
        return Image(data=PIXEL, format="png")

    @server.tool(description="Text with an embedded text resource and a blob.")
    def attachment() -> list[types.TextContent | types.EmbeddedResource]:
        return [
            types.TextContent(type="text", text="see attached"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="file:///notes.txt", mime_type="text/plain", text="hello notes"
                ),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="file:///pixel.png",
                    mime_type="image/png",
                    blob=base64.b64encode(PIXEL).decode(),
                ),
            ),
        ]

    @server.tool(description="A link to a resource.")
    def link() -> types.ResourceLink:
        return types.ResourceLink(type="resource_link", uri="file:///notes.txt", name="notes")

    @server.tool(description="Takes a nested model (its schema uses $ref).")
    def plot(point: Point) -> str:
        return f"{point.x},{point.y}"

    @server.tool(structured_output=False, description="Adds a tool and announces the change.")
    async def grow(ctx: Context) -> str:
        def doubled(x: int) -> int:
            return x * 2

        server.add_tool(doubled, name="doubled", description="Doubles a number.")
        if ctx.protocol_version == "2026-07-28":
            await ctx.notify_tools_changed()
        else:
            await ctx.session.send_tool_list_changed()
        return "grown"

    return server


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    return sock


@dataclass
class Served:
    url: str
    port: int
    record: Record


@contextmanager
def http_server(*, allowed_hosts: tuple[str, ...] = ()) -> Iterator[Served]:
    """A streamable-HTTP MCP server on 127.0.0.1, in a thread; stopped on exit."""
    record = Record()
    sock = _listening_socket()
    port = sock.getsockname()[1]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}", *(f"{h}:{port}" for h in allowed_hosts)],
        allowed_origins=[],
    )
    app = build(record).streamable_http_app(transport_security=security)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test MCP server did not start")
        time.sleep(0.01)
    try:
        yield Served(f"http://127.0.0.1:{port}/mcp", port, record)
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
