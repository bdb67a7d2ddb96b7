r"""The workspace root the built-in tools are bound to, and the one way they reach a file in it.

Every path a model passes is judged by the host's containment check (S05:
:func:`robota.host.is_path_inside`, which follows each link the way the kernel does and, on
Linux, asks the kernel too), then used in its canonical form, so the system call reaches what
was judged. The canonical form has no link in it, so it is opened one component at a time from
the root's descriptor, each with ``O_NOFOLLOW``: a directory swapped for a link between the
check and the open is refused by the kernel, not followed (time of check to time of use). Files
are opened non-blocking and their type is judged on the open descriptor: a FIFO, socket or
device is refused before a byte is read, so a FIFO never hangs a tool and ``/dev/zero`` is never
read without end. Walks open each directory relative to its parent's descriptor the same way
(:mod:`robota.tools._walk`).

S12: the path a permission rule judges is the argument as written, canonicalised by the same
resolver; the tool opens that same canonical path. ``~`` is a home directory to the rules, so a
path starting with ``~`` is refused here rather than read as a directory named ``~``; the one
re-spelling the tool reads (a ``\xNN`` name: a byte that is not UTF-8 or a control character,
see :func:`display`) is accepted only in that display form — never a UTF-8 name spelled in
escapes, which a rule naming it would not match — and only where it changes bytes inside names
and nothing else — no link, no ``..`` — so rule and tool agree on the directories.

What this does not guarantee (S05): the root itself is opened by its path, so whoever can
replace the root (in its parent, outside the workspace) is not stopped. It decides what a tool
reads; it is not a sandbox for the process.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import Final

import robota.host

__all__ = ["Refused", "Workspace", "display", "plain"]

_OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_DIR_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
# What `display` writes for a byte that is not UTF-8 (0x80 and above) or for a control character
# (0x01-0x1f, 0x7f): never `/` or `.`, so a name read back stays in the directories it was shown in.
_ESCAPE: Final = re.compile(rb"\\x([89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F]|1[0-9a-fA-F]|7[fF])")
# Characters a name cannot be shown with: control characters and what line splitters read as a
# line break (NEL, U+2028, U+2029) — a name must never start a line of its own in an answer
# (`a\nsrc/x.py:1:fake` would forge a match) — and the surrogates of bytes that are not UTF-8.
_UNSHOWN: Final = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029\ud800-\udfff]")
_CONTROL: Final = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


class Refused(Exception):
    """A tool call the workspace will not serve; the message says why, in the model's terms."""


def plain(path: str) -> bool:
    """Whether ``path`` is shown as it is (:func:`display` would change nothing)."""
    return _UNSHOWN.search(path) is None


def display(path: str) -> str:
    r"""``path`` as the model is shown it: undecodable bytes and control characters as ``\xNN``.

    File names are bytes; one that is not UTF-8 arrives from the OS with surrogate escapes, which
    no provider can carry. A name may also hold a newline or another control character, which
    would let it forge a line of an answer (``path:line:text``, one path a line); each such
    character is shown as the ``\xNN`` of its UTF-8 bytes (``\x0a``, ``\xe2\x80\xa8``).
    :meth:`Workspace.resolve` accepts the same ``\xNN`` spelling back.
    """
    if _UNSHOWN.search(path) is None:
        return path
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return _CONTROL.sub(_escaped, text)


def _escaped(found: re.Match[str]) -> str:
    return "".join(f"\\x{byte:02x}" for byte in found[0].encode("utf-8"))


class Workspace:
    """A directory the tools may read in, and nothing outside it.

    Args:
        root: An existing directory. It is resolved once (its own links followed) and every
            path is judged against the result.

    Raises:
        ValueError: ``root`` is not an existing directory.
    """

    __slots__ = ("_given", "root")

    def __init__(self, root: str | os.PathLike[str]) -> None:
        text = os.path.abspath(os.fspath(root))
        if not os.path.isdir(text):
            raise ValueError(f"workspace must be an existing directory, got {text!r}")
        self.root = robota.host.canonical_path(text)
        # The root as it was given, when a link on the way makes it differ from `root`: a gate
        # whose context has no resolver judges paths in this spelling (S12, see `given`).
        self._given = os.path.normpath(text) if os.path.normpath(text) != self.root else None

    def given(self, canonical: str) -> str | None:
        """``canonical`` (inside the root) spelled from the root as it was given, if it differs.

        A permission context without a resolver judges paths lexically, from the workspace as
        its caller spelled it (``/tmp/x`` where ``/tmp`` is a link): a walk's screen is asked
        about both spellings, so a rule placed in either one holds (S12).
        """
        given = self._given
        if given is None:
            return None
        if canonical == self.root:
            return given
        prefix = self.root.rstrip("/") + "/"
        return (
            given.rstrip("/") + "/" + canonical[len(prefix) :]
            if canonical.startswith(prefix)
            else None
        )

    def resolve(self, path: str) -> str:
        """The canonical absolute path of ``path`` (relative to the root, or absolute).

        Raises:
            Refused: ``path`` is empty, starts with ``~``, or lands outside the root once every
                link on the way is followed (a ``..``, an absolute path elsewhere, a link out,
                a link loop). The message names no host path and, for a path outside the root,
                says nothing about what exists there.
        """
        if not path or not path.strip():
            raise Refused("the path is empty; pass a path relative to the workspace root")
        if path.startswith("~"):
            # S12: the rules read `~` as a home directory; reading `<root>/~` instead would
            # open a path other than the one judged.
            raise Refused(
                f"{path!r}: `~` (a home directory) is not expanded; pass a path relative to the "
                "workspace root (a name starting with `~` in the root is `./~...`)"
            )
        candidate = self._existing_spelling(path)
        full = candidate if os.path.isabs(candidate) else os.path.join(self.root, candidate)
        try:
            canonical = robota.host.canonical_path(full)
        except (OSError, ValueError) as exc:
            raise Refused(self._unresolvable(path, full, exc)) from None
        # S05: the host's canonical containment, the one check (the kernel asked too).
        if not self._inside(canonical):
            raise Refused(_outside(path))
        try:
            inside = robota.host.is_path_inside(self.root, full)
        except ValueError:  # the root itself is gone (an earlier `rm -rf`) or not a directory
            raise Refused(
                "the workspace root no longer exists as a directory (removed or replaced since "
                "the tools were bound to it); nothing can be read or changed"
            ) from None
        if not inside:
            raise Refused(_outside(path))
        return canonical

    def relative(self, canonical: str) -> str:
        """A canonical path inside the root, relative to it (``.`` for the root)."""
        if canonical == self.root:
            return "."
        prefix = self.root.rstrip("/") + "/"
        return canonical[len(prefix) :] if canonical.startswith(prefix) else canonical

    def open_dir(self, canonical: str, shown: str) -> int:
        """Open the directory at ``canonical`` (from :meth:`resolve`): a descriptor to close.

        Opened a component at a time from the root, never following a link (S05: a directory
        swapped for a link since the check is refused, not followed).

        Raises:
            Refused: it is outside the root, missing, not a directory, or changed since the check.
        """
        if not self._inside(canonical):
            raise Refused(_outside(shown))
        fd = os.open(self.root, _DIR_FLAGS)
        if canonical == self.root:
            return fd
        for name in self.relative(canonical).split("/"):
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise Refused(_not_opened(shown, exc)) from None
            finally:
                os.close(fd)
            fd = child
        return fd

    def open_regular(self, canonical: str, shown: str) -> tuple[int, os.stat_result]:
        """Open the regular file at ``canonical`` for reading: its descriptor and ``fstat``.

        Raises:
            Refused: nothing is there, it is a directory, a FIFO, socket or device, or a link
                was swapped in since the check (never followed).
        """
        if canonical == self.root:
            raise Refused(f"{shown!r} is a directory; use list_dir or glob for directories")
        parent, name = os.path.split(canonical)
        dir_fd = self.open_dir(parent, shown)
        try:
            return open_regular_at(name, shown, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    def spelling(self, path: str) -> str:
        r"""``path`` with a ``\xNN`` name read back as bytes, as :meth:`resolve` reads it."""
        return self._existing_spelling(path)

    def _inside(self, canonical: str) -> bool:
        return canonical == self.root or canonical.startswith(self.root.rstrip("/") + "/")

    def _unresolvable(self, path: str, full: str, exc: OSError | ValueError) -> str:
        if isinstance(exc, ValueError):
            return f"{path!r} is not a usable path (a NUL character, or not encodable)"
        # Only a path inside the root as written is told why it cannot be resolved: for one
        # outside, "not a directory" against "outside" would tell what exists there.
        if not self._inside(os.path.normpath(full)):
            return _outside(path)
        return f"{path!r} cannot be resolved: {os.strerror(exc.errno or errno.EIO)}"

    def _existing_spelling(self, path: str) -> str:
        # A name shown as `\xNN` (see display) is read back as those bytes when the path as
        # written does not exist; a name with a literal backslash keeps its meaning first.
        # S12: the rules judge the path as written, so the bytes decoded must land in the same
        # directories: only bytes display escapes (0x80 and above, control characters; never
        # `/` or `.`), and only
        # when the decoded path has no `..` and no link on the way.
        try:
            raw = path.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return path
        if _ESCAPE.search(raw) is None:
            return path
        full = path if os.path.isabs(path) else os.path.join(self.root, path)
        try:
            if os.path.lexists(full):
                return path
        except ValueError:
            return path
        decoded = os.fsdecode(_ESCAPE.sub(lambda found: bytes([int(found[1], 16)]), raw))
        # Only the display form is read back: `display` escapes exactly the bytes that are not
        # UTF-8, so `caf\xc3\xa9.txt` (`café.txt` in escaped bytes, a name the gate judges
        # literally and a rule naming `café.txt` does not match) stays as written.
        shown = _ESCAPE.sub(lambda found: b"\\x" + found[1].lower(), raw)
        if display(decoded).encode("utf-8", "surrogateescape") != shown:
            return path
        if ".." in decoded.split("/"):
            return path
        target = decoded if os.path.isabs(decoded) else os.path.join(self.root, decoded)
        try:
            if robota.host.canonical_path(target) != os.path.normpath(target):
                return path  # a link on the way: the rules would not see where it leads
        except (OSError, ValueError):
            return path
        return decoded


def _outside(path: str) -> str:
    return (
        f"{path!r} is outside the workspace (links are followed to where they lead); "
        "only paths inside the workspace root can be read"
    )


def _not_opened(shown: str, exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return f"{shown!r} does not exist"
    if exc.errno == errno.ENOTDIR:
        return f"{shown!r} is not a directory"
    if exc.errno == errno.ELOOP:
        return f"{shown!r} changed since it was checked (a link on the way); not followed"
    return f"{shown!r} cannot be opened: {exc.strerror}"


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
