"""The errors of ``robota.host``, in one place.

::

    robota.StorageError
    └── StoreError                          an owner-only store operation failed (S07)
        ├── InsecureModeError               an existing directory or file is open to others (S07)
        ├── ModeNotEnforcedError            the filesystem did not keep the requested mode (S07)
        ├── EntryExistsError (FileExistsError)  create-only lost to an existing entry (S07)
        └── UnconfirmedWriteError           the new content is in place but not confirmed (S07)
    robota.RobotaError
    ├── StagingStateError (RuntimeError)    a staged replace used out of order (S07)
    ├── OwnerRecordError (ValueError)       an owner record cannot be read (S08)
    ├── MarkerError                         a process-marker operation failed (S10)
    │   ├── MarkerHeldError                 another owner holds the marker
    │   ├── MarkerLostError                 this handle lost its marker; fails closed
    │   ├── LeaseRefusedError               a take-over presented the wrong nonce
    │   └── LockTimeoutError                the operation lock was not acquired in time
    └── ResponseTooLargeError               a bounded exchange exceeded its size (S06)
    robota.ConfigurationError
    └── MediaFetchError                     a URL part an adapter fetches could not be (S06)
"""

from __future__ import annotations

from typing import Any

from robota.core import ConfigurationError, RobotaError, StorageError

# The owner record is the lower home of the types these errors name (and of OwnerRecordError,
# defined beside the record it decodes), so nothing here imports back up (issue 32).
from robota.host.store._owner import OwnerRecord, OwnerRecordError, OwnerState

__all__ = [
    "EntryExistsError",
    "InsecureModeError",
    "LeaseRefusedError",
    "LockTimeoutError",
    "MarkerError",
    "MarkerHeldError",
    "MarkerLostError",
    "MediaFetchError",
    "ModeNotEnforcedError",
    "OwnerRecordError",
    "ResponseTooLargeError",
    "StagingStateError",
    "StoreError",
    "UnconfirmedWriteError",
]


class StoreError(StorageError):
    """An owner-only store operation failed (S07).

    Unless a subclass says otherwise, nothing new is in place and the previous content (if any)
    is untouched.

    Attributes:
        path: The path the operation was about.
    """

    default_code = "store"

    def __init__(self, message: str, *, path: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.path = path


class InsecureModeError(StoreError):
    """An existing directory or file is open to someone other than its owner, or not ours (S07).

    Its mode lets another account read, write or enter it, or another account owns it: a store's
    directory, or a :class:`~robota.host.SQLiteJournal`'s database, side file or lock directory.

    The store refuses to adopt it rather than silently keep the wider mode. Check that nothing
    was planted in it, then open the store (or journal) with ``repair=True`` to tighten it.

    Attributes:
        mode: The permission bits found (``0o777`` …).
        uid: The owning account found.
    """

    default_code = "store_insecure_mode"

    def __init__(self, message: str, *, path: str, mode: int, uid: int, **kwargs: Any) -> None:
        super().__init__(message, path=path, **kwargs)
        self.mode = mode
        self.uid = uid


class ModeNotEnforcedError(StoreError):
    """An entry the store just created does not carry the mode it was created with (S07).

    The filesystem accepted the mode and ignored it (some network and FAT-like filesystems do);
    owner-only cannot be guaranteed there, so the entry is removed again and nothing is written.

    Attributes:
        mode: The permission bits the new entry actually has.
    """

    default_code = "store_mode_not_enforced"

    def __init__(self, message: str, *, path: str, mode: int, **kwargs: Any) -> None:
        super().__init__(message, path=path, **kwargs)
        self.mode = mode


class EntryExistsError(StoreError, FileExistsError):
    """A create-only write lost: something was already at the path (S07).

    The existing entry is untouched. Also a :class:`FileExistsError`, so code written against
    the builtin keeps working.
    """

    default_code = "store_entry_exists"
    default_recoverable = True


class UnconfirmedWriteError(StoreError):
    """The new content is in place, but a step after it failed (S07).

    Never report this as "not written": the old content is gone. What is unconfirmed is the
    step that failed (usually the directory flush, so durability across a crash is not proven).

    Attributes:
        in_place: The store names whose new content is in place.
        not_written: For a staged replace, the names that were not renamed (their old content is
            untouched and their staged files are removed).
    """

    default_code = "store_unconfirmed"

    def __init__(
        self,
        message: str,
        *,
        path: str,
        in_place: tuple[str, ...],
        not_written: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(message, path=path, **kwargs)
        self.in_place = in_place
        self.not_written = not_written


class StagingStateError(RobotaError, RuntimeError):
    """A :class:`StagedReplace` was used after it was committed or discarded: stage again."""

    default_code = "store_staging_state"
    default_category = "user"


class MarkerError(RobotaError):
    """A process-marker operation failed (S10).

    Attributes:
        path: The marker's path.
    """

    default_code = "marker"

    def __init__(self, message: str, *, path: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.path = path


class MarkerHeldError(MarkerError):
    """Another owner holds the marker, and it is not provably gone (S10).

    Attributes:
        owner: The holder's record, or ``None`` when the marker cannot be read.
        state: The holder's state (``"alive"`` or ``"unknown"``; ``"gone"`` only when a lent
            marker's lender is still alive or unknown).
    """

    default_code = "marker_held"
    default_recoverable = True

    def __init__(
        self,
        message: str,
        *,
        path: str,
        owner: OwnerRecord | None,
        state: OwnerState,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, path=path, **kwargs)
        self.owner = owner
        self.state = state


class MarkerLostError(MarkerError):
    """This handle no longer holds its marker: it was broken, released, lent or taken over.

    Raised before a guarded mutation runs, so a writer that lost its marker fails closed (S10).
    """

    default_code = "marker_lost"


class LeaseRefusedError(MarkerError):
    """A take-over presented a nonce that does not match the marker's lease (or none is lent)."""

    default_code = "marker_lease_refused"
    default_category = "user"


class LockTimeoutError(MarkerError):
    """The operation lock was not acquired within the timeout.

    The lock is never stolen because time passed (S10): its holder is alive (a dead holder's
    lock is released by the kernel). Find what holds it, or wait longer.
    """

    default_code = "marker_lock_timeout"
    default_recoverable = True


class ResponseTooLargeError(RobotaError):
    """A bounded exchange received more than its ``max_bytes``."""

    default_code = "response_too_large"
    default_category = "provider"


class MediaFetchError(ConfigurationError):
    """A URL part an adapter had to fetch itself could not be fetched or sent (S06, issue 26).

    Raised before the vendor is called. The message names the part (its kind and URL), where it
    sits in the request, the model and the reason; the attributes say the same for a program.

    Attributes:
        url: The part's URL.
        part_kind: ``"image"``, ``"document"`` or ``"audio"``.
        message_index: The message's position in the request.
        part_index: The part's position in that message's parts.
        model: The model the request was for.
        reason: ``"egress_refused"`` (the egress policy refused a hop), ``"http_status"`` (not
            a 2xx answer), ``"too_large"``, ``"media_type"`` (served as a type the part or the
            vendor does not take) or ``"network"`` (no answer).
    """

    default_code = "media_fetch_failed"

    def __init__(
        self,
        message: str,
        *,
        url: str,
        part_kind: str,
        message_index: int,
        part_index: int,
        model: str,
        reason: str,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, recoverable=reason in ("network", "http_status"), **kwargs)
        self.url = url
        self.part_kind = part_kind
        self.message_index = message_index
        self.part_index = part_index
        self.model = model
        self.reason = reason
