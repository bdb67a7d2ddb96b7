"""MCP servers as tool sources (the ``mcp`` extra, the official ``mcp`` SDK).

:class:`MCPServerStdio` runs a server as a child process; :class:`MCPServerHTTP` reaches one over
streamable HTTP through the egress policy (S06). Either goes in ``Agent(tools=[...])`` beside
ordinary tools. Each server tool becomes ``mcp__<server>__<tool>`` — so a permission rule can name
a whole server (``mcp__git__*``) or one tool — and passes through the same schema subset (a tool
whose input schema is outside it is left out and reported, S16), per-vendor projection,
permission gate, hooks and events as any other tool.

Results: text, structured content, images, audio, embedded resources and resource links are
mapped by :func:`map_result`; a server's ``isError`` is a failure the model sees. A transport
failure is :class:`MCPConnectionError` (calls in flight fail with it and the server is started
again by the next run); a protocol error answer is :class:`MCPProtocolError`. Aborting a run
cancels the calls in flight, and the SDK sends ``notifications/cancelled`` for each.
``notifications/tools/list_changed`` refreshes the tools, offered from the model's next request.
"""

from robota.mcp._http import MCPServerHTTP
from robota.mcp._results import MCPConnectionError, MCPProtocolError, MCPTool, map_result
from robota.mcp._server import MCPServerBase
from robota.mcp._stdio import MCPServerStdio

__all__ = [
    "MCPConnectionError",
    "MCPProtocolError",
    "MCPServerBase",
    "MCPServerHTTP",
    "MCPServerStdio",
    "MCPTool",
    "map_result",
]
