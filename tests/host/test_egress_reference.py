"""S06: a pure reference for the address verdict, read from the table's own docstring.

The policy decides from the table in ``robota.host.egress._table``; that module's docstring lists
every IANA special-purpose registry entry (prefix, RFC, "Globally Reachable", our verdict, name)
as a human-auditable transcription. This module parses that listing — not the code table — and
implements the verdict a second time, with different code (prefix masks instead of ranges,
a cidr-keyed embedding map instead of the table's embedding tags), so the other test modules can
compare the two. Both are integer arithmetic over fixed data, which is why a verdict is the same
on every Python version: nothing consults ``ipaddress``'s classification properties.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

import robota.host.egress._table as table_module

_ROW = re.compile(
    r"^\s{4}(?P<cidr>[0-9a-fA-F:.]+/\d+)\s+(?P<rfcs>[\d,]+)\s+(?P<reachable>True|False|N/A)\s+"
    r"(?P<verdict>refuse|embedded)\s+(?P<name>.+?)\s*$"
)


@dataclass(frozen=True)
class Row:
    cidr: str
    version: int
    network: int
    prefix: int
    rfcs: tuple[int, ...]
    reachable: bool | None
    verdict: str
    name: str
    section: str

    @property
    def bits(self) -> int:
        return 32 if self.version == 4 else 128

    def contains(self, version: int, value: int) -> bool:
        shift = self.bits - self.prefix
        return version == self.version and value >> shift == self.network >> shift

    @property
    def first(self) -> int:
        return self.network

    @property
    def last(self) -> int:
        return self.network | ((1 << (self.bits - self.prefix)) - 1)


@dataclass(frozen=True)
class Endpoint:
    address: str
    service: str


_ENDPOINT = re.compile(r"^\s{4}(?P<address>[0-9a-fA-F:.]+)\s{2,}(?P<service>\S.*?)\s*$")


def docstring_endpoints() -> list[Endpoint]:
    """The cloud metadata endpoints ``_egress_table``'s docstring lists after the registries."""
    doc = table_module.__doc__ or ""
    listing = doc.split("Cloud metadata endpoints", 1)[1].split("::", 1)[1]
    endpoints = []
    for line in listing.splitlines():
        if line.strip() and not line.startswith("    "):
            break  # the listing ends at the first unindented line
        match = _ENDPOINT.match(line)
        if match is not None and match["address"] != "Address":
            endpoints.append(Endpoint(match["address"], match["service"]))
    return endpoints


def docstring_rows() -> list[Row]:
    """Every row listed in ``_egress_table``'s docstring, with the section it is listed under."""
    doc = table_module.__doc__ or ""
    rows: list[Row] = []
    section = ""
    for line in doc.splitlines():
        if line.startswith("IANA IPv4"):
            section = "ipv4-registry"
        elif line.startswith("IANA IPv6"):
            section = "ipv6-registry"
        elif line.startswith("Policy rows"):
            section = "policy"
        match = _ROW.match(line)
        if match is None:
            continue
        network = ipaddress.ip_network(match["cidr"])  # parsing text to an integer, nothing more
        reachable = {"True": True, "False": False, "N/A": None}[match["reachable"]]
        rows.append(
            Row(
                cidr=match["cidr"],
                version=network.version,
                network=int(network.network_address),
                prefix=network.prefixlen,
                rfcs=tuple(int(n) for n in match["rfcs"].split(",")),
                reachable=reachable,
                verdict=match["verdict"],
                name=match["name"],
                section=section,
            )
        )
    return rows


ROWS = docstring_rows()
ENDPOINTS = docstring_endpoints()
_ENDPOINT_VALUES = {
    (ipaddress.ip_address(e.address).version, int(ipaddress.ip_address(e.address)))
    for e in ENDPOINTS
}
_MASK32 = 0xFFFFFFFF
# Where the IPv4 address sits in each row whose verdict is the embedded address's.
_EMBEDDED_AT = {
    "::ffff:0:0/96": lambda value: value & _MASK32,
    "64:ff9b::/96": lambda value: value & _MASK32,
    "2002::/16": lambda value: (value >> 80) & _MASK32,
}


def reference_allows(version: int, value: int) -> bool:
    """Whether the address may be requested, by the docstring's table and rule alone."""
    if (version, value) in _ENDPOINT_VALUES:
        return False  # a cloud metadata endpoint, wherever it sits
    matching = [row for row in ROWS if row.contains(version, value)]
    if not matching:
        return True
    row = max(matching, key=lambda r: r.prefix)
    if row.verdict == "refuse":
        return False
    return reference_allows(4, _EMBEDDED_AT[row.cidr](value))


def reference_allows_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return reference_allows(address.version, int(address))


def test_s06_the_docstring_listing_parses_into_every_section() -> None:
    sections = {row.section for row in ROWS}
    assert sections == {"ipv4-registry", "ipv6-registry", "policy"}
    assert sum(row.section == "ipv4-registry" for row in ROWS) == 26  # 25 records, one has 2 blocks
    assert sum(row.section == "ipv6-registry" for row in ROWS) == 25
    assert set(_EMBEDDED_AT) == {row.cidr for row in ROWS if row.verdict == "embedded"}


def test_s06_the_metadata_endpoint_listing_parses() -> None:
    addresses = {e.address for e in ENDPOINTS}
    assert {"169.254.169.254", "168.63.129.16", "100.100.100.200", "192.0.0.192"} <= addresses
    assert len(addresses) == len(ENDPOINTS)
    assert all(e.service for e in ENDPOINTS)
