"""S06 the egress policy and the pinned client, on real sockets on 127.0.0.0/8."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import pathlib
import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from host.test_egress_reference import reference_allows_address
from robota.host import EgressClient, check_url, classify_address
from robota.testing import loopback_allowance


def resolver_for(
    table: dict[str, list[str]], calls: list[str] | None = None
) -> Callable[[str], Any]:
    async def resolve(host: str) -> list[str]:
        if calls is not None:
            calls.append(host)
        if host not in table:
            raise OSError(f"unknown host {host}")
        return table[host]

    return resolve


# --------------------------------------------------------------------------- the policy


@pytest.mark.parametrize(
    "url",
    [
        "http://[::ffff:7f00:1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://localhost:8080/",
        "http://foo.localhost/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://100.64.0.1/",
        "http://198.18.0.1/",
        "http://192.0.2.1/",
        "http://0.0.0.0/",
        "http://255.255.255.255/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",
        "http://[::1]/",
        "http://[::]/",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://[ff02::1]/",
        "http://[2001:db8::1]/",
        "http://[::127.0.0.1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[64:ff9b::127.0.0.1]/",
        "http://[2002:7f00:1::1]/",
        "http://[2002:a9fe:a9fe::]/",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    ],
)
async def test_s06_private_loopback_and_metadata_destinations_are_refused(url: str) -> None:
    decision = await check_url(url, resolver=resolver_for({}))
    assert decision.ok is False, url
    assert decision.addresses == ()
    assert decision.reason


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "file:///etc/passwd",
        "gopher://x/",
        "javascript:alert(1)",
        "",
        "http://",
        "not a url",
    ],
)
async def test_s06_only_http_and_https_with_a_host(url: str) -> None:
    assert (await check_url(url, resolver=resolver_for({}))).ok is False


async def test_s06_public_literals_are_allowed_with_their_address() -> None:
    decision = await check_url("https://8.8.8.8:8443/dns")
    assert decision.ok
    assert (decision.host, decision.port, decision.addresses) == ("8.8.8.8", 8443, ("8.8.8.8",))
    mapped = await check_url("http://[::ffff:8.8.8.8]/")
    assert mapped.ok


async def test_s06_a_host_resolving_to_one_public_and_one_private_address_is_refused() -> None:
    resolve = resolver_for(
        {
            "mixed.example": ["93.184.216.34", "10.0.0.7"],
            "public.example": ["93.184.216.34", "2606:2800::1"],
        }
    )
    mixed = await check_url("https://mixed.example/", resolver=resolve)
    assert mixed.ok is False
    assert "10.0.0.7" in mixed.reason
    public = await check_url("https://public.example/", resolver=resolve)
    assert public.ok
    assert public.addresses == ("93.184.216.34", "2606:2800::1")


async def test_s06_unresolvable_and_strange_answers_are_refused() -> None:
    assert (await check_url("https://nowhere.example/", resolver=resolver_for({}))).ok is False
    assert (
        await check_url("https://empty.example/", resolver=resolver_for({"empty.example": []}))
    ).ok is False
    assert (
        await check_url(
            "https://odd.example/", resolver=resolver_for({"odd.example": ["not-an-ip"]})
        )
    ).ok is False


async def test_s06_the_blocklist_wins_whatever_a_name_resolves_to() -> None:
    resolve = resolver_for({"metadata.google.internal": ["93.184.216.34"]})
    assert (await check_url("http://metadata.google.internal/", resolver=resolve)).ok is False
    assert (await check_url("http://METADATA.GOOGLE.INTERNAL./", resolver=resolve)).ok is False


async def test_s06_the_loopback_allowance_is_test_only_and_never_admits_literals() -> None:
    with pytest.raises(TypeError, match=r"robota\.testing"):
        robota.host.LoopbackAllowance(["x"])
    allowance = loopback_allowance("svc.test")
    resolve = resolver_for(
        {"svc.test": ["127.0.0.1"], "other.test": ["127.0.0.1"], "lan.test": ["10.1.1.1"]}
    )
    assert (await check_url("http://svc.test/", resolver=resolve, allowance=allowance)).ok
    assert (
        await check_url("http://other.test/", resolver=resolve, allowance=allowance)
    ).ok is False
    assert (await check_url("http://127.0.0.1/", resolver=resolve, allowance=allowance)).ok is False
    lan = loopback_allowance("lan.test")
    assert (
        await check_url("http://lan.test/", resolver=resolve, allowance=lan)
    ).ok is False  # loopback only


# --------------------------------------------------------------------------- every spelling, against the reference

# The oracle used to be the interpreter's ``ipaddress`` flags (``is_global`` …), which is the root
# cause of the 192.0.0.0/24 and 3fff::/20 findings: they differ between Python versions. The
# oracle is now the reference implementation over the docstring's copy of the IANA registries.
_oracle = reference_allows_address


def _ipv4_spellings(address: ipaddress.IPv4Address) -> list[str]:
    value = int(address)
    octets = list(address.packed)
    return [
        str(address),
        str(value),
        hex(value),
        ".".join(hex(o) for o in octets),
        ".".join(f"0{o:o}" for o in octets),
        f"{octets[0]}.{(value & 0xFFFFFF)}",
        f"{octets[0]}.{octets[1]}.{value & 0xFFFF}",
    ]


def _ipv6_spellings(address: ipaddress.IPv6Address) -> list[str]:
    spellings = [f"[{address.compressed}]", f"[{address.exploded}]"]
    low = address.packed[12:]
    spellings.append(f"[{address.exploded.rsplit(':', 2)[0]}:{ipaddress.IPv4Address(low)}]")
    return spellings


_ipv4 = st.one_of(
    st.integers(0, 2**32 - 1),
    st.sampled_from(
        [
            0x7F000001,
            0x0A000001,
            0xA9FEA9FE,
            0x64400001,
            0xC0A80101,
            0x08080808,
            0xC6120001,
            0xFFFFFFFF,
            0xE0000001,
        ]
    ),
).map(ipaddress.IPv4Address)
_embedding_prefixes = st.sampled_from(
    [
        0,
        0xFFFF << 32,
        0x64FF9B << 96,
        0x20020000 << 96,
        0x20010000 << 96,
        0x2606_4700 << 96,
        0xFE80 << 112,
        0xFC00 << 112,
    ]
)
_ipv6 = st.one_of(
    st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address),
    st.builds(
        lambda prefix, v4, mid: ipaddress.IPv6Address(
            (prefix | (mid << 48) if prefix >> 96 == 0x20020000 else prefix) | int(v4)
        ),
        _embedding_prefixes,
        _ipv4,
        st.integers(0, 0xFFFF),
    ),
)


@settings(max_examples=10_000, deadline=None)
@given(_ipv4)
def test_s06_ipv4_classifier_agrees_with_the_reference_in_every_spelling(
    address: ipaddress.IPv4Address,
) -> None:
    expected = _oracle(address)
    for spelling in _ipv4_spellings(address):
        decision = asyncio.run(check_url(f"http://{spelling}/"))
        assert decision.ok is expected, (spelling, address, decision)


@settings(max_examples=10_000, deadline=None)
@given(_ipv6)
def test_s06_ipv6_classifier_agrees_with_the_reference_in_every_spelling(
    address: ipaddress.IPv6Address,
) -> None:
    expected = _oracle(address)
    assert (classify_address(address) is None) is expected, address
    for spelling in _ipv6_spellings(address):
        decision = asyncio.run(check_url(f"http://{spelling}/"))
        assert decision.ok is expected, (spelling, address, decision)


# --------------------------------------------------------------------------- the pinned client


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    sni: str | None = None


@dataclass
class Server:
    port: int = 0
    seen: list[Seen] = field(default_factory=list)
    routes: dict[str, tuple[int, dict[str, str], bytes, float]] = field(default_factory=dict)
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    server: Any = None
    handlers: set[asyncio.Task[Any]] = field(default_factory=set)
    sni: list[str] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode()
            lines = head.split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (line.partition(":") for line in lines[1:] if line)
            }
            length = int(headers.get("content-length", "0"))
            if length:
                await reader.readexactly(length)
            self.seen.append(Seen(method, path, headers, self.sni[-1] if self.sni else None))
            status, extra, body, delay = self.routes.get(path, (200, {}, b"ok", 0.0))
            if delay:
                try:
                    await asyncio.wait_for(reader.read(1), delay)
                except TimeoutError:
                    pass
                else:
                    self.disconnected.set()
                    return
            head_out = (
                f"HTTP/1.1 {status} X\r\ncontent-length: {len(body)}\r\nconnection: close\r\n"
            )
            head_out += "".join(f"{k}: {v}\r\n" for k, v in extra.items())
            writer.write(head_out.encode() + b"\r\n" + body)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            self.disconnected.set()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


@contextlib.asynccontextmanager
async def serve(ssl_context: ssl.SSLContext | None = None) -> AsyncIterator[Server]:
    state = Server()
    if ssl_context is not None:

        def record_sni(sock: Any, name: str | None, context: Any) -> None:
            if name:
                state.sni.append(name)

        ssl_context.sni_callback = record_sni
    state.server = await asyncio.start_server(state.handle, "127.0.0.1", 0, ssl=ssl_context)
    state.port = state.server.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        if state.handlers:
            await asyncio.wait(state.handlers, timeout=5)
        state.server.close()
        await state.server.wait_closed()


LOCAL = {"a.test": ["127.0.0.1"], "b.test": ["127.0.0.1"]}


def client(calls: list[str] | None = None, **kwargs: Any) -> EgressClient:
    return EgressClient(
        resolver=resolver_for(LOCAL, calls),
        allowance=loopback_allowance("a.test", "b.test"),
        **kwargs,
    )


async def test_s06_the_pinned_client_keeps_the_urls_host_and_resolves_once_per_hop() -> None:
    calls: list[str] = []
    async with serve() as server, client(calls) as http:
        result = await http.get(f"http://a.test:{server.port}/hello")
    assert result.ok
    assert (result.status, result.content) == (200, b"ok")
    assert server.seen[0].headers["host"] == f"a.test:{server.port}"
    assert calls == ["a.test"]  # no second DNS lookup by the transport


async def test_s06_a_redirect_to_127_0_0_1_is_refused_at_the_hop() -> None:
    async with serve() as server, client() as http:
        server.routes["/go"] = (
            302,
            {"location": f"http://127.0.0.1:{server.port}/secret"},
            b"",
            0.0,
        )
        result = await http.get(f"http://a.test:{server.port}/go")
    assert result.ok is False
    assert "127.0.0.1" in result.reason
    assert "redirect 1" in result.reason
    assert [s.path for s in server.seen] == ["/go"]  # the hop was never requested


async def test_s06_a_redirect_to_a_malformed_url_is_a_rejection_not_an_exception() -> None:
    # Regression: the redirect target's origin was computed before the hop was checked, so a
    # Location with an out-of-range port raised ValueError out of request().
    async with serve() as server, client() as http:
        server.routes["/go"] = (302, {"location": "http://b.test:99999/x"}, b"", 0.0)
        result = await http.get(f"http://a.test:{server.port}/go")
    assert result.ok is False
    assert "malformed URL" in result.reason
    assert "redirect 1" in result.reason


async def test_s06_cross_origin_redirect_drops_authorization_but_keeps_user_agent() -> None:
    async with serve() as first, serve() as second, client(user_agent="robota-test") as http:
        first.routes["/start"] = (
            307,
            {"location": f"http://b.test:{second.port}/landing"},
            b"",
            0.0,
        )
        first.routes["/same"] = (302, {"location": "/final"}, b"", 0.0)
        result = await http.get(
            f"http://a.test:{first.port}/start",
            headers={"Authorization": "Bearer secret", "X-Custom": "1"},
        )
        same = await http.get(
            f"http://a.test:{first.port}/same", headers={"Authorization": "Bearer secret"}
        )
    assert result.ok
    assert result.redirects == (f"http://a.test:{first.port}/start",)
    landing = second.seen[0].headers
    assert "authorization" not in landing
    assert "x-custom" not in landing
    assert landing["user-agent"] == "robota-test"
    assert first.seen[0].headers["authorization"] == "Bearer secret"
    assert same.ok
    assert first.seen[-1].path == "/final"
    assert first.seen[-1].headers["authorization"] == "Bearer secret"  # same origin keeps it


async def test_s06_303_turns_a_post_into_a_get() -> None:
    async with serve() as server, client() as http:
        server.routes["/form"] = (303, {"location": "/done"}, b"", 0.0)
        result = await http.request(
            "POST",
            f"http://a.test:{server.port}/form",
            content=b"x=1",
            headers={"content-type": "text/plain"},
        )
    assert result.ok
    assert [(s.method, s.path) for s in server.seen] == [("POST", "/form"), ("GET", "/done")]


async def test_s06_too_many_redirects_is_a_rejection() -> None:
    async with serve() as server, client(max_redirects=2) as http:
        server.routes["/loop"] = (302, {"location": "/loop"}, b"", 0.0)
        result = await http.get(f"http://a.test:{server.port}/loop")
    assert result.ok is False
    assert "more than 2 redirects" in result.reason


async def test_s06_policy_refusals_are_returned_never_raised() -> None:
    async with client() as http:
        result = await http.get("http://169.254.169.254/")
    assert result.ok is False
    assert "link-local" in result.reason


async def test_s06_abort_releases_the_connection() -> None:
    async with serve() as server, client() as http:
        server.routes["/slow"] = (200, {}, b"late", 5.0)
        controller = robota.AbortController()
        task = asyncio.create_task(
            http.get(f"http://a.test:{server.port}/slow", signal=controller.signal)
        )
        for _ in range(500):
            if server.seen:
                break
            await asyncio.sleep(0.01)
        controller.abort("user stopped it")
        with pytest.raises(robota.AbortError):
            await asyncio.wait_for(task, 2)
        await asyncio.wait_for(server.disconnected.wait(), 2)  # the socket was closed, not leaked


async def test_s06_a_response_past_the_bound_fails_and_is_released() -> None:
    async with serve() as server, client(max_bytes=10) as http:
        server.routes["/big"] = (200, {}, b"x" * 1000, 0.0)
        with pytest.raises(robota.host.ResponseTooLargeError):
            await http.get(f"http://a.test:{server.port}/big")
        assert (await http.get(f"http://a.test:{server.port}/small")).ok  # the client still works


async def test_s06_a_failed_pinned_connection_never_falls_back() -> None:
    async with client() as http:
        with pytest.raises(httpx2.ConnectError):
            await http.get("http://a.test:9/")  # nothing listens; there is no other carrier


def _certificate(tmp: pathlib.Path, name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = tmp / f"{name}.pem"
    key_path = tmp / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_path, key_path)
    trust = ssl.create_default_context(cafile=str(cert_path))
    return server, trust


async def test_s06_tls_identity_is_the_urls_host_while_the_socket_is_pinned(
    tmp_path: pathlib.Path,
) -> None:
    server_context, trust = _certificate(tmp_path, "a.test")
    async with serve(server_context) as server, client(verify=trust) as http:
        result = await http.get(f"https://a.test:{server.port}/tls")
        assert result.ok
        assert result.content == b"ok"
        assert server.seen[0].sni == "a.test"
        # The same pinned socket under another name fails the certificate check: no fallback.
        with pytest.raises(httpx2.ConnectError):
            await http.get(f"https://b.test:{server.port}/tls")


# --------------------------------------------------------------------------- review findings


@pytest.mark.parametrize("name", ["Host", "host", "HOST", "Content-Length", "Transfer-Encoding"])
async def test_s06_a_caller_may_not_set_the_headers_that_name_the_connection(name: str) -> None:
    # Regression (issue 10 review): a caller's Host header replaced the checked host on the
    # pinned connection, routing it to another virtual host than the policy checked.
    async with serve() as server, client() as http:
        result = await http.get(f"http://a.test:{server.port}/x", headers={name: "internal.corp"})
    assert result.ok is False
    assert name in result.reason
    assert server.seen == []  # nothing was sent


async def test_s06_a_callers_user_agent_replaces_the_default_once() -> None:
    async with serve() as server, client() as http:
        result = await http.get(f"http://a.test:{server.port}/x", headers={"user-agent": "mine"})
    assert result.ok
    assert server.seen[0].headers["user-agent"] == "mine"
    # One header, not the default beside the caller's (the server dict keeps the last one).
    assert "robota" not in server.seen[0].headers["user-agent"]


@pytest.mark.parametrize(
    "location",
    [
        "///b.test:{port}/landed",
        "http:///b.test:{port}/landed",
        "////b.test:{port}/landed",
        "http:////b.test:{port}/landed",
        "http:b.test:{port}/landed",
        "https:b.test/landed",
    ],
)
async def test_s06_a_location_two_parsers_join_differently_is_refused(location: str) -> None:
    # urljoin reads these as a path on the current host; a WHATWG client reads another host.
    async with serve() as server, client() as http:
        server.routes["/go"] = (302, {"location": location.format(port=server.port)}, b"", 0.0)
        result = await http.get(f"http://a.test:{server.port}/go")
    assert result.ok is False
    assert "redirect 1" in result.reason
    assert [s.path for s in server.seen] == ["/go"]


async def test_s06_a_relative_and_a_scheme_relative_location_still_work() -> None:
    async with serve() as server, client() as http:
        server.routes["/go"] = (302, {"location": "/next"}, b"", 0.0)
        server.routes["/next"] = (302, {"location": f"//b.test:{server.port}/end"}, b"", 0.0)
        result = await http.get(f"http://a.test:{server.port}/go")
    assert result.ok
    assert [s.path for s in server.seen] == ["/go", "/next", "/end"]


def _raising(error: Exception) -> Callable[[str], Any]:
    async def resolve(host: str) -> list[str]:
        raise error

    return resolve


async def _returning_none(host: str) -> Any:
    return None


def _not_async(host: str) -> list[str]:
    return ["93.184.215.14"]


@pytest.mark.parametrize(
    "resolver",
    [
        _raising(ValueError("bad")),
        _raising(RuntimeError("boom")),
        _raising(KeyError("k")),
        _raising(LookupError("l")),
        _returning_none,
        _not_async,
    ],
)
async def test_s06_a_failing_resolver_is_a_rejection_never_an_exception(resolver: Any) -> None:
    decision = await check_url("http://example.com/", resolver=resolver)
    assert decision.ok is False
    assert "example.com" in decision.reason
