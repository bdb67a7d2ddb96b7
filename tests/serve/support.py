"""A real uvicorn server on 127.0.0.1 (port 0) in a thread, and readers for both streams.

``ui_stream`` is a reference reader of the Vercel AI SDK UI message stream written from its
published protocol page: it checks the parts' order (``start`` first; text and tool-input
parts only inside their own start/end; steps balanced; ``finish`` or ``error`` right before
``[DONE]``) and assembles the message a ``useChat`` client would show.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import uvicorn
from ag_ui.core import BaseEvent, Event
from pydantic import TypeAdapter
from starlette.types import ASGIApp

_AGUI = TypeAdapter[Event](Event)


@contextmanager
def running(app: ASGIApp) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 at a free port in a thread; yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def client(base_url: str, **options: Any) -> httpx2.Client:
    """An HTTP client for the served app."""
    return httpx2.Client(base_url=base_url, timeout=30, **options)


@dataclass
class Sse:
    """One server-sent event."""

    id: str | None
    data: str


def sse_events(lines: Iterable[str]) -> Iterator[Sse]:
    """Parse SSE lines into events (``id:`` and ``data:`` fields; a blank line ends one)."""
    event_id: str | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield Sse(event_id, "\n".join(data))
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield Sse(event_id, "\n".join(data))


def agui(events: Iterable[Sse]) -> list[BaseEvent]:
    """Each event's data validated into the ag-ui-protocol package's own event model."""
    return [_AGUI.validate_json(event.data) for event in events]


@dataclass
class UiMessage:
    """What a ``useChat`` client assembles from one UI message stream."""

    message_id: str | None = None
    text: str = ""
    texts: list[str] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    data: list[dict[str, Any]] = field(default_factory=list)
    metadata: Any = None
    error: str | None = None
    types: list[str] = field(default_factory=list)


def ui_stream(datas: list[str]) -> UiMessage:
    """Read a UI message stream's ``data:`` payloads, checking the protocol's order."""
    assert datas, "an empty stream"
    assert datas[-1] == "[DONE]", f"the stream must end with [DONE], got {datas[-1]!r}"
    parts = [json.loads(d) for d in datas[:-1]]
    assert all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in parts)
    message = UiMessage(types=[p["type"] for p in parts])
    assert message.types[0] == "start", message.types
    assert message.types[-1] in {"finish", "error"}, message.types
    open_texts: dict[str, list[str]] = {}
    in_step = False
    for part in parts[1:]:
        kind = part["type"]
        assert kind != "start", "a second start"
        if kind == "start-step":
            assert not in_step, "start-step inside a step"
            in_step = True
        elif kind == "finish-step":
            assert in_step, "finish-step outside a step"
            assert not open_texts, "a step finished with text still open"
            in_step = False
        elif kind == "text-start":
            assert part["id"] not in open_texts
            open_texts[part["id"]] = []
        elif kind == "text-delta":
            assert part["id"] in open_texts, "text-delta without text-start"
            assert isinstance(part["delta"], str)
            open_texts[part["id"]].append(part["delta"])
        elif kind == "text-end":
            text = "".join(open_texts.pop(part["id"]))
            message.texts.append(text)
            message.text += text
        elif kind == "tool-input-start":
            assert part["toolCallId"] not in message.tools
            message.tools[part["toolCallId"]] = {"name": part["toolName"], "delta": ""}
        elif kind == "tool-input-delta":
            message.tools[part["toolCallId"]]["delta"] += part["inputTextDelta"]
        elif kind == "tool-input-available":
            tool = message.tools[part["toolCallId"]]
            assert tool["name"] == part["toolName"]
            tool["input"] = part["input"]
        elif kind in {"tool-output-available", "tool-output-error"}:
            tool = message.tools[part["toolCallId"]]
            assert "input" in tool, "a tool output before its input was available"
            tool["output" if kind == "tool-output-available" else "error"] = part.get(
                "output", part.get("errorText")
            )
        elif kind.startswith("data-"):
            message.data.append(part)
        elif kind == "finish":
            assert not open_texts, "finish with text open"
            assert not in_step, "finish with a step open"
            message.metadata = part.get("messageMetadata")
        elif kind == "error":
            assert not open_texts, "error with text open"
            message.error = part["errorText"]
        else:
            raise AssertionError(f"a part type the protocol does not have: {kind!r}")
    message.message_id = parts[0].get("messageId")
    return message


def agui_input(thread_id: str, text: str, run_id: str = "run-1", **extra: Any) -> dict[str, Any]:
    """An AG-UI RunAgentInput body with one user message."""
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": f"m-{run_id}", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
        **extra,
    }


def chat_input(chat_id: str, text: str) -> dict[str, Any]:
    """A ``useChat`` request body with one user message."""
    return {
        "id": chat_id,
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}],
        "trigger": "submit-message",
    }
