"""``robota.serve``: an agent behind HTTP, MCP and A2A (issue 31; begun).

The layer DESIGN.md places between the built-in tools and the command line: it may use every
public surface below it (core, host, sessions, agents, providers, tools) and nothing of
``robota.cli``. Install from the checkout with ``pip install -e ".[serve]"`` (starlette,
uvicorn, the ``ag-ui-protocol`` package); the MCP server needs the ``mcp`` extra, the A2A
endpoints the ``a2a`` extra.

HTTP (:func:`create_app`, :func:`serve`): ``create_app(agents={name: factory}, sessions=store)``
is a starlette ASGI app serving each agent over the AG-UI protocol and the Vercel AI SDK UI
message stream (what ``useChat`` reads), with sessions by id, resumable streams, cancel by
request (S23) and permission asks answered by POST (:class:`HttpApprover`). Paths:

* ``POST /agents/{name}/agui`` — AG-UI ``RunAgentInput`` in, AG-UI events out (SSE);
* ``POST /agents/{name}/chat`` — ``useChat``'s ``{id, messages}`` in, UI message stream out;
* ``GET /agents/{name}/sessions/{session_id}/stream`` — the latest run again, after
  ``Last-Event-ID``;
* ``POST /agents/{name}/sessions/{session_id}/cancel`` — abort the running run;
* ``POST /agents/{name}/sessions/{session_id}/approvals/{ask_id}`` — ``{"approved": bool}``;
* ``POST /agents/{name}/sessions/{session_id}/responses/{request_id}`` — ``{"response": …}``.

A journaled agent served with a session store keeps its asks and its tools' outside requests
in its execution journal (S40): they can be answered after the stream ended, or after the
server restarted or crashed, and the turn continues without repeating anything.

``create_app(..., console=True)`` also serves the local web console at ``/`` (``robota web``):
chat, live tool calls, Approve/Deny buttons for asks, usage and cost per turn, sessions
(``GET /agents/{name}/sessions`` lists them).

Secure by default: :func:`serve` binds ``127.0.0.1`` and refuses any other host without a
bearer token (checked in constant time); CORS is closed unless ``cors_origins=`` lists origins;
bodies are limited (1 MiB, and 30 s to arrive); errors are short JSON bodies that never carry
an exception's text.

An agent as an MCP server: :func:`mcp_server` (an :class:`AgentMCPServer`, served over stdio or
streamable HTTP) and :func:`run_mcp_stdio`.

A2A: :func:`a2a_app` serves an agent as an A2A agent (card, JSON-RPC task endpoints);
:func:`a2a_tool` makes a remote A2A agent a tool, called through the egress client (S06).
"""

from __future__ import annotations

from robota.serve._a2a import a2a_app, a2a_tool
from robota.serve._app import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    MIN_TOKEN_LENGTH,
    create_app,
)
from robota.serve._mcp import AgentMCPServer, mcp_server, run_mcp_stdio
from robota.serve._runs import AgentFactory, HttpApprover
from robota.serve._server import is_loopback_host, serve

__all__: list[str] = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "MIN_TOKEN_LENGTH",
    "AgentFactory",
    "AgentMCPServer",
    "HttpApprover",
    "a2a_app",
    "a2a_tool",
    "create_app",
    "is_loopback_host",
    "mcp_server",
    "run_mcp_stdio",
    "serve",
]
