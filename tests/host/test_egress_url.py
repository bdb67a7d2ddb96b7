"""S06 finding 3: the URL that is checked is the URL that is connected to.

``http://127.0.0.1:80\\@evil.com/`` is ``evil.com`` to ``urllib.parse`` (which the policy used)
and ``127.0.0.1`` to WHATWG parsers and urllib3 (which read ``\\`` as ``/``). The strict reading
now refuses anything the two could read differently — backslashes, controls, whitespace,
credentials, odd ports, malformed authorities — and the client builds its request from the
checked components, never from the raw string. Redirect ``Location`` values go through the same
check.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.host import Allowed, EgressClient, check_url
from robota.host.egress._url import URLError, split_url
from robota.testing import loopback_allowance

_PUBLIC = "93.184.215.14"


class Recorder:
    def __init__(self, answers: list[str] | None = None) -> None:
        self.calls: list[str] = []
        self.answers = answers or [_PUBLIC]

    async def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        return self.answers


async def test_s06_the_backslash_at_userinfo_differential_is_refused() -> None:
    resolver = Recorder()
    decision = await check_url("http://127.0.0.1:80\\@evil.com/", resolver=resolver)
    assert decision.ok is False
    assert "malformed URL" in decision.reason
    assert resolver.calls == []


@pytest.mark.parametrize(
    "url",
    [
        # backslashes: a path or authority separator to WHATWG, a plain character to urllib
        "http://evil.com\\@127.0.0.1/",
        "http:\\\\127.0.0.1\\",
        "http://127.0.0.1\\.evil.com/",
        "http://example.com\\@169.254.169.254/",
        "http://example.com/\\..\\",
        # credentials and ambiguous '@'
        "http://user@example.com/",
        "http://user:pass@example.com/",
        "http://a@b@example.com/",
        "http://%40@example.com/",
        "http://example.com@127.0.0.1/",
        "http://:@example.com/",
        # control characters and whitespace anywhere (WHATWG deletes tab/newline, urllib strips)
        "http://exa\tmple.com/",
        "http://127.0.0.1\n.evil.com/",
        "http://example.com /",
        "http://exa\x00mple.com/",
        "http://example.com/\x7f",
        "http://example.com/pa th",
        "http://example.com/\u2028",
        "http://example.com\u00a0/",
        "http://example.com\x85/",
        "\x00http://example.com/",
        " https://example.com/",  # urllib keeps trailing whitespace in the host; WHATWG strips
        "https://example.com \n",
        "https://example.com/x\n",
        "http://example.com\r\nHost: evil/",
        # not scheme://authority
        "http:example.com",
        "http:/example.com",
        "http:///example.com",
        "http:",
        "//example.com/",
        # ports
        "http://example.com:/",
        "http://example.com:0/",
        "http://example.com:65536/",
        "http://example.com:99999/",
        "http://example.com:８０/",
        "http://example.com:0x50/",
        "http://example.com:-1/",
        "http://example.com:+80/",
        "http://example.com:80:80/",
        "http://example.com:000080/",
        "http://[::1]:/",
        # IP literals
        "http://[fe80::1%25eth0]/",
        "http://[fe80::1%eth0]/",
        "http://[::1]x/",
        "http://[v1.x]/",
        "http://[::1/",
        "http://::1/",
        "http://[2606:4700::1111%25lo]/",
        "http://[::ffff:127.0.0.01]/",
        "http://[１::]/",
        # hosts
        "http://%31%32%37.0.0.1/",
        "http://ex%41mple.com/",
        "http://example.com%2F@127.0.0.1/",
        "http://ａ＠ｂ.com/",
        "http://ａ：8080/",
        "http://exa^mple.com/",
        "http://exa|mple.com/",
        "http://exa<mple.com/",
        "http://[/",
        "http://]/",
    ],
)
async def test_s06_urls_two_parsers_could_read_differently_are_refused(url: str) -> None:
    resolver = Recorder()
    decision = await check_url(url, resolver=resolver)
    assert decision.ok is False, decision
    assert decision.reason
    assert resolver.calls == []


@pytest.mark.parametrize(
    ("url", "scheme", "host", "port", "target"),
    [
        ("https://example.com/", "https", "example.com", 443, "/"),
        ("https://example.com", "https", "example.com", 443, "/"),
        ("HTTP://EXAMPLE.COM:8080/a/b?c=d#frag", "http", "example.com", 8080, "/a/b?c=d"),
        ("http://example.com?q=1", "http", "example.com", 80, "/?q=1"),
        ("http://example.com#only-a-fragment", "http", "example.com", 80, "/"),
        ("http://example.com:0080/", "http", "example.com", 80, "/"),
        (
            "https://example.com/日本?q=ü",
            "https",
            "example.com",
            443,
            "/%E6%97%A5%E6%9C%AC?q=%C3%BC",
        ),
        ("http://93.184.215.14/", "http", "93.184.215.14", 80, "/"),
        ("https://[2606:4700::1111]:8443/", "https", "2606:4700::1111", 8443, "/"),
        ("https://[2606:4700:0::1111]/", "https", "2606:4700::1111", 443, "/"),
    ],
)
async def test_s06_ordinary_urls_are_allowed_with_their_checked_components(
    url: str, scheme: str, host: str, port: int, target: str
) -> None:
    decision = await check_url(url, resolver=Recorder())
    assert decision.ok, decision
    assert (decision.scheme, decision.host, decision.port, decision.target) == (
        scheme,
        host,
        port,
        target,
    )


def test_s06_the_request_url_is_rebuilt_from_the_components() -> None:
    decision = Allowed(
        "x", "2606:4700::1111", 8443, ("2606:4700::1111",), scheme="https", target="/a?b"
    )
    assert decision.request_url == "https://[2606:4700::1111]:8443/a?b"
    plain = Allowed("HTTP://Example.com:80/p#f", "example.com", 80, ("93.184.215.14",))
    assert (plain.scheme, plain.target) == ("http", "/p")  # filled by the same strict reading
    assert plain.request_url == "http://example.com/p"


_SEPARATORS = ["://", ":/", ":", ":///", ":\\\\", ":/\\", "://\\"]
_USERINFO = ["", "user@", "user:pass@", "a@b@", "127.0.0.1:80\\@", "%40@", "@"]
_HOSTS = ["example.com", "127.0.0.1", "[::1]", "ｅｘａｍｐｌｅ.com", "example.com.", ""]
_PORTS = ["", ":80", ":", ":0", ":65536", ":８０", ":0x50", ": 80", ":00080"]
_PATHS = ["/", "", "/p?q=1#f", "\\p", "?q", "#f", "/%2e%2e/", "/\t"]
_NOISE = ["", "\t", "\n", "\x00", " ", "\\", "@", "%", "\u3002", "\u00ad", "#", "?", ":", "["]


@st.composite
def _urls(draw: st.DrawFn) -> str:
    url = (
        draw(st.sampled_from(["http", "https", "HTTP", "ftp"]))
        + draw(st.sampled_from(_SEPARATORS))
        + draw(st.sampled_from(_USERINFO))
        + draw(st.sampled_from(_HOSTS))
        + draw(st.sampled_from(_PORTS))
        + draw(st.sampled_from(_PATHS))
    )
    noise = draw(st.sampled_from(_NOISE))
    at = draw(st.integers(0, len(url)))
    return url[:at] + noise + url[at:]


@settings(max_examples=3_000, deadline=None)
@given(_urls())
def test_s06_an_allowed_url_has_no_ambiguous_piece_in_its_authority(url: str) -> None:
    decision = asyncio.run(check_url(url, resolver=Recorder()))
    if not decision.ok:
        assert decision.reason
        return
    stripped = url
    authority = stripped.split("//", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    assert not any(c in authority for c in "\\@% \t\n\x00"), (url, decision)
    assert stripped.lower().startswith(("http://", "https://")), url


@settings(max_examples=2_000, deadline=None)
@given(st.text(max_size=40))
def test_s06_split_url_raises_only_url_error(text: str) -> None:
    with contextlib.suppress(URLError):
        split_url(text)


# --------------------------------------------------------------------------- the client and redirects


@contextlib.asynccontextmanager
async def _server(
    routes: dict[str, tuple[int, dict[str, str]]],
) -> AsyncIterator[tuple[int, list[tuple[str, str]]]]:
    seen: list[tuple[str, str]] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        lines = head.split("\r\n")
        target = lines[0].split(" ")[1]
        host = next(
            v.strip() for k, _, v in (x.partition(":") for x in lines[1:]) if k.lower() == "host"
        )
        seen.append((target, host))
        status, headers = routes.get(target, (200, {}))
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        writer.write(
            f"HTTP/1.1 {status} X\r\ncontent-length: 2\r\nconnection: close\r\n{extra}\r\nok".encode()
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], seen
    finally:
        server.close()
        await server.wait_closed()


def _client(resolver: Any) -> EgressClient:
    return EgressClient(resolver=resolver, allowance=loopback_allowance("a.test", "b.test"))


async def test_s06_the_client_requests_exactly_the_checked_url() -> None:
    resolver = Recorder(["127.0.0.1"])
    async with _server({}) as (port, seen), _client(resolver) as http:
        result = await http.get(f"http://Ａ．ＴＥＳＴ.:{port}/x?y=1#fragment")
    assert result.ok, result
    assert seen == [("/x?y=1", f"a.test:{port}")]
    assert resolver.calls == ["a.test"]
    assert result.url == f"http://a.test:{port}/x?y=1"


@pytest.mark.parametrize(
    "location",
    [
        "http://b.test\\@127.0.0.1/",
        "/\\127.0.0.1/",
        "\\\\127.0.0.1/",
        "http://b.test:{port}/\tx",
        "http://b.test:{port}/ x",
        "//user@b.test:{port}/",
        "http://b.test:{port}@127.0.0.1/",
        "https:b.test",  # WHATWG: host b.test; urljoin: no authority at all
        "http://[::1]:{port}/",
        "http://ｌｏｃａｌｈｏｓｔ:{port}/",
        "http://[::1",  # urljoin itself raises on this one
        "//[",
        "http://b.test:99999/",
    ],
)
async def test_s06_a_malformed_or_refused_location_is_a_rejection_at_the_hop(location: str) -> None:
    resolver = Recorder(["127.0.0.1"])
    async with _server({}) as (port, seen), _client(resolver) as http:
        routes_location = location.replace("{port}", str(port))
        async with _server({"/go": (302, {"location": routes_location})}) as (first, first_seen):
            result = await http.get(f"http://a.test:{first}/go")
    assert result.ok is False, result
    assert "redirect 1" in result.reason
    assert [target for target, _ in first_seen] == ["/go"]
    assert seen == []  # the hop was never requested


async def test_s06_a_redirect_hop_is_joined_normalised_and_requested_as_checked() -> None:
    resolver = Recorder(["127.0.0.1"])
    async with _server({}) as (second, seen), _client(resolver) as http:
        location = f"http://Ｂ。test:{second}/landing?x=1#f"
        async with _server({"/go": (307, {"location": location})}) as (first, _):
            result = await http.get(f"http://a.test:{first}/go")
    assert result.ok, result
    assert seen == [("/landing?x=1", f"b.test:{second}")]
    assert result.url == f"http://b.test:{second}/landing?x=1"
    assert result.redirects == (f"http://a.test:{first}/go",)
    assert resolver.calls == ["a.test", "b.test"]


async def test_s06_a_url_refused_by_the_strict_reading_never_reaches_the_transport() -> None:
    resolver = Recorder(["127.0.0.1"])
    async with _client(resolver) as http:
        result = await http.get("http://a.test\\@b.test/")
        assert result.ok is False
        assert resolver.calls == []
        # The pinned transport itself (private) sends no target the policy did not hand over,
        # and has no pin for a host no check allowed.
        with pytest.raises(httpx2.LocalProtocolError, match="target the egress policy checked"):
            await http._client.get("http://b.test:9/")
        checked_target = {"robota.egress_target": b"/"}
        with pytest.raises(httpx2.ConnectError, match="no validated address"):
            await http._client.get("http://b.test:9/", extensions=checked_target)
