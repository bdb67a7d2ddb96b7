"""The numbered, bounded event buffer of one served run (resumable streams).

A run's events are encoded once, for the protocol the run was started with, and kept here in
order, each with its number (the SSE ``id:``). Every reader — the response that started the
run, or a client reconnecting with ``Last-Event-ID`` — reads from the buffer, so a dropped
connection never loses an event still held. The buffer keeps at most ``limit`` events: a reader
that fell further behind continues from the oldest one kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import final

__all__ = ["RunBuffer"]


@final
class RunBuffer:
    """The encoded events of one run, numbered from 0, at most ``limit`` kept.

    Writers call :meth:`push` (from the event loop's thread) and :meth:`close` once; readers
    iterate :meth:`read`, which ends after the last event of a closed buffer.
    """

    __slots__ = ("_changed", "_closed", "_dropped", "_events", "_limit")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._events: list[str] = []
        self._dropped = 0  # the number of the first event still held
        self._closed = False
        self._changed = asyncio.Event()

    @property
    def closed(self) -> bool:
        """Whether the run has written its last event."""
        return self._closed

    @property
    def next_number(self) -> int:
        """The number the next event will get (the count of events pushed)."""
        return self._dropped + len(self._events)

    def push(self, data: str) -> None:
        """Append one encoded event (ignored once closed); the oldest go past ``limit``."""
        if self._closed:
            return
        self._events.append(data)
        if len(self._events) >= 2 * self._limit:
            # Trim in batches, so a push costs O(1) amortised.
            excess = len(self._events) - self._limit
            del self._events[:excess]
            self._dropped += excess
        self._wake()

    def close(self) -> None:
        """Mark the end of the run's events; readers finish after the last one. Idempotent."""
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def read(self, after: int = -1) -> AsyncIterator[tuple[int, str]]:
        """Yield ``(number, data)`` for every event numbered above ``after``, as they come.

        A reader further behind than the buffer holds continues from the oldest event kept.
        """
        async for batch in self.read_batches(after):
            for item in batch:
                yield item

    async def read_batches(
        self, after: int = -1, *, idle: float | None = None
    ) -> AsyncIterator[list[tuple[int, str]]]:
        """As :meth:`read`, every event already there at once (one write per batch).

        With ``idle``, an empty batch comes after each ``idle`` seconds without an event (the
        caller writes a keep-alive then).
        """
        position = after + 1
        while True:
            changed = self._changed
            oldest = max(self._dropped, self.next_number - self._limit)
            position = max(position, oldest)
            end = self.next_number
            if position < end:
                start = position - self._dropped
                batch = self._events[start : end - self._dropped]
                yield list(enumerate(batch, position))
                position = end
                continue
            if self._closed:
                return
            try:
                async with asyncio.timeout(idle):  # a timer, not a task per wait
                    await changed.wait()
            except TimeoutError:
                yield []
