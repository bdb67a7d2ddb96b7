"""The special-purpose address table the egress policy decides from (S06).

Our own transcription, so that a verdict never depends on the interpreter: ``ipaddress``'s
``is_global``/``is_private`` have changed between Python releases (before 3.11.10 and 3.12.4 they
called most of ``192.0.0.0/24`` — ``192.0.0.192`` is a cloud metadata endpoint — global), while
this table, and the integer arithmetic over it, is the same on every supported version.

Sources, transcribed by hand (a test checks the code table below carries exactly these rows):
the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890;
https://www.iana.org/assignments/iana-ipv4-special-registry/ and
https://www.iana.org/assignments/iana-ipv6-special-registry/), every entry, in the state that
includes the newest allocation of 2025-04 (``100:0:0:1::/64``, RFC 9780). ``Global`` is the
registry's "Globally Reachable" column (``N/A`` where the registry says N/A or leaves it empty).
When this table is touched, re-check it row by row against the registries' CSV exports
(``iana-ipv4-special-registry-1.csv``, ``iana-ipv6-special-registry-1.csv``) and move the date.

``Verdict`` is ours. **The rule: an address is admitted only when it is ordinary global unicast
— inside no row at all — or when it embeds an IPv4 address the network really delivers to, and
that address is admitted.** The most specific row containing an address decides:

* ``refuse`` — refused: every row but the three below. That includes the rows the registry marks
  globally reachable, because none of them is plain unicast to an ordinary host: the PCP, TURN
  and DNS-SD anycast addresses (``192.0.0.9``, ``192.0.0.10``, ``2001:1::1``–``::3``) reach a
  service of the *local* network operator (the home router), AMT and AS112 are anycast relay and
  sink services, and ORCHIDv2 and DETs are cryptographic identifiers, not locators. An HTTP
  request an agent makes has no business with any of them, and refusing costs nothing.
  Terminated rows (``N/A``) and Teredo (a tunnel whose reachability depends on a relay) are
  refused too.
* ``embedded`` — the verdict of the IPv4 address inside: IPv4-mapped (a socket connects to the
  IPv4 address itself, which is why the registry calls the IPv6 form unreachable), the
  well-known NAT64 prefix (DNS64 answers on IPv6-only networks; the translator connects to the
  IPv4 address), and 6to4.

IANA IPv4 Special-Purpose Address Registry::

    Block              RFC       Global Verdict  Name
    0.0.0.0/8          791       False  refuse   "This network"
    0.0.0.0/32         1122      False  refuse   "This host on this network"
    10.0.0.0/8         1918      False  refuse   Private-Use
    100.64.0.0/10      6598      False  refuse   Shared Address Space
    127.0.0.0/8        1122      False  refuse   Loopback
    169.254.0.0/16     3927      False  refuse   Link Local
    172.16.0.0/12      1918      False  refuse   Private-Use
    192.0.0.0/24       6890      False  refuse   IETF Protocol Assignments
    192.0.0.0/29       7335      False  refuse   IPv4 Service Continuity Prefix
    192.0.0.8/32       7600      False  refuse   IPv4 dummy address
    192.0.0.9/32       7723      True   refuse   Port Control Protocol Anycast
    192.0.0.10/32      8155      True   refuse   Traversal Using Relays around NAT Anycast
    192.0.0.170/32     8880,7050 False  refuse   NAT64/DNS64 Discovery
    192.0.0.171/32     8880,7050 False  refuse   NAT64/DNS64 Discovery
    192.0.2.0/24       5737      False  refuse   Documentation (TEST-NET-1)
    192.31.196.0/24    7535      True   refuse   AS112-v4
    192.52.193.0/24    7450      True   refuse   AMT
    192.88.99.0/24     7526      N/A    refuse   Deprecated (6to4 Relay Anycast)
    192.88.99.2/32     6751      False  refuse   6a44-relay anycast address
    192.168.0.0/16     1918      False  refuse   Private-Use
    192.175.48.0/24    7534      True   refuse   Direct Delegation AS112 Service
    198.18.0.0/15      2544      False  refuse   Benchmarking
    198.51.100.0/24    5737      False  refuse   Documentation (TEST-NET-2)
    203.0.113.0/24     5737      False  refuse   Documentation (TEST-NET-3)
    240.0.0.0/4        1112      False  refuse   Reserved
    255.255.255.255/32 8190,919  False  refuse   Limited Broadcast

IANA IPv6 Special-Purpose Address Registry::

    Block              RFC       Global Verdict  Name
    ::1/128            4291      False  refuse   Loopback Address
    ::/128             4291      False  refuse   Unspecified Address
    ::ffff:0:0/96      4291      False  embedded IPv4-mapped Address
    64:ff9b::/96       6052      True   embedded IPv4-IPv6 Translat.
    64:ff9b:1::/48     8215      False  refuse   IPv4-IPv6 Translat.
    100::/64           6666      False  refuse   Discard-Only Address Block
    100:0:0:1::/64     9780      False  refuse   Dummy IPv6 Prefix
    2001::/23          2928      False  refuse   IETF Protocol Assignments
    2001::/32          4380,8190 N/A    refuse   TEREDO
    2001:1::1/128      7723      True   refuse   Port Control Protocol Anycast
    2001:1::2/128      8155      True   refuse   Traversal Using Relays around NAT Anycast
    2001:1::3/128      9665      True   refuse   DNS-SD Service Registration Protocol Anycast
    2001:2::/48        5180      False  refuse   Benchmarking
    2001:3::/32        7450      True   refuse   AMT
    2001:4:112::/48    7535      True   refuse   AS112-v6
    2001:10::/28       4843      N/A    refuse   Deprecated (previously ORCHID)
    2001:20::/28       7343      True   refuse   ORCHIDv2
    2001:30::/28       9374      True   refuse   Drone Remote ID Protocol Entity Tags (DETs) Prefix
    2001:db8::/32      3849      False  refuse   Documentation
    2002::/16          3056      N/A    embedded 6to4
    2620:4f:8000::/48  7534      True   refuse   Direct Delegation AS112 Service
    3fff::/20          9637      False  refuse   Documentation
    5f00::/16          9602      False  refuse   Segment Routing (SRv6) SIDs
    fc00::/7           4193,8190 False  refuse   Unique-Local
    fe80::/10          4291      False  refuse   Link-Local Unicast

Policy rows — not in the special-purpose registries, refused because they are not unicast to a
host (from the IANA IPv4 and IPv6 Address Space registries)::

    Block              RFC       Global Verdict  Name
    224.0.0.0/4        5771      N/A    refuse   Multicast
    ::/96              4291      N/A    refuse   IPv4-compatible (deprecated)
    fec0::/10          3879      N/A    refuse   Site-Local (deprecated)
    ff00::/8           4291      N/A    refuse   Multicast
    ::/3               4291      N/A    refuse   Outside global unicast 2000::/3
    4000::/2           4291      N/A    refuse   Outside global unicast 2000::/3
    8000::/1           4291      N/A    refuse   Outside global unicast 2000::/3

The last three tile everything outside ``2000::/3``, so every IPv6 address IANA has not made
global unicast is refused unless a more specific ``embedded`` row says otherwise.

Cloud metadata endpoints — not from any IANA registry, so kept apart from the rows above. Each is
a platform service that answers a machine (or a pod) with its credentials, its configuration or
its secrets, and each is refused as itself and inside every IPv6 embedding, whatever the rows say
about the block around it. Most already sit in a refused block (link-local, CGNAT, ``192.0.0.0/24``,
unique-local) and are listed so the private-network allowance can never admit them; Azure's
WireServer sits at a public address, where only this listing refuses it. Each from its
operator's documentation::

    Address            Service
    169.254.169.254    Instance metadata: AWS, Azure, Google Cloud, Oracle Cloud, OpenStack ...
    169.254.170.2      AWS ECS task metadata and credentials
    169.254.170.23     AWS EKS Pod Identity Agent
    100.100.100.200    Alibaba Cloud instance metadata
    192.0.0.192        Oracle Cloud instance metadata (legacy address)
    168.63.129.16      Azure WireServer: VM agent goal state, extension settings, certificates
    fd00:ec2::254      AWS instance metadata over IPv6
    fd00:ec2::23       AWS EKS Pod Identity Agent over IPv6
    fd20:ce::254       Google Cloud metadata over IPv6
    fd00:42::42        Scaleway instance metadata over IPv6

Sources: Microsoft, "What is IP address 168.63.129.16?" (Azure Virtual Network documentation: a
virtual public IP of the host node, used by every region and national cloud, reachable only from
inside Azure); AWS EC2, ECS and EKS user guides; Google Compute Engine, Oracle Cloud
Infrastructure, Alibaba Cloud ECS and Scaleway instance documentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

__all__ = [
    "BLOCKS",
    "METADATA_ENDPOINTS",
    "Block",
    "Verdict",
    "metadata_service",
    "most_specific",
]

Verdict: TypeAlias = Literal["refuse", "embedded"]


@final
@dataclass(frozen=True, slots=True)
class Block:
    """One row: a prefix as an integer range, with the registry's columns and our verdict.

    Attributes:
        version: 4 or 6.
        cidr: The prefix as the registry spells it.
        first: The first address, as an integer.
        last: The last address, as an integer.
        prefix: The prefix length (the most specific row wins).
        rfcs: The RFCs the registry cites.
        reachable: The registry's "Globally Reachable" column (``None`` for N/A).
        verdict: Ours: ``refuse``, or ``embedded`` (the embedded IPv4 address decides).
        name: The registry's name for the row.
        kind: A short word for reasons (``loopback``, ``link-local`` …).

    Where a row's addresses carry IPv4 addresses is not a column here: it is
    :data:`robota.core.urls.IPV4_EMBEDDINGS`, the table the permission rules read too.
    """

    version: Literal[4, 6]
    cidr: str
    first: int
    last: int
    prefix: int
    rfcs: tuple[int, ...]
    reachable: bool | None
    verdict: Verdict
    name: str
    kind: str


def _ipv4(text: str) -> int:
    a, b, c, d = (int(part) for part in text.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


def _ipv6(text: str) -> int:
    # Only the table's own literals come here: hex groups with at most one "::".
    head, _, tail = text.partition("::") if "::" in text else (text, "", "")
    left = [int(group, 16) for group in head.split(":") if group]
    right = [int(group, 16) for group in tail.split(":") if group]
    groups = left + [0] * (8 - len(left) - len(right)) + right
    value = 0
    for group in groups:
        value = (value << 16) | group
    return value


def _block(
    cidr: str,
    rfcs: tuple[int, ...],
    reachable: bool | None,
    verdict: Verdict,
    name: str,
    kind: str,
) -> Block:
    network, _, length = cidr.partition("/")
    version: Literal[4, 6] = 6 if ":" in network else 4
    bits = 32 if version == 4 else 128
    prefix = int(length)
    first = _ipv4(network) if version == 4 else _ipv6(network)
    host_bits = (1 << (bits - prefix)) - 1
    assert first & host_bits == 0, cidr
    return Block(
        version,
        cidr,
        first,
        first | host_bits,
        prefix,
        rfcs,
        reachable,
        verdict,
        name,
        kind,
    )


_R: Final = "refuse"
_E: Final = "embedded"
_ANYCAST: Final = "anycast service"

# S06: transcribed from the IANA special-purpose registries (see the module docstring for the
# source and date); one row per registry entry, in registry order, then the policy rows.
BLOCKS: Final[tuple[Block, ...]] = (
    _block("0.0.0.0/8", (791,), False, _R, '"This network"', "this-network"),
    _block("0.0.0.0/32", (1122,), False, _R, '"This host on this network"', "unspecified"),
    _block("10.0.0.0/8", (1918,), False, _R, "Private-Use", "private"),
    _block("100.64.0.0/10", (6598,), False, _R, "Shared Address Space", "CGNAT shared"),
    _block("127.0.0.0/8", (1122,), False, _R, "Loopback", "loopback"),
    _block("169.254.0.0/16", (3927,), False, _R, "Link Local", "link-local"),
    _block("172.16.0.0/12", (1918,), False, _R, "Private-Use", "private"),
    _block("192.0.0.0/24", (6890,), False, _R, "IETF Protocol Assignments", "protocol-assignment"),
    _block(
        "192.0.0.0/29", (7335,), False, _R, "IPv4 Service Continuity Prefix", "protocol-assignment"
    ),
    _block("192.0.0.8/32", (7600,), False, _R, "IPv4 dummy address", "protocol-assignment"),
    _block("192.0.0.9/32", (7723,), True, _R, "Port Control Protocol Anycast", _ANYCAST),
    _block(
        "192.0.0.10/32", (8155,), True, _R, "Traversal Using Relays around NAT Anycast", _ANYCAST
    ),
    _block(
        "192.0.0.170/32", (8880, 7050), False, _R, "NAT64/DNS64 Discovery", "protocol-assignment"
    ),
    _block(
        "192.0.0.171/32", (8880, 7050), False, _R, "NAT64/DNS64 Discovery", "protocol-assignment"
    ),
    _block("192.0.2.0/24", (5737,), False, _R, "Documentation (TEST-NET-1)", "documentation"),
    _block("192.31.196.0/24", (7535,), True, _R, "AS112-v4", _ANYCAST),
    _block("192.52.193.0/24", (7450,), True, _R, "AMT", _ANYCAST),
    _block("192.88.99.0/24", (7526,), None, _R, "Deprecated (6to4 Relay Anycast)", "deprecated"),
    _block("192.88.99.2/32", (6751,), False, _R, "6a44-relay anycast address", _ANYCAST),
    _block("192.168.0.0/16", (1918,), False, _R, "Private-Use", "private"),
    _block("192.175.48.0/24", (7534,), True, _R, "Direct Delegation AS112 Service", _ANYCAST),
    _block("198.18.0.0/15", (2544,), False, _R, "Benchmarking", "benchmarking"),
    _block("198.51.100.0/24", (5737,), False, _R, "Documentation (TEST-NET-2)", "documentation"),
    _block("203.0.113.0/24", (5737,), False, _R, "Documentation (TEST-NET-3)", "documentation"),
    _block("240.0.0.0/4", (1112,), False, _R, "Reserved", "reserved"),
    _block("255.255.255.255/32", (8190, 919), False, _R, "Limited Broadcast", "broadcast"),
    # IPv6
    _block("::1/128", (4291,), False, _R, "Loopback Address", "loopback"),
    _block("::/128", (4291,), False, _R, "Unspecified Address", "unspecified"),
    _block("::ffff:0:0/96", (4291,), False, _E, "IPv4-mapped Address", "IPv4-mapped"),
    _block("64:ff9b::/96", (6052,), True, _E, "IPv4-IPv6 Translat.", "NAT64"),
    _block("64:ff9b:1::/48", (8215,), False, _R, "IPv4-IPv6 Translat.", "local-use NAT64"),
    _block("100::/64", (6666,), False, _R, "Discard-Only Address Block", "discard-only"),
    _block("100:0:0:1::/64", (9780,), False, _R, "Dummy IPv6 Prefix", "dummy"),
    _block("2001::/23", (2928,), False, _R, "IETF Protocol Assignments", "protocol-assignment"),
    _block("2001::/32", (4380, 8190), None, _R, "TEREDO", "Teredo tunnel"),
    _block("2001:1::1/128", (7723,), True, _R, "Port Control Protocol Anycast", _ANYCAST),
    _block(
        "2001:1::2/128", (8155,), True, _R, "Traversal Using Relays around NAT Anycast", _ANYCAST
    ),
    _block(
        "2001:1::3/128",
        (9665,),
        True,
        _R,
        "DNS-SD Service Registration Protocol Anycast",
        _ANYCAST,
    ),
    _block("2001:2::/48", (5180,), False, _R, "Benchmarking", "benchmarking"),
    _block("2001:3::/32", (7450,), True, _R, "AMT", _ANYCAST),
    _block("2001:4:112::/48", (7535,), True, _R, "AS112-v6", _ANYCAST),
    _block("2001:10::/28", (4843,), None, _R, "Deprecated (previously ORCHID)", "deprecated"),
    _block("2001:20::/28", (7343,), True, _R, "ORCHIDv2", "identifier"),
    _block(
        "2001:30::/28",
        (9374,),
        True,
        _R,
        "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
        "identifier",
    ),
    _block("2001:db8::/32", (3849,), False, _R, "Documentation", "documentation"),
    _block("2002::/16", (3056,), None, _E, "6to4", "6to4"),
    _block("2620:4f:8000::/48", (7534,), True, _R, "Direct Delegation AS112 Service", _ANYCAST),
    _block("3fff::/20", (9637,), False, _R, "Documentation", "documentation"),
    _block("5f00::/16", (9602,), False, _R, "Segment Routing (SRv6) SIDs", "segment routing"),
    _block("fc00::/7", (4193, 8190), False, _R, "Unique-Local", "unique-local (private)"),
    _block("fe80::/10", (4291,), False, _R, "Link-Local Unicast", "link-local"),
    # Policy rows (S06: multicast, deprecated and non-global-unicast space is refused).
    _block("224.0.0.0/4", (5771,), None, _R, "Multicast", "multicast"),
    _block("::/96", (4291,), None, _R, "IPv4-compatible (deprecated)", "IPv4-compatible"),
    _block("fec0::/10", (3879,), None, _R, "Site-Local (deprecated)", "site-local"),
    _block("ff00::/8", (4291,), None, _R, "Multicast", "multicast"),
    _block("::/3", (4291,), None, _R, "Outside global unicast 2000::/3", "not global unicast"),
    _block("4000::/2", (4291,), None, _R, "Outside global unicast 2000::/3", "not global unicast"),
    _block("8000::/1", (4291,), None, _R, "Outside global unicast 2000::/3", "not global unicast"),
)

_BY_VERSION: Final = {
    version: tuple(sorted((b for b in BLOCKS if b.version == version), key=lambda b: -b.prefix))
    for version in (4, 6)
}


def most_specific(version: Literal[4, 6], value: int) -> Block | None:
    """The longest-prefix row containing the address ``value``, or ``None`` (ordinary unicast).

    Pure integer comparisons over :data:`BLOCKS`; nothing here asks the interpreter's
    ``ipaddress`` what an address is.
    """
    for block in _BY_VERSION[version]:
        if block.first <= value <= block.last:
            return block
    return None


# S06: cloud metadata endpoints, from each operator's documentation (see the module docstring) —
# not IANA rows. (version, integer value) -> the service there.
METADATA_ENDPOINTS: Final[dict[tuple[Literal[4, 6], int], str]] = {
    (4, _ipv4("169.254.169.254")): (
        "Instance metadata: AWS, Azure, Google Cloud, Oracle Cloud, OpenStack ..."
    ),
    (4, _ipv4("169.254.170.2")): "AWS ECS task metadata and credentials",
    (4, _ipv4("169.254.170.23")): "AWS EKS Pod Identity Agent",
    (4, _ipv4("100.100.100.200")): "Alibaba Cloud instance metadata",
    (4, _ipv4("192.0.0.192")): "Oracle Cloud instance metadata (legacy address)",
    # A public address (Microsoft's, in every region and national cloud): no IANA row covers it.
    (4, _ipv4("168.63.129.16")): (
        "Azure WireServer: VM agent goal state, extension settings, certificates"
    ),
    (6, _ipv6("fd00:ec2::254")): "AWS instance metadata over IPv6",
    (6, _ipv6("fd00:ec2::23")): "AWS EKS Pod Identity Agent over IPv6",
    (6, _ipv6("fd20:ce::254")): "Google Cloud metadata over IPv6",
    (6, _ipv6("fd00:42::42")): "Scaleway instance metadata over IPv6",
}


def metadata_service(version: Literal[4, 6], value: int) -> str | None:
    """The cloud metadata service at the address ``value``, or ``None`` when there is none."""
    return METADATA_ENDPOINTS.get((version, value))
