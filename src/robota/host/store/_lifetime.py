"""Process lifetime: the exit registry, process-scoped directories (S08).

**Owner records** (:class:`OwnerRecord`, :func:`owner_state`) live in :mod:`._owner`, the
lowest module of this group, and are re-exported here: the one three-valued rule that both
process-scoped directories and process markers (S10) judge an owner by.

**The exit registry.** What goes when the process ends is one registry for the whole process,
kept on the :mod:`sys` module so every copy of this module (two installed versions, a reloaded
module) shares it. It runs through :mod:`atexit`, and — because a signal whose default action
kills the process runs no exit handlers — listens for SIGHUP, SIGINT and SIGTERM, but only where
nothing else handles the signal (its handler is ``SIG_DFL``). Then it runs the cleanups and
re-raises the signal with the default action, so the process dies by that signal exactly as it
would have. A process with its own handler ends as that handler decides, and its normal exit
runs the registry. (Python's own SIGINT handler raises :class:`KeyboardInterrupt`, which exits
normally, so SIGINT is usually left alone.) No crash handler is installed here; a host that
installs one that ends the process must call :func:`run_exit_callbacks` first.

**Process-scoped directories.** :meth:`ProcessScopedDirectory.create` makes
``<state_root>/<prefix>-<pid>-<16 hex>`` on the owner-only store (S07), writes the owner record
into it before anything else, and registers its removal at exit. ``ProcessScopedDirectory.sweep``
removes the directories whose owner is provably gone — by identity, never by age — and
``ProcessScopedDirectory.inspect`` reports the same directories without removing anything.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Final, Protocol, cast, final

from robota.core import ConfigurationError, get_logger
from robota.host._errors import EntryExistsError, OwnerRecordError, StoreError
from robota.host.store._owner import (
    OWNER_RECORD_NAME,
    OwnerRecord,
    OwnerState,
    owner_state,
)
from robota.host.store._regular_file import read_regular_file
from robota.host.store._store import OwnerOnlyStore

_log = get_logger("robota.host.lifetime")

__all__ = [
    "OWNER_RECORD_NAME",
    "ExitRegistration",
    "OwnerRecord",
    "OwnerState",
    "ProcessScopedDirectory",
    "ScopedDirectoryReport",
    "SweepResult",
    "owner_state",
    "register_at_exit",
    "run_exit_callbacks",
]

_PLAIN_WORD: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_TOKEN_HEX: Final = 16
_RECORD_LIMIT: Final = 64 * 1024  # an owner record is a few hundred bytes; more is not one
_REGISTRY_ATTRIBUTE: Final = "_robota_process_exit_registry"
_EXIT_SIGNALS: Final = tuple(
    getattr(signal, name) for name in ("SIGHUP", "SIGINT", "SIGTERM") if hasattr(signal, name)
)


# --- the exit registry -----------------------------------------------------------------------


class _Registry(Protocol):
    """What every copy of this module expects of the shared registry (keep it stable)."""

    def register(self, callback: Callable[[], object]) -> int: ...
    def unregister(self, token: int) -> None: ...
    def run(self) -> None: ...


class _ExitRegistry:
    """The one exit registry of this process (S08); reached only through :func:`_registry`.

    No lock: every mutation is one dict operation, atomic under the GIL, so a signal handler
    interrupting :meth:`run` or :meth:`register` on the main thread cannot deadlock.
    """

    def __init__(self) -> None:
        self._entries: dict[int, tuple[int, Callable[[], object]]] = {}
        self._tokens = itertools.count(1)

    def register(self, callback: Callable[[], object]) -> int:
        token = next(self._tokens)
        self._entries[token] = (os.getpid(), callback)
        self._listen()
        return token

    def unregister(self, token: int) -> None:
        self._entries.pop(token, None)

    def run(self) -> None:
        pid = os.getpid()
        while True:
            try:
                _, (owner, callback) = self._entries.popitem()  # newest first
            except KeyError:
                return
            if owner != pid:
                continue  # registered by the parent before a fork: not this process's to undo
            try:
                callback()
            except Exception as exc:  # noqa: BLE001 - one failed cleanup must not skip the rest
                _report_cleanup_failure(callback, exc)

    def forget_inherited(self) -> None:
        pid = os.getpid()
        for token, (owner, _) in list(self._entries.items()):
            if owner != pid:
                self._entries.pop(token, None)

    def _listen(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set there; a later registration retries
        for number in _EXIT_SIGNALS:
            # S08: act only when nothing else handles the signal; a handler already there
            # (ours included) ends the process as it decides, and its exit runs atexit.
            if signal.getsignal(number) == signal.SIG_DFL:
                signal.signal(number, self._on_signal)

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        self.run()
        # S08: die by the same signal, as the default action would have.
        signal.signal(number, signal.SIG_DFL)
        signal.raise_signal(number)


def _report_cleanup_failure(callback: Callable[[], object], exc: Exception) -> None:
    # S14: the library's diagnostics go to the installed sink, never straight to the console.
    with contextlib.suppress(Exception):
        _log.error("exit cleanup failed", cleanup=repr(callback), error=repr(exc))


def _registry() -> _Registry:
    existing = getattr(sys, _REGISTRY_ATTRIBUTE, None)
    if existing is not None:
        return cast(_Registry, existing)
    candidate = _ExitRegistry()
    # setdefault is atomic: of two threads or two module copies racing here, one registry wins.
    chosen = vars(sys).setdefault(_REGISTRY_ATTRIBUTE, candidate)
    if chosen is candidate:
        atexit.register(candidate.run)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=candidate.forget_inherited)
    return cast(_Registry, chosen)


@final
class ExitRegistration:
    """A callback registered with the process exit registry; :meth:`release` withdraws it."""

    __slots__ = ("_token",)

    def __init__(self, token: int) -> None:
        self._token: int | None = token

    @property
    def active(self) -> bool:
        """Whether the callback is still registered by this handle."""
        return self._token is not None

    def release(self) -> None:
        """Withdraw the callback without running it. Idempotent."""
        if self._token is not None:
            _registry().unregister(self._token)
            self._token = None


def register_at_exit(callback: Callable[[], object]) -> ExitRegistration:
    """Run ``callback`` when this process ends: normal exit, or a default-action signal (S08).

    Callbacks run newest first, at most once, and only in the process that registered them (a
    forked child inherits none). A callback that raises is reported to the diagnostic sink
    (S14) and the rest still run. A callback must be quick and must not block on other threads.
    """
    return ExitRegistration(_registry().register(callback))


def run_exit_callbacks() -> None:
    """Run (and forget) every registered exit callback now.

    For a host's crash handler that ends the process without a normal exit (S08); nothing
    calls it otherwise.
    """
    _registry().run()


# --- process-scoped directories --------------------------------------------------------------


@final
class ProcessScopedDirectory:
    """A directory this process keeps for its own lifetime (S08).

    Create it with :meth:`create`; it is removed by :meth:`remove`, by leaving its ``with``
    block, or when the process ends (see the exit registry). A crash leaves it behind for a
    later :meth:`sweep`, which removes it once its owner provably cannot be alive. Its lifecycle
    is ``open → removed``.
    """

    __slots__ = ("_name", "_path", "_record", "_registration", "_removed")

    def __init__(
        self, *, path: str, name: str, record: OwnerRecord, registration: ExitRegistration
    ) -> None:
        self._path = path
        self._name = name
        self._record = record
        self._registration = registration
        self._removed = False

    @classmethod
    def create(
        cls, state_root: str | os.PathLike[str], prefix: str, *, repair: bool = False
    ) -> ProcessScopedDirectory:
        """Create ``<state_root>/<prefix>-<pid>-<random>`` for this process.

        The directory is owner-only (S07); the owner record is written into it, flushed,
        before anything else goes in; its removal is registered at exit.

        Args:
            state_root: The directory holding scoped directories (made owner-only if missing).
            prefix: What the directory is for (``"spill"``, ``"checkpoints"``): letters,
                digits, ``_``, ``.`` and ``-``, starting with a letter or digit.
            repair: Passed to :class:`~robota.host.store._store.OwnerOnlyStore`.

        Raises:
            ConfigurationError: an invalid prefix.
            StoreError: the state root is not owner-only, or the directory cannot be made.
        """
        _check_prefix(prefix)
        store = OwnerOnlyStore(state_root, repair=repair)
        record = OwnerRecord.current()
        while True:
            name = f"{prefix}-{record.pid}-{secrets.token_hex(_TOKEN_HEX // 2)}"
            try:
                path = store.make_directory(name, exclusive=True)
            except EntryExistsError:  # pragma: no cover - a 64-bit collision
                continue
            break
        registration = register_at_exit(lambda: _remove_scoped(path))
        try:
            # S08: the owner record goes in before anything else.
            store.create_only(f"{name}/{OWNER_RECORD_NAME}", record.to_json(), durable=True)
        except BaseException:
            registration.release()
            with contextlib.suppress(OSError):
                _remove_scoped(path)
            raise
        return cls(path=path, name=name, record=record, registration=registration)

    @property
    def path(self) -> str:
        """The directory's absolute path."""
        return self._path

    @property
    def name(self) -> str:
        """The directory's name (``<prefix>-<pid>-<random>``)."""
        return self._name

    @property
    def record(self) -> OwnerRecord:
        """The owner record written into it."""
        return self._record

    @property
    def removed(self) -> bool:
        """Whether :meth:`remove` ran."""
        return self._removed

    def remove(self) -> None:
        """Remove the directory and everything in it now, and withdraw the exit cleanup.

        Idempotent.

        Raises:
            StoreError: it could not be removed entirely (the exit cleanup stays registered).
        """
        if self._removed:
            return
        try:
            _remove_scoped(self._path)
        except OSError as exc:
            raise StoreError(
                f"cannot remove {self._path}: {exc}", path=self._path, cause=exc
            ) from exc
        self._removed = True
        self._registration.release()

    @staticmethod
    def inspect(
        state_root: str | os.PathLike[str], prefix: str
    ) -> tuple[ScopedDirectoryReport, ...]:
        """Report every scoped directory ``prefix`` names under ``state_root``; remove nothing.

        For a host that must not act while another owner runs: it tells ``"alive"`` and
        ``"unknown"`` apart (S08). It considers exactly the directories :meth:`sweep` does.
        """
        _check_prefix(prefix)
        return tuple(_scan(os.fspath(state_root), prefix))

    @staticmethod
    def sweep(state_root: str | os.PathLike[str], prefix: str) -> SweepResult:
        """Remove the scoped directories under ``state_root`` whose owner is provably gone.

        Decided by the owner's identity, never by age: an idle session's directory is old and
        live (S08). Only a real directory owned by this account whose name has the exact scoped
        form ``<prefix>-<pid>-<16 lowercase hex>`` is considered — a link, a file or any other
        name is left alone — and only an owner judged ``"gone"`` by :func:`owner_state` has its
        directory removed. Another machine's, another pid namespace's, and an unreadable
        record's are kept.
        """
        _check_prefix(prefix)
        removed: list[ScopedDirectoryReport] = []
        kept: list[ScopedDirectoryReport] = []
        failed: list[tuple[ScopedDirectoryReport, str]] = []
        for report in _scan(os.fspath(state_root), prefix):
            if report.state != "gone":
                kept.append(report)
                continue
            try:
                if not _is_scoped_directory(report.path):
                    continue  # replaced since the scan
                _remove_scoped(report.path)
            except OSError as exc:
                failed.append((report, str(exc)))
                continue
            removed.append(report)
        return SweepResult(removed=tuple(removed), kept=tuple(kept), failed=tuple(failed))

    def __enter__(self) -> ProcessScopedDirectory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.remove()

    def __repr__(self) -> str:
        state = "removed" if self._removed else "open"
        return f"ProcessScopedDirectory({self._path!r}, {state})"


def _remove_scoped(path: str) -> None:
    """Remove a scoped directory, its owner record last, so a partial removal stays judged."""
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.name == OWNER_RECORD_NAME:
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(path, OWNER_RECORD_NAME))
    os.rmdir(path)


def check_plain_word(value: str, what: str) -> None:
    """Refuse ``value`` unless it is a plain file-name word (no separators, no leading dot)."""
    if not _PLAIN_WORD.fullmatch(value):
        raise ConfigurationError(
            f"{what} must be letters, digits, '_', '.' or '-' and start with a letter or digit, "
            f"got {value!r}"
        )


def _check_prefix(prefix: str) -> None:
    check_plain_word(prefix, "a scoped directory prefix")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ScopedDirectoryReport:
    """One process-scoped directory as ``inspect`` and ``sweep`` see it.

    Attributes:
        path: Its absolute path.
        name: Its name.
        record: Its owner record, or ``None`` when missing or unreadable.
        state: Its owner's state; ``"unknown"`` without a readable record.
    """

    path: str
    name: str
    record: OwnerRecord | None
    state: OwnerState


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SweepResult:
    """What :meth:`ProcessScopedDirectory.sweep` did.

    Attributes:
        removed: Directories whose owner was provably gone, now removed.
        kept: Directories whose owner is alive or unknown.
        failed: Gone owners' directories that could not be removed entirely, with the reason;
            a later sweep tries again (their record is removed last, so they stay judged).
    """

    removed: tuple[ScopedDirectoryReport, ...]
    kept: tuple[ScopedDirectoryReport, ...]
    failed: tuple[tuple[ScopedDirectoryReport, str], ...]


def _scan(state_root: str, prefix: str) -> Iterator[ScopedDirectoryReport]:
    pattern = re.compile(rf"{re.escape(prefix)}-([1-9][0-9]*)-[0-9a-f]{{{_TOKEN_HEX}}}")
    try:
        entries = sorted(os.scandir(state_root), key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or not _is_scoped_directory(entry.path):
            continue
        record = _read_record(entry.path)
        if record is not None and record.pid != int(match.group(1)):
            record = None  # the name and the record disagree: trust neither
        state: OwnerState = owner_state(record) if record is not None else "unknown"
        yield ScopedDirectoryReport(path=entry.path, name=entry.name, record=record, state=state)


def _is_scoped_directory(path: str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False  # S08: a link or a file with a scoped name is left alone
    return os.name != "posix" or info.st_uid == os.geteuid()


def _read_record(directory: str) -> OwnerRecord | None:
    path = os.path.join(directory, OWNER_RECORD_NAME)
    try:
        # S07: through the host's one reader, so a FIFO planted here cannot stall every sweep.
        data = read_regular_file(path, limit=_RECORD_LIMIT)
    except OSError:
        return None  # unreadable: the owner is unknown, so the directory is kept
    if data is None:
        return None
    try:
        return OwnerRecord.from_json(data)
    except OwnerRecordError:
        return None
