"""A journal wrapper that breaks a run at a chosen write (importable: ``tests`` is on the path).

:class:`HookedJournal` wraps any :class:`robota.ExecutionJournal` and awaits a hook before and
after every append of its leases; :func:`fail_at` and :func:`crash_at` build the hooks the
durable-execution tests need most — a rejected write, or the process dying right before or right
after a write. (``tests/journal/crash_worker.py`` kills a real process instead and keeps its own
wrapper: it runs as a script, outside this path.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import robota

__all__ = ["Crash", "Hook", "HookedJournal", "crash_at", "fail_at", "records_of"]

R = TypeVar("R")

Hook = Callable[[robota.JournalRecord], Awaitable[None]]


class Crash(BaseException):
    """The process died at a journal write (nothing in the run may catch it)."""


class HookedJournal(robota.ExecutionJournal):
    """Wraps ``inner``; awaits ``before`` and ``after`` around every append of its leases.

    ``before`` may hold the write (a slow disk) or raise (a rejected write, or a crash before it:
    nothing is stored); ``after`` sees the record once it is stored, and raising there is a crash
    right after a durable write. Every append attempt's kind is logged in ``attempts``, so a test
    can tell a retried write from a single one and see that nothing followed a failed one.
    """

    def __init__(
        self,
        inner: robota.ExecutionJournal,
        *,
        before: Hook | None = None,
        after: Hook | None = None,
    ) -> None:
        self.inner = inner
        self.before = before
        self.after = after
        self.attempts: list[str] = []

    async def acquire(self, execution_id: str) -> robota.JournalLease:
        return _HookedLease(self, await self.inner.acquire(execution_id))

    async def read(self, execution_id: str) -> tuple[robota.JournalRecord, ...]:
        return await self.inner.read(execution_id)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _HookedLease(robota.JournalLease):
    def __init__(self, journal: HookedJournal, inner: robota.JournalLease) -> None:
        self._journal = journal
        self._inner = inner

    @property
    def execution_id(self) -> str:
        return self._inner.execution_id

    async def append(self, record: robota.JournalRecord) -> None:
        journal = self._journal
        journal.attempts.append(record.kind)
        if journal.before is not None:
            await journal.before(record)
        await self._inner.append(record)
        if journal.after is not None:
            await journal.after(record)

    async def release(self) -> None:
        await self._inner.release()


def fail_at(
    kind: str, *, nth: int = 1, error: BaseException | None = None, tool: str | None = None
) -> Hook:
    """A hook raising ``error`` (``OSError("disk full")`` by default) at the ``nth`` ``kind``.

    It fires once, at the ``nth`` record of ``kind`` it is shown; ``tool`` narrows the count to
    effect records of that tool. As ``before`` it rejects that write; as ``after`` it fails once
    the record is stored.
    """
    cause = error if error is not None else OSError("disk full")
    seen = 0

    async def hook(record: robota.JournalRecord) -> None:
        nonlocal seen
        if record.kind != kind:
            return
        if tool is not None and getattr(record, "tool_name", None) != tool:
            return
        seen += 1
        if seen == nth:
            raise cause

    return hook


def crash_at(kind: str, *, nth: int = 1) -> Hook:
    """A hook raising :class:`Crash` at the ``nth`` record of ``kind``: the process dies there.

    As ``before`` the write never happened; as ``after`` the record was durable before the crash.
    """
    return fail_at(kind, nth=nth, error=Crash(f"crashed at {kind}"))


def records_of(records: Iterable[object], kind: type[R]) -> list[R]:
    """The items of ``records`` that are instances of ``kind``, in order."""
    return [r for r in records if isinstance(r, kind)]
