"""Read-only command classification (S21): the host side of core's classifier port.

A command tool's call is decided as *inspect* — looking around never prompts — when the whole line
runs only built-in read-only commands and names nothing outside the workspace once symlinks are
followed. Everything is judged conservatively: a line the parser cannot read, anything computed at
run time, a substitution, an output redirection (other than to ``/dev/null``), a command outside
the list, or an option that writes (``sort -o``, ``find -delete``) makes it *not* read-only, and
the call is decided by its declared risk class instead. A user's ask or deny rule is checked before
this classification and still applies.
"""

from __future__ import annotations

import os
from typing import Final

from robota.core.permissions import analyze_command
from robota.host._paths import is_path_inside

__all__ = ["READ_ONLY_COMMANDS", "is_read_only_command"]

READ_ONLY_COMMANDS: Final = frozenset(
    {
        "basename", "cat", "cmp", "column", "cut", "date", "df", "diff", "dirname", "du",
        "echo", "egrep", "false", "fgrep", "file", "find", "git", "grep", "head", "hostname",
        "id", "jq", "ls", "md5sum", "nl", "printf", "pwd", "readlink", "realpath", "rg",
        "sha1sum", "sha256sum", "sort", "stat", "tail", "test", "tr", "tree", "true", "uname",
        "uniq", "wc", "which", "whoami", "[",
    }
)  # fmt: skip
"""Commands that only read (given the option checks below)."""

_GIT_READ_ONLY: Final = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "blame",
        "describe",
        "shortlog",
        "ls-tree",
        "cat-file",
    }
)
_FIND_WRITES: Final = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_WRITING_OPTIONS: Final = {"sort": frozenset({"-o", "--output"}), "tree": frozenset({"-o"})}


def _words_ok(words: tuple[str, ...], workspace: str) -> bool:
    name = os.path.basename(words[0])
    if name not in READ_ONLY_COMMANDS:
        return False
    args = words[1:]
    if name == "git":
        subcommand = next((a for a in args if not a.startswith("-")), None)
        if subcommand not in _GIT_READ_ONLY or any(
            a.startswith(("-c", "--exec-path", "--output")) for a in args
        ):
            return False
    if name == "find" and any(a in _FIND_WRITES for a in args):
        return False
    writing = _WRITING_OPTIONS.get(name, frozenset())
    if any(a in writing or any(a.startswith(w + "=") for w in writing) for a in args):
        return False
    for raw in args:
        word = raw.split("=", 1)[1] if raw.startswith("-") and "=" in raw else raw
        if not word or (word is raw and raw.startswith("-")):
            continue
        if word.startswith("~"):
            return False  # the shell expands it to a home directory
        if not is_path_inside(workspace, word):  # relative words are taken from the workspace
            return False
    return True


def is_read_only_command(command: str, *, workspace: str) -> bool:
    """Whether ``command`` runs only read-only commands naming nothing outside ``workspace``.

    ``workspace`` must be an absolute path to an existing directory; paths in the command are
    judged relative to it with symlinks followed (:func:`robota.host.is_path_inside`).

    Bind it to a workspace and pass it as the permission context's classifier::

        PermissionContext(
            workspace=root,
            read_only_command=lambda command: is_read_only_command(command, workspace=root),
        )
    """
    line = analyze_command(command)
    if not line.parsed or line.opaque or line.substitutions or not line.commands:
        return False
    if any(target != "/dev/null" for target in line.redirections):
        return False
    for source in line.inputs:
        if source.startswith("~") or not is_path_inside(workspace, source):
            return False
    return all(
        not simple.opaque_arguments and _words_ok(simple.words, workspace)
        for simple in line.commands
    )
