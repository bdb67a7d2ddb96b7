"""URL patterns (S12, S06): scheme, host and path matched apart."""

from __future__ import annotations

import fnmatch
import re
from typing import Final

from robota.core.permissions._globs import GLOB_CHARS, MatchResult, segments_cover, segments_match

__all__ = ["match_url", "split_url"]

_URL: Final = re.compile(
    r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<authority>[^/?#]*)(?P<path>[^?#]*)(?P<rest>[?#].*)?$"
)


def split_url(value: str) -> tuple[str, str, str] | None:
    """``(scheme, host, path)`` of an absolute URL, scheme and host lower-cased.

    ``None`` when it is not one. Core parses URLs itself: it imports no networking module.
    """
    match = _URL.match(value.strip())
    if match is None:
        return None
    authority = match.group("authority").rsplit("@", 1)[-1]
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return None
        host = authority[: end + 1]
    else:
        host = authority.split(":", 1)[0]
    if not host:
        return None
    path = match.group("path") or "/"
    return match.group("scheme").lower(), host.lower().rstrip("."), path


def _host_matches(pattern: str, host: str) -> bool:
    pattern_labels = pattern.lower().rstrip(".").split(".")
    host_labels = host.split(".")
    return segments_match(pattern_labels, host_labels)


def match_url(pattern: str, value: object) -> MatchResult:
    """URL ``pattern`` (see the module docstring) against ``value``."""
    if not isinstance(value, str):
        return "unevaluable"
    parts = split_url(value)
    if parts is None:
        return "unevaluable"
    scheme, host, path = parts
    if pattern.startswith("domain:"):
        domain = pattern[len("domain:") :].strip().lower().rstrip(".")
        if not domain or GLOB_CHARS.search(domain):
            return "unevaluable"
        covered = host == domain or host.endswith("." + domain)
        return "match" if covered else "no_match"
    pattern_scheme: str | None = None
    rest = pattern
    if "://" in pattern:
        pattern_scheme, rest = pattern.split("://", 1)
        if not pattern_scheme or not fnmatch.fnmatchcase(scheme, pattern_scheme.lower()):
            return "no_match"
    pattern_host, slash, pattern_path = rest.partition("/")
    if not pattern_host:
        return "unevaluable"
    if not _host_matches(pattern_host, host):
        return "no_match"
    if not slash:
        return "match"  # no path in the pattern: any path on that host
    return segments_cover(pattern_path, path)
