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
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from robota.core.permissions._executing import commands_in_assignment, commands_in_options
from robota.core.permissions._shell_model import (
    BACKGROUND_REDIRECT,
    CONTROL_FLOW,
    HEREDOC_LINE,
    JOINED_LINE,
    CommandLine,
    Heredoc,
    Redirect,
    RedirectKind,
    SimpleCommand,
)
from robota.core.permissions._shell_words import (
    Word,
    expand_braces,
    literal_word,
    read_word,
    substitution_count,
    substitution_nodes,
    unescaped,
)
from robota.core.permissions._shell_wrappers import WRAPPERS, XARGS, scan_wrapper

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

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
# Builtins that run text as code (or make later words run as code): their effect cannot be read
# from the line. `let` evaluates arithmetic, whose variables' values are evaluated in turn.
_CODE_BUILTINS: Final = frozenset(
    {"trap", "alias", "hash", "mapfile", "readarray", "enable", "let", "bind", "complete",
     "compgen", "fc", "coproc", "shopt"}
)  # fmt: skip
_DECLARATIONS: Final = frozenset({"declare", "typeset", "local", "export", "readonly"})
# Variables whose value the shell itself expands or runs later (prompts are expanded, with
# their substitutions, by `set -x` and interactive shells; BASH_ENV and ENV are sourced).
_CODE_VARIABLES: Final = re.compile(
    r"^(?:PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_FUNC_\w*|BASH_XTRACEFD)"
    r"(?:\[.*\])?\+?="
)
_ARITHMETIC_TESTS: Final = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"})
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_EVAL_LIKE: Final = frozenset({"eval", "source", "."})
_FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_WORD_NODES: Final = frozenset(
    {
        "word",
        "number",
        "string",
        "raw_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "ansi_c_string",
        "translated_string",
        "brace_expression",
        "extglob_pattern",
        "test_operator",
        "regex",
    }
)
_REDIRECTS: Final = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_STRUCTURE: Final = frozenset(
    {"program", "list", "pipeline", "subshell", "compound_statement", "negated_command"}
)
# What a here-document node holds besides the rest of its line (see `_Walker._heredoc_tail`).
_HEREDOC_PARTS: Final = frozenset(
    {"heredoc_start", "heredoc_body", "heredoc_end", "file_redirect", "herestring_redirect",
     "comment", "file_descriptor", *_WORD_NODES}
)  # fmt: skip
# Statements that can continue a line after a here-document's `&&` or `||`.
_STATEMENTS: Final = frozenset(
    {"command", "test_command", "list", "pipeline", "redirected_statement", "subshell",
     "compound_statement", "negated_command", "declaration_command", "unset_command",
     "variable_assignment", "variable_assignments", "function_definition", *CONTROL_FLOW}
)  # fmt: skip


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


@functools.cache
def _parser() -> Parser:
    # The grammar is loaded on first use, not with `import robota`.
    import tree_sitter  # noqa: PLC0415
    import tree_sitter_bash  # noqa: PLC0415

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=512)
def _analyze(text: str) -> CommandLine:
    # One permission check reads the same line several times (each command rule, the
    # catastrophic-removal check, the read-only classifier); CommandLine is immutable, so the
    # parse is shared.
    walker = _Walker()
    try:
        shape = walker.script(text, via=None, top=True)
    except _Unparseable as exc:
        return CommandLine(error=str(exc))
    except RecursionError:
        return CommandLine(error="the command is nested too deeply to read")
    redirects = tuple(walker.redirects)
    return CommandLine(
        commands=tuple(walker.commands),
        opaque=walker.opaque,
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


class _Unparseable(Exception):
    pass


@dataclass
class _Walker:
    commands: list[SimpleCommand] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    opaque: bool = False
    substitutions: bool = False
    background: bool = False
    depth: int = 0
    source: bytes = b""
    command_index: dict[int, int] = field(default_factory=dict)
    parent: int | None = None
    computed_name: bool = False
    moved: bool = False  # commands being read run in another directory (env -C, chroot …)

    # -- entry points

    def script(self, text: str, *, via: str | None, top: bool = False) -> list[int | str] | None:
        if self.depth >= _MAX_DEPTH:
            self.opaque = True  # past the limit the innermost script is not read
            return None
        source, root = _parse(text.encode("utf-8", "surrogateescape"))
        if root.has_error:
            raise _Unparseable(_error_reason(root, text))
        outer_source, outer_index = self.source, self.command_index
        self.source, self.command_index = source, {}
        self.depth += 1
        try:
            self._check_comments(root)
            if _joins_words(text):
                self.unsupported.append(JOINED_LINE)
            self.statement(root, via)
            return self._shape(root) if top else None
        finally:
            self.depth -= 1
            self.source, self.command_index = outer_source, outer_index

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

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
                    raise _Unparseable("a '#' inside a word was read as a comment")
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
            self.assignments.append(self.text(node))
            self._assignment_hazards(self.text(node))
            self._substitutions_in(node, via)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node, via)
        elif kind == "function_definition":
            self.opaque = True  # a definition runs later, under another name
            self.unsupported.append("a function definition")
            self._children(node, via)
        elif kind in CONTROL_FLOW:
            self.unsupported.append(CONTROL_FLOW[kind])
            self._children(node, via)
        elif kind in ("comment", "variable_name"):
            return  # a comment; a `for` loop's variable
        elif kind in _WORD_NODES:
            self._substitutions_in(node, via)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            if _hung_words(node):
                # No command to give them to (`2>x <<EOF rm -rf /` runs `rm`): not read here.
                raise _Unparseable("words after a redirection that has no command")
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

    def _children(self, node: Node, via: str | None) -> None:
        for child in node.children:
            self.statement(child, via)

    def _substitutions_in(self, node: Node, via: str | None) -> None:
        for sub in substitution_nodes(node):
            self.substitution(sub, via)

    def substitution(self, node: Node, via: str | None) -> None:
        self.substitutions = True
        outer, self.parent = self.parent, None  # a substitution's commands run on their own
        try:
            for child in node.children:
                if child.is_named:
                    self.statement(child, via or "$(…)")
        finally:
            self.parent = outer

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
        if any(_hung_words(child) for child in others):
            # `{ a; } >f b`: bash and dash refuse the line (a word after a compound command).
            raise _Unparseable("a word after a redirection that follows no simple command")
        first = len(self.commands)
        self.statement(body, via)
        end = len(self.commands)
        redirects: list[Redirect] = []
        for child in others:
            if child.type in _REDIRECTS:
                redirects.extend(self.redirect(child, via))
            else:
                self.statement(child, via)
        for index in range(first, end):
            command = self.commands[index]
            self.commands[index] = dataclasses.replace(
                command, redirects=(*redirects, *command.redirects)
            )

    def redirect(self, node: Node, via: str | None) -> list[Redirect]:
        """Read one redirection; the redirections that apply to the command it is written on.

        A here-document brings the redirections the grammar hangs under it (``cat <<EOF >f``).
        Words hung under a redirection (:func:`_hung_words`) are the command's arguments and
        are read by :meth:`command`, not here.
        """
        kind = node.type
        fd_node = node.child_by_field_name("descriptor")
        fd = (
            int(self.text(fd_node))
            if fd_node is not None and self.text(fd_node).isdigit()
            else None
        )
        if kind == "heredoc_redirect":
            return self.heredoc(node, via, fd)
        operator = next((c.type for c in node.children if not c.is_named), "")
        target: Word | None = None
        target_node = _redirect_target(node)
        if target_node is not None:
            target, inner = read_word(target_node, self.source)
            for sub in inner:
                self.substitution(sub, via)
            if target.unsupported is not None:
                self.unsupported.append(target.unsupported)
        if operator in ("&>", "&>>"):
            self.unsupported.append(BACKGROUND_REDIRECT)
        redirect = Redirect(operator, fd, target)
        self.redirects.append(redirect)
        return [redirect]

    def heredoc(self, node: Node, via: str | None, fd: int | None) -> list[Redirect]:
        operator = "<<"
        start: Node | None = None
        body: Node | None = None
        end: Node | None = None
        tail: list[Node] = []  # what the grammar hangs under it: the rest of the command line
        for child in node.children:
            if not child.is_named and child.type in ("<<", "<<-"):
                operator = child.type
            elif child.type == "heredoc_start":
                start = child
            elif child.type == "heredoc_body":
                body = child
            elif child.type == "heredoc_end":
                end = child
            elif start is not None and body is None and end is None:
                tail.append(child)
        if start is None or end is None:
            raise _Unparseable("a here-document without its terminator")
        raw = self.text(start)
        quoted = any(ch in raw for ch in "'\"\\")
        delimiter = raw.replace("\\", "").replace("'", "").replace('"', "")
        text = self.text(body) if body is not None else ""
        strip_tabs = operator == "<<-"
        # bash ends a here-document only at a line that is exactly the delimiter (after
        # leading tabs for `<<-`); a grammar that ended it elsewhere reads the rest differently.
        end_text = self.text(end)
        after = self.source[end.end_byte : end.end_byte + 1]
        line_start = self.source.rfind(b"\n", 0, end.start_byte) + 1
        indent = self.source[line_start : end.start_byte]
        if (
            end_text.rstrip("\n").lstrip("\t" if strip_tabs else "") != delimiter
            or (after not in (b"", b"\n") and not end_text.endswith("\n"))
            or indent.strip(b"\t" if strip_tabs else b"")
            or any(
                (line.lstrip("\t") if strip_tabs else line) == delimiter
                for line in text.split("\n")
            )
        ):
            raise _Unparseable("a here-document whose end the parser placed differently")
        expands = False
        if not quoted:
            # S21: an unquoted body is expanded — its substitutions run like any command.
            expands = _expands(text)
            found = substitution_nodes(body) if body is not None else []
            for sub in found:
                self.substitution(sub, via or "heredoc")
            grammar_count = sum(substitution_count(node) for node in found)
            if _substitution_openers(text) > grammar_count:
                # A substitution (often a backquoted one) the grammar left as body text.
                self.unsupported.append("a here-document body the parser did not read")
        heredoc = Redirect(operator, fd, None, Heredoc(delimiter, quoted, text, expands))
        self.redirects.append(heredoc)
        return [heredoc, *self._heredoc_tail(start, tail, via)]

    def _heredoc_tail(self, start: Node, tail: Sequence[Node], via: str | None) -> list[Redirect]:
        """Read the rest of a here-document's command line, which the grammar hangs under it.

        S12: in the shell the line goes on as if the here-document were any redirection —
        ``cat <<EOF | grep x``, ``cat <<EOF >f && rm x``, ``cat <<EOF a b`` — and its body
        starts on the next line. The pipeline or list that follows is walked like any other
        (:meth:`_shape` reads its operators); the redirections belong to the command, and the
        words are its arguments (:meth:`command` reads them). The redirections are returned.
        """
        if not tail:
            return []
        # The body starts after the first newline of the command line; a grammar that read the
        # line on into the next (`cat <<EOF |` + newline + `grep x`) took body text for commands.
        line = self.source[start.end_byte : tail[-1].end_byte].replace(b"\\\n", b"")
        if b"\n" in line:
            raise _Unparseable("a here-document whose command line goes on past the line end")
        redirects: list[Redirect] = []
        for child in tail:
            if child.type in ("file_redirect", "herestring_redirect"):
                redirects.extend(self.redirect(child, via))
            elif (
                child.type == "pipeline"
                and child.children
                and child.children[0].type
                in (
                    "|",
                    "|&",
                )
            ):
                self._children(child, via)  # `| grep x`: a pipeline's next command
            elif not child.is_named and child.type in ("&&", "||"):
                continue  # the list's operator; its right side follows
            elif child.type in _WORD_NODES or child.type == "comment":
                continue  # the command's arguments (read by `command`), or a comment
            elif child.is_named:
                self.statement(child, via)  # the right side of `&&` / `||`
            else:
                # A token this reading does not know: the line is not read exactly.
                self.unsupported.append(HEREDOC_LINE)
        return redirects

    def _assignment_hazards(self, text: str) -> None:
        if _CODE_VARIABLES.match(text):
            self.unsupported.append(
                f"an assignment to {text.split('=', 1)[0]!r}, which the shell runs"
            )
        name = text.split("=", 1)[0]
        if "[" in name:
            self.unsupported.append("an array subscript")

    def test_command(self, node: Node, via: str | None) -> None:
        opening = node.children[0].type if node.children else ""
        if opening != "[":
            self.unsupported.append("'[[ ]]'")
            if any(
                leaf.type == "test_operator" and self.text(leaf) in _ARITHMETIC_TESTS
                for leaf in _leaves(node.children)
            ):
                # Arithmetic operands and `-v` subscripts are evaluated, substitutions and all.
                self.unsupported.append("'[[ ]]' arithmetic, which evaluates its operands")
            self._substitutions_in(node, via)
            return
        # `[ … ]` is the `test` program: its words are the tokens between the brackets.
        words: list[Word] = [literal_word("[")]
        for token in _leaves(node.children[1:-1]):
            if token.type in _WORD_NODES and token.type != "test_operator":
                word, inner = read_word(token, self.source)
                for sub in inner:
                    self.substitution(sub, via)
                words.append(word)
            else:
                words.append(literal_word(self.text(token)))
        words.append(literal_word("]"))
        self._adjacency([node.children[0], *_leaves(node.children[1:-1]), node.children[-1]])
        index = len(self.commands)
        self.command_index[node.id] = index
        self._simple(words, (), (), via)

    def declaration(self, node: Node, via: str | None) -> None:
        words: list[Word] = []
        for child in node.children:
            if not child.is_named:
                words.append(literal_word(child.type))
            elif child.type in _WORD_NODES:
                word, inner = read_word(child, self.source)
                for sub in inner:
                    self.substitution(sub, via)
                words.append(word)
            else:
                self._substitutions_in(child, via)
                words.append(literal_word(self.text(child)))
        self.command_index[node.id] = len(self.commands)
        self._simple(words, (), (), via)

    def command(self, node: Node, via: str | None, *, outer: Sequence[Node] = ()) -> None:
        assignments: list[str] = []
        pending: list[Node] = []
        argv: list[Word] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.text(child))
                self._substitutions_in(child, via)
            elif kind in _REDIRECTS:
                pending.append(child)
            elif kind == "command_name":
                target = child.children[0] if child.children else child
                argv.append(self._word(target, via))
            elif child.is_named and kind in _WORD_NODES:
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
        words_end = max((c.end_byte for c in node.children if c.type not in _REDIRECTS), default=0)
        for child in [*pending, *outer]:
            # S12: words the grammar hangs under a redirection (`rm 2>/dev/null -rf /`,
            # `cat <<EOF a b`) are this command's arguments, after the ones before it.
            for hung in _hung_words(child):
                if hung.start_byte < words_end:
                    raise _Unparseable("a redirection's words the grammar placed out of order")
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
        # Redirections are read after the command is listed, so that a line the grammar hangs
        # under a here-document (`cat <<EOF | grep x`) is listed after it, as it runs.
        redirects: list[Redirect] = []
        for child in [*pending, *outer]:
            if child.type in _REDIRECTS:
                redirects.extend(self.redirect(child, via))
            else:
                self.statement(child, via)
        if redirects and index < len(self.commands):
            self.commands[index] = dataclasses.replace(
                self.commands[index], redirects=tuple(redirects)
            )

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
            if left.type in _REDIRECTS or right.type in _REDIRECTS:
                continue
            # A line continuation (backslash-newline) is removed before words are split, so it
            # separates nothing: `cm\<newline>da` is one word.
            gap = self.source[left.end_byte : right.start_byte].replace(b"\\\n", b"")
            if not gap or gap.strip(b" \t\n"):
                self.unsupported.append("words the grammar split differently from the shell")
                return

    # -- simple commands and wrappers

    def _simple(
        self,
        argv: list[Word],
        assignments: tuple[str, ...],
        redirects: tuple[Redirect, ...],
        via: str | None,
        parent: int | None = None,
    ) -> None:
        for assignment in assignments:
            self._assignment_hazards(assignment)
        if not argv:
            if assignments:
                self.assignments.extend(assignments)
            return
        head = argv[0]
        if head.dynamic or head.has_glob or head.has_tilde:
            self.opaque = True  # the command itself is computed at run time
            if head.unsupported != "brace expansion":  # bash's reading is listed apart
                self.computed_name = True
            return
        opaque_args = any(w.dynamic or w.has_tilde for w in argv[1:])
        index = len(self.commands)
        command = SimpleCommand(
            tuple(w.value for w in argv),
            opaque_args,
            tuple(argv),
            assignments,
            via,
            redirects,
            self.parent if parent is None else parent,
            self.moved,
        )
        self.commands.append(command)
        name = command.name
        values = [w.value for w in argv]
        if name == "eval" and len(argv) > 1:
            # eval joins its words with spaces and runs the result as a script.
            script = _script_text(argv[1:])
            if script is None:
                self.opaque = True
            else:
                self._nested(script, "eval", index, computed=not all(w.literal for w in argv[1:]))
            return
        if name in _EVAL_LIKE:
            self.opaque = True
            return
        if name in _CODE_BUILTINS:
            self.opaque = True
            self.unsupported.append(f"the builtin {name!r}, which runs text as code")
            return
        self._option_hazards(name, argv)
        self._executes(name, argv, assignments, index)
        if name in _SHELLS:
            self._shell_dash_c(argv, index)
            return
        wrapper = WRAPPERS.get(name)
        if wrapper is not None:
            scan = scan_wrapper(name, wrapper, values[1:])
            if scan.unknown:
                self.opaque = True
            for script in scan.scripts:
                self._nested(script, f"{name} -c", index, computed=False)
            inner = argv[1 + scan.start :] if scan.start >= 0 else []
            if inner and wrapper.script_operands:
                # The wrapper hands its words to `sh -c` as one line (`sg group 'git push'`).
                script = _script_text(inner)
                if script is None:
                    self.opaque = True
                else:
                    self._nested(script, name, index, computed=not all(w.literal for w in inner))
                return
            if inner:
                outer, self.moved = self.moved, self.moved or scan.moved
                try:
                    self._simple(list(inner), (*assignments, *scan.assignments), (), name, index)
                finally:
                    self.moved = outer
            return
        if name == "xargs":
            scan = scan_wrapper(name, XARGS, values[1:])
            if scan.unknown:
                self.opaque = True
            start = scan.start
            inner_words = values[1 + start :] if start >= 0 else []
            self.commands.append(
                SimpleCommand(
                    tuple(inner_words or ["echo"]),
                    True,
                    tuple(argv[1 + start :]) if inner_words else (literal_word("echo"),),
                    via="xargs",
                    parent=index,
                    moved=self.moved,
                )
            )
            return
        if name == "find":
            self._find_exec(argv, index)
        elif name == "parallel":
            self._parallel(argv, index)

    def _executes(
        self, name: str, argv: list[Word], assignments: tuple[str, ...], index: int
    ) -> None:
        """Commands this command runs through its options or environment (S21, issue 24)."""
        found = [commands_in_options(name, argv), *map(commands_in_assignment, assignments)]
        for item in found:
            if item.opaque:
                self.opaque = True
            for script in item.scripts:
                self._nested(script, f"{name} option", index, computed=False)
            for words in item.argvs:
                self._simple(list(words), (), (), f"{name} option", index)

    def _parallel(self, argv: list[Word], index: int) -> None:
        # GNU parallel: options, then a command template up to `:::`/`::::`; without a template
        # each input after `:::` is itself a command line. Either runs through a shell.
        values = [w.value for w in argv]
        separators = {":::", "::::", ":::+", "::::+"}
        end = next((i for i, v in enumerate(values) if v in separators), len(values))
        template = [w for w in argv[1:end] if not (w.literal and w.value.startswith("-"))]
        if any(w.literal and w.value.startswith("-") for w in argv[1:end]):
            self.opaque = True  # its options may take the template's first words as values
        lines = (
            [template] if template else [[w] for w in argv[end + 1 :] if w.value not in separators]
        )
        for words in lines:
            script = _script_text(words)
            if script is None:
                self.opaque = True
            else:
                self._nested(script, "parallel", index, computed=False)
        if template:
            self.opaque = True  # the inputs are appended to the template at run time

    def _option_hazards(self, name: str, argv: list[Word]) -> None:
        """Options of ordinary builtins that evaluate a word as code (S12)."""
        values = [w.value for w in argv[1:]]
        flags = {v for v in values if v.startswith("-")}
        if name in _DECLARATIONS and (
            any("[" in v for v in values) or any("n" in f[1:] for f in flags if f[1:2] != "-")
        ):
            self.unsupported.append("an array subscript or name reference, evaluated as code")
        elif name in _DECLARATIONS:
            for value in values:
                self._assignment_hazards(value)
        elif name == "read" and any("[" in v for v in values):
            self.unsupported.append("an array subscript, evaluated as code")
        elif name == "printf" and "-v" in flags:
            self.unsupported.append("'printf -v', which assigns (and evaluates a subscript)")
        elif name in ("test", "[") and "-v" in values:
            self.unsupported.append("'test -v', which evaluates a subscript")

    def _shell_dash_c(self, argv: list[Word], index: int) -> None:
        # bash and dash: options come first; with `-c`, the first operand is the script and
        # the rest are its $0, $1 …; without it, the first operand is a script file.
        values = [w.value for w in argv]
        dash_c = False
        position = 1
        while position < len(values):
            word = values[position]
            if word in ("--", "-"):
                position += 1
                break
            if word[:1] not in ("-", "+") or word in ("-", "+"):
                break
            if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                position += 2  # the option's value
                continue
            if not word.startswith("--") and "c" in word[1:]:
                dash_c = True
            position += 1
        if not dash_c or position >= len(argv):
            # No `-c`: the shell runs a script file, or reads commands from its standard input.
            self.opaque = True
            return
        script = _script_text(argv[position : position + 1])
        if script is None:
            self.opaque = True  # the script is computed at run time
            return
        self._nested(script, "bash -c", index, computed=not argv[position].literal)

    def _nested(self, script: str, via: str, parent: int, *, computed: bool) -> None:
        """Read the script a shell's ``-c`` or ``eval`` runs, as commands of this line."""
        if computed:
            # Parameters stand in the script as themselves (`${HOME}`), so deny rules and the
            # removal check see where they are; their values may still add commands, so the
            # line stays opaque.
            self.opaque = True
        outer, self.parent = self.parent, parent
        try:
            self.script(script, via=via)
        except _Unparseable:
            self.opaque = True
        finally:
            self.parent = outer

    def _find_exec(self, argv: list[Word], parent: int) -> None:
        values = [w.value for w in argv]
        index = 0
        while index < len(values):
            if values[index] in _FIND_EXEC:
                end = index + 1
                while end < len(values) and values[end] not in (";", "+"):
                    end += 1
                inner = argv[index + 1 : end]
                if inner:
                    self.commands.append(
                        SimpleCommand(
                            tuple(w.value for w in inner),
                            True,
                            tuple(inner),
                            via="find -exec",
                            parent=parent,
                        )
                    )
                    if inner[0].dynamic:
                        self.opaque = True
                index = end
            index += 1

    # -- the straight-line shape

    def _shape(self, node: Node) -> list[int | str] | None:
        kind = node.type
        if kind == "program":
            out: list[int | str] = []
            for child in node.children:
                if child.type == "comment":
                    continue
                if not child.is_named:
                    if child.type in (";", "\n"):
                        if out and out[-1] != ";":
                            out.append(";")
                        continue
                    return None
                inner = self._shape(child)
                if inner is None:
                    return None
                if out and out[-1] != ";":
                    out.append(";")  # statements on separate lines
                out.extend(inner)
            while out and out[-1] == ";":
                out.pop()
            return out
        if kind in ("list", "pipeline"):
            out = []
            for child in node.children:
                if not child.is_named:
                    if child.type in ("&&", "||", "|", "|&"):
                        out.append(child.type)
                        continue
                    return None
                inner = self._shape(child)
                if inner is None:
                    return None
                out.extend(inner)
            return out
        if kind == "redirected_statement":
            # The redirections belong to the last command (see `_redirected_body`); what the
            # grammar hangs under a here-document continues the line.
            body = node.child_by_field_name("body")
            line = self._shape(body) if body is not None else None
            if line is None:
                return None
            for child in node.children:
                if child.type == "heredoc_redirect":
                    tail = self._heredoc_shape(child)
                    if tail is None:
                        return None
                    line.extend(tail)
            return line
        if kind in ("command", "test_command"):
            index = self.command_index.get(node.id)
            return None if index is None else [index]
        return None

    def _heredoc_shape(self, node: Node) -> list[int | str] | None:
        """The operators and commands that continue a line after a here-document."""
        out: list[int | str] = []
        for child in node.children:
            if child.type == "pipeline" and child.children[0].type in ("|", "|&"):
                out.append(child.children[0].type)
                rest = [c for c in child.children[1:] if c.is_named]
                if len(rest) != 1:
                    return None
                inner = self._shape(rest[0])
                if inner is None:
                    return None
                out.extend(inner)
            elif not child.is_named and child.type in ("&&", "||"):
                out.append(child.type)
            elif child.is_named and child.type in _STATEMENTS:
                inner = self._shape(child)
                if inner is None:
                    return None
                out.extend(inner)
            elif child.is_named and child.type not in _HEREDOC_PARTS:
                return None
        return out


_MAX_REPARSES: Final = 32


def _parse(source: bytes) -> tuple[bytes, Node]:
    r"""Parse ``source``, working around one known grammar defect.

    tree-sitter-bash sometimes runs the words of the next line into the last command of a
    pipeline (`a | b | c<newline>d 2>&1` read as `c d`), or into a redirection's destination
    (`a >/dev/null<newline>\b` read as a second destination). An unquoted newline between two
    words of one command, or of one redirection, always ends it in the shell, so it is replaced by
    the `;` it means (same length, so every position stays) and the line is parsed again.
    """
    for _ in range(_MAX_REPARSES):
        root = _parser().parse(source).root_node
        offset = _joined_line(root, source)
        if offset is None:
            return source, root
        source = source[:offset] + b";" + source[offset + 1 :]
    raise _Unparseable("the shell grammar joined lines into one command too often to read")


_WORD_LISTS: Final = frozenset({"command", "file_redirect"})
"""Nodes whose children the grammar may run across a newline: a command's words, and a
redirection's destinations (``a >/dev/null<newline>\\b`` read as two destinations)."""


def _joined_line(root: Node, source: bytes) -> int | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _WORD_LISTS:
            for left, right in itertools.pairwise(node.children):
                if node.type == "command" and (left.type in _REDIRECTS or right.type in _REDIRECTS):
                    continue
                gap = source[left.end_byte : right.start_byte]
                index = 0
                while index < len(gap):
                    if gap[index : index + 2] == b"\\\n":
                        index += 2
                        continue
                    if gap[index : index + 1] == b"\n":
                        return left.end_byte + index
                    index += 1
                if source[right.start_byte : right.start_byte + 1] == b"\n":
                    return right.start_byte  # the grammar put the newline inside the next word
        stack.extend(node.children)
    return None


def _joins_words(text: str) -> bool:
    """A backslash-newline that joins two pieces of one word (bash removes it before reading).

    Only a continuation that follows a blank or an operator is read alike by the grammar and by
    the shell; one inside a word (after ``cm``, after a ``$``, inside a here-document's
    terminator) is not. Single-quoted text is skipped: a backslash there is a character.
    """
    index = 0
    quote = ""
    while index < len(text):
        ch = text[index]
        if quote == "'":
            if ch == "'":
                quote = ""
            index += 1
            continue
        if ch == "\\":
            if text[index + 1 : index + 2] == "\n" and (
                index > 0 and text[index - 1] not in " \t\n;&|()"
            ):
                return True
            index += 2
            continue
        if ch == "'" and not quote:
            quote = "'"
        elif ch == '"':
            quote = "" if quote == '"' else '"'
        index += 1
    return False


def _script_text(words: Sequence[Word]) -> str | None:
    """The script text words hand to a shell (joined by spaces, as ``eval`` joins them).

    Parameter expansions are written back as ``${NAME}``; ``None`` when any other part is
    only known at run time.
    """
    if not words:
        return None
    pieces: list[str] = []
    for word in words:
        if word.unsupported is not None:
            return None
        text: list[str] = []
        for part in word.parts:
            if part.kind == "literal":
                text.append(part.text)
            elif part.kind == "parameter":
                text.append("${" + part.text + "}")
            else:
                return None
        pieces.append("".join(text))
    return " ".join(pieces)


_CLOSE_OPERATORS: Final = frozenset({">&-", "<&-"})


def _redirect_target(node: Node) -> Node | None:
    """The word a file redirection or here-string opens (``None`` for a close: ``2>&-``)."""
    if node.type == "file_redirect":
        if any(c.type in _CLOSE_OPERATORS for c in node.children):
            return None
        destinations = node.children_by_field_name("destination")
        if destinations:
            return destinations[0]
    return next((c for c in node.children if c.is_named and c.type in _WORD_NODES), None)


def _hung_words(node: Node) -> list[Node]:
    """Words the grammar hangs under a redirection that are the command's own arguments.

    A redirection takes one word in the shell, but the grammar gives a file redirection every
    word that follows it (``rm 2>/dev/null -rf /`` reads as ``rm`` with a redirection to three
    files), gives a close (``2>&- x``) the word after it, and hangs the words after a
    here-document's delimiter (``cat <<EOF a b``) and the redirections after it (whose own
    words count too) under the here-document.
    """
    if node.type == "file_redirect":
        if any(c.type in _CLOSE_OPERATORS for c in node.children):
            return [c for c in node.children if c.is_named and c.type in _WORD_NODES]
        return node.children_by_field_name("destination")[1:]
    if node.type != "heredoc_redirect":
        return []
    hung: list[Node] = []
    started = False
    for child in node.children:
        if child.type == "heredoc_start":
            started = True
        elif child.type in ("heredoc_body", "heredoc_end"):
            break
        elif started and child.is_named and child.type in _WORD_NODES:
            hung.append(child)
        elif started and child.type in ("file_redirect", "herestring_redirect"):
            hung.extend(_hung_words(child))
    return hung


def _leaves(nodes: list[Node]) -> list[Node]:
    out: list[Node] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if node.type in _WORD_NODES or not node.children:
            out.append(node)
        else:
            stack.extend(reversed(node.children))
    return out


def _expands(body: str) -> bool:
    """An unquoted here-document body in which the shell will expand something."""
    return any(
        ch == "`" or (ch == "$" and body[index + 1 : index + 2] not in ("", " ", "\t", "\n"))
        for index, ch in unescaped(body)
    )


def _substitution_openers(body: str) -> int:
    """How many substitutions an unquoted here-document body opens.

    A backquote counts once per character, as ``substitution_count`` counts them.
    """
    return sum(
        1
        for index, ch in unescaped(body)
        if ch == "`" or body.startswith(("$(", "<(", ">("), index)
    )


def _error_reason(root: Node, text: str) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            where = node.start_point
            what = "missing " + repr(node.type) if node.is_missing else "unexpected text"
            line, column = where[0] + 1, where[1] + 1
            return f"the shell grammar cannot read it ({what} at line {line}, column {column})"
        stack.extend(reversed(node.children))
    return "the shell grammar cannot read it"
