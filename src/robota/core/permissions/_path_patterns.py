"""Path patterns (S12, S05): path-segment globs against the canonical path."""

from __future__ import annotations

import fnmatch
import posixpath

from robota.core.permissions._globs import MatchResult, PathResolver, segments_cover

__all__ = ["match_path", "match_text"]


def match_text(pattern: str, value: object) -> MatchResult:
    """Glob ``pattern`` against the whole of ``value``."""
    if not isinstance(value, str):
        return "unevaluable"
    return "match" if fnmatch.fnmatchcase(value, pattern) else "no_match"


def _absolute(path: str, workspace: str, home: str | None, *, normalize: bool = True) -> str | None:
    if path == "~" or path.startswith("~/"):
        if home is None:
            return None
        path = home + path[1:]
    elif path.startswith("~"):
        return None  # another user's home: not knowable here
    if not path.startswith("/"):
        path = posixpath.join(workspace, path)
    return posixpath.normpath(path) if normalize else path


def match_path(
    pattern: str,
    value: object,
    *,
    workspace: str,
    home: str | None = None,
    resolve: PathResolver | None = None,
) -> MatchResult:
    """Path-segment glob ``pattern`` against the canonical form of ``value``."""
    if not isinstance(value, str) or not value or "\x00" in value:
        return "unevaluable"
    # S05: with a resolver, `..` is left for it to follow physically (`link/../x` climbs out of
    # the link's target, as the system call will); only without one is the path normalised.
    target = _absolute(value, workspace, home, normalize=resolve is None)
    if target is None:
        return "unevaluable"
    if resolve is not None:
        try:
            target = resolve(target)
        except (OSError, ValueError):
            return "unevaluable"
    expanded = _absolute(pattern, workspace, home)
    if expanded is None:
        return "unevaluable"
    return segments_cover(expanded, target)
