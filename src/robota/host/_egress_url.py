r"""A strict reading of an http(s) URL, refusing anything two parsers could read differently (S06).

``urllib.parse`` and WHATWG parsers (browsers, ada, and what urllib3 and most HTTP stacks
follow) disagree on some inputs about where the host is: ``http://127.0.0.1:80\@evil.com/`` is
``evil.com`` to ``urllib.parse`` and ``127.0.0.1`` to WHATWG, which reads ``\`` as ``/``. A
policy that checks one reading while a client connects to the other is bypassed. So this parser
accepts only URLs whose reading is the same under both, and refuses the rest outright:

* a control character (C0, C1, DEL), whitespace or ``\`` anywhere, leading and trailing
  whitespace included (WHATWG strips and deletes some of these, urllib others: a caller that
  wants a model's ``"https://example.com/\n"`` accepted strips it first);
* anything but ``scheme://authority``: ``http:host`` and ``http:/host`` (a host to WHATWG, none to
  urllib) and ``http:///host`` (an empty host);
* credentials: any ``@`` in the authority (``user@``, ``a@b@c``, ``:80\@``);
* a port that is empty, not ASCII digits, or outside 1–65535; a second ``:`` outside brackets;
* a bracketed host that is not a bare IPv6 address (zone identifiers, IPvFuture).

The host itself is normalised and checked by :mod:`robota.host._egress_host` (which refuses
``%``-encoded hosts). As a last guard the result is compared with ``urllib.parse``'s reading of the
same text, and any difference is refused. The request is then built from these components —
scheme, normalised host, port and target — never from the raw string.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal, final
from urllib.parse import quote, urlsplit

__all__ = ["DEFAULT_PORTS", "SplitURL", "URLError", "split_url", "unsafe_character"]

DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:", re.ASCII)
_PORT: Final = re.compile(r"[0-9]{1,5}", re.ASCII)
# Everything printable in ASCII is kept as written in the target; the rest is UTF-8 escaped.
_TARGET_SAFE: Final = "".join(chr(c) for c in range(0x21, 0x7F))


class URLError(ValueError):
    """The URL is refused by the strict reading; the message says why."""


@final
@dataclass(frozen=True, slots=True)
class SplitURL:
    """The components of a URL the strict reading accepted.

    Attributes:
        scheme: ``http`` or ``https``.
        host: The host as written (brackets kept for IPv6); not yet normalised.
        port: The port, or ``None`` when the URL gives none.
        target: Path and query (``/`` when empty), non-ASCII escaped; the fragment is dropped.
    """

    scheme: Literal["http", "https"]
    host: str
    port: int | None
    target: str


def unsafe_character(text: str) -> str | None:
    """The first control character, whitespace, surrogate or backslash in ``text``, if any."""
    for char in text:
        if char == "\\" or char.isspace() or unicodedata.category(char) in ("Cc", "Cs"):
            return char
    return None


def _split_authority(authority: str) -> tuple[str, str | None]:
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise URLError("malformed URL: an unclosed '[' in the host")
        host, rest = authority[: end + 1], authority[end + 1 :]
        if rest and not rest.startswith(":"):
            raise URLError("malformed URL: text after the IPv6 address")
        return host, (rest[1:] if rest else None)
    if "[" in authority or "]" in authority:
        raise URLError("malformed URL: '[' or ']' outside an IPv6 address")
    if authority.count(":") > 1:
        raise URLError("malformed URL: more than one ':' in the authority")
    host, colon, port = authority.partition(":")
    return host, (port if colon else None)


def _port(text: str | None) -> int | None:
    if text is None:
        return None
    if not _PORT.fullmatch(text) or not 1 <= int(text) <= 65535:
        raise URLError(f"malformed URL: the port {text!r} is not a number from 1 to 65535")
    return int(text)


def _cross_check(text: str, host: str, port: int | None) -> None:
    # S06: the last guard against a differential — urllib must read the same host and port.
    try:
        parts = urlsplit(text)
        theirs = (parts.hostname or "", parts.port)
    except ValueError as exc:
        raise URLError(f"ambiguous URL: urllib.parse cannot read it ({exc})") from exc
    ours = (host.strip("[]").lower(), port)
    if theirs != ours:
        raise URLError(f"ambiguous URL: urllib.parse reads the host and port as {theirs!r}")


def split_url(url: str) -> SplitURL:
    """The strict reading of ``url`` (see the module docstring), or :class:`URLError`."""
    if not url.strip():
        raise URLError("not a URL")
    char = unsafe_character(url)
    if char is not None:
        raise URLError(f"malformed URL: it contains {char!r} (control, whitespace or backslash)")
    match = _SCHEME.match(url)
    if match is None:
        raise URLError("not a URL: it has no scheme")
    scheme = match.group()[:-1].lower()
    if scheme not in DEFAULT_PORTS:
        raise URLError(f"scheme {scheme!r} is not allowed; only http and https")
    rest = url[match.end() :]
    if not rest.startswith("//"):
        raise URLError("malformed URL: an http(s) URL must be scheme://host")
    end = len(rest)
    for delimiter in "/?#":
        found = rest.find(delimiter, 2)
        if found >= 0:
            end = min(end, found)
    authority, remainder = rest[2:end], rest[end:]
    if "@" in authority:
        raise URLError("credentials (user@) in a URL are not allowed")
    host, port_text = _split_authority(authority)
    if not host:
        raise URLError("the URL has no host")
    port = _port(port_text)
    _cross_check(url, host, port)
    target = remainder.split("#", 1)[0]
    if not target.startswith("/"):
        target = "/" + target
    return SplitURL(
        "http" if scheme == "http" else "https",
        host,
        port,
        quote(target, safe=_TARGET_SAFE),
    )
