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
* **Aliases** a program defines itself read as the words they stand for: ``docker rmi`` is
  ``docker image rm``, ``terraform destroy`` is ``terraform apply -destroy``, so a rule written
  either way reads a command written either way alike.
* **Kinds of object** (``kubectl delete po x``): every spelling of a kind — short name, plural,
  ``kind.group``, ``kind/name`` — reads as one canonical name.
* **Operands that imply an option** (``git push origin +main`` forces) are read by the word's
  fixed literal prefix, so ``+$BRANCH`` forces too, and ``$BRANCH`` may.
* **Options read from a file** (``curl -K file``) leave the reading unsure: what the file adds
  is not in the line.
* A program without a table is read generically: every option is unknown, so a wanted option
  that is missing while any other option is present is "maybe" (the other one may be a synonym or
  an abbreviation), and an option may take the next word as its value.

Whatever this reading cannot settle is reported as *unsure*; the matcher turns that into
"unevaluable" for a deny or ask rule (S12), never into "no match".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, final

from robota.core.permissions._shell_words import Word, glob_has_magic, literal_word

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
            Each glob is a literal head and a trailing ``*``; a word only partly known is read
            by its fixed literal prefix.
        also: Canonical options one spelling adds to its own (``git branch -D`` is ``--delete
            --force``).
        multi_letter: Short spellings may be several letters (zip's ``-TT``, ``-db``); at each
            place in a cluster the longest spelling that fits is read.
        short_equals: A short option's glued value may be written after ``=``, which is not part
            of the value (zip's ``-TT=cmd``).
        aliases: Subcommand names that stand for other words (``rmi`` → ``image rm``): the reading
            goes on with those words in its place, so both spellings read alike.
        kinds: The first operand names a kind of object (``kubectl delete po x``): every spelling
            (lower-cased) to the canonical one. ``kind/name`` reads as the kind and the name,
            ``kind.group`` as the kind, a list (``po,svc``) or names of several kinds as
            uncertain; a kind the table does not name is kept as written.
        option_files: Canonical options whose value is a file that adds options or names the
            objects (``curl -K``, ``kubectl delete -f``): the reading is unsure.
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
    multi_letter: bool = False
    short_equals: bool = False
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    kinds: Mapping[str, str] = field(default_factory=dict)
    option_files: frozenset[str] = frozenset()


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
    multi_letter: bool = False,
    short_equals: bool = False,
    aliases: Mapping[str, str] | None = None,
    kinds: str = "",
    option_files: str = "",
) -> Grammar:
    """A :class:`Grammar` from a compact spec.

    ``spec`` lists options separated by blanks; synonyms are joined by ``|``; a trailing ``=``
    means the option takes a value, ``=?`` an optional (glued-only) value. The canonical name of
    a group is its first long spelling (else its first spelling). ``-D>--delete,--force`` says
    that a spelling stands for several options at once::

        grammar("-r|-R|--recursive -f|--force -i --interactive=? --preserve-root=?")

    ``aliases`` maps a subcommand name to the words it stands for (``{"rmi": "image rm"}``);
    ``kinds`` lists the spellings of each kind of object, canonical first, one kind per line
    (``"pod pods po"``); ``option_files`` names the options whose value is a file of further
    options (any spelling of them).
    """
    short: dict[str, tuple[str, Arity]] = {}
    long: dict[str, tuple[str, Arity]] = {}
    also: dict[str, tuple[str, ...]] = {}
    for glob, _ in implied:
        head, star, tail = glob.partition("*")
        if not star or tail or glob_has_magic(head):
            raise ValueError(f"implied glob {glob!r}: a literal head and a trailing '*'")
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
        multi_letter=multi_letter,
        short_equals=short_equals,
        aliases={name: tuple(words.split()) for name, words in (aliases or {}).items()},
        kinds={
            spelling.lower(): line.split()[0]
            for line in kinds.strip().splitlines()
            for spelling in line.split()
        },
        option_files=frozenset((long | short)[name][0] for name in option_files.split()),
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
            only known at run time, a prefix that may abbreviate another option, a file of
            options or objects named by :attr:`Grammar.option_files`).
        maybe: Canonical names of wanted options that an unresolved spelling may stand for, and
            of implied options an operand only partly known may imply.
        uncertain: Operand positions whose meaning is uncertain (a subcommand that may be an
            alias, a list of kinds of object).
        positions: Per operand, its index in the words read (an alias's words, and the two
            operands ``kind/name`` reads as, have the index of the word they were read from).
        plain: Per operand: no option and no word that may become one stands before it — what
            "settled" means to a reader that knows no grammar. A deny rule concludes "no match"
            from an operand only when it is settled in both readings, so knowing a program
            never makes a rule weaker than not knowing it.
        selections: Operand positions the grammar reads by their place: a subcommand's name
            (``push`` in ``git push``) or the kind of object (``ns`` in ``kubectl delete ns``).
            Every other operand may be one of a list (``rm a b``, ``kubectl delete ns a b``).
    """

    options: tuple[Option, ...]
    operands: tuple[Word, ...]
    settled: tuple[bool, ...]
    unsure: bool = False
    maybe: frozenset[str] = frozenset()
    uncertain: frozenset[int] = frozenset()
    positions: tuple[int, ...] = ()
    plain: tuple[bool, ...] = ()
    selections: frozenset[int] = frozenset()


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
) -> tuple[tuple[str, Arity] | None, frozenset[str], tuple[str, ...]]:
    """The table entry ``name`` spells, and what else it stands for.

    Returns the entry, the wanted names it may abbreviate when unresolved, and the full
    spellings it stands for (whose :attr:`Grammar.also` apply).
    """
    entry = g.long.get(name)
    if entry is None and g.single_dash_long and name.startswith("--"):
        entry = g.long.get(name[1:])  # Go's flag package reads `--name` as `-name`
        if entry is not None:
            return entry, frozenset(), (name[1:],)
    if entry is not None:
        return entry, frozenset(), (name,)
    dashes = 2 if name.startswith("--") else 1
    if len(name) <= dashes:
        return None, frozenset(), ()
    wanted_hits = frozenset(w for w in wanted if w.startswith(name) and w != name)
    if not g.abbreviations:
        return None, wanted_hits, ()  # an unknown spelling; a prefix of a wanted one is "maybe"
    candidates = {
        spelling: entry for spelling, entry in g.long.items() if spelling.startswith(name)
    }
    canonical = {c for c, _ in candidates.values()}
    if len(canonical) == 1 and not (wanted_hits - canonical):
        return next(iter(candidates.values())), frozenset(), tuple(candidates)
    return None, wanted_hits or frozenset(canonical & wanted), ()


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
    return _Reading(program, words, wanted).run()


class _Reading:
    """One pass of :func:`parse_args` over a command's words."""

    def __init__(self, program: Grammar | None, words: Sequence[Word], wanted: frozenset[str]):
        self.g = program or _GENERIC
        self.generic = program is None
        self.wanted = wanted
        # (word, its index in `words`, read from an alias rather than written)
        self.queue: deque[tuple[Word, int, bool]] = deque(
            (word, index, False) for index, word in enumerate(words)
        )
        self.options: list[Option] = []
        self.operands: list[Word] = []
        self.settled: list[bool] = []
        self.positions: list[int] = []
        self.plain: list[bool] = []
        self.maybe: set[str] = set()
        self.uncertain: set[int] = set()
        self.selections: set[int] = set()
        self.unsure = False
        self.bare = True  # no option-like word so far
        self.steady = True  # nothing so far can move where the next operand stands
        self.ended = False
        self.choosing = bool(self.g.subcommands)  # the next operand selects a subcommand
        self.kind_at: int | None = None  # the operand that names a kind of object
        self.kind_expected = False
        self.other_kinds: set[str] = set()  # kinds named by later `kind/name` operands
        self.after_kind_unknown = False  # a word only known at run time after the kind

    def next_value(self) -> Word | None:
        if not self.queue:
            return None
        return self.queue.popleft()[0]

    def add_operand(self, word: Word, position: int, *, steady: bool) -> None:
        self.operands.append(word)
        self.settled.append(steady)
        self.positions.append(position)
        self.plain.append(self.bare)

    def run(self) -> ParsedArgs:
        while self.queue:
            word, position, synthetic = self.queue.popleft()
            if not word.literal:
                self.dynamic(word, position)
            elif not self.ended and word.value == "--":
                self.ended = True
            elif self.ended or word.value == "-" or not word.value.startswith("-"):
                self.operand(word, position)
            else:
                if not synthetic:
                    self.bare = False
                self.option(word)
        self.implied()
        if self.kind_at is not None and (
            self.other_kinds - {self.operands[self.kind_at].value} or self.after_kind_unknown
        ):
            self.uncertain.add(self.kind_at)  # several kinds, or names only known at run time
        return ParsedArgs(
            tuple(self.options),
            tuple(self.operands),
            tuple(self.settled),
            unsure=self.unsure,
            maybe=frozenset(self.maybe),
            uncertain=frozenset(self.uncertain),
            positions=tuple(self.positions),
            plain=tuple(self.plain),
            selections=frozenset(self.selections),
        )

    def dynamic(self, word: Word, position: int) -> None:
        if not self.ended and may_be_option(word):
            self.unsure = True
        self.kind_expected = False
        if self.kind_at is not None:
            self.after_kind_unknown = True
        self.operands.append(word)
        self.settled.append(False)
        self.positions.append(position)
        self.plain.append(False)
        if not _word_count_fixed(word) or may_be_option(word):
            self.steady = False
        self.bare = self.bare and _word_count_fixed(word) and not may_be_option(word)

    def operand(self, word: Word, position: int) -> None:
        g = self.g
        text = word.value
        if self.choosing:
            alias = g.aliases.get(text)
            if alias is not None:
                # The words it stands for are read in its place (`rmi` → `image rm`).
                self.queue.extendleft((literal_word(w), position, True) for w in reversed(alias))
                return
            sub = g.subcommands.get(text)
            if sub is None and text not in g.known_subcommands:
                self.uncertain.add(len(self.operands))  # an alias may stand for anything
            self.g, self.generic = (sub, False) if sub is not None else (_GENERIC, True)
            self.choosing = bool(self.g.subcommands)
            self.kind_expected = bool(self.g.kinds)
            self.selections.add(len(self.operands))
            self.add_operand(word, position, steady=self.steady)
            return
        if not g.permute:
            self.ended = True
        if self.kind_expected:
            self.kind_expected = False
            self.kind(word, position)
            return
        if self.kind_at is not None and "/" in text:
            kind, _, name = text.partition("/")
            self.other_kinds.add(_kind(g, kind))
            word = literal_word(name)  # `ns/prod` names `prod` (of its kind)
        self.add_operand(word, position, steady=self.steady)

    def kind(self, word: Word, position: int) -> None:
        """S12: the operand that names a kind of object, in its canonical spelling."""
        text = word.value
        self.kind_at = len(self.operands)
        self.selections.add(self.kind_at)
        if "," in text:
            self.uncertain.add(self.kind_at)  # `po,svc`: several kinds at once
            self.add_operand(word, position, steady=self.steady)
            return
        kind, slash, name = text.partition("/")
        self.add_operand(literal_word(_kind(self.g, kind)), position, steady=self.steady)
        if slash:
            self.add_operand(literal_word(name), position, steady=self.steady)

    def option(self, word: Word) -> None:
        g = self.g
        text = word.value
        if g.numeric and text[1:].isdigit():
            self.options.append(Option(text[:1] + "N", word))
            return
        if text.startswith("--") or g.single_dash_long:
            self.long_option(text)
        else:
            self.short_options(text[1:])

    def add_option(self, canonical: str, value: Word | None, extras: Sequence[str]) -> None:
        self.options.append(Option(canonical, value))
        self.options.extend(Option(extra) for extra in extras)
        if canonical in self.g.option_files:
            self.unsure = True  # S12: further options (or the objects) are in a file

    def long_option(self, text: str) -> None:
        g = self.g
        name, equals, glued = text.partition("=")
        entry, hits, spellings = _resolve_long(g, name, self.wanted)
        if entry is None:
            self.maybe.update(hits)
            self.unsure = True
            self.options.append(Option(name, _glued(glued) if equals else None, known=False))
            if self.generic and not equals:
                self.steady = False  # it may take the next word
            return
        canonical, arity = entry
        value: Word | None = _glued(glued) if equals else None
        if arity == "value" and not equals:
            value = self.next_value()
        extras = [extra for spelling in spellings for extra in g.also.get(spelling, ())]
        self.add_option(canonical, value, list(dict.fromkeys(extras)))

    def short_options(self, letters: str) -> None:
        g = self.g
        position = 0
        while position < len(letters):
            spelled = _short_spelling(g, letters, position)
            entry = g.short.get(spelled)
            if entry is None:
                self.unsure = True
                self.options.append(Option(spelled, known=False))
                if self.generic and position == len(letters) - 1:
                    self.steady = False  # it may take the next word
                position += 1
                continue
            position += len(spelled) - 1
            canonical, arity = entry
            rest = letters[position:]
            if arity == "flag":
                self.add_option(canonical, None, g.also.get(spelled, ()))
                continue
            if g.short_equals and rest.startswith("="):
                rest = rest[1:]
            if rest:
                self.add_option(canonical, _glued(rest), ())
            elif arity == "value":
                self.add_option(canonical, self.next_value(), ())
            else:
                self.add_option(canonical, None, ())
            return

    def implied(self) -> None:
        """S12: operands that stand for an option, read by what is fixed of each word."""
        for glob, implied in self.g.implied:
            head = glob[:-1]  # grammar() holds each to a literal head and a trailing `*`
            verdicts = [_implies(head, word) for word in self.operands]
            if "yes" in verdicts:
                self.options.append(Option(implied))
            elif "maybe" in verdicts:
                self.maybe.add(implied)


def _implies(head: str, word: Word) -> str:
    """Whether ``word`` begins with ``head``: ``"yes"``, ``"maybe"`` or ``"no"``."""
    if word.literal:
        return "yes" if word.value.startswith(head) else "no"
    if word.unsupported is not None:
        return "maybe"
    prefix: list[str] = []
    for part in word.parts:
        if part.kind != "literal":
            break
        prefix.append(part.text)
    fixed = "".join(prefix)
    if fixed.startswith(head):
        return "yes"
    return "maybe" if head.startswith(fixed) else "no"


def _short_spelling(g: Grammar, letters: str, position: int) -> str:
    """The short option spelled at ``position`` of a cluster (the longest, for zip's tables)."""
    if g.multi_letter:
        for end in range(len(letters), position + 1, -1):
            candidate = "-" + letters[position:end]
            if candidate in g.short:
                return candidate
    return "-" + letters[position]


def _kind(g: Grammar, text: str) -> str:
    lower = text.lower()
    if lower in g.kinds:
        return g.kinds[lower]
    base = lower.split(".", 1)[0]  # `deployments.apps`, `deployment.v1.apps`
    return g.kinds.get(base, text) if "." in lower else text


def _glued(text: str) -> Word:
    return literal_word(text)
