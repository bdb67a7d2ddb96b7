"""The egress policy (S06): may this process send a request to that URL?

The one outbound boundary for every caller- or model-supplied URL. :func:`check_url` returns a
discriminated result — :class:`Allowed` with the validated addresses, or :class:`Rejected` with a
reason — and never raises for a policy outcome. It refuses:

* schemes other than ``http`` and ``https``;
* loopback, private, link-local, CGNAT (100.64/10), multicast, reserved, unspecified, broadcast,
  documentation and benchmark addresses — for IPv4, IPv6, and IPv6 forms that embed an IPv4
  address (mapped, compatible, NAT64, 6to4, Teredo), whichever spelling the URL used: the hex
  form a URL renders (``[::ffff:7f00:1]``) and the dotted one (``[::ffff:127.0.0.1]``) are parsed
  to the same address, and so are IPv4's legacy spellings (``2130706433``, ``0x7f.1``,
  ``0177.0.0.1``);
* a fixed hostname blocklist, cloud metadata names included;
* a hostname for which *any* resolved address is refused (or which does not resolve).

The resolver is injectable (an async ``(host) -> list[str]``) so tests run offline. Loopback
test servers need a :class:`LoopbackAllowance` naming the hosts that may resolve to loopback; it
is created only by :func:`robota.testing.loopback_allowance`, so production code cannot turn it
on by accident, and it never admits a literal address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final
from urllib.parse import urlsplit

__all__ = [
    "BLOCKED_HOSTNAMES",
    "Allowed",
    "EgressDecision",
    "LoopbackAllowance",
    "Rejected",
    "Resolver",
    "check_url",
    "classify_address",
    "parse_ip_literal",
]

Resolver: TypeAlias = Callable[[str], Awaitable[list[str]]]
"""``async (host) -> [ip, ...]``: the addresses a host name resolves to."""

BLOCKED_HOSTNAMES: Final = frozenset(
    {
        "localhost",
        "localhost.localdomain",
        "ip6-localhost",
        "ip6-loopback",
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.com",
        "metadata.packet.net",
        "kubernetes.default",
        "kubernetes.default.svc",
    }
)
"""Host names refused whatever they resolve to (loopback aliases and cloud metadata services)."""

_BLOCKED_SUFFIXES: Final = (".localhost", ".local", ".internal", ".kubernetes.default.svc")
_IPV4_SPELLING = re.compile(r"^(?:0x[0-9a-f]+|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}$", re.I)

_BROADCAST: Final = ipaddress.IPv4Address("255.255.255.255")
_CGNAT: Final = ipaddress.ip_network("100.64.0.0/10")
_BENCHMARK: Final = ipaddress.ip_network("198.18.0.0/15")
_DOCUMENTATION_V4: Final = (
    ipaddress.ip_network("192.0.2.0/24"),
    ipaddress.ip_network("198.51.100.0/24"),
    ipaddress.ip_network("203.0.113.0/24"),
)
_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL: Final = ipaddress.ip_network("64:ff9b:1::/48")
_COMPATIBLE: Final = ipaddress.ip_network("::/96")


@final
@dataclass(frozen=True, slots=True)
class Allowed:
    """The URL may be requested.

    Attributes:
        url: The URL as checked.
        host: Its host (lower case, no trailing dot; an IPv6 address without brackets).
        port: The port the request goes to.
        addresses: The validated addresses: the only ones a pinned transport may connect to.
    """

    url: str
    host: str
    port: int
    addresses: tuple[str, ...]

    @property
    def ok(self) -> Literal[True]:
        """Always ``True``."""
        return True


@final
@dataclass(frozen=True, slots=True)
class Rejected:
    """The URL may not be requested.

    Attributes:
        url: The URL as checked.
        reason: Why, naming the rule.
    """

    url: str
    reason: str

    @property
    def ok(self) -> Literal[False]:
        """Always ``False``."""
        return False

    @property
    def addresses(self) -> tuple[str, ...]:
        """Always empty."""
        return ()


EgressDecision: TypeAlias = Allowed | Rejected


@final
class LoopbackAllowance:
    """Test-only: these host names may resolve to loopback addresses.

    Create it with :func:`robota.testing.loopback_allowance`. Only names listed here are
    admitted, only to 127.0.0.0/8 or ``::1``, and never as a literal address in a URL.
    """

    __slots__ = ("_hosts",)

    def __init__(self, hosts: Iterable[str], *, _token: object = None) -> None:
        if _token is not _TEST_TOKEN:
            raise TypeError(
                "a LoopbackAllowance is made only by robota.testing.loopback_allowance()"
            )
        self._hosts = frozenset(h.lower().rstrip(".") for h in hosts)

    def admits(self, host: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        """Whether ``address`` is loopback and ``host`` is one of the allowed names."""
        return host in self._hosts and address.is_loopback

    def __repr__(self) -> str:
        return f"LoopbackAllowance({sorted(self._hosts)!r})"


_TEST_TOKEN: Final = object()


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address.teredo is not None:
        return "Teredo", address.teredo[1]
    if address in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _COMPATIBLE and int(address) > 1:
        return "IPv4-compatible", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _classify_v4(address: ipaddress.IPv4Address) -> str | None:
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address == _BROADCAST:
        return "broadcast"
    if address.is_link_local:
        return "link-local"
    if address in _CGNAT:
        return "CGNAT (shared address space)"
    if address in _BENCHMARK:
        return "benchmarking"
    if any(address in net for net in _DOCUMENTATION_V4):
        return "documentation"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    if address.is_reserved:
        return "reserved"
    if not address.is_global:
        return "not globally routable"
    return None


def classify_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``address`` is refused (``"loopback"``, ``"private"`` …).

    ``None`` when it is a public address a request may go to.
    """
    if isinstance(address, ipaddress.IPv4Address):
        return _classify_v4(address)
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        form, inner = embedded
        reason = _classify_v4(inner)
        if reason is not None:
            return f"{form} form of a {reason} IPv4 address ({inner})"
    if address in _NAT64_LOCAL:
        return "local-use NAT64"
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_site_local:
        return "site-local"
    if address.is_private:
        return "private"
    if address.is_reserved and embedded is None:
        return "reserved"
    if not address.is_global:
        return "not globally routable"
    return None


def parse_ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a URL host denotes when it is an IP literal in any spelling, else ``None``.

    IPv4's legacy forms (one to four parts, each decimal, octal with a leading ``0`` or hex with
    ``0x``) are read the way ``inet_aton`` — and so the network stack — reads them.
    """
    text = host.strip("[]")
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text.split("%", 1)[0])
        except ValueError:
            return None
    if _IPV4_SPELLING.match(text):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


async def _default_resolver(host: str) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def check_url(
    url: str,
    *,
    resolver: Resolver | None = None,
    allowance: LoopbackAllowance | None = None,
) -> EgressDecision:
    """Decide whether ``url`` may be requested (S06); a policy outcome is never raised.

    Args:
        url: The absolute URL.
        resolver: Resolves host names (default: the system resolver via ``getaddrinfo``).
        allowance: Test-only loopback allowance (see :class:`LoopbackAllowance`).

    Returns:
        :class:`Allowed` with the validated addresses, or :class:`Rejected` with the reason.
    """
    candidate: object = url  # model output can be anything
    if not isinstance(candidate, str) or not url.strip():
        return Rejected(str(url), "not a URL")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        return Rejected(url, f"malformed URL ({exc})")
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        return Rejected(url, f"scheme {scheme or '(none)'!r} is not allowed; only http and https")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        return Rejected(url, "the URL has no host")
    if port is None:
        port = 443 if scheme == "https" else 80
    literal = parse_ip_literal(host)
    if literal is not None:
        reason = classify_address(literal)
        if reason is not None:
            return Rejected(url, f"{literal} is a {reason} address")
        return Allowed(url, host, port, (str(literal),))
    if host in BLOCKED_HOSTNAMES or host.endswith(_BLOCKED_SUFFIXES):
        return Rejected(url, f"host {host!r} is on the blocklist")
    try:
        answers = await (resolver or _default_resolver)(host)
    except (OSError, UnicodeError) as exc:
        return Rejected(url, f"host {host!r} did not resolve ({exc})")
    if not answers:
        return Rejected(url, f"host {host!r} did not resolve")
    validated: list[str] = []
    for answer in answers:
        try:
            address = ipaddress.ip_address(answer.split("%", 1)[0])
        except ValueError:
            return Rejected(url, f"host {host!r} resolved to something that is not an address")
        reason = classify_address(address)
        if reason is not None and not (allowance is not None and allowance.admits(host, address)):
            # S06: refused if ANY answer is refused — a mixed answer is a rebinding vector.
            return Rejected(url, f"host {host!r} resolves to {address}, a {reason} address")
        validated.append(str(address))
    return Allowed(url, host, port, tuple(validated))
