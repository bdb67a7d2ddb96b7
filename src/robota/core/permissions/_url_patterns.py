"""URL patterns (S12, S06): a URL and a pattern read with the egress policy's own reading.

A rule is only as good as its reading of the URL: if it reads ``ｅｘａｍｐｌｅ。com`` as some other
host while the client that fetches maps it to ``example.com``, a deny on ``example.com`` is
passed. So a value is read by :func:`robota.core.urls.read_url` — the strict split, UTS #46 host
normalisation, IPv4 in every WHATWG spelling, the WHATWG path — exactly as
:func:`robota.host.check_url` reads it before it connects, and the pattern's scheme, host, port
and path are read by the same code.

Pattern forms:

* ``domain:HOST`` — that host and every name under it; an address names only itself.
* ``HOST``, ``HOST:PORT``, ``HOST/path/**`` — any scheme.
* ``SCHEME://HOST[:PORT][/path]`` — the scheme may be a glob (``*://…``).

``HOST`` is a name in any spelling (``bücher.example`` and ``xn--bcher-kva.example`` are one
host), an IPv4 address in any spelling, or a bracketed IPv6 address; a label holding ``*`` is a
glob over one label (``**`` over several), matched against the normalised text. What a glob
names is :func:`robota.core.urls.host_glob_kind`'s answer: a host that is only ``*`` is every
host, IP literals included (``http://*`` is every http URL); a glob whose written labels are
numbers (``192.168.*.*``, ``10.**``) names IPv4 addresses only, by their dotted-decimal text,
never a name such as ``192.168.evil.com``; any other glob names host names, ``*`` standing
for one label (``*.example.com`` is not ``a.b.example.com``).

Addresses compare by value, and an IPv4-mapped IPv6 address (``::ffff:0:0/96``) *is* its IPv4
address. In the deny direction an IPv6 address also counts as every IPv4 address it carries —
NAT64 (``64:ff9b::/96`` and the local-use ``/48``), IPv4-compatible, 6to4, Teredo server and
client — read from :data:`robota.core.urls.IPV4_EMBEDDINGS`, the table the egress policy judges
such an address by, so a deny on ``93.184.216.34`` also covers ``[2002:5db8:d822::1]``.

A pattern with a port matches that effective port (a URL without one has its scheme's default);
a pattern without one matches every port (``:*`` says so explicitly). A path in the pattern is a
path-segment glob (see :mod:`._globs`); without a glob it covers that path and everything under
it. A pattern does not name a query or fragment, and never matches on them.

Paths are compared in every reading :func:`robota.core.urls.path_readings` models — the WHATWG
one (dot segments resolved, ``%2e`` spellings included; percent-encoded unreserved characters
decoded, so ``/%61dmin`` is ``/admin`` for an allow and a deny alike) and those of servers that
decode ``%2F``/``%5C``, merge slashes, drop ``;`` parameters or ignore case — both of the path as
written and of the WHATWG path :class:`robota.host.EgressClient` sends in its place
(:func:`robota.core.urls.normalise_target`), since a server reads whichever it is given. When
the readings disagree about a rule, the rule is ``"unevaluable"``: a deny or ask asks, an allow
does not apply.

``"unevaluable"`` also for a value the reading refuses (not a string, not http(s), controls,
whitespace, backslashes, credentials, a bad port, a host that cannot be normalised) and for a
pattern it cannot read (the same faults, a glob in ``domain:``, a query or fragment, a
percent-encoded glob character).
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
from dataclasses import dataclass
from typing import Final

from robota.core.permissions._globs import (
    GLOB_CHARS,
    Direction,
    MatchResult,
    segments_cover,
    segments_match,
)
from robota.core.urls import (
    Host,
    URLError,
    embedded_ipv4,
    format_address,
    host_glob_kind,
    mapped_ipv4,
    normalise_host,
    normalise_host_pattern,
    parse_port,
    path_readings,
    read_url,
    split_authority,
    unsafe_character,
)

__all__ = ["match_url", "split_url"]

_PATTERN_SCHEME: Final = re.compile(r"([A-Za-z0-9+.\-*?]*)://", re.ASCII)
_SCHEME_GLOB: Final = re.compile(r"[A-Za-z*?][A-Za-z0-9+.\-*?]*", re.ASCII)
_ENCODED_GLOB: Final = re.compile(r"%(?:2a|3f|5b|5d)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Pattern:
    scheme: str | None  # a glob over the scheme; None: any
    host: Host | tuple[str, ...]  # a normalised host, or labels where "*" labels are globs
    port: int | None  # None: any
    paths: tuple[str, ...] | None  # the path's readings; None: any path
    subdomains: bool  # domain:HOST


def split_url(value: str) -> tuple[str, str, str] | None:
    """``(scheme, host, path)`` of ``value`` as :func:`robota.core.urls.read_url` reads it.

    The host is normalised (an IPv6 address in brackets), the path is the WHATWG path in RFC 3986
    normal form. ``None`` when the reading refuses ``value``.
    """
    candidate: object = value  # model output can be anything
    if not isinstance(candidate, str):
        return None
    try:
        url = read_url(value)
    except ValueError:
        return None
    return url.scheme, _shown(url.host), url.path


def _shown(host: Host) -> str:
    return f"[{host.text}]" if ":" in host.text else host.text


def _read_pattern(pattern: str) -> _Pattern:
    """The pattern read by the URL reading's own code; a ``ValueError`` when it cannot be."""
    text = pattern.strip()
    if text.startswith("domain:"):
        text = "domain:" + text[len("domain:") :].lstrip()  # `domain: example.com` reads as meant
    if not text:
        raise URLError("an empty URL pattern")
    char = unsafe_character(text)
    if char is not None:
        raise URLError(f"the pattern contains {char!r} (control, whitespace or backslash)")
    if text.startswith("domain:"):
        domain, extra = split_authority(text[len("domain:") :])
        if extra is not None or GLOB_CHARS.search(domain.strip("[]")) or set(domain) & set("/#@"):
            raise URLError("domain: names one host, without a glob, port or path")
        return _Pattern(None, normalise_host(domain), None, None, subdomains=True)
    scheme: str | None = None
    rest = text
    match = _PATTERN_SCHEME.match(text)
    if match is not None:
        scheme, rest = match.group(1).lower(), text[match.end() :]
        if not _SCHEME_GLOB.fullmatch(scheme):
            raise URLError(f"the pattern's scheme {scheme!r} is not a scheme")
    if "?" in rest or "#" in rest:
        raise URLError("a URL pattern names no query or fragment")
    slash = rest.find("/")
    authority, path = (rest, None) if slash < 0 else (rest[:slash], rest[slash:])
    if "@" in authority:
        raise URLError("credentials (user@) in a URL pattern are not allowed")
    named, port_text = split_authority(authority)
    if not named:
        raise URLError("the URL pattern has no host")
    port = None if port_text == "*" else parse_port(port_text)
    if path is not None and _ENCODED_GLOB.search(path):
        raise URLError("a percent-encoded glob character in a URL pattern is ambiguous")
    paths = None if path is None else path_readings(path)
    return _Pattern(scheme, normalise_host_pattern(named), port, paths, subdomains=False)


def _unmapped(host: Host) -> Host:
    ipv4 = None if host.address is None else mapped_ipv4(host.address)
    return host if ipv4 is None else Host(format_address(ipv4), ipv4)


def _identities(host: Host, direction: Direction) -> tuple[Host, ...]:
    """The hosts a connection to ``host`` reaches, for matching in ``direction``."""
    seen = _unmapped(host)
    if direction == "allow" or seen.address is None:
        return (seen,)
    # S06/S12: a translator, tunnel or relay connects to the IPv4 address the IPv6 address
    # carries; the positions are the egress classifier's own table.
    carried = [
        Host(format_address(inner.address), inner.address) for inner in embedded_ipv4(seen.address)
    ]
    return (seen, *carried)


def _glob_matches(labels: tuple[str, ...], host: Host) -> bool:
    kind = host_glob_kind(labels)
    if kind == "any":
        return True
    if isinstance(host.address, ipaddress.IPv6Address):
        return False  # S12: an IPv6 address is not labels; only "*" names it
    if kind == "address" and not isinstance(host.address, ipaddress.IPv4Address):
        return False  # S12: 192.168.*.* is never the name 192.168.evil.com
    return segments_match(labels, host.text.split("."))


def _host_matches(pattern: _Pattern, host: Host, direction: Direction) -> bool:
    wanted = pattern.host
    for seen in _identities(host, direction):
        if isinstance(wanted, tuple):
            if _glob_matches(wanted, seen):
                return True
        elif wanted.address is not None:
            if seen.address == _unmapped(wanted).address:
                return True
        elif seen.address is None and (
            seen.text == wanted.text
            or (pattern.subdomains and seen.text.endswith("." + wanted.text))
        ):
            return True
    return False


def match_url(pattern: str, value: object, *, direction: Direction = "deny") -> MatchResult:
    """URL ``pattern`` (see the module docstring) against ``value``.

    ``direction`` is the rule's: ``"deny"`` (deny and ask rules) also sees every IPv4 address an
    IPv6 address carries (NAT64, 6to4, Teredo …); ``"allow"`` does not, so an allow never grants
    more than it names.
    """
    try:
        read = _read_pattern(pattern)
    except ValueError:
        return "unevaluable"
    if not isinstance(value, str):
        return "unevaluable"
    try:
        url = read_url(value)
    except ValueError:
        return "unevaluable"
    if read.scheme is not None and not fnmatch.fnmatchcase(url.scheme, read.scheme):
        return "no_match"
    if not _host_matches(read, url.host, direction):
        return "no_match"
    if read.port is not None and url.port != read.port:
        return "no_match"
    if read.paths is None:
        return "match"
    # S06/S12: a server reads whichever path it is given — as written by a client that sends it
    # so, or in its WHATWG reading, which EgressClient sends (normalise_target) — so both are
    # read the ways servers read a path.
    written = path_readings(url.target.split("?", 1)[0])
    sent = path_readings(url.path)
    pairs = {pair for seen in (written, sent) for pair in zip(read.paths, seen, strict=True)}
    results = {segments_cover(p, v) for p, v in pairs}  # readings mostly agree: match each once
    # S12: readings that disagree leave the decision to a person (deny/ask) or to no allow.
    return results.pop() if len(results) == 1 else "unevaluable"
