"""A walk over a directory inside the workspace that never follows a link (S05).

Each directory is opened relative to its parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY``,
so a directory swapped for a link during the walk is refused by the kernel rather than
followed out of the root; links are reported as links and never entered. ``.git`` is skipped,
and the ``.gitignore`` files met on the way are honoured when asked (:mod:`._patterns`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from robota.tools._patterns import IgnoreRules, parse_gitignore
from robota.tools._workspace import Refused, open_regular_at

__all__ = ["Entry", "ignore_rules_above", "walk", "walk_batches"]

_DIR_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_GITIGNORE_LIMIT: Final = 1 << 20
_MAX_DEPTH: Final = 200


@dataclass(frozen=True, slots=True)
class Entry:
    """A regular file met on a walk: its path relative to the walk's root, and where to open it."""

    path: str
    name: str
    dir_fd: int


def walk(
    top: str,
    *,
    gitignore: IgnoreRules | None,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[Entry]:
    """The regular files under ``top`` (canonical, inside the workspace), depth first, sorted.

    ``gitignore`` is the rules in force at ``top`` (``None``: ignore nothing). An entry's
    ``dir_fd`` is open only until the iterator moves on. ``stop`` is asked between directories.
    """
    for fd, prefix, names in walk_batches(top, gitignore=gitignore, stop=stop):
        for name in names:
            yield Entry(prefix + name, name, fd)


def walk_batches(
    top: str,
    *,
    gitignore: IgnoreRules | None,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[int, str, list[str]]]:
    """:func:`walk` a directory at a time: ``(dir_fd, prefix, names)``, for a hot loop.

    ``prefix`` is the directory's path relative to ``top`` with a trailing ``/`` (``""`` for
    ``top``); ``dir_fd`` is open only until the iterator moves on.
    """
    fd = os.open(top, _DIR_FLAGS)
    try:
        yield from _walk_dir(fd, "", gitignore, stop, 0)
    finally:
        os.close(fd)


def _walk_dir(
    fd: int, prefix: str, rules: IgnoreRules | None, stop: Callable[[], bool], depth: int
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
    if files:
        yield fd, prefix, files
    dirs.sort()
    for name in dirs:
        path = prefix + name
        if rules is not None and rules.ignored(path, is_dir=True):
            continue
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue  # swapped for a link (ELOOP), removed, or not searchable
        try:
            yield from _walk_dir(child, path + "/", rules, stop, depth + 1)
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
