"""Command patterns (S12, S21): shell words, parsed, judged per direction."""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from robota.core.permissions._globs import Direction, MatchResult
from robota.core.permissions._options import ParsedArgs, parse_args
from robota.core.permissions._programs import DATA_PROGRAMS, program_grammar
from robota.core.permissions._shell import CommandLine, SimpleCommand, analyze_command
from robota.core.permissions._shell_words import (
    Word,
    WordPart,
    glob_has_magic,
    glob_match,
    glob_unescape,
    literal_word,
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


def _options_fit(wanted: ParsedArgs, have: ParsedArgs, unsure: bool) -> _Fit:
    """Are the rule's options among the command's, in the program's own reading?"""
    result: _Fit = "yes"
    for option in wanted.options:
        same = [h for h in have.options if h.name == option.name]
        if same and option.value is None:
            continue
        fit: _Fit
        if same and option.value is not None:
            fits = [_fit(option.value.value, h.value) if h.value else "no" for h in same]
            if "yes" in fits:
                continue
            fit = "maybe" if "maybe" in fits or unsure else "no"
        else:
            # S12: another spelling the reading could not settle may stand for it (an unknown
            # option, an ambiguous abbreviation, a word only known at run time).
            fit = "maybe" if option.name in have.maybe or unsure else "no"
        if fit == "no":
            return "no"
        result = "maybe"
    return result


def _operands_fit(
    want: _PatternCommand, wanted: ParsedArgs, have: ParsedArgs, unsure: bool
) -> MatchResult:
    fits: list[_Fit] = [
        "maybe" if index in have.uncertain else _fit(p.value, got)
        for index, (p, got) in enumerate(zip(wanted.operands, have.operands, strict=False))
    ]
    operands = have.operands
    # An extra operand counts against an exact rule only where no option at all stands before
    # it (`git push --force origin` for `git push --force`): knowing the program's grammar never
    # makes a deny rule weaker than not knowing it. A mismatch is judged in the grammar's reading.
    settled = [a and b for a, b in zip(have.settled, have.plain, strict=True)]
    if all(f == "yes" for f in fits):
        count_ok = (
            len(operands) >= len(wanted.operands)
            if want.open_ended
            else len(operands) == len(wanted.operands)
        )
        if count_ok:
            return "match"
        # An expansion may stand for any number of words, and an operand an option stands
        # before may be that option's value (`kubectl delete pod x -n prod`).
        extra_unsettled = not want.open_ended and not all(settled[len(wanted.operands) :])
        if unsure or extra_unsettled or any(not w.literal for w in operands):
            return "unevaluable"
        return "no_match"
    # Conclusive only when a mismatching operand sits where nothing before it can move it: no
    # unknown option in front (it may take a value, name a directory or define an alias — S12:
    # `git -c alias.p=push p`) and no word of unknown length before it.
    for index, fit in enumerate(fits):
        if fit == "no" and have.settled[index]:
            return "no_match"
    return "unevaluable"


def _deny_fit(want: _PatternCommand, command: SimpleCommand, depth: int = 0) -> MatchResult:
    """S12, deny direction: a rule that *might* apply to ``command`` must apply.

    The rule and the command are read through the program's own option grammar
    (:mod:`._options`): synonyms, clusters, abbreviations and values glued or separate are the
    same call. What cannot be lined up with the rule — an unknown option next to a missing
    wanted one, an option whose value may shift the operands, a subcommand that may be an alias,
    a word only known at run time — is "unevaluable", never "no match". A command that is not
    the rule's program is looked through when it may run its arguments (S21: runs unless known
    not to).
    """
    if not glob_match(posixpath.basename(want.words[0]), command.name):
        return _looked_through(want, command, depth)
    table = program_grammar(command.name)
    wanted = parse_args(table, [_pattern_word(w) for w in want.words[1:]])
    wanted_long = frozenset(o.name for o in wanted.options if o.name.startswith("--"))
    have = parse_args(table, command.argv[1:], wanted=wanted_long)
    # xargs and find -exec append arguments at run time: they may be anything.
    unsure = have.unsure or command.via in _APPENDS
    options = _options_fit(wanted, have, unsure)
    if options == "no":
        return "no_match"
    operands = _operands_fit(want, wanted, have, unsure)
    if operands == "no_match":
        return "no_match"
    return "unevaluable" if options == "maybe" else operands


_APPENDS: Final = frozenset({"xargs", "find -exec"})
_MAX_LOOK_THROUGH: Final = 2
_TOKEN_SPLIT: Final = re.compile(r"[\s;&|()<>`'\"=!{}$,]+")
_SCRIPT_CHARS: Final = re.compile(r"[\s;&|()<>`]")


def _mentions(program: str, text: str) -> bool:
    """Whether a token of ``text`` names ``program`` (a glob), with or without a directory."""
    return any(
        token and glob_match(program, posixpath.basename(token))
        for token in _TOKEN_SPLIT.split(text)
    )


def _looked_through(want: _PatternCommand, command: SimpleCommand, depth: int) -> MatchResult:
    """S21: a program not known to leave its arguments alone may run one of them.

    ``fakeroot git push``, ``mywrapper --cmd=git push``, ``tool 'git push'``: when the rule's
    program appears among the arguments of a program that may run them, and what follows it
    could be the command the rule names, the rule cannot be ruled out: "unevaluable" (it asks).
    Programs known never to run their arguments (:data:`DATA_PROGRAMS`; the options that do run
    one are read by the analysis as the commands they are) are not looked through.
    """
    if depth >= _MAX_LOOK_THROUGH or command.name in DATA_PROGRAMS:
        return "no_match"
    program = posixpath.basename(want.words[0])
    argv = command.argv
    for index in range(1, len(argv)):
        word = argv[index]
        if not word.literal:
            continue  # a word known only at run time: its value is not looked into
        text = word.value
        heads = [text]
        if "=" in text:
            heads.append(text.split("=", 1)[1])  # `--exec=git push`, `key=git`
        for raw in heads:
            head = raw.removeprefix("!")  # an alias's shell escape
            if head and glob_match(program, posixpath.basename(head)):
                sub = SimpleCommand(
                    (head, *(w.value for w in argv[index + 1 :])),
                    command.opaque_arguments,
                    (literal_word(head), *argv[index + 1 :]),
                    via=command.via,
                )
                if _deny_fit(want, sub, depth + 1) != "no_match":
                    return "unevaluable"
            if _SCRIPT_CHARS.search(head) and _mentions(program, head):
                line = analyze_command(head)
                if not line.parsed or not line.complete:
                    return "unevaluable"
                if any(_deny_fit(want, c, depth + 1) != "no_match" for c in line.commands):
                    return "unevaluable"
    return "no_match"


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
