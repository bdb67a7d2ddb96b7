"""Request-body limits on every served endpoint (issue 31: request size limits, no stuck worker).

A real uvicorn server on 127.0.0.1 (port 0); a slow or stalled body is sent over a raw socket.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import robota
from robota.serve import DEFAULT_MAX_BODY_BYTES, create_app, mcp_server
from robota.testing import ScriptedProvider
from serve.support import chat_input, client, running, sse_events, ui_stream


def _agent() -> robota.Agent:
    return robota.Agent("m", provider=ScriptedProvider(["ok"] * 5))


def _app(**options: object) -> object:
    return create_app({"a": _agent}, **options)  # type: ignore[arg-type]


def _address(url: str) -> tuple[str, int]:
    host, _, port = url.removeprefix("http://").partition("/")[0].rpartition(":")
    return host, int(port)


def _response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read one HTTP/1.1 response (status, headers, body) from ``sock``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection without a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk
        body += chunk
    return int(lines[0].split()[1]), headers, body


def _stalled_request(
    url: str, path: str, declared: int, sent: bytes, trickle: bool
) -> socket.socket:
    host, port = _address(url)
    sock = socket.create_connection((host, port), timeout=30)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {declared}\r\n\r\n"
    )
    sock.sendall(head.encode() + sent)
    if trickle:
        # One byte at a time, never finishing: each arrives well within any idle timeout.
        def drip() -> None:
            try:
                for _ in range(declared):
                    sock.sendall(b" ")
                    time.sleep(0.05)
            except OSError:
                return  # the server closed the connection: what the test expects

        threading.Thread(target=drip, daemon=True).start()
    return sock


def _assert_408(sock: socket.socket) -> None:
    with sock:
        status, headers, body = _response(sock)
    assert status == 408, body
    assert headers["content-type"] == "application/json"
    assert headers.get("connection") == "close"
    assert json.loads(body)["error"]["code"] == "body_timeout"
    assert b"Traceback" not in body


@pytest.mark.parametrize("trickle", [False, True], ids=["stalled", "trickled"])
def test_a_slow_request_body_is_a_408_and_the_server_keeps_serving(trickle: bool) -> None:
    with running(_app(body_timeout=0.5)) as url:  # type: ignore[arg-type]
        slow = _stalled_request(url, "/agents/a/chat", 10_000, b'{"id": "s', trickle)
        # Another client is served while the slow one is still sending.
        with client(url) as http:
            response = http.post("/agents/a/chat", json=chat_input("other", "hi"))
            assert ui_stream([e.data for e in sse_events(response.text.splitlines())]).text == "ok"
        _assert_408(slow)
        with client(url) as http:
            assert http.post("/agents/a/chat", json=chat_input("after", "hi")).status_code == 200


def test_body_timeout_is_validated() -> None:
    for bad in (0, -1.0):
        with pytest.raises(robota.ConfigurationError, match="body_timeout"):
            _app(body_timeout=bad)


@contextmanager
def _served(app: object) -> Iterator[str]:
    with running(app) as url:  # type: ignore[arg-type]
        yield url


def test_a_stalled_body_to_the_mcp_endpoint_is_a_408() -> None:
    server = mcp_server(_agent())
    with _served(server.http_app(body_timeout=0.5)) as url:
        _assert_408(_stalled_request(url, "/mcp", 5_000, b'{"jsonrpc"', trickle=False))


@pytest.mark.parametrize("limit", [1024, None], ids=["given", "default"])
async def test_the_mcp_endpoint_refuses_a_body_over_its_limit_with_a_json_413(
    limit: int | None,
) -> None:
    server = mcp_server(_agent())
    app = server.http_app() if limit is None else server.http_app(max_body_bytes=limit)
    # The default is create_app's (1 MiB), below the SDK's own (4 MiB, a text/plain 413).
    size = 2 * (limit or DEFAULT_MAX_BODY_BYTES)
    with _served(app) as url, httpx2.Client(timeout=30) as http:
        headers = {"accept": "application/json, text/event-stream"}
        big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "x" * size})
        declared = http.post(f"{url}/mcp", content=big, headers=headers)

        def chunks() -> Iterator[bytes]:
            yield big.encode()  # no Content-Length: chunked

        streamed = http.post(f"{url}/mcp", content=chunks(), headers=headers)
        for response in (declared, streamed):
            assert response.status_code == 413
            assert response.headers["content-type"] == "application/json"
            assert response.json()["error"]["code"] == "body_too_large"
        # Still serving: the official MCP client calls the agent.
        async with (
            httpx2.AsyncClient(timeout=30) as async_http,
            streamable_http_client(f"{url}/mcp", http_client=async_http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            result = await session.call_tool(server.tool_name, {"prompt": "hi"})
    assert [part.text for part in result.content if part.type == "text"] == ["ok"]


def test_the_mcp_body_limits_are_validated() -> None:
    server = mcp_server(_agent())
    with pytest.raises(robota.ConfigurationError, match="max_body_bytes"):
        server.http_app(max_body_bytes=0)
    with pytest.raises(robota.ConfigurationError, match="body_timeout"):
        server.http_app(body_timeout=0)


@robota.tool
def dump(n: int) -> str:
    """Return a large result."""
    return "z" * n


def test_a_runs_stream_buffer_is_bounded_by_bytes_and_a_late_reader_gets_the_tail() -> None:
    def factory() -> robota.Agent:
        calls = [[("dump", {"n": 20_000})]] * 5
        provider = ScriptedProvider([*calls, "done"])
        return robota.Agent("m", provider=provider, tools=[dump])

    app = create_app({"a": factory}, stream_buffer_bytes=30_000)
    with running(app) as url, client(url) as http:
        started = http.post("/agents/a/chat", json=chat_input("c", "go"))
        first = list(sse_events(started.text.splitlines()))
        assert first[-1].data == "[DONE]"
        again = list(sse_events(http.get("/agents/a/sessions/c/stream").text.splitlines()))
    # A reader arriving later gets only what the byte bound kept: the newest events, numbered
    # as first sent (it continues from the oldest kept, as past the count bound).
    assert sum(len(e.data) for e in again) <= 30_000
    assert [e.id for e in again] == [e.id for e in first][-len(again) :]
    assert again[-1].data == "[DONE]"
    assert len(again) < len(first)


def test_stream_buffer_bytes_is_validated() -> None:
    with pytest.raises(robota.ConfigurationError, match="stream_buffer_bytes"):
        _app(stream_buffer_bytes=0)
