"""``Notification`` hooks: told when an ask waits for a person, never waited for (S22).

The posture table (:data:`~robota.core.hooks.HOOK_EVENTS`) marks ``Notification`` as neither
awaited nor inspected: the hooks start just before the approver is awaited and run beside it, so
a slow notifier never delays the answer, and whatever they return is never read.

Lifecycle. Each notification is a task that :class:`Notifications` tracks until it ends:

* it ends by itself — a hook is bounded by its timeout, and it receives the run's abort signal,
  so aborting the run stops it;
* a failure is logged (``robota.hooks``), never raised into the ask or the run;
* :meth:`Notifications.aclose` cancels those still running (a command hook's process group is
  killed) and waits until each has unwound. :meth:`robota.PermissionGate.aclose` calls it, and an
  :class:`~robota.Agent` calls that at its own ``aclose()`` for its ``tool_gate``, so no task
  outlives the agent that asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final, final

from robota.core._abort import AbortSignal
from robota.core._logging import get_logger
from robota.core.hooks._runner import HookRunner

__all__ = ["NOTIFICATION_EVENT", "PERMISSION_PROMPT", "Notifications"]

NOTIFICATION_EVENT: Final = "Notification"
PERMISSION_PROMPT: Final = "permission_prompt"
"""The notification type of an ask that waits for a person; a ``Notification`` matcher names
notification types, as in the Claude Code settings format (``"matcher": "permission_prompt"``)."""

_log = get_logger("robota.hooks")


@final
class Notifications:
    """The ``Notification`` hook tasks of one gate, tracked from start to end."""

    __slots__ = ("_tasks",)

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> int:
        """How many notification tasks have not ended yet."""
        return len(self._tasks)

    def fire(
        self,
        runner: HookRunner,
        payload: Mapping[str, Any],
        *,
        signal: AbortSignal | None,
        traceparent: str | None,
    ) -> None:
        """Start ``runner``'s Notification hooks in the background (nothing when none match).

        Their matchers are read against ``payload["notification_type"]``.
        """
        kind = payload.get("notification_type")
        subject = kind if isinstance(kind, str) else None
        if not runner.config.hooks_for(NOTIFICATION_EVENT, subject):
            return
        task = asyncio.get_running_loop().create_task(
            self._run(runner, payload, subject, signal, traceparent),
            name="robota-notification-hook",
        )
        self._tasks.add(task)
        task.add_done_callback(self._ended)

    async def _run(
        self,
        runner: HookRunner,
        payload: Mapping[str, Any],
        subject: str | None,
        signal: AbortSignal | None,
        traceparent: str | None,
    ) -> None:
        # S22: the outcome is never inspected (a failed hook is already logged as advisory).
        await runner.run(
            NOTIFICATION_EVENT,
            payload,
            tool_name=subject,
            signal=signal,
            traceparent=traceparent,
        )

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            _log.warning(
                "notification hook failed", hook_event=NOTIFICATION_EVENT, error=repr(error)
            )

    async def aclose(self) -> None:
        """Cancel the notification tasks still running and wait until each has unwound.

        A cancellation of the caller is raised after every task was waited for, never
        swallowed. Later :meth:`fire` calls start new tasks: closing ends work, not the owner.
        """
        cancelled: asyncio.CancelledError | None = None
        while self._tasks:
            pending = list(self._tasks)
            for task in pending:
                task.cancel()
            try:
                await asyncio.wait(pending)
            except asyncio.CancelledError as exc:
                cancelled = exc  # keep waiting: a task left running would leak its process
            for task in pending:
                self._tasks.discard(task)
        if cancelled is not None:
            raise cancelled
