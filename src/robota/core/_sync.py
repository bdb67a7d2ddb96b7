"""Driving an agent from synchronous code: one event loop per agent, kept between calls (S03).

``Agent.run_sync`` and ``Agent.close`` run their coroutine on an event loop the agent keeps, not
on a fresh one per call: a provider the agent built holds an HTTP connection pool bound to the
loop it first ran on, and a second call on a new loop would find that loop closed. The loop is
closed by ``Agent.close()``, or when the agent is garbage-collected (or the interpreter exits)
without it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Coroutine
from typing import Any, TypeVar, final

from robota.core._errors import RobotaError

__all__ = ["SyncDriver", "refuse_inside_event_loop"]

T = TypeVar("T")


def refuse_inside_event_loop(call: str, fix: str) -> None:
    """Raise a :class:`~robota.RobotaError` naming ``fix`` when an event loop runs in this thread.

    A synchronous call cannot run a coroutine to completion from inside a running loop (it would
    block the loop it needs); ``fix`` is the awaitable spelling (``await agent.run(...)``).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RobotaError(
        f"{call} cannot be called from a running event loop; use `{fix}`",
        code="sync_in_event_loop",
        category="user",
    )


def _close_runner(runner: asyncio.Runner) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        runner.close()  # cancels what is left, shuts down async generators, closes the loop
        return
    # Collected while another loop runs in this thread: the runner cannot drive its own loop
    # any more (that would nest loops), but its loop can still be closed.
    runner.get_loop().close()


@final
class SyncDriver:
    """Runs coroutines to completion on one event loop, made on first use and kept until closed."""

    __slots__ = ("__weakref__", "_finalizer", "_runner")

    def __init__(self) -> None:
        self._runner: asyncio.Runner | None = None
        self._finalizer: weakref.finalize[[asyncio.Runner], SyncDriver] | None = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on this driver's loop and return its result.

        Like :func:`asyncio.run`, Ctrl-C in the main thread cancels the coroutine's task (so a run
        settles as interrupted) and then raises :class:`KeyboardInterrupt`.
        """
        if self._runner is None:
            self._runner = asyncio.Runner()
            self._finalizer = weakref.finalize(self, _close_runner, self._runner)
        return self._runner.run(coroutine)

    def close(self) -> None:
        """Close the loop (idempotent); a later :meth:`run` makes a new one."""
        finalizer, self._finalizer, self._runner = self._finalizer, None, None
        if finalizer is not None:
            finalizer()
