"""The one text of an IP address (S06): dotted IPv4, RFC 5952 IPv6, the same on every Python.

The interpreter's own rendering changed between releases (some print an IPv4-mapped address
with a dotted tail), and the text is what the blocklist, the pins, the ``Host`` header and the
permission rules compare, so it is computed here from the integer value alone.
"""

from __future__ import annotations

import ipaddress
from typing import Final, TypeAlias

__all__ = ["IPAddress", "format_address", "mapped_ipv4"]

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
"""An IPv4 or IPv6 address."""

_MAPPED_PREFIX: Final = 0xFFFF  # ::ffff:0:0/96, RFC 4291 §2.5.5.2
_LOW32: Final = 0xFFFFFFFF


def _ipv4_text(value: int) -> str:
    return ".".join(str((value >> shift) & 0xFF) for shift in (24, 16, 8, 0))


def _ipv6_text(value: int) -> str:
    # RFC 5952 §4: lower case, no leading zeros, the first longest run (of two or more) of zero
    # groups compressed; never the dotted tail some Python versions print for IPv4-mapped forms.
    groups = [(value >> (112 - 16 * i)) & 0xFFFF for i in range(8)]
    best_start, best_length, start = -1, 1, -1
    for i, group in enumerate([*groups, 1]):
        if group == 0 and start < 0:
            start = i
        elif group != 0 and start >= 0:
            if i - start > best_length:
                best_start, best_length = start, i - start
            start = -1
    text = [f"{group:x}" for group in groups]
    if best_start < 0:
        return ":".join(text)
    head = ":".join(text[:best_start])
    tail = ":".join(text[best_start + best_length :])
    return f"{head}::{tail}"


def format_address(address: IPAddress) -> str:
    """The canonical text of ``address`` (dotted IPv4; RFC 5952 IPv6), the same on every Python."""
    if isinstance(address, ipaddress.IPv4Address):
        return _ipv4_text(int(address))
    return _ipv6_text(int(address))


def mapped_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped IPv6 address (``::ffff:0:0/96``) is, else ``None``.

    A socket given ``::ffff:169.254.169.254`` talks to ``169.254.169.254``: for every decision
    about where a request goes the two are one address. Read from the integer value, not from
    ``ipaddress``'s properties (S06: the verdict must not depend on the interpreter).
    """
    if isinstance(address, ipaddress.IPv4Address):
        return None
    value = int(address)
    if value >> 32 != _MAPPED_PREFIX:
        return None
    return ipaddress.IPv4Address(value & _LOW32)
