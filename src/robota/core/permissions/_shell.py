"""What a shell command line will run, as far as a parser can tell (S12, S21).

:func:`analyze_command` reads a command line with a maintained shell grammar (tree-sitter-bash;
SECURITY.md says why) and lists every simple command it finds — through pipes, lists (``;``,
``&&``, ``||``), subshells, groups, control structures, command and process substitutions,
unquoted here-documents, and the wrappers that run another command (``env``, ``sudo``, ``nice``,
``nohup``, ``time``, ``timeout``, ``command``, ``exec``, ``xargs``, ``find -exec``, ``bash -c
'<literal>'`` …). Each word is read by :mod:`._shell_words` with POSIX quote removal, so ``g"i"t``
is ``git`` and ``"$HOME/"`` is a parameter expansion followed by ``/``.

Three kinds of "cannot tell" are kept apart, because callers treat them differently (S12):

* :attr:`CommandLine.error` — the line does not parse (the grammar reports an error, a quote
  is left open, a here-document has no terminator, a control character is in it …).
* :attr:`CommandLine.opaque` — something will run that the text does not show: ``eval``,
  ``source``, a command name computed at run time, ``bash -c "$x"``, a shell reading a script
  file or its standard input, a function definition, a wrapper option this module does not know.
* :attr:`CommandLine.unsupported` — constructs outside the small subset the read-only
  classifier and allow rules are held to (control structures, ``[[ ]]``, brace expansion,
  ANSI-C quoting, ``&>`` …). Every command inside them is still listed, so deny rules see them.

Callers judge conservatively from this: a deny rule that cannot be ruled out is not "no match",
an allow rule answers only a line it covers exactly, and a line that is not fully understood is
never read-only.

The walk is split by concept. This module holds the entry point and the walker's statements
and commands; :mod:`._shell_walk_state` the state it carries; :mod:`._shell_redirects` the
redirections and here-documents; :mod:`._shell_simple` what a simple command runs through
wrappers, options, nested scripts and standard input; :mod:`._shell_shape` the straight-line
shape; :mod:`._shell_braces` bash's reading of brace expansion; and :mod:`._shell_syntax` the
readings of text and tree that need no walk.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from robota.core.permissions._shell_braces import expand_braces
from robota.core.permissions._shell_model import (
    BACKGROUND_REDIRECT,
    CONTROL_FLOW,
    JOINED_LINE,
    CommandLine,
    Heredoc,
    Redirect,
    RedirectKind,
    SimpleCommand,
)
from robota.core.permissions._shell_redirects import RedirectReader, hung_words
from robota.core.permissions._shell_shape import line_shape
from robota.core.permissions._shell_simple import SimpleCommandReader
from robota.core.permissions._shell_syntax import (
    REDIRECTS,
    WORD_NODES,
    Unparseable,
    error_reason,
    joins_words,
    leaves,
    parse,
)
from robota.core.permissions._shell_walk_state import Assignment
from robota.core.permissions._shell_words import Word, WordPart, literal_word, read_word

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = [
    "CommandLine",
    "Heredoc",
    "Redirect",
    "RedirectKind",
    "SimpleCommand",
    "analyze_command",
]


_MAX_DEPTH: Final = 8
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ARITHMETIC_TESTS: Final = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"})
_STRUCTURE: Final = frozenset(
    {"program", "list", "pipeline", "subshell", "compound_statement", "negated_command"}
)


def analyze_command(text: str) -> CommandLine:
    """Parse ``text`` and list what it runs; see the module docstring."""
    candidate: object = text  # untyped callers (model output) can pass anything
    if not isinstance(candidate, str) or not text.strip():
        return CommandLine(error="empty command")
    if "\x00" in text:
        return CommandLine(error="the command contains a NUL byte")
    if _SURROGATE.search(text):
        return CommandLine(error="the command contains a lone surrogate, which is not text")
    control = _CONTROL.search(text)
    if control is not None:
        return CommandLine(error=f"the command contains the control character {control.group(0)!r}")
    return _analyze(text)


@functools.lru_cache(maxsize=512)
def _analyze(text: str) -> CommandLine:
    # One permission check reads the same line several times (each command rule, the
    # catastrophic-removal check, the read-only classifier); CommandLine is immutable, so the
    # parse is shared.
    walker = _Walker()
    try:
        shape = walker.script(text, via=None, top=True)
    except Unparseable as exc:
        return CommandLine(error=str(exc))
    except RecursionError:
        return CommandLine(error="the command is nested too deeply to read")
    redirects = tuple(walker.redirects)
    return CommandLine(
        commands=tuple(walker.commands),
        # A shell (or `at`, or `ssh`) that runs its standard input as a script, given none this
        # line shows: what it runs is not in the text.
        opaque=walker.opaque or bool(walker.stdin_readers),
        redirections=tuple(
            r.target.value
            for r in redirects
            if r.kind in ("write", "readwrite") and r.target is not None
        ),
        substitutions=walker.substitutions,
        inputs=tuple(
            r.target.value
            for r in redirects
            if r.kind in ("read", "readwrite") and r.target is not None
        ),
        redirects=redirects,
        background=walker.background,
        unsupported=tuple(dict.fromkeys(walker.unsupported)),
        assignments=tuple(walker.assignments),
        shape=None if shape is None or walker.unsupported else tuple(shape),
        computed_name=walker.computed_name,
    )


class _Walker(RedirectReader, SimpleCommandReader):
    """The walk over one command line's tree: its statements and commands (S12, S21)."""

    # -- entry points

    def script(self, text: str, *, via: str | None, top: bool = False) -> list[int | str] | None:
        if self.depth >= _MAX_DEPTH:
            self.opaque = True  # past the limit the innermost script is not read
            return None
        source, root = parse(text.encode("utf-8", "surrogateescape"))
        if root.has_error:
            raise Unparseable(error_reason(root, text))
        outer_source, outer_index = self.source, self.command_index
        self.source, self.command_index = source, {}
        self.depth += 1
        try:
            self._check_comments(root)
            if joins_words(text):
                self.unsupported.append(JOINED_LINE)
            self.statement(root, via)
            return line_shape(root, self.command_index) if top else None
        finally:
            self.depth -= 1
            self.source, self.command_index = outer_source, outer_index

    def _check_comments(self, root: Node) -> None:
        # bash starts a comment only where a word could start; a `#` the grammar took for a
        # comment anywhere else would hide the rest of a word from us.
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type == "comment":
                before = self.source[node.start_byte - 1 : node.start_byte]
                if node.start_byte > 0 and before not in (
                    b" ",
                    b"\t",
                    b"\n",
                    b";",
                    b"&",
                    b"|",
                    b"(",
                    b")",
                ):
                    raise Unparseable("a '#' inside a word was read as a comment")
            stack.extend(node.children)

    # -- statements

    def statement(self, node: Node, via: str | None) -> None:
        kind = node.type
        if kind in _STRUCTURE:
            self._children(node, via)
        elif kind == "command":
            self.command(node, via)
        elif kind == "redirected_statement":
            self.redirected(node, via)
        elif kind == "test_command":
            self.test_command(node, via)
        elif kind in ("variable_assignment", "variable_assignments"):
            # S21: an assignment alone (`x=1;`) changes what later commands run.
            self.assignments.append(self.text(node))
            self._substitutions_in(node, via)
            each = [node] if kind == "variable_assignment" else node.children
            for child in each:
                if child.type == "variable_assignment":
                    self.variable(self._assignment(child), None)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node, via)
        elif kind == "function_definition":
            self.opaque = True  # a definition runs later, under another name
            self.unsupported.append("a function definition")
            self._children(node, via)
        elif kind in CONTROL_FLOW:
            self.unsupported.append(CONTROL_FLOW[kind])
            variable = node.child_by_field_name("variable") if kind == "for_statement" else None
            if variable is not None:
                name = self.text(variable)  # `for NAME in …`: each value in turn
                self.variable(Assignment(name, name, None), None)
            self._children(node, via)
        elif kind in ("comment", "variable_name"):
            return  # a comment; a `for` loop's variable
        elif kind in WORD_NODES:
            self._substitutions_in(node, via)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            if hung_words(node):
                # No command to give them to (`2>x <<EOF rm -rf /` runs `rm`): not read here.
                raise Unparseable("words after a redirection that has no command")
            self.redirect(node, via)
        elif not node.is_named:
            if kind == "&":
                self.background = True
            elif kind in ("&>", "&>>"):
                self.unsupported.append(BACKGROUND_REDIRECT)
        else:
            # Arithmetic commands, `[[ ]]` parts and whatever a newer grammar adds.
            self.unsupported.append(kind.replace("_", " "))
            self._children(node, via)

    def redirected(self, node: Node, via: str | None) -> None:
        body = node.child_by_field_name("body")
        others = [c for c in node.children if body is None or c.id != body.id]
        if body is None:
            for child in others:
                self.statement(child, via)
            return
        self._redirected_body(body, via, others)

    def _redirected_body(self, body: Node, via: str | None, others: Sequence[Node]) -> None:
        """Walk ``body`` with the redirections ``others`` the grammar wrote after it.

        S12: the grammar hangs the redirections after ``a | b`` or ``a && b`` (a here-document's
        especially) on the whole pipeline or list, but the shell attaches a redirection to the
        command it follows: the last one. A group's or subshell's redirections apply to every
        command in it, so they are attached to each.
        """
        if body.type == "command":
            self.command(body, via, outer=others)
            return
        named = [c for c in body.children if c.is_named and c.type != "comment"]
        if body.type in ("pipeline", "list", "negated_command") and named:
            last = named[-1]
            for child in body.children:
                if child.id == last.id:
                    self._redirected_body(child, via, others)
                else:
                    self.statement(child, via)
            return
        if body.type == "redirected_statement":
            inner = body.child_by_field_name("body")
            if inner is not None:
                own = [c for c in body.children if c.id != inner.id]
                self._redirected_body(inner, via, [*own, *others])
                return
        if any(hung_words(child) for child in others):
            # `{ a; } >f b`: bash and dash refuse the line (a word after a compound command).
            raise Unparseable("a word after a redirection that follows no simple command")
        first = len(self.commands)
        self.statement(body, via)
        end = len(self.commands)
        redirects: list[Redirect] = []
        for child in others:
            if child.type in REDIRECTS:
                redirects.extend(self.redirect(child, via))
            else:
                self.statement(child, via)
        for index in range(first, end):
            command = self.commands[index]
            self.commands[index] = dataclasses.replace(
                command, redirects=(*redirects, *command.redirects)
            )
        self.settle_stdin(first, end, redirects)  # `{ python3; } <<EOF`

    def test_command(self, node: Node, via: str | None) -> None:
        opening = node.children[0].type if node.children else ""
        if opening != "[":
            self.unsupported.append("'[[ ]]'")
            if any(
                leaf.type == "test_operator" and self.text(leaf) in _ARITHMETIC_TESTS
                for leaf in leaves(node.children)
            ):
                # Arithmetic operands and `-v` subscripts are evaluated, substitutions and all.
                self.unsupported.append("'[[ ]]' arithmetic, which evaluates its operands")
            self._substitutions_in(node, via)
            return
        # `[ … ]` is the `test` program: its words are the tokens between the brackets.
        words: list[Word] = [literal_word("[")]
        for token in leaves(node.children[1:-1]):
            if token.type in WORD_NODES and token.type != "test_operator":
                word, inner = read_word(token, self.source)
                for sub in inner:
                    self.substitution(sub, via)
                words.append(word)
            else:
                words.append(literal_word(self.text(token)))
        words.append(literal_word("]"))
        self._adjacency([node.children[0], *leaves(node.children[1:-1]), node.children[-1]])
        index = len(self.commands)
        self.command_index[node.id] = index
        self._simple(words, (), (), via)

    def declaration(self, node: Node, via: str | None) -> None:
        words: list[Word] = []
        for child in node.children:
            if not child.is_named:
                words.append(literal_word(child.type))
            elif child.type in WORD_NODES:
                word, inner = read_word(child, self.source)
                for sub in inner:
                    self.substitution(sub, via)
                words.append(word)
            elif child.type == "variable_assignment":
                # `export NAME=value`: the word the builtin gets, read like any other.
                self._substitutions_in(child, via)
                assignment = self._assignment(child)
                value = assignment.value or Word("", ())
                operator = self.text(child)[len(assignment.name) :].partition("=")[0] + "="
                words.append(
                    Word(
                        assignment.text,
                        (WordPart("literal", assignment.name + operator), *value.parts),
                        value.unsupported,
                        value.substitution,
                    )
                )
            else:
                self._substitutions_in(child, via)
                words.append(literal_word(self.text(child)))
        self.command_index[node.id] = len(self.commands)
        self._simple(words, (), (), via)

    def _assignment(self, node: Node) -> Assignment:
        """A ``variable_assignment`` node as the shell reads it: its name and its value."""
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = self.text(name_node) if name_node is not None else self.text(node).split("=")[0]
        value = read_word(value_node, self.source)[0] if value_node is not None else Word("", ())
        return Assignment(self.text(node), name, value)

    def command(self, node: Node, via: str | None, *, outer: Sequence[Node] = ()) -> None:
        assignments: list[Assignment] = []
        pending: list[Node] = []
        argv: list[Word] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self._assignment(child))
                self._substitutions_in(child, via)
            elif kind in REDIRECTS:
                pending.append(child)
            elif kind == "command_name":
                target = child.children[0] if child.children else child
                argv.append(self._word(target, via))
            elif child.is_named and kind in WORD_NODES:
                argv.append(self._word(child, via))
            elif not child.is_named:
                # A token the grammar left loose between words (`$"x"` reads as `$` + `"x"`):
                # bash would read one word there.
                self.unsupported.append(f"the token {self.text(child)!r}")
                argv.append(literal_word(self.text(child)))
            else:
                self.unsupported.append(kind.replace("_", " "))
                self._substitutions_in(child, via)
        self._adjacency(node.children)
        words_end = max((c.end_byte for c in node.children if c.type not in REDIRECTS), default=0)
        for child in [*pending, *outer]:
            # S12: words the grammar hangs under a redirection (`rm 2>/dev/null -rf /`,
            # `cat <<EOF a b`) are this command's arguments, after the ones before it.
            for hung in hung_words(child):
                if hung.start_byte < words_end:
                    raise Unparseable("a redirection's words the grammar placed out of order")
                if hung.prev_sibling is not None:
                    self._adjacency([hung.prev_sibling, hung])
                argv.append(self._word(hung, via))
        index = len(self.commands)
        self.command_index[node.id] = index
        self._simple(argv, tuple(assignments), (), via)
        if any(w.unsupported == "brace expansion" for w in argv):
            # POSIX sh leaves braces alone; bash expands them (`{rm,-rf,/}` is `rm -rf /`).
            # The line is outside the subset either way; deny rules and the catastrophic-removal
            # check also see bash's reading.
            expanded: list[Word] = []
            for word in argv:
                expanded.extend(expand_braces(word) or [word])
            self._simple(expanded, tuple(assignments), (), via or "brace expansion")
        ran = len(self.commands)  # this command and what it runs
        # Redirections are read after the command is listed, so that a line the grammar hangs
        # under a here-document (`cat <<EOF | grep x`) is listed after it, as it runs.
        redirects: list[Redirect] = []
        for child in [*pending, *outer]:
            if child.type in REDIRECTS:
                redirects.extend(self.redirect(child, via))
            else:
                self.statement(child, via)
        if redirects and index < len(self.commands):
            self.commands[index] = dataclasses.replace(
                self.commands[index], redirects=tuple(redirects)
            )
        self.settle_stdin(index, ran, redirects)

    def _word(self, node: Node, via: str | None) -> Word:
        word, inner = read_word(node, self.source)
        for sub in inner:
            self.substitution(sub, via)
        if word.unsupported is not None:
            self.unsupported.append(word.unsupported)
        return word

    def _adjacency(self, children: list[Node]) -> None:
        # Two words of one command are always separated by blanks; pieces the grammar split
        # without a blank between them are one word to the shell. (A redirection may touch a
        # word: `ls>out`.)
        for left, right in itertools.pairwise(children):
            if left.type in REDIRECTS or right.type in REDIRECTS:
                continue
            # A line continuation (backslash-newline) is removed before words are split, so it
            # separates nothing: `cm\<newline>da` is one word.
            gap = self.source[left.end_byte : right.start_byte].replace(b"\\\n", b"")
            if not gap or gap.strip(b" \t\n"):
                self.unsupported.append("words the grammar split differently from the shell")
                return
