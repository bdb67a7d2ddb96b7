"""Awaiting host work that must end on an abort or a deadline (S22, S23, S06).

A hook process, a hook request and an egress exchange each run as a task that this module awaits
until it completes, the run's signal aborts, or a deadline passes — whichever comes first. Work
that did not complete is stopped by the caller's own means (killing a process group, cancelling a
request so its connection is released) before the answer is returned, and also when the awaiting
task is itself cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias

from robota.core import AbortSignal

__all__ = ["Ending", "cancel_and_wait", "settle"]

Ending: TypeAlias = Literal["done", "aborted", "timeout"]


async def settle(
    work: asyncio.Future[Any],
    *,
    signal: AbortSignal | None,
    within: float | None,
    stop: Callable[[], Awaitable[None]],
) -> Ending:
    """Wait for ``work`` (at most ``within`` seconds); on an abort or the deadline call ``stop``."""
    waiters: set[asyncio.Future[Any]] = {work}
    aborted: asyncio.Future[object] | None = None
    if signal is not None:
        aborted = asyncio.ensure_future(signal.wait())
        waiters.add(aborted)
    try:
        done, _ = await asyncio.wait(waiters, timeout=within, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        await stop()
        raise
    finally:
        if aborted is not None and not aborted.done():
            aborted.cancel()
    if work in done:
        return "done"
    await stop()
    return "aborted" if aborted is not None and aborted in done else "timeout"


async def cancel_and_wait(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait until it has unwound (its ``finally`` blocks have run)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
