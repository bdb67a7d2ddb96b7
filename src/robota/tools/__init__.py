r"""``robota.tools``: built-in workspace tools, each a normal :class:`robota.Tool` (issue 30).

Every name here is a factory: call it with the workspace root and get a tool bound to it, or
take them all at once with :func:`builtin`::

    agent = robota.Agent(
        provider=...,
        model=...,
        tools=robota.tools.builtin(workspace="/path/to/project"),
        tool_gate=robota.PermissionGate(
            robota.PermissionPolicy(allow=["Read(src/**)"]),
            robota.host.permission_context("/path/to/project"),
        ),
    )

    reader = robota.tools.read_file(workspace="/path/to/project")  # one tool

What is here today — the read-only tools:

================  ========  ===============================================================
factory           tool      what it does
================  ========  ===============================================================
:func:`read_file` ``Read``  numbered lines of a text file, a range at a time
:func:`list_dir`  ``LS``    the entries of one directory
:func:`glob`      ``Glob``  files whose path matches a glob (``**/*.py``)
:func:`grep`      ``Grep``  lines matching a regular expression, with context
================  ========  ===============================================================

``edit_file``, ``write_file``, ``shell``, ``web_fetch`` and ``ask_user`` come next (issue 30);
:func:`builtin` will return them too once they exist.

The tool names (what the model calls and what permission rules name) are Claude Code's, so
rules written for that settings format apply as written (``Read(src/**)``).
Each tool declares risk ``inspect`` (S21) and scopes its rules to its ``path`` argument, read as
a path (S12); judge rules from the same root the tools are bound to
(:func:`robota.host.permission_context` with that workspace).

What a path rule reaches: as in Claude Code, ``Read`` deny and ask rules judge ``Grep``,
``Glob`` and ``LS`` too (their argument declares ``also_judged_as=("Read",)``, S12), and a walk
judges each file and directory it meets, not only the directory named: with a gate, the tools ask
the call's :class:`robota.PathScreen` (:meth:`robota.ToolContext.path_screen`), which judges each
path as the gate would judge a call naming it — the same rules, workspace root and resolver. A
path a deny rule covers (``Read(secrets/**)``, ``Grep(**/.env)``) is left out silently: not
listed, not searched, a directory not entered. A walk cannot ask a person about each file, so a
path an ask rule covers is left out too, and the answer says how many were (the model can name
one directly and be asked). An ask rule that covers the call's own path was answered when the
call was admitted and does not empty the walk. Allow rules for ``Read`` grant nothing to the
other tools. Without a gate nothing is withheld; a custom gate takes part by offering a
``path_screen(tool, arguments)`` method like :class:`robota.PermissionGate`'s.

Names are shown so that they cannot forge a line of an answer: a byte that is not UTF-8, a newline
or any other control character in a file name is shown as ``\xNN`` (``a\x0ab``), and every tool
accepts that spelling back as a path.

Time-limited (issue 30): Python's ``re`` cannot be interrupted, so ``Grep`` runs its regular
expression in a small child process (the standard library only, never ``robota``) that leads
its own process group (S09). The agent's process walks the workspace and opens every file under
the containment rules below, then streams the contents to the child over a pipe; the child never
opens a path. A pattern that backtracks badly (``(a+)+$``, or ``a.*b`` over a multi-megabyte
line) costs at most the search's time limit (30 s by default, ``grep(time_limit=...)``) — the
group is killed and the model is told to simplify the pattern — and the run's abort kills the
group at once (S23). The event loop and Ctrl-C stay responsive throughout.

Containment (S05): every path is judged by :func:`robota.host.is_path_inside` — links followed
to where they lead, ``..`` and absolute paths included — and a path outside the root is refused;
the canonical path is then opened a component at a time from the root without following a link,
so a link swapped in after the check is refused; a path starting with ``~`` is refused (rules
read it as the home directory); walks never follow a link; FIFOs, sockets and devices are
refused without being opened for reading. This decides what the tools read; it is not a
sandbox (see ``robota.host``'s S05 note).
"""

from __future__ import annotations

import os

import robota.core
from robota.tools._grep import DEFAULT_TIME_LIMIT, GrepTool
from robota.tools._listing import GlobTool, ListDirTool
from robota.tools._read import ReadFileTool
from robota.tools._workspace import Workspace

__all__ = ["builtin", "glob", "grep", "list_dir", "read_file"]

WorkspaceRoot = str | os.PathLike[str]


def read_file(*, workspace: WorkspaceRoot, name: str | None = None) -> robota.core.Tool:
    """A ``Read`` tool bound to ``workspace``: numbered lines of one text file.

    Reads a range (``offset``/``limit`` in lines, 2,000 by default) in one streaming pass; caps
    each answer at 100,000 characters and says where to continue; refuses binary files with the
    reason; shows bytes that are not UTF-8 as U+FFFD.

    Args:
        workspace: The root directory; nothing outside it is read.
        name: The tool's name, if not ``"Read"`` (permission rules name it).

    Raises:
        ValueError: ``workspace`` is not an existing directory.
    """
    return ReadFileTool(Workspace(workspace), name=name)


def list_dir(*, workspace: WorkspaceRoot, name: str | None = None) -> robota.core.Tool:
    """An ``LS`` tool bound to ``workspace``: the entries of one directory (links not followed).

    Args:
        workspace: The root directory; nothing outside it is listed.
        name: The tool's name, if not ``"LS"``.

    Raises:
        ValueError: ``workspace`` is not an existing directory.
    """
    return ListDirTool(Workspace(workspace), name=name)


def glob(*, workspace: WorkspaceRoot, name: str | None = None) -> robota.core.Tool:
    """A ``Glob`` tool bound to ``workspace``: files whose path matches a pattern.

    ``.gitignore`` files are honoured and ``.git`` is skipped; at most 1,000 paths are listed.

    Args:
        workspace: The root directory; nothing outside it is searched.
        name: The tool's name, if not ``"Glob"``.

    Raises:
        ValueError: ``workspace`` is not an existing directory.
    """
    return GlobTool(Workspace(workspace), name=name)


def grep(
    *,
    workspace: WorkspaceRoot,
    name: str | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> robota.core.Tool:
    """A ``Grep`` tool bound to ``workspace``: lines matching a regular expression.

    Answers like ``grep -rn`` (with optional context lines), honours ``.gitignore``, skips
    binary files and files over 20 MB, and stops at a result cap (100 lines by default) or at
    100,000 characters. The regular expression runs in a child process that is killed when the
    whole search passes ``time_limit`` (the model is told the pattern took too long) or when
    the run is aborted (S23).

    Args:
        workspace: The root directory; nothing outside it is searched.
        name: The tool's name, if not ``"Grep"``.
        time_limit: Seconds the whole search may take (default 30).

    Raises:
        ValueError: ``workspace`` is not an existing directory, or ``time_limit`` is not
            positive.
    """
    return GrepTool(Workspace(workspace), name=name, time_limit=time_limit)


def builtin(
    *, workspace: WorkspaceRoot, grep_time_limit: float = DEFAULT_TIME_LIMIT
) -> list[robota.core.Tool]:
    """Every built-in tool, bound to ``workspace``: today ``Read``, ``LS``, ``Glob``, ``Grep``.

    The write, shell, web and ask-the-user tools join this list as they are built (issue 30);
    pass the list to ``Agent(tools=...)``.

    Args:
        workspace: The root directory; nothing outside it is read.
        grep_time_limit: Seconds one ``Grep`` search may take (default 30; see :func:`grep`).

    Raises:
        ValueError: ``workspace`` is not an existing directory, or ``grep_time_limit`` is not
            positive.
    """
    root = Workspace(workspace)
    return [
        ReadFileTool(root),
        ListDirTool(root),
        GlobTool(root),
        GrepTool(root, time_limit=grep_time_limit),
    ]
