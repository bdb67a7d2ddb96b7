"""A session's pending turn (S40): resume it, awaited or streamed, and answer its requests.

A mixin of :class:`~robota.sessions.Session`. A turn is *pending* when a crash cut it short or
it suspended on outside requests (a journaled agent, ``Agent(journal=...)``): :meth:`resume`
continues it with :meth:`~robota.Agent.resume` under the session's lease — nothing settled runs
again — and saves it as :meth:`~robota.sessions.Session.run` saves a turn; :meth:`respond`
answers one of its requests. :meth:`~robota.sessions.Session.open` and ``run`` resume a pending
turn on their own (``_recover_if_free``, ``_resume_pending``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from robota.core import AbortSignal, Agent, OutsideRequest, RunEvent, RunResult, RunStream
from robota.sessions._errors import SessionBusyError, SessionStateError
from robota.sessions._lazy import SessionLog
from robota.sessions._pending import Resumer, resume_pending, suspended_error
from robota.sessions._records import SessionEntry
from robota.sessions._state import SessionState
from robota.sessions._store import SessionLease, SessionStore

__all__ = ["PendingTurnMixin", "keep_until_done"]

# A streamed turn's task is referenced here until it ends: a consumer that drops its stream
# (S23) must not let the task be collected before it has saved the turn and released the lease.
_STREAM_TASKS: set[asyncio.Task[RunResult[Any]]] = set()


def keep_until_done(task: asyncio.Task[RunResult[Any]]) -> None:
    """Hold a streamed turn's task until it ends (``_STREAM_TASKS``)."""
    _STREAM_TASKS.add(task)
    task.add_done_callback(_STREAM_TASKS.discard)


class PendingTurnMixin:
    """The pending-turn API of :class:`~robota.sessions.Session` (S40)."""

    if not TYPE_CHECKING:
        __slots__ = ()

    if TYPE_CHECKING:  # Session's own state and methods
        _agent: Agent
        _lock: asyncio.Lock
        _log: SessionLog
        _requests: tuple[OutsideRequest, ...]
        _store: SessionStore

        @property
        def id(self) -> str: ...
        @property
        def _state(self) -> SessionState: ...
        def _check_open(self) -> None: ...
        async def _acquire(self) -> SessionLease: ...
        async def _reload(self) -> SessionState: ...
        async def _append(self, lease: SessionLease, entry: SessionEntry) -> None: ...
        def _hook_fields(self) -> AbstractContextManager[None]: ...

    async def resume(self) -> RunResult[Any] | None:
        """Resume the turn a crash or a suspension left pending; ``None`` when there is none.

        :meth:`open` and :meth:`run` do this on their own; call it after answering a suspended
        turn's requests (:meth:`~robota.Agent.respond`).

        Raises:
            SessionBusyError: another writer holds the session.
            SessionStateError: see :meth:`open`.
        """
        self._check_open()
        async with self._lock, await self._acquire() as lease:
            with self._hook_fields():
                state = await self._reload()
                if state.pending is None:
                    return None
                return await self._resume_pending(lease, state)

    def resume_stream(self, *, signal: AbortSignal | None = None) -> RunStream[Any]:
        """:meth:`resume`, streamed: the pending turn's continuation, event by event.

        Iterate it for the events of what runs now (S40: nothing settled runs again), then
        ``await stream.result()`` — the turn's result, saved as :meth:`run` saves one; a turn
        still waiting for answers returns ``status="suspended"`` (not an error) and stays
        pending, its requests in :attr:`pending_requests`. Leaving early aborts it (S23).

        Raises (when the continuation starts):
            SessionStateError: no turn is pending (code ``no_pending_turn``), the session is
                closed, or the agent has no journal (code ``turn_pending``).
            SessionBusyError: another writer holds the session.
            Any error of :meth:`~robota.Agent.resume` (``ReconciliationRequired`` …).
        """
        self._check_open()

        return RunStream(self._stream_resume, signal, keep_until_done)

    async def _stream_resume(
        self, signal: AbortSignal, notify: Callable[[RunEvent], None]
    ) -> RunResult[Any]:
        self._check_open()

        async def streamed(execution_id: str) -> RunResult[Any]:
            async with self._agent.resume_stream(execution_id, signal=signal) as stream:
                async for event in stream:
                    notify(event)
                return await stream.result()

        async with self._lock, await self._acquire() as lease:
            with self._hook_fields():
                state = await self._reload()
                if state.pending is None:
                    raise SessionStateError(
                        f"session {self.id!r} has no pending turn to resume",
                        code="no_pending_turn",
                    )
                return await self._resume_pending(lease, state, streamed, strict=False)

    @property
    def pending_requests(self) -> tuple[OutsideRequest, ...]:
        """The outside requests a suspended pending turn waits for (S40); empty when none.

        As this handle last saw them: set when a turn, a resume or :meth:`open` suspended,
        cleared when the turn is saved. Answer each with :meth:`respond`, then resume.
        """
        return self._requests

    async def respond(self, request_id: str, response: object) -> None:
        """Answer one request of the session's suspended turn (S40); durable on return.

        Only a request of this session's own pending turn can be answered here — an id of
        another session's (or an answered one) is refused. It admits nothing by itself: the
        resumed call is judged again (permissions, hooks). Then :meth:`resume` (or
        :meth:`resume_stream`) continues the turn once every request is answered.

        Raises:
            SessionStateError: no turn is pending (code ``no_pending_turn``), or the session
                is closed.
            ExecutionStateError: the pending turn has no such unanswered request.
            ExecutionLockedError: the turn is running elsewhere.
            ConfigurationError: the response is not JSON-serialisable.
        """
        self._check_open()
        pending = (await self._reload()).pending
        if pending is None:
            raise SessionStateError(
                f"session {self.id!r} has no pending turn with requests to answer",
                code="no_pending_turn",
            )
        await self._agent.respond(pending.execution_id, request_id, response)

    async def _resume_pending(
        self,
        lease: SessionLease,
        state: SessionState,
        resume: Resumer | None = None,
        *,
        strict: bool = True,
    ) -> RunResult[Any]:
        pending = state.pending
        assert pending is not None  # the callers checked

        async def append(entry: SessionEntry) -> None:
            await self._append(lease, entry)

        result = await resume_pending(self._agent, state, append, resume)
        suspended = result.status == "suspended"
        self._requests = result.pending_requests if suspended else ()
        if suspended and strict:
            raise suspended_error(self.id, pending, result.pending_requests)
        return result

    async def _recover_if_free(self) -> None:
        try:
            lease = await self._store.acquire(self.id)
        except SessionBusyError:
            return  # the pending turn is running in its own process
        async with self._lock, lease:
            with self._hook_fields():
                state = await self._reload()
                if state.pending is not None:
                    # S40: a turn still waiting for answers stays pending (pending_requests).
                    await self._resume_pending(lease, state, strict=False)
