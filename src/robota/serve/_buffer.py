"""The numbered, bounded event buffer of one served run (resumable streams).

A run's events are encoded once, for the protocol the run was started with, and kept here in
order, each with its number (the SSE ``id:``). Every reader — the response that started the
run, or a client reconnecting with ``Last-Event-ID`` — reads from the buffer, so a dropped
connection never loses an event still held. The buffer keeps at most ``limit`` events: a reader
that fell further behind continues from the oldest one kept.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import final

__all__ = ["RunBuffer"]


@final
class RunBuffer:
    """The encoded events of one run, numbered from 0, at most ``limit`` kept.

    Writers call :meth:`push` (from the event loop's thread) and :meth:`close` once; readers
    iterate :meth:`read`, which ends after the last event of a closed buffer.
    """

    __slots__ = ("_changed", "_closed", "_events", "_next")

    def __init__(self, limit: int) -> None:
        self._events: deque[tuple[int, str]] = deque(maxlen=limit)
        self._next = 0
        self._closed = False
        self._changed = asyncio.Event()

    @property
    def closed(self) -> bool:
        """Whether the run has written its last event."""
        return self._closed

    def push(self, data: str) -> None:
        """Append one encoded event (ignored once closed)."""
        if self._closed:
            return
        self._events.append((self._next, data))
        self._next += 1
        self._wake()

    def close(self) -> None:
        """Mark the end of the run's events; readers finish after the last one. Idempotent."""
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def read(self, after: int = -1) -> AsyncIterator[tuple[int, str]]:
        """Yield ``(number, data)`` for every event numbered above ``after``, as they come."""
        position = after + 1
        while True:
            changed = self._changed
            for number, data in tuple(self._events):
                if number >= position:
                    yield number, data
                    position = number + 1
            if self._closed and position >= self._next:
                return
            if position < self._next:
                continue  # events arrived while the reader was suspended in a yield
            await changed.wait()
