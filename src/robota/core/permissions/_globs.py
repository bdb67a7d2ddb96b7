"""Glob pieces every argument kind shares (S12): the three-way answer, the wildcard matcher.

The values a rule is matched against come from a model: a path, a URL or a command word can be
tens of kilobytes long and shaped to make a matcher work hard. :func:`wildcard_match` is the one
matcher with an unbounded wildcard — path segments under ``**`` (:func:`segments_match`, for
paths, URL paths and host labels) and the characters of a command word under ``*``
(:func:`~robota.core.permissions.glob_match`) — and it does at most about
``len(pattern) * len(value)`` single-item comparisons, never the exponential or polynomial
blow-up of backtracking recursion or of a regular expression with several ``.*``: the
permission check is synchronous, so a slow match would stall the event loop it runs on.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from typing import Final, Literal, TypeAlias, TypeVar

__all__ = [
    "GLOB_CHARS",
    "Direction",
    "MatchResult",
    "PathResolver",
    "escape_glob",
    "segments_cover",
    "segments_match",
    "wildcard_match",
]

MatchResult: TypeAlias = Literal["match", "no_match", "unevaluable"]
Direction: TypeAlias = Literal["deny", "allow"]
PathResolver: TypeAlias = Callable[[str], str]
"""Maps a path to its canonical absolute form (symlinks followed); the host provides one."""

GLOB_CHARS: Final = re.compile(r"[*?\[]")
"""The characters that make a pattern a glob (``fnmatch`` syntax)."""


def escape_glob(value: str) -> str:
    """``value`` as a glob that matches exactly itself (each glob character in brackets)."""
    return GLOB_CHARS.sub(lambda m: f"[{m.group(0)}]", value)


_P = TypeVar("_P")
_V = TypeVar("_V")


def wildcard_match(
    pattern: Sequence[_P],
    value: Sequence[_V],
    *,
    is_star: Callable[[_P], bool],
    one: Callable[[_P, _V], bool],
) -> bool:
    """Whether ``value`` matches ``pattern``, where a star item matches any run of items.

    Every item of ``pattern`` for which ``is_star`` holds matches zero or more items of ``value``;
    every other item matches exactly one, when ``one(item, value_item)`` says so. The classic
    wildcard scan: items are matched left to right, and on a mismatch only the most recent star
    takes one more item (an earlier star never needs to: whatever it could take, the later star
    can too). ``one`` is called at most ``(len(pattern) + 1) * (len(value) + 1)`` times, and
    nothing is copied. Misuse: a ``one`` that could match a run of items (or none), which the
    scan does not model.
    """
    p, v = 0, 0
    star, mark = -1, 0  # the most recent star's index, and where its run now ends
    while v < len(value):
        if p < len(pattern) and is_star(pattern[p]):
            star, mark = p, v
            p += 1
            if p == len(pattern):
                return True  # a trailing star takes the rest, however long
        elif p < len(pattern) and one(pattern[p], value[v]):
            p += 1
            v += 1
        elif star >= 0:
            mark += 1  # S12: the star takes one more item; the items after it start again
            p, v = star + 1, mark
        else:
            return False
    return all(is_star(item) for item in pattern[p:])


def _is_globstar(segment: str) -> bool:
    return segment == "**"


def _segment_matches(pattern: str, segment: str) -> bool:
    return fnmatch.fnmatchcase(segment, pattern)


def segments_match(pattern: Sequence[str], value: Sequence[str]) -> bool:
    """Segment globs (``*`` within one segment, ``**`` across segments) against segments.

    One :func:`wildcard_match`: at most ``(len(pattern) + 1) * (len(value) + 1)`` ``fnmatch``
    calls of one segment each, however many ``**`` the pattern holds.
    """
    return wildcard_match(pattern, value, is_star=_is_globstar, one=_segment_matches)


def segments_cover(pattern: str, value: str) -> MatchResult:
    """Path-segment matching shared by paths and URL paths.

    A pattern without a glob covers the path and everything beneath it.
    """
    pattern_parts = [p for p in pattern.split("/") if p]
    value_parts = [p for p in value.split("/") if p]
    if not GLOB_CHARS.search(pattern):
        covered = value_parts[: len(pattern_parts)] == pattern_parts
        return "match" if covered else "no_match"
    return "match" if segments_match(pattern_parts, value_parts) else "no_match"
