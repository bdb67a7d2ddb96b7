"""One normal form for a URL's host, the one the resolver and the connection will see (S06).

:func:`normalise_host` is applied exactly once, before anything looks at a host: the egress
policy's blocklist, suffix rules, IP-literal check and resolver all read its result, and so do the
pinned connection and the permission rules (S12), so there is no second spelling for a bypass to
hide in. It follows what a WHATWG URL parser (a browser, and the parsers HTTP clients converge on)
does with a host:

1. UTS #46 mapping, non-transitional (``idna.uts46_remap``): case folding, width and compatibility
   forms (``ｌｏｃａｌｈｏｓｔ`` and ``ⓛⓞⓒⓐⓛⓗⓞⓢⓣ`` are ``localhost``), ignored code points (soft
   hyphen, zero-width space) dropped, and the alternative full stops U+3002, U+FF0E and U+FF61
   mapped to ``.``;
2. one trailing dot removed (``example.com.`` is ``example.com``);
3. every label checked: an ASCII label is letters, digits, ``-`` and ``_``, an ``xn--`` label must
   be a valid A-label (IDNA 2008, canonical), any other label is converted to its A-label by
   IDNA 2008 — stricter than the WHATWG host parser in places (symbols and emoji are refused,
   which costs a caller a rare host name, never a bypass);
4. a code point the interpreter's Unicode database does not assign is refused: ``idna``'s tables
   follow a newer Unicode than most WHATWG parsers (and browsers' ICU) do, and a character only
   one side knows is read by the other as invalid; so a newer Python may admit a rare new
   character an older one refuses, but the normal form of a host both admit is the same;
5. a host whose last label is a number (digits, or ``0x`` and hex digits) is an IPv4 address
   in WHATWG's reading — decimal, octal, hex, one to four parts, so ``０ｘ７ｆ．１`` is
   ``127.0.0.1`` — and is parsed as one here too, never handed to a resolver (``getaddrinfo``
   would read ``127.1`` the same way); one that does not parse is refused.

Anything that cannot be normalised raises :class:`HostError` with the reason.

:func:`normalise_host_pattern` reads the host of a permission pattern with the same steps, except
that a label holding ``*`` stays a glob; :func:`host_glob_kind` says what such a glob names:

* a host that is only ``*`` (or ``**``) names every host — names, IPv4 and IPv6 addresses;
* an *address glob* — at least one label written out, every written label a number — names IPv4
  addresses only, matched label by label against the dotted-decimal text, so ``192.168.*.*``
  is never ``192.168.evil.com``. It is written in plain decimal with four labels (or fewer
  with a ``**``): any other spelling could never match the dotted-decimal text, and a rule
  that silently never matches would let a deny fail open, so it is refused;
* any other glob is matched against a host's labels (``*`` is one label, so ``*.example.com``
  is not ``a.b.example.com``; ``**`` is any number of them): a name's, or the dotted-decimal
  text of an IPv4 address (which only a glob with no label written out, ``*.*.*.*``, can
  match), never an IPv6 address.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

import idna

from robota.core.urls._address import IPAddress, format_address

__all__ = [
    "Host",
    "HostError",
    "HostGlobKind",
    "host_glob_kind",
    "normalise_host",
    "normalise_host_pattern",
    "parse_ipv4",
]

HostGlobKind: TypeAlias = Literal["any", "address", "name"]
"""What a host glob names: every host, IPv4 addresses only, or host names (module docstring)."""

_ASCII_LABEL: Final = re.compile(r"[a-z0-9_-]+", re.ASCII)
_GLOB_LABEL: Final = re.compile(r"[a-z0-9_*-]*\*[a-z0-9_*-]*", re.ASCII)
_ADDRESS_GLOB_LABEL: Final = re.compile(r"[0-9*]+", re.ASCII)
_RAW_ASCII_OK: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"
)
_IPV6_CHARS: Final = frozenset("0123456789abcdefABCDEF:.")
_NUMERIC_LABEL: Final = re.compile(r"[0-9]+|0x[0-9a-f]*", re.ASCII)
_OCTET: Final = re.compile(r"0|[1-9][0-9]{0,2}", re.ASCII)
_RADIX_DIGITS: Final = {10: "0123456789", 8: "01234567", 16: "0123456789abcdefABCDEF"}
_MAX_NAME: Final = 253
_MAX_LABEL: Final = 63


class HostError(ValueError):
    """The host cannot be normalised; the message says why."""


@final
@dataclass(frozen=True, slots=True)
class Host:
    """A normalised host.

    Attributes:
        text: The A-label host name, dotted IPv4 address, or IPv6 address (RFC 5952, no
            brackets) — the form the resolver, the ``Host`` header, TLS, the pins and the
            permission rules all use.
        address: The address when the host is an IP literal, else ``None``.
    """

    text: str
    address: IPAddress | None


def _ipv4_number(part: str) -> int | None:
    # WHATWG "IPv4 number parser": 0x/0X prefix is hex, a leading 0 is octal, "" after a prefix
    # is 0.
    radix, digits = 10, part
    if part[:2] in ("0x", "0X"):
        radix, digits = 16, part[2:]
    elif len(part) > 1 and part[0] == "0":
        radix, digits = 8, part[1:]
    if not digits:
        return 0
    if any(c not in _RADIX_DIGITS[radix] for c in digits):  # int() would accept "_" and spaces
        return None
    return int(digits, radix)


def parse_ipv4(text: str) -> int | None:
    """The WHATWG IPv4 parser over ASCII ``text``: the address as an integer, or ``None``."""
    parts = text.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if len(parts) > 4 or any(not part or len(part) > 64 for part in parts):
        return None
    numbers = [_ipv4_number(part) for part in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1]
    for i, n in enumerate(values[:-1]):
        address += n << (8 * (3 - i))
    return address


def _ipv6_literal(inner: str) -> Host:
    if "%" in inner:
        raise HostError("an IPv6 zone identifier is not allowed in a URL")
    if not inner or any(c not in _IPV6_CHARS for c in inner):
        raise HostError(f"[{inner}] is not an IPv6 address")
    try:
        address = ipaddress.IPv6Address(inner)
    except ValueError as exc:
        raise HostError(f"[{inner}] is not an IPv6 address ({exc})") from exc
    return Host(format_address(address), address)


def _label(label: str) -> str:
    if not label:
        raise HostError("the host has an empty label")
    if label.isascii():
        if label.startswith("xn--"):
            # S06: an A-label must decode, be valid IDNA 2008 and be the canonical encoding.
            idna.ulabel(label)
        elif not _ASCII_LABEL.fullmatch(label):
            raise HostError(f"the host label {label!r} has characters a host name cannot")
        encoded = label
    else:
        encoded = idna.alabel(label).decode("ascii")
    if len(encoded) > _MAX_LABEL:
        raise HostError(f"the host label {encoded!r} is longer than {_MAX_LABEL} characters")
    return encoded


def _unassigned(text: str) -> str | None:
    return next((c for c in text if not c.isascii() and unicodedata.category(c) == "Cn"), None)


def _mapped_labels(raw: str, *, allowed: frozenset[str]) -> list[str]:
    """Steps 1, 2 and 4 of the module docstring: the UTS #46 mapped labels of ``raw``."""
    if not raw:
        raise HostError("the URL has no host")
    bad = next((c for c in raw if c.isascii() and c not in allowed), None)
    if bad is not None:
        # S06: '%' (percent-encoded hosts), '\\', '@', '[' … are never part of a host we pass on.
        raise HostError(f"the host contains {bad!r}")
    mapped = idna.uts46_remap(raw, std3_rules=False)
    new = _unassigned(raw) or _unassigned(mapped)
    if new is not None:
        raise HostError(
            f"the host contains U+{ord(new):04X}, which Unicode"
            f" {unicodedata.unidata_version} (this Python's) does not assign"
        )
    if mapped.endswith("."):
        mapped = mapped[:-1]
    return mapped.split(".")


def _ipv4_host(mapped: str) -> Host:
    value = parse_ipv4(mapped)
    if value is None:
        raise HostError(f"the host {mapped!r} ends in a number but is not an IPv4 address")
    address = ipaddress.IPv4Address(value)
    return Host(format_address(address), address)


def _name(labels: list[str]) -> str:
    name = ".".join(labels)
    if len(name) > _MAX_NAME:
        raise HostError(f"the host name is longer than {_MAX_NAME} characters")
    return name


def normalise_host(raw: str) -> Host:
    """The normal form of a URL host (see the module docstring), or :class:`HostError`.

    ``raw`` is the host as it appears in the URL: an IPv6 literal keeps its brackets.
    """
    if raw.startswith("[") and raw.endswith("]"):
        return _ipv6_literal(raw[1:-1])
    try:
        labels = _mapped_labels(raw, allowed=_RAW_ASCII_OK)
        if _NUMERIC_LABEL.fullmatch(labels[-1]):
            return _ipv4_host(".".join(labels))
        name = _name([_label(label) for label in labels])
    except HostError:
        raise
    except ValueError as exc:  # idna.IDNAError and UnicodeError are ValueErrors
        raise HostError(f"the host {raw!r} is not a valid host name ({exc})") from exc
    return Host(name, None)


def host_glob_kind(labels: Sequence[str]) -> HostGlobKind:
    """What the host glob ``labels`` names (S12): see the module docstring.

    ``"any"`` for a host that is one label of ``*`` only; ``"address"`` when at least one label
    is written out and every written label — or the last one — is a number (decimal, or
    ``0x`` hex, which :func:`normalise_host_pattern` then refuses); ``"name"`` otherwise.
    Misuse: matching a glob's labels against a host's text without asking this first, which
    lets ``192.168.*.*`` match a name and ``http://*`` miss every name with a dot.
    """
    if len(labels) == 1 and set(labels[0]) == {"*"}:
        return "any"
    written = [label for label in labels if "*" not in label]
    if written and (
        all(_NUMERIC_LABEL.fullmatch(label) for label in written)
        or _NUMERIC_LABEL.fullmatch(labels[-1])
    ):
        return "address"
    return "name"


def _address_glob(raw: str, labels: list[str]) -> tuple[str, ...]:
    """The labels of an address glob, refused when it could never match a dotted-decimal text."""
    if len(labels) > 4:
        raise HostError(f"the address glob {raw!r} has more than four parts")
    if len(labels) < 4 and "**" not in labels:
        raise HostError(
            f"the address glob {raw!r} has {len(labels)} parts; an IPv4 address has four"
            " (`**` stands for several)"
        )
    for label in labels:
        plain = _OCTET.fullmatch(label) and int(label) <= 255
        if not (plain or ("*" in label and _ADDRESS_GLOB_LABEL.fullmatch(label))):
            raise HostError(
                f"the address glob {raw!r} must spell each number in plain decimal (0-255)"
                " and glob only digits"
            )
    return tuple(labels)


def normalise_host_pattern(raw: str) -> Host | tuple[str, ...]:
    """The host of a permission pattern (S12), read the way :func:`normalise_host` reads a URL's.

    Without a ``*`` it is exactly :func:`normalise_host`. With one, the text is mapped the same way
    (UTS #46, alternative full stops, one trailing dot) and split into labels: a label holding
    ``*`` stays a glob (ASCII letters, digits, ``-``, ``_`` and ``*`` only), every other label is
    checked and converted like a URL's. The labels are returned for matching against the
    :attr:`Host.text` of a URL, after :func:`host_glob_kind` has said what they may name. An
    address glob is held to the dotted-decimal text it is matched against: four labels (fewer
    only with ``**``), each number plain decimal (``10.*.*.1``, never ``0xa.*.*.1`` or
    ``10.*``), or the pattern would silently never match. :class:`HostError` otherwise.
    """
    if "*" not in raw:
        return normalise_host(raw)
    if raw.startswith("["):
        raise HostError("an IPv6 address in a pattern cannot hold a glob")
    try:
        labels = _mapped_labels(raw, allowed=_RAW_ASCII_OK | {"*"})
        if host_glob_kind(labels) == "address":
            return _address_glob(raw, labels)
        read: list[str] = []
        for label in labels:
            if "*" in label:
                if not _GLOB_LABEL.fullmatch(label):
                    raise HostError(
                        f"the glob label {label!r} may hold only ASCII letters, digits, '-',"
                        " '_' and '*'"
                    )
                read.append(label)
            else:
                read.append(_label(label))
        _name(read)
    except HostError:
        raise
    except ValueError as exc:  # idna.IDNAError and UnicodeError are ValueErrors
        raise HostError(f"the host {raw!r} is not a valid host pattern ({exc})") from exc
    return tuple(read)
