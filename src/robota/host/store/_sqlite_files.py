"""Owner-only SQLite files and crash-released lock files, for the stores built on SQLite.

The execution journal (:class:`~robota.host.SQLiteJournal`, S40) and the session store
(``robota.sessions.SQLiteSessionStore``) keep conversations in a SQLite file, so both prepare it
the one way S07 asks (:func:`prepare_owner_only_database`), and both keep one writer per record
across processes with an exclusive, non-blocking ``flock`` that the kernel drops when the holder
dies (:func:`try_lock_file`, S10: never stolen because time has elapsed).
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Final

from robota.host._errors import InsecureModeError, ModeNotEnforcedError
from robota.host.store._regular_file import open_regular_file
from robota.host.store._store import check_owner_only_directory, open_new_file, verify_new_file

__all__ = ["prepare_owner_only_database", "try_lock_file"]

_FILE_MODE: Final = 0o600
_OTHERS: Final = 0o077  # the group's and other accounts' permission bits
#: What SQLite keeps beside the database: the write-ahead log, its shared-memory index, and the
#: rollback journal (of a database not yet in WAL mode).
_SIDE_SUFFIXES: Final = ("-wal", "-shm", "-journal")


def try_lock_file(path: str) -> int | None:
    """Take an exclusive ``flock`` on ``path`` (created ``0600``); its descriptor, or ``None``.

    ``None`` when another descriptor — of this process or another — holds it. The lock lasts
    until the descriptor is closed (``os.close``) or the process dies; the file stays, since
    replacing a file someone may hold would split the lock. POSIX only. Blocking I/O: call it off
    the event loop.

    Raises:
        OSError: the file cannot be opened or locked for another reason.
    """
    # POSIX-only: imported on use, so `import robota.host` works where fcntl does not exist.
    import fcntl  # noqa: PLC0415

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, _FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # S10: the kernel drops it at death
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def prepare_owner_only_database(path: str, *, repair: bool = False, holder: str = "store") -> None:
    """S07: the database's directory owner-only; the database ``0600`` from the start, or checked.

    The files are checked by name here and opened by name later, by SQLite — the database at
    once, its side files when it first needs them — so the check holds only while no other
    account can create, rename or remove names in the directory: it must be owner-only, checked
    as an owner-only store checks its own (tightened on ``repair``, never when another account's
    or shared like ``/tmp``). SQLite would create a missing file with the umask's mode, and
    adopts an existing one whatever its mode; the journal and the session store hold
    conversations. A side file left
    beside the database is read into it (``-wal``, ``-journal``) or shared with it (``-shm``), so
    each one present is checked like the database — even beside a new one, where a stale log
    would be replayed.

    Args:
        path: The database file, absolute; its directory exists.
        repair: Tighten a directory or file found wider than owner-only instead of refusing it.
        holder: What the file holds (``"journal"``, ``"session store"``), for the messages.

    Raises:
        InsecureModeError: the directory or a file is another account's, shared, or wider than
            owner-only and ``repair`` is off.
        ModeNotEnforcedError: a tightened mode did not take.
        OSError: the filesystem failed (the caller translates it at its edge).
    """
    # S07: the database's directory must not let another account plant or swap its files
    # between this check and SQLite's open by name; listing the names leaks nothing (each file
    # is 0600), so an ordinary 0755 project folder is fine.
    check_owner_only_directory(
        os.path.dirname(path), repair=repair, holder=holder, writable_only=True
    )
    try:
        fd = open_new_file(path)
    except FileExistsError:
        _check_owner_only(path, repair=repair, holder=holder)
    else:
        try:
            verify_new_file(fd, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)  # ours and still empty: leave nothing unprotected behind
            raise
        finally:
            os.close(fd)
    for suffix in _SIDE_SUFFIXES:
        _check_owner_only(path + suffix, repair=repair, holder=holder)


def _check_owner_only(path: str, *, repair: bool, holder: str) -> None:
    # Opened without following a link and without waiting (a FIFO), judged on the descriptor.
    opened = open_regular_file(path)
    if opened is None:
        return
    fd, info = opened
    try:
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid != os.geteuid():
            raise InsecureModeError(
                f"{path} belongs to account {info.st_uid}, not to this one ({os.geteuid()}); "
                f"the {holder} cannot trust records another account could have written",
                path=path,
                mode=mode,
                uid=info.st_uid,
            )
        if mode & _OTHERS == 0:
            return  # owner-only (a narrower mode is not a leak; SQLite's own errors say so)
        if not repair:
            raise InsecureModeError(
                f"{path} has mode {mode:#o}, but the {holder} needs {_FILE_MODE:#o}: another "
                "account could read its conversations or change its records. Check that "
                f"nobody did, then open the {holder} with repair=True to tighten it",
                path=path,
                mode=mode,
                uid=info.st_uid,
            )
        os.fchmod(fd, mode & ~_OTHERS)
        repaired = stat.S_IMODE(os.fstat(fd).st_mode)
        if repaired & _OTHERS:
            raise ModeNotEnforcedError(
                f"{path} had mode {mode:#o}; setting {mode & ~_OTHERS:#o} left {repaired:#o}",
                path=path,
                mode=repaired,
            )
    finally:
        os.close(fd)
