"""A URL's path, read the WHATWG way and the ways origin servers read it (S12, S06).

:func:`normalise_path` is the reading a browser (and ada, and the HTTP stacks that follow the
WHATWG URL Standard) makes of a path, put in the RFC 3986 §6.2.2 normal form:

1. each segment is UTF-8 percent-encoded with the WHATWG path percent-encode set (controls,
   space, ``"``, ``#``, ``<``, ``>``, ``?``, ``^``, `````, ``{``, ``}`` and everything outside
   ASCII), so ``/日本`` and ``/%E6%97%A5%E6%9C%AC`` are one path;
2. dot segments are resolved, their percent-encoded spellings included (``.``, ``%2e``;
   ``..``, ``.%2e``, ``%2e.``, ``%2e%2e``, in either case): ``/a/b/%2E%2e/c`` is ``/a/c``, and
   ``..`` never climbs above ``/``;
3. percent-encoded unreserved characters (letters, digits, ``-``, ``.``, ``_``, ``~``) are
   decoded and the hex digits of the others upper-cased: ``/%61dmin`` *is* ``/admin`` (RFC 3986
   §2.3 calls them equivalent, and servers decode them), and ``/%aA``, ``/%Aa`` and ``/%AA`` are
   one path. S06/S12 want this one form — every escape upper-case — in the path the rules judge
   and the client sends, since a server decodes an escape whatever its case and a rule compared
   against another case would be passed by it. A ``%`` that WHATWG keeps as written (not followed
   by two hex digits) stays a literal ``%``: an escape right after it that decodes to a hex digit
   is only upper-cased, since decoding it would write a new escape (``/%%41a`` would become
   ``/%Aa``, byte 0xAA to a server, and ``/x/%2%65`` the dot segment ``/x/%2e``).

An origin server then reads the path it receives in its own way, and some of those ways are
common enough that a check must expect them. :func:`path_readings` returns the path as each
combination of these four behaviours reads it:

* decoding every ``%XX`` once, ``%2F`` and ``%5C`` becoming separators (and new dot segments
  resolved after that);
* merging runs of ``/`` before resolving dot segments (``/a//../b`` is ``/a/b`` to WHATWG and
  ``/b`` to nginx);
* dropping ``;`` path parameters from each segment (``/a/..;/b`` is ``/b`` to Tomcat);
* comparing letters without case (IIS, and servers on case-insensitive file systems).

Where the readings disagree about a decision, that decision cannot be made from the URL alone.
"""

from __future__ import annotations

import itertools
import re
from typing import Final

__all__ = ["normalise_path", "path_readings"]

_ENCODE: Final = frozenset(' "#<>?^`{}')  # WHATWG path percent-encode set, beyond C0 and non-ASCII
_SINGLE_DOT: Final = frozenset({".", "%2e"})
_DOUBLE_DOT: Final = frozenset({"..", ".%2e", "%2e.", "%2e%2e"})
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX: Final = frozenset("0123456789ABCDEFabcdef")
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_FOLD: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _encode(segment: str) -> str:
    if all(0x20 < ord(c) < 0x7F and c not in _ENCODE for c in segment):
        return segment
    return "".join(
        c
        if 0x20 < ord(c) < 0x7F and c not in _ENCODE
        else "".join(f"%{byte:02X}" for byte in c.encode("utf-8", "surrogatepass"))
        for c in segment
    )


def _resolve(segments: list[str]) -> list[str]:
    # The WHATWG path state: a dot segment is dropped, a double-dot one drops the segment before
    # it, and either as the last segment leaves the path ending in "/".
    resolved: list[str] = []
    last = len(segments) - 1
    for i, segment in enumerate(segments):
        lowered = segment.lower()
        if lowered in _DOUBLE_DOT:
            if resolved:
                resolved.pop()
            if i == last:
                resolved.append("")
        elif lowered in _SINGLE_DOT:
            if i == last:
                resolved.append("")
        else:
            resolved.append(segment)
    return resolved


def _rfc3986(segment: str) -> str:
    def one(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        if char in _UNRESERVED and not (
            char in _HEX and _after_kept_percent(segment, match.start())
        ):
            return char
        return match.group(0).upper()

    return _ESCAPE.sub(one, segment) if "%" in segment else segment


def _after_kept_percent(segment: str, start: int) -> bool:
    # The escape at `start` follows "%" or "%h": that "%" is followed by a "%", so it is no escape
    # and is kept as written — a decoded hex digit here would complete it into one (item 3).
    return segment[start - 1 : start] == "%" or (
        segment[start - 2 : start - 1] == "%" and segment[start - 1 : start] in _HEX
    )


def _segments(path: str) -> list[str]:
    return [_encode(segment) for segment in path.removeprefix("/").split("/")]


def normalise_path(path: str) -> str:
    """The WHATWG reading of ``path`` in RFC 3986 normal form (see the module docstring).

    ``path`` is the path alone, without query or fragment (``/`` is assumed in front when it does
    not start with one). The result always starts with ``/``. A ``%`` not followed by two hex
    digits is kept as written, as WHATWG does.
    """
    return "/" + "/".join(_rfc3986(segment) for segment in _resolve(_segments(path)))


def _reading(segments: list[str], *, decode: bool, merge: bool, parameters: bool) -> str:
    if parameters:
        segments = [segment.split(";", 1)[0] for segment in segments]
    if decode:
        text = "/".join(segments)
        text = _ESCAPE.sub(lambda match: chr(int(match.group(1), 16)), text)
        segments = text.replace("\\", "/").split("/")
    if merge:
        segments = [segment for segment in segments if segment] or [""]
    resolved = _resolve(segments)
    if not decode:
        resolved = [_rfc3986(segment) for segment in resolved]
    return "/" + "/".join(resolved)


def path_readings(path: str) -> tuple[str, ...]:
    """``path`` as each modelled origin server reads it; the first is :func:`normalise_path`'s.

    Sixteen readings, always in the same order (every combination of decoding, merging slashes,
    dropping ``;`` parameters and folding case, see the module docstring), so the readings of a
    pattern and of a value can be compared position by position. Characters a decoding produces
    are kept as single characters (one per byte, U+0000–U+00FF), so they compare but are not
    text. Misuse: comparing readings at different positions, or only the first where a server's
    reading matters.
    """
    segments = _segments(path)  # a model-written path may be long: encode it once
    unfolded = {
        flags: _reading(segments, decode=flags[0], merge=flags[1], parameters=flags[2])
        for flags in itertools.product((False, True), repeat=3)
    }
    return tuple(
        unfolded[decode, merge, parameters].translate(_FOLD)
        if fold
        else unfolded[decode, merge, parameters]
        for decode, merge, parameters, fold in itertools.product((False, True), repeat=4)
    )
