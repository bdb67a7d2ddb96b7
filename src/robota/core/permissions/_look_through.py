r"""What a program may run of its own arguments (S21: runs unless known not to).

Deny and ask rules (:mod:`._command_patterns`) and the catastrophic-removal check
(:mod:`._removal`) both ask the same question of a program that is not known to leave its
arguments alone — ``mywrapper git push``, ``tool --exec='rm -rf ~'``, ``docker exec web sh -c
"rm -rf /app/$DIR"``: may it run the program they care about? This module is the one reading of
that question (SECURITY.md, "One reading per boundary"):

* **Who may run them.** A program not in :data:`DATA_PROGRAMS`, or one named by a path outside
  the system's directories, or named without a directory in a line that changes ``PATH``
  (:func:`sets_path`) — :func:`may_run_arguments`. Names are compared case-folded
  (:func:`fold_name`), as macOS's file systems find programs.
* **Each argument as the program receives it**, and each value assigned in front of it
  (:func:`assignment_words`). A literal word is its value. A word with expansions is read the
  way the analysis reads ``eval`` of computed words: a parameter stands as itself (``${DIR}``),
  and anything else known only at run time — a substitution, a glob's file names, a special
  parameter — as an unknown parameter. A word that is *entirely* known
  only at run time (``tool "$CMD"``) therefore shows no program: the documented residual.
* **Heads.** A program may run the whole argument or what follows an ``=`` or ``:`` in it
  (``--exec=git push``, ``exec:rm``), the value glued to a short option (``-c'rm -rf x'``), or
  what follows an alias's ``!``.
* **The shell's reading, never raw tokens.** A head with nothing in it the shell reads specially
  is a command name followed by the program's further arguments. Any other head is read by
  :func:`~robota.core.permissions.analyze_command` as a script, and its commands — brace
  readings included — are looked at by name, so ``'r"m" -rf y'``, ``'\rm -rf y'`` and
  ``-c'rm -rf x'`` are ``rm``, and ``'echo rm -rf'`` and ``sed -n '/git push/p'`` are not. The
  program is counted only in command position, and in such text a name directly under ``/``
  (``/git``, a pattern between slashes) is not a program (:func:`program_name`).
* **Text that cannot be read** — it does not parse, or it hides what it runs — counts when it
  may name the program at all (:meth:`Sought.may_name`, a test over its characters that no
  quoting, brace or parameter trick defeats).
* **Nesting and work are bounded.** Commands found inside an argument are looked through in
  turn, up to :data:`MAX_DEPTH` levels; at that depth an argument that may name the program is
  unreadable. A :class:`Budget` bounds the heads read and the commands found per question, and
  past it what is left is unreadable: a line that names the program thousands of times asks
  rather than taking time that grows with the square of its length.

The words the analysis already listed as another command's (a wrapper's, ``xargs``'s, ``find
-exec``'s) are that command's, judged there: they are not looked through again as text.
"""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from robota.core.permissions._programs import runs_arguments
from robota.core.permissions._shell import CommandLine, SimpleCommand, analyze_command
from robota.core.permissions._shell_braces import expand_braces
from robota.core.permissions._shell_words import (
    Word,
    WordPart,
    glob_match,
    glob_unescape,
    literal_word,
    unescaped,
)
from robota.core.permissions._shell_wrappers import WRAPPERS

__all__ = [
    "MAX_DEPTH",
    "Budget",
    "Found",
    "Sought",
    "Unreadable",
    "argument_text",
    "assignment_words",
    "consumed_words",
    "fold_name",
    "look_through",
    "may_run_arguments",
    "program_name",
    "sets_path",
]

MAX_DEPTH: Final = 4
_BUDGET: Final = 64
_MAX_HEADS: Final = 32
# A head the shell reads as one plain word: no quote, blank, expansion, glob, brace or operator.
_PLAIN: Final = re.compile(r"[A-Za-z0-9_./+,@%^=:-]+")
# Quoting that spells characters the text does not show (`$'\x72m'`).
_SYNTHESIS: Final = re.compile(r"\$['\"]")
_BRACKET_SET: Final = re.compile(r"\[[^\]]*\]")
# Text whose own characters a parameter may rearrange into a name: one whose value the text
# itself sets or transforms (`x=r; y=m; $x$y`, `${X,,}`). A parameter set outside the text is
# known only at run time (the residual).
_TRAILING_DOTS: Final = re.compile(r"(?:/\.?)+$")
_BRACE_CHARS: Final = frozenset("{}")
_ASSIGNS: Final = re.compile(r"(?:^|[\s;&|(])([A-Za-z_]\w*)(?:\[[^\]]*\])?\+?=")
_SETS: Final = re.compile(
    r"\b(?:for|select|case|read|readarray|mapfile|getopts|printf|declare|typeset|local|export)\b"
)
_USES: Final = re.compile(r"\$\{?([A-Za-z_]\w*)")
_TRANSFORMS: Final = re.compile(r"\$\{[#!]|\$\{\w+[^}\w]")
_SEPARATORS: Final = re.compile(r"[\s;&|()<>`]+")  # what ends a word, or opens a script
_QUOTING: Final = str.maketrans("", "", "'\"\\")
_CONTINUATION: Final = "\\\n"
_GLOB_CHARS: Final = frozenset("*?[")
# Root-owned directories whose programs are the system's own (a data program named there is
# the one DATA_PROGRAMS describes; one named anywhere else may be any file).
_SYSTEM_BIN: Final = frozenset({"/bin", "/usr/bin", "/sbin", "/usr/sbin"})
_UNKNOWN: Final = "${_}"  # a part of an argument known only at run time
_PATH_SET: Final = re.compile(r"PATH\+?=")
_DECLARATIONS: Final = frozenset({"export", "declare", "typeset", "local", "readonly"})
_PATH_SETTERS: Final = frozenset({*_DECLARATIONS, "read", "hash"})

UnreadableKind: TypeAlias = Literal["unparseable", "hidden", "opaque", "limit"]


def fold_name(name: str) -> str:
    """``name`` as a file system that ignores letter case compares it (``GIT`` → ``git``).

    S12: macOS's file systems (APFS, HFS+) fold case and Unicode normalisation, so ``GIT`` and
    ``/usr/bin/RM`` run git and rm. Deny and ask rules and the catastrophic-removal check read
    a program's name folded; allow rules compare it exactly as written.
    """
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


def program_name(written: str, *, in_text: bool = False) -> str | None:
    """The program a command name runs, without its directory, folded (``/usr/bin/GIT``: ``git``).

    With ``in_text`` — a command name found by reading a program's argument text as a script
    (``sed -n '/git push/p'``, ``awk '/rm -rf/'``, where a pattern between slashes reads as a
    command ``/git``) — a name directly under the root (``/git``, ``//rm``) is ``None``: no
    system installs a program there, so in free text it is a pattern, not a program. A command
    the line itself runs (``/rm -rf /``) is always read by its name: whatever file is there runs.
    """
    if "/" not in written:
        return fold_name(written)
    normal = posixpath.normpath(written)
    if in_text and normal.startswith("/") and "/" not in normal.lstrip("/"):
        return None
    return fold_name(posixpath.basename(normal))


def may_run_arguments(command: SimpleCommand, *, path_set: bool = False) -> bool:
    """Whether ``command`` may run one of its arguments as a command (S21).

    Only the programs of :data:`DATA_PROGRAMS`, called by their name or from a system
    directory (``cat``, ``/bin/cat``), are known not to; ``./cat`` or ``/tmp/cat`` is whatever
    file is there. ``path_set``: the line changes where a program named without a directory is
    found (:func:`sets_path`), so ``cat`` there is whatever file is found as well.
    """
    if not command.words:
        return False
    written = command.words[0]
    if runs_arguments(command):
        return True  # not a data program, or git running an alias or an external command
    if "/" not in written:
        return path_set
    return posixpath.dirname(posixpath.normpath(written)) not in _SYSTEM_BIN


def sets_path(line: CommandLine) -> bool:
    """Whether ``line`` changes where the shell finds a program named without a directory.

    S21: ``PATH=.:$PATH cat …`` runs whatever ``./cat`` is, as ``./cat …`` does. An assignment
    to ``PATH`` anywhere in the line (in front of a command, handed to ``env``, alone, through
    ``export`` and the other declarations, or read by ``read``) and ``hash -p`` count; what a
    program named without a directory then runs is not known to be a data program.
    """
    if any(_PATH_SET.match(text) for text in line.assignments):
        return True
    for command in line.commands:
        if any(_PATH_SET.match(text) for text in command.assignments):
            return True
        name = program_name(command.words[0]) if command.words else None
        if name not in _PATH_SETTERS:
            continue
        values = [word.value for word in command.argv[1:]]
        if name in _DECLARATIONS and any(_PATH_SET.match(value) for value in values):
            return True
        if name == "read" and "PATH" in values:
            return True
        if name == "hash" and any(v.startswith("-") and "p" in v for v in values):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Sought:
    """The programs a look-through looks for: globs over names without a directory."""

    names: tuple[str, ...]

    def named(self, written: str, *, in_text: bool = False) -> bool:
        """Whether the command name ``written`` runs one of the sought programs.

        ``in_text``: the name was found reading argument text as a script (see
        :func:`program_name`).
        """
        name = program_name(written, in_text=in_text)
        return name is not None and any(glob_match(fold_name(glob), name) for glob in self.names)

    def may_name(self, text: str) -> bool:
        """Whether some reading of ``text`` may put a sought program in command position.

        Sound for what the text itself spells, and cheap: a command name is made of the text's
        own characters, with quotes, backslashes and line continuations removed; only
        expansions can rearrange them (a brace expansion, a parameter the text sets or
        transforms), and only ANSI-C or locale quoting can spell others. Names are compared
        folded (:func:`fold_name`). A glob expands to names its last component matches. What
        is only known at run time — a parameter set outside the text, a substitution's output,
        the names a glob of wildcards alone matches (``*``) — is the documented residual, as it
        is for a program's own arguments. (The commands a substitution runs are in the text,
        and are read by name like any other.)
        """
        if _SYNTHESIS.search(text):
            return True
        folded = fold_name(text)
        rearranged = "$" in text and _rearranges(text)
        tokens: list[tuple[str, bool]] = []
        # A shell the text reaches joins a line continuation's two lines before it reads a
        # word (`g\<newline>it`): the text is read with them joined, and as it stands.
        joined = folded.replace(_CONTINUATION, "")
        readings = (folded, joined) if joined != folded else (folded,)
        for reading in readings:
            for token in _SEPARATORS.split(reading.translate(_QUOTING)):
                if token:
                    tokens.extend(
                        _brace_readings(token) if _BRACE_CHARS & set(token) else [(token, True)]
                    )
        for literal, exact in _literal_parts(self.names):
            if not literal:
                return True
            if rearranged and all(ch in folded for ch in literal):
                return True
            for token, whole in tokens:
                if _heads_name(token, literal, exact and whole):
                    return True
                if any(ch in _GLOB_CHARS for ch in token):
                    component = token.rsplit("/", 1)[-1]
                    if _BRACKET_SET.sub("", component).strip("*?") and (
                        not exact or glob_match(component, literal)
                    ):
                        return True
        return False


def _rearranges(text: str) -> bool:
    """A parameter in ``text`` takes a value the text sets, or transforms one (``${X,,}``)."""
    if _TRANSFORMS.search(text):
        return True
    used = set(_USES.findall(text))
    return bool(used) and (
        bool(used & set(_ASSIGNS.findall(text))) or _SETS.search(text) is not None
    )


def _brace_readings(token: str) -> list[tuple[str, bool]]:
    """``token`` and what bash's brace expansion makes of it, each with whether it is whole.

    A brace group the token split cuts (``{"a b",rm}``) cannot be expanded here: the token
    without its braces and commas is then searched for the name anywhere (not whole).
    """
    word = Word(token, (WordPart("literal", token),), "brace expansion")
    expanded = expand_braces(word)
    if expanded is None:
        return [(token, True), (token.replace(",", "").replace("{", "").replace("}", ""), False)]
    return [(token, True), *((w.value, True) for w in expanded)]


def _heads_name(token: str, literal: str, exact: bool) -> bool:
    """Whether a head of ``token`` (see :func:`_heads`) may name ``literal`` without a directory.

    A name is the end of a head (trailing ``/`` and ``/.`` aside), and a head starts at the
    token's start, after ``/`` (a directory), ``=``, ``:`` or ``!``, or inside a short-option
    cluster. ``exact`` false: ``literal`` only begins the name (a rule's glob).
    """
    if not exact:
        return literal in token
    core = _TRAILING_DOTS.sub("", token) if "/" in token else token
    if not core.endswith(literal):
        return False
    start = len(core) - len(literal)
    if start == 0 or core[start - 1] in "/=:!":
        return True
    return core.startswith("-") and not core.startswith("--") and core[1:start].isalnum()


@functools.lru_cache(maxsize=64)
def _literal_parts(names: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    """Per sought name (folded), what :func:`_literal_part` says of it."""
    return tuple(_literal_part(fold_name(glob)) for glob in names)


def _literal_part(glob: str) -> tuple[str, bool]:
    """The literal text every name ``glob`` matches starts with, and whether that is all of it."""
    first = next((i for i, ch in unescaped(glob) if ch in _GLOB_CHARS), None)
    if first is None:
        return glob_unescape(glob), True
    return glob_unescape(glob[:first]), False


class Budget:
    """How many heads and found commands one question may still examine (see the module)."""

    __slots__ = ("remaining",)

    def __init__(self, remaining: int = _BUDGET) -> None:
        self.remaining = remaining

    def spend(self) -> bool:
        """Take one unit; ``False`` when none is left."""
        if self.remaining <= 0:
            return False
        self.remaining -= 1
        return True


@dataclass(frozen=True, slots=True)
class Found:
    """A command the looked-through program may run, whose name is a sought program.

    Attributes:
        command: The command.
        line: The script it was read from (its other commands, its ``cd`` s and pipes), or
            ``None`` when it is made of the looked-through program's own words.
    """

    command: SimpleCommand
    line: CommandLine | None = None


@dataclass(frozen=True, slots=True)
class Unreadable:
    """Text the program may run that may name a sought program but cannot be read.

    Attributes:
        text: The text.
        kind: ``"unparseable"``; ``"hidden"`` (it hides what it runs); ``"opaque"`` (it runs
            something kept elsewhere: a script file, a computed ``eval``); ``"limit"`` (past
            :data:`MAX_DEPTH` or the :class:`Budget`).
    """

    text: str
    kind: UnreadableKind


def argument_text(word: Word) -> str | None:
    """The text a program receives for ``word``, with what is known only at run time marked.

    A parameter stands as itself (``${NAME}``), ``~`` as ``${HOME}``; a substitution, a glob's
    file names, ``~user`` and special parameters as an unknown parameter. Brace expansion is
    read the POSIX way here (bash's reading is a command the analysis lists apart). ``None``
    for a word the analysis does not read exactly.
    """
    if word.unsupported == "brace expansion":
        word = Word(word.source, word.parts)
    elif word.unsupported is not None:
        return None
    pieces: list[str] = []
    for part in word.parts:
        if part.kind == "literal":
            pieces.append(part.text)
        elif part.kind == "parameter":
            pieces.append("${" + part.text + "}")
        elif part.kind == "tilde" and not part.text:
            pieces.append("${HOME}")
        else:
            pieces.append(_UNKNOWN)
    return "".join(pieces)


def consumed_words(line: CommandLine) -> tuple[frozenset[int], ...]:
    """Per command of ``line``, the words (by identity) a command it runs has as its own."""
    consumed: list[set[int]] = [set() for _ in line.commands]
    for command in line.commands:
        parent = command.parent
        if parent is not None and 0 <= parent < len(consumed):
            consumed[parent].update(id(word) for word in command.argv)
    return tuple(frozenset(ids) for ids in consumed)


def _head_starts(text: str) -> Iterator[int]:
    yield 0
    if text.startswith("-") and not text.startswith("--"):
        end = 2
        while end <= len(text) and text[end - 1].isalnum():
            yield end  # the value glued to a short option in a cluster
            end += 1
    for match in re.finditer("[=:]", text):
        yield match.end()


def _heads(text: str) -> list[str] | None:
    """What the program may run of an argument (see the module); ``None`` past the limit."""
    starts: list[int] = []
    for start in _head_starts(text):
        for at in (start, start + 1 if text.startswith("!", start) else -1):
            if 0 <= at < len(text) and at not in starts:
                starts.append(at)
        if len(starts) > _MAX_HEADS:
            return None  # checked as they come: a word of many `=` is never cut up whole
    return [text[start:] for start in starts]


def look_through(
    command: SimpleCommand,
    sought: Sought,
    *,
    budget: Budget,
    consumed: frozenset[int] = frozenset(),
    depth: int = 0,
    path_set: bool = False,
) -> Iterator[Found | Unreadable]:
    """The sought commands ``command`` may run of its arguments, and what cannot be read.

    The caller decides whether ``command`` may run its arguments at all
    (:func:`may_run_arguments`) and judges each :class:`Found` command itself. ``path_set``:
    the line ``command`` is in changes ``PATH`` (:func:`sets_path`); the programs it runs
    inherit it.
    """
    for argument in _arguments(command, consumed):
        word = argument.word
        text = argument_text(word)
        if text is None:
            if sought.may_name(word.source):
                yield Unreadable(word.source, "hidden")
            continue
        if not sought.may_name(text):
            continue
        if depth >= MAX_DEPTH:
            yield Unreadable(text, "limit")
            continue
        heads = _heads(text) if argument.cut else [text]
        if heads is None:
            yield Unreadable(text, "limit")
            continue
        for head in heads:
            reading = _Head(command, head, argument.index, depth, path_set)
            for item in _read_head(reading, sought, budget):
                yield item
                if isinstance(item, Unreadable) and item.kind == "limit":
                    return


def _arguments(command: SimpleCommand, consumed: frozenset[int]) -> Iterator[_Argument]:
    """The texts ``command`` is given that it may run (see :func:`look_through`)."""
    argv = command.argv
    for index in range(1, len(argv)):
        if id(argv[index]) not in consumed:
            yield _Argument(argv[index], index, cut=True)
    # A value assigned in front of it is one more text it may run, as `env NAME=value cmd`
    # and `cmd NAME=value` hand it over (`CC='…' make`). A command a wrapper runs was handed
    # them by the wrapper, whose own are read there (`CC=… sudo make`, `env CC=… make`).
    if command.via not in WRAPPERS:
        for word in assignment_words(command):
            yield _Argument(word, None, cut=True)
    # The text a here-document or here-string gives it on its standard input is one more
    # argument it may run (`python3 <<EOF`, `docker exec -i c sh <<EOF`), read as a whole.
    if command.stdin is not None:
        yield _Argument(command.stdin, None, cut=False)


@dataclass(frozen=True, slots=True)
class _Argument:
    """A text the program is given.

    Its word, its index among the program's words (``None`` for a value assigned in front or
    its standard input), and whether heads are cut from it.
    """

    word: Word
    index: int | None
    cut: bool


@dataclass(frozen=True, slots=True)
class _Head:
    """One head of an argument, with where it was found."""

    command: SimpleCommand
    text: str
    index: int | None
    depth: int
    path_set: bool

    @property
    def following(self) -> Sequence[Word]:
        """The program's words after the argument (none after a value or its input)."""
        return () if self.index is None else self.command.argv[self.index + 1 :]


def assignment_words(command: SimpleCommand) -> list[Word]:
    """The values assigned in front of ``command`` (or handed to it by ``env``), as words.

    :attr:`SimpleCommand.assignments` holds the text as written in front of the command
    (``CC='git push'``) and the word's value when ``env`` handed it over (``CC=git push``); both
    readings are kept, the written one read by the shell analysis as the word it is.
    """
    words: list[Word] = []
    for text in command.assignments:
        words.append(literal_word(text))
        line = analyze_command(": " + text)
        colon = [c for c in line.commands if c.via is None and c.words[:1] == (":",)]
        if len(colon) == 1 and len(colon[0].argv) == 2 and colon[0].argv[1].value != text:
            words.append(colon[0].argv[1])
    return words


def _read_head(head: _Head, sought: Sought, budget: Budget) -> Iterator[Found | Unreadable]:
    command, text = head.command, head.text
    if _PLAIN.fullmatch(text):
        if sought.named(text):
            if not budget.spend():
                yield Unreadable(text, "limit")
                return
            yield Found(_joined(command, (literal_word(text),), head.following))
        return
    if not sought.may_name(text):
        return
    if not budget.spend():
        yield Unreadable(text, "limit")
        return
    line = analyze_command(text)
    if line.parsed:
        consumed = consumed_words(line)
        commands = line.commands
        last = line.shape[-1] if line.shape else len(commands) - 1
        path_set = head.path_set or sets_path(line)
        for position, inner in enumerate(commands):
            if sought.named(inner.words[0], in_text=True):
                if not budget.spend():
                    yield Unreadable(text, "limit")
                    return
                yield Found(inner, line)
                if position == last and head.index is not None and head.following:
                    # A program that joins its words for a shell (as ssh does) runs the rest
                    # of its arguments as this command's.
                    yield Found(_joined(command, inner.argv, head.following), line)
            elif may_run_arguments(inner, path_set=path_set):
                yield from look_through(
                    inner,
                    sought,
                    budget=budget,
                    consumed=consumed[position],
                    depth=head.depth + 1,
                    path_set=path_set,
                )
    if not line.parsed:
        yield Unreadable(text, "unparseable")
    elif line.hidden:
        yield Unreadable(text, "hidden")
    elif not line.complete:
        yield Unreadable(text, "opaque")


def _joined(
    command: SimpleCommand, first: Sequence[Word], following: Sequence[Word]
) -> SimpleCommand:
    argv = (*first, *following)
    return SimpleCommand(
        tuple(w.value for w in argv),
        command.opaque_arguments,
        argv,
        via=command.via,
        moved=command.moved,
    )
