"""An in-memory execution journal (S40): for tests and examples, lost with the process.

It keeps the port's whole contract — one writer per execution, records in append order, a
released lease that cannot write — so code tested against it behaves the same on a durable one.
Records are stored encoded, so a record that could not be saved durably fails here too.
"""

from __future__ import annotations

from typing import final

from robota.core._errors import ConfigurationError, StorageError
from robota.core.execution._journal import (
    ExecutionJournal,
    ExecutionLockedError,
    JournalLease,
    JournalRecord,
    decode_journal_record,
    encode_journal_record,
)

__all__ = ["InMemoryJournal"]


@final
class InMemoryJournal(ExecutionJournal):
    """An :class:`~robota.ExecutionJournal` held in this process's memory.

    Durable only as long as the object lives; share one instance between agents to hand an
    execution from one to another. Not for production recovery.
    """

    __slots__ = ("_closed", "_held", "_logs")

    def __init__(self) -> None:
        self._logs: dict[str, list[str]] = {}
        self._held: set[str] = set()
        self._closed = False

    async def acquire(self, execution_id: str) -> JournalLease:
        """Take the writer's lease; :class:`~robota.ExecutionLockedError` if it is held."""
        self._check(execution_id)
        if execution_id in self._held:
            raise ExecutionLockedError(
                f"execution {execution_id!r} is held by another writer",
                execution_id=execution_id,
            )
        self._held.add(execution_id)
        return _MemoryLease(self, execution_id)

    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        """The execution's records in append order (``()`` when unknown)."""
        self._check(execution_id)
        return tuple(decode_journal_record(text) for text in self._logs.get(execution_id, ()))

    async def aclose(self) -> None:
        """Close the journal; later calls raise :class:`~robota.StorageError`."""
        self._closed = True

    def _check(self, execution_id: object) -> None:
        if self._closed:
            raise StorageError("the journal is closed")
        if not isinstance(execution_id, str) or not execution_id:
            raise ConfigurationError(
                f"an execution id must be a non-empty string, got {execution_id!r}"
            )

    def _append(self, execution_id: str, record: JournalRecord) -> None:
        if self._closed:
            raise StorageError("the journal is closed")
        self._logs.setdefault(execution_id, []).append(encode_journal_record(record))

    def _release(self, execution_id: str) -> None:
        self._held.discard(execution_id)

    def __repr__(self) -> str:
        return f"<InMemoryJournal {len(self._logs)} executions>"


@final
class _MemoryLease(JournalLease):
    __slots__ = ("_id", "_journal", "_released")

    def __init__(self, journal: InMemoryJournal, execution_id: str) -> None:
        self._journal = journal
        self._id = execution_id
        self._released = False

    @property
    def execution_id(self) -> str:
        return self._id

    async def append(self, record: JournalRecord) -> None:
        if self._released:
            raise StorageError(f"the lease on execution {self._id!r} was released")
        self._journal._append(self._id, record)

    async def release(self) -> None:
        if not self._released:
            self._released = True
            self._journal._release(self._id)
