"""``robota.tools``: built-in workspace tools, each a normal :class:`robota.Tool` (issue 30).

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
:func:`web_fetch`   ``WebFetch``         one web page as text, through the egress client (S06)
:func:`ask_user`    ``AskUserQuestion``  a question to the person, through the run's approver
==================  ===================  ======================================================

``edit_file``, ``write_file`` and ``shell`` come next (issue 30); :func:`builtin` will return
them too once they exist.

``WebFetch`` declares risk ``execute`` (S21: the URL leaves the machine, so default mode asks
about a domain no rule allows) and scopes its rules to its ``url`` argument read as a URL
(S12): ``WebFetch(domain:docs.python.org)``. ``AskUserQuestion`` declares ``inspect``; the
person's answer is its result. An approver answers questions when it has an ``answer`` method
(:class:`QuestionApprover`); with none, the model is told there is no one to ask.

The tool names (what the model calls and what permission rules name) are Claude Code's, so
rules written for that settings format apply as written (``Read(src/**)``).
Each workspace tool declares risk ``inspect`` (S21) and scopes its rules to its ``path``
argument, read as a path (S12); judge rules from the same root the tools are bound to
(:func:`robota.host.permission_context` with that workspace).

What a path rule does not do today: a rule names one tool, so unlike Claude Code a
``Read(...)`` deny does not reach ``Grep`` or ``Glob``; and ``Grep``/``Glob``/``LS`` rules judge
the directory searched, not each file the walk meets, so ``Grep(secrets/**)`` denied still lets
``Grep`` with ``path="."`` read ``secrets/``. To keep a subtree away from the model, deny
``Grep`` and ``Glob`` outright (or list them only with ``ask``), or keep the subtree out of the
workspace.

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
import robota.host
from robota.tools._ask_user import AskUserTool, Question, QuestionApprover, QuestionAsker
from robota.tools._grep import DEFAULT_TIME_LIMIT, GrepTool
from robota.tools._listing import GlobTool, ListDirTool
from robota.tools._read import ReadFileTool
from robota.tools._web_fetch import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT, WebFetchTool
from robota.tools._workspace import Workspace

__all__ = [
    "Question",
    "QuestionApprover",
    "QuestionAsker",
    "ask_user",
    "builtin",
    "glob",
    "grep",
    "list_dir",
    "read_file",
    "web_fetch",
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


def web_fetch(
    *,
    name: str | None = None,
    client: robota.host.EgressClient | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
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


def builtin(*, workspace: WorkspaceRoot) -> list[robota.core.Tool]:
    """Every built-in tool, bound to ``workspace``.

    Today ``Read``, ``LS``, ``Glob``, ``Grep``, ``WebFetch`` (default egress policy) and
    ``AskUserQuestion`` (asks the run's approver). The write and shell tools join this list as
    they are built (issue 30); pass the list to ``Agent(tools=...)``.

    Raises:
        ValueError: ``workspace`` is not an existing directory.
    """
    root = Workspace(workspace)
    return [
        ReadFileTool(root),
        ListDirTool(root),
        GlobTool(root),
        GrepTool(root),
        WebFetchTool(),
        AskUserTool(),
    ]
