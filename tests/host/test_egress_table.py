"""S06 finding 1: the special-purpose address table, and a verdict that is the same on every Python.

The policy used to trust ``ipaddress.is_global``, which differs across Python versions (before
3.11.10 / 3.12.4 it called most of ``192.0.0.0/24`` global — ``192.0.0.192`` is a cloud metadata
endpoint — and older versions do not know ``3fff::/20``). The verdict now comes from our own
transcription of the IANA registries. These tests prove three things:

* the code table carries exactly the registry entries the module docstring lists, and every
  refused block refuses its first, last and a middle address, in every embedded IPv6 form too;
* the verdict equals a pure reference implementation over the docstring's table (hypothesis,
  every address family and embedding) — integer arithmetic over fixed data, so the same on every
  interpreter;
* nothing in the decision path reads ``ipaddress``'s classification properties: with all eight
  patched to raise, every verdict still comes out (and ``tests/test_security_invariants.py``
  checks the source tree for attribute access to them).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host.test_egress_reference import (
    ENDPOINTS,
    ROWS,
    Endpoint,
    Row,
    reference_allows,
    reference_allows_address,
)
from robota.core.urls import IPV4_EMBEDDINGS, embedded_ipv4
from robota.host import check_url, classify_address
from robota.host.egress._address import format_address, is_loopback
from robota.host.egress._table import BLOCKS, METADATA_ENDPOINTS, metadata_service, most_specific
from robota.testing import loopback_allowance

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_CLASSIFICATION_FLAGS = (
    "is_global",
    "is_private",
    "is_reserved",
    "is_loopback",
    "is_link_local",
    "is_multicast",
    "is_site_local",
    "is_unspecified",
)


async def _no_names(host: str) -> list[str]:
    raise AssertionError(f"an address literal was resolved: {host}")


def _address(version: int, value: int) -> IPAddress:
    return ipaddress.IPv4Address(value) if version == 4 else ipaddress.IPv6Address(value)


def _points(row: Row) -> list[int]:
    return [row.first, row.last, (row.first + row.last) // 2]


# --------------------------------------------------------------------------- the table is the registry


def test_s06_the_table_carries_exactly_the_registry_entries_the_docstring_lists() -> None:
    listed = [(r.cidr, r.rfcs, r.reachable, r.verdict, r.name) for r in ROWS]
    carried = [(b.cidr, b.rfcs, b.reachable, b.verdict, b.name) for b in BLOCKS]
    assert sorted(carried) == sorted(listed)
    assert len(set(carried)) == len(carried)  # no entry twice
    for row, block in zip(
        sorted(ROWS, key=lambda r: r.cidr), sorted(BLOCKS, key=lambda b: b.cidr), strict=True
    ):
        assert (block.version, block.first, block.last, block.prefix) == (
            row.version,
            row.first,
            row.last,
            row.prefix,
        ), block.cidr


def test_s06_the_registry_globally_reachable_column_is_honoured() -> None:
    # Not globally reachable is always refused, except the IPv4-mapped block: an IPv4-mapped
    # address is never an IPv6 packet — the socket connects to the embedded IPv4 address, which
    # is then judged itself.
    unreachable_admitted = {r.cidr for r in ROWS if r.reachable is False and r.verdict != "refuse"}
    assert unreachable_admitted == {"::ffff:0:0/96"}
    # Globally reachable is admitted only as the well-known NAT64 prefix (the IPv4 address inside
    # decides); the anycast services and identifiers are refused, as the docstring explains.
    reachable_admitted = {r.cidr for r in ROWS if r.reachable is True and r.verdict != "refuse"}
    assert reachable_admitted == {"64:ff9b::/96"}
    refused_reachable = {r.cidr for r in ROWS if r.reachable is True and r.verdict == "refuse"}
    assert {"192.0.0.9/32", "192.0.0.10/32", "2001:1::1/128", "2001:3::/32"} <= refused_reachable
    assert {"2001:4:112::/48", "2001:20::/28", "2620:4f:8000::/48"} <= refused_reachable


@pytest.mark.parametrize("row", [r for r in ROWS if r.verdict == "refuse"], ids=lambda r: r.cidr)
def test_s06_every_refused_block_refuses_its_first_last_and_middle_address(row: Row) -> None:
    for value in _points(row):
        address = _address(row.version, value)
        reason = classify_address(address)
        assert reason is not None, address
        decision = asyncio.run(check_url(_url(address), resolver=_no_names))
        assert decision.ok is False, address


def _url(address: IPAddress) -> str:
    return f"http://[{address}]/" if address.version == 6 else f"http://{address}/"


def _embeddings(v4: int) -> Iterator[tuple[str, ipaddress.IPv6Address]]:
    """Every IPv6 form that carries ``v4``, with the form's name."""
    yield "IPv4-mapped", ipaddress.IPv6Address((0xFFFF << 32) | v4)
    yield "IPv4-compatible", ipaddress.IPv6Address(v4)
    yield "NAT64", ipaddress.IPv6Address((0x64FF9B << 96) | v4)
    nat64_48 = (0x0064_FF9B_0001 << 80) | ((v4 >> 16) << 64) | ((v4 & 0xFFFF) << 40)
    yield "NAT64 /48", ipaddress.IPv6Address(nat64_48)
    yield "6to4", ipaddress.IPv6Address((0x2002 << 112) | (v4 << 80) | 1)
    yield "Teredo server", ipaddress.IPv6Address((0x2001_0000 << 96) | (v4 << 64) | 0x1234)
    client = (0x2001_0000 << 96) | (0x08080808 << 64) | (v4 ^ 0xFFFFFFFF)
    yield "Teredo client", ipaddress.IPv6Address(client)


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r.verdict == "refuse" and r.version == 4], ids=lambda r: r.cidr
)
def test_s06_every_refused_ipv4_block_is_refused_in_every_embedded_form(row: Row) -> None:
    for v4 in _points(row):
        for form, address in _embeddings(v4):
            reason = classify_address(address)
            assert reason is not None, (form, address)
            if int(address) > 1:  # :: and ::1 are refused as themselves, not as IPv4-compatible
                assert format_address(ipaddress.IPv4Address(v4)) in reason, (form, reason)


# --------------------------------------------------------------------------- the findings' examples


@pytest.mark.parametrize(
    "url",
    [
        "http://192.0.0.192/",  # the cloud metadata endpoint in 192.0.0.0/24
        "http://192.0.0.1/",
        "http://192.0.0.9/",  # PCP anycast: the local router
        "http://192.0.0.10/",
        "http://192.0.0.170/",
        "http://192.0.0.255/",
        "http://[::ffff:192.0.0.192]/",
        "http://[::ffff:c000:c0]/",
        "http://[0:0:0:0:0:ffff:c000:00c0]/",
        "http://[64:ff9b::192.0.0.192]/",
        "http://[2002:c000:c0::1]/",
        "http://[3fff::1]/",  # RFC 9637 documentation (2024)
        "http://[3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff]/",
        "http://[::ffff:198.51.100.7]/",
        "http://[2001:1::1]/",
        "http://[2001:3::1]/",
        "http://[2001:4:112::1]/",
        "http://[2001:20::1]/",
        "http://[2620:4f:8000::1]/",
        "http://[100::1]/",
        "http://[100:0:0:1::1]/",
        "http://[fec0::1]/",
        "http://[5f00::1]/",
        "http://[4000::1]/",
        "http://[::8.8.8.8]/",  # IPv4-compatible: deprecated, outside global unicast
        "http://[64:ff9b:1::808:808]/",  # local-use NAT64 is not globally reachable
        "http://192.31.196.1/",
        "http://192.52.193.1/",
        "http://192.88.99.1/",
        "http://192.175.48.1/",
    ],
)
async def test_s06_special_purpose_blocks_missing_before_are_refused(url: str) -> None:
    decision = await check_url(url, resolver=_no_names)
    assert decision.ok is False, url
    assert "RFC" in decision.reason


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://93.184.215.14/", "93.184.215.14"),
        ("http://8.8.8.8/", "8.8.8.8"),
        ("https://[2606:4700::1111]/", "2606:4700::1111"),
        ("http://[::ffff:8.8.8.8]/", "::ffff:808:808"),
        ("http://[64:ff9b::8.8.8.8]/", "64:ff9b::808:808"),  # DNS64 on an IPv6-only network
        ("http://[2002:808:808::1]/", "2002:808:808::1"),
        ("http://192.0.1.1/", "192.0.1.1"),  # just past 192.0.0.0/24
        ("http://[3fff:1000::1]/", "3fff:1000::1"),  # just past 3fff::/20
    ],
)
async def test_s06_ordinary_public_addresses_stay_allowed(url: str, host: str) -> None:
    decision = await check_url(url, resolver=_no_names)
    assert decision.ok, decision
    assert decision.host == host
    assert decision.addresses == (host,)


def test_s06_nat64_local_use_embeds_ipv4_in_bits_48_to_63_and_72_to_87() -> None:
    # RFC 6052 §2.4's /48 example (2001:db8:122::/48 with 192.0.2.33), on 64:ff9b:1::/48.
    address = ipaddress.IPv6Address("64:ff9b:1:c000:2:2100::")
    roles = {c.embedding.role: int(c.address) for c in embedded_ipv4(address)}
    assert roles == {"NAT64 /48": 0xC0000221, "NAT64 /96": 0}
    reason = classify_address(address)
    assert reason is not None
    assert "192.0.2.33" in reason


def test_s06_a_teredo_client_address_is_deobfuscated() -> None:
    # RFC 4380 §4: the client's IPv4 address is stored with every bit inverted.
    address = ipaddress.IPv6Address("2001:0:4136:e378:8000:63bf:80ff:fffe")
    roles = {c.embedding.role: int(c.address) for c in embedded_ipv4(address)}
    assert roles == {"Teredo server": 0x4136E378, "Teredo client": 0x7F000001}
    reason = classify_address(address)
    assert reason is not None
    assert "Teredo client IPv4 address 127.0.0.1" in reason


def test_s06_every_embedding_prefix_is_a_row_the_classifier_judges() -> None:
    # The positions live in core (robota.core.urls.IPV4_EMBEDDINGS), shared with the permission
    # rules; each prefix must be a row here, so no embedding is judged by a row around it only.
    rows = {b.cidr: b for b in BLOCKS}
    assert {e.prefix for e in IPV4_EMBEDDINGS} <= set(rows)
    assert {b.cidr for b in BLOCKS if b.verdict == "embedded"} <= {
        e.prefix for e in IPV4_EMBEDDINGS
    }
    for embedding in IPV4_EMBEDDINGS:
        for value in (embedding.first + 2, embedding.last, (embedding.first + embedding.last) // 2):
            block = most_specific(6, value)
            assert block is not None, (embedding, value)
            assert block.cidr == embedding.prefix, (embedding, value)


def test_s06_addresses_are_printed_the_same_on_every_python() -> None:
    # 3.13 prints IPv4-mapped addresses dotted; the policy's own formatter never does.
    assert format_address(ipaddress.IPv6Address("::ffff:127.0.0.1")) == "::ffff:7f00:1"
    assert format_address(ipaddress.IPv6Address("2001:db8:0:0:1:0:0:1")) == "2001:db8::1:0:0:1"
    assert format_address(ipaddress.IPv6Address("::")) == "::"
    assert format_address(ipaddress.IPv6Address("1:0:2:3:4:5:6:7")) == "1:0:2:3:4:5:6:7"


# --------------------------------------------------------------------------- cloud metadata endpoints


@pytest.mark.parametrize(
    "url",
    [
        "http://168.63.129.16/machine?comp=goalstate",  # Azure WireServer, a public address
        "http://168.63.129.16:32526/",
        "http://2822734096/",
        "http://0xa83f8110/",
        "http://0xa8.0x3f.0x81.0x10/",
        "http://0250.077.0201.020/",
        "http://168.63.33040/",
        "http://168.4161808/",
        "http://１６８．６３．１２９．１６/",
        "http://168.63.129.16./",
        "http://[::ffff:168.63.129.16]/",
        "http://[::ffff:a83f:8110]/",
        "http://[0:0:0:0:0:ffff:a83f:8110]/",
        "http://[64:ff9b::168.63.129.16]/",
        "http://[64:ff9b::a83f:8110]/",
        "http://[2002:a83f:8110::1]/",
        "http://[::168.63.129.16]/",
    ],
)
async def test_s06_azure_wireserver_is_refused_in_every_spelling(url: str) -> None:
    decision = await check_url(url, resolver=_no_names)
    assert decision.ok is False, url
    assert "168.63.129.16" in decision.reason
    refused = await check_url(url, resolver=_no_names, private_network=True)
    assert refused.ok is False, url


async def test_s06_a_name_resolving_to_a_metadata_endpoint_is_refused() -> None:
    async def resolve(host: str) -> list[str]:
        return {
            "wire.example": ["93.184.215.14", "168.63.129.16"],
            "nat64.example": ["64:ff9b::a83f:8110"],
        }[host]

    for url in ("http://wire.example/", "http://nat64.example/"):
        for private_network in (False, True):
            decision = await check_url(url, resolver=resolve, private_network=private_network)
            assert decision.ok is False, (url, private_network)
            assert "cloud metadata endpoint" in decision.reason


def test_s06_the_code_carries_exactly_the_metadata_endpoints_the_docstring_lists() -> None:
    listed = {
        (ipaddress.ip_address(e.address).version, int(ipaddress.ip_address(e.address))): e.service
        for e in ENDPOINTS
    }
    assert dict(METADATA_ENDPOINTS) == listed


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.address)
def test_s06_every_metadata_endpoint_is_refused_as_itself_and_in_every_embedded_form(
    endpoint: Endpoint,
) -> None:
    address = ipaddress.ip_address(endpoint.address)
    reason = classify_address(address)
    assert reason is not None
    assert endpoint.address in reason
    if address.version == 4:
        for form, embedded in _embeddings(int(address)):
            assert classify_address(embedded) is not None, (form, embedded)


@pytest.mark.parametrize("neighbour", ["168.63.129.15", "168.63.129.17", "168.63.128.16"])
async def test_s06_the_addresses_beside_a_public_metadata_endpoint_stay_allowed(
    neighbour: str,
) -> None:
    assert classify_address(ipaddress.ip_address(neighbour)) is None
    assert (await check_url(f"http://{neighbour}/", resolver=_no_names)).ok


# --------------------------------------------------------------------------- the same verdict everywhere


def _boundaries() -> list[tuple[int, int]]:
    return [
        (row.version, value)
        for row in ROWS
        for value in (row.first - 1, row.first, row.last, row.last + 1)
        if 0 <= value < 1 << row.bits
    ]


_ipv4_values = st.one_of(
    st.integers(0, 2**32 - 1),
    st.sampled_from([v for version, v in _boundaries() if version == 4]),
)
_addresses = st.one_of(
    _ipv4_values.map(ipaddress.IPv4Address),
    st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address),
    st.sampled_from([_address(version, value) for version, value in _boundaries()]),
    st.builds(lambda v4, pick: list(_embeddings(v4))[pick][1], _ipv4_values, st.integers(0, 6)),
    st.sampled_from([ipaddress.ip_address(e.address) for e in ENDPOINTS]),
    st.builds(
        lambda endpoint, pick: list(_embeddings(int(ipaddress.IPv4Address(endpoint.address))))[
            pick
        ][1],
        st.sampled_from([e for e in ENDPOINTS if ":" not in e.address]),
        st.integers(0, 6),
    ),
    # A random address inside a random row: exercises every row, not just its edges.
    st.builds(
        lambda row, offset: _address(row.version, row.first + offset % (row.last - row.first + 1)),
        st.sampled_from(ROWS),
        st.integers(0, 2**128),
    ),
)


@settings(max_examples=5_000, deadline=None)
@given(_addresses)
def test_s06_the_verdict_equals_the_pure_reference_for_every_address(address: IPAddress) -> None:
    assert (classify_address(address) is None) is reference_allows_address(address), address


@settings(max_examples=500, deadline=None)
@given(_addresses)
def test_s06_the_verdict_is_integer_lookup_by_version_and_value(address: IPAddress) -> None:
    # The lookup sees only (version, int): a fresh object with the same value is judged the same.
    block = most_specific(4 if address.version == 4 else 6, int(address))
    twin = _address(address.version, int(address))
    assert (classify_address(twin) is None) is (classify_address(address) is None)
    if block is None:
        # No row: ordinary global unicast, unless a cloud platform serves metadata there.
        listed = metadata_service(4 if address.version == 4 else 6, int(address)) is not None
        assert reference_allows(address.version, int(address)) is not listed


@pytest.fixture
def classification_flags_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(name: str) -> Any:
        def read(self: object) -> bool:
            raise AssertionError(f"the egress decision read ipaddress's {name}")

        return property(read)

    for cls in (ipaddress.IPv4Address, ipaddress.IPv6Address):
        for name in _CLASSIFICATION_FLAGS:
            monkeypatch.setattr(cls, name, refuse(name), raising=False)


@pytest.mark.usefixtures("classification_flags_raise")
async def test_s06_no_ipaddress_classification_flag_is_in_the_decision_path() -> None:
    async def resolve(host: str) -> list[str]:
        return {"svc.test": ["127.0.0.1"], "pub.test": ["93.184.215.14", "2606:4700::1111"]}[host]

    allowance = loopback_allowance("svc.test")
    for address in ["127.0.0.1", "::1", "192.0.0.192", "8.8.8.8", "::ffff:10.0.0.1", "3fff::1"]:
        classify_address(ipaddress.ip_address(address))
    assert is_loopback(ipaddress.ip_address("127.9.9.9"))
    assert (await check_url("http://svc.test/", resolver=resolve, allowance=allowance)).ok
    assert (await check_url("http://pub.test/", resolver=resolve)).ok
    assert not (await check_url("http://[::ffff:169.254.169.254]/", resolver=resolve)).ok
    assert (await check_url("http://[2606:4700::1111]/", resolver=resolve)).ok


@pytest.mark.parametrize(
    ("address", "admitted"),
    [
        ("127.0.0.1", True),
        ("127.255.255.254", True),
        ("::1", True),
        ("::ffff:127.0.0.1", False),  # only 127.0.0.0/8 and ::1 themselves
        ("10.0.0.1", False),
        ("0.0.0.0", False),  # noqa: S104 - an address under test, not a bind
        ("::", False),
    ],
)
def test_s06_the_loopback_allowance_decides_loopback_from_the_table(
    address: str, admitted: bool
) -> None:
    allowance = loopback_allowance("svc.test")
    assert allowance.admits("svc.test", ipaddress.ip_address(address)) is admitted
    assert allowance.admits("other.test", ipaddress.ip_address(address)) is False
