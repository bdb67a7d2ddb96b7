"""The egress policy (S06): may this process send a request to that URL?

The one outbound boundary for every caller- or model-supplied URL. :func:`check_url` returns a
discriminated result — :class:`Allowed` with the validated addresses, or :class:`Rejected` with a
reason — and never raises for a policy outcome. One pass, in this order, each step reading the
previous step's output and nothing else:

1. the strict URL reading (:func:`robota.core.urls.split_url`, checked against ``urllib.parse``
   by :mod:`robota.host.egress._url`): ``http``/``https`` only, and nothing ``urllib.parse`` and a
   WHATWG parser could read differently — no backslashes, controls, whitespace, credentials, odd
   ports or malformed authorities;
2. the host normalised once (:func:`robota.core.urls.normalise_host`): UTS #46 mapping, the
   alternative full stops, lower case, no trailing dot, A-labels; a host that ends in a number is
   an IPv4 address in any spelling (``2130706433``, ``0x7f.1``, ``0177.0.0.1``,
   ``１２７.０.０.１``);
3. an IP literal is classified from our own special-purpose table
   (:mod:`robota.host.egress._table`, :func:`classify_address`) — loopback, private, link-local,
   CGNAT, multicast, reserved, unspecified, broadcast, documentation, benchmarking, every IANA
   special-purpose block, everything outside IPv6 global unicast — for IPv4, IPv6, and every
   IPv4 address embedded in IPv6 (mapped, compatible, NAT64, 6to4, Teredo), whichever spelling
   the URL used;
4. a name is refused if it is on the blocklist (cloud metadata names included) or under a
   blocked suffix, and otherwise resolved: it is refused if *any* answer is refused, or if it
   does not resolve.

:class:`Allowed` carries the normalised components — scheme, host, port, target — that
:class:`~robota.host.EgressClient` builds its request from, so the URL that was checked is the URL
that is connected to, and the path on the request line is the WHATWG path the checks judged
(:func:`robota.core.urls.normalise_target`), never the path as written. Steps 1 and 2 are
:func:`robota.core.urls.read_split`, the reading the permission rules (S12) make of the same
URL, so a rule and the policy never see two hosts.

The resolver is injectable (an async ``(host) -> list[str]``; it is given the normalised A-label
host) so tests run offline. Loopback test servers need a :class:`LoopbackAllowance` naming the
hosts that may resolve to loopback; it is created only by :func:`robota.testing.loopback_allowance`,
so production code cannot turn it on by accident, and it never admits a literal address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, final

from robota.core.urls import (
    HostError,
    URLError,
    format_address,
    normalise_host,
    normalise_target,
    read_split,
)
from robota.host.egress._address import classify_address, is_loopback
from robota.host.egress._table import metadata_service, most_specific
from robota.host.egress._url import DEFAULT_PORTS, split_url

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
        "metadata.platformequinix.com",  # Equinix Metal's metadata service, at a public address
        "kubernetes.default",
        "kubernetes.default.svc",
    }
)
"""Host names refused whatever they resolve to (loopback aliases and cloud metadata services)."""

_BLOCKED_SUFFIXES: Final = (".localhost", ".local", ".internal", ".kubernetes.default.svc")


@final
@dataclass(frozen=True, slots=True)
class Allowed:
    """The URL may be requested — at exactly these components.

    Attributes:
        url: The URL as given.
        host: Its normalised host: the A-label name, the dotted IPv4 address, or the IPv6 address
            (RFC 5952, no brackets) — whatever spelling the URL used.
        port: The port the request goes to.
        addresses: The validated addresses: the only ones a pinned transport may connect to.
        scheme: ``http`` or ``https``.
        target: The request target to send: the path in its WHATWG reading — dot segments,
            ``%2e`` spellings included, resolved; the path the permission rules judge — and the
            query (:func:`robota.core.urls.normalise_target`; the fragment is never sent).

    ``scheme`` and ``target`` are filled from ``url`` by the same strict reading
    :func:`check_url` uses when an :class:`Allowed` is built without them (a ``ValueError`` if
    ``url`` does not pass it).
    """

    url: str
    host: str
    port: int
    addresses: tuple[str, ...]
    scheme: str = field(default="", kw_only=True)
    target: str = field(default="", kw_only=True)

    def __post_init__(self) -> None:
        if not (self.scheme and self.target):
            parts = split_url(self.url)
            object.__setattr__(self, "scheme", self.scheme or parts.scheme)
            object.__setattr__(self, "target", self.target or normalise_target(parts.target))

    @property
    def ok(self) -> Literal[True]:
        """Always ``True``."""
        return True

    @property
    def request_url(self) -> str:
        """The checked URL rebuilt from the components: what a request must go to."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if DEFAULT_PORTS.get(self.scheme) == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.target}"


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

    Create it with :func:`robota.testing.loopback_allowance`. Only names listed here (compared in
    their normalised form) are admitted, only to 127.0.0.0/8 or ``::1``, and never as a literal
    address in a URL.
    """

    __slots__ = ("_hosts",)

    def __init__(self, hosts: Iterable[str], *, _token: object = None) -> None:
        if _token is not _TEST_TOKEN:
            raise TypeError(
                "a LoopbackAllowance is made only by robota.testing.loopback_allowance()"
            )
        normalised = set()
        for host in hosts:
            try:
                normalised.add(normalise_host(host).text)
            except HostError as exc:
                raise ValueError(
                    f"loopback_allowance: {host!r} is not a host name ({exc})"
                ) from exc
        self._hosts = frozenset(normalised)

    def admits(self, host: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        """Whether ``address`` is loopback and ``host`` (normalised) is one of the allowed names."""
        # S06: loopback by our own table, like every other verdict (never ``ipaddress``'s flags).
        return host in self._hosts and is_loopback(address)

    def __repr__(self) -> str:
        return f"LoopbackAllowance({sorted(self._hosts)!r})"


_TEST_TOKEN: Final = object()


def parse_ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a URL host denotes when it is an IP literal in any spelling, else ``None``.

    The host is normalised first, as :func:`check_url` does, so IPv4's legacy forms (one to four
    parts, each decimal, octal with a leading ``0`` or hex with ``0x``) and their fullwidth
    spellings are read the way a WHATWG parser and ``inet_aton`` read them. An IPv6 address may
    be given with or without brackets; a zone identifier is dropped (the address is still what a
    socket would reach). ``None`` also for a host that ends in a number without being an IPv4
    address — :func:`check_url` refuses those rather than resolving them.
    """
    text = host
    if ":" in text and not text.startswith("["):
        text = f"[{text}]"
    if text.startswith("[") and "%" in text:
        text = text.split("%", 1)[0] + "]"
    try:
        return normalise_host(text).address
    except HostError:
        return None


async def _default_resolver(host: str) -> list[str]:
    # The host is already an ASCII A-label: no codec of getaddrinfo's gets to re-encode it.
    infos = await asyncio.get_running_loop().getaddrinfo(
        host.encode("ascii"), None, type=socket.SOCK_STREAM
    )
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _answer(text: object) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not isinstance(text, str):  # a resolver is user code: check, do not trust the annotation
        return None
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


# Kinds of refused address an explicit private-network allowance admits (S06): a server on the
# caller's own network. Never link-local (169.254.0.0/16 and fe80::/10 hold the metadata
# services) and never a cloud metadata endpoint (``_egress_table.METADATA_ENDPOINTS``),
# whatever its row.
_PRIVATE_KINDS: Final = frozenset({"private", "loopback", "CGNAT shared", "unique-local (private)"})


def _private_admits(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether an explicit private-network allowance admits ``address`` (never metadata)."""
    version: Literal[4, 6] = 4 if isinstance(address, ipaddress.IPv4Address) else 6
    if metadata_service(version, int(address)) is not None:
        return False
    block = most_specific(version, int(address))
    return block is not None and block.kind in _PRIVATE_KINDS


async def check_url(
    url: str,
    *,
    resolver: Resolver | None = None,
    allowance: LoopbackAllowance | None = None,
    private_network: bool = False,
) -> EgressDecision:
    """Decide whether ``url`` may be requested (S06); a policy outcome is never raised.

    Args:
        url: The absolute URL.
        resolver: Resolves host names (default: the system resolver via ``getaddrinfo``). It is
            given the normalised A-label host.
        allowance: Test-only loopback allowance (see :class:`LoopbackAllowance`).
        private_network: An explicit allowance for one trusted destination on the caller's own
            network: private, loopback, shared (CGNAT) and unique-local addresses are admitted,
            literal or resolved. Link-local addresses, the cloud metadata addresses and the
            blocklisted names stay refused.

    Returns:
        :class:`Allowed` with the normalised components and the validated addresses, or
        :class:`Rejected` with the reason.
    """
    candidate: object = url  # model output can be anything
    if not isinstance(candidate, str):
        return Rejected(str(url), "not a URL")
    try:
        reading = read_split(split_url(url))
    except (URLError, HostError) as exc:
        return Rejected(url, str(exc))
    host, port = reading.host, reading.port

    def allowed(addresses: tuple[str, ...]) -> Allowed:
        # S06/S12: the target sent is the path the checks judged, never the path as written.
        return Allowed(
            url, host.text, port, addresses, scheme=reading.scheme, target=reading.request_target
        )

    if host.address is not None:
        reason = classify_address(host.address)
        if reason is not None and not (private_network and _private_admits(host.address)):
            return Rejected(url, f"refused address: {reason}")
        return allowed((host.text,))
    name = host.text
    if name in BLOCKED_HOSTNAMES or name.endswith(_BLOCKED_SUFFIXES):
        return Rejected(url, f"host {name!r} is on the blocklist")
    try:
        answers = await (resolver or _default_resolver)(name)
    except (OSError, UnicodeError) as exc:
        return Rejected(url, f"host {name!r} did not resolve ({exc})")
    except Exception as exc:  # noqa: BLE001 - S06: an injected resolver's failure is a refusal
        return Rejected(url, f"host {name!r}: the resolver failed ({type(exc).__name__}: {exc})")
    returned: object = answers  # a resolver is user code: check, do not trust the annotation
    if not isinstance(returned, (list, tuple)):
        return Rejected(url, f"host {name!r}: the resolver returned {type(returned).__name__}")
    if not answers:
        return Rejected(url, f"host {name!r} did not resolve")
    validated: list[str] = []
    for answer in answers:
        address = _answer(answer)
        if address is None:
            return Rejected(url, f"host {name!r} resolved to something that is not an address")
        reason = classify_address(address)
        admitted = (allowance is not None and allowance.admits(name, address)) or (
            private_network and _private_admits(address)
        )
        if reason is not None and not admitted:
            # S06: refused if ANY answer is refused — a mixed answer is a rebinding vector.
            return Rejected(url, f"host {name!r} resolves to a refused address: {reason}")
        validated.append(format_address(address))
    return allowed(tuple(validated))
