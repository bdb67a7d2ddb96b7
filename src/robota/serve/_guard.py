"""The security checks every served request passes first (issue 31: secure by default).

* With a token (required for any bind beyond loopback, see :func:`robota.serve.serve`): every
  request must carry ``Authorization: Bearer <token>``, compared in constant time
  (:func:`hmac.compare_digest`); else 401.
* Without one (a loopback-only server): a request that sends a bearer token anyway is refused
  with 400 ``unexpected_token`` — the client believes it authenticates to a server that checks
  nothing, a misconfiguration worth surfacing — and the ``Host`` header must name a loopback
  host (``127.0.0.1``, ``localhost``, ``[::1]``), so a web page cannot reach the server through
  a rebound DNS name (403 ``host_not_allowed``); and the peer must be on this machine (403
  ``client_not_allowed``), so the app run by hand on ``uvicorn --host 0.0.0.0`` does not serve
  the network, whatever ``Host`` a peer sends.
* Always: a request whose ``Origin`` header names another site than the one it was sent to
  and is not one of the app's listed origins is refused (403 ``origin_not_allowed``). Without
  it, a web page could drive a loopback server with a "simple" cross-site POST (``text/plain``,
  no preflight): the browser hides the answer, but the agent would still run the page's prompt.

:class:`BodyLimit` refuses a request body over a size (declared or streamed, chunked included)
with 413 ``body_too_large`` before the app reads any of it, for apps that read bodies whole
(the A2A and MCP endpoints), and a body not received in full within a time limit with 408
``body_timeout`` (``Connection: close``): a client that sends its headers and then trickles or
stalls its body does not hold a request task forever.

Errors are small JSON bodies, ``{"error": {"code": ..., "message": ...}}``.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
from typing import Final, final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "BodyLimit",
    "ServeConfig",
    "ServeGuard",
    "body_timeout_error",
    "error_body",
    "is_loopback_host",
]

DEFAULT_MAX_BODY_BYTES: Final = 1024 * 1024
"""The default request body limit (1 MiB)."""

DEFAULT_BODY_TIMEOUT: Final = 30.0
"""The default time (seconds) a request's whole body may take to arrive (408 past it)."""

_ORIGIN_REFUSED = "a page of that Origin may not call this server (list it in cors_origins)"
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


_LOOPBACK_V4 = ipaddress.IPv4Network("127.0.0.0/8")
_LOOPBACK_V6 = ipaddress.IPv6Address("::1")


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, 127.0.0.0/8 or ``::1``).

    Decided from the fixed ranges, not the interpreter's ``ipaddress`` flags, whose verdicts
    changed between Python releases (S06).
    """
    bare = host.strip("[]").lower()  # a URL brackets an IPv6 address; host names ignore case
    if bare == "localhost":
        return True
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped
        return address == _LOOPBACK_V6 or (mapped is not None and mapped in _LOOPBACK_V4)
    return address in _LOOPBACK_V4


def error_body(code: str, message: str) -> bytes:
    """The JSON body of an error response."""
    return json.dumps({"error": {"code": code, "message": message}}).encode()


def _loopback_peer(scope: Scope) -> bool:
    client = scope.get("client")
    # No address: a Unix socket or an in-process transport, both on this machine.
    return client is None or is_loopback_host(str(client[0]))


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


@final
class ServeConfig:
    """An app's security settings, read on every request (``serve(token=)`` may set the token).

    Attributes:
        token: The bearer token requests must carry, or ``None`` for a loopback-only app.
    """

    __slots__ = ("token",)

    def __init__(self, token: str | None) -> None:
        self.token = token


class ServeGuard:
    """ASGI middleware applying the checks in the module docstring to every HTTP request."""

    def __init__(
        self,
        app: ASGIApp,
        config: ServeConfig,
        extra_hosts: frozenset[str] = frozenset(),
        origins: frozenset[str] = frozenset(),
    ) -> None:
        self._app = app
        self._config = config
        # The origins (``scheme://host[:port]``) a browser may call from, besides the app's own.
        self._origins = frozenset(o.rstrip("/").lower() for o in origins)
        # Host names (no port) a loopback-only app also answers: the A2A app's own URL's host.
        self._hosts = _LOOPBACK_HOSTS | {h.lower() for h in extra_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        token = self._config.token
        headers = {k.decode("latin-1").lower(): v for k, v in scope["headers"]}
        authorization = headers.get("authorization")
        refusal: tuple[int, str, str] | None = None
        if token is not None:
            scheme, _, credentials = (authorization or b"").partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(
                credentials.strip(), token.encode()
            ):
                refusal = (401, "unauthorized", "a valid 'Authorization: Bearer' token is required")
        elif authorization is not None:
            refusal = (
                400,
                "unexpected_token",
                "this server is loopback-only and checks no token; do not send one",
            )
        elif _hostname(headers.get("host", b"").decode("latin-1")).lower() not in self._hosts:
            refusal = (403, "host_not_allowed", "a loopback-only server answers loopback hosts")
        elif not _loopback_peer(scope):
            refusal = (403, "client_not_allowed", "a loopback-only server answers this machine")
        if refusal is None and not self._origin_allowed(headers):
            refusal = (403, "origin_not_allowed", _ORIGIN_REFUSED)
        if refusal is None:
            await self._app(scope, receive, send)
            return
        await _refuse(send, *refusal)

    def _origin_allowed(self, headers: dict[str, bytes]) -> bool:
        origin = headers.get("origin")
        if origin is None:
            return True  # not a browser's cross-site request
        text = origin.decode("latin-1").strip().lower()
        if text in self._origins or "*" in self._origins:  # "*": CORS open to every site
            return True
        # Same origin: a page this server served calls it (its Host passed the checks above).
        _, separator, netloc = text.partition("://")
        host = headers.get("host", b"").decode("latin-1").strip().lower()
        return bool(separator) and bool(host) and netloc == host


def body_timeout_error(timeout: float) -> tuple[int, str, str]:
    """The status, code and message of a body that did not arrive within ``timeout`` seconds."""
    return 408, "body_timeout", f"the request body did not arrive within {timeout:g} s"


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    body = error_body(code, message)
    response_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if status == 408:
        # The unread rest of the body would be read as the next request: end the connection.
        response_headers.append((b"connection", b"close"))
    if status == 401:
        response_headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": response_headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is a 413 before the app sees the request.

    The body is read here (up to the limit) and handed to the app as one message; later
    messages (a disconnect) come from the server as usual. A client gone before its body
    ended is not served. A body not received in full within ``timeout`` seconds (``None``: no
    limit) is a 408 and the connection is closed.
    """

    def __init__(
        self, app: ASGIApp, limit: int, timeout: float | None = DEFAULT_BODY_TIMEOUT
    ) -> None:
        self._app = app
        self._limit = limit
        self._timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        too_large = (413, "body_too_large", f"the body is limited to {self._limit} bytes")
        for name, value in scope["headers"]:
            if name.lower() == b"content-length" and value.isdigit() and int(value) > self._limit:
                await _refuse(send, *too_large)
                return
        body = bytearray()
        try:
            async with asyncio.timeout(self._timeout):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return  # the client went away before its body ended
                    body += message.get("body", b"")
                    if len(body) > self._limit:
                        await _refuse(send, *too_large)
                        return
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            assert self._timeout is not None  # only a limit times out
            await _refuse(send, *body_timeout_error(self._timeout))
            return
        held: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

        async def replay() -> Message:
            return held.pop(0) if held else await receive()

        await self._app(scope, replay, send)
