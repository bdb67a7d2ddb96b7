"""The straight-line shape of a command line: its commands and operators, in order (S12).

:func:`line_shape` reads, from the tree the walker (:mod:`._shell`) has walked, the sequence of
commands (by their index in :attr:`CommandLine.commands`) and the ``;``, ``&&``, ``||``, ``|``
and ``|&`` between them — or ``None`` when the line is not a straight line of simple commands.
That is :attr:`CommandLine.shape`, which allow rules and the read-only classifier read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from robota.core.permissions._shell_model import CONTROL_FLOW
from robota.core.permissions._shell_syntax import WORD_NODES

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["line_shape"]

# What a here-document node holds besides the rest of its line (see `RedirectReader._heredoc_tail`).
_HEREDOC_PARTS: Final = frozenset(
    {"heredoc_start", "heredoc_body", "heredoc_end", "file_redirect", "herestring_redirect",
     "comment", "file_descriptor", *WORD_NODES}
)  # fmt: skip
# Statements that can continue a line after a here-document's `&&` or `||`.
_STATEMENTS: Final = frozenset(
    {"command", "test_command", "list", "pipeline", "redirected_statement", "subshell",
     "compound_statement", "negated_command", "declaration_command", "unset_command",
     "variable_assignment", "variable_assignments", "function_definition", *CONTROL_FLOW}
)  # fmt: skip


def line_shape(node: Node, command_index: Mapping[int, int]) -> list[int | str] | None:
    """The commands under ``node`` (by ``command_index``, node id to index) and their operators.

    ``None`` when ``node`` is not a straight line of simple commands (a group, a subshell, a
    control structure, a command the walk did not index …).
    """
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
            inner = line_shape(child, command_index)
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
            inner = line_shape(child, command_index)
            if inner is None:
                return None
            out.extend(inner)
        return out
    if kind == "redirected_statement":
        # The redirections belong to the last command (see `_Walker._redirected_body`); what the
        # grammar hangs under a here-document continues the line.
        body = node.child_by_field_name("body")
        line = line_shape(body, command_index) if body is not None else None
        if line is None:
            return None
        for child in node.children:
            if child.type == "heredoc_redirect":
                tail = _heredoc_shape(child, command_index)
                if tail is None:
                    return None
                line.extend(tail)
        return line
    if kind in ("command", "test_command"):
        index = command_index.get(node.id)
        return None if index is None else [index]
    return None


def _heredoc_shape(node: Node, command_index: Mapping[int, int]) -> list[int | str] | None:
    """The operators and commands that continue a line after a here-document."""
    out: list[int | str] = []
    for child in node.children:
        if child.type == "pipeline" and child.children[0].type in ("|", "|&"):
            out.append(child.children[0].type)
            rest = [c for c in child.children[1:] if c.is_named]
            if len(rest) != 1:
                return None
            inner = line_shape(rest[0], command_index)
            if inner is None:
                return None
            out.extend(inner)
        elif not child.is_named and child.type in ("&&", "||"):
            out.append(child.type)
        elif child.is_named and child.type in _STATEMENTS:
            inner = line_shape(child, command_index)
            if inner is None:
                return None
            out.extend(inner)
        elif child.is_named and child.type not in _HEREDOC_PARTS:
            return None
    return out
