"""How the writing tools reach a file: no link on the way, one read, an atomic replace.

Reading follows a link inside the workspace to where it leads; writing does not. A path whose
canonical form (S05, :meth:`Workspace.resolve`) differs from the path as written went through a
link, and is refused: a write through ``src/link`` would change a file the path does not name.
The canonical path is then opened a component at a time from the root's descriptor with
``O_NOFOLLOW`` (as reading does), so a link swapped in after the check is refused by the kernel.

A file is replaced atomically: the new bytes go to a temporary file created in the same
directory (relative to its descriptor, ``O_EXCL | O_NOFOLLOW``), flushed to disk with the
original file's mode, then renamed over the file relative to the same descriptor. A reader sees
the old file or the new one, never a half-written one; the rename replaces whatever is at the
name (a link swapped in is replaced, not followed).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import secrets
import stat
from dataclasses import dataclass
from typing import Final

from robota.tools._workspace import Refused, Workspace, display, open_regular_at

__all__ = [
    "MAX_FILE_BYTES",
    "Existing",
    "Target",
    "check_path",
    "check_size",
    "digest",
    "encode_text",
    "looks_binary",
    "open_parent",
    "open_target",
    "read_existing",
    "replace_file",
]

#: The largest file the writing tools read or write (as ``Grep`` skips files over 20 MB): the
#: whole file is held while it is edited, and its pre-image is kept for undo (S08).
MAX_FILE_BYTES: Final = 20 * 1024 * 1024
_SNIFF: Final = 8192
_DIR_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_TEMP_FLAGS: Final = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


@dataclass(frozen=True, slots=True)
class Target:
    """A file the tools may write: its parent directory's descriptor (to close) and its name."""

    dir_fd: int
    name: str
    relative: str  # the canonical path relative to the root
    shown: str  # as the model is shown it


@dataclass(frozen=True, slots=True)
class Existing:
    """A regular file's bytes and permission bits, read once."""

    data: bytes
    mode: int


def digest(data: bytes) -> bytes:
    """The hash that tells whether a file still holds the bytes a tool wrote."""
    return hashlib.sha256(data).digest()


def encode_text(text: str, what: str) -> bytes:
    r"""``text`` (a model's argument) as the bytes written: UTF-8, a ``\udcNN`` escape as byte NN.

    The escape is how a byte that is not UTF-8 reaches the model (as ``read_file`` and file
    names show it) and comes back; any other lone surrogate, which JSON can carry, is no
    character and has no bytes.

    Raises:
        Refused: ``text`` holds a lone surrogate that is not such an escape.
    """
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise Refused(
            f"{what} holds the lone surrogate U+{ord(bad):04X} (at character {exc.start}), "
            "which is not a character; send text only"
        ) from None


def check_size(size: int, shown: str) -> None:
    """Refuse a change whose result would be over :data:`MAX_FILE_BYTES`."""
    if size > MAX_FILE_BYTES:
        raise Refused(
            f"the change would make {shown!r} {size} bytes; files over {MAX_FILE_BYTES} bytes "
            "are not written by these tools; nothing changed"
        )


def looks_binary(data: bytes) -> bool:
    """Whether ``data`` is binary by ``read_file``'s rule: a NUL byte in its first 8 KB."""
    return b"\x00" in data[:_SNIFF]


def open_target(workspace: Workspace, path: str, *, create_parents: bool) -> Target:
    """Judge ``path`` (S05) and open its parent directory without following a link.

    Args:
        workspace: The root.
        path: As the model wrote it.
        create_parents: Make missing directories (each created and opened relative to its
            parent's descriptor, never through a link); otherwise a missing one is refused.

    Raises:
        Refused: outside the root, ``~``, through a link (any component), the root itself,
            or a directory on the way that is missing or not a directory.
    """
    relative, shown = check_path(workspace, path)
    return open_parent(workspace, relative, shown, create_parents=create_parents)


def check_path(workspace: Workspace, path: str) -> tuple[str, str]:
    """The canonical path relative to the root, and as shown, of a file the tools may write.

    Raises:
        Refused: outside the root, ``~``, through a link, or the root itself.
    """
    canonical = workspace.resolve(path)
    if path.endswith("/") or path.rsplit("/", 1)[-1] in (".", ".."):
        # `notes.txt/` names a directory: the kernel would refuse to create a file there,
        # and writing `notes.txt` instead would change a path the rules did not judge.
        raise Refused(
            f"{path!r} names a directory (it ends with `/`, `.` or `..`); pass a file path"
        )
    relative = workspace.relative(canonical)
    shown = display(relative)
    if canonical == workspace.root:
        raise Refused(f"{path!r} is the workspace root, a directory; pass a file path")
    spelled = workspace.spelling(path)
    lexical = os.path.normpath(
        spelled if os.path.isabs(spelled) else os.path.join(workspace.root, spelled)
    )
    if lexical != canonical:
        raise Refused(
            f"{path!r} goes through a symbolic link (it leads to {shown!r}); files are not "
            "written through links: pass the path the link leads to, if that is what you mean"
        )
    return relative, shown


def open_parent(workspace: Workspace, relative: str, shown: str, *, create_parents: bool) -> Target:
    """Open the parent of ``relative`` (from :func:`check_path`) a component at a time.

    Each directory is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so one
    swapped for a link since the check is refused by the kernel, not followed (S05).

    Raises:
        Refused: a directory on the way is missing (and not to be made), not a directory, or
            a link.
    """
    parent, name = os.path.split(relative)
    try:
        fd = os.open(workspace.root, _DIR_FLAGS)
    except OSError as exc:
        raise Refused(f"the workspace root cannot be opened: {exc.strerror}") from None
    for part in parent.split("/") if parent else ():
        try:
            child = _open_dir_at(part, fd, create=create_parents)
        except OSError as exc:
            link = exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(part, fd)
            os.close(fd)
            if link:  # O_DIRECTORY | O_NOFOLLOW on a link: ENOTDIR on Linux, ELOOP elsewhere
                raise Refused(
                    f"a directory on the way to {shown!r} is a symbolic link; not followed"
                ) from None
            raise Refused(_dir_refusal(shown, exc)) from None
        os.close(fd)
        fd = child
    return Target(fd, name, relative, shown)


def _open_dir_at(name: str, dir_fd: int, *, create: bool) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    # Made meanwhile (or a link planted): the no-follow open below decides.
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=dir_fd)
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _dir_refusal(shown: str, exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return f"a directory on the way to {shown!r} does not exist"
    if exc.errno == errno.ENOTDIR:
        return f"a component on the way to {shown!r} is not a directory"
    if exc.errno == errno.ELOOP:
        return f"a directory on the way to {shown!r} is a symbolic link; not followed"
    return f"the directory of {shown!r} cannot be opened: {exc.strerror}"


def read_existing(target: Target) -> Existing | None:
    """The file's bytes and mode in one read, or ``None`` when nothing is at the name.

    Raises:
        Refused: a link, a directory, a FIFO, socket or device (never opened for reading), or
            a file over :data:`MAX_FILE_BYTES`.
    """
    shown = target.shown
    try:
        info = os.lstat(target.name, dir_fd=target.dir_fd)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{shown!r} is a symbolic link; files are not written through links")
    fd, info = open_regular_at(target.name, shown, dir_fd=target.dir_fd, blocking=False)
    if info.st_size > MAX_FILE_BYTES:
        os.close(fd)
        raise Refused(
            f"{shown!r} is {info.st_size} bytes; files over {MAX_FILE_BYTES} bytes are not "
            "edited or overwritten by these tools"
        )
    # One read of the whole file (issue 30): these bytes are the edit's input and its pre-image.
    with io.FileIO(fd, "rb") as stream:
        data = stream.readall()
    if len(data) > MAX_FILE_BYTES:  # it grew after the fstat
        raise Refused(f"{shown!r} is over {MAX_FILE_BYTES} bytes; not edited")
    return Existing(data, stat.S_IMODE(info.st_mode))


def replace_file(target: Target, data: bytes, mode: int | None) -> None:
    """Put ``data`` at the target atomically (temp file, fsync, rename), with ``mode``.

    ``mode=None`` (a new file) leaves the temp file's mode as the umask makes it.
    """
    temp = f".{target.name[:64]}.robota-{secrets.token_hex(6)}.tmp"  # within NAME_MAX
    fd = os.open(temp, _TEMP_FLAGS, 0o666 if mode is None else 0o600, dir_fd=target.dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, target.name, src_dir_fd=target.dir_fd, dst_dir_fd=target.dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=target.dir_fd)
        raise
    with contextlib.suppress(OSError):  # a filesystem that cannot sync a directory
        os.fsync(target.dir_fd)  # the rename itself survives a crash
