"""S12/S06: which hosts a URL rule's host names — address globs, any host, embedded IPv4.

A URL rule and the egress policy read a URL with the same code (``robota.core.urls``); these
tests hold the rule's host side to the egress's meaning of a host:

* a glob shaped like an IPv4 address (``192.168.*.*``) names IPv4 addresses, never DNS names
  that happen to start with those numbers (``192.168.evil.com``);
* a host that is only ``*`` names every host, IP literals included;
* an IPv6 address that carries an IPv4 address — by the one embedding table the egress
  classifier also reads — is that IPv4 address to a deny or ask rule.
"""

from __future__ import annotations

import fnmatch
import ipaddress
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionPolicy, evaluate_permission
from robota.core.permissions import match_url
from robota.core.urls import IPV4_EMBEDDINGS, IPv4Embedding, embedded_ipv4, format_address
from robota.host import classify_address

from .conftest import make_tool

FETCH = make_tool(
    "WebFetch",
    risk="inspect",
    argument=robota.PermissionArgument("url", "url"),
    properties={"url": {"type": "string"}},
)


def deny(rule: str, url: object) -> str:
    return evaluate_permission(FETCH, {"url": url}, PermissionPolicy(deny=[rule])).behavior


def allow(rule: str, url: object) -> str:
    policy = PermissionPolicy(allow=[rule], ask_everything=True)
    return evaluate_permission(FETCH, {"url": url}, policy).behavior


# --------------------------------------------------------------------------- address globs

_ADDRESS_GLOBS = [
    "192.168.*.*",
    "10.*.*.*",
    "10.**",
    "**.1",
    "*.*.*.1",
    "192.168.1*.*",
    "http://192.168.*.*/**",
]


@pytest.mark.parametrize("rule", _ADDRESS_GLOBS)
@pytest.mark.parametrize(
    "url",
    [
        "http://192.168.evil.com/",
        "http://10.0.0.evil.com/",
        "http://10.1.2.example/",
        "http://192.168.1.a1/",
        "http://1.1.1.1.nip.io/",
        "http://a.b.c.1x/",
    ],
)
def test_s12_url_address_glob_does_not_match_dns_names(rule: str, url: str) -> None:
    assert match_url(rule, url) == "no_match"
    assert allow(f"WebFetch({rule})", url) == "ask"


@pytest.mark.parametrize(
    ("rule", "url"),
    [
        ("192.168.*.*", "http://192.168.1.2/"),
        ("192.168.*.*", "http://3232235778/"),  # 192.168.1.2 as one number
        ("192.168.*.*", "http://0xc0.0xa8.1.2/"),
        ("192.168.*.*", "http://[::ffff:c0a8:102]/"),  # IPv4-mapped: the same address
        ("10.*.*.*", "http://10.0.0.1:8080/x"),
        ("10.**", "http://10.200.3.4/"),
        ("**.1", "http://127.0.0.1/"),
        ("*.*.*.1", "http://0x7f000001/"),
        ("http://192.168.*.*/**", "http://192.168.0.1/admin"),
    ],
)
def test_s12_url_address_glob_matches_ipv4_addresses_in_every_spelling(rule: str, url: str) -> None:
    assert deny(f"WebFetch({rule})", url) == "deny"
    assert allow(f"WebFetch({rule})", url) == "allow"


@pytest.mark.parametrize(
    "rule",
    ["10.*", "10.*.1", "0xa.*.*.*", "010.*.*.*", "10.a*.*.*", "10.*.*.*.*", "*.example.123"],
)
def test_s12_url_address_glob_that_cannot_name_an_address_is_unevaluable(rule: str) -> None:
    # It could never match a dotted-decimal address: silently never matching would let a deny
    # fail open, so the rule is unreadable (a deny asks, an allow does not apply).
    assert match_url(rule, "http://10.0.0.1/") == "unevaluable"
    assert deny(f"WebFetch({rule})", "http://10.0.0.1/") == "ask"


_OCTETS = ["192", "168", "10", "1", "250", "255"]


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.sampled_from([*_OCTETS, "*", "25*"]), min_size=4, max_size=4).filter(
        lambda glob: any("*" not in label for label in glob)
    ),
    st.lists(st.sampled_from(_OCTETS), min_size=4, max_size=4),
    st.data(),
)
def test_s12_url_address_globs_name_addresses_by_their_octets_and_never_a_name(
    glob: list[str], octets: list[str], data: st.DataObject
) -> None:
    pattern = ".".join(glob)
    # A name shaped like the glob: its numbers where it has them, words where it has `*`, and a
    # last label that is not a number (so it is a name, not an address).
    words = st.sampled_from(["evil", "a1", "25a", "x-1", *_OCTETS])
    head = [label if "*" not in label else data.draw(words) for label in glob[:-1]]
    name = ".".join([*head, data.draw(st.sampled_from(["com", "evil", "25a", "x-1"]))])
    assert match_url(pattern, f"http://{name}/") == "no_match", (pattern, name)
    expected = all(fnmatch.fnmatchcase(o, g) for g, o in zip(glob, octets, strict=True))
    address = ".".join(octets)
    assert match_url(pattern, f"http://{address}/") == ("match" if expected else "no_match")


# --------------------------------------------------------------------------- any host


@pytest.mark.parametrize("rule", ["http://*", "http://*/**", "*", "**", "*://*", "http://**"])
@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/",
        "http://a.b.example.com/x",
        "http://localhost/",
        "http://10.0.0.1:8080/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[fd00:ec2::254]/",
        "http://xn--bcher-kva.example/",
    ],
)
def test_s12_url_a_host_that_is_only_a_star_names_every_host(rule: str, url: str) -> None:
    assert deny(f"WebFetch({rule})", url) == "deny"
    assert allow(f"WebFetch({rule})", url) == "allow"


def test_s12_url_any_host_still_honours_scheme_port_and_path() -> None:
    assert deny("WebFetch(http://*)", "https://a.b.example.com/") == "allow"
    assert deny("WebFetch(*:8080)", "http://a.b.example.com:8080/") == "deny"
    assert deny("WebFetch(*:8080)", "http://a.b.example.com/") == "allow"
    assert deny("WebFetch(https://*/admin/**)", "https://[::1]/admin/x") == "deny"
    assert deny("WebFetch(https://*/admin/**)", "https://a.b.c/public") == "allow"


def test_s12_url_a_star_label_in_a_name_stays_one_label() -> None:
    assert match_url("*.example.com", "https://api.example.com/") == "match"
    assert match_url("*.example.com", "https://a.b.example.com/") == "no_match"
    assert match_url("**.example.com", "https://a.b.example.com/") == "match"
    assert match_url("*.*", "https://example.com/") == "match"
    assert match_url("*.*", "https://a.example.com/") == "no_match"


# --------------------------------------------------------------------------- embedded IPv4


def _forms(v4: int) -> Iterator[tuple[str, ipaddress.IPv6Address]]:
    """Every IPv6 form that carries ``v4`` (RFC 4291, RFC 6052, RFC 8215, RFC 3056, RFC 4380)."""
    yield "IPv4-compatible", ipaddress.IPv6Address(v4)
    yield "NAT64", ipaddress.IPv6Address((0x64FF9B << 96) | v4)
    yield "NAT64 /96 in the local-use /48", ipaddress.IPv6Address((0x64FF9B0001 << 80) | v4)
    nat64_48 = (0x0064_FF9B_0001 << 80) | ((v4 >> 16) << 64) | ((v4 & 0xFFFF) << 40)
    yield "NAT64 /48", ipaddress.IPv6Address(nat64_48)
    yield "6to4", ipaddress.IPv6Address((0x2002 << 112) | (v4 << 80) | 1)
    yield "Teredo server", ipaddress.IPv6Address((0x2001_0000 << 96) | (v4 << 64) | 0x1234)
    client = (0x2001_0000 << 96) | (0x08080808 << 64) | (v4 ^ 0xFFFFFFFF)
    yield "Teredo client", ipaddress.IPv6Address(client)


_V4 = [0x5DB8D822, 0xA9FEA9FE, 0x7F000001, 0xC0A80102]  # 93.184.216.34, metadata, loopback, LAN


@pytest.mark.parametrize("v4", _V4, ids=lambda v: format_address(ipaddress.IPv4Address(v)))
def test_s12_url_deny_rule_on_an_address_sees_it_in_every_ipv6_form(v4: int) -> None:
    text = format_address(ipaddress.IPv4Address(v4))
    for form, address in _forms(v4):
        url = f"http://[{address}]/"
        for rule in (text, f"http://{text}/**", ".".join(text.split(".")[:2]) + ".*.*"):
            assert deny(f"WebFetch({rule})", url) == "deny", (form, rule, url)
            # S12: an allow names the address it names, not a tunnel or translator to it.
            assert match_url(rule, url, direction="allow") == "no_match", (form, rule, url)


def test_s12_url_the_6to4_spelling_of_a_denied_address_is_denied() -> None:
    assert deny("WebFetch(93.184.216.34)", "http://[2002:5db8:d822::1]/") == "deny"
    assert allow("WebFetch(93.184.216.34)", "http://[2002:5db8:d822::1]/") == "ask"


def test_s12_url_embedded_ipv4_does_not_reach_other_addresses() -> None:
    for url in ("http://[2002:5db8:d823::1]/", "http://[2606:4700::1111]/", "http://[::1]/"):
        assert deny("WebFetch(93.184.216.34)", url) == "allow", url
    assert deny("WebFetch(0.0.0.1)", "http://[::1]/") == "allow"  # loopback, not compatible
    assert deny("WebFetch(0.0.0.0)", "http://[::]/") == "allow"


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(IPV4_EMBEDDINGS), st.integers(0, 2**128 - 1))
def test_s06_s12_a_rule_and_the_egress_read_the_same_ipv4_inside_an_ipv6_address(
    embedding: IPv4Embedding, noise: int
) -> None:
    # Any address inside any embedding prefix: every IPv4 address the egress classifier judges
    # in it is an identity a deny rule on that IPv4 address matches, and nothing else is.
    value = embedding.first | (noise & (embedding.last - embedding.first))
    address = ipaddress.IPv6Address(value)
    url = f"http://[{address}]/"
    inside = {format_address(carried.address) for carried in embedded_ipv4(address)}
    if not embedding.carries(value):
        assert inside == set()
        return
    assert format_address(embedding.ipv4(value)) in inside
    reason = classify_address(address) or ""
    for text in inside:
        assert match_url(text, url) == "match", (address, text)
        if classify_address(ipaddress.IPv4Address(text)) is not None:
            assert f"IPv4 address {text} " in reason, (address, text, reason)
    stranger = next(f"203.0.113.{n}" for n in range(1, 9) if f"203.0.113.{n}" not in inside)
    assert match_url(stranger, url) == "no_match"
