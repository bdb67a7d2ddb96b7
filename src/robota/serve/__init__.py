"""``robota.serve``: an agent behind HTTP, MCP and A2A (issue 31; begun).

The layer DESIGN.md places between the built-in tools and the command line: it may use every
public surface below it (core, host, sessions, agents, providers, tools) and nothing of
``robota.cli``. Install from the checkout with ``pip install -e ".[serve]"`` (starlette,
uvicorn, the ``ag-ui-protocol`` package); the MCP server needs the ``mcp`` extra, the A2A
endpoints the ``a2a`` extra.

An agent as an MCP server: :func:`mcp_server` (an :class:`AgentMCPServer`, served over stdio or
streamable HTTP) and :func:`run_mcp_stdio`.

A2A: :func:`a2a_app` serves an agent as an A2A agent (card, JSON-RPC task endpoints);
:func:`a2a_tool` makes a remote A2A agent a tool, called through the egress client (S06).
"""

from __future__ import annotations

from robota.serve._a2a import a2a_app, a2a_tool
from robota.serve._mcp import AgentMCPServer, mcp_server, run_mcp_stdio

__all__: list[str] = [
    "AgentMCPServer",
    "a2a_app",
    "a2a_tool",
    "mcp_server",
    "run_mcp_stdio",
]
