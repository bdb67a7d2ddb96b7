"""A hand-written JSON-RPC stdio MCP server that misbehaves on purpose (one mode per argv[1]).

It speaks the handshake era (``initialize``; ``server/discover`` is refused so the client falls
back). Modes: ``ok``; ``never_init`` (no handshake answer); ``never_list`` (no ``tools/list``
answer); ``no_tools`` (no tools capability; ``tools/list`` is an error); ``notify_first``
(announces a new tool list before answering a call); ``storm`` (2,000 announcements); ``bad_result``
(a result that is not a CallToolResult); ``ignore_term`` (ignores SIGTERM and stdin EOF).
The tools listed come from ``RAW_TOOLS`` (JSON) when set; each ``tools/list`` is logged to
``RAW_LOG``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
LOG = os.environ.get("RAW_LOG")
ECHO = {
    "name": "echo",
    "description": "Echoes.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}
GROWN = {
    "name": "grown",
    "description": "Appears after the announcement.",
    "inputSchema": {"type": "object", "properties": {}},
}


def log(text: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    if MODE == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    tools = json.loads(os.environ.get("RAW_TOOLS", "null")) or [ECHO]
    grown = False
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, ident = message.get("method"), message.get("id")
        if method == "server/discover":
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no"}})
        elif method == "initialize":
            if MODE == "never_init":
                continue
            capabilities = {} if MODE == "no_tools" else {"tools": {"listChanged": True}}
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": capabilities,
                        "serverInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            log("list")
            if MODE == "never_list":
                continue
            if MODE == "no_tools":
                send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no"}})
                continue
            listed = [*tools, GROWN] if grown else tools
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": listed}})
        elif method == "tools/call":
            params = message["params"]
            if MODE == "bad_result":
                result = {"content": [{"type": "text"}], "isError": "maybe"}
                send({"jsonrpc": "2.0", "id": ident, "result": result})
                continue
            if MODE in ("notify_first", "storm") and not grown:
                grown = True
                for _ in range(2000 if MODE == "storm" else 1):
                    send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            text = json.dumps(params.get("arguments"))
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "result": {"content": [{"type": "text", "text": text}]},
                }
            )
        elif ident is not None:
            send({"jsonrpc": "2.0", "id": ident, "result": {}})
    if MODE == "ignore_term":
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
