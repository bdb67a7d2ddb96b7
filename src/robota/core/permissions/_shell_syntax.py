"""The grammar's tree and the line's text, read without walking the line (S12, S21).

What the walker over a command line (:mod:`._shell`) needs to know about the text and the
tree-sitter-bash tree before and beside the walk: the parse itself, with its workaround for
lines the grammar joins (:func:`parse`); a line continuation the grammar and the shell read
differently (:func:`joins_words`); the script text words hand to a nested shell
(:func:`script_text`); the node types that are words and redirections; and
:class:`Unparseable`, which every part of the walk raises for a line it cannot read. Nothing
here keeps state.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

    from robota.core.permissions._shell_words import Word

__all__ = [
    "REDIRECTS",
    "WORD_NODES",
    "Unparseable",
    "error_reason",
    "joins_words",
    "leaves",
    "parse",
    "script_text",
]

WORD_NODES: Final = frozenset(
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
REDIRECTS: Final = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


class Unparseable(Exception):
    """The line cannot be read; the message says why (:attr:`CommandLine.error`)."""


@functools.cache
def _parser() -> Parser:
    # The grammar is loaded on first use, not with `import robota`.
    import tree_sitter  # noqa: PLC0415
    import tree_sitter_bash  # noqa: PLC0415

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


_MAX_REPARSES: Final = 32


def parse(source: bytes) -> tuple[bytes, Node]:
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
    raise Unparseable("the shell grammar joined lines into one command too often to read")


_WORD_LISTS: Final = frozenset({"command", "file_redirect"})
"""Nodes whose children the grammar may run across a newline: a command's words, and a
redirection's destinations (``a >/dev/null<newline>\\b`` read as two destinations)."""


def _joined_line(root: Node, source: bytes) -> int | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _WORD_LISTS:
            for left, right in itertools.pairwise(node.children):
                if node.type == "command" and (left.type in REDIRECTS or right.type in REDIRECTS):
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


def joins_words(text: str) -> bool:
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


def script_text(words: Sequence[Word]) -> str | None:
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


def leaves(nodes: list[Node]) -> list[Node]:
    """The words and tokens under ``nodes``, in order; a word's own parts are not opened."""
    out: list[Node] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if node.type in WORD_NODES or not node.children:
            out.append(node)
        else:
            stack.extend(reversed(node.children))
    return out


def error_reason(root: Node, text: str) -> str:
    """Why the grammar cannot read ``root``: its first error or missing node, and where."""
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
