"""What a walk over one command line has found so far, shared by its parts (S12, S21).

The walk that :func:`~robota.core.permissions.analyze_command` makes is split by concept into
mixins over this state: the statements and commands (:mod:`._shell`, which defines the walker),
redirections and here-documents (:mod:`._shell_redirects`), and what a simple command runs
through wrappers, options and nested scripts (:mod:`._shell_simple`). A part calls back into
the walk only through the two hooks declared here — :meth:`WalkerState.statement` and
:meth:`WalkerState.script` — which the walker in :mod:`._shell` defines, so that imports run one
way: the parts import this module, never each other or :mod:`._shell`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

from robota.core.permissions._shell_words import Word, substitution_nodes

if TYPE_CHECKING:
    from tree_sitter import Node

    from robota.core.permissions._shell_model import Redirect, SimpleCommand

__all__ = ["Assignment", "StdinReader", "WalkerState"]


@final
@dataclass(frozen=True, slots=True)
class Assignment:
    """One ``NAME=value`` the line sets, wherever it is written (S21: one reading for all).

    Attributes:
        text: As written in front of a command (what :attr:`SimpleCommand.assignments` shows),
            or the word's value when a wrapper (``env``) or a builtin (``export``) was given it.
        name: The variable's name as written (``X``, ``X+``, ``a[1]``).
        value: What it is set to, or ``None`` when the line does not show it.
    """

    text: str
    name: str
    value: Word | None


@final
@dataclass(frozen=True, slots=True)
class StdinReader:
    """A command that runs what it reads on its standard input as a script.

    ``bash``, ``at``, ``ssh`` without a remote command: it waits to be given that input.

    Attributes:
        index: The command's index in the walk's commands.
        via: How the script's commands are reached (``"bash stdin"``).
        moved: The script runs in another directory (or on another host).
    """

    index: int
    via: str
    moved: bool = False


@dataclass
class WalkerState(ABC):
    """The walk's findings and position; the hooks its parts call back into (S12)."""

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
    # S21: commands whose standard input is the one the command being read is given (a
    # here-document's text reaches them), and those that run it as a script; both wait for the
    # command's redirections (_shell_simple.SimpleCommandReader.settle_stdin).
    stdin_receivers: list[int] = field(default_factory=list)
    stdin_readers: list[StdinReader] = field(default_factory=list)
    # Reading a value a program runs with arguments it adds (`GIT_SSH_COMMAND`, `core.pager`):
    # a command there that names no command of its own is given one at run time.
    arguments_follow: bool = False

    @abstractmethod
    def script(self, text: str, *, via: str | None, top: bool = False) -> list[int | str] | None:
        """Read ``text`` as a script whose commands run ``via`` a wrapper, eval or shell."""

    @abstractmethod
    def statement(self, node: Node, via: str | None) -> None:
        """Read one statement (or word, or redirection) of the tree."""

    def text(self, node: Node) -> str:
        """The source text of ``node``."""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    def _children(self, node: Node, via: str | None) -> None:
        for child in node.children:
            self.statement(child, via)

    def _substitutions_in(self, node: Node, via: str | None) -> None:
        for sub in substitution_nodes(node):
            self.substitution(sub, via)

    def substitution(self, node: Node, via: str | None) -> None:
        """Read a command or process substitution, whose commands run on their own."""
        self.substitutions = True
        outer, self.parent = self.parent, None  # a substitution's commands run on their own
        try:
            for child in node.children:
                if child.is_named:
                    self.statement(child, via or "$(…)")
        finally:
            self.parent = outer
