"""The shapes :func:`~robota.core.permissions.analyze_command` reports (S12, S21).

One command line becomes a :class:`CommandLine`: the :class:`SimpleCommand` s it runs, each made
of :class:`~robota.core.permissions.Word` s, with its :class:`Redirect` s and
:class:`Heredoc` s, and what the analysis could not read. All are frozen values, shared by the
rule matcher, the catastrophic-removal check and the host's read-only classifier.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

from robota.core.permissions._shell_words import Word

__all__ = [
    "BACKGROUND_REDIRECT",
    "CONTROL_FLOW",
    "HEREDOC_LINE",
    "JOINED_LINE",
    "CommandLine",
    "Heredoc",
    "Redirect",
    "RedirectKind",
    "SimpleCommand",
]

RedirectKind: TypeAlias = Literal[
    "read", "write", "readwrite", "duplicate", "close", "heredoc", "herestring"
]

# Compound commands whose inner commands are all listed, but which are outside the simple
# subset (the read-only classifier and allow rules are held to straight-line commands).
CONTROL_FLOW: Final = {
    "if_statement": "an if statement",
    "elif_clause": "an if statement",
    "else_clause": "an if statement",
    "while_statement": "a while/until loop",
    "for_statement": "a for loop",
    "c_style_for_statement": "a for loop",
    "do_group": "a loop",
    "case_statement": "a case statement",
    "case_item": "a case statement",
}


BACKGROUND_REDIRECT: Final = "'&>' (a background operator in POSIX sh)"
# Something the grammar hangs under a here-document that the analysis does not know how to
# read (the pipeline, list, redirections and words that continue its line are read exactly).
HEREDOC_LINE: Final = "a command line continued after a here-document"
JOINED_LINE: Final = "a line continuation inside a word"
# Unsupported constructs that still list every command with its words.
_ELSEWHERE: Final = frozenset({"a function definition", "brace expansion"})
_LISTING_SAFE: Final = frozenset({*CONTROL_FLOW.values(), "'[[ ]]'", BACKGROUND_REDIRECT})


@final
@dataclass(frozen=True, slots=True)
class Heredoc:
    r"""A here-document.

    Attributes:
        delimiter: Its terminator, after quote removal.
        quoted: The delimiter was quoted (``<<'EOF'``, ``<<"EOF"``, ``<<\\EOF``): the body is
            literal text. Unquoted, the shell expands parameters and runs substitutions in it.
        body: The body as written.
        expands: Unquoted, with a ``$`` or backquote in it: the shell will expand something.
        content: What the command reads: the body with the leading tabs ``<<-`` strips and, when
            the delimiter is unquoted, the backslash escapes the shell removes; its parameters
            and substitutions are parts of the word (only known at run time). ``None`` for a
            ``Heredoc`` made by hand.
    """

    delimiter: str
    quoted: bool
    body: str
    expands: bool
    content: Word | None = None


@final
@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection.

    Attributes:
        operator: As written (``>``, ``>>``, ``<``, ``2>&1``'s ``>&``, ``<<`` …).
        fd: The file descriptor written before the operator, or ``None``.
        target: The word after the operator (``None`` for a here-document or a close).
        heredoc: The here-document, for ``<<`` and ``<<-``.
    """

    operator: str
    fd: int | None
    target: Word | None
    heredoc: Heredoc | None = None

    @property
    def kind(self) -> RedirectKind:
        """What the redirection does to the file system or the descriptors."""
        op = self.operator
        if op in ("<<", "<<-"):
            return "heredoc"
        if op == "<<<":
            return "herestring"
        if op in (">&-", "<&-"):
            return "close"
        if op in (">&", "<&"):
            text = self.target.value if self.target is not None else ""
            if self.target is not None and self.target.literal and text.isdigit():
                return "duplicate"
            if text == "-":
                return "close"
            return "write" if op == ">&" else "read"
        if op == "<":
            return "read"
        if op == "<>":
            return "readwrite"
        return "write"


@final
@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command a line runs.

    Attributes:
        words: The command name (first) and its arguments, after quote removal
            (:attr:`Word.value` of each of :attr:`argv`).
        opaque_arguments: Some arguments are only known at run time (``xargs``, ``find -exec
            … {}``, expansions, a tilde), so the words shown are not all the command will get.
        argv: The words themselves, with what each is made of.
        assignments: ``NAME=value`` assignments written before the command (or handed to it
            by ``env``), as written. They can change what runs and how.
        via: How it was reached when it is not written directly in the line: the wrapper
            (``"env"``, ``"sudo"``), ``"bash -c"``, ``"eval"``, ``"$(…)"``, ``"heredoc"``, a
            shell's standard input (``"bash stdin"``), an option's value (``"git option"``) or a
            variable's (``"$GIT_SSH_COMMAND"``). ``"xargs"`` and ``"find -exec"`` mark every
            command of the chain they run, through any wrappers (``xargs env rm``: ``rm`` too),
            so that whoever reads it knows that ``xargs`` appends arguments only known at run
            time, and that ``find``'s ``{}`` is a name only known then. ``None`` for a command
            written as itself.
        redirects: The redirections that apply to this command: those of a group or subshell
            around it, then those written on it (a here-document's included).
        parent: The index (in :attr:`CommandLine.commands`) of the command that runs this one
            with its own words — a wrapper, a shell's ``-c``, ``xargs`` or ``find -exec`` — or
            ``None``. A command inside a substitution has no parent: it runs on its own.
        moved: It runs in another directory than the line's (``env -C``, ``sudo -D``,
            ``chroot``), so its relative paths do not lead where the line's do.
        stdin: The text it reads on its standard input, when the line gives it one: a
            here-document's :attr:`Heredoc.content` or a here-string's word and newline, from
            the last redirection of descriptor 0 that applies to it (its own, or a group's
            around it). A wrapper (``sudo``, ``env``), a shell running ``-c``, ``ssh`` running a
            remote command pass it on, so it is set on the commands they run, not on them;
            ``xargs`` and ``find -exec`` do not. A shell that runs its standard input as a
            script is not given it either: the script's commands are listed instead. Programs
            that may run what they read (``python3 <<EOF``) can be looked through with it.
            ``None`` when no such text is known (a file, a pipe, the terminal).
    """

    words: tuple[str, ...]
    opaque_arguments: bool = False
    argv: tuple[Word, ...] = ()
    assignments: tuple[str, ...] = ()
    via: str | None = None
    redirects: tuple[Redirect, ...] = ()
    parent: int | None = None
    moved: bool = False
    stdin: Word | None = None

    @property
    def name(self) -> str:
        """The command's name without its directory (``/bin/rm`` → ``rm``)."""
        return os.path.basename(self.words[0]) if self.words else ""


@final
@dataclass(frozen=True, slots=True)
class CommandLine:
    """The analysis of one command line.

    Attributes:
        commands: Every simple command found, in order.
        opaque: Something will run that the text does not show (see the module docstring).
        redirections: Targets of redirections that write (``> f``, ``>> f``, ``<> f``).
        substitutions: The line contains command or process substitutions.
        error: Why the line could not be parsed, or ``None``.
        inputs: Files read by input redirections (``< f``, ``<> f``).
        redirects: Every redirection, in order.
        background: A command is started in the background (``&``).
        unsupported: Constructs outside the simple subset, each named once.
        assignments: Assignments that stand alone (``x=1; …``): they change later commands.
        shape: For a straight line of simple commands joined by ``;``, ``&&``, ``||``, ``|``
            and ``|&``: the command indices (into :attr:`commands`) and operators in order;
            ``None`` for any other structure.
        computed_name: A command's name is computed at run time from the line's own text
            (``$CMD x``, ``$'rm' x``): the line hides what it runs.
    """

    commands: tuple[SimpleCommand, ...] = ()
    opaque: bool = False
    redirections: tuple[str, ...] = ()
    substitutions: bool = False
    error: str | None = None
    inputs: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    background: bool = False
    unsupported: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()
    shape: tuple[int | str, ...] | None = None
    computed_name: bool = False

    @property
    def parsed(self) -> bool:
        """Whether the line parsed."""
        return self.error is None

    @property
    def understood(self) -> bool:
        """Parsed, nothing hidden, and nothing outside the simple subset."""
        return self.error is None and not self.opaque and not self.unsupported

    @property
    def hidden(self) -> bool:
        """The text hides how the shell will read it.

        A command name computed at run time, or a word or construct this analysis cannot
        read exactly — as opposed to a line that runs something kept elsewhere (a script
        file, a function), which no reading of the text could show.
        """
        return self.computed_name or any(
            reason not in _LISTING_SAFE and reason not in _ELSEWHERE for reason in self.unsupported
        )

    @property
    def complete(self) -> bool:
        """Every command that will run is listed, with its words as the shell will read them.

        True for control structures (their commands are all listed); false when anything is
        opaque or a word is not understood.
        """
        return (
            self.error is None
            and not self.opaque
            and all(reason in _LISTING_SAFE for reason in self.unsupported)
        )
