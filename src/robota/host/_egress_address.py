"""Which addresses the egress policy refuses, decided from our own table (S06).

:func:`classify_address` looks the address up in :data:`~robota.host._egress_table.BLOCKS` and,
where the row embeds IPv4 addresses, looks those up too. It reads nothing from the address but its
version and its integer value, so the verdict is the same on every Python version: the
interpreter's ``ipaddress`` classification properties are never consulted (a test walks the source
tree to keep it that way).

The cloud metadata endpoints the table module lists apart from the registries are refused too,
wherever they sit — Azure's WireServer (``168.63.129.16``) is at a public address — and, through
the embedded positions below, in every IPv6 form that carries them.

Embedded IPv4 positions, each checked whichever spelling the URL or the resolver used (the hex
form a URL renders and the dotted one are the same integer):

* IPv4-mapped ``::ffff:0:0/96``, IPv4-compatible ``::/96`` and NAT64 ``64:ff9b::/96``: the low 32
  bits (RFC 4291 §2.5.5, RFC 6052 §2.2 for a /96 prefix).
* Local-use NAT64 ``64:ff9b:1::/48`` (RFC 8215): for the /48 itself RFC 6052 §2.2 puts the IPv4
  address in bits 48–63 and 72–87 (bits 64–71 are the reserved "u" octet); an operator may also
  carve a /96 out of it, which puts it in the low 32 bits. Both are checked — the row is refused
  either way, the embedded address only sharpens the reason.
* 6to4 ``2002::/16`` (RFC 3056 §2): bits 16–47.
* Teredo ``2001::/32`` (RFC 4380 §4): the server in bits 32–63 and the client in the low 32 bits,
  obfuscated by inverting every bit.
"""

from __future__ import annotations

import ipaddress
from typing import Final, Literal

from robota.core.urls import format_address
from robota.host._egress_table import Block, Embedding, metadata_service, most_specific

__all__ = ["classify_address", "embedded_ipv4", "format_address", "is_loopback"]

_LOW32: Final = 0xFFFFFFFF


def embedded_ipv4(embedding: Embedding, value: int) -> tuple[tuple[str, int], ...]:
    """The IPv4 addresses (with the role of each) an IPv6 ``value`` carries in ``embedding``."""
    if embedding == "low32":
        return (("embedded", value & _LOW32),)
    if embedding == "6to4":
        return (("6to4", (value >> 80) & _LOW32),)
    if embedding == "teredo":
        return (
            ("Teredo server", (value >> 64) & _LOW32),
            ("Teredo client", (value & _LOW32) ^ _LOW32),
        )
    # "rfc6052-48": bits 48..63 then 72..87, around the reserved u octet (bits 64..71).
    return (("NAT64 /48", (((value >> 64) & 0xFFFF) << 16) | ((value >> 40) & 0xFFFF)),)


def _why(block: Block, text: str) -> str:
    rfcs = ", ".join(f"RFC {n}" for n in block.rfcs)
    return f"{text} is in {block.cidr}, {block.name} ({block.kind}; {rfcs})"


def _classify(version: Literal[4, 6], value: int) -> str | None:
    address = ipaddress.IPv4Address(value) if version == 4 else ipaddress.IPv6Address(value)
    text = format_address(address)
    block = most_specific(version, value)
    if block is None:
        # S06: ordinary global unicast, unless a cloud platform serves its metadata there.
        service = metadata_service(version, value)
        return None if service is None else f"{text} is a cloud metadata endpoint ({service})"
    inner = [
        f"its {role} IPv4 address {reason}"
        for embedding in block.embeds
        for role, ipv4 in embedded_ipv4(embedding, value)
        if (reason := _classify(4, ipv4)) is not None
    ]
    if block.verdict == "embedded" and not inner:
        return None
    why = _why(block, text)
    return f"{why}, and {'; '.join(inner)}" if inner else why


def classify_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``address`` is refused, or ``None`` when a request may go to it (S06).

    The reason names the address, the special-purpose row that refuses it (prefix, registry name,
    kind, RFC) and any embedded IPv4 address that is refused. Decided from our own table by
    integer arithmetic only — see :mod:`robota.host._egress_table` for the rule and its sources.
    """
    version: Literal[4, 6] = 4 if isinstance(address, ipaddress.IPv4Address) else 6
    return _classify(version, int(address))


def is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``address`` is in ``127.0.0.0/8`` or is ``::1`` (by the table, not ``ipaddress``)."""
    version: Literal[4, 6] = 4 if isinstance(address, ipaddress.IPv4Address) else 6
    block = most_specific(version, int(address))
    return block is not None and block.kind == "loopback"
