"""A walk over a directory inside the workspace that never follows a link (S05).

Each directory is opened relative to its parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY``,
so a directory swapped for a link during the walk is refused by the kernel rather than
followed out of the root; links are reported as links and never entered. ``.git`` is skipped,
and the ``.gitignore`` files met on the way are honoured when asked (:mod:`._patterns`).

S12: a walk is also told what the permission rules withhold (:class:`Screened`, built from the
call's :class:`robota.PathScreen`): a file withheld is not yielded, a directory withheld is not
entered.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import robota.core
from robota.tools._patterns import IgnoreRules, parse_gitignore
from robota.tools._workspace import Refused, open_regular_at

__all__ = [
    "Entry",
    "Screened",
    "ignore_rules_above",
    "screened",
    "walk",
    "walk_batches",
    "withheld_note",
]

_DIR_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_GITIGNORE_LIMIT: Final = 1 << 20
_MAX_DEPTH: Final = 200


class Screened:
    """The rules' answer for paths below one directory, counting what waits for a person.

    Called with a path relative to ``top`` (canonical), it says whether to withhold it: a path
    a deny rule covers is withheld silently; one an ask rule covers (or one a rule cannot be
    judged for) is withheld and counted in :attr:`asked`, since a walk cannot ask about each.
    """

    __slots__ = ("_also", "_lead", "_verdict", "asked")

    def __init__(self, screen: robota.core.PathScreen, top: str, also: str | None = None) -> None:
        self._verdict = screen.verdict
        self._lead = top.rstrip("/") + "/"
        # `top` as the workspace was given (Workspace.given), judged too when it differs.
        self._also = also.rstrip("/") + "/" if also is not None else None
        self.asked = 0

    def __call__(self, relative: str) -> bool:
        """Whether to withhold ``relative`` (a file or a directory below ``top``)."""
        verdict = self._verdict(self._lead + relative)
        if verdict != "deny" and self._also is not None:
            other = self._verdict(self._also + relative)
            if other != "allow":
                verdict = other
        if verdict == "allow":
            return False
        if verdict == "ask":
            self.asked += 1
        return True


def screened(screen: robota.core.PathScreen, top: str, also: str | None = None) -> Screened | None:
    """A :class:`Screened` for ``top``, or ``None`` when no rule can withhold anything.

    ``also`` is the same directory spelled from the workspace as it was given, when that
    differs (:meth:`Workspace.given`): both spellings are judged.
    """
    return Screened(screen, top, also) if screen.active else None


def withheld_note(asked: int) -> str | None:
    """The line telling the model how many paths an ask rule kept out, if any."""
    if not asked:
        return None
    return (
        f"[{asked} {'path was' if asked == 1 else 'paths were'} left out: a permission rule "
        "asks before they are read, and a walk cannot ask about each; name one directly "
        "(read_file, or this tool with that path) to be asked]"
    )


@dataclass(frozen=True, slots=True)
class Entry:
    """A regular file met on a walk: its path relative to the walk's root, and where to open it."""

    path: str
    name: str
    dir_fd: int


def walk(
    top: int,
    *,
    gitignore: IgnoreRules | None,
    stop: Callable[[], bool] = lambda: False,
    withhold: Callable[[str], bool] | None = None,
) -> Iterator[Entry]:
    """The regular files under the directory open at ``top`` (the caller closes it), depth first.

    ``gitignore`` is the rules in force at ``top`` (``None``: ignore nothing). An entry's
    ``dir_fd`` is open only until the iterator moves on. ``stop`` is asked between directories.
    ``withhold`` (a :class:`Screened`) is asked about each file and directory, by its path
    relative to ``top``: a file it withholds is not yielded, a directory not entered.
    """
    for fd, prefix, names in walk_batches(top, gitignore=gitignore, stop=stop, withhold=withhold):
        for name in names:
            yield Entry(prefix + name, name, fd)


def walk_batches(
    top: int,
    *,
    gitignore: IgnoreRules | None,
    stop: Callable[[], bool] = lambda: False,
    withhold: Callable[[str], bool] | None = None,
) -> Iterator[tuple[int, str, list[str]]]:
    """:func:`walk` a directory at a time: ``(dir_fd, prefix, names)``, for a hot loop.

    ``prefix`` is the directory's path relative to ``top`` with a trailing ``/`` (``""`` for
    ``top``); ``dir_fd`` is open only until the iterator moves on.
    """
    yield from _walk_dir(top, "", gitignore, stop, 0, withhold)


def _walk_dir(
    fd: int,
    prefix: str,
    rules: IgnoreRules | None,
    stop: Callable[[], bool],
    depth: int,
    withhold: Callable[[str], bool] | None,
) -> Iterator[tuple[int, str, list[str]]]:
    if stop() or depth > _MAX_DEPTH:
        return
    files: list[str] = []
    dirs: list[str] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name != ".git":
                        dirs.append(name)
                elif entry.is_file(follow_symlinks=False):
                    files.append(name)
            except OSError:
                continue  # vanished, or unreadable: not part of what can be seen
    if rules is not None and ".gitignore" in files:
        rules = rules.extended(prefix, parse_gitignore(_read_small(".gitignore", fd)))
    files.sort()
    if rules is not None and rules.active:
        files = [name for name in files if not rules.ignored(prefix + name, is_dir=False)]
    if withhold is not None:
        files = [name for name in files if not withhold(prefix + name)]  # S12
    if files:
        yield fd, prefix, files
    dirs.sort()
    for name in dirs:
        path = prefix + name
        if rules is not None and rules.ignored(path, is_dir=True):
            continue
        if withhold is not None and withhold(path):
            continue  # S12: a directory the rules withhold is not entered
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue  # swapped for a link (ELOOP), removed, or not searchable
        try:
            yield from _walk_dir(child, path + "/", rules, stop, depth + 1, withhold)
        finally:
            os.close(child)


def ignore_rules_above(root: str, top: str) -> IgnoreRules:
    """The ``.gitignore`` rules of ``root`` and each directory down to ``top`` (both canonical).

    The levels are rebased so that paths are relative to ``top``: a rule of a directory above
    ``top`` that names a path outside ``top`` simply never matches there.
    """
    rules = IgnoreRules()
    if top != root and not top.startswith(root.rstrip("/") + "/"):
        return rules
    parts = [] if top == root else top[len(root.rstrip("/")) + 1 :].split("/")
    directory = root
    for depth in range(len(parts) + 1):
        if depth:
            directory = os.path.join(directory, parts[depth - 1])
        text = ""
        with contextlib.suppress(OSError, Refused):
            text = _read_small(os.path.join(directory, ".gitignore"), None)
        if text:
            # A rule of a file `k` levels up sees paths below `top` as `a/b/<path>`.
            above = "/".join(parts[depth:])
            rules = rules.extended("", parse_gitignore(text), lead=above + "/" if above else "")
    return rules


def _read_small(name: str, dir_fd: int | None) -> str:
    try:
        fd, _ = open_regular_at(name, name, dir_fd=dir_fd)
    except Refused:
        return ""
    try:
        data = os.read(fd, _GITIGNORE_LIMIT)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")
