"""S06 finding 4: a differential harness — our reading of a URL against a WHATWG parser's.

The bypasses in the review were all one shape: the policy read a URL one way and the client (or a
browser, or urllib3) read it another. This harness generates URLs that mix ordinary ones with the
tricky pieces — backslashes, ``@``, ``%``-encoding, unicode dots, fullwidth and enclosed letters,
IPv6 literals with zone ids, ports, userinfo, control characters, whitespace, trailing dots, IPv4
numbers in hex, octal and short forms — and asserts:

(a) whenever the policy allows a URL, the WHATWG parse of the same text has the same scheme,
    host (compared in A-label form, or as the address for an IP host) and port as the
    :class:`~robota.host.Allowed`;
(b) no URL whose host (or port) differs between ``urllib.parse`` and the WHATWG parse is allowed;
(c) end to end, the host the pinned transport is asked for, and the address it connects to, are
    the host and addresses the policy checked (a real server on 127.0.0.1, reached through
    :func:`robota.testing.loopback_allowance`).

Why ada-url as the WHATWG reference: it implements the WHATWG URL Standard — the parser
browsers use and that urllib3 and most HTTP stacks converge on — and passes the Web Platform Tests
for it; it is actively maintained and is the URL parser of Node.js (since 18.17/20), so it is the
reading of a mainstream HTTP client, not a reimplementation of our own; and its Python binding
(``ada-url``) is a compiled wheel that needs no network. ``urllib.parse``, ``rfc3986``,
``hyperlink`` and ``yarl`` follow RFC 3986 instead, and the pure-Python WHATWG ports are
unmaintained. It is a test-only dependency: nothing under ``src/`` imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import ada_url
import httpcore2
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.host import Allowed, EgressClient, check_url
from robota.host.egress._host import HostError, normalise_host
from robota.testing import loopback_allowance

_PUBLIC = ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]
_DEFAULT_PORTS = {"http": 80, "https": 443}

HostView = tuple[str, Any]  # ("ip", int) or ("name", A-label text)


async def _public(host: str) -> list[str]:
    return _PUBLIC


def _name_view(text: str) -> HostView:
    return ("name", text[:-1] if text.endswith(".") else text)


def _ours(decision: Allowed) -> tuple[str, HostView, int]:
    host = decision.host
    if ":" in host:
        view: HostView = ("ip", int(ipaddress.IPv6Address(host)))
    else:
        try:
            view = ("ip", int(ipaddress.IPv4Address(host)))
        except ValueError:
            view = _name_view(host)
    return decision.scheme, view, decision.port


def _whatwg(url: str) -> tuple[str, HostView, int] | None:
    """Scheme, host and port as ada (WHATWG) reads ``url``; ``None`` if it is not a URL to it."""
    try:
        parsed = ada_url.parse_url(url)
    except ValueError:
        return None
    scheme = str(parsed["protocol"]).rstrip(":")
    if scheme not in _DEFAULT_PORTS:
        return None
    hostname = str(parsed["hostname"])
    kind = parsed["host_type"]
    if kind == ada_url.HostType.IPV4:
        view: HostView = ("ip", int(ipaddress.IPv4Address(hostname)))
    elif kind == ada_url.HostType.IPV6:
        view = ("ip", int(ipaddress.IPv6Address(hostname.strip("[]"))))
    else:
        view = _name_view(hostname)
    port = int(parsed["port"]) if parsed["port"] else _DEFAULT_PORTS[scheme]
    return scheme, view, port


def _urllib(url: str) -> tuple[str, HostView, int] | None:
    """The same triple as ``urllib.parse`` reads it, the host put through our normaliser."""
    try:
        parts = urlsplit(url)
        port = parts.port
        hostname = parts.hostname or ""
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not hostname:
        return None
    try:
        host = normalise_host(f"[{hostname}]" if ":" in hostname else hostname)
    except HostError:
        return None
    view = ("ip", int(host.address)) if host.address is not None else _name_view(host.text)
    return scheme, view, port if port is not None else _DEFAULT_PORTS[scheme]


def _check(url: str) -> bool:
    """Assert (a) and (b) for ``url``; whether the policy allowed it."""
    decision = asyncio.run(check_url(url, resolver=_public))
    whatwg = _whatwg(url)
    if decision.ok:
        # (a) what we allow is what a WHATWG client would connect to
        assert whatwg == _ours(decision), (url, decision, whatwg)
    if whatwg != _urllib(url):
        # (b) a URL the two parsers disagree on is never allowed
        assert not decision.ok, (url, decision, whatwg, _urllib(url))
    return decision.ok


# --------------------------------------------------------------------------- the generator

_SCHEMES = ["http", "https", "HTTP", "hTtPs", "ftp", "javascript"]
_SEPARATORS = ["://"] * 6 + [":/", ":", ":///", ":\\\\", ":/\\", "://\\", ":\\/"]
_USERINFO = [""] * 8 + ["user@", "user:pass@", "a@b@", "127.0.0.1:80\\@", "%40@", "@", ":@"]
_NAMES = [
    "example.com",
    "www.example.org",
    "例え.jp",
    "bücher.example",
    "faß.de",
    "a_b.example",
    "XN--R8JZ45G.jp",
    "ｅｘａｍｐｌｅ.ｃｏｍ",
    "ⓔⓧⓐⓜⓟⓛⓔ.com",
    "example\u3002com",
    "example\uff0ecom",
    "example\uff61com",
    "example.com.",
    "example.com..",
    "exa\u00admple.com",
    "localhost",
    "ｌｏｃａｌｈｏｓｔ",
    "metadata。google。internal",
    "%6c%6fcalhost",
    "ex%41mple.com",
    "",
    "xn--",
    "a..b",
    "☃.com",
]
_IPV4 = [
    "127.0.0.1",
    "93.184.215.14",
    "8.8.8.8",
    "2130706433",
    "134744072",
    "0x7f.1",
    "0x08.0x08.0x08.0x08",
    "0177.0.0.1",
    "010.010.010.010",
    "8.8.2056",
    "8.526344",
    "１２７.０.０.１",
    "８.８.８.８",
    "0x",
    "1.2.3.999",
    "192.0.0.192",
    "169.254.169.254",
    "8.8.8.8.",
]
_IPV6 = [
    "[::1]",
    "[2606:4700::1111]",
    "[2606:4700:0:0::1111]",
    "[::ffff:127.0.0.1]",
    "[::ffff:8.8.8.8]",
    "[::ffff:808:808]",
    "[64:ff9b::8.8.8.8]",
    "[2002:808:808::1]",
    "[fe80::1%25eth0]",
    "[fe80::1%eth0]",
    "[2606:4700::1111%25lo]",
    "[3fff::1]",
    "[::ffff:127.0.0.01]",
    "[v1.x]",
    "[::1",
]
_PORTS = [""] * 6 + [":80", ":443", ":8080", ":", ":0", ":65535", ":65536", ":８０", ":0x50"]
_PORTS += [": 80", ":00080", ":-1", ":80:80"]
_PATHS = ["/", "", "/p?q=1#f", "/a/../b", "?q", "#f", "/%2e%2e/", "\\p", "/日本", "/@x"]
_NOISE = ["", "", "", "", "\t", "\n", "\r", "\x00", "\x7f", " ", "\\", "@", "%", "%25", ".", ":"]
_NOISE += ["\u3002", "\uff0e", "\u00ad", "\u200b", "#", "?", "/", "[", "]", "\u00a0", "\x85"]


_ORDINARY_HOSTS = [h for h in [*_NAMES, *_IPV4, *_IPV6] if "%" not in h and h not in ("", "[::1")]


def _assemble(
    pick: Callable[[list[str]], str], position: Callable[[int], int], *, clean: bool
) -> str:
    """One generated URL; ``clean`` draws only pieces an ordinary URL has (hosts still vary)."""
    if clean:
        return (
            pick(["http", "https", "HTTPS"])
            + "://"
            + pick(_ORDINARY_HOSTS)
            + pick(["", "", ":8080", ":443", ":00081"])
            + pick(["/", "", "/p?q=1#f", "/日本", "?q"])
        )
    url = (
        pick(_SCHEMES)
        + pick(_SEPARATORS)
        + pick(_USERINFO)
        + pick([*_NAMES, *_IPV4, *_IPV6])
        + pick(_PORTS)
        + pick(_PATHS)
    )
    noise = pick(_NOISE)
    at = position(len(url))
    return url[:at] + noise + url[at:]


@st.composite
def _urls(draw: st.DrawFn) -> str:
    return _assemble(
        lambda choices: draw(st.sampled_from(choices)),
        lambda n: draw(st.integers(0, n)),
        clean=draw(st.booleans()),
    )


@settings(max_examples=4_000, deadline=None)
@given(_urls())
def test_s06_allowed_urls_parse_the_same_under_whatwg_and_disagreements_are_refused(
    url: str,
) -> None:
    _check(url)


@settings(max_examples=2_000, deadline=None)
@given(st.text(st.sampled_from(list("htps:/\\@%.[]1270xf:ａｌ。 \t")), max_size=30))
def test_s06_the_differential_holds_for_arbitrary_text_from_url_characters(text: str) -> None:
    _check(text)
    _check("http://" + text)


def test_s06_the_differential_harness_is_not_vacuous() -> None:
    # The same generator from a fixed seed: both outcomes must be common, or (a) and (b) would
    # hold only because nothing was allowed (or nothing refused).
    rng = random.Random(20250406)  # noqa: S311 - a reproducible sample, not cryptography
    outcomes = [
        _check(_assemble(rng.choice, lambda n: rng.randint(0, n), clean=rng.random() < 0.5))
        for _ in range(3_000)
    ]
    allowed = sum(outcomes)
    assert allowed > len(outcomes) // 10, allowed
    assert len(outcomes) - allowed > len(outcomes) // 10


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:80\\@evil.com/",
        "http://evil.com\\@127.0.0.1/",
        "http:\\\\127.0.0.1/",
        "http:127.0.0.1",
        "http://%31%32%37.0.0.1/",
        "http://ｌｏｃａｌｈｏｓｔ/",
        "http://1.2.3.4\t.evil/",
        "http://a@127.0.0.1@evil.com/",
    ],
)
def test_s06_the_known_differentials_are_refused(url: str) -> None:
    assert _check(url) is False


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "https://例え.jp/",
        "http://93.184.215.14/",
        "https://[2606:4700::1111]/",
        "http://134744072:8080/x",
        "https://ＥＸＡＭＰＬＥ．ｃｏｍ./",
    ],
)
def test_s06_ordinary_urls_are_allowed_and_agree_with_whatwg(url: str) -> None:
    assert _check(url) is True


# --------------------------------------------------------------------------- (c) end to end


class _Recording(httpcore2.AsyncNetworkBackend):
    """Wraps the pinned backend's inner carrier: records where sockets really go."""

    def __init__(self, *, connect: bool = True) -> None:
        self._inner = httpcore2.AnyIOBackend()
        self._connect = connect
        self.connected: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        self.connected.append((host, port))
        if not self._connect:
            raise httpcore2.ConnectError("recorded, not connected")
        return await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise AssertionError("no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _instrument(http: EgressClient, recording: _Recording) -> list[str]:
    """Record the host httpcore2 asks the pinned backend for, and swap its inner carrier."""
    backend: Any = http._backend  # private: the pinned backend is what this test observes
    backend._inner = recording
    asked: list[str] = []
    original: Callable[..., Awaitable[httpcore2.AsyncNetworkStream]] = backend.connect_tcp

    async def connect_tcp(host: str, port: int, **kwargs: Any) -> httpcore2.AsyncNetworkStream:
        asked.append(host)
        return await original(host, port, **kwargs)

    backend.connect_tcp = connect_tcp
    return asked


@contextlib.asynccontextmanager
async def _server() -> AsyncIterator[tuple[int, list[str]]]:
    hosts: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "host":
                hosts.append(value.strip())
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], hosts
    finally:
        server.close()
        await server.wait_closed()


class _Resolver:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        return ["127.0.0.1"]


@pytest.mark.parametrize(
    ("spelling", "allowed_name"),
    [
        ("a.test", "a.test"),
        ("A.TEST.", "a.test"),
        ("ａ．ｔｅｓｔ", "a.test"),
        ("a。test", "a.test"),
        ("ⓐ.ⓣⓔⓢⓣ", "a.test"),
        ("例え.test", "例え.test"),
        ("bücher.test", "bücher.test"),
        ("XN--BCHER-KVA.test", "bücher.test"),
    ],
)
async def test_s06_the_pinned_transport_connects_to_the_host_and_addresses_the_policy_checked(
    spelling: str, allowed_name: str
) -> None:
    resolver = _Resolver()
    recording = _Recording()
    async with (
        _server() as (port, hosts),
        EgressClient(resolver=resolver, allowance=loopback_allowance(allowed_name)) as http,
    ):
        url = f"http://{spelling}:{port}/p"
        decision = await http.check(url)
        assert isinstance(decision, Allowed), decision
        asked = _instrument(http, recording)
        resolver.calls.clear()
        result = await http.get(url)
    assert result.ok, result
    whatwg = _whatwg(url)
    assert whatwg is not None
    assert whatwg[1] == ("name", decision.host)  # the WHATWG host is the host we checked
    assert resolver.calls == [decision.host]  # resolved once, in the normalised form
    assert asked == [decision.host]  # the pinned backend was asked for that same host
    assert recording.connected == [("127.0.0.1", port)]  # and connected to a validated address
    assert hosts == [f"{decision.host}:{port}"]  # the Host header names it too


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://[2606:4700:0::1111]:81/", "2606:4700::1111"),
        ("http://134744072:81/", "8.8.8.8"),
        ("http://０ｘ８.８.８.８:81/", "8.8.8.8"),
        ("http://[::ffff:8.8.8.8]:81/", "::ffff:808:808"),
    ],
)
async def test_s06_an_ip_literal_is_pinned_under_its_canonical_spelling(
    url: str, host: str
) -> None:
    recording = _Recording(connect=False)  # a public address: record, never touch the network
    async with EgressClient() as http:
        asked = _instrument(http, recording)
        with pytest.raises(httpx2.ConnectError):
            await http.get(url)
    assert asked == [host]
    assert recording.connected == [(host, 81)]
    whatwg = _whatwg(url)
    assert whatwg is not None
    assert whatwg[1] == ("ip", int(ipaddress.ip_address(host)))
