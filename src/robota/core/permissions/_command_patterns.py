"""Command patterns (S12, S21): shell words, parsed, judged per direction."""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from robota.core.permissions._globs import Direction, MatchResult
from robota.core.permissions._shell import CommandLine, SimpleCommand, analyze_command
from robota.core.permissions._shell_words import (
    Word,
    WordPart,
    glob_has_magic,
    glob_match,
    glob_unescape,
)
from robota.core.permissions._shell_wrappers import WRAPPERS

__all__ = ["match_command"]


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
