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

What is here today:

==================  ===================  ======================================================
factory             tool                 what it does
==================  ===================  ======================================================
:func:`read_file`   ``Read``             numbered lines of a text file, a range at a time
:func:`list_dir`    ``LS``               the entries of one directory
:func:`glob`        ``Glob``             files whose path matches a glob (``**/*.py``)
:func:`grep`        ``Grep``             lines matching a regular expression, with context
:func:`edit_file`   ``Edit``             an exact-string replacement, or a unified patch
:func:`write_file`  ``Write``            creates or overwrites one file
:func:`shell`       ``Bash``             a command line run by ``bash`` in the workspace root
:func:`web_fetch`   ``WebFetch``         one web page as text, through the egress client (S06)
:func:`ask_user`    ``AskUserQuestion``  a question to the person, through the run's approver
==================  ===================  ======================================================

:func:`undo` takes the newest ``Edit`` or ``Write`` in a workspace back.

The tool names (what the model calls and what permission rules name) are Claude Code's, so
rules written for that settings format apply as written (``Read(src/**)``, ``Edit(**/*.py)``,
``Bash(git status)``, ``WebFetch(domain:docs.python.org)``); judge path rules from the same
root the tools are bound to (:func:`robota.host.permission_context` with that workspace).

Reading: ``Read``, ``LS``, ``Glob`` and ``Grep`` declare risk ``inspect`` (S21) and scope
their rules to their ``path`` argument, read as a path (S12).

Changing files: ``Edit`` and ``Write`` declare risk ``modify`` (S21), so the default mode asks
before each one and ``accept_edits`` lets them run; their rules are scoped to ``path`` too
(``Edit(src/**)``), and as in Claude Code an ``Edit`` deny or ask rule judges ``Write`` and a
``Read`` deny or ask rule judges ``Edit``. They never write through a symbolic link — a path
that goes through one, as its last component or a directory on the way, is refused, and the
kernel refuses one swapped in later (``O_NOFOLLOW`` from the root's descriptor). A file is
replaced atomically (a temporary file in the same directory, flushed, keeping the file's mode,
renamed over it) and read once. The replacement is a new inode: the mode is kept, but not
extended attributes, an owner other than this account, or other hard links to the file (they
keep the old bytes, so a hard link to a file outside the root is not written through). Before
each change its pre-image is kept in process-scoped scratch (S08), and :func:`undo` takes the
newest change in a workspace back — refusing when the file changed since. The result's
``view`` is a :class:`FileChange` with a unified diff for a user interface (S39: it never
reaches the model).

Commands: ``Bash`` declares risk ``execute`` and scopes its rules to its ``command`` argument,
read as a command (``Bash(git status)``, ``Bash(npm run test:*)``, ``Bash(rm:*)``): the default
mode asks before any command, except one the context's read-only classifier (S21,
:func:`robota.host.is_read_only_command`) finds only reads inside the workspace, which runs
without asking. A command runs with the user's privileges: this is not a sandbox.

The web and the person: ``WebFetch`` declares risk ``execute`` (S21: the URL leaves the
machine, so the default mode asks about a domain no rule allows) and scopes its rules to its
``url`` argument read as a URL (S12). ``AskUserQuestion`` declares ``inspect``; the person's
answer is its result. An approver answers questions when it has an ``answer`` method
(:class:`QuestionApprover`); with none, the model is told there is no one to ask.

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

The shell (``Bash``) is not contained by any of this: a command runs with the user's
privileges and may ``cd /`` or read any file the user can. What keeps it in bounds is the
permission gate (rules, the mode, the read-only classifier, the always-ask protections) and,
where that is not enough, an OS sandbox around the whole agent (a container or a user
namespace). What the tool itself guarantees: the command runs in its own process group (S09)
that is killed at the time limit (SIGTERM, then SIGKILL) and at once on the run's abort (S23),
background jobs included; stdin is empty; the environment carries only a short allow-list
(``PATH``, ``HOME``, locale, ``TERM``, ``USER``, ``SHELL``, ``TMPDIR``, ``TZ``) plus what
``shell(env=...)`` names, so the agent's API keys never reach it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import robota.core
import robota.host
from robota.tools._ask_user import AskUserTool, Question, QuestionApprover, QuestionAsker
from robota.tools._edit import EditTool, WriteTool
from robota.tools._grep import DEFAULT_TIME_LIMIT, GrepTool
from robota.tools._listing import GlobTool, ListDirTool
from robota.tools._read import ReadFileTool
from robota.tools._shell import DEFAULT_OUTPUT_LIMIT, MAX_TIMEOUT, ShellTool
from robota.tools._shell import DEFAULT_TIMEOUT as SHELL_TIMEOUT
from robota.tools._undo import FileChange, UndoError, Undone, undo_change
from robota.tools._web_fetch import DEFAULT_MAX_BYTES, WebFetchTool
from robota.tools._web_fetch import DEFAULT_TIMEOUT as FETCH_TIMEOUT
from robota.tools._workspace import Workspace

__all__ = [
    "FileChange",
    "Question",
    "QuestionApprover",
    "QuestionAsker",
    "UndoError",
    "Undone",
    "ask_user",
    "builtin",
    "edit_file",
    "glob",
    "grep",
    "list_dir",
    "read_file",
    "shell",
    "undo",
    "web_fetch",
    "write_file",
]

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


def edit_file(*, workspace: WorkspaceRoot, name: str | None = None) -> robota.core.Tool:
    """An ``Edit`` tool bound to ``workspace``: an exact-string replacement or a unified patch.

    With ``old_string``/``new_string`` it replaces a string that occurs exactly once (every
    occurrence with ``replace_all``); with ``patch`` it applies a unified diff of that one file
    whose every hunk must match exactly. Either way only the replaced bytes change (line endings
    and bytes that are not UTF-8 elsewhere are kept), and the file is replaced atomically with
    its mode kept. Declares risk ``modify`` (S21) and the ``path`` argument (S12). The result's
    content is a short confirmation with the changed lines numbered as ``Read`` shows them;
    its ``view`` is a :class:`FileChange`. Undo with :func:`undo`.

    Args:
        workspace: The root directory; nothing outside it is changed.
        name: The tool's name, if not ``"Edit"`` (permission rules name it).

    Raises:
        ValueError: ``workspace`` is not an existing directory.
    """
    return EditTool(Workspace(workspace), name=name)


def write_file(*, workspace: WorkspaceRoot, name: str | None = None) -> robota.core.Tool:
    """A ``Write`` tool bound to ``workspace``: creates or overwrites one file with ``content``.

    Missing parent directories inside the workspace are created, each opened without following
    a link. Declares risk ``modify`` (S21) and the ``path`` argument (S12); the result's
    ``view`` is a :class:`FileChange`. Undo with :func:`undo` (a created file is removed).

    Args:
        workspace: The root directory; nothing outside it is written.
        name: The tool's name, if not ``"Write"``.

    Raises:
        ValueError: ``workspace`` is not an existing directory.
    """
    return WriteTool(Workspace(workspace), name=name)


def undo(*, workspace: WorkspaceRoot) -> Undone | None:
    """Take back the newest change an ``Edit`` or ``Write`` tool made in ``workspace``.

    The history is this process's, per canonical workspace root, shared by every such tool
    bound to it; calling again walks further back, up to the last 100 changes. The old bytes
    and mode are restored (or the file the tool created is removed; directories it made stay)
    under the same containment and no-link rules the tools follow. Blocking file I/O: from
    async code, call it with :func:`asyncio.to_thread`.

    Args:
        workspace: The root directory the tools were bound to (any spelling of it).

    Returns:
        What was undone, or ``None`` when there is nothing left to undo.

    Raises:
        UndoError: the file changed since the tool wrote it (the later change is kept, and the
            change stays in the history), was removed, or can no longer be reached.
        ValueError: ``workspace`` is not an existing directory.
    """
    return undo_change(Workspace(workspace))


def shell(
    *,
    workspace: WorkspaceRoot,
    name: str | None = None,
    timeout: float = SHELL_TIMEOUT,
    max_timeout: float = MAX_TIMEOUT,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    env: Mapping[str, str] | None = None,
) -> robota.core.Tool:
    """A ``Bash`` tool bound to ``workspace``: runs ``bash -c COMMAND`` in the workspace root.

    The model passes ``command``, optionally ``timeout`` (seconds, lowered to ``max_timeout``)
    and ``description``. The answer is stdout and stderr interleaved as written, ``(no
    output)`` when there is none, then ``exit code N`` when the status is not 0 (an error
    result, output included). Output past ``output_limit`` characters is cut in the middle
    (head and tail kept, the cut said); bytes that are not UTF-8 show as U+FFFD.

    Each call starts fresh in the workspace root: a ``cd`` or a variable does not carry over
    to the next call. stdin is ``/dev/null``. The command leads its own process group (S09):
    at the time limit the group gets SIGTERM, then SIGKILL two seconds later, and the result
    says it timed out (an error, with the output so far); the run's abort kills the group at
    once (S23); background jobs the command started (``&``) are killed when it ends. A
    process that leaves the group (``setsid``, a daemon) is beyond reach.

    Permissions (S12, S21): risk ``execute``, scoped to ``command`` read as a command, so
    ``Bash(git status)`` / ``Bash(npm run test:*)`` rules apply; in the default mode every
    command asks, except one the gate's read-only classifier clears
    (:func:`robota.host.permission_context` wires :func:`robota.host.is_read_only_command`).
    This is not containment: a command runs with the user's privileges and may ``cd /``; an
    in-process check is not a sandbox — use an OS sandbox (a container, a user namespace)
    where the gate is not enough.

    Args:
        workspace: The directory each command starts in.
        name: The tool's name, if not ``"Bash"`` (permission rules name it).
        timeout: Seconds a command may run when the model names no ``timeout`` (default 120).
        max_timeout: The most seconds the model may ask for (default 600).
        output_limit: Characters of output shown at most (default 30,000).
        env: Variables to set for every command, on top of the inherited allow-list (``PATH``,
            ``HOME``, ``LANG``/``LANGUAGE``/``LC_<category>``, ``TERM``, ``USER``, ``LOGNAME``,
            ``SHELL``, ``TMPDIR``, ``TZ``). Nothing else of this process's environment passes —
            never its API keys — but what ``env`` names passes as given, whatever its name:
            naming a secret here is an explicit choice.

    Raises:
        ValueError: ``workspace`` is not an existing directory; ``timeout`` is not positive
            or exceeds ``max_timeout``; ``output_limit`` is below 100; ``env`` holds a name
            that is not a variable name or a value that is not a string.
    """
    return ShellTool(
        Workspace(workspace),
        name=name,
        timeout=timeout,
        max_timeout=max_timeout,
        output_limit=output_limit,
        env=env,
    )


def web_fetch(
    *,
    name: str | None = None,
    client: robota.host.EgressClient | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = FETCH_TIMEOUT,
    workspace: WorkspaceRoot | None = None,
) -> robota.core.Tool:
    """A ``WebFetch`` tool: one http(s) page as readable text, through the egress client (S06).

    The URL and every redirect hop are checked by the egress policy before anything is sent
    (loopback, private and metadata addresses are refused, redirects included) and the
    connection goes only to the checked address. HTML becomes text (headings, lists, links as
    ``text (url)``, code blocks verbatim; scripts and styles dropped), in the charset the
    response or its ``<meta>`` names (UTF-8 by default); text, Markdown and JSON are returned
    as they are; other types are refused naming the type. At most ``max_bytes`` are read (the
    answer says when the page was cut) and 100,000 characters returned; the whole fetch is
    stopped after ``timeout`` seconds and at once when the run is aborted (S23). An HTTP error
    status or a refusal is an error result naming it. Requests carry a fixed ``User-Agent``
    and no cookies, credentials or keys of the agent.

    Risk ``execute`` (S21): default mode asks before fetching a URL no rule allows. Rules
    scope to the ``url`` argument (S12): ``WebFetch(domain:docs.python.org)``.

    Args:
        name: The tool's name, if not ``"WebFetch"``.
        client: The :class:`robota.host.EgressClient` to fetch with (its policy, resolver and
            redirect cap; left open). Default: a client with the default policy per fetch,
            following at most 5 redirects.
        max_bytes: The most body bytes read (default 5 MiB; a caller's client may cap lower).
        timeout: Seconds the whole fetch may take, redirects included (default 30).
        workspace: Accepted so every factory takes the same keyword; a fetch reads no file.

    Raises:
        ValueError: ``max_bytes`` or ``timeout`` is not positive.
        TypeError: ``client`` is not an ``EgressClient``.
    """
    del workspace  # a fetch touches no file
    return WebFetchTool(name=name, client=client, max_bytes=max_bytes, timeout=timeout)


def ask_user(*, name: str | None = None, ask: QuestionAsker | None = None) -> robota.core.Tool:
    """An ``AskUserQuestion`` tool: the model asks the person a question; the answer is its result.

    The question goes to ``ask`` when given, else to the approver the run's permission asks go
    to (:attr:`robota.ToolContext.approver`) when it has an ``answer`` method
    (:class:`QuestionApprover`; the ``robota chat`` terminal approver has one). A person who
    declines is reported as such; with no one to ask, the model gets an error result saying so.
    The arguments are ``question`` and optional ``choices`` (a simpler shape than Claude
    Code's tool of this name; rules naming the tool apply as written).

    Args:
        name: The tool's name, if not ``"AskUserQuestion"``.
        ask: ``async (Question) -> str | None`` answering every question instead of the
            approver (``None`` for a decline).
    """
    return AskUserTool(name=name, ask=ask)


def builtin(
    *, workspace: WorkspaceRoot, grep_time_limit: float = DEFAULT_TIME_LIMIT
) -> list[robota.core.Tool]:
    """Every built-in tool, bound to ``workspace``: the nine of this module, in table order.

    ``Read``, ``LS``, ``Glob``, ``Grep``, ``Edit``, ``Write``, ``Bash``, ``WebFetch`` (the
    default egress policy) and ``AskUserQuestion`` (asks the run's approver).

    Pass the list to ``Agent(tools=...)`` with a :class:`robota.PermissionGate` and
    :func:`robota.host.permission_context` for the same workspace: in the default mode reads
    run, ``Edit`` and ``Write`` ask, ``Bash`` asks before any command that is not read-only and
    ``WebFetch`` before a domain no rule allows.

    Args:
        workspace: The root directory; no tool reads or writes a file outside it.
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
        EditTool(root),
        WriteTool(root),
        ShellTool(root),
        WebFetchTool(),
        AskUserTool(),
    ]
