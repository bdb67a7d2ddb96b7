"""A real HTTP server on 127.0.0.1 (port 0) for the ``WebFetch`` tests, and an egress client
that reaches it under the test-only loopback allowance (S06)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import robota.host
from robota.testing import loopback_allowance

#: The name the test resolver maps to 127.0.0.1 and the allowance admits.
HOST = "site.test"
#: A name that also resolves to 127.0.0.1 but that the allowance does not admit.
OTHER = "other.test"

Route = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Site:
    """The running server: its routes, what it was asked, and a gate slow routes wait on."""

    port: int
    routes: dict[str, Route]
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str, host: str = HOST) -> str:
        return f"http://{host}:{self.port}{path}"


def reply(status: int, body: bytes, content_type: str | None, **headers: str) -> Route:
    """A route answering ``status`` with ``body`` and headers."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        if content_type is not None:
            handler.send_header("Content-Type", content_type)
        for name, value in headers.items():
            handler.send_header(name.replace("_", "-"), value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return route


def redirect(location: str, status: int = 302) -> Route:
    return reply(status, b"", "text/plain", Location=location)


def serve() -> Iterator[Site]:
    """Start the server; yield its :class:`Site`; stop it (releasing any stalled route)."""
    site: Site

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            site.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            site.arrived.set()
            route = site.routes.get(path)
            if route is None:
                reply(404, b"<h1>Not Found</h1><p>no such page</p>", "text/html")(self)
                return
            # The client may stop reading (a cap, a timeout, an abort).
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                route(self)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    site = Site(port=server.server_address[1], routes={})
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def client(**options: object) -> robota.host.EgressClient:
    """An egress client resolving ``site.test`` and ``other.test`` to 127.0.0.1; only
    ``site.test`` is admitted by the loopback allowance (S06: test-only)."""

    async def resolve(host: str) -> list[str]:
        if host in (HOST, OTHER):
            return ["127.0.0.1"]
        raise OSError(f"unknown host {host}")

    return robota.host.EgressClient(
        resolver=resolve,
        allowance=loopback_allowance(HOST),
        **options,  # type: ignore[arg-type]
    )
