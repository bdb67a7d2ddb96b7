"""A stdio MCP server for the crash and cancellation tests (run as a child process).

``crash`` exits the process in the middle of a call; ``slow`` sleeps and, when cancelled,
appends ``cancelled`` to the file named by ``ROBOTA_MCP_LOG``; ``spawn_child`` starts a
grandchild that sleeps, and reports its pid.
"""

from __future__ import annotations

import os
import subprocess
import sys

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("robota-stdio-test", log_level="WARNING")
LOG = os.environ.get("ROBOTA_MCP_LOG", os.devnull)


def _log(text: str) -> None:
    with open(LOG, "a", encoding="utf-8") as handle:
        handle.write(text + "\n")


@server.tool(structured_output=False, description="Says hello.")
def hello(name: str) -> str:
    return f"hello {name}"


@server.tool(structured_output=False, description="Exits the server mid-call.")
def crash() -> str:
    _log("crashing")
    os._exit(3)


@server.tool(structured_output=False, description="Sleeps; records a cancellation.")
async def slow(seconds: float) -> str:
    _log("slow:start")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _log("slow:cancelled")
        raise
    return "slept"


@server.tool(structured_output=False, description="Starts a grandchild process; returns its pid.")
def spawn_child() -> str:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return str(child.pid)


if __name__ == "__main__":
    server.run("stdio")
