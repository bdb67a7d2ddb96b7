"""Glob pieces every argument kind shares (S12): the three-way answer, path-segment globs."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from typing import Final, Literal, TypeAlias

__all__ = [
    "GLOB_CHARS",
    "Direction",
    "MatchResult",
    "PathResolver",
    "escape_glob",
    "segments_cover",
    "segments_match",
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


def segments_match(pattern: Sequence[str], value: Sequence[str]) -> bool:
    """Segment globs (``*`` within one segment, ``**`` across segments) against segments."""
    if not pattern:
        return not value
    head = pattern[0]
    if head == "**":
        return any(segments_match(pattern[1:], value[i:]) for i in range(len(value) + 1))
    if not value:
        return False
    return fnmatch.fnmatchcase(value[0], head) and segments_match(pattern[1:], value[1:])


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
