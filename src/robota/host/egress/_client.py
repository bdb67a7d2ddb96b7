"""``EgressClient``: HTTP that connects only where the egress policy said it may (S06).

Every hop of every request is checked by :func:`check_url` first, and the request is built from
the components that check returned — scheme, normalised host, port, path and query — never from
the caller's string, so the URL that was checked is the URL that is requested. The request line
carries :attr:`Allowed.target` byte for byte — the WHATWG path the permission rules judged, dot
segments and their ``%2e`` spellings resolved — handed to the connection beside ``httpx2``'s URL,
so neither the raw target nor ``httpx2``'s own re-encoding or dot-segment removal reaches the
wire. The transport is
*pinned*: its network backend connects only to the addresses that check validated, looked up by
exactly the normalised host the request carries, while the ``Host`` header, TLS server name (SNI)
and certificate check all name that host — so there is no second DNS lookup for an attacker to
rebind, and no ambient proxy (the environment is never consulted). If the pinned connection
fails, the request fails: there is no fallback to another carrier.

Redirects are followed by hand: the ``Location`` is joined to the checked URL of the hop and the
result goes through the same strict check (a malformed ``Location`` is a :class:`Rejected`); on a
cross-origin hop every caller-supplied header except ``User-Agent`` is dropped. No cookie is
kept or sent. Policy outcomes
are returned, never raised (:class:`Fetched` or :class:`Rejected`); transport failures raise
``httpx2`` exceptions, as a fetch would. A bounded exchange — :meth:`EgressClient.request` —
reads at most ``max_bytes`` and releases its connection on completion, rejection, abort and
failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import re
import ssl
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, final
from urllib.parse import urljoin

import httpcore2
import httpx2

from robota.core import AbortSignal, abort_error_from_reason
from robota.host._errors import ResponseTooLargeError
from robota.host._race import cancel_and_wait, settle
from robota.host.egress._policy import (
    Allowed,
    EgressDecision,
    LoopbackAllowance,
    Rejected,
    Resolver,
    check_url,
)
from robota.host.egress._url import unsafe_character

__all__ = ["EgressClient", "EgressRefused", "EgressResult", "EgressTransport", "Fetched"]

_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_AMBIGUOUS_LOCATION: Final = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:)?/{3,}|^[A-Za-z][A-Za-z0-9+.\-]*:(?!//)"
)
# Headers that name the connection's identity or framing: set by the client from the checked
# URL and the body, never by the caller (a caller's `Host` would route a pinned connection to
# another virtual host than the one the policy checked).
_RESERVED_HEADERS: Final = frozenset({"host", "content-length", "transfer-encoding", "connection"})
_DEFAULT_USER_AGENT: Final = "robota"
# S06/S12: the checked request target travels to the pinned transport as a request extension,
# so what goes on the request line is exactly Allowed.target (httpx2's URL would re-encode some
# characters and drop literal dot segments by its own rules).
_TARGET: Final = "robota.egress_target"


@final
@dataclass(frozen=True, slots=True)
class Fetched:
    """A completed exchange.

    Attributes:
        url: The final URL (after redirects).
        status: The HTTP status.
        headers: The response headers.
        content: The response body (at most ``max_bytes``).
        redirects: The URLs redirected from, in order.
        truncated: The body was cut at ``max_bytes`` (only when the request asked for
            ``truncate=True``; otherwise a longer body raises).
    """

    url: str
    status: int
    headers: httpx2.Headers
    content: bytes
    redirects: tuple[str, ...] = ()
    truncated: bool = False

    @property
    def ok(self) -> Literal[True]:
        """Always ``True`` — the policy allowed every hop (check ``status`` for HTTP success)."""
        return True

    @property
    def text(self) -> str:
        """The body decoded with the response's charset (UTF-8 when none)."""
        charset = "utf-8"
        content_type = self.headers.get("content-type", "")
        for piece in content_type.split(";")[1:]:
            name, _, value = piece.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip('"')
        return self.content.decode(charset, errors="replace")


EgressResult = Fetched | Rejected
"""What :meth:`EgressClient.request` returns: check ``.ok``."""


def _ssl_context(verify: ssl.SSLContext | bool) -> ssl.SSLContext:
    """The TLS context for ``verify``: the caller's, the system trust store, or none (tests)."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


@final
class _PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Connects to the validated addresses of a host, never to a fresh resolution of it."""

    def __init__(self) -> None:
        self._inner: httpcore2.AsyncNetworkBackend = httpcore2.AnyIOBackend()
        # Normalised host (Allowed.host) -> the addresses the policy validated for it.
        self.pins: dict[str, tuple[str, ...]] = {}

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore2's backend signature
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        # S06: looked up by exactly the host the request was built with (the normalised host);
        # no second normalisation here, so a spelling the policy did not check finds no pin.
        addresses = self.pins.get(host)
        if not addresses:
            # Never an unpinned connection (S06): no validated address, no connection.
            raise httpcore2.ConnectError(f"no validated address for {host!r}")
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore2's backend signature
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("the pinned transport does not use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


_EXCEPTIONS: Final[tuple[tuple[type[Exception], type[httpx2.TransportError]], ...]] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
)


@contextlib.contextmanager
def _mapped(request: httpx2.Request) -> Any:
    try:
        yield
    except (
        httpcore2.TimeoutException,
        httpcore2.NetworkError,
        httpcore2.ProtocolError,
        httpcore2.UnsupportedProtocol,
    ) as exc:
        raise _translate(exc, request) from exc


def _translate(exc: Exception, request: httpx2.Request) -> httpx2.TransportError:
    for core_type, public_type in _EXCEPTIONS:
        if isinstance(exc, core_type):
            return public_type(str(exc), request=request)
    return httpx2.TransportError(str(exc), request=request)


@final
class _Body(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, request: httpx2.Request) -> None:
        self._stream = stream
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped(self._request):
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        closer = getattr(self._stream, "aclose", None)
        if closer is not None:
            await closer()


@final
class _PinnedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, ssl_context: ssl.SSLContext, backend: _PinnedBackend) -> None:
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context, network_backend=backend, max_connections=50
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        target = request.extensions.get(_TARGET)
        if not isinstance(target, bytes):
            # Never a request whose target the policy did not hand over (S06).
            raise httpx2.LocalProtocolError(
                "the pinned transport sends only a target the egress policy checked",
                request=request,
            )
        core_request = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=target,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions={k: v for k, v in request.extensions.items() if k != _TARGET},
        )
        with _mapped(request):
            response = await self._pool.handle_async_request(core_request)
        return httpx2.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream, request),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def _origin(decision: Allowed) -> tuple[str, str, int]:
    # Checked hops only: the policy has already normalised scheme, host and port.
    return decision.scheme, decision.host, decision.port


def _request_url(decision: Allowed) -> httpx2.URL:
    # S06: built from the checked components, never from the string the caller passed.
    return httpx2.URL(
        scheme=decision.scheme,
        host=decision.host,
        port=decision.port,
        raw_path=decision.target.encode("ascii"),
    )


def _target(decision: Allowed) -> dict[str, Any]:
    """The request extension that carries the checked target to the pinned transport."""
    return {_TARGET: decision.target.encode("ascii")}


def _next_hop(decision: Allowed, location: str) -> str | None:
    """The redirect target joined to the checked URL, or ``None`` if ``location`` is malformed."""
    # The joined URL goes through the strict check like any other; refusing these characters
    # here first keeps urljoin from resolving a Location a WHATWG client would read otherwise.
    if unsafe_character(location) is not None:
        return None
    if _AMBIGUOUS_LOCATION.match(location):
        # `///host/x`, `http:///host/x`, `http:host/x`: urljoin reads a path on the current
        # host where a WHATWG client reads another host (or another scheme's reading).
        return None
    try:
        return urljoin(decision.request_url, location)
    except ValueError:  # e.g. an unclosed "[": urljoin parses the Location before joining
        return None


@final
class EgressClient:
    """An async HTTP client on the pinned transport with the redirect rules (S06).

    Args:
        resolver: ``async (host) -> [ip, ...]``; default: the system resolver.
        allowance: Test-only loopback allowance (:func:`robota.testing.loopback_allowance`).
        verify: TLS verification: ``True`` (system trust store), an ``ssl.SSLContext``, or
            ``False`` (never in production).
        timeout: Seconds for connect, read and write each.
        max_redirects: Hops followed before giving up (a :class:`Rejected`).
        max_bytes: The most body bytes a bounded exchange reads.
        user_agent: The ``User-Agent`` sent (kept across cross-origin hops).
    """

    __slots__ = (
        "_allowance",
        "_backend",
        "_client",
        "_max_bytes",
        "_max_redirects",
        "_resolver",
        "_user_agent",
    )

    def __init__(
        self,
        *,
        resolver: Resolver | None = None,
        allowance: LoopbackAllowance | None = None,
        verify: ssl.SSLContext | bool = True,
        timeout: float = 30.0,
        max_redirects: int = 10,
        max_bytes: int = 10 * 1024 * 1024,
        user_agent: str = _DEFAULT_USER_AGENT,
    ) -> None:
        self._resolver = resolver
        self._allowance = allowance
        self._max_redirects = max_redirects
        self._max_bytes = max_bytes
        self._user_agent = user_agent
        context = _ssl_context(verify)
        self._backend = _PinnedBackend()
        self._client = httpx2.AsyncClient(
            transport=_PinnedTransport(context, self._backend),
            follow_redirects=False,
            trust_env=False,  # no ambient proxy, no .netrc
            timeout=timeout,
            # Stateless: a cookie one server set is never sent back, to it or to another (a
            # client shared between callers must not carry one caller's session to the next).
            cookies=http.cookiejar.CookieJar(
                http.cookiejar.DefaultCookiePolicy(allowed_domains=[])
            ),
        )

    async def check(self, url: str) -> EgressDecision:
        """The policy's decision for ``url`` (no request is made)."""
        return await check_url(url, resolver=self._resolver, allowance=self._allowance)

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        signal: AbortSignal | None = None,
        max_bytes: int | None = None,
        truncate: bool = False,
    ) -> EgressResult:
        """A bounded exchange: follow redirects by hand, check every hop, read the body.

        Returns :class:`Rejected` when the policy refuses a hop (the reason names which hop);
        raises ``httpx2`` transport errors, :class:`ResponseTooLargeError` past ``max_bytes``,
        and :class:`~robota.AbortError` when ``signal`` aborts. The connection is released in
        every case.

        Args:
            method: The HTTP method.
            url: The URL; checked, like every redirect hop, before anything is sent.
            headers: Request headers (never ``Host`` or the body's framing headers).
            content: The request body.
            signal: Aborts the exchange.
            max_bytes: This exchange's body limit, at most the client's (default: the
                client's).
            truncate: Past the limit, stop reading and return the body read so far with
                :attr:`Fetched.truncated` set, instead of raising.
        """
        limit = self._max_bytes if max_bytes is None else min(max_bytes, self._max_bytes)
        if limit < 0:
            raise ValueError(f"max_bytes must not be negative, got {max_bytes!r}")
        given = dict(headers or {})
        reserved = sorted(k for k in given if k.lower() in _RESERVED_HEADERS)
        if reserved:
            return Rejected(
                url,
                f"the {reserved[0]!r} header is set by the client from the checked URL and the"
                " body; a caller may not pass it",
            )
        current_headers = (
            given
            if any(k.lower() == "user-agent" for k in given)
            else {"User-Agent": self._user_agent, **given}
        )
        current_url, current_method, body = url, method.upper(), content
        hops: list[str] = []
        previous: Allowed | None = None
        for hop in range(self._max_redirects + 1):
            decision = await self.check(current_url)
            if not decision.ok:
                where = f" (redirect {hop} from {hops[-1]})" if hops else ""
                return Rejected(current_url, f"{decision.reason}{where}")
            if previous is not None and _origin(previous) != _origin(decision):
                # S06: a cross-origin hop keeps only User-Agent of the caller's headers.
                current_headers = {
                    k: v for k, v in current_headers.items() if k.lower() == "user-agent"
                }
            previous = decision
            self._backend.pins[decision.host] = decision.addresses
            status, response_headers, data, cut = await self._exchange(
                current_method, decision, current_headers, body, signal, limit, truncate
            )
            location = response_headers.get("location")
            if status in _REDIRECTS and location:
                next_url = _next_hop(decision, location)
                if next_url is None:
                    return Rejected(
                        location,
                        f"malformed URL: the Location {location!r} has a control character,"
                        f" whitespace, a backslash or an unreadable authority (redirect {hop + 1}"
                        f" from {decision.request_url})",
                    )
                if status == 303 or (status in (301, 302) and current_method == "POST"):
                    current_method, body = "GET", None
                    current_headers = {
                        k: v
                        for k, v in current_headers.items()
                        if k.lower() not in ("content-type", "content-length")
                    }
                hops.append(decision.request_url)
                current_url = next_url
                continue
            return Fetched(decision.request_url, status, response_headers, data, tuple(hops), cut)
        return Rejected(current_url, f"more than {self._max_redirects} redirects")

    async def get(self, url: str, **options: Any) -> EgressResult:
        """``request("GET", url, ...)``."""
        return await self.request("GET", url, **options)

    async def _exchange(
        self,
        method: str,
        decision: Allowed,
        headers: Mapping[str, str],
        body: bytes | None,
        signal: AbortSignal | None,
        limit: int,
        truncate: bool,
    ) -> tuple[int, httpx2.Headers, bytes, bool]:
        if signal is None:
            return await self._read(method, decision, headers, body, limit, truncate)
        signal.throw_if_aborted()
        work = asyncio.ensure_future(self._read(method, decision, headers, body, limit, truncate))
        # Cancelling the read releases the connection: the stream's context exits.
        ending = await settle(work, signal=signal, within=None, stop=lambda: cancel_and_wait(work))
        if ending != "done":
            raise abort_error_from_reason(signal.reason)
        return work.result()

    async def _read(
        self,
        method: str,
        decision: Allowed,
        headers: Mapping[str, str],
        body: bytes | None,
        limit: int,
        truncate: bool,
    ) -> tuple[int, httpx2.Headers, bytes, bool]:
        async with self._client.stream(
            method,
            _request_url(decision),
            headers=dict(headers),
            content=body,
            extensions=_target(decision),
        ) as response:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                if size + len(chunk) > limit:
                    if not truncate:
                        raise ResponseTooLargeError(
                            f"the response from {decision.request_url} exceeded {limit} bytes"
                        )
                    # Nothing past the limit is read; leaving the stream closes the connection.
                    chunks.append(chunk[: limit - size])
                    return response.status_code, response.headers, b"".join(chunks), True
                size += len(chunk)
                chunks.append(chunk)
            return response.status_code, response.headers, b"".join(chunks), False

    async def aclose(self) -> None:
        """Close the client and its connections."""
        await self._client.aclose()

    async def __aenter__(self) -> EgressClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class EgressRefused(httpx2.ConnectError):
    """The egress policy refused a request an :class:`EgressTransport` was given (S06).

    A transport error (a :class:`httpx2.ConnectError`), so a library using the client treats it
    as a connection that could not be made; ``reason`` says why.
    """

    def __init__(self, reason: str, *, request: httpx2.Request) -> None:
        super().__init__(f"refused by the egress policy: {reason}", request=request)
        self.reason = reason


@final
class EgressTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that applies the egress policy to every request it sends (S06).

    For a library that takes an ``httpx2.AsyncClient`` (an SDK with its own redirect handling):
    build the client as ``httpx2.AsyncClient(transport=EgressTransport(...), trust_env=False)``.
    Every request — each redirect hop the library follows included — is checked by
    :func:`check_url`, built from the checked components (the request line carries the checked
    :attr:`Allowed.target`) and sent on the pinned connection to the validated addresses; a
    refusal raises :class:`EgressRefused`.

    Args:
        resolver: ``async (host) -> [ip, ...]``; default: the system resolver.
        allowance: Test-only loopback allowance (:func:`robota.testing.loopback_allowance`).
        private_network: Admit this one destination on the caller's own network (see
            :func:`check_url`); metadata addresses stay refused.
        verify: TLS verification, as for :class:`EgressClient`.
    """

    def __init__(
        self,
        *,
        resolver: Resolver | None = None,
        allowance: LoopbackAllowance | None = None,
        private_network: bool = False,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        context = _ssl_context(verify)
        self._resolver = resolver
        self._allowance = allowance
        self._private = bool(private_network)
        self._backend = _PinnedBackend()
        self._inner = _PinnedTransport(context, self._backend)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Check, pin and send one request."""
        decision = await check_url(
            str(request.url),
            resolver=self._resolver,
            allowance=self._allowance,
            private_network=self._private,
        )
        if isinstance(decision, Rejected):
            raise EgressRefused(decision.reason, request=request)
        self._backend.pins[decision.host] = decision.addresses
        # S06: the caller's Host never reaches a pinned connection (it would route it to another
        # virtual host than the one checked): Host is made from the checked URL. The body's
        # framing headers are the ones httpx2 computed for this very request.
        url = _request_url(decision)
        headers = [("host", url.netloc.decode("ascii"))]
        headers += [
            (name, value) for name, value in request.headers.multi_items() if name.lower() != "host"
        ]
        checked = httpx2.Request(
            request.method,
            url,
            headers=headers,
            stream=request.stream,
            extensions={**request.extensions, **_target(decision)},
        )
        return await self._inner.handle_async_request(checked)

    async def aclose(self) -> None:
        """Close the pinned connections."""
        await self._inner.aclose()
