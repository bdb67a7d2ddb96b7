"""Which addresses the egress policy refuses, decided from our own table (S06).

:func:`classify_address` looks the address up in :data:`~robota.host.egress._table.BLOCKS` and
looks up every IPv4 address it carries too. It reads nothing from the address but its version
and its integer value, so the verdict is the same on every Python version: the interpreter's
``ipaddress`` classification properties are never consulted (a test walks the source tree to keep
it that way).

The cloud metadata endpoints the table module lists apart from the registries are refused too,
wherever they sit — Azure's WireServer (``168.63.129.16``) is at a public address — and, through
the embedded positions, in every IPv6 form that carries them.

Where an IPv6 address carries an IPv4 address — IPv4-mapped, IPv4-compatible, NAT64 (the
well-known /96 and the local-use /48, read both ways), 6to4, Teredo server and client — is
:data:`robota.core.urls.IPV4_EMBEDDINGS`, read through :func:`robota.core.urls.embedded_ipv4`:
the one table the URL permission rules read too (S12), so a deny rule on an IPv4 address and
this classifier see the same IPv4 addresses inside the same IPv6 address. Each is checked
whichever spelling the URL or the resolver used (the hex form a URL renders and the dotted one
are the same integer).
"""

from __future__ import annotations

import ipaddress
from typing import Literal

from robota.core.urls import embedded_ipv4, format_address
from robota.host.egress._table import Block, metadata_service, most_specific

__all__ = ["classify_address", "format_address", "is_loopback"]


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
        f"its {carried.embedding.role} IPv4 address {reason}"
        for carried in embedded_ipv4(address)
        if (reason := _classify(4, int(carried.address))) is not None
    ]
    if block.verdict == "embedded" and not inner:
        return None
    why = _why(block, text)
    return f"{why}, and {'; '.join(inner)}" if inner else why


def classify_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``address`` is refused, or ``None`` when a request may go to it (S06).

    The reason names the address, the special-purpose row that refuses it (prefix, registry name,
    kind, RFC) and any embedded IPv4 address that is refused. Decided from our own table by
    integer arithmetic only — see :mod:`robota.host.egress._table` for the rule and its sources.
    """
    version: Literal[4, 6] = 4 if isinstance(address, ipaddress.IPv4Address) else 6
    return _classify(version, int(address))


def is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``address`` is in ``127.0.0.0/8`` or is ``::1`` (by the table, not ``ipaddress``)."""
    version: Literal[4, 6] = 4 if isinstance(address, ipaddress.IPv4Address) else 6
    block = most_specific(version, int(address))
    return block is not None and block.kind == "loopback"
