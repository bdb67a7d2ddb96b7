"""Reading a command rule's pattern (S12): its words as globs, its commands and its operators.

A rule such as ``Bash(sudo *)``, ``Bash(rm -rf ~/*)`` or ``Bash(curl * | sh)`` is written by the
operator in shell syntax, but it is a *pattern*, not a command line: it is never run, so nothing
in it is given a wrapper's or a shell's meaning. ``sudo *`` names the program ``sudo`` followed
by anything (not "whatever sudo runs"), ``bash -c *`` names ``bash`` with ``-c``, and ``curl * |
sh`` is two commands joined by a pipe. The shell grammar (tree-sitter-bash, as in
:mod:`._shell`) says where the commands, operators and words are, and the analysis's own word
reader (:func:`._shell_words.read_word`) does the quote removal, so ``'a b'`` is one word in a
rule exactly as in a command.

Each word becomes a glob (the syntax of :meth:`Word.pattern`: literal glob characters escaped
with a backslash). ``~``, ``$HOME`` and ``${HOME}`` stand for the home directory and are kept as
a *symbol*, and any other ``$NAME`` as a symbol of its own, matched against the same symbol in a
command's words (:func:`word_glob` reads a command's words the same way) and, where the home
directory is known, against its value (:func:`with_home`). What a pattern cannot be read as —
a substitution, ``~user``, a subshell, a control structure, text the command analysis refuses
(:func:`~robota.core.permissions.analyze_command`: a lone surrogate, a control character) —
makes :func:`read_pattern` return ``None``; the matcher then answers "unevaluable" for each call
the rule is asked about, so a deny or ask rule the operator mistyped asks rather than failing
open.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from robota.core.permissions._shell import analyze_command
from robota.core.permissions._shell_redirects import hung_words
from robota.core.permissions._shell_syntax import REDIRECTS, WORD_NODES, Unparseable, parse
from robota.core.permissions._shell_words import Word, literal_word, read_word

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = [
    "HOME_SYMBOL",
    "Pattern",
    "PatternCommand",
    "has_symbol",
    "read_pattern",
    "widen",
    "with_home",
    "word_glob",
]

_PREFIX_SUFFIX: Final = ":*"
# Private-use characters never occur in a command word after quote removal of real text we read
# as a value; they stand for a value known only where the command runs.
HOME_SYMBOL: Final = "\ue000"
_NAME_OPEN: Final = "\ue001"
_NAME_CLOSE: Final = "\ue002"
_SYMBOLS: Final = re.compile(f"{HOME_SYMBOL}|{_NAME_OPEN}[^{_NAME_CLOSE}]*{_NAME_CLOSE}")
_GLOB_META: Final = frozenset("*?[]\\")
_OPERATORS: Final = frozenset({"&&", "||", "|", "|&"})


@dataclass(frozen=True, slots=True)
class PatternCommand:
    """One command of a rule's pattern.

    Attributes:
        words: Glob patterns (see :func:`word_glob`), the program first.
        open_ended: A trailing ``*`` (or the ``:*`` suffix): any further arguments.
        assignments: ``NAME=value`` assignments written before the program, as written.
    """

    words: tuple[str, ...]
    open_ended: bool
    assignments: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pattern:
    """A rule's pattern: its commands and the operators between them."""

    commands: tuple[PatternCommand, ...]
    operators: tuple[str, ...]


def _escape(text: str) -> str:
    return "".join("\\" + ch if ch in _GLOB_META else ch for ch in text)


def word_glob(word: Word) -> str | None:
    """``word`` as a glob whose home and parameter expansions are kept as symbols.

    Literal characters are escaped, unquoted glob constructs kept, ``~`` / ``$HOME`` /
    ``${HOME}`` become :data:`HOME_SYMBOL` and any other parameter a symbol of its own name.
    ``None`` when part of the word can only be known at run time in any other way (a
    substitution, ``~user``, a special parameter) or the word is not read exactly.
    """
    if word.unsupported is not None:
        return None
    pieces: list[str] = []
    for part in word.parts:
        kind = part.kind
        if kind == "literal":
            pieces.append(_escape(part.text))
        elif kind == "glob":
            pieces.append(part.text)
        elif kind == "tilde":
            if part.text:
                return None  # ~user, ~+, ~-: another directory
            pieces.append(HOME_SYMBOL)
        elif kind == "parameter":
            name = part.text
            pieces.append(HOME_SYMBOL if name == "HOME" else f"{_NAME_OPEN}{name}{_NAME_CLOSE}")
        else:
            return None
    return "".join(pieces)


def has_symbol(text: str) -> bool:
    """Whether ``text`` (a glob or a text from :func:`word_glob`) holds a symbol."""
    return _SYMBOLS.search(text) is not None


def with_home(glob: str, home: str | None) -> str:
    """``glob`` with the home symbol replaced by ``home`` (unchanged when it is unknown)."""
    return glob if home is None else glob.replace(HOME_SYMBOL, _escape(home))


def widen(glob: str) -> str:
    """``glob`` with each symbol replaced by a glob that matches every value it may have.

    The home directory is an absolute path (``/*``); another parameter may be anything.
    """
    return _SYMBOLS.sub(lambda m: "/*" if m.group(0) == HOME_SYMBOL else "*", glob)


@functools.lru_cache(maxsize=256)
def read_pattern(pattern: str) -> Pattern | None:
    """The commands of a command rule's pattern, or ``None`` when it cannot be read as one."""
    text = pattern.strip()
    open_ended_suffix = text.endswith(_PREFIX_SUFFIX)
    if open_ended_suffix:
        text = text[: -len(_PREFIX_SUFFIX)].rstrip()
    if not text or not analyze_command(text).parsed:
        # Text the command analysis refuses (a lone surrogate, a NUL, a control character)
        # is no command any call could be, and cannot be read as a pattern either.
        return None
    try:
        source, root = parse(text.encode("utf-8"))
    except Unparseable:
        return None
    if root.has_error:
        return None
    reader = _PatternReader(source)
    if not reader.statement(root) or not reader.commands:
        return None
    commands = reader.commands
    if open_ended_suffix:
        last = commands[-1]
        commands[-1] = PatternCommand(last.words, True, last.assignments)
    return Pattern(tuple(commands), tuple(reader.operators))


class _PatternReader:
    """The walk over a pattern's tree: only lines of simple commands and their operators."""

    __slots__ = ("commands", "operators", "source")

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.commands: list[PatternCommand] = []
        self.operators: list[str] = []

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8")

    def statement(self, node: Node) -> bool:
        kind = node.type
        if kind == "program":
            for child in node.children:
                if child.type == "comment" or not child.is_named:
                    if child.type not in ("comment", ";", "\n"):
                        return False
                    continue
                if self.commands:
                    self.operators.append(";")
                if not self.statement(child):
                    return False
            return True
        if kind in ("list", "pipeline"):
            for child in node.children:
                if not child.is_named:
                    if child.type not in _OPERATORS:
                        return False
                    self.operators.append(child.type)
                elif not self.statement(child):
                    return False
            return True
        if kind == "redirected_statement":
            # A redirection in a rule says nothing about which command it names.
            body = node.child_by_field_name("body")
            others = [c for c in node.children if body is None or c.id != body.id]
            if body is None or any(c.type not in REDIRECTS or hung_words(c) for c in others):
                return False
            return self.statement(body)
        if kind == "command":
            return self._command(node)
        if kind in ("declaration_command", "unset_command"):
            return self._declaration(node)
        return False

    def _word(self, node: Node) -> str | None:
        word, substitutions = read_word(node, self.source)
        return None if substitutions else word_glob(word)

    def _command(self, node: Node) -> bool:
        assignments: list[str] = []
        words: list[str] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.text(child))
                continue
            if kind in REDIRECTS:
                if hung_words(child):
                    return False
                continue
            target = child.children[0] if kind == "command_name" and child.children else child
            if target.type not in WORD_NODES:
                return False
            glob = self._word(target)
            if glob is None:
                return False
            words.append(glob)
        return self._add(words, tuple(assignments))

    def _declaration(self, node: Node) -> bool:
        words: list[str] = []
        for child in node.children:
            if not child.is_named:
                glob = word_glob(literal_word(child.type))
            elif child.type in WORD_NODES:
                glob = self._word(child)
            else:
                glob = word_glob(literal_word(self.text(child)))
            if glob is None:
                return False
            words.append(glob)
        return self._add(words, ())

    def _add(self, words: list[str], assignments: tuple[str, ...]) -> bool:
        if not words:
            return False
        open_ended = words[-1] == "*"
        if open_ended and len(words) > 1:
            words = words[:-1]  # a lone `*` stays the program: every command
        self.commands.append(PatternCommand(tuple(words), open_ended, assignments))
        return True
