"""The run slot (S38): one FIFO slot per agent instance.

Runs on one instance take turns in arrival order, so history is strictly sequential without
external locking. The slot is not tied to an event loop while idle, so an agent driven by
``run_sync`` (a fresh loop each call) and later by ``await run()`` keeps working.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import final

__all__ = ["RunSlot"]


@final
class RunSlot:
    """A FIFO mutex whose hand-over goes to the longest waiter."""

    __slots__ = ("_busy", "_waiters")

    def __init__(self) -> None:
        self._busy = False
        # Made on first contention: most agents never queue a run, and an empty deque is
        # most of a slot's memory (issue 16: retained bytes per finished conversation).
        self._waiters: deque[asyncio.Future[None]] | None = None

    async def acquire(self) -> None:
        """Wait for the slot in arrival order. Cancelling the wait leaves the queue intact."""
        if not self._busy and not self._waiters:
            self._busy = True
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = deque()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                # The slot was handed to us just as we were cancelled: pass it on.
                self.release()
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    @property
    def idle(self) -> bool:
        """Nobody holds the slot or waits for it."""
        return not self._busy and not self._waiters

    def release(self) -> None:
        """Hand the slot to the next waiter, or free it."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # ownership passes directly: `_busy` stays True
                return
        self._busy = False
