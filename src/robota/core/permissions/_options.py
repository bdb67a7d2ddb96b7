"""Reading a command's options the way the program reads them (S12, S21).

A deny rule ``Bash(rm -rf *)`` is about what ``rm`` will do, not about how the options are spelled:
``rm -Rf``, ``rm -r -f``, ``rm --recursive --force`` and GNU's ``rm --rec --force`` are the same
call. So the rule and the command are both read through one :class:`Grammar` — the program's
option table — into canonical options and operands, and compared in that reading:

* **Synonyms** map to one canonical name (``-R``, ``-r`` and ``--recursive`` are ``--recursive``).
* **Clusters** are split (``-rf`` is ``-r -f``); a short option that takes a value takes the rest
  of the cluster or the next word (``-n5``, ``-n 5``); a long one takes ``=value`` or the next
  word.
* **Abbreviations**: a program that accepts unambiguous prefixes of its long options (GNU
  ``getopt_long``, git's parse-options) has them resolved against its table *and* the rule's own
  long options; a prefix that could stand for a wanted option but does not resolve to exactly one
  is "maybe", never "no".
* **Subcommands** switch the table (``git reset --hard``: ``--hard`` is read by ``reset``'s).
  A subcommand the table does not know may be an alias, so what stands there is uncertain.
* A program without a table is read generically: every option is unknown, so a wanted option
  that is missing while any other option is present is "maybe" (the other one may be a synonym or
  an abbreviation), and an option may take the next word as its value.

Whatever this reading cannot settle is reported as *unsure*; the matcher turns that into
"unevaluable" for a deny or ask rule (S12), never into "no match".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, final

from robota.core.permissions._shell_words import Word, glob_match, literal_word

__all__ = [
    "Arity",
    "Grammar",
    "Option",
    "ParsedArgs",
    "grammar",
    "may_be_option",
    "parse_args",
]

Arity: TypeAlias = Literal["flag", "value", "optional"]
"""``flag``: no value; ``value``: glued or the next word; ``optional``: only glued / ``=value``."""


@final
@dataclass(frozen=True, slots=True)
class Grammar:
    """How one program (or one of its subcommands) reads its arguments.

    Attributes:
        short: ``"-r"`` → (canonical name, arity).
        long: ``"--recursive"`` → (canonical name, arity). With ``single_dash_long``, the
            ``-name`` spellings are here too.
        abbreviations: Unambiguous prefixes of long options are accepted (``--rec``).
        permute: Options may follow operands (GNU); otherwise the first operand ends them.
        single_dash_long: Long options are written with one dash (``find -name``,
            ``terraform -auto-approve``); short clusters do not exist.
        numeric: ``-N`` for a number is an option (``head -5``, ``nice -5``).
        subcommands: The first operand selects one of these tables (``git reset``).
        known_subcommands: Further subcommand names that exist but have no table of their own:
            they are read with the generic reading, and are not taken for aliases.
        implied: Operand globs that stand for an option (``git push origin +main`` forces).
        also: Canonical options one spelling adds to its own (``git branch -D`` is ``--delete
            --force``).
    """

    short: Mapping[str, tuple[str, Arity]] = field(default_factory=dict)
    long: Mapping[str, tuple[str, Arity]] = field(default_factory=dict)
    abbreviations: bool = True
    permute: bool = True
    single_dash_long: bool = False
    numeric: bool = False
    subcommands: Mapping[str, Grammar] = field(default_factory=dict)
    known_subcommands: frozenset[str] = frozenset()
    implied: tuple[tuple[str, str], ...] = ()
    also: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def grammar(
    spec: str,
    *,
    abbreviations: bool = True,
    permute: bool = True,
    single_dash_long: bool = False,
    numeric: bool = False,
    subcommands: Mapping[str, Grammar] | None = None,
    known_subcommands: str = "",
    implied: tuple[tuple[str, str], ...] = (),
) -> Grammar:
    """A :class:`Grammar` from a compact spec.

    ``spec`` lists options separated by blanks; synonyms are joined by ``|``; a trailing ``=``
    means the option takes a value, ``=?`` an optional (glued-only) value. The canonical name of
    a group is its first long spelling (else its first spelling). ``-D>--delete,--force`` says
    that a spelling stands for several options at once::

        grammar("-r|-R|--recursive -f|--force -i --interactive=? --preserve-root=?")
    """
    short: dict[str, tuple[str, Arity]] = {}
    long: dict[str, tuple[str, Arity]] = {}
    also: dict[str, tuple[str, ...]] = {}
    for entry in spec.split():
        if "=|" in entry or entry.startswith("|") or entry.endswith("|"):
            raise ValueError(f"grammar entry {entry!r}: a value suffix goes after the last synonym")
        if ">" in entry:
            spelling, _, names = entry.partition(">")
            first, *rest = names.split(",")
            table = long if spelling.startswith("--") else short
            table[spelling] = (first, "flag")
            also[spelling] = tuple(rest)
            continue
        arity: Arity = "flag"
        if entry.endswith("=?"):
            entry, arity = entry[:-2], "optional"  # noqa: PLW2901 - a parsed copy of the entry
        elif entry.endswith("="):
            entry, arity = entry[:-1], "value"  # noqa: PLW2901
        spellings = entry.split("|")
        canonical = next((s for s in spellings if s.startswith("--")), None)
        if canonical is None and single_dash_long:
            canonical = next((s for s in spellings if len(s) > 2), None)
        canonical = canonical or spellings[0]
        for spelling in spellings:
            is_long = spelling.startswith("--") or (single_dash_long and len(spelling) > 2)
            (long if is_long else short)[spelling] = (canonical, arity)
    return Grammar(
        short=short,
        long=long,
        abbreviations=abbreviations,
        permute=permute,
        single_dash_long=single_dash_long,
        numeric=numeric,
        subcommands=dict(subcommands or {}),
        known_subcommands=frozenset(known_subcommands.split()),
        implied=implied,
        also=also,
    )


@final
@dataclass(frozen=True, slots=True)
class Option:
    """One option as the program reads it.

    Attributes:
        name: The canonical name (the table's), or the spelling when the program has no table.
        value: Its value, when it has one.
        known: The program's table names it.
    """

    name: str
    value: Word | None = None
    known: bool = True


@final
@dataclass(frozen=True, slots=True)
class ParsedArgs:
    """A command's arguments (after its name) as one :class:`Grammar` reads them.

    Attributes:
        options: The options, in order.
        operands: The operands, in order (a subcommand's name included).
        settled: Per operand: nothing before it can change where it stands.
        unsure: Something may be an option this reading did not see (an unknown option, a word
            only known at run time, a prefix that may abbreviate another option).
        maybe: Canonical names of wanted options that an unresolved spelling may stand for.
        uncertain: Operand positions whose meaning is uncertain (a subcommand that may be an
            alias).
        positions: Per operand, its index in the words read.
        plain: Per operand: no option and no word that may become one stands before it — what
            "settled" means to a reader that knows no grammar. A deny rule concludes "no match"
            from an operand only when it is settled in both readings, so knowing a program
            never makes a rule weaker than not knowing it.
    """

    options: tuple[Option, ...]
    operands: tuple[Word, ...]
    settled: tuple[bool, ...]
    unsure: bool = False
    maybe: frozenset[str] = frozenset()
    uncertain: frozenset[int] = frozenset()
    positions: tuple[int, ...] = ()
    plain: tuple[bool, ...] = ()


_GENERIC: Final = Grammar(abbreviations=False)


def may_be_option(word: Word) -> bool:
    """Whether ``word`` may reach the program as an option (start with ``-``).

    A literal word is what it is; a word that starts with a tilde becomes a path; a word that
    starts with an expansion, a substitution or a glob (a file named ``-rf`` matches ``*``) may
    become anything.
    """
    if word.literal:
        return word.value.startswith("-")
    if word.unsupported is not None or not word.parts:
        return True
    first = word.parts[0]
    if first.kind == "literal":
        return first.text.startswith("-")
    return first.kind != "tilde"


def _word_count_fixed(word: Word) -> bool:
    """The word reaches the program as exactly one word."""
    if word.literal:
        return True
    if word.unsupported is not None or word.has_glob:
        return False
    return all(p.quoted or p.kind in ("literal", "tilde") for p in word.parts)


def _resolve_long(
    g: Grammar, name: str, wanted: frozenset[str]
) -> tuple[tuple[str, Arity] | None, frozenset[str]]:
    """The table entry ``name`` spells, and the wanted names it may abbreviate when unresolved."""
    entry = g.long.get(name)
    if entry is None and g.single_dash_long and name.startswith("--"):
        entry = g.long.get(name[1:])  # Go's flag package reads `--name` as `-name`
    if entry is not None:
        return entry, frozenset()
    dashes = 2 if name.startswith("--") else 1
    if len(name) <= dashes:
        return None, frozenset()
    wanted_hits = frozenset(w for w in wanted if w.startswith(name) and w != name)
    if not g.abbreviations:
        return None, wanted_hits  # an unknown spelling; a prefix of a wanted one stays "maybe"
    candidates = {entry for spelling, entry in g.long.items() if spelling.startswith(name)}
    canonical = {c for c, _ in candidates}
    if len(canonical) == 1 and not (wanted_hits - canonical):
        return next(iter(candidates)), frozenset()
    return None, wanted_hits or frozenset(canonical & wanted)


def parse_args(
    program: Grammar | None,
    words: Sequence[Word],
    *,
    wanted: frozenset[str] = frozenset(),
) -> ParsedArgs:
    """Read ``words`` (a command's arguments after its name) with ``program``'s grammar.

    Args:
        program: The program's table, or ``None`` for the generic reading.
        words: The arguments.
        wanted: Canonical long names a rule asks for: a spelling that may abbreviate one of
            them is reported in :attr:`ParsedArgs.maybe` rather than as another option.
    """
    g = program or _GENERIC
    generic = program is None
    options: list[Option] = []
    operands: list[Word] = []
    settled: list[bool] = []
    positions: list[int] = []
    plain: list[bool] = []
    bare = True  # no option-like word so far
    maybe: set[str] = set()
    uncertain: set[int] = set()
    unsure = False
    steady = True  # nothing so far can move where the next operand stands
    ended = False
    choosing = bool(g.subcommands)  # the next operand selects a subcommand
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.literal:
            if not ended and may_be_option(word):
                unsure = True
            operands.append(word)
            settled.append(False)
            positions.append(index - 1)
            plain.append(False)
            steady = False if not _word_count_fixed(word) or may_be_option(word) else steady
            bare = bare and _word_count_fixed(word) and not may_be_option(word)
            continue
        text = word.value
        if not ended and text == "--":
            ended = True
            continue
        if ended or text == "-" or not text.startswith("-"):
            if choosing:
                sub = g.subcommands.get(text)
                if sub is None and text not in g.known_subcommands:
                    uncertain.add(len(operands))  # an alias may stand for anything
                g, generic = (sub, False) if sub is not None else (_GENERIC, True)
                choosing = bool(g.subcommands)
            elif not g.permute:
                ended = True
            operands.append(word)
            settled.append(steady)
            positions.append(index - 1)
            plain.append(bare)
            continue
        bare = False
        if g.numeric and text[1:].isdigit():
            options.append(Option(text[:1] + "N", word))
            continue
        long_form = text.startswith("--") or g.single_dash_long
        if long_form:
            name, equals, glued = text.partition("=")
            entry, hits = _resolve_long(g, name, wanted)
            if entry is None:
                maybe.update(hits)
                unsure = True
                options.append(Option(name, _glued(glued) if equals else None, known=False))
                if generic and not equals:
                    steady = False  # it may take the next word
                continue
            canonical, arity = entry
            value: Word | None = _glued(glued) if equals else None
            if arity == "value" and not equals and index < len(words):
                value = words[index]
                index += 1
            options.append(Option(canonical, value))
            options.extend(Option(extra) for extra in g.also.get(name, ()))
            continue
        letters = text[1:]
        for position, letter in enumerate(letters):
            spelled = "-" + letter
            entry = g.short.get(spelled)
            if entry is None:
                unsure = True
                options.append(Option(spelled, known=False))
                if generic and position == len(letters) - 1:
                    steady = False  # it may take the next word
                continue
            canonical, arity = entry
            rest = letters[position + 1 :]
            if arity == "flag":
                options.append(Option(canonical))
                options.extend(Option(extra) for extra in g.also.get(spelled, ()))
                continue
            if rest:
                options.append(Option(canonical, _glued(rest)))
            elif arity == "value" and index < len(words):
                options.append(Option(canonical, words[index]))
                index += 1
            else:
                options.append(Option(canonical))
            break
    for glob, implied in g.implied:
        if any(w.literal and glob_match(glob, w.value) for w in operands):
            options.append(Option(implied))
    return ParsedArgs(
        tuple(options),
        tuple(operands),
        tuple(settled),
        unsure=unsure,
        maybe=frozenset(maybe),
        uncertain=frozenset(uncertain),
        positions=tuple(positions),
        plain=tuple(plain),
    )


def _glued(text: str) -> Word:
    return literal_word(text)
