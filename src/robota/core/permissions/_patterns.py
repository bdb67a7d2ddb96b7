"""Matching one permission pattern against one argument, per argument kind (S12).

Every matcher answers one of three things: ``"match"``, ``"no_match"`` or ``"unevaluable"`` —
the pattern or the argument cannot be judged in its kind. Unevaluable is its own answer, never
folded into "no match": a deny or ask rule that cannot be judged must route to a person, or the
deny would silently lose to an allow beside it.

Kinds:

* ``path`` — path-segment globs (``*`` within one segment, ``**`` across segments) against the
  canonical path (symlinks resolved by the host's resolver when one is passed). A pattern without
  a glob covers the path and everything beneath it.
* ``url`` — scheme, host and path are matched apart, so a wildcard never spans scheme and host by
  accident: ``https://*.example.com/docs/**``, ``example.com`` (any scheme and path),
  ``domain:example.com`` (that host and its subdomains).
* ``command`` — shell words, parsed (see :mod:`._shell`): the pattern's first word names the
  command; ``*`` as a last word (or a ``:*`` suffix) matches any further arguments. In the deny
  direction flags match regardless of order and clustering (``rm -rf`` also denies ``rm -f -r``),
  every command of a compound line is checked, and anything the parser cannot see makes the rule
  unevaluable — a literal non-match is not evidence the command will not run. In the allow
  direction every command of the line must be covered, exactly.
* ``text`` — a glob over the whole string.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final, Literal, TypeAlias

from robota.core.permissions._shell import SimpleCommand, analyze_command

__all__ = [
    "Direction",
    "MatchResult",
    "PathResolver",
    "match_command",
    "match_path",
    "match_text",
    "match_url",
    "split_url",
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


_URL = re.compile(
    r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<authority>[^/?#]*)(?P<path>[^?#]*)(?P<rest>[?#].*)?$"
)


# --------------------------------------------------------------------------- text


def match_text(pattern: str, value: object) -> MatchResult:
    """Glob ``pattern`` against the whole of ``value``."""
    if not isinstance(value, str):
        return "unevaluable"
    return "match" if fnmatch.fnmatchcase(value, pattern) else "no_match"


# --------------------------------------------------------------------------- paths


def _segments_match(pattern: Sequence[str], value: Sequence[str]) -> bool:
    if not pattern:
        return not value
    head = pattern[0]
    if head == "**":
        return any(_segments_match(pattern[1:], value[i:]) for i in range(len(value) + 1))
    if not value:
        return False
    return fnmatch.fnmatchcase(value[0], head) and _segments_match(pattern[1:], value[1:])


def _absolute(path: str, workspace: str, home: str | None) -> str | None:
    if path == "~" or path.startswith("~/"):
        if home is None:
            return None
        path = home + path[1:]
    elif path.startswith("~"):
        return None  # another user's home: not knowable here
    if not path.startswith("/"):
        path = posixpath.join(workspace, path)
    return posixpath.normpath(path)


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
    target = _absolute(value, workspace, home)
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
    return _segments_cover(expanded, target)


def _segments_cover(pattern: str, value: str) -> MatchResult:
    """Path-segment matching shared by paths and URL paths."""
    pattern_parts = [p for p in pattern.split("/") if p]
    value_parts = [p for p in value.split("/") if p]
    if not GLOB_CHARS.search(pattern):
        # A plain path covers itself and everything beneath it.
        covered = value_parts[: len(pattern_parts)] == pattern_parts
        return "match" if covered else "no_match"
    return "match" if _segments_match(pattern_parts, value_parts) else "no_match"


# --------------------------------------------------------------------------- URLs


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
    return _segments_match(pattern_labels, host_labels)


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
    return _segments_cover(pattern_path, path)


# --------------------------------------------------------------------------- commands

_PREFIX_SUFFIX: Final = ":*"


def _pattern_words(pattern: str) -> tuple[list[str], bool] | None:
    """The pattern's words and whether further arguments are allowed."""
    text = pattern.strip()
    open_ended = False
    if text.endswith(_PREFIX_SUFFIX):
        text = text[: -len(_PREFIX_SUFFIX)]
        open_ended = True
    line = analyze_command(text)
    if not line.parsed or len(line.commands) != 1 or line.opaque:
        return None
    words = list(line.commands[0].words)
    if words and words[-1] == "*":
        words = words[:-1]
        open_ended = True
    if not words:
        return None
    return words, open_ended


def _flags(words: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for word in words:
        if word.startswith("--"):
            found.add(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1:
            found.update(f"-{letter}" for letter in word[1:])
    return found


def _deny_matches(words: list[str], open_ended: bool, command: SimpleCommand) -> MatchResult:
    if not fnmatch.fnmatchcase(command.name, posixpath.basename(words[0])):
        return "no_match"
    wanted_flags = _flags(w for w in words[1:] if w.startswith("-"))
    wanted_args = [w for w in words[1:] if not w.startswith("-")]
    have = command.words[1:]
    have_args = [w for w in have if not w.startswith("-")]
    if not wanted_flags <= _flags(w for w in have if w.startswith("-")):
        return "unevaluable" if command.opaque_arguments else "no_match"
    if len(have_args) < len(wanted_args) or (not open_ended and len(have_args) > len(wanted_args)):
        return "unevaluable" if command.opaque_arguments else "no_match"
    for want, got in zip(wanted_args, have_args, strict=False):
        if not fnmatch.fnmatchcase(got, want):
            return "unevaluable" if command.opaque_arguments else "no_match"
    return "match"


def _allow_covers(words: list[str], open_ended: bool, command: SimpleCommand) -> bool:
    if command.opaque_arguments:
        return False
    have = list(command.words)
    if not fnmatch.fnmatchcase(command.name, posixpath.basename(words[0])):
        return False
    if len(have) < len(words) or (not open_ended and len(have) != len(words)):
        return False
    return all(
        fnmatch.fnmatchcase(got, want) for want, got in zip(words[1:], have[1:], strict=False)
    )


def match_command(pattern: str, value: object, *, direction: Direction) -> MatchResult:
    """Command ``pattern`` against the command line ``value``, judged for ``direction``."""
    if not isinstance(value, str):
        return "unevaluable"
    parsed_pattern = _pattern_words(pattern)
    if parsed_pattern is None:
        return "unevaluable"
    words, open_ended = parsed_pattern
    line = analyze_command(value)
    if not line.parsed:
        return "unevaluable"
    if direction == "allow":
        # Every command the line runs must be covered; anything unseen is not covered.
        if line.opaque or not line.commands or line.redirections:
            return "no_match"
        covered = all(_allow_covers(words, open_ended, c) for c in line.commands)
        return "match" if covered else "no_match"
    results = [_deny_matches(words, open_ended, c) for c in line.commands]
    if "match" in results:
        return "match"
    if line.opaque or "unevaluable" in results:
        return "unevaluable"
    return "no_match"
