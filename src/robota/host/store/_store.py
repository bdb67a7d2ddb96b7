"""The owner-only store (S07): directories and files only their owner can read.

Three facts about the filesystem API each produced a real defect before this module existed, and
each shapes one rule here:

* ``mkdir`` with a mode does nothing to a directory that already exists, so an existing directory
  is *inspected*: a wider mode or another owner is reported (:class:`InsecureModeError`, listing
  the mode), and tightened only when the caller opts in with ``repair=True``.
* A mode passed at open applies only when the file is created, so a record is never rewritten in
  place: every write creates a new file and renames it over the old one, and the new file carries
  the final mode from its creation.
* Creating wide and tightening afterwards leaves a window where the content is readable, so files
  and directories are created with their final mode, then verified before any content goes in.
  The verification is load-bearing: it is what catches a filesystem that accepts a mode and
  silently ignores it (:class:`ModeNotEnforcedError`). A mode wider than asked is never masked by
  a later ``chmod``; only a mode the umask *narrowed* (owner bits missing) is completed, on the
  still-empty file.

Writes are atomic replaces through a temp file in the target's own directory. ``durable=True``
flushes the temp file before the rename and the directory after it, so a crash leaves the old
content or the new, never an empty file. :meth:`OwnerOnlyStore.stage` replaces many files, each
flushed beside its target before any is renamed. :meth:`OwnerOnlyStore.create_only` commits by
``link``, which fails when anything is at the path, so two creators cannot both succeed.

Reads go through :func:`._regular_file.read_regular_file`, the host's one reader of store, key
and record files, so a FIFO planted at a name is refused at once instead of waited on.

Errors: :class:`StoreError` and its kinds, and :class:`StagingStateError` (see :mod:`._errors`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from types import TracebackType
from typing import Final, Literal, TypeAlias, final

from robota.core import ConfigurationError
from robota.host._errors import (
    EntryExistsError,
    InsecureModeError,
    ModeNotEnforcedError,
    StagingStateError,
    StoreError,
    UnconfirmedWriteError,
)
from robota.host.paths._paths import canonical_path, is_path_inside
from robota.host.store._regular_file import read_regular_file

__all__ = ["DIRECTORY_MODE", "FILE_MODE", "OwnerOnlyStore", "StagedReplace", "StoreGuarantee"]

DIRECTORY_MODE: Final = 0o700
"""The mode of every directory the store creates (S07)."""

FILE_MODE: Final = 0o600
"""The mode of every file the store creates (S07)."""

StoreGuarantee: TypeAlias = Literal["posix-mode", "windows-acl"]
"""Which owner-only guarantee is actually in force on this platform (S07)."""

_POSIX: Final = os.name == "posix"
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_TEMP_SUFFIX: Final = ".tmp"


@final
class OwnerOnlyStore:
    """A directory tree only its owner can read (S07).

    Opening the store makes sure ``root`` is a directory with mode ``0700`` owned by this
    account: a missing root (and any missing parent) is created with that mode; an existing one
    with a wider mode, another owner, or that is not a real directory is refused with
    :class:`InsecureModeError` / :class:`StoreError`. Names are relative paths inside the root
    (``"sessions/abc.json"``); their directories are created and checked the same way. A name
    whose canonical path leaves the root (``..``, a symlinked directory) is refused.

    Args:
        root: The store's directory.
        repair: Tighten an existing directory found wider than ``0700`` (the root, or one met on
            the way to a name) instead of refusing it. Only pass it after making sure nothing
            was planted there while it was open, because the store then trusts its contents.

    Raises:
        InsecureModeError: An existing directory is wider than owner-only and ``repair`` is off,
            or it belongs to another account.
        ModeNotEnforcedError: The filesystem did not apply the mode to a directory just created.
        StoreError: ``root`` exists and is not a directory, or cannot be created.
    """

    __slots__ = ("_repair", "_root")

    def __init__(self, root: str | os.PathLike[str], *, repair: bool = False) -> None:
        self._repair = repair
        self._root = canonical_path(root)
        self._ensure_root()

    @property
    def root(self) -> str:
        """The canonical path of the store's directory."""
        return self._root

    @property
    def guarantee(self) -> StoreGuarantee:
        """Which owner-only guarantee is in force (S07).

        ``"posix-mode"``: modes ``0700``/``0600``, verified on creation. ``"windows-acl"``: mode
        bits cannot express owner-only on Windows, so protection is only what the inherited ACL
        of the directory gives; a state directory inside a world-writable directory is not
        protected there.
        """
        return "posix-mode" if _POSIX else "windows-acl"

    def path_of(self, name: str) -> str:
        """The absolute path of ``name`` inside the store, after the containment check.

        Raises:
            ConfigurationError: ``name`` is absolute, empty, has ``..`` or an empty component,
                or its canonical path leaves the root.
        """
        parts = _split_name(name)
        path = os.path.join(self._root, *parts)
        # The last component is never followed (O_NOFOLLOW, rename and link replace or refuse a
        # link itself), so containment is judged on the directory that will hold it (S05).
        if not is_path_inside(self._root, os.path.dirname(path)):
            raise ConfigurationError(
                f"store name {name!r} leaves the store root {self._root!r} (through a symlink?); "
                "use a plain relative name"
            )
        return path

    def make_directory(self, name: str, *, exclusive: bool = False) -> str:
        """Create (or check) the directory ``name`` with mode ``0700`` and return its path.

        Args:
            name: The directory's name inside the store.
            exclusive: Fail with :class:`EntryExistsError` when it already exists, instead of
                adopting an existing owner-only directory.
        """
        path = self.path_of(name)
        if exclusive:
            self._ensure_directory(os.path.dirname(path))
            try:
                os.mkdir(path, DIRECTORY_MODE)
            except FileExistsError as exc:
                raise EntryExistsError(f"{path} already exists", path=path, cause=exc) from exc
            except OSError as exc:
                raise StoreError(f"cannot create {path}: {exc}", path=path, cause=exc) from exc
            _verify_new_directory(path)
        else:
            self._ensure_directory(path)  # its parents included
        return path

    def read(self, name: str) -> bytes | None:
        """The content of ``name``, or ``None`` when nothing is there.

        Raises:
            StoreError: the entry exists but cannot be read (a symlink is refused rather than
                followed, and a FIFO, socket, device or directory is refused without waiting on
                it) — never reported as absent.
        """
        path = self.path_of(name)
        try:
            return read_regular_file(path)
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc}", path=path, cause=exc) from exc

    def write(self, name: str, data: bytes, *, durable: bool = False) -> None:
        """Replace ``name`` with ``data`` atomically (a temp file renamed over it).

        Readers see the old content or the new, never a mix. The new file has mode ``0600``
        whatever mode the old one had.

        Args:
            name: The file's name inside the store.
            data: The whole new content.
            durable: Flush the temp file before the rename and the directory after it, so a
                crash leaves the old content or the new, never an empty file. Use it for a write
                that replaces the only copy of something (a key); ordinary records skip it
                because the next save rewrites them.

        Raises:
            StoreError: nothing new is in place (the old content is untouched).
            UnconfirmedWriteError: the new content is in place but the directory flush failed.
        """
        path, temp = self._prepare(name, data, flush=durable)
        try:
            os.replace(temp, path)
        except OSError as exc:
            _discard(temp)
            raise StoreError(f"cannot replace {path}: {exc}", path=path, cause=exc) from exc
        if durable:
            _confirm_directories([os.path.dirname(path)], path=path, in_place=(name,))

    def create_only(self, name: str, data: bytes, *, durable: bool = False) -> None:
        """Create ``name`` with ``data``, failing if anything is already at the path.

        The content is written and flushed to a temp file first, then committed with ``link``,
        which the kernel refuses when the path exists: of two creators exactly one succeeds, and
        a crash leaves the file complete or absent, never empty.

        Args:
            name: The file's name inside the store.
            data: The content.
            durable: Also flush the directory after the link.

        Raises:
            EntryExistsError: something (a file, directory or link) is already at the path.
            StoreError: nothing new is in place.
            UnconfirmedWriteError: the file is in place but a later step failed.
        """
        path, temp = self._prepare(name, data, flush=True)
        try:
            os.link(temp, path, follow_symlinks=False)
        except FileExistsError as exc:
            _discard(temp)
            raise EntryExistsError(f"{path} already exists", path=path, cause=exc) from exc
        except OSError as exc:
            _discard(temp)
            raise StoreError(f"cannot create {path}: {exc}", path=path, cause=exc) from exc
        try:
            os.unlink(temp)
        except OSError as exc:
            raise UnconfirmedWriteError(
                f"{path} is in place but its temp file {temp} could not be removed: {exc}",
                path=path,
                in_place=(name,),
                cause=exc,
            ) from exc
        if durable:
            _confirm_directories([os.path.dirname(path)], path=path, in_place=(name,))

    def remove(self, name: str) -> bool:
        """Remove the file ``name``; ``False`` when nothing was there.

        Raises:
            StoreError: the entry exists and cannot be removed (a directory, say).
        """
        path = self.path_of(name)
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise StoreError(f"cannot remove {path}: {exc}", path=path, cause=exc) from exc
        return True

    def stage(self) -> StagedReplace:
        """Start replacing several files together (S07).

        Each :meth:`StagedReplace.add` writes and flushes its content to a temp file beside its
        target; :meth:`StagedReplace.commit` renames them all and flushes their directories, so
        no rename is published ahead of content not yet flushed. Used as a context manager, the
        batch commits when the block ends normally and is discarded when it raises::

            with store.stage() as batch:
                batch.add("a.json", a)
                batch.add("b.json", b)
        """
        return StagedReplace(self)

    def _prepare(self, name: str, data: bytes, *, flush: bool) -> tuple[str, str]:
        # The target's path, and a temp file beside it (owner-only directories on the way)
        # already holding ``data``.
        path = self.path_of(name)
        self._ensure_directory(os.path.dirname(path))
        return path, _write_temp(path, data, flush=flush)

    # --- directories -------------------------------------------------------------------------

    def _ensure_root(self) -> None:
        missing: list[str] = []
        current = self._root
        while not os.path.lexists(current):
            missing.append(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for path in reversed(missing):
            self._create_or_check(path)
        if not missing:
            self._check_existing(self._root)

    def _ensure_directory(self, path: str) -> None:
        # S07: every directory between the root and a name is owner-only, created or checked.
        relative = os.path.relpath(path, self._root)
        current = self._root
        if relative == os.curdir:
            return
        for part in relative.split(os.sep):
            current = os.path.join(current, part)
            self._create_or_check(current)

    def _create_or_check(self, path: str) -> None:
        try:
            os.mkdir(path, DIRECTORY_MODE)
        except FileExistsError:
            self._check_existing(path)
            return
        except OSError as exc:
            raise StoreError(f"cannot create {path}: {exc}", path=path, cause=exc) from exc
        _verify_new_directory(path)

    def _check_existing(self, path: str) -> None:
        check_owner_only_directory(path, repair=self._repair)


@final
class StagedReplace:
    """Several files replaced together: all flushed beside their targets, then all renamed (S07).

    Created by :meth:`OwnerOnlyStore.stage`. Its lifecycle is ``open → committed | discarded``;
    :meth:`add` or :meth:`commit` after either end raises :class:`StagingStateError`.
    """

    __slots__ = ("_staged", "_state", "_store")

    def __init__(self, store: OwnerOnlyStore) -> None:
        self._store = store
        self._staged: dict[str, tuple[str, str]] = {}  # name -> (temp path, target path)
        self._state: Literal["open", "committed", "discarded"] = "open"

    @property
    def state(self) -> Literal["open", "committed", "discarded"]:
        """``"open"`` until :meth:`commit` or :meth:`discard`."""
        return self._state

    @property
    def staged(self) -> dict[str, str]:
        """A copy of ``{name: staged temp file path}`` for what is staged so far."""
        return {name: temp for name, (temp, _) in self._staged.items()}

    def add(self, name: str, data: bytes) -> None:
        """Write and flush ``data`` to a temp file beside ``name``; nothing is renamed yet.

        Staging the same name again replaces its staged content.
        """
        self._require_open("add to")
        path, temp = self._store._prepare(name, data, flush=True)
        previous = self._staged.pop(name, None)
        if previous is not None:
            _discard(previous[0])
        self._staged[name] = (temp, path)

    def commit(self) -> None:
        """Rename every staged file over its target, then flush their directories.

        Raises:
            StoreError: the first rename failed, so nothing new is in place.
            UnconfirmedWriteError: some or all new content is in place and a later step failed;
                ``in_place`` and ``not_written`` say which names are which.
        """
        self._require_open("commit")
        self._state = "committed"
        done: list[str] = []
        items = list(self._staged.items())
        self._staged.clear()
        for index, (name, (temp, path)) in enumerate(items):
            try:
                os.replace(temp, path)
            except OSError as exc:
                rest = items[index:]
                for _, (left, _) in rest:
                    _discard(left)
                if not done:
                    raise StoreError(
                        f"cannot replace {path}: {exc}; nothing was replaced",
                        path=path,
                        cause=exc,
                    ) from exc
                raise UnconfirmedWriteError(
                    f"cannot replace {path}: {exc}; {', '.join(done)} already replaced",
                    path=path,
                    in_place=tuple(done),
                    not_written=tuple(n for n, _ in rest),
                    cause=exc,
                ) from exc
            done.append(name)
        if items:
            directories = list(dict.fromkeys(os.path.dirname(path) for _, (_, path) in items))
            _confirm_directories(directories, path=items[0][1][1], in_place=tuple(done))

    def discard(self) -> None:
        """Remove every staged temp file; the targets keep their old content. Idempotent."""
        if self._state != "open":
            return
        self._state = "discarded"
        for temp, _ in self._staged.values():
            _discard(temp)
        self._staged.clear()

    def __enter__(self) -> StagedReplace:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None and self._state == "open":
            self.commit()
        else:
            self.discard()

    def _require_open(self, action: str) -> None:
        if self._state != "open":
            raise StagingStateError(
                f"cannot {action} a staged replace that was {self._state}; "
                "start a new one with store.stage()"
            )


# --- helpers ---------------------------------------------------------------------------------


def _split_name(name: str) -> list[str]:
    if not name or os.path.isabs(name) or name.startswith(("/", "\\")):
        raise ConfigurationError(f"a store name must be a non-empty relative path, got {name!r}")
    parts = name.replace("\\", "/").split("/") if not _POSIX else name.split("/")
    if any(part in ("", os.curdir, os.pardir) for part in parts):
        raise ConfigurationError(
            f"store name {name!r} has an empty, '.' or '..' component; use a plain relative name"
        )
    return parts


def open_new_file(path: str) -> int:
    """Create ``path`` for writing, 0600 in one step (S07: ``O_EXCL``, never an existing file)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, FILE_MODE)


def temp_path_for(target: str) -> str:
    """A fresh hidden name beside ``target`` for the content that will replace it."""
    directory, base = os.path.split(target)
    return os.path.join(directory, f".{base}.{secrets.token_hex(8)}{_TEMP_SUFFIX}")


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_temp(target: str, data: bytes, *, flush: bool) -> str:
    temp = temp_path_for(target)
    try:
        fd = open_new_file(temp)
    except OSError as exc:
        raise StoreError(f"cannot create {temp}: {exc}", path=target, cause=exc) from exc
    try:
        verify_new_file(fd, temp)
        write_all(fd, data)
        if flush:
            os.fsync(fd)
    except BaseException as exc:
        os.close(fd)
        _discard(temp)
        if isinstance(exc, OSError):
            raise StoreError(f"cannot write {temp}: {exc}", path=target, cause=exc) from exc
        raise
    os.close(fd)
    return temp


def verify_new_file(fd: int, path: str) -> None:
    """Check that the file just created at ``fd`` has mode ``0600`` (S07); raise if not.

    Create, set the mode, then verify — before any content goes in. A mode wider than asked (the
    filesystem ignored it) is :class:`ModeNotEnforcedError`, never masked by a chmod. Only owner
    bits a narrowing umask removed are completed, on the still-empty file.
    """
    if not _POSIX:
        return
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & ~FILE_MODE:
        raise ModeNotEnforcedError(
            f"{path} was created with mode {FILE_MODE:#o} but has {mode:#o}: this filesystem "
            "does not enforce modes, so an owner-only file cannot be kept here",
            path=path,
            mode=mode,
        )
    if mode != FILE_MODE:
        os.fchmod(fd, FILE_MODE)
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode != FILE_MODE:
            raise ModeNotEnforcedError(
                f"{path} should have mode {FILE_MODE:#o} but has {mode:#o} after setting it",
                path=path,
                mode=mode,
            )


def check_owner_only_directory(
    path: str, *, repair: bool, holder: str = "store", writable_only: bool = False
) -> None:
    """Make sure the existing directory ``path`` is owner-only (S07), or refuse it.

    The one check of an existing directory: the store's root and every directory on the way to
    a name, and the directory a :class:`~robota.host.SQLiteJournal` keeps its database in. It
    must be a real directory (not a link), belong to this account, and carry no permission bit
    beyond ``0700``. A wider one is tightened to ``0700`` only when ``repair`` is set. A shared
    directory — sticky, and writable by the group or other accounts, like ``/tmp`` — is refused
    even then: other accounts keep their files there by design (as root, ``/tmp`` itself would
    be taken from every account), and what they left in it stays.

    Args:
        path: The directory.
        repair: Tighten a directory found wider than ``0700`` (never another account's, never a
            shared one).
        holder: What is kept there (``"store"``, ``"journal"``), for the messages.
        writable_only: Refuse only what lets another account create, replace or remove names
            in it (a group or other *write* bit), not what lets it list them: for a directory
            the caller did not create for itself (a journal's, which is often a project's
            ``0755`` folder) and whose files are owner-only on their own.

    Raises:
        StoreError: ``path`` is not a real directory, or cannot be inspected.
        InsecureModeError: it belongs to another account, is shared, or is wider than ``0700``
            and ``repair`` is off.
        ModeNotEnforcedError: the tightened mode did not take.
    """
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise StoreError(f"cannot inspect {path}: {exc}", path=path, cause=exc) from exc
    if not stat.S_ISDIR(info.st_mode):
        raise StoreError(
            f"{path} is not a real directory (a file or a symlink); an owner-only {holder} "
            "does not follow links to its directories",
            path=path,
        )
    if not _POSIX:
        return
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.geteuid():
        raise InsecureModeError(
            f"{path} belongs to another account ({info.st_uid}), not to this one "
            f"({os.geteuid()}); an owner-only {holder} cannot live there",
            path=path,
            mode=mode,
            uid=info.st_uid,
        )
    if mode & stat.S_ISVTX and mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise InsecureModeError(
            f"{path} is a shared directory (mode {mode:#o}: sticky, and other accounts can "
            f"create files in it, like /tmp); an owner-only {holder} cannot live there, and it "
            "is not tightened even with repair=True, since other accounts use it. Use a "
            "directory of your own",
            path=path,
            mode=mode,
            uid=info.st_uid,
        )
    forbidden = (stat.S_IWGRP | stat.S_IWOTH) if writable_only else ~DIRECTORY_MODE & 0o7777
    if mode & forbidden == 0:
        return  # owner-only enough (a narrower mode is not a leak; its own errors say so)
    wanted = mode & ~forbidden if writable_only else DIRECTORY_MODE
    if not repair:
        raise InsecureModeError(
            f"{path} has mode {mode:#o}, but an owner-only {holder} needs {wanted:#o}: "
            "another account could "
            + ("replace or plant files in it" if writable_only else "read, replace or list")
            + f" what is in it. Check that nothing was planted in it, then open the {holder} "
            "with repair=True to tighten it",
            path=path,
            mode=mode,
            uid=info.st_uid,
        )
    _repair_directory(path, found=mode, wanted=wanted)


def _verify_new_directory(path: str) -> None:
    if not _POSIX:
        return
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        raise StoreError(f"cannot open {path}: {exc}", path=path, cause=exc) from exc
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & ~DIRECTORY_MODE == 0 and mode != DIRECTORY_MODE:
            os.fchmod(fd, DIRECTORY_MODE)  # owner bits a narrowing umask removed; still empty
            mode = stat.S_IMODE(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    if mode != DIRECTORY_MODE:
        with contextlib.suppress(OSError):
            os.rmdir(path)  # ours and still empty: leave nothing unprotected behind
        raise ModeNotEnforcedError(
            f"{path} was created with mode {DIRECTORY_MODE:#o} but has {mode:#o}: this "
            "filesystem does not enforce modes, so an owner-only store cannot live here",
            path=path,
            mode=mode,
        )


def _repair_directory(path: str, *, found: int, wanted: int = DIRECTORY_MODE) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        raise StoreError(f"cannot open {path} to repair it: {exc}", path=path, cause=exc) from exc
    try:
        os.fchmod(fd, wanted)
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    if mode != wanted:
        raise ModeNotEnforcedError(
            f"{path} had mode {found:#o}; setting {wanted:#o} left {mode:#o}",
            path=path,
            mode=mode,
        )


def fsync_directory(directory: str) -> None:
    """Flush ``directory``'s entries (a rename or a new file in it survives a crash)."""
    fd = os.open(directory, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _confirm_directories(directories: list[str], *, path: str, in_place: tuple[str, ...]) -> None:
    # S07: after the rename the new content is in place; a failure now is "unconfirmed",
    # never "not written", or a caller would tell its user the old content is still there.
    for directory in directories:
        try:
            fsync_directory(directory)
        except OSError as exc:
            raise UnconfirmedWriteError(
                f"{path} is in place, but flushing {directory} failed ({exc}): it may not "
                "survive a crash",
                path=path,
                in_place=in_place,
                cause=exc,
            ) from exc


def _discard(path: str) -> None:
    # A temp file left behind is hidden, owner-only and harmless; the failure being reported
    # matters more than a second one while cleaning up after it.
    with contextlib.suppress(OSError):
        os.unlink(path)
