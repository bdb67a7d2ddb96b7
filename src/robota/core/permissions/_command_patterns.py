"""Command patterns (S12, S21): shell words, parsed, judged per direction.

A rule's pattern is read by :mod:`._rule_patterns` (its words as globs, no wrapper or shell
meaning), the command line by :func:`~robota.core.permissions.analyze_command`, a program's
options by its grammar (:mod:`._options`), and what a program may run of its own arguments by
:mod:`._look_through` — the same readings the catastrophic-removal check uses. In the deny
direction a rule's operands are compared as the program reads its operands: by position where
the grammar selects a subcommand or a kind of object, as members of a list everywhere else, and
as paths in one normal form (:func:`_fit`).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

from robota.core.permissions._globs import Direction, MatchResult
from robota.core.permissions._look_through import (
    Budget,
    Sought,
    Unreadable,
    consumed_words,
    fold_name,
    look_through,
    may_run_arguments,
    program_name,
    sets_path,
)
from robota.core.permissions._options import Grammar, ParsedArgs, parse_args
from robota.core.permissions._programs import program_grammar
from robota.core.permissions._removal_feeds import appends_paths_only
from robota.core.permissions._rule_patterns import (
    HOME_SYMBOL,
    Pattern,
    PatternCommand,
    has_symbol,
    read_pattern,
    widen,
    with_home,
    word_glob,
)
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

__all__ = ["end_of_options", "match_command"]


# Outcomes of lining one pattern word up with one command word.
_Fit: TypeAlias = Literal["yes", "maybe", "no"]
# Commands reached through another command's own words: covered when that command is (and
# every `… -c` script: a shell's, `su -c`, `flock -c`).
_RUN_BY_PARENT: Final = frozenset({*WRAPPERS, "xargs", "find -exec", "bash -c", "eval", "parallel"})
_SCRIPT_OPTION: Final = " -c"
# A script a shell (or `su`, `at` …) reads from a here-document: covered when the rule that
# covers that command is open-ended (`Bash(bash *)`), for an exact rule names no script.
_STDIN_SCRIPT: Final = " stdin"
_END_OF_OPTIONS: Final = "--"
_SPLITS: Final = re.compile(r"[ \t\n*?\[]")  # field splitting or pathname expansion of a value
_PRIVATE_SYMBOLS: Final = frozenset("\ue000\ue001\ue002")  # see _rule_patterns.HOME_SYMBOL


def _fit(want: str, got: Word, home: str | None) -> _Fit:
    """Does command word ``got`` fit pattern word ``want`` (a glob from :mod:`._rule_patterns`)?

    The home directory and parameters are symbols on both sides (``~`` in a rule is ``$HOME``
    in a command), replaced by the home directory's value where it is known. A symbol whose
    value is unknown may stand for any value it can have. Both words are compared in one
    normal form of a path (:func:`_path_form`): ``./build``, ``build/`` and ``build//.`` are
    ``build``, ``//srv/./data`` is ``/srv/data``. A ``..`` climbs out of a directory that may
    be a link, so a word with one that does not fit as written fits "maybe" when the names the
    two end in may be the same.
    """
    glob = word_glob(got)
    if glob is None:
        return "maybe"  # its value exists only at run time
    want, want_climbs = _path_form(with_home(want, home))
    glob, got_climbs = _path_form(with_home(glob, home))
    fit = _fit_forms(want, glob)
    if fit != "no" or not (want_climbs or got_climbs):
        return fit
    return "maybe" if _last_names_may_meet(want, glob) else "no"


def _fit_forms(want: str, glob: str) -> _Fit:
    text = glob_unescape(glob)
    if glob_match(want, text):
        return "yes"
    if not glob_has_magic(glob):
        if not has_symbol(text):
            return "maybe" if has_symbol(want) and glob_match(widen(want), text) else "no"
        if _under_home(want) and _under_home(text):
            return "no"  # `~/a` and `~/b` differ whatever the home directory is
        if has_symbol(want) or glob_has_magic(want):
            return "maybe"
    # An unquoted glob the shell replaces by file names, or a symbol of unknown value: it may
    # become the rule's word only if, read as a glob, it matches that word.
    elif glob_has_magic(want) or has_symbol(want):
        return "maybe"  # two globs: their overlap cannot be decided here
    return "maybe" if glob_match(widen(glob), glob_unescape(want)) else "no"


def _path_form(glob: str) -> tuple[str, bool]:
    """``glob`` (a word as a glob) in the normal form of a path, and whether it climbs (``..``).

    S12: one file, many spellings. Repeated slashes are one (Linux reads a leading ``//`` as
    ``/``), a ``.`` component is nothing, a trailing slash is dropped. A ``..`` is kept: it
    climbs out of whatever its directory leads to, which the text cannot tell.
    """
    if "/" not in glob:
        return glob, glob == ".."
    absolute = glob.startswith("/")
    parts = [part for part in glob.split("/") if part not in ("", ".")]
    climbs = ".." in parts
    body = "/".join(parts)
    if absolute:
        return "/" + body, climbs
    return body or ".", climbs


def _last_names_may_meet(want: str, glob: str) -> bool:
    """Whether two path globs may end in the same name (what a climbing path names)."""
    want_last, got_last = want.rsplit("/", 1)[-1], glob.rsplit("/", 1)[-1]
    if ".." in (want_last, got_last) or has_symbol(want_last) or has_symbol(got_last):
        return True
    if glob_has_magic(got_last):
        return glob_has_magic(want_last) or glob_match(got_last, glob_unescape(want_last))
    return glob_match(want_last, glob_unescape(got_last))


def _under_home(text: str) -> bool:
    """``text`` starts with the home directory and names no other value known at run time."""
    return text.startswith(HOME_SYMBOL) and not has_symbol(text[1:])


def _options_fit(
    wanted: ParsedArgs,
    have: ParsedArgs,
    unsure: bool,
    home: str | None,
    any_value: frozenset[str] = frozenset(),
) -> _Fit:
    """Are the rule's options among the command's, in the program's own reading?

    ``any_value``: options another of the command's options stands for with every value
    (``kubectl -A`` is each ``--namespace``).
    """
    result: _Fit = "yes"
    for option in wanted.options:
        same = [h for h in have.options if h.name == option.name]
        if same and option.value is None:
            continue
        fit: _Fit
        if same and option.value is not None:
            fits = [_fit(option.value.value, h.value, home) if h.value else "no" for h in same]
            if "yes" in fits:
                continue
            fit = "maybe" if "maybe" in fits or unsure or option.name in any_value else "no"
        else:
            # S12: another spelling the reading could not settle may stand for it (an unknown
            # option, an ambiguous abbreviation, a word only known at run time).
            maybe = option.name in have.maybe or option.name in any_value
            fit = "maybe" if maybe or unsure else "no"
        if fit == "no":
            return "no"
        result = "maybe"
    return result


@dataclasses.dataclass(frozen=True, slots=True)
class _Operands:
    """A stretch of operands, with what :class:`ParsedArgs` says of each."""

    words: tuple[Word, ...]
    settled: tuple[bool, ...]
    uncertain: frozenset[int]
    selections: frozenset[int]

    @classmethod
    def of(cls, parsed: ParsedArgs, start: int = 0, stop: int | None = None) -> _Operands:
        end = len(parsed.operands) if stop is None else stop

        def within(indices: frozenset[int]) -> frozenset[int]:
            return frozenset(i - start for i in indices if start <= i < end)

        return cls(
            parsed.operands[start:end],
            parsed.settled[start:end],
            within(parsed.uncertain),
            within(parsed.selections),
        )


def _operands_fit(
    wanted: _Operands,
    have: _Operands,
    *,
    open_ended: bool,
    elsewhere: bool,
    home: str | None,
    abbreviates: bool = False,
) -> MatchResult:
    """S12: may the command's operands be the rule's?

    A place the grammar reads by its position — a subcommand's name, the kind of object —
    rules the command out by what stands there (``git status`` is not ``git push``), when
    nothing before it can move it. Every other operand may be one of a list (``rm -rf dist
    build``, ``kubectl delete ns staging prod``), so the command is ruled out only when a
    word of the rule can stand nowhere among them, and no operand the line does not show
    (``elsewhere``: what ``xargs`` appends, objects named in a file or chosen by a label) may
    be it. An exact rule matches only the same operands in the same places; anything more is
    "unevaluable".
    """
    in_place: list[_Fit] = []
    for index, (glob_word, got) in enumerate(zip(wanted.words, have.words, strict=False)):
        fit = "maybe" if index in have.uncertain else _fit(glob_word.value, got, home)
        if fit == "no" and index == 0 and abbreviates and _abbreviates(got, glob_word):
            fit = "maybe"  # npm and cargo run the command a unique prefix names (`npm publ`)
        positional = index in wanted.selections and index in have.selections
        if fit == "no" and positional and have.settled[index]:
            return "no_match"
        in_place.append(fit)
    count = len(wanted.words)
    count_ok = len(have.words) >= count if open_ended else len(have.words) == count
    if count_ok and all(fit == "yes" for fit in in_place):
        return "match"
    for index, glob_word in enumerate(wanted.words):
        if index < len(in_place) and in_place[index] != "no":
            continue
        if elsewhere or any(
            i in have.uncertain or _fit(glob_word.value, got, home) != "no"
            for i, got in enumerate(have.words)
        ):
            continue
        return "no_match"  # this word of the rule can be none of the command's operands
    return "unevaluable"


def _abbreviates(got: Word, want: Word) -> bool:
    """``got`` is a prefix of two or more letters of the rule's literal word ``want``."""
    if not got.literal or len(got.value) < 2 or glob_has_magic(want.value):
        return False
    full = glob_unescape(want.value)
    return not has_symbol(full) and full != got.value and full.startswith(got.value)


def end_of_options(words: tuple[Word, ...] | list[Word], parsed: ParsedArgs) -> int | None:
    """The index of the ``--`` that ends the options in ``words`` (as ``parsed`` read them).

    ``None`` when no ``--`` does: a ``--`` that is an option's value or an operand (after the
    first operand of a program that stops reading options there) ends nothing.
    """
    operands = set(parsed.positions)
    values = {id(o.value) for o in parsed.options if o.value is not None}
    for index, word in enumerate(words):
        if word.literal and word.value == _END_OF_OPTIONS:
            if index not in operands and id(word) not in values:
                return index
            return None  # an operand or an option's value: the options did not end here
    return None


def _names_program(want: PatternCommand, written: str) -> bool:
    """S12, deny direction: ``written`` runs the rule's program, its letter case folded."""
    name = program_name(written)
    return name is not None and glob_match(fold_name(posixpath.basename(want.words[0])), name)


def _grammar(command: SimpleCommand) -> Grammar | None:
    """The option grammar of the program ``command`` runs (its name folded)."""
    return program_grammar(program_name(command.words[0]) or "") if command.words else None


@dataclasses.dataclass(frozen=True, slots=True)
class _Where:
    """The line a command is judged in, and whether that line changes ``PATH``."""

    line: CommandLine | None
    path_set: bool

    @classmethod
    def of(cls, line: CommandLine, *, path_set: bool = False) -> _Where:
        return cls(line, path_set or sets_path(line))


def _deny_fit(
    want: PatternCommand,
    command: SimpleCommand,
    *,
    home: str | None,
    where: _Where,
    consumed: frozenset[int] = frozenset(),
    budget: Budget | None = None,
) -> MatchResult:
    """S12, deny direction: a rule that *might* apply to ``command`` must apply.

    The rule and the command are read through the program's own option grammar
    (:mod:`._options`): synonyms, clusters, abbreviations and values glued or separate are the
    same call. What cannot be lined up with the rule — an unknown option next to a missing
    wanted one, an option whose value may shift the operands, a subcommand that may be an alias,
    a word only known at run time — is "unevaluable", never "no match". A command that is not
    the rule's program is looked through when it may run its arguments (S21: runs unless known
    not to).
    """
    if not command.words or not _names_program(want, command.words[0]):
        return _looked_through(want, command, consumed, budget or Budget(), home, where)
    table = _grammar(command)
    rule_words = [_pattern_word(w) for w in want.words[1:]]
    wanted = parse_args(table, rule_words)
    wanted_long = frozenset(o.name for o in wanted.options if o.name.startswith("--"))
    argv = [_one_word(w, home) for w in command.argv[1:]]
    have = parse_args(table, argv, wanted=wanted_long)
    # xargs appends arguments at run time: they may be anything, options included, unless
    # they are only the paths `find … -print0` prints into `xargs -0` (one reading with the
    # removal check's: `_removal_feeds`). (find -exec gives only `{}`, read as a path.)
    appends_options = command.via in _APPENDS and not (
        where.line is not None and appends_paths_only(where.line, command)
    )
    unsure = have.unsure or appends_options
    any_value = _ANY_VALUE.get(program_name(command.words[0]) or "", {})
    options = _options_fit(
        wanted,
        have,
        unsure,
        home,
        frozenset(any_value[o.name] for o in have.options if o.name in any_value),
    )
    if options == "no":
        return "no_match"
    reading = _Reading(want, rule_words, wanted, command, argv, have, appends_options)
    operands = _operand_groups_fit(reading, home=home)
    if operands == "no_match":
        return "no_match"
    return "unevaluable" if options == "maybe" else operands


@dataclasses.dataclass(frozen=True, slots=True)
class _Reading:
    """A rule and a command, both read by the program's grammar."""

    want: PatternCommand
    rule_words: list[Word]
    wanted: ParsedArgs
    command: SimpleCommand
    argv: list[Word]
    have: ParsedArgs
    appends_options: bool

    def elsewhere(self) -> bool:
        """Operands the line does not show may be the command's.

        What ``xargs`` appends, and objects named in a file (:attr:`Grammar.option_files`) or
        chosen other than by name (``kubectl delete ns --all``, ``-l app=web``).
        """
        if self.command.via in _APPENDS:
            return True
        elsewhere = _CHOSEN_ELSEWHERE.get(program_name(self.command.words[0]) or "", frozenset())
        grammar = _grammar(self.command)
        for index in sorted(self.have.selections):
            if grammar is None:
                break
            elsewhere = elsewhere | grammar.option_files
            word = self.have.operands[index]
            grammar = grammar.subcommands.get(word.value) if word.literal else None
        if grammar is not None:
            elsewhere = elsewhere | grammar.option_files
        return any(option.name in elsewhere for option in self.have.options)


def _operand_groups_fit(reading: _Reading, *, home: str | None) -> MatchResult:
    """The operands, and with a ``--`` in the rule, the operands on each side of it.

    S12: a rule's ``--`` says that what follows it is an operand: ``git checkout -- *`` is about
    paths after ``--``, not ``git checkout main``.
    """
    want, wanted, have, command = reading.want, reading.wanted, reading.have, reading.command
    abbreviates = _grammar(command) is None
    elsewhere = reading.elsewhere()
    rule_end = end_of_options(reading.rule_words, wanted)
    if rule_end is None:
        return _operands_fit(
            _Operands.of(wanted),
            _Operands.of(have),
            open_ended=want.open_ended,
            elsewhere=elsewhere,
            home=home,
            abbreviates=abbreviates,
        )
    command_end = end_of_options(reading.argv, have)
    if command_end is None:
        # A word known only at run time may be the `--`.
        may_end = any(not w.literal for w in reading.argv) or reading.appends_options
        return "unevaluable" if may_end else "no_match"
    rule_split = sum(1 for p in wanted.positions if p < rule_end)
    command_split = sum(1 for p in have.positions if p < command_end)
    before = _operands_fit(
        _Operands.of(wanted, 0, rule_split),
        _Operands.of(have, 0, command_split),
        open_ended=True,  # `git checkout HEAD -- f` is covered by `git checkout -- *`
        elsewhere=elsewhere,
        home=home,
        abbreviates=abbreviates,
    )
    after = _operands_fit(
        _Operands.of(wanted, rule_split),
        _Operands.of(have, command_split),
        open_ended=want.open_ended,
        elsewhere=elsewhere,
        home=home,
    )
    if "no_match" in (before, after):
        return "no_match"
    return "match" if before == after == "match" else "unevaluable"


_APPENDS: Final = frozenset({"xargs"})  # find -exec: only `{}`, read as a path (never an option)
_ADDS_WORDS: Final = frozenset({"xargs", "find -exec"})
# Options that choose objects other than by the names the operands give (S12): every object,
# those with a label or a field, those in every namespace. (Objects named in a file are the
# grammar's `option_files`.)
_CHOSEN_ELSEWHERE: Final[Mapping[str, frozenset[str]]] = {
    "kubectl": frozenset({"--all", "--selector", "--field-selector"}),
}
# Options that stand for another option with every value it may take (`kubectl -A`: every
# namespace, so each `-n NAME` too).
_ANY_VALUE: Final[Mapping[str, Mapping[str, str]]] = {
    "kubectl": {"--all-namespaces": "--namespace"},
}


def _looked_through(
    want: PatternCommand,
    command: SimpleCommand,
    consumed: frozenset[int],
    budget: Budget,
    home: str | None,
    where: _Where,
) -> MatchResult:
    """S21: a program not known to leave its arguments alone may run one of them.

    ``fakeroot git push``, ``mywrapper --cmd=git push``, ``tool 'git push'``: when the rule's
    program may run among the arguments of a program that may run them (read by
    :mod:`._look_through`), and what it runs could be the command the rule names, the rule
    cannot be ruled out: "unevaluable" (it asks). Text that may name the program but cannot be
    read asks as well.
    """
    if not may_run_arguments(command, path_set=where.path_set):
        return "no_match"
    sought = Sought((posixpath.basename(want.words[0]),))
    items = look_through(command, sought, budget=budget, consumed=consumed, path_set=where.path_set)
    for item in items:
        if isinstance(item, Unreadable):
            return "unevaluable"
        inner = where if item.line is None else _Where.of(item.line, path_set=where.path_set)
        if _deny_fit(want, item.command, home=home, where=inner) != "no_match":
            return "unevaluable"
    return "no_match"


def _one_word(word: Word, home: str | None) -> Word:
    """``word`` as a literal, when the home directory is all of it known only at run time.

    Such a word reaches the program as one word that is no option (``~/x``, ``"$HOME"/x``).

    The home directory stands as its symbol (:mod:`._rule_patterns`), so the option grammar
    settles the word's place as it does a literal's. An unquoted ``$HOME`` is one word only when
    the home directory is known to hold no blank and no glob character.
    """
    if word.literal or word.unsupported is not None:
        return word
    one_word = home is not None and not _SPLITS.search(home)
    pieces: list[str] = []
    for part in word.parts:
        if part.kind == "literal":
            pieces.append(part.text)
        elif (part.kind == "tilde" and not part.text) or (
            part.kind == "parameter" and part.text == "HOME" and (part.quoted or one_word)
        ):
            pieces.append(HOME_SYMBOL)
        else:
            return word
    return literal_word("".join(pieces))


def _pattern_word(glob: str) -> Word:
    return Word(glob, (WordPart("literal", glob, True),))


def _allow_covers(want: PatternCommand, command: SimpleCommand, home: str | None) -> bool:
    """S12, allow direction: the command is exactly what the rule names.

    Nothing in front that changes what runs (an assignment, a wrapper), the program spelled as
    in the rule (``./git`` is not ``git``), every word known, and no redirection that touches
    a file the rule did not name. The home directory is known exactly where it is one word
    (``~``, ``"$HOME"``; an unquoted ``$HOME`` when the home holds no blank or glob character):
    it meets the rule's ``~`` as the same symbol, and its value where that is known, so
    ``ls ~/*`` covers ``ls ~/projects``. Any other word with a parameter is never covered.
    """
    if command.assignments != want.assignments:
        return False
    if command.opaque_arguments and command.via in _ADDS_WORDS:
        return False  # words only known at run time are added to the ones shown
    texts: list[str] = []
    for word in command.argv:
        text = _known_text(word, home)
        if text is None:
            return False
        texts.append(text)
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
    if len(texts) < len(want.words) or (not want.open_ended and len(texts) != len(want.words)):
        return False
    return all(_allow_word(glob, text, home) for glob, text in zip(want.words, texts, strict=False))


def _known_text(word: Word, home: str | None) -> str | None:
    """``word``'s value, with the home directory as its symbol; ``None`` if it is not known."""
    if word.literal:
        text = word.value
    elif word.has_glob and not word.dynamic:
        return word.value  # an unquoted glob: covered by the rule's own glob, as written
    else:
        one = _one_word(word, home)
        if not one.literal:
            return None
        text = one.value
    literal = text.replace(HOME_SYMBOL, "") if not word.literal else text
    if any(ch in _PRIVATE_SYMBOLS for ch in literal):
        return None  # the symbols' own characters in a command are never the home directory
    return text


def _allow_word(glob: str, text: str, home: str | None) -> bool:
    """Does the command word ``text`` (the home as its symbol) fit the rule's ``glob`` exactly?"""
    if home is not None:
        glob = with_home(glob, home)
        return not has_symbol(glob) and glob_match(glob, text.replace(HOME_SYMBOL, home))
    if has_symbol(glob.replace(HOME_SYMBOL, "")):
        return False  # a parameter nobody knows the value of
    globs, texts = glob.split(HOME_SYMBOL), text.split(HOME_SYMBOL)
    return len(globs) == len(texts) and all(
        glob_match(g, t) for g, t in zip(globs, texts, strict=True)
    )


def _covered_by_parent(line: CommandLine, index: int, covered: dict[int, bool]) -> bool:
    """S12: ``line``'s command ``index`` runs as part of a command an allow rule covers.

    ``covered`` maps each covered command to whether its rule is open-ended: only then does it
    cover a script the command reads on its standard input.
    """
    command = line.commands[index]
    parent, via = command.parent, command.via
    if parent is None or via is None or parent not in covered:
        return False
    if via.endswith(_STDIN_SCRIPT):
        return covered[parent]
    return via in _RUN_BY_PARENT or via.endswith(_SCRIPT_OPTION)


def _allow_matches(pattern: Pattern, line: CommandLine, home: str | None) -> MatchResult:
    if not line.understood or line.background or line.assignments or not line.commands:
        return "no_match"
    covered: dict[int, bool] = {}
    if len(pattern.commands) == 1:
        (want,) = pattern.commands
        for index, command in enumerate(line.commands):
            if _allow_covers(want, command, home):
                covered[index] = want.open_ended
            elif _covered_by_parent(line, index, covered):
                covered[index] = covered[command.parent or 0]
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
        if not _allow_covers(want, line.commands[index], home):
            return "no_match"
        covered[index] = want.open_ended
    for index, command in enumerate(line.commands):
        if index in covered:
            continue
        if not _covered_by_parent(line, index, covered):
            return "no_match"
        covered[index] = covered[command.parent or 0]
    return "match"


def _deny_matches(pattern: Pattern, line: CommandLine, home: str | None) -> MatchResult:
    hidden = not line.complete
    consumed = consumed_words(line)
    where = _Where.of(line)
    per_rule: list[MatchResult] = []
    for want in pattern.commands:
        budget = Budget()
        results = [
            _deny_fit(
                want, command, home=home, where=where, consumed=consumed[index], budget=budget
            )
            for index, command in enumerate(line.commands)
        ]
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


def match_command(
    pattern: str, value: object, *, direction: Direction, home: str | None = None
) -> MatchResult:
    """Command ``pattern`` against the command line ``value``, judged for ``direction``.

    Args:
        pattern: The rule's pattern (``git push *``, ``rm -rf ~``, ``curl * | sh``), read by
            :mod:`._rule_patterns`: its words are globs and nothing in it is run.
        value: The command line.
        direction: ``"deny"`` (deny and ask rules: what might apply, applies) or ``"allow"``
            (only exactly what the rule names).
        home: The home directory, which ``~`` and ``$HOME`` stand for in the rule and the
            command. Without it, a home word matches only a home word in the other.

    A pattern that cannot be read (a substitution, a subshell) is "unevaluable" for every call.
    """
    if not isinstance(value, str):
        return "unevaluable"
    parsed = read_pattern(pattern)
    if parsed is None:
        return "unevaluable"
    line = analyze_command(value)
    if not line.parsed:
        return "unevaluable"
    if direction == "allow":
        return _allow_matches(parsed, line, home)
    return _deny_matches(parsed, line, home)
