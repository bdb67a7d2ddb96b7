"""A scripted HTTP replay server on 127.0.0.1 for the provider adapters' tests.

The adapters' tests drive the *real* vendor SDKs (``openai``, ``anthropic``, ``google-genai``)
pointed at ``base_url=`` and let this server answer them. A script is a list of
:class:`Exchange` values: the N-th request that arrives gets the N-th exchange, whatever its
method, path or body (the recorded request bodies were built by another project, so replay never
matches on them). :func:`load_cassette` turns a VCR cassette from
``tests/providers/recordings`` (the team's vendor recordings, copied unchanged; provenance and
licence in its README) into such a script, and
:func:`load_cassette_requests` gives its recorded requests for reference.

Usage::

    with ReplayServer(load_cassette(cassette_path("openai-chat", "test_valid_response"))) as server:
        client = openai.OpenAI(api_key="test", base_url=server.base_url + "/v1", max_retries=0)
        ...
        server.assert_all_served()

``async with`` works the same way. The server runs in its own threads, so it answers clients on
the test's event loop, in ``asyncio.run`` and in child processes alike; leaving the ``with``
block stops it, wakes every handler (a hanging one too), closes every socket and joins every
thread it started.

Transport rules: HTTP/1.1 with keep-alive. A complete body is sent with ``content-length``; an
SSE stream with ``transfer-encoding: chunked``, one chunk per event, each written straight to the
socket (so the client sees the stream progressively and the connection stays reusable).

Faults (issue 28): :meth:`Exchange.drop_mid_stream` ends a stream with an orderly close (FIN),
:meth:`Exchange.reset_mid_stream` with an abortive one (``SO_LINGER`` 0: the client gets a TCP
RST, ``ECONNRESET``), :meth:`Exchange.abort` resets before any answer, :meth:`Exchange.hang`
never answers, and ``delay_before_headers`` /
``delay_before_body`` (on any exchange) make a slow first byte. ``tests/providers/faults`` builds
each vendor's failures in its wire format on top of these.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import json
import os
import re
import socket
import struct
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Self
from urllib.parse import urlsplit

import yaml  # type: ignore[import-untyped,unused-ignore]

__all__ = [
    "RECORDINGS_ENV_VAR",
    "RESET_GRACE",
    "UNSCRIPTED_STATUS",
    "CassetteRequest",
    "Exchange",
    "ReceivedRequest",
    "ReplayServer",
    "cassette_path",
    "load_cassette",
    "load_cassette_requests",
    "recordings_dir",
]

RECORDINGS_ENV_VAR = "ROBOTA_VENDOR_RECORDINGS"
"""Environment variable that, when set, names the vendor-recordings directory."""

UNSCRIPTED_STATUS = 599
"""Status of the answer to a request that came after the script ran out."""

Mode = Literal["complete", "sse", "drop", "reset", "abort", "hang"]
HeaderPairs = tuple[tuple[str, str], ...]
HeadersArg = Mapping[str, str] | Iterable[tuple[str, str]] | None

# Framing headers this server computes itself; a recorded value would be wrong or harmful.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "content-encoding",
        "content-length",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
# An SSE event ends with a blank line; Gemini separates events with CRLF CRLF.
_EVENT_END = re.compile(r"(?<=\r\n\r\n)|(?<=\n\n)|(?<=\r\r)")
_POLL_INTERVAL = 0.02
RESET_GRACE: Final = 0.05
"""Seconds a ``reset`` exchange waits after its last event before resetting the connection."""
_SOCKET_TIMEOUT = 60.0


def _header_pairs(headers: HeadersArg) -> HeaderPairs:
    if headers is None:
        return ()
    items = headers.items() if isinstance(headers, Mapping) else headers
    return tuple((str(name), str(value)) for name, value in items)


def _with_default(pairs: HeaderPairs, name: str, value: str) -> HeaderPairs:
    if any(key.lower() == name for key, _ in pairs):
        return pairs
    return ((name, value), *pairs)


def _split_events(text: str) -> tuple[bytes, ...]:
    return tuple(part.encode() for part in _EVENT_END.split(text) if part)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Exchange:
    """One scripted answer: status, headers, body, and how the body goes on the wire.

    Build one with :meth:`json`, :meth:`sse`, :meth:`drop_mid_stream` or :meth:`hang`, or
    directly (``mode="complete"`` sends ``body`` with a ``content-length``). ``headers`` must not
    carry framing headers (``content-length``, ``transfer-encoding``, ``connection``): the server
    writes those itself.
    """

    status: int = 200
    headers: HeaderPairs = ()
    body: bytes = b""
    mode: Mode = "complete"
    chunk_delay: float = 0.0
    """Seconds to wait before each SSE event after the first (``sse`` and ``drop`` modes)."""
    hang_seconds: float = 0.0
    """How long a ``hang`` exchange holds the request before closing without an answer."""
    delay_before_headers: float = 0.0
    """Seconds to hold the request before the status line (a slow first byte), any mode."""
    delay_before_body: float = 0.0
    """Seconds between the headers and the first byte of the body (a stream that stalls)."""

    def delayed(self, *, headers: float = 0.0, body: float = 0.0) -> Exchange:
        """This exchange, answered after ``headers`` seconds and its body ``body`` s later."""
        return dataclasses.replace(self, delay_before_headers=headers, delay_before_body=body)

    @classmethod
    def json(cls, status: int, body_obj: Any, headers: HeadersArg = None) -> Exchange:
        """Answer ``status`` with ``json.dumps(body_obj)`` (``content-type: application/json``)."""
        pairs = _with_default(_header_pairs(headers), "content-type", "application/json")
        return cls(status=status, headers=pairs, body=json.dumps(body_obj).encode())

    @classmethod
    def sse(
        cls, text: str, *, chunk_delay: float = 0.0, status: int = 200, headers: HeadersArg = None
    ) -> Exchange:
        """Stream ``text`` unchanged as ``text/event-stream``, one flushed chunk per event."""
        pairs = _with_default(_header_pairs(headers), "content-type", "text/event-stream")
        return cls(
            status=status, headers=pairs, body=text.encode(), mode="sse", chunk_delay=chunk_delay
        )

    @classmethod
    def drop_mid_stream(
        cls, text_prefix: str, *, chunk_delay: float = 0.0, headers: HeadersArg = None
    ) -> Exchange:
        """Start a 200 SSE stream, send ``text_prefix`` event by event, then close the socket.

        The chunked body never gets its terminating chunk: to the client this is a connection
        that dropped in the middle of a stream.
        """
        pairs = _with_default(_header_pairs(headers), "content-type", "text/event-stream")
        return cls(
            status=200,
            headers=pairs,
            body=text_prefix.encode(),
            mode="drop",
            chunk_delay=chunk_delay,
        )

    @classmethod
    def reset_mid_stream(
        cls, text_prefix: str, *, chunk_delay: float = 0.0, headers: HeadersArg = None
    ) -> Exchange:
        """Start a 200 SSE stream, send ``text_prefix`` event by event, then reset the connection.

        The socket is closed with ``SO_LINGER`` 0, so the client's next read fails with
        ``ECONNRESET`` (a TCP RST) rather than seeing an orderly end of file. The server waits
        :data:`RESET_GRACE` seconds after the last event first, so the client has read what was
        sent (a kernel may drop unread data when the RST arrives).
        """
        pairs = _with_default(_header_pairs(headers), "content-type", "text/event-stream")
        return cls(
            status=200,
            headers=pairs,
            body=text_prefix.encode(),
            mode="reset",
            chunk_delay=chunk_delay,
        )

    @classmethod
    def abort(cls) -> Exchange:
        """Read the request, then reset the connection (``SO_LINGER`` 0) without any answer:
        to the client, "connection reset by peer" before a status line."""
        return cls(mode="abort")

    @classmethod
    def hang(cls, seconds: float) -> Exchange:
        """Read the request, then send nothing for ``seconds`` (or until the server stops).

        Afterwards the connection is closed without an answer. Give the client a shorter timeout.
        """
        return cls(mode="hang", hang_seconds=seconds)

    def events(self) -> tuple[bytes, ...]:
        """The body cut into SSE events (each ending with its blank line), as written."""
        return _split_events(self.body.decode())


@dataclasses.dataclass(frozen=True)
class ReceivedRequest:
    """A request the server received, in arrival order."""

    method: str
    path: str
    """The request target: path and query string (``/v1/responses``, ``/x?alt=sse``)."""
    headers: dict[str, str]
    """Header names lower-cased; repeated headers joined with ``", "``."""
    body: bytes
    connection: int = 0
    """Which connection it came on (0, 1, … in accept order): equal numbers mean keep-alive."""

    @property
    def path_only(self) -> str:
        """The path without the query string."""
        return urlsplit(self.path).path

    @property
    def query(self) -> str:
        """The query string without ``?`` (empty when there is none)."""
        return urlsplit(self.path).query

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclasses.dataclass(frozen=True)
class CassetteRequest:
    """A request as a cassette recorded it (what the vendor accepted, built by pydantic-ai)."""

    method: str
    uri: str
    """The real vendor URL."""
    headers: dict[str, tuple[str, ...]]
    """Recorded headers, names lower-cased, every value a tuple of strings."""
    body: Any
    """The parsed JSON body (``parsed_body``), else the raw body string, else ``None``."""

    @property
    def path(self) -> str:
        """Path and query of :attr:`uri`, as a :class:`ReceivedRequest` would show them."""
        parts = urlsplit(self.uri)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    def json(self) -> Any:
        """The body as JSON data (parsing it if it was stored as a string)."""
        return json.loads(self.body) if isinstance(self.body, (str, bytes)) else self.body


# --------------------------------------------------------------------------------------------
# Cassettes
# --------------------------------------------------------------------------------------------


RECORDINGS: Final = Path(__file__).resolve().parent / "recordings"
"""The vendor recordings, kept in the repository (byte for byte; provenance and licence in its
README), so a clean clone tests against them with nothing outside it."""


def recordings_dir() -> Path:
    """The vendor-recordings directory: ``$ROBOTA_VENDOR_RECORDINGS`` when set (another copy),
    else :data:`RECORDINGS`; a clear ``FileNotFoundError`` when neither exists."""
    override = os.environ.get(RECORDINGS_ENV_VAR)
    if override:
        path = Path(override)
        if not path.is_dir():
            msg = f"${RECORDINGS_ENV_VAR} is {override!r}, which is not a directory"
            raise FileNotFoundError(msg)
        return path
    if not RECORDINGS.is_dir():
        msg = f"vendor recordings not found at {RECORDINGS}; set ${RECORDINGS_ENV_VAR} to a copy"
        raise FileNotFoundError(msg)
    return RECORDINGS


def cassette_path(vendor_dir: str, name: str) -> Path:
    """Path of cassette ``name`` (``.yaml`` optional) in ``vendor_dir`` (e.g. ``"openai-chat"``)."""
    filename = name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"
    path = recordings_dir() / vendor_dir / filename
    if not path.is_file():
        folder = path.parent
        known = sorted(p.name for p in folder.glob("*.yaml")) if folder.is_dir() else []
        msg = f"no cassette {path}" + (
            f"; {folder.name}/ holds: {', '.join(known)}" if known else ""
        )
        raise FileNotFoundError(msg)
    return path


def _interactions(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as stream:
        data = yaml.load(stream, Loader=loader)  # noqa: S506 - a safe loader
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        msg = f"{path}: not a VCR cassette (no top-level 'interactions' list)"
        raise ValueError(msg)
    interactions: list[dict[str, Any]] = data["interactions"]
    return interactions


def _recorded_headers(raw: Mapping[str, Any] | None) -> dict[str, tuple[str, ...]]:
    headers: dict[str, tuple[str, ...]] = {}
    for name, values in (raw or {}).items():
        listed = values if isinstance(values, list) else [values]
        headers[str(name).lower()] = tuple(str(value) for value in listed)
    return headers


def _raw_body(body: Any) -> str | bytes | None:
    if isinstance(body, Mapping):
        body = body.get("string")
    if body is None or isinstance(body, (str, bytes)):
        return body
    msg = f"unexpected cassette body of type {type(body).__name__}"
    raise ValueError(msg)


def load_cassette(path: str | os.PathLike[str]) -> list[Exchange]:
    """The recorded responses of a cassette, in order, as a replay script.

    A JSON body (``parsed_body``) replays as ``json.dumps(parsed_body)``; a raw body
    (``body.string``) unchanged, streamed event by event when its content type is
    ``text/event-stream``. Recorded headers are kept except the framing ones.
    """
    exchanges: list[Exchange] = []
    for index, interaction in enumerate(_interactions(path)):
        response = interaction["response"]
        status = int(response["status"]["code"])
        recorded = _recorded_headers(response.get("headers"))
        pairs = tuple(
            (name, value)
            for name, values in recorded.items()
            if name not in _HOP_BY_HOP
            for value in values
        )
        if "parsed_body" in response:
            body = json.dumps(response["parsed_body"]).encode()
            exchanges.append(Exchange(status=status, headers=pairs, body=body))
            continue
        raw = _raw_body(response.get("body"))
        if raw is None:
            msg = f"{path}: interaction {index} has neither parsed_body nor body.string"
            raise ValueError(msg)
        data = raw.encode() if isinstance(raw, str) else raw
        content_type = ",".join(recorded.get("content-type", ())).lower()
        mode: Mode = "sse" if "text/event-stream" in content_type else "complete"
        exchanges.append(Exchange(status=status, headers=pairs, body=data, mode=mode))
    return exchanges


def load_cassette_requests(path: str | os.PathLike[str]) -> list[CassetteRequest]:
    """The recorded requests of a cassette, in order (a reference, never matched on)."""
    requests: list[CassetteRequest] = []
    for interaction in _interactions(path):
        request = interaction["request"]
        body = (
            request["parsed_body"] if "parsed_body" in request else _raw_body(request.get("body"))
        )
        requests.append(
            CassetteRequest(
                method=str(request["method"]).upper(),
                uri=str(request["uri"]),
                headers=_recorded_headers(request.get("headers")),
                body=body,
            )
        )
    return requests


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


class _HTTPServer(http.server.ThreadingHTTPServer):
    """A threading server whose handler threads are joined on close (none is a daemon)."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, replay: ReplayServer) -> None:
        self.replay = replay
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Record handler crashes; a client that hung up is not one."""
        del request, client_address
        error = sys.exc_info()[1]
        if error is not None and not isinstance(error, OSError):
            self.replay._record_failure(f"server error: {error!r}")


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = _SOCKET_TIMEOUT
    server: _HTTPServer
    connection_number = 0

    def setup(self) -> None:
        super().setup()
        self.connection_number = self.server.replay._track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.replay._untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def handle_one_request(self) -> None:
        """Read one request; answer it with the next exchange (BaseHTTPRequestHandler hook)."""
        try:
            self.raw_requestline = self.rfile.readline(65537)
        except (TimeoutError, OSError):
            self.close_connection = True
            return
        if not self.raw_requestline:
            self.close_connection = True
            return
        if not self.parse_request():
            return
        body = self._read_body()
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        received = ReceivedRequest(self.command, self.path, headers, body, self.connection_number)
        exchange = self.server.replay._next(received)
        if isinstance(exchange, Exchange):
            self._answer(exchange)
        else:
            self._unscripted(exchange)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in {b"\r\n", b"\n", b""}:
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _start(self, status: int, headers: HeaderPairs) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)

    def _answer(self, exchange: Exchange) -> None:
        stop = self.server.replay._stopping
        if exchange.mode == "hang":
            stop.wait(exchange.hang_seconds)
            self.close_connection = True
            return
        if exchange.delay_before_headers and stop.wait(exchange.delay_before_headers):
            self.close_connection = True
            return
        if exchange.mode == "abort":
            self._reset()
            return
        self._start(exchange.status, exchange.headers)
        if exchange.mode == "complete":
            self.send_header("Content-Length", str(len(exchange.body)))
            self.end_headers()
            self.wfile.flush()
            if exchange.delay_before_body and stop.wait(exchange.delay_before_body):
                self.close_connection = True
                return
            self.wfile.write(exchange.body)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        if exchange.delay_before_body and stop.wait(exchange.delay_before_body):
            self.close_connection = True
            return
        for index, event in enumerate(exchange.events()):
            if index and exchange.chunk_delay and stop.wait(exchange.chunk_delay):
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        if exchange.mode == "sse" and not stop.is_set():
            self.wfile.write(b"0\r\n\r\n")
            return
        if exchange.mode == "reset":
            stop.wait(RESET_GRACE)
            self._reset()
            return
        # A dropped connection: no terminating chunk, the socket goes away under the client.
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _reset(self) -> None:
        """Close the connection abortively: ``SO_LINGER`` 0 makes the kernel send a TCP RST."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # The buffered files hold references to the socket; only the last close releases it.
        self.rfile.close()
        self.wfile.close()
        self.connection.close()

    def _unscripted(self, message: str) -> None:
        error = {"message": f"replay: {message}", "type": "replay_error", "code": "unscripted"}
        body = json.dumps({"error": error}).encode()
        self.send_response(UNSCRIPTED_STATUS, "Replay Script Exhausted")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


_NOT_IMPLEMENTED: Final = Exchange(
    status=404,
    headers=(("content-type", "application/json"),),
    body=b'{"error": {"message": "not implemented by this replay server", "type": "not_found"}}',
)


def _is_server_question(method: str, path: str) -> bool:
    # What a client asks about the server rather than the model: the model list (an
    # OpenAI-compatible provider reads a context window from it) and llama.cpp's /props.
    return method == "GET" and (path.endswith("/models") or path == "/props")


class ReplayServer:
    """An HTTP/1.1 server on 127.0.0.1 answering the N-th request with ``exchanges[N]``.

    Use it as ``with ReplayServer(script) as server:`` or ``async with``. A request past the
    end of the script gets a ``599`` JSON error and is recorded as a failure; call
    :meth:`assert_all_served` at the end of the test to check the script ran exactly.

    Questions about the server — ``GET …/models`` and ``GET /props`` — are answered from
    ``routes`` (keyed by ``(method, path)``) when it has them, else with ``404`` like a server
    that does not implement them; either way they consume no exchange and are recorded in
    :attr:`questions`, not :attr:`requests`. A route also answers any other exact
    ``(method, path)`` it names.
    """

    def __init__(
        self,
        exchanges: Sequence[Exchange],
        *,
        routes: Mapping[tuple[str, str], Exchange] | None = None,
    ) -> None:
        self.exchanges: tuple[Exchange, ...] = tuple(exchanges)
        self.routes: dict[tuple[str, str], Exchange] = dict(routes or {})
        self._questions: list[ReceivedRequest] = []
        self._lock = threading.Lock()
        self._requests: list[ReceivedRequest] = []
        self._failures: list[str] = []
        self._connections: set[socket.socket] = set()
        self._accepted = 0
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind an ephemeral port and serve in a background thread."""
        if self._httpd is not None:
            msg = "ReplayServer already started"
            raise RuntimeError(msg)
        self._stopping.clear()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _POLL_INTERVAL},
            name=f"ReplayServer:{self.port}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut every open connection, close all sockets and join all threads."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        self._stopping.set()
        httpd.shutdown()
        thread.join()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        httpd.server_close()  # joins the handler threads
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (only while started)."""
        if self._httpd is None:
            msg = "ReplayServer is not running"
            raise RuntimeError(msg)
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        """``base_url`` joined with ``path`` (a leading ``/`` is added if missing)."""
        return self.base_url + (path if path.startswith("/") else f"/{path}")

    # -- what happened ------------------------------------------------------------------------

    @property
    def requests(self) -> list[ReceivedRequest]:
        """The requests received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def questions(self) -> list[ReceivedRequest]:
        """The routed requests and questions about the server, in arrival order (a copy)."""
        with self._lock:
            return list(self._questions)

    @property
    def failures(self) -> list[str]:
        """Unscripted requests and server-side errors seen so far."""
        with self._lock:
            return list(self._failures)

    @property
    def remaining(self) -> int:
        """How many exchanges have not been served yet."""
        with self._lock:
            return max(0, len(self.exchanges) - len(self._requests))

    def assert_all_served(self) -> None:
        """Raise ``AssertionError`` unless every exchange was served and nothing else came."""
        with self._lock:
            problems = list(self._failures)
            unserved = len(self.exchanges) - len(self._requests)
            received = [f"{r.method} {r.path}" for r in self._requests]
        if unserved > 0:
            problems.append(f"{unserved} of {len(self.exchanges)} exchange(s) never requested")
        if problems:
            msg = "replay script mismatch: " + "; ".join(problems) + f" (received: {received})"
            raise AssertionError(msg)

    # -- handler side -------------------------------------------------------------------------

    def _next(self, request: ReceivedRequest) -> Exchange | str:
        """Record ``request``; its exchange, or the failure message when the script ran out."""
        with self._lock:
            route = self.routes.get((request.method, request.path_only))
            if route is not None or _is_server_question(request.method, request.path_only):
                self._questions.append(request)
                return route if route is not None else _NOT_IMPLEMENTED
            index = len(self._requests)
            self._requests.append(request)
            if index < len(self.exchanges):
                return self.exchanges[index]
            message = (
                f"unscripted request #{index + 1} {request.method} {request.path} "
                f"(the script has {len(self.exchanges)} exchange(s))"
            )
            self._failures.append(message)
            return message

    def _record_failure(self, message: str) -> None:
        with self._lock:
            self._failures.append(message)

    def _track(self, connection: socket.socket) -> int:
        """Remember an open connection (cut on stop); its number in accept order."""
        with self._lock:
            self._connections.add(connection)
            number = self._accepted
            self._accepted += 1
            stopping = self._stopping.is_set()
        if stopping:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        return number

    def _untrack(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)
