"""The host's one way to open and read a store, key, record or database file (S07, S11).

A file at such a path may have been replaced by anything the account can create. A FIFO there
made ``open(2)`` wait for a writer that never came, so a credential store, a sealer key, a
store entry or an owner record hung its reader for ever; a device (``/dev/zero``) reads without
end. Every such file is therefore opened non-blocking, without following a final symbolic link
and without leaking into a child, its type is judged on the open descriptor (never on the path,
which could change in between), and anything but a regular file is refused before a byte is
read. Each caller maps the error to its own contract: a store raises ``StoreError``, a credential
store ``CredentialStoreError`` (S11: never "absent"), an owner record reads as unknown.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from typing import Final

__all__ = ["NotRegularFileError", "open_regular_file", "read_regular_file"]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_READ_CHUNK: Final = 1 << 16


class NotRegularFileError(OSError):
    """What is at the path is not a regular file: a FIFO, a socket, a device or a directory.

    ``str()`` is the reason alone (``filename`` holds the path), so a caller's message
    ``f"cannot read {path}: {exc}"`` names the path once.
    """

    def __str__(self) -> str:
        return str(self.strerror)


def open_regular_file(path: str) -> tuple[int, os.stat_result] | None:
    """Open the regular file at ``path`` for reading: its descriptor and ``fstat``, or ``None``.

    The one way the host opens a store, key, record or database file it did not just create
    (S07, S11). Opening never follows a final symbolic link, never leaks the descriptor into a
    child, and never waits: a FIFO opened for reading waits for a writer that may never come, so
    the file is opened non-blocking, its type is judged on the open descriptor (never on the
    path, which could be swapped in between) and anything but a regular file is refused before a
    byte is read. The descriptor returned is blocking again; the caller closes it.

    Raises:
        NotRegularFileError: a FIFO, socket, device or directory is at ``path``. An
            :class:`OSError`, so a caller's translation of I/O errors covers it.
        OSError: the path cannot be opened (a symbolic link there is ``ELOOP``). A missing file
            (or a missing directory on the way to it) is ``None``, not an error.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        # A socket (or a device without its driver) cannot be opened at all; say what it is.
        mode = _mode_at(path) if exc.errno == errno.ENXIO else None
        if mode is None or stat.S_ISREG(mode):
            raise
        raise NotRegularFileError(errno.ENXIO, _not_regular(mode), path) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(errno.EINVAL, _not_regular(info.st_mode), path)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_regular_file(
    path: str,
    *,
    limit: int | None = None,
    check: Callable[[os.stat_result], None] | None = None,
) -> bytes | None:
    """The content of the regular file at ``path``, or ``None`` when nothing is there.

    The one way the host reads a store, key or record file (S07, S11): opened by
    :func:`open_regular_file`, so a FIFO, socket, device or directory at the path is refused at
    once instead of being waited on or read without end.

    Args:
        path: The file. A symbolic link there is refused (``ELOOP``), not followed.
        limit: Read at most this many bytes (a record with a known bound); the whole file when
            ``None``.
        check: Called with the descriptor's ``fstat`` before anything is read, to refuse the
            file for the caller's own reasons (its owner, its mode) by raising.

    Raises:
        NotRegularFileError: a FIFO, socket, device or directory is at ``path``.
        OSError: the path cannot be opened or read.
    """
    opened = open_regular_file(path)
    if opened is None:
        return None
    fd, info = opened
    try:
        if check is not None:
            check(info)
        chunks: list[bytes] = []
        left = limit
        while left is None or left > 0:
            chunk = os.read(fd, _READ_CHUNK if left is None else min(left, _READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            if left is not None:
                left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _mode_at(path: str) -> int | None:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return None


def _not_regular(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        kind = "a FIFO (named pipe)"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISDIR(mode):
        kind = "a directory"
    else:
        kind = f"a file of type {stat.S_IFMT(mode):#o}"
    return f"not a regular file but {kind}; refusing to read it"
