"""Where an IPv6 address carries an IPv4 address (S06, S12): the one embedding table.

A connection to some IPv6 addresses ends at an IPv4 address written inside them: a socket given
an IPv4-mapped address talks IPv4, a NAT64 translator connects to the IPv4 address in the low
bits, a 6to4 or Teredo relay tunnels to the address in the prefix. Two checks must agree on where
those addresses sit: the egress policy, which judges such an address by the IPv4 addresses inside
(:func:`robota.host.classify_address`), and the URL permission rules, for which a deny on an IPv4
address also covers every IPv6 spelling of it. Both read :data:`IPV4_EMBEDDINGS` through
:func:`embedded_ipv4`, so they cannot drift apart.

The positions, each read from the integer value (never from ``ipaddress``'s properties, whose
answers differ between Python versions):

* IPv4-mapped ``::ffff:0:0/96`` and IPv4-compatible ``::/96``: the low 32 bits (RFC 4291
  §2.5.5). ``::`` and ``::1`` are the unspecified and loopback addresses (RFC 4291 §2.5.2,
  §2.5.3), not IPv4-compatible ones, and carry nothing;
* NAT64's well-known prefix ``64:ff9b::/96``: the low 32 bits (RFC 6052 §2.2, a /96 prefix);
* local-use NAT64 ``64:ff9b:1::/48`` (RFC 8215): for the /48 itself RFC 6052 §2.2 puts the IPv4
  address in bits 48–63 and 72–87 (bits 64–71 are the reserved "u" octet); an operator may
  also carve a /96 out of it, which puts it in the low 32 bits — both are read;
* 6to4 ``2002::/16`` (RFC 3056 §2): bits 16–47;
* Teredo ``2001::/32`` (RFC 4380 §4): the server in bits 32–63, and the client in the low 32
  bits, obfuscated by inverting every bit.

Bits are numbered from the most significant (bit 0) as the RFCs do. Misuse: deciding about an
IPv6 address without asking what it carries, or reading an embedding from a second table.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, final

from robota.core.urls._address import IPAddress

__all__ = ["IPV4_EMBEDDINGS", "EmbeddedIPv4", "EmbeddingPosition", "IPv4Embedding", "embedded_ipv4"]

EmbeddingPosition: TypeAlias = Literal[
    "low32", "6to4", "teredo-server", "teredo-client", "rfc6052-48"
]
"""Which bits of the IPv6 address hold the IPv4 address (see the module docstring)."""

_LOW32: Final = 0xFFFFFFFF


def _extract(position: EmbeddingPosition, value: int) -> int:
    if position == "low32":
        return value & _LOW32
    if position == "6to4":
        return (value >> 80) & _LOW32
    if position == "teredo-server":
        return (value >> 64) & _LOW32
    if position == "teredo-client":
        return (value & _LOW32) ^ _LOW32
    # "rfc6052-48": bits 48..63 then 72..87, around the reserved u octet (bits 64..71).
    return (((value >> 64) & 0xFFFF) << 16) | ((value >> 40) & 0xFFFF)


@final
@dataclass(frozen=True, slots=True)
class IPv4Embedding:
    """One place an IPv6 prefix carries an IPv4 address.

    Attributes:
        prefix: The IPv6 prefix, as its RFC spells it (``2002::/16``).
        position: Which bits hold the IPv4 address.
        role: What the IPv4 address is to a connection (``6to4``, ``Teredo client``, …), the
            word reasons use.
        rfc: Where the position is defined.
        first: The first address of the prefix, as an integer.
        last: The last address of the prefix, as an integer.
        excluded: Addresses inside the prefix that carry nothing (``::`` and ``::1``).
    """

    prefix: str
    position: EmbeddingPosition
    role: str
    rfc: str
    first: int = field(init=False)
    last: int = field(init=False)
    excluded: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        network = ipaddress.IPv6Network(self.prefix)  # parses the text; no property is read
        object.__setattr__(self, "first", int(network.network_address))
        object.__setattr__(self, "last", int(network.broadcast_address))

    def carries(self, value: int) -> bool:
        """Whether the IPv6 address ``value`` (an integer) carries an IPv4 address here."""
        return self.first <= value <= self.last and value not in self.excluded

    def ipv4(self, value: int) -> ipaddress.IPv4Address:
        """The IPv4 address at this position of ``value`` (which :meth:`carries` must accept)."""
        return ipaddress.IPv4Address(_extract(self.position, value))


IPV4_EMBEDDINGS: Final[tuple[IPv4Embedding, ...]] = (
    IPv4Embedding("::ffff:0:0/96", "low32", "IPv4-mapped", "RFC 4291 §2.5.5.2"),
    IPv4Embedding(
        "::/96", "low32", "IPv4-compatible", "RFC 4291 §2.5.5.1", excluded=frozenset({0, 1})
    ),
    IPv4Embedding("64:ff9b::/96", "low32", "NAT64", "RFC 6052 §2.2"),
    IPv4Embedding("64:ff9b:1::/48", "rfc6052-48", "NAT64 /48", "RFC 8215, RFC 6052 §2.2"),
    IPv4Embedding("64:ff9b:1::/48", "low32", "NAT64 /96", "RFC 8215, RFC 6052 §2.2"),
    IPv4Embedding("2002::/16", "6to4", "6to4", "RFC 3056 §2"),
    IPv4Embedding("2001::/32", "teredo-server", "Teredo server", "RFC 4380 §4"),
    IPv4Embedding("2001::/32", "teredo-client", "Teredo client", "RFC 4380 §4"),
)
"""Every place an IPv6 address carries an IPv4 address (S06, S12); see the module docstring."""


@final
@dataclass(frozen=True, slots=True)
class EmbeddedIPv4:
    """An IPv4 address an IPv6 address carries.

    Attributes:
        address: The IPv4 address.
        embedding: Where it sits (its :attr:`IPv4Embedding.role` names it in reasons).
    """

    address: ipaddress.IPv4Address
    embedding: IPv4Embedding


def embedded_ipv4(address: IPAddress) -> tuple[EmbeddedIPv4, ...]:
    """Every IPv4 address ``address`` carries, by :data:`IPV4_EMBEDDINGS`, in table order.

    Empty for an IPv4 address and for an IPv6 address outside every embedding prefix. A Teredo
    address carries two (server and client), a local-use NAT64 address two readings. Misuse:
    taking only the first, where every one is a place the connection may end.
    """
    if isinstance(address, ipaddress.IPv4Address):
        return ()
    value = int(address)
    return tuple(
        EmbeddedIPv4(embedding.ipv4(value), embedding)
        for embedding in IPV4_EMBEDDINGS
        if embedding.carries(value)
    )
