"""Fixed JSON-RPC error text for the A2A endpoint (issue 31: no input echoed, nothing leaked).

The ``a2a-sdk`` request handler puts a parser's or validator's text in an error it answers: the
JSON decoder's message, ``Incorrect params <the client's params>``, a pydantic dump quoting the
client's input (``input_value=...``) with a link to pydantic's docs, the ``A2A-Version`` header
the client sent, the task id it asked for. :class:`FixedRpcErrors` rewrites every JSON-RPC error
the app answers — a JSON body, or a ``data:`` line of an SSE stream — to its code, a short fixed
message for that code and, for A2A 1.0's ``google.rpc.ErrorInfo`` entries, their ``@type``,
``reason`` and ``domain`` alone (a client maps the reason to an error type). Nothing else of
the SDK's error reaches the client; successful answers pass unchanged. The MCP streamable-HTTP
endpoint uses it too (its SDK answers with pydantic's text quoting the input), with the
standard JSON-RPC messages only (:data:`JSONRPC_MESSAGES`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["A2A_MESSAGES", "JSONRPC_MESSAGES", "FixedRpcErrors", "fixed_error"]

JSONRPC_MESSAGES: Final[Mapping[int, str]] = {
    -32700: "Parse error: the body is not valid JSON",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
}
"""The fixed message of each standard JSON-RPC error code."""

A2A_MESSAGES: Final[Mapping[int, str]] = {
    **JSONRPC_MESSAGES,
    -32001: "Task not found",
    -32002: "Task cannot be canceled",
    -32003: "Push notifications are not supported",
    -32004: "This operation is not supported",
    -32005: "Incompatible content types",
    -32006: "Invalid agent response",
    -32007: "Extended agent card not configured",
    -32008: "Extension support required",
    -32009: "This A2A version is not supported",
}
"""The fixed message of each JSON-RPC and A2A error code."""
_Fix = Callable[[object], dict[str, object]]
_INFO_KEYS: Final = ("@type", "reason", "domain")
_MAX_REWRITTEN: Final = 1024 * 1024  # a JSON error body larger than this is not the SDK's


def fixed_error(
    error: object,
    messages: Mapping[int, str] = A2A_MESSAGES,
    kept: frozenset[str] = frozenset(),
) -> dict[str, object]:
    """``error`` (a JSON-RPC error object) with fixed text: its code, message and reasons.

    A message in ``kept`` (a constant of the SDK's, quoting nothing) stays as it is.
    """
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(code, bool) or not isinstance(code, int):
        code = -32603
    message = error.get("message") if isinstance(error, dict) else None
    if not (isinstance(message, str) and message in kept):
        message = messages.get(code, "Error")
    fixed: dict[str, object] = {"code": code, "message": message}
    data = error.get("data") if isinstance(error, dict) else None
    if isinstance(data, list):
        infos = [
            {k: item[k] for k in _INFO_KEYS if isinstance(item.get(k), str)}
            for item in data
            if isinstance(item, dict) and isinstance(item.get("reason"), str)
        ]
        if infos:
            fixed["data"] = infos
    return fixed


def _rewrite(document: object, fix: _Fix) -> object | None:
    """The document with each error fixed, or ``None`` when it holds no error."""
    if isinstance(document, dict) and "error" in document:
        return {**document, "error": fix(document["error"])}
    if isinstance(document, list) and any(isinstance(d, dict) and "error" in d for d in document):
        return [_rewrite(d, fix) or d for d in document]
    return None


def _rewrite_sse(chunk: bytes, fix: _Fix) -> bytes:
    if b'"error"' not in chunk:
        return chunk
    lines = chunk.split(b"\n")
    for index, line in enumerate(lines):
        if not line.startswith(b"data:"):
            continue
        try:
            fixed = _rewrite(json.loads(line[5:]), fix)
        except ValueError:
            continue
        if fixed is not None:
            ending = b"\r" if line.endswith(b"\r") else b""  # a CRLF stream stays CRLF
            lines[index] = b"data: " + json.dumps(fixed).encode() + ending
    return b"\n".join(lines)


class FixedRpcErrors:
    """ASGI middleware: every JSON-RPC error the app answers gets fixed text (module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        messages: Mapping[int, str] = A2A_MESSAGES,
        kept: frozenset[str] = frozenset(),
    ) -> None:
        self._app = app
        self._fix: _Fix = functools.partial(fixed_error, messages=messages, kept=kept)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        mode = "pass"
        start: Message | None = None
        held = bytearray()

        async def rewriting(message: Message) -> None:
            nonlocal mode, start
            if message["type"] == "http.response.start":
                media = b""
                for name, value in message.get("headers", ()):
                    if name.lower() == b"content-type":
                        media = value.partition(b";")[0].strip().lower()
                if media == b"application/json":
                    mode, start = "json", message  # held until the body is whole
                    return
                mode = "sse" if media == b"text/event-stream" else "pass"
                await send(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            if mode == "sse":
                body = _rewrite_sse(message.get("body", b""), self._fix)
                await send({**message, "body": body})
                return
            if mode != "json":
                await send(message)
                return
            held.extend(message.get("body", b""))
            if message.get("more_body", False) and len(held) <= _MAX_REWRITTEN:
                return
            more = message.get("more_body", False)
            await _send_json(send, start, bytes(held), more, self._fix)
            mode = "pass"
            held.clear()

        await self._app(scope, receive, rewriting)


async def _send_json(send: Send, start: Message | None, body: bytes, more: bool, fix: _Fix) -> None:
    assert start is not None  # a body follows its start
    fixed = None
    if not more:
        try:
            fixed = _rewrite(json.loads(body), fix)
        except ValueError:
            fixed = None
    if fixed is not None:
        body = json.dumps(fixed).encode()
    headers = [(k, v) for k, v in start.get("headers", ()) if k.lower() != b"content-length"]
    if not more:
        headers.append((b"content-length", str(len(body)).encode()))
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": more})
