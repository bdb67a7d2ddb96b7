"""The workspace root the built-in tools are bound to, and the one way they reach a file in it.

Every path a model passes is judged by the host's containment check (S05:
:func:`robota.host.is_path_inside`, which follows each link the way the kernel does and, on
Linux, asks the kernel too), then used in its canonical form, so the system call reaches what
was judged. Files are opened without following a final link, non-blocking, and their type is
judged on the open descriptor: a FIFO, socket or device is refused before a byte is read, so a
FIFO never hangs a tool and ``/dev/zero`` is never read without end. Walks open each directory
relative to its parent's descriptor without following links (:mod:`robota.tools._walk`).

What this does not guarantee (S05): between the check and the open, anyone who can write inside
the root can swap a directory on the way for a link. It decides what a tool reads; it is not a
sandbox for the process.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from typing import Final

import robota.host

__all__ = ["Refused", "Workspace", "display"]

_OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_ESCAPE: Final = re.compile(r"\\x[0-9a-fA-F]{2}")


class Refused(Exception):
    """A tool call the workspace will not serve; the message says why, in the model's terms."""


def display(path: str) -> str:
    r"""``path`` as the model is shown it: undecodable bytes of a file name as ``\xNN``.

    File names are bytes; one that is not UTF-8 arrives from the OS with surrogate escapes, which
    no provider can carry. :meth:`Workspace.resolve` accepts the same ``\xNN`` spelling back.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    return path


class Workspace:
    """A directory the tools may read in, and nothing outside it.

    Args:
        root: An existing directory. It is resolved once (its own links followed) and every
            path is judged against the result.

    Raises:
        ValueError: ``root`` is not an existing directory.
    """

    __slots__ = ("root",)

    def __init__(self, root: str | os.PathLike[str]) -> None:
        text = os.path.abspath(os.fspath(root))
        if not os.path.isdir(text):
            raise ValueError(f"workspace must be an existing directory, got {text!r}")
        self.root = robota.host.canonical_path(text)

    def resolve(self, path: str) -> str:
        """The canonical absolute path of ``path`` (relative to the root, or absolute).

        Raises:
            Refused: ``path`` is empty, or lands outside the root once every link on the way is
                followed (a ``..``, an absolute path elsewhere, a link out, a link loop).
        """
        if not path or not path.strip():
            raise Refused("the path is empty; pass a path relative to the workspace root")
        candidate = self._existing_spelling(path)
        full = candidate if os.path.isabs(candidate) else os.path.join(self.root, candidate)
        # S05: the host's canonical containment, the one check; a path it cannot judge is out.
        if not robota.host.is_path_inside(self.root, full):
            try:
                robota.host.canonical_path(full)
            except (OSError, ValueError) as exc:
                # Not judged inside because it cannot be resolved (a file used as a directory,
                # a link loop): say that, not "outside".
                reason = exc.strerror if isinstance(exc, OSError) else str(exc)
                raise Refused(f"{path!r} cannot be resolved: {reason}") from None
            raise Refused(
                f"{path!r} is outside the workspace (links are followed to where they lead); "
                "only paths inside the workspace root can be read"
            )
        try:
            return robota.host.canonical_path(full)
        except (OSError, ValueError) as exc:  # pragma: no cover - changed since the check
            raise Refused(f"{path!r} cannot be resolved: {exc}") from None

    def relative(self, canonical: str) -> str:
        """A canonical path inside the root, relative to it (``.`` for the root)."""
        if canonical == self.root:
            return "."
        prefix = self.root.rstrip("/") + "/"
        return canonical[len(prefix) :] if canonical.startswith(prefix) else canonical

    def open_regular(self, canonical: str, shown: str) -> tuple[int, os.stat_result]:
        """Open the regular file at ``canonical`` for reading: its descriptor and ``fstat``.

        Raises:
            Refused: nothing is there, it is a directory, a FIFO, socket or device, or a link
                was swapped in since the check (never followed).
        """
        return open_regular_at(canonical, shown, dir_fd=None)

    def _existing_spelling(self, path: str) -> str:
        # A name shown as `\xNN` (see display) is read back as those bytes when the path as
        # written does not exist; a name with a literal backslash keeps its meaning first.
        if "\\x" not in path or _ESCAPE.search(path) is None:
            return path
        full = path if os.path.isabs(path) else os.path.join(self.root, path)
        if os.path.lexists(full):
            return path
        raw, _ = codecs.escape_decode(path.encode("utf-8", "surrogateescape"))
        return os.fsdecode(raw)


def open_regular_at(
    name: str, shown: str, *, dir_fd: int | None, blocking: bool = True
) -> tuple[int, os.stat_result]:
    """Open ``name`` (relative to ``dir_fd`` when given) as a regular file, or refuse it.

    ``blocking=False`` leaves ``O_NONBLOCK`` set, which a regular file's reads ignore; a caller
    that reads with ``os.read`` alone saves the two ``fcntl`` calls.
    """
    try:
        fd = os.open(name, _OPEN_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise Refused(f"{shown!r} does not exist") from None
    except IsADirectoryError:
        raise Refused(f"{shown!r} is a directory; use list_dir or glob for directories") from None
    except OSError as exc:
        # A socket cannot be opened at all (ENXIO); say what is there rather than the errno.
        mode = _mode_at(name, dir_fd) if exc.errno == errno.ENXIO else None
        if mode is not None and not stat.S_ISREG(mode):
            raise Refused(f"{shown!r} is {_kind(mode)}, not a regular file; not read") from None
        raise Refused(f"{shown!r} cannot be opened: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise Refused(f"{shown!r} is a directory; use list_dir or glob for directories")
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{shown!r} is {_kind(info.st_mode)}, not a regular file; not read")
        if blocking:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def _mode_at(name: str, dir_fd: int | None) -> int | None:
    try:
        return os.lstat(name, dir_fd=dir_fd).st_mode
    except OSError:
        return None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
