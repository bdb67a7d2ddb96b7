"""Path patterns (S12, S05): path-segment globs against the canonical path."""

from __future__ import annotations

import fnmatch
import posixpath

from robota.core.permissions._globs import (
    GLOB_CHARS,
    Direction,
    MatchResult,
    PathResolver,
    segments_cover,
)

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
    direction: Direction = "deny",
) -> MatchResult:
    """Path-segment glob ``pattern`` against ``value``, both in their canonical form.

    With a resolver (the host's ``canonical_path``), the value is the place the system call will
    reach (``link/../x`` climbs out of the link's target) and the pattern's literal part — up to
    its first glob segment — is resolved the same way, so a rule written through a symlink
    (``conf/**`` with ``conf`` a link to ``real/conf``) matches what it names, whichever
    spelling reaches it (S05, S12). For a deny or ask rule (``direction="deny"``, the default)
    the path and the pattern as written count too: a rule that might apply, applies. An allow
    rule matches the canonical reading only. Without a resolver both are compared lexically.
    """
    if not isinstance(value, str) or not value or "\x00" in value:
        return "unevaluable"
    written = _absolute(value, workspace, home)
    expanded = _absolute(pattern, workspace, home)
    if written is None or expanded is None:
        return "unevaluable"
    if resolve is None:
        return segments_cover(expanded, written)
    # S05: `..` is left for the resolver to follow physically, as the system call will.
    raw = _absolute(value, workspace, home, normalize=False)
    raw_pattern = _absolute(pattern, workspace, home, normalize=False)
    try:
        target = resolve(raw if raw is not None else written)
        canonical = _resolved_pattern(raw_pattern if raw_pattern is not None else expanded, resolve)
    except (OSError, ValueError):
        return "unevaluable"
    physical = segments_cover(canonical, target)
    if physical == "match" or direction == "allow":
        return physical
    readings = ((expanded, written), (expanded, target), (canonical, written))
    return "match" if any(segments_cover(p, v) == "match" for p, v in readings) else "no_match"


def _resolved_pattern(pattern: str, resolve: PathResolver) -> str:
    """``pattern`` with its literal leading segments resolved (symlinks followed).

    The literal part is resolved as written, ``..`` included, the way the kernel reads it (S05:
    ``link/../secret`` climbs out of the link's target). A ``.`` or ``..`` after a glob segment
    cannot be placed before the glob is matched: ``ValueError`` (the rule is unevaluable).
    """
    segments = pattern.split("/")
    literal = next((i for i, seg in enumerate(segments) if GLOB_CHARS.search(seg)), len(segments))
    if any(seg in (".", "..") for seg in segments[literal:]):
        raise ValueError(f"the path pattern {pattern!r} climbs after a glob")
    prefix = "/".join(segments[:literal]) or "/"
    resolved = resolve(prefix)
    rest = "/".join(segments[literal:])
    if not rest:
        return resolved
    return resolved.rstrip("/") + "/" + rest
