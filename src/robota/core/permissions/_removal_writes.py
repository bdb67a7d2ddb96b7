"""Catastrophic writes onto a disk (S21): formatting it, or writing over a device.

Part of the catastrophic check of :mod:`._removal`: a program that makes a file system or
discards a device (``mkfs``, ``mke2fs``, ``mkswap``, ``blkdiscard`` …), ``wipefs`` erasing
signatures, and ``dd``, ``shred`` or a redirection writing onto a device under ``/dev`` (other
than the harmless ones: ``/dev/null``, ``/dev/stdout``, a terminal …). A device target is read
as written and, where the host's resolver is given, where it leads (``of=disk`` with ``disk`` a
link to ``/dev/sda``); a relative target after a ``cd`` is a device when its name is one a disk
has (``cd /dev && dd of=sda``).
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from collections.abc import Callable
from typing import Final

from robota.core.permissions._options import may_be_option, parse_args
from robota.core.permissions._programs import program_grammar
from robota.core.permissions._shell import CommandLine, SimpleCommand
from robota.core.permissions._shell_words import Word, literal_word

__all__ = [
    "FORMATTERS",
    "WRITERS",
    "DeviceTarget",
    "device_path_reason",
    "device_write_reason",
    "redirect_write_reason",
]

_FILE_SYSTEMS: Final = frozenset(
    {"bcachefs", "bfs", "btrfs", "cramfs", "erofs", "exfat", "ext2", "ext3", "ext4", "f2fs",
     "fat", "gfs2", "hfs", "hfsplus", "jfs", "minix", "msdos", "nilfs2", "ntfs", "ocfs2",
     "reiserfs", "udf", "vfat", "xfs"}
)  # fmt: skip
FORMATTERS: Final = frozenset(
    {
        "mkfs",
        "mke2fs",
        "mkswap",
        "mkdosfs",
        "mkntfs",
        "mkexfatfs",
        "blkdiscard",
        "newfs",
        *(f"mkfs.{fs}" for fs in _FILE_SYSTEMS),
        *(f"newfs_{fs}" for fs in ("apfs", "hfs", "msdos", "exfat", "udf")),
    }
)
"""Programs that make a file system on a device or discard it whole: every call is catastrophic."""
WRITERS: Final = frozenset({"dd", "shred", "wipefs", *FORMATTERS})
"""Every program this module judges."""

# Device files that are no disk: writing there loses nothing.
_HARMLESS: Final = frozenset(
    {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/stdin",
     "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/console", "/dev/ptmx"}
)  # fmt: skip
_HARMLESS_TREES: Final = ("/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/mqueue/")  # noqa: S108
# The names disks and their partitions have (Linux and macOS), for a target relative to a
# directory the line changes to.
_DISK_NAME: Final = re.compile(
    r"(?:[shv]d[a-z]+|xvd[a-z]+|nvme\d+\S*|mmcblk\d+\S*|md\d+\S*|dm-\d+|loop\d+|sr\d+|r?disk\d+\S*"
    r"|mem|kmem|port|mapper|disk|by-\w+)"
)
_WIPEFS_ERASES: Final = frozenset({"--all", "--offset", "--backup"})

DeviceTarget = Callable[[Word, SimpleCommand | None, bool], str | None]
"""Why a target word (of a command, strictly or not) may be a disk device, if it may be one.

A target whose value only exists at run time is not taken for a device (``> "$LOG"``)."""


def device_path_reason(
    path: str,
    source: str,
    *,
    relative_unknown: bool,
    strict: bool,
    workspace: str,
    resolve: Callable[[str], str] | None,
) -> str | None:
    """Why the path ``path`` (as written in ``source``) may be a disk device, if it may.

    ``relative_unknown``: a relative path does not lead from ``workspace`` (the line changes
    directory first). Such a path then may be a device when ``strict``, or when its name is one
    a disk has.
    """
    if not path.startswith("/"):
        if relative_unknown:
            name = posixpath.basename(posixpath.normpath(path))
            if strict or _DISK_NAME.fullmatch(name):
                return f"{source!r} is relative to a directory the line changes to"
            return None
        path = posixpath.join(workspace, path)
    forms = [posixpath.normpath(re.sub("/{2,}", "/", path))]
    if resolve is not None:
        with contextlib.suppress(OSError, ValueError):  # the path as written is still judged
            forms.append(posixpath.normpath(resolve(path)))
    for form in forms:
        harmless = form in _HARMLESS or form.startswith(_HARMLESS_TREES)
        if form.startswith("/dev/") and not harmless:
            return f"{source!r} is the device {form}"
    return None


def device_write_reason(
    simple: SimpleCommand, name: str, words: str, device: DeviceTarget
) -> str | None:
    """Why ``simple`` (the program ``name``) is a catastrophic write, or ``None``."""
    if name in FORMATTERS:
        return f"catastrophic write: {words!r} makes a file system on a device or discards it"
    if name == "dd":
        for word in simple.argv[1:]:
            if not word.literal:
                return f"catastrophic write: {words!r} writes where only run time knows"
            if word.value.startswith("of="):
                reason = device(literal_word(word.value[3:]), simple, True)
                if reason is not None:
                    return f"catastrophic write: {words!r} writes onto a device ({reason})"
        return None
    if name == "shred":
        parsed = parse_args(program_grammar("shred"), simple.argv[1:])
        for operand in parsed.operands:
            reason = device(operand, simple, False)
            if reason is not None:
                return f"catastrophic write: {words!r} overwrites a device ({reason})"
        return None
    if name == "wipefs":
        parsed = parse_args(None, simple.argv[1:])
        erases = any(
            o.name in _WIPEFS_ERASES
            or (not o.name.startswith("--") and o.name in ("-a", "-o", "-b"))
            for o in parsed.options
        )
        if erases or any(may_be_option(w) for w in parsed.operands):
            return f"catastrophic write: {words!r} erases a device's signatures"
    return None


def redirect_write_reason(line: CommandLine, device: DeviceTarget) -> str | None:
    """Why a redirection of ``line`` writes onto a device, if one does (``> /dev/sda``)."""
    for redirect in line.redirects:
        if redirect.kind not in ("write", "readwrite") or redirect.target is None:
            continue
        reason = device(redirect.target, None, False)
        if reason is not None:
            return f"catastrophic write: a redirection writes onto a device ({reason})"
    return None
