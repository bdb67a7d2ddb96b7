r"""The strict split of an http(s) URL, refusing anything two parsers could read differently (S06).

``urllib.parse`` and WHATWG parsers (browsers, ada, and what urllib3 and most HTTP stacks
follow) disagree on some inputs about where the host is: ``http://127.0.0.1:80\@evil.com/`` is
``evil.com`` to ``urllib.parse`` and ``127.0.0.1`` to WHATWG, which reads ``\`` as ``/``. A check
that reads one while a client connects to the other is bypassed. So this split accepts only URLs
whose reading is the same under both, and refuses the rest outright:

* a control character (C0, C1, DEL), whitespace or ``\`` anywhere, leading and trailing
  whitespace included (WHATWG strips and deletes some of these, urllib others: a caller that
  wants a model's ``"https://example.com/\n"`` accepted strips it first);
* anything but ``scheme://authority``: ``http:host`` and ``http:/host`` (a host to WHATWG, none to
  urllib) and ``http:///host`` (an empty host);
* credentials: any ``@`` in the authority (``user@``, ``a@b@c``, ``:80\@``);
* a port that is empty, not ASCII digits, or outside 1–65535; a second ``:`` outside brackets;
* a bracketed host that is not closed, or text after it that is not a port.

The host is returned as written; :func:`robota.core.urls.normalise_host` reads it (and refuses
``%``-encoded hosts, zone identifiers and IPvFuture). Core imports no networking module, so the
split is written out here; :mod:`robota.host` adds a comparison with ``urllib.parse`` as a last
guard before it connects.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal, final

__all__ = [
    "DEFAULT_PORTS",
    "SplitURL",
    "URLError",
    "escape_target",
    "parse_port",
    "split_authority",
    "split_url",
    "unsafe_character",
]

DEFAULT_PORTS: Final = {"http": 80, "https": 443}
"""The port each accepted scheme means when a URL names none."""

_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:", re.ASCII)
_PORT: Final = re.compile(r"[0-9]{1,5}", re.ASCII)


class URLError(ValueError):
    """The URL is refused by the strict reading; the message says why."""


@final
@dataclass(frozen=True, slots=True)
class SplitURL:
    """The components of a URL the strict split accepted.

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


def escape_target(text: str) -> str:
    """``text`` with every character outside printable ASCII UTF-8 percent-encoded (``%XX``).

    What is printable ASCII is kept as written, ``%`` included: an escape already in the URL is
    not escaped again. ``text`` must not hold a surrogate (:func:`unsafe_character` finds them).
    """
    if all(0x21 <= ord(char) < 0x7F for char in text):
        return text
    return "".join(
        char
        if 0x21 <= ord(char) < 0x7F
        else "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
        for char in text
    )


def split_authority(authority: str) -> tuple[str, str | None]:
    """``(host, port text)`` of an authority without credentials; :class:`URLError` if malformed.

    The port text is ``None`` when there is no ``:``; a bracketed host keeps its brackets.
    """
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


def parse_port(text: str | None) -> int | None:
    """The port ``text`` names (ASCII digits, 1–65535), ``None`` for none, or :class:`URLError`."""
    if text is None:
        return None
    if not _PORT.fullmatch(text) or not 1 <= int(text) <= 65535:
        raise URLError(f"malformed URL: the port {text!r} is not a number from 1 to 65535")
    return int(text)


def split_url(url: str) -> SplitURL:
    """The strict split of ``url`` (see the module docstring), or :class:`URLError`."""
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
    host, port_text = split_authority(authority)
    if not host:
        raise URLError("the URL has no host")
    port = parse_port(port_text)
    target = remainder.split("#", 1)[0]
    if not target.startswith("/"):
        target = "/" + target
    return SplitURL("http" if scheme == "http" else "https", host, port, escape_target(target))
