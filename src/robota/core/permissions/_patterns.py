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
import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from robota.core.permissions._shell import CommandLine, SimpleCommand, analyze_command
from robota.core.permissions._shell_words import (
    Word,
    WordPart,
    glob_has_magic,
    glob_match,
    glob_unescape,
)
from robota.core.permissions._shell_wrappers import WRAPPERS

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
# Outcomes of lining one pattern word up with one command word.
_Fit: TypeAlias = Literal["yes", "maybe", "no"]
# Commands reached through another command's own words: covered when that command is.
_RUN_BY_PARENT: Final = frozenset({*WRAPPERS, "xargs", "find -exec", "bash -c"})


@dataclass(frozen=True, slots=True)
class _PatternCommand:
    words: tuple[str, ...]  # glob patterns in the syntax of Word.pattern
    open_ended: bool  # a trailing `*` (or `:*`): any further arguments
    assignments: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Pattern:
    commands: tuple[_PatternCommand, ...]
    operators: tuple[str, ...]  # between the commands, for a compound pattern


@functools.lru_cache(maxsize=256)
def _parse_pattern(pattern: str) -> _Pattern | None:
    """A command pattern as commands (``None`` when it is not a plain line of commands)."""
    text = pattern.strip()
    open_ended_suffix = text.endswith(_PREFIX_SUFFIX)
    if open_ended_suffix:
        text = text[: -len(_PREFIX_SUFFIX)]
    line = analyze_command(text)
    if not line.understood or line.shape is None or line.background:
        return None
    commands: list[_PatternCommand] = []
    operators: list[str] = []
    for item in line.shape:
        if isinstance(item, str):
            operators.append(item)
            continue
        command = line.commands[item]
        words: list[str] = []
        for word in command.argv:
            glob = word.pattern()
            if glob is None:
                return None
            words.append(glob)
        open_ended = False
        if len(words) > 1 and words[-1] == "*":
            words, open_ended = words[:-1], True
        commands.append(_PatternCommand(tuple(words), open_ended, command.assignments))
    if not commands:
        return None
    if open_ended_suffix:
        last = commands[-1]
        commands[-1] = _PatternCommand(last.words, True, last.assignments)
    return _Pattern(tuple(commands), tuple(operators))


def _flags(words: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for word in words:
        if word.startswith("--"):
            found.add(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1:
            found.update(f"-{letter}" for letter in word[1:])
    return found


def _options_and_operands(
    argv: Sequence[Word],
) -> tuple[list[Word], list[Word], list[bool]]:
    """The options, the operands, and for each operand whether it is *settled*.

    Settled: nothing before it can change where it stands — no option in front (an option may
    take the next word as its value) and no word of unknown length. ``--`` ends the options.
    """
    options: list[Word] = []
    operands: list[Word] = []
    settled: list[bool] = []
    steady = True
    ended = False
    for word in argv:
        if not ended and word.literal and word.value == "--":
            ended = True
        elif not ended and word.value.startswith("-") and word.value != "-":
            options.append(word)
            steady = False
        else:
            operands.append(word)
            settled.append(steady and word.literal)
            steady = steady and word.literal
    return options, operands, settled


def _fit(want: str, got: Word) -> _Fit:
    """Does command word ``got`` fit pattern word ``want``?"""
    if got.literal:
        return "yes" if glob_match(want, got.value) else "no"
    if got.dynamic or got.has_tilde:
        return "maybe"  # its value exists only at run time
    # An unquoted glob the shell will replace by file names.
    if glob_match(want, got.value):
        return "yes"
    if not glob_has_magic(want):
        glob = got.pattern()
        return "maybe" if glob is None or glob_match(glob, glob_unescape(want)) else "no"
    return "maybe"  # two globs: their overlap cannot be decided here


def _deny_fit(want: _PatternCommand, command: SimpleCommand) -> MatchResult:
    """S12, deny direction: a rule that *might* apply to ``command`` must apply.

    When the program matches but the rest cannot be lined up with the rule — options before a
    subcommand (``git -c x=y push``, ``git -C dir push``, ``kubectl -n ns delete``), an option
    whose value may shift the operands, an unknown value — the answer is "unevaluable", never
    "no match".
    """
    if not glob_match(posixpath.basename(want.words[0]), command.name):
        return "no_match"
    wanted_options, wanted_operands, _ = _options_and_operands(
        [_pattern_word(w) for w in want.words[1:]]
    )
    options, operands, settled = _options_and_operands(command.argv[1:])
    unknown = command.opaque_arguments or any(not o.literal for o in options)
    have_flags = _flags(o.value for o in options)
    wanted_flags = _flags(o.value for o in wanted_options)
    if not wanted_flags <= have_flags:
        # Another spelling may stand for a wanted flag: a long option for a short one
        # (`--recursive` for `-r`), a short one for a long one (`-f` for `--force`).
        missing = wanted_flags - have_flags
        extra = have_flags - wanted_flags
        respelled = (
            any(f.startswith("--") for f in extra) and any(not f.startswith("--") for f in missing)
        ) or (
            any(f.startswith("--") for f in missing) and any(not f.startswith("--") for f in extra)
        )
        return "unevaluable" if unknown or respelled else "no_match"
    fits = [_fit(p.value, got) for p, got in zip(wanted_operands, operands, strict=False)]
    if all(f == "yes" for f in fits):
        count_ok = (
            len(operands) >= len(wanted_operands)
            if want.open_ended
            else len(operands) == len(wanted_operands)
        )
        if count_ok:
            return "match"
        # An expansion may stand for any number of words, and an operand an option stands
        # before may be that option's value (`kubectl delete pod x -n prod`).
        extra_unsettled = not want.open_ended and not all(settled[len(wanted_operands) :])
        if unknown or extra_unsettled or any(not w.literal for w in operands):
            return "unevaluable"
        return "no_match"
    # Conclusive only when a mismatching operand sits where nothing before it can move it: no
    # option in front (an option may take a value, name a directory or define an alias — S12:
    # `git -c alias.p=push p`, `git -C dir push`) and no word of unknown length before it.
    for index, fit in enumerate(fits):
        if fit == "no" and settled[index] and not command.opaque_arguments:
            return "no_match"
    return "unevaluable"


def _pattern_word(glob: str) -> Word:
    return Word(glob, (WordPart("literal", glob, True),))


def _allow_covers(want: _PatternCommand, command: SimpleCommand) -> bool:
    """S12, allow direction: the command is exactly what the rule names.

    Nothing in front that changes what runs (an assignment, a wrapper), the program spelled as
    in the rule (``./git`` is not ``git``), every word known, and no redirection that touches
    a file the rule did not name.
    """
    if command.opaque_arguments or command.assignments != want.assignments:
        return False
    if any(not (w.literal or (w.has_glob and not w.dynamic)) for w in command.argv):
        return False
    for redirect in command.redirects:
        kind = redirect.kind
        if kind in ("duplicate", "close"):
            continue
        if (
            kind == "write"
            and redirect.target is not None
            and redirect.target.literal
            and (redirect.target.value == "/dev/null")
        ):
            continue
        if kind == "heredoc" and redirect.heredoc is not None and not redirect.heredoc.expands:
            continue
        return False
    have = command.argv
    if len(have) < len(want.words) or (not want.open_ended and len(have) != len(want.words)):
        return False
    return all(glob_match(w, got.value) for w, got in zip(want.words, have, strict=False))


def _covered_by_parent(line: CommandLine, index: int, covered: set[int]) -> bool:
    command = line.commands[index]
    return (
        command.parent is not None and command.via in _RUN_BY_PARENT and (command.parent in covered)
    )


def _allow_matches(pattern: _Pattern, line: CommandLine) -> MatchResult:
    if not line.understood or line.background or line.assignments or not line.commands:
        return "no_match"
    covered: set[int] = set()
    if len(pattern.commands) == 1:
        (want,) = pattern.commands
        for index, command in enumerate(line.commands):
            if _allow_covers(want, command) or _covered_by_parent(line, index, covered):
                covered.add(index)
            else:
                return "no_match"
        return "match"
    # A compound rule (`git fetch && git rebase`) allows exactly that line.
    if line.shape is None:
        return "no_match"
    indices = [item for item in line.shape if isinstance(item, int)]
    operators = tuple(item for item in line.shape if isinstance(item, str))
    if operators != pattern.operators or len(indices) != len(pattern.commands):
        return "no_match"
    for index, want in zip(indices, pattern.commands, strict=True):
        if not _allow_covers(want, line.commands[index]):
            return "no_match"
        covered.add(index)
    for index in range(len(line.commands)):
        if index not in covered and not _covered_by_parent(line, index, covered):
            return "no_match"
    return "match"


def _deny_matches(pattern: _Pattern, line: CommandLine) -> MatchResult:
    hidden = not line.complete
    per_rule: list[MatchResult] = []
    for want in pattern.commands:
        results = [_deny_fit(want, command) for command in line.commands]
        if "match" in results:
            per_rule.append("match")
        elif hidden or "unevaluable" in results:
            per_rule.append("unevaluable")
        else:
            per_rule.append("no_match")
    if all(r == "match" for r in per_rule):
        return "match"
    if "no_match" in per_rule:
        return "no_match"
    return "unevaluable"


def match_command(pattern: str, value: object, *, direction: Direction) -> MatchResult:
    """Command ``pattern`` against the command line ``value``, judged for ``direction``."""
    if not isinstance(value, str):
        return "unevaluable"
    parsed = _parse_pattern(pattern)
    if parsed is None:
        return "unevaluable"
    line = analyze_command(value)
    if not line.parsed:
        return "unevaluable"
    if direction == "allow":
        return _allow_matches(parsed, line)
    return _deny_matches(parsed, line)
