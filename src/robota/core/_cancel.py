"""Turning an abort into the cancellation of one await (S23).

:class:`AbortGuard` lets a coroutine await something — a provider stream's next chunk, a queue
slot — so that an abort of the run's signal ends *that* await promptly, while every other await
of the same task (a plugin hook, a stream consumer's own code) is left alone. It is the
``asyncio.timeout`` technique keyed to a signal instead of a deadline: the abort cancels the task
only while it is suspended inside :meth:`AbortGuard.call`, and the resulting ``CancelledError`` is
turned into an :class:`~robota.AbortError` there. A cancellation that came from anywhere else
(someone cancelled the task) is never mistaken for an abort and propagates unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TypeVar, final

from robota.core._abort import AbortSignal, abort_error_from_reason

__all__ = ["AbortGuard"]

T = TypeVar("T")


@final
class AbortGuard:
    """Cancels the current task at guarded awaits when ``signal`` aborts.

    Use it as a context manager inside one task, and route the awaits that the abort must
    interrupt through :meth:`call`::

        with AbortGuard(signal) as guard:
            chunk = await guard.call(stream.__anext__)  # raises AbortError on abort

    Aborts may come from any thread.
    """

    __slots__ = ("_armed", "_baseline", "_fired", "_loop", "_remove", "_signal", "_task")

    def __init__(self, signal: AbortSignal) -> None:
        self._signal = signal
        self._task: asyncio.Task[object] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._armed = False
        self._fired = False
        self._baseline = 0
        self._remove: Callable[[], None] | None = None

    def __enter__(self) -> AbortGuard:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("AbortGuard must be used inside an asyncio task")
        self._task = task
        self._loop = task.get_loop()
        self._remove = self._signal.add_listener(self._on_abort)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._remove is not None:
            self._remove()
            self._remove = None

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Await ``fn()``; if the signal aborts meanwhile, raise :class:`~robota.AbortError`.

        Raises the abort without calling ``fn`` when the signal has already aborted.
        """
        if self._signal.aborted:
            raise abort_error_from_reason(self._signal.reason)
        task = self._task
        assert task is not None, "AbortGuard.call outside its `with` block"
        self._armed = True
        try:
            return await fn()
        except asyncio.CancelledError:
            if self._fired:
                self._fired = False
                # Only our own cancel request is pending: this cancellation is the abort.
                if task.uncancel() <= self._baseline:
                    raise abort_error_from_reason(self._signal.reason) from None
            raise
        finally:
            self._armed = False
            if self._fired:
                # The awaited code swallowed our cancellation and finished; withdraw the request
                # so it cannot surface at some unrelated await later.
                self._fired = False
                task.uncancel()

    def _on_abort(self, reason: object) -> None:
        loop = self._loop
        if loop is None:
            return
        try:
            same_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            same_loop = False
        if same_loop:
            # On the guard's own loop nothing else is asked of it: an event loop that implements
            # only what tasks need (Temporal's workflow loop has no is_closed) still delivers.
            loop.call_soon(self._deliver)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._deliver)

    def _deliver(self) -> None:
        # Runs on the loop while the task is suspended: `_armed` says whether that suspension is
        # inside `call`. Outside it the abort is noticed at the next `call` (it checks first).
        task = self._task
        if self._armed and not self._fired and task is not None and not task.done():
            self._baseline = task.cancelling()
            self._fired = True
            task.cancel()
