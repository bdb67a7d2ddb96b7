"""Agents the MCP-server tests serve: run as a script it serves one over stdio (a child process).

``python mcp_agent_app.py MODE LOG`` builds the agent for MODE (see :func:`build`) on a
:class:`~robota.testing.ScriptedProvider` and serves it with ``robota.serve.run_mcp_stdio``;
tool bodies append what they saw to the file LOG, where the test reads it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import robota
from robota import PermissionGate, PermissionPolicy
from robota.serve import AgentMCPServer, mcp_server
from robota.testing import ScriptedProvider

FAKE_KEY = "sk-test-FAKE0123456789abcdef"


def build(mode: str, log: Path) -> AgentMCPServer:
    """The served agent for ``mode``.

    - ``answer``: one call answers ``"the answer is 42"``; the next calls a tool first.
    - ``fail``: the provider raises an error whose message quotes :data:`FAKE_KEY`.
    - ``slow``: the model calls ``wait``, a tool that sleeps until the run is aborted.
    - ``tools``: ``expose_tools=True`` with a deny rule on ``remove`` and ``ask_me`` undeclared.
    """

    def record(text: str) -> None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")

    @robota.tool(risk="inspect")
    def lookup(key: str) -> str:
        """Look a key up."""
        record(f"lookup:{key}")
        return f"{key}=42"

    @robota.tool(risk="inspect")
    async def wait(ctx: robota.ToolContext) -> str:
        """Wait until aborted."""
        record("wait:start")
        try:
            await asyncio.wait_for(ctx.signal.wait(), 60)
        finally:
            record(f"wait:end aborted={ctx.signal.aborted}")
        return "waited"

    @robota.tool(risk="modify")
    def remove(path: str) -> str:
        """Remove a file."""
        record(f"remove:{path}")
        return "removed"

    @robota.tool
    def ask_me(question: str) -> str:
        """An undeclared tool: the gate asks."""
        record(f"ask_me:{question}")
        return "answered"

    if mode == "answer":
        provider = ScriptedProvider(
            ["the answer is 42", [("lookup", {"key": "k"})], "looked up: k=42"]
        )
        agent = robota.Agent(name="oracle", provider=provider, model="m", tools=[lookup])
        return mcp_server(agent)
    if mode == "fail":
        error = robota.ProviderError(f"401 unauthorized for key {FAKE_KEY}")
        provider = ScriptedProvider([error, error, error, error])
        agent = robota.Agent(name="broken", provider=provider, model="m", retry=None)
        return mcp_server(agent)
    if mode == "slow":
        provider = ScriptedProvider([[("wait", {})], "done"])
        agent = robota.Agent(name="sleeper", provider=provider, model="m", tools=[wait])
        return mcp_server(agent)
    if mode == "tools":
        gate = PermissionGate(PermissionPolicy(allow=["lookup"], deny=["remove"]))
        agent = robota.Agent(
            name="keeper",
            provider=ScriptedProvider([]),
            model="m",
            tools=[lookup, remove, ask_me],
            tool_gate=gate,
        )
        return mcp_server(agent, expose_tools=True)
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    asyncio.run(build(sys.argv[1], Path(sys.argv[2])).run_stdio())
