"""Undo for the writing tools: pre-images in process-scoped scratch (S08), a history per root.

Before a tool changes a file, what was there — the old bytes and mode, or that nothing was — is
kept: the bytes in a file inside a :class:`robota.host.ProcessScopedDirectory` (owner-only,
removed when the process ends, swept by a later start if it crashed), the rest in a history
kept in this module per canonical workspace root, shared by every tool in the process and
guarded by a lock. :func:`undo` takes the newest change back, through the same containment and
no-link rules as the tools, and refuses when the file changed since (its bytes no longer hash
to what the tool wrote) rather than clobber someone's later change.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import robota.host
from robota.tools._files import Target, digest, open_parent, read_existing, replace_file
from robota.tools._workspace import Refused, Workspace

__all__ = ["MAX_CHANGES", "FileChange", "UndoError", "Undone", "keep", "root_lock", "undo_change"]

#: How many changes per workspace root can be undone; older ones are forgotten (their
#: pre-images removed), so a long session's scratch does not grow without end.
MAX_CHANGES: Final = 100
_PREFIX: Final = "undo"
_TEMP_FLAGS: Final = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


@dataclass(frozen=True, slots=True)
class FileChange:
    """What an ``Edit`` or ``Write`` changed, for a user interface (``ToolResult.view``, S39).

    It never reaches the model.

    Attributes:
        path: The file, relative to the workspace root (as the model is shown it).
        diff: A unified diff of the change (``--- a/path`` / ``+++ b/path``).
        created: Whether the file did not exist before.
    """

    path: str
    diff: str
    created: bool


@dataclass(frozen=True, slots=True)
class Undone:
    """A change :func:`robota.tools.undo` took back.

    Attributes:
        path: The file, relative to the workspace root (as the model is shown it).
        description: One line saying what was done (``"restored src/a.py (before Edit)"``).
    """

    path: str
    description: str


class UndoError(Exception):
    """The newest change cannot be undone; the message says why. It stays in the history."""


@dataclass(frozen=True, slots=True)
class _Change:
    relative: str  # canonical, relative to the root
    shown: str
    tool: str
    pre_image: str | None  # the scratch file with the old bytes; None when it was created
    mode: int | None
    after: bytes  # digest of the bytes the tool wrote


class _Registry:
    """The process's undo history, by canonical root, and its scratch directory."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.roots: dict[str, threading.Lock] = {}
        self.history: dict[str, list[_Change]] = {}
        self.scratch: robota.host.ProcessScopedDirectory | None = None
        self.numbers = itertools.count(1)

    def reset(self) -> None:
        """Start afresh, as a forked child must.

        A child does not share its parent's scratch (removed when the parent exits), history
        or locks (one may have been held by a thread the child does not have).
        """
        self.__init__()  # type: ignore[misc]

    def scratch_path(self) -> str:
        with self.lock:
            if self.scratch is None or self.scratch.removed:
                state = _state_root()
                with contextlib.suppress(Exception):  # a sweep is housekeeping only (S08)
                    robota.host.ProcessScopedDirectory.sweep(state, _PREFIX)
                self.scratch = robota.host.ProcessScopedDirectory.create(state, _PREFIX)
            return self.scratch.path


_REGISTRY = _Registry()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_REGISTRY.reset)


def _state_root() -> str:
    """``$XDG_STATE_HOME/robota`` (``~/.local/state/robota``), where the CLI keeps its state."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(state, "robota")


@contextlib.contextmanager
def root_lock(root: str) -> Iterator[None]:
    """Hold the lock of one workspace root: its changes and undos happen one at a time."""
    with _REGISTRY.lock:
        lock = _REGISTRY.roots.setdefault(root, threading.Lock())
    with lock:
        yield


def keep(target: Target, tool: str, before: bytes | None, mode: int | None) -> _Change:
    """Keep the pre-image of a change about to be made (S08); call :func:`commit` after it.

    Raises:
        Refused: the scratch directory cannot be made or written (the change is not made).
    """
    pre_image: str | None = None
    if before is not None:
        try:
            directory = _REGISTRY.scratch_path()
            pre_image = os.path.join(directory, f"{next(_REGISTRY.numbers)}.pre")
            fd = os.open(pre_image, _TEMP_FLAGS, 0o600)
            with open(fd, "wb") as stream:
                stream.write(before)
        except (OSError, robota.host.StoreError) as exc:
            raise Refused(
                f"{target.shown!r} was not changed: its pre-image could not be kept for undo "
                f"({exc})"
            ) from None
    return _Change(target.relative, target.shown, tool, pre_image, mode, b"")


def commit(root: str, change: _Change, after: bytes) -> None:
    """Record a change made (the file now holds ``after``); :func:`undo_change` can take it back."""
    done = _Change(
        change.relative, change.shown, change.tool, change.pre_image, change.mode, digest(after)
    )
    with _REGISTRY.lock:
        changes = _REGISTRY.history.setdefault(root, [])
        changes.append(done)
        dropped = changes[:-MAX_CHANGES]
        del changes[:-MAX_CHANGES]
    for old in dropped:  # the oldest beyond the cap: no longer undoable, its pre-image goes
        discard(old)


def discard(change: _Change) -> None:
    """Drop a kept pre-image whose change was not made."""
    if change.pre_image is not None:
        with contextlib.suppress(OSError):
            os.unlink(change.pre_image)


def undo_change(workspace: Workspace) -> Undone | None:
    """Take back the newest change in ``workspace`` (see :func:`robota.tools.undo`)."""
    root = workspace.root
    with root_lock(root):
        with _REGISTRY.lock:
            changes = _REGISTRY.history.get(root)
            if not changes:
                return None
            change = changes[-1]
        undone = _restore(workspace, change)
        with _REGISTRY.lock:
            changes.pop()
        discard(change)
        return undone


def _restore(workspace: Workspace, change: _Change) -> Undone:
    shown = change.shown
    try:
        # The canonical path the tool wrote, walked from the root with no link followed (it
        # has no `..`), so it stays inside; not re-read as a model's path, where `~notes` or a
        # literal `\x80` in a name would mean something else.
        target = open_parent(workspace, change.relative, shown, create_parents=False)
    except Refused as exc:
        raise UndoError(f"cannot undo the {change.tool} of {shown}: {exc}") from None
    try:
        try:
            now = read_existing(target)
        except Refused as exc:
            raise UndoError(f"cannot undo the {change.tool} of {shown}: {exc}") from None
        if now is None:
            raise UndoError(
                f"cannot undo the {change.tool} of {shown}: it was removed since; not restored"
            )
        if digest(now.data) != change.after:
            raise UndoError(
                f"cannot undo the {change.tool} of {shown}: it changed since the "
                f"{change.tool}; not restored, so the later change is kept"
            )
        try:
            if change.pre_image is None:
                os.unlink(target.name, dir_fd=target.dir_fd)
                return Undone(shown, f"removed {shown} (created by {change.tool})")
            with open(change.pre_image, "rb") as stream:
                before = stream.read()
            replace_file(target, before, change.mode)
        except OSError as exc:
            raise UndoError(f"cannot undo the {change.tool} of {shown}: {exc.strerror}") from None
        return Undone(shown, f"restored {shown} (before {change.tool})")
    finally:
        os.close(target.dir_fd)
