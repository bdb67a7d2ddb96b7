"""Canonical paths and the one containment check (S05).

``os.path.normpath``/``abspath`` are lexical: they cannot see a symlink, so a link inside a root
pointing outside it passes a ``startswith(root)`` test while the file operation that follows
escapes. Non-strict ``os.path.realpath`` is not enough either: when a step fails (a name past
``PATH_MAX``, a loop, a directory it may not search) it stops resolving and carries on lexically,
and the remainder — ``..`` included — is then compared as if it were canonical.

So the answer here is *the place the syscall will reach*, or a refusal:

* :func:`canonical_path` resolves component by component itself — ``lstat`` each component,
  splice in each symlink's target, count the links, track the length — the way the kernel does.
  Only a missing component and what follows it are appended as written (a file about to be
  created), and a ``..`` after a missing component is refused: what it climbs out of does not
  exist yet, so no canonical answer exists. Any other failure raises; nothing falls back to a
  lexical guess.
* :func:`is_path_inside` compares canonical paths, and on Linux also asks the kernel: the
  candidate as written and its canonical path opened beneath the root (``openat2(2)`` with
  ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``) must be the same file. Both must say "inside".

Every containment decision in Robota routes through :func:`is_path_inside`; two checks that can
disagree are their own defect.

What this does *not* guarantee: the answer is about the file system at the moment it is computed.
Between the check and the operation that follows, anyone who can write inside the root can swap a
directory for a symlink (time of check to time of use); an operation that must stay inside has to
enforce it itself when it opens (``O_NOFOLLOW``, or relative to a directory descriptor with
``RESOLVE_BENEATH``). An in-process check is not a sandbox: it decides what Robota asks or
refuses, it does not confine a tool body or a child process.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import sys
from collections.abc import Callable
from typing import Final

__all__ = ["canonical_path", "is_path_inside"]

_LINUX: Final = sys.platform.startswith("linux")

# S05: the kernel's own limits, so a resolution the kernel would refuse is refused here too.
# Linux follows at most 40 symbolic links in one resolution (MAXSYMLINKS); the BSDs and macOS 32.
_MAX_SYMLINKS: Final = 40 if _LINUX else 32

# openat2(2): `struct open_how` flags; the same system-call number on every architecture that
# uses the unified table (listed); elsewhere the kernel check is not attempted.
_SYS_OPENAT2: Final = 437
_OPENAT2_MACHINES: Final = frozenset(
    {"x86_64", "amd64", "aarch64", "arm64", "riscv64", "ppc64le", "s390x"}
)
_AT_FDCWD: Final = -100
_RESOLVE_NO_MAGICLINKS: Final = 0x02
_RESOLVE_NO_SYMLINKS: Final = 0x04
_RESOLVE_BENEATH: Final = 0x08
_BENEATH_CANONICAL: Final = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
# The kernel cannot answer (no openat2, a seccomp filter, an older struct): use the resolver alone.
_OPENAT2_UNAVAILABLE: Final = frozenset({errno.ENOSYS, errno.EPERM, errno.E2BIG, errno.EINVAL})


def _pathconf(name: str, default: int) -> int:
    try:
        value = os.pathconf("/", name)
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows) or no answer
        return default
    return value if value > 0 else default


_PATH_MAX: Final = _pathconf("PC_PATH_MAX", 4096)
_NAME_MAX: Final = _pathconf("PC_NAME_MAX", 255)


def canonical_path(path: str | os.PathLike[str]) -> str:
    """The absolute path the operating system reaches for ``path``, every symlink resolved (S05).

    Each existing component is looked at (``lstat``) and each symlink's target spliced in, as the
    kernel does. A component that does not exist yet, and everything after it, is appended as
    written, so the answer is meaningful for a file (or directories) about to be created.

    Args:
        path: An absolute path. Relative paths are refused: join one with the directory it is
            relative to first (``is_path_inside`` does that for you).

    Returns:
        The canonical path; it contains no ``.``, ``..``, empty component or symlink, except
        that the missing tail is as written.

    Raises:
        TypeError: ``path`` is not a ``str`` path (bytes paths are not supported).
        ValueError: ``path`` is empty, contains a NUL character, or is relative.
        OSError: the resolution failed; ``errno`` says why, as the system call would — ``ELOOP``
            (more symlinks than the kernel follows), ``ENAMETOOLONG`` (a resolved path past
            ``PATH_MAX``), ``EACCES`` (a directory on the way may not be searched, so what lies
            behind it cannot be seen), ``ENOTDIR`` (a component that must be a directory is
            not), ``ENOENT`` (a ``..`` follows a component that does not exist). There is no
            lexical fallback: a path whose destination cannot be known has no canonical form.
    """
    text = _checked_text(path, "canonical_path")
    if not os.path.isabs(text):
        raise ValueError(
            f"canonical_path needs an absolute path, got {text!r}; join it with the directory "
            "it is relative to first"
        )
    return _resolve(text)


def is_path_inside(root: str | os.PathLike[str], candidate: str | os.PathLike[str]) -> bool:
    """Whether ``candidate`` is ``root`` or lies beneath it, as the file system sees it (S05).

    A relative ``candidate`` is taken relative to ``root``. This is a security predicate, so a
    candidate that cannot be judged is *not* inside: an empty one, one with a NUL character, one
    whose resolution fails (a symlink loop, a resolved path past ``PATH_MAX``, a directory that
    may not be searched, a file used as a directory) and one that climbs with ``..`` out of a
    component that does not exist yet all answer ``False``.

    On Linux the kernel must agree, through ``openat2(2)``: it opens the candidate's longest
    existing prefix as written, and opens this module's canonical path of that prefix relative to
    ``root`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``; both must be the same file. So a
    kernel refusal (``ELOOP``, ``ENAMETOOLONG``, ``EXDEV`` …), a ``/proc`` magic link on the way,
    or any disagreement between the two walks means "not inside". A symlink that leaves the root
    and comes back in, or an absolute one that points inside, is inside: what counts is where
    the path lands. Where ``openat2`` is unavailable (another OS, an older kernel, a seccomp
    filter) the canonical-path comparison alone decides.

    The answer holds for the moment it is computed (a symlink swapped in afterwards is not
    seen), and it confines nothing by itself: it is a decision, not a sandbox.

    Raises:
        ValueError: when ``root`` is not an absolute path to an existing directory that can be
            resolved — the invariant a containment decision needs; the message names what is
            wrong. (The *candidate* never raises; it is judged.)
    """
    root_text = _checked_text(root, "containment root")
    if not os.path.isabs(root_text):
        raise ValueError(f"containment root must be an absolute path, got {root_text!r}")
    if not os.path.isdir(root_text):
        raise ValueError(f"containment root must be an existing directory, got {root_text!r}")
    try:
        real_root = _resolve(root_text)
    except OSError as exc:
        raise ValueError(
            f"containment root {root_text!r} cannot be resolved: {exc.strerror}"
        ) from None
    try:
        target = _checked_text(candidate, "candidate")
    except (TypeError, ValueError):
        return False  # S05: refusal is "not inside"
    if not os.path.isabs(target):
        target = os.path.join(real_root, target)
    try:
        real_target = _resolve(target)
    except OSError:
        return False  # S05: a resolution that fails is never turned into "inside"
    if not _within(real_target, real_root):
        return False
    # S05: on Linux the kernel must agree; both answers say "inside" or it is not.
    verdict = _kernel_verdict(real_root, target, real_target)
    return True if verdict is None else verdict


# --------------------------------------------------------------------------- the resolver


def _checked_text(path: str | os.PathLike[str], what: str) -> str:
    text: object = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"{what}: paths are str, got {type(text).__name__}")
    if not text:
        raise ValueError(f"{what}: the path is empty")
    if "\x00" in text:
        raise ValueError(f"{what}: the path contains a NUL character: {text!r}")
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        # A lone surrogate: no system call can be given this path, so it names nothing.
        raise ValueError(
            f"{what}: the path cannot be encoded for the file system: {text!r}"
        ) from None
    return text


def _resolve(path: str) -> str:
    if os.name != "posix":  # pragma: no cover - exercised on Windows only
        return _resolve_windows(path)
    return _resolve_posix(path)


def _fail(code: int, path: str, detail: str) -> OSError:
    # OSError(errno, strerror, filename) picks the builtin subclass for the errno
    # (PermissionError, NotADirectoryError, FileNotFoundError …).
    return OSError(code, f"{os.strerror(code)}: {detail}", path)


def _resolve_posix(path: str) -> str:
    """Resolve an absolute path the way the kernel walks it (S05); see :func:`canonical_path`."""
    pending = path.split("/")
    pending.reverse()  # a stack: the next component on top; symlink targets are pushed on it
    resolved: list[str] = []
    length = 0  # len(os.fsencode("/" + "/".join(resolved))) - 1, kept as we go
    links = 0
    missing: str | None = None  # the first component found missing; the rest is as written
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            if missing is not None:
                # S05: a `..` out of something that does not exist has no canonical answer; a
                # lexical pop here is exactly the guess this module refuses to make.
                raise _fail(errno.ENOENT, path, f"'..' follows {missing!r}, which does not exist")
            if resolved:
                length -= len(os.fsencode(resolved.pop())) + 1
            continue
        size = len(os.fsencode(name)) + 1
        if size - 1 > _NAME_MAX:
            # The kernel refuses a component longer than NAME_MAX, existing or not.
            raise _fail(errno.ENAMETOOLONG, path, f"a name passes NAME_MAX ({_NAME_MAX})")
        if length + size + 1 > _PATH_MAX:  # + 1: the terminating NUL PATH_MAX counts
            raise _fail(
                errno.ENAMETOOLONG, path, f"the resolved path passes PATH_MAX ({_PATH_MAX})"
            )
        if missing is not None:
            resolved.append(name)
            length += size
            continue
        here = "/" + "/".join([*resolved, name])
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            missing = name
            resolved.append(name)
            length += size
            continue
        except OSError as exc:
            raise _fail(exc.errno or errno.EIO, path, f"at {here!r}") from None
        if stat.S_ISLNK(info.st_mode):
            links += 1
            if links > _MAX_SYMLINKS:
                raise _fail(errno.ELOOP, path, f"more than {_MAX_SYMLINKS} symbolic links")
            try:
                target = os.readlink(here)
            except OSError as exc:  # pragma: no cover - replaced between lstat and readlink
                raise _fail(exc.errno or errno.EIO, path, f"at {here!r}") from None
            if target.startswith("/"):
                resolved, length = [], 0
            pending.extend(reversed(target.split("/")))
            continue
        if pending and not stat.S_ISDIR(info.st_mode):
            # Something follows (a name, `.`, `..`, a trailing slash): the kernel needs a
            # directory here and refuses with ENOTDIR rather than climbing out of a file.
            raise _fail(errno.ENOTDIR, path, f"{here!r} is not a directory")
        resolved.append(name)
        length += size
    return "/" + "/".join(resolved)


def _resolve_windows(path: str) -> str:  # pragma: no cover - exercised on Windows only
    # Win32 path parsing removes `..` lexically before any reparse point is followed, so the
    # lexical normalisation is what the system call does; links are resolved strictly on the
    # existing prefix, and only the missing tail is appended as written.
    head = os.path.normpath(path)
    tail: list[str] = []
    while not os.path.lexists(head):
        parent, name = os.path.split(head)
        if parent == head:
            break
        tail.append(name)
        head = parent
    real = os.path.realpath(head, strict=True)
    return os.path.join(real, *reversed(tail))


def _within(path: str, root: str) -> bool:
    return root in ("/", path) or path.startswith(root + "/")


# --------------------------------------------------------------------------- the kernel's answer


def _kernel_verdict(real_root: str, target: str, real_target: str) -> bool | None:
    """Whether the kernel lands ``target`` on the object at its canonical place beneath the root.

    ``real_target`` is the resolver's answer for ``target``. The kernel opens ``target`` as
    written (following its links, no magic links), and opens the resolver's canonical path of the
    same prefix relative to the root with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``; the two must
    be the same file (``st_dev``/``st_ino``). A missing tail is dropped first (the longest
    existing prefix is opened; what follows is judged by the resolver alone). ``True``/``False``:
    the kernel's answer — any refusal (``ELOOP``, ``ENAMETOOLONG``, ``EXDEV`` …) is ``False``.
    ``None``: the kernel cannot be asked here, and the resolver's answer stands alone.
    """
    openat2 = None if _KERNEL_REFUSED else _openat2()
    if openat2 is None:
        return None
    parts = target.split("/")
    for end in range(len(parts), 0, -1):
        prefix = "/".join(parts[:end]) or "/"
        code, fd = openat2(_AT_FDCWD, prefix, _RESOLVE_NO_MAGICLINKS)
        if fd >= 0:
            break
        if code == errno.ENOENT:
            continue
        if code in _OPENAT2_UNAVAILABLE:
            _KERNEL_REFUSED.add(code)  # not asked again in this process
            return None
        return False
    else:  # pragma: no cover - "/" always opens
        return False
    try:
        landed = os.fstat(fd)
    finally:
        os.close(fd)
    try:
        canonical = real_target if end == len(parts) else _resolve(prefix)
    except OSError:
        return False
    if not _within(canonical, real_root):
        return False
    try:
        root_fd = os.open(real_root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        relative = os.path.relpath(canonical, real_root)
        code, fd = openat2(root_fd, relative, _BENEATH_CANONICAL)
    finally:
        os.close(root_fd)
    if fd < 0:
        return False
    try:
        beneath = os.fstat(fd)
    finally:
        os.close(fd)
    return (landed.st_dev, landed.st_ino) == (beneath.st_dev, beneath.st_ino)


_KERNEL_REFUSED: Final[set[int]] = set()
"""The errno the kernel refused ``openat2`` itself with (ENOSYS, a seccomp EPERM …), if it did: a
fact about this process's kernel, recorded once so that each check does not ask again."""


@functools.cache
def _openat2() -> Callable[[int, str, int], tuple[int, int]] | None:
    """A binding of ``openat2(dir_fd, path, {O_PATH|O_CLOEXEC, 0, resolve})``.

    The binding returns ``(errno, fd)``; ``fd`` is ``-1`` on failure. ``None`` when not on a
    Linux kernel this module knows the system-call number for. Python has no binding of its own,
    so this goes through ``ctypes``.
    """
    if not (_LINUX and os.uname().machine in _OPENAT2_MACHINES):
        return None
    import ctypes  # noqa: PLC0415 - only on Linux, only once a containment check needs it

    class OpenHow(ctypes.Structure):
        _fields_ = (
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        )

    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):  # pragma: no cover - no libc symbol table
        return None
    syscall.restype = ctypes.c_long
    flags = os.O_PATH | os.O_CLOEXEC

    def openat2(dir_fd: int, path: str, resolve: int) -> tuple[int, int]:
        how = OpenHow(flags, 0, resolve)
        fd = syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(os.fsencode(path)),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        return (ctypes.get_errno(), -1) if fd < 0 else (0, int(fd))

    return openat2
