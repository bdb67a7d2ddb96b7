"""Process markers (S10): an exclusive, named claim one process holds across processes.

A marker is a file ``<name>.marker`` in an owner-only directory (S07). It names its owner by the
same :class:`~robota.host.store._owner.OwnerRecord` a process-scoped directory carries (S08), and
stands while that owner is ``"alive"`` or ``"unknown"``: a second publisher is refused with the
owner (:class:`MarkerHeldError`), and only a marker whose owner is provably ``"gone"`` can be
broken. It is published by linking a flushed temp file into place, so a crash leaves it complete
or absent, never an empty marker that reads unknown forever.

Marker transitions and each guarded mutation share a crash-released operation lock
(:class:`OperationLock`, ``flock`` on ``<name>.lock``): the kernel releases it when its holder
dies, and it is never stolen because time has passed. Under that lock a handle verifies its
marker before the mutation runs (:meth:`ProcessMarker.guard`), so a cooperating forced release
cannot cross a write, and a writer that lost its marker fails closed (:class:`MarkerLostError`).

A process recognises its own markers from what it remembers publishing (a random claim token
kept by the handle), never from liveness: where no start time can be read a live owner, itself
included, is only ``"unknown"``.

Lending: :meth:`ProcessMarker.lend` writes the SHA-256 digest of a fresh nonce into the marker
and returns the nonce; whoever presents it may take the marker over
(:meth:`ProcessMarker.take_over`), and the lender ends the lease whoever holds it by then
(:meth:`ProcessMarker.end_lease` takes it back, :meth:`ProcessMarker.release` removes it).

Any program running as the same user can plant or remove a marker: it is a coordination device
between cooperating versions, and a planted marker is a denial of service, never a trust anchor.
Replacing the lock file's path splits the lock namespace, so lock files are never removed.

Errors: :class:`MarkerError` and its kinds (see :mod:`._errors`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias, final

from robota.host._errors import (
    EntryExistsError,
    LeaseRefusedError,
    LockTimeoutError,
    MarkerError,
    MarkerHeldError,
    MarkerLostError,
    OwnerRecordError,
)
from robota.host.store._lifetime import ExitRegistration, check_plain_word, register_at_exit
from robota.host.store._owner import OwnerRecord, OwnerState, owner_state
from robota.host.store._store import OwnerOnlyStore

__all__ = [
    "MarkerReport",
    "MarkerState",
    "OperationLock",
    "ProcessMarker",
]

MarkerState: TypeAlias = Literal["held", "lent", "released", "lost"]
"""A handle's lifecycle: ``held`` ⇄ ``lent`` → ``released``; ``lost`` when another took it."""

_FORMAT: Final = "robota.marker/1"
_MARKER_SUFFIX: Final = ".marker"
_LOCK_SUFFIX: Final = ".lock"
_EXIT_LOCK_TIMEOUT: Final = 5.0
_POLL_INTERVAL: Final = 0.01

# S10: the claims this process published and still holds — its memory of its own markers —
# and the lock files it holds right now (an exit cleanup must not wait on its own lock).
_remembered_claims: set[str] = set()
_held_locks: set[str] = set()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_remembered_claims.clear)
    os.register_at_fork(after_in_child=_held_locks.clear)


@final
class OperationLock:
    """A crash-released exclusive lock: ``flock`` on a lock file (S10).

    The kernel drops the lock when the process holding it dies, so nothing ever needs to steal
    it by age. Every :meth:`held` opens the file anew, so two handles — even in one process, on
    two threads — exclude each other. Not reentrant: holding it and asking again deadlocks (or
    times out). The lock file is never removed, since replacing its path splits the lock.

    Args:
        path: The lock file (created ``0600`` when missing).
        timeout: Seconds :meth:`held` waits before :class:`LockTimeoutError`; ``None`` waits
            as long as it takes.
    """

    __slots__ = ("_path", "_timeout")

    def __init__(self, path: str | os.PathLike[str], *, timeout: float | None = None) -> None:
        self._path = os.fspath(path)
        self._timeout = timeout

    @property
    def path(self) -> str:
        """The lock file's path."""
        return self._path

    @contextlib.contextmanager
    def held(self, *, timeout: float | None = None) -> Iterator[None]:
        """Hold the lock for the ``with`` block.

        Args:
            timeout: Overrides the lock's own timeout for this acquisition.
        """
        limit = self._timeout if timeout is None else timeout
        try:
            fd = os.open(
                self._path,
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
        except OSError as exc:
            raise MarkerError(
                f"cannot open the operation lock {self._path}: {exc}", path=self._path, cause=exc
            ) from exc
        try:
            _acquire(fd, self._path, limit)
            _held_locks.add(self._path)
            try:
                yield
            finally:
                _held_locks.discard(self._path)
        finally:
            os.close(fd)  # releases the flock

    def __repr__(self) -> str:
        return f"OperationLock({self._path!r})"


def _acquire(fd: int, path: str, timeout: float | None) -> None:
    # POSIX-only: imported on use, so `import robota.host` works where fcntl does not exist.
    import fcntl  # noqa: PLC0415

    if timeout is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeoutError(
                    f"the operation lock {path} was not acquired within {timeout:g} seconds; "
                    "it is never taken from a live holder by age",
                    path=path,
                ) from None
            time.sleep(_POLL_INTERVAL)
        else:
            return


@dataclass(frozen=True, slots=True)
class _Lease:
    digest: str
    lender: OwnerRecord
    lender_claim: str


@dataclass(frozen=True, slots=True)
class _Content:
    owner: OwnerRecord
    claim: str
    lease: _Lease | None

    def to_json(self) -> bytes:
        lease = None
        if self.lease is not None:
            lease = {
                "digest": self.lease.digest,
                "lender": self.lease.lender.as_dict(),
                "lender_claim": self.lease.lender_claim,
            }
        body = {"format": _FORMAT, "owner": self.owner.as_dict(), "claim": self.claim}
        return json.dumps({**body, "lease": lease}, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> _Content:
        try:
            decoded = json.loads(data.decode())
        except (UnicodeDecodeError, ValueError) as exc:
            raise OwnerRecordError(f"marker is not JSON: {exc}", cause=exc) from exc
        if not isinstance(decoded, dict) or decoded.get("format") != _FORMAT:
            raise OwnerRecordError(f"not a marker of format {_FORMAT!r}")
        claim = decoded.get("claim")
        if not isinstance(claim, str) or not claim:
            raise OwnerRecordError("marker has no claim")
        owner = OwnerRecord.from_dict(decoded.get("owner"))
        raw_lease = decoded.get("lease")
        lease = None
        if raw_lease is not None:
            if not isinstance(raw_lease, dict):
                raise OwnerRecordError("marker lease is not an object")
            digest, lender_claim = raw_lease.get("digest"), raw_lease.get("lender_claim")
            if not isinstance(digest, str) or not isinstance(lender_claim, str):
                raise OwnerRecordError("marker lease lacks its digest or lender claim")
            lease = _Lease(digest, OwnerRecord.from_dict(raw_lease.get("lender")), lender_claim)
        return cls(owner, claim, lease)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class MarkerReport:
    """Who holds a marker, as :meth:`ProcessMarker.inspect` reads it.

    Attributes:
        path: The marker's path.
        owner: The holder's record; ``None`` when the marker cannot be read.
        state: The holder's state by :func:`~robota.host.store._owner.owner_state`.
        mine: Whether this process remembers publishing (or taking over) exactly this claim.
        lent: Whether the marker carries a lease.
    """

    path: str
    owner: OwnerRecord | None
    state: OwnerState
    mine: bool
    lent: bool


@final
class ProcessMarker:
    """A handle on a process marker this process published or took over (S10).

    Get one with :meth:`publish` or :meth:`take_over`. Run each mutation the marker protects
    inside :meth:`guard`. The marker is released by :meth:`release`, by leaving its ``with``
    block, or when the process ends; a crash leaves it for :meth:`break_stale` once its owner is
    provably gone.
    """

    __slots__ = (
        "_claim",
        "_lock",
        "_name",
        "_record",
        "_registration",
        "_state",
        "_store",
    )

    def __init__(
        self,
        *,
        store: OwnerOnlyStore,
        name: str,
        lock: OperationLock,
        record: OwnerRecord,
        claim: str,
    ) -> None:
        self._store = store
        self._name = name
        self._lock = lock
        self._record = record
        self._claim = claim
        self._state: MarkerState = "held"
        _remembered_claims.add(claim)
        self._registration: ExitRegistration = register_at_exit(self._release_at_exit)

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    def publish(
        cls, directory: str | os.PathLike[str], name: str, *, lock_timeout: float | None = None
    ) -> ProcessMarker:
        """Claim ``name`` in ``directory`` for this process.

        Args:
            directory: The directory every cooperating process keeps its markers in (made
                owner-only if missing, S07).
            name: The marker's name: letters, digits, ``_``, ``.`` and ``-``.
            lock_timeout: Seconds to wait for the operation lock (default: as long as it takes).

        Raises:
            MarkerHeldError: someone (this process included) already holds it; names the owner.
                If that owner is provably gone, :meth:`break_stale` first.
            LockTimeoutError: the operation lock was not acquired in time.
            StoreError: the directory is not owner-only, or the marker cannot be written.
        """
        store, lock, marker = _open(directory, name, lock_timeout)
        record = OwnerRecord.current()
        claim = secrets.token_hex(16)
        with lock.held():
            try:
                # S10: linking a flushed temp file: complete or absent, never empty.
                store.create_only(marker, _Content(record, claim, None).to_json(), durable=True)
            except EntryExistsError:
                content = _read(store, marker)
                owner = content.owner if content is not None else None
                state = owner_state(owner) if owner is not None else "unknown"
                raise _held_error(store.path_of(marker), owner, state) from None
        return cls(store=store, name=name, lock=lock, record=record, claim=claim)

    @classmethod
    def take_over(
        cls,
        directory: str | os.PathLike[str],
        name: str,
        nonce: str,
        *,
        lock_timeout: float | None = None,
    ) -> ProcessMarker:
        """Take over a lent marker by presenting the lender's nonce (S10).

        The marker then names this process; whoever held it before fails closed at its next
        guarded mutation. The lease stays, so the lender can still end it.

        Raises:
            LeaseRefusedError: the marker is absent, not lent, or lent under another nonce.
        """
        store, lock, marker = _open(directory, name, lock_timeout)
        path = store.path_of(marker)
        record = OwnerRecord.current()
        claim = secrets.token_hex(16)
        with lock.held():
            content = _read(store, marker)
            if content is None or content.lease is None:
                raise LeaseRefusedError(f"marker {path} is not lent", path=path)
            if not hmac.compare_digest(content.lease.digest, _digest(nonce)):
                raise LeaseRefusedError(f"the nonce does not match the lease of {path}", path=path)
            taken = replace(content, owner=record, claim=claim)
            store.write(marker, taken.to_json(), durable=True)
        return cls(store=store, name=name, lock=lock, record=record, claim=claim)

    @staticmethod
    def break_stale(
        directory: str | os.PathLike[str], name: str, *, lock_timeout: float | None = None
    ) -> bool:
        """Remove the marker if its owner provably cannot be alive; ``False`` if none is there.

        A lent marker is broken only when its lender is gone too (the lender may still end the
        lease). This process's own markers are never broken, whatever liveness says.

        Raises:
            MarkerHeldError: the owner (or lender) is alive or unknown, or the marker cannot be
                read (so its owner is unknown). Names the owner.
        """
        store, lock, marker = _open(directory, name, lock_timeout)
        path = store.path_of(marker)
        with lock.held():
            data = store.read(marker)
            if data is None:
                return False
            try:
                content = _Content.from_json(data)
            except OwnerRecordError:
                raise _held_error(path, None, "unknown") from None
            if content.claim in _remembered_claims:
                raise _held_error(path, content.owner, "alive")
            for record in _named_processes(content):
                state = owner_state(record)
                if state != "gone":
                    raise _held_error(path, record, state)
            store.remove(marker)
        return True

    @staticmethod
    def inspect(directory: str | os.PathLike[str], name: str) -> MarkerReport | None:
        """Who holds the marker ``name``, or ``None`` when there is none. Changes nothing."""
        _check_name(name)
        if not os.path.isdir(directory):
            return None
        store = OwnerOnlyStore(directory)
        marker = name + _MARKER_SUFFIX
        path = store.path_of(marker)
        data = store.read(marker)
        if data is None:
            return None
        try:
            content = _Content.from_json(data)
        except OwnerRecordError:
            return MarkerReport(path=path, owner=None, state="unknown", mine=False, lent=False)
        return MarkerReport(
            path=path,
            owner=content.owner,
            state=owner_state(content.owner),
            mine=content.claim in _remembered_claims,
            lent=content.lease is not None,
        )

    # --- the handle --------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The marker's name."""
        return self._name

    @property
    def path(self) -> str:
        """The marker file's path."""
        return self._store.path_of(self._name + _MARKER_SUFFIX)

    @property
    def owner(self) -> OwnerRecord:
        """The owner record this handle wrote."""
        return self._record

    @property
    def state(self) -> MarkerState:
        """``held``, ``lent``, ``released`` or ``lost`` (as of the last operation)."""
        return self._state

    def holds(self) -> bool:
        """Whether the marker on disk still carries this handle's claim (read under the lock).

        Takes the operation lock, so never call it inside :meth:`guard` (the lock is not
        reentrant and the call would wait on itself).
        """
        with self._lock.held():
            content = _read(self._store, self._marker)
        return content is not None and content.claim == self._claim

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Run the ``with`` block under the operation lock, once the marker is verified ours.

        Raises:
            MarkerLostError: before the block runs, when this handle no longer holds its marker
                (released, broken, taken over, or lent out) — the writer fails closed (S10).
        """
        if self._state == "lent":
            raise MarkerLostError(
                f"{self.path} is lent out; end the lease before writing under it", path=self.path
            )
        with self._lock.held():
            content = _read(self._store, self._marker)
            if content is None or content.claim != self._claim:
                self._lose()
                raise MarkerLostError(
                    f"{self.path} is no longer held by this handle ({self._state})",
                    path=self.path,
                )
            yield

    def lend(self) -> str:
        """Lend the marker: store the SHA-256 digest of a fresh nonce in it; return the nonce.

        The handle keeps its claim as the lender; until :meth:`end_lease`, its :meth:`guard`
        refuses to run. Pass the nonce to the borrower over a channel only it reads.

        Raises:
            MarkerLostError: this handle no longer holds the marker.
        """
        nonce = secrets.token_urlsafe(32)
        digest = _digest(nonce)
        with self._lock.held():
            content = self._verify_held()
            lease = _Lease(digest, content.owner, self._claim)
            self._store.write(self._marker, replace(content, lease=lease).to_json(), durable=True)
        self._state = "lent"
        return nonce

    def end_lease(self) -> None:
        """Take a lent marker back, whoever holds it by then; the borrower's handle fails closed.

        Raises:
            MarkerLostError: the marker was broken or replaced meanwhile.
            MarkerError: this handle has not lent it (``state`` is not ``"lent"``).
        """
        if self._state != "lent":
            raise MarkerError(
                f"{self.path} is not lent by this handle ({self._state}); lend() it first",
                path=self.path,
                code="marker_not_lent",
                category="user",
            )
        with self._lock.held():
            self._verify_lender()
            back = _Content(self._record, self._claim, None)
            self._store.write(self._marker, back.to_json(), durable=True)
        self._state = "held"

    def release(self) -> None:
        """Give the marker up. Idempotent.

        A borrower's release hands it back to the lender; a lender's release removes it,
        whoever holds it by then. A handle that lost its marker removes nothing.
        """
        if self._state in ("held", "lent"):
            self._release(None)

    def __enter__(self) -> ProcessMarker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"ProcessMarker({self.path!r}, {self._state})"

    # --- internals ---------------------------------------------------------------------------

    @property
    def _marker(self) -> str:
        return self._name + _MARKER_SUFFIX

    def _release(self, timeout: float | None) -> None:
        with self._lock.held(timeout=timeout):
            content = _read(self._store, self._marker)
            if content is None:
                self._finish("lost")
                return
            lender_here = content.lease is not None and content.lease.lender_claim == self._claim
            if content.claim == self._claim and not lender_here and content.lease is not None:
                # A borrower's release: the marker goes back to its lender.
                lease = content.lease
                back = _Content(lease.lender, lease.lender_claim, None)
                self._store.write(self._marker, back.to_json(), durable=True)
            elif content.claim == self._claim or lender_here:
                self._store.remove(self._marker)
            else:
                self._finish("lost")
                return
        self._finish("released")

    def _release_at_exit(self) -> None:
        # A signal that interrupts this process inside a guarded mutation must not wait on the
        # lock the process itself holds: the marker then stays, and once this owner is gone a
        # later start breaks it.
        if self._state in ("held", "lent") and self._lock.path not in _held_locks:
            self._release(_EXIT_LOCK_TIMEOUT)

    def _verify_held(self) -> _Content:
        content = _read(self._store, self._marker)
        if content is None or content.claim != self._claim:
            self._lose()
            raise MarkerLostError(f"{self.path} is no longer held by this handle", path=self.path)
        return content

    def _verify_lender(self) -> _Content:
        content = _read(self._store, self._marker)
        if content is None:
            self._lose()
            raise MarkerLostError(f"{self.path} was removed while lent", path=self.path)
        if content.claim == self._claim:
            return content  # never taken over
        if content.lease is None or content.lease.lender_claim != self._claim:
            self._lose()
            raise MarkerLostError(f"{self.path} was replaced while lent", path=self.path)
        return content

    def _lose(self) -> None:
        if self._state in ("held", "lent"):
            self._finish("lost")

    def _finish(self, state: Literal["released", "lost"]) -> None:
        self._state = state
        _remembered_claims.discard(self._claim)
        self._registration.release()


def _open(
    directory: str | os.PathLike[str], name: str, lock_timeout: float | None
) -> tuple[OwnerOnlyStore, OperationLock, str]:
    _check_name(name)
    store = OwnerOnlyStore(directory)
    lock = OperationLock(store.path_of(name + _LOCK_SUFFIX), timeout=lock_timeout)
    return store, lock, name + _MARKER_SUFFIX


def _check_name(name: str) -> None:
    check_plain_word(name, "a marker name")


def _read(store: OwnerOnlyStore, marker: str) -> _Content | None:
    data = store.read(marker)
    if data is None:
        return None
    try:
        return _Content.from_json(data)
    except OwnerRecordError:
        return None


def _named_processes(content: _Content) -> list[OwnerRecord]:
    if content.lease is None:
        return [content.owner]
    return [content.owner, content.lease.lender]


def _held_error(path: str, owner: OwnerRecord | None, state: OwnerState) -> MarkerHeldError:
    who = owner.describe() if owner is not None else "an owner whose record cannot be read"
    return MarkerHeldError(
        f"marker {path} is held by {who} (owner {state}); only a marker whose owner is "
        "provably gone can be broken",
        path=path,
        owner=owner,
        state=state,
    )


def _digest(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()
