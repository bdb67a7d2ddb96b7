"""Redirections and here-documents, as the walk over a command line reads them (S12, S21).

:class:`RedirectReader` is the part of the walker (:mod:`._shell`) that reads one redirection
(``>f``, ``2>&1``, ``<<<word``) and here-documents: the body's substitutions, which run like any
command when the delimiter is unquoted (S21), the checks that the grammar ended the body where
bash does, and the rest of the command line the grammar hangs under a here-document
(``cat <<EOF | grep x``). :func:`hung_words` says which words the grammar hangs under a
redirection that are really the command's own arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from robota.core.permissions._shell_model import (
    BACKGROUND_REDIRECT,
    HEREDOC_LINE,
    Heredoc,
    Redirect,
)
from robota.core.permissions._shell_syntax import WORD_NODES, Unparseable
from robota.core.permissions._shell_walk_state import WalkerState
from robota.core.permissions._shell_words import (
    Word,
    read_heredoc,
    read_word,
    substitution_count,
    substitution_nodes,
    unescaped,
)

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["RedirectReader", "hung_words"]


class RedirectReader(WalkerState):
    """The walker's reading of redirections and here-documents (S12, S21)."""

    def redirect(self, node: Node, via: str | None) -> list[Redirect]:
        """Read one redirection; the redirections that apply to the command it is written on.

        A here-document brings the redirections the grammar hangs under it (``cat <<EOF >f``).
        Words hung under a redirection (:func:`hung_words`) are the command's arguments and
        are read by the walker's ``command`` (:mod:`._shell`), not here.
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
            raise Unparseable("a here-document without its terminator")
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
            raise Unparseable("a here-document whose end the parser placed differently")
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
        # The body's lines run from the line after the command's to the delimiter's line (the
        # grammar leaves a `<<-` body's first tabs out of its node).
        first = self.source.rfind(b"\n", 0, body.start_byte) + 1 if body is not None else line_start
        content = read_heredoc(
            body, self.source, first, line_start, quoted=quoted, strip_tabs=strip_tabs
        )
        heredoc = Redirect(
            operator, fd, None, Heredoc(delimiter, quoted, text, expands, content=content)
        )
        self.redirects.append(heredoc)
        return [heredoc, *self._heredoc_tail(start, tail, via)]

    def _heredoc_tail(self, start: Node, tail: Sequence[Node], via: str | None) -> list[Redirect]:
        """Read the rest of a here-document's command line, which the grammar hangs under it.

        S12: in the shell the line goes on as if the here-document were any redirection —
        ``cat <<EOF | grep x``, ``cat <<EOF >f && rm x``, ``cat <<EOF a b`` — and its body
        starts on the next line. The pipeline or list that follows is walked like any other
        (:func:`~._shell_shape.line_shape` reads its operators); the redirections belong to the
        command, and the words are its arguments (the walker's ``command`` reads them). The
        redirections are returned.
        """
        if not tail:
            return []
        # The body starts after the first newline of the command line; a grammar that read the
        # line on into the next (`cat <<EOF |` + newline + `grep x`) took body text for commands.
        line = self.source[start.end_byte : tail[-1].end_byte].replace(b"\\\n", b"")
        if b"\n" in line:
            raise Unparseable("a here-document whose command line goes on past the line end")
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
            elif child.type in WORD_NODES or child.type == "comment":
                continue  # the command's arguments (read by `command`), or a comment
            elif child.is_named:
                self.statement(child, via)  # the right side of `&&` / `||`
            else:
                # A token this reading does not know: the line is not read exactly.
                self.unsupported.append(HEREDOC_LINE)
        return redirects


_CLOSE_OPERATORS: Final = frozenset({">&-", "<&-"})


def _redirect_target(node: Node) -> Node | None:
    """The word a file redirection or here-string opens (``None`` for a close: ``2>&-``)."""
    if node.type == "file_redirect":
        if any(c.type in _CLOSE_OPERATORS for c in node.children):
            return None
        destinations = node.children_by_field_name("destination")
        if destinations:
            return destinations[0]
    return next((c for c in node.children if c.is_named and c.type in WORD_NODES), None)


def hung_words(node: Node) -> list[Node]:
    """Words the grammar hangs under a redirection that are the command's own arguments.

    A redirection takes one word in the shell, but the grammar gives a file redirection every
    word that follows it (``rm 2>/dev/null -rf /`` reads as ``rm`` with a redirection to three
    files), gives a close (``2>&- x``) the word after it, and hangs the words after a
    here-document's delimiter (``cat <<EOF a b``) and the redirections after it (whose own
    words count too) under the here-document.
    """
    if node.type == "file_redirect":
        if any(c.type in _CLOSE_OPERATORS for c in node.children):
            return [c for c in node.children if c.is_named and c.type in WORD_NODES]
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
        elif started and child.is_named and child.type in WORD_NODES:
            hung.append(child)
        elif started and child.type in ("file_redirect", "herestring_redirect"):
            hung.extend(hung_words(child))
    return hung


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
