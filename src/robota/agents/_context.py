"""One flow run: its signal, its limits ledger, its events, and how one agent step runs.

Every agent run of a flow passes :meth:`FlowRun.run_agent`: it runs in a conversation of its
own (``fresh_conversation``, S34: the agent's own history is neither sent nor changed) unless
the flow keeps history, waits for the agent's turn as any run does (S38: abort-aware), and —
when the flow has limits — holds the flow's single limits turn, so each run is given exactly
what the runs before it left (:meth:`~robota.UsageLimits.remaining`) and no two runs spend the
same remainder at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, final

from robota.agents._ledger import Ledger, RunCounter, tightest
from robota.agents._results import BranchResult, BranchStatus
from robota.core import (
    AbortError,
    AbortSignal,
    Agent,
    AgentEvent,
    EventService,
    OwnerRef,
    RunOptions,
    TraceContext,
    UsageLimits,
    is_abort,
)
from robota.core.orchestration import OrchestrationEventData, OrchestrationPrimitive

__all__ = ["FlowRun", "Scope", "StepFunction"]

StepFunction: TypeAlias = Callable[[str], Awaitable[str] | str]
"""A plain function step: the input text in, the output text out (sync or async)."""


def _emit(services: Sequence[EventService], event: AgentEvent) -> None:
    for service in services:
        try:
            if service.enabled:
                service.emit(event)
        except Exception:  # noqa: BLE001, S112 - observers never change execution (S33)
            continue


async def _acquire_unless_aborted(lock: asyncio.Lock, signal: AbortSignal) -> bool:
    """Take ``lock``, unless ``signal`` aborts first: whether it is held.

    Leaves no task behind, and never the lock held when it returns ``False`` or raises (the
    caller's task cancelled while waiting: the cancellation propagates unchanged).
    """
    if signal.aborted:
        return False
    if not lock.locked():
        await lock.acquire()  # free: taken at once
        return True
    acquire = asyncio.ensure_future(lock.acquire())
    aborted = asyncio.ensure_future(signal.wait())
    interrupted: BaseException | None = None
    try:
        await asyncio.wait((acquire, aborted), return_when=asyncio.FIRST_COMPLETED)
    except BaseException as exc:  # noqa: BLE001 - settled below, then raised unchanged
        interrupted = exc
    aborted.cancel()
    acquire.cancel()  # no effect once it took the lock
    await asyncio.wait((acquire, aborted))
    held = not acquire.cancelled() and acquire.exception() is None
    if held and (interrupted is not None or signal.aborted):
        lock.release()  # the abort came too: the next waiter has it
        held = False
    if interrupted is not None:
        raise interrupted
    return held


@final
class FlowRun:
    """The state one top-level run of a flow shares with every step below it."""

    __slots__ = (
        "_limit_turn",
        "keep_history",
        "ledger",
        "run_id",
        "services",
        "trace",
    )

    def __init__(
        self,
        *,
        limits: UsageLimits | None,
        services: Sequence[EventService],
        trace: TraceContext | None,
        keep_history: bool,
    ) -> None:
        self.run_id = f"flow_{uuid.uuid4().hex}"
        self.ledger = Ledger(limits)
        self.services = tuple(services)
        self.trace = trace
        self.keep_history = keep_history
        self._limit_turn = asyncio.Lock() if limits is not None else None

    def emit(
        self,
        name: str,
        path: tuple[OwnerRef, ...],
        primitive: OrchestrationPrimitive,
        **data: Any,
    ) -> None:
        """Emit one ``orchestration.*`` event (S32, S33) with its neutral data."""
        if not self.services:
            return
        payload: OrchestrationEventData = {"primitive": primitive}
        payload.update(data)  # type: ignore[typeddict-item]
        _emit(self.services, AgentEvent(name, path, payload))

    @contextlib.asynccontextmanager
    async def _turn(self, signal: AbortSignal) -> AsyncIterator[None]:
        """The flow's limits turn (with limits), else nothing to wait for.

        The wait ends when ``signal`` aborts (S38: a queued run fails at once, it does not wait
        for the runs before it): the body then runs without the turn and must check the signal.
        """
        lock = self._limit_turn
        if lock is None or not await _acquire_unless_aborted(lock, signal):
            yield
            return
        try:
            yield
        finally:
            lock.release()

    async def run_agent(self, agent: Agent, text: str, step_id: str, scope: Scope) -> BranchResult:
        """Run ``agent`` once on ``text`` as step ``step_id``; counted however it ends.

        Raises:
            Exception: what the agent's run raised (an abort while it waited for its turn
                excepted: that is an interrupted step).
        """
        counter = RunCounter()
        path = (*scope.path, OwnerRef("step", step_id))
        services = self.services

        def forward(event: AgentEvent) -> None:
            counter.observe(event)
            if services:  # S33: the agent's events, nested under the flow's step
                _emit(
                    services,
                    AgentEvent(event.name, (*path, *event.owner_path), event.data, event.timestamp),
                )

        async with self._turn(scope.signal):
            if scope.signal.aborted:
                return BranchResult(step_id, text, "", "interrupted")
            options: RunOptions = {
                "signal": scope.signal,
                "on_event": forward,
                "fresh_conversation": not self.keep_history,
            }
            if self.trace is not None:
                options["trace"] = self.trace  # S27: every run of the flow under one parent
            left = self.ledger.left()
            if left is not None:
                options["limits"] = tightest(agent.limits, left)
            try:
                result = await agent.run(text, **options)
            except AbortError as exc:
                if not is_abort(exc, scope.signal):
                    raise
                return BranchResult(step_id, text, "", "interrupted")
            except Exception as exc:
                self.ledger.raised(agent.name, exc, counter)
                raise
            self.ledger.returned(result, counter)
        status: BranchStatus = "complete" if result.status == "complete" else "interrupted"
        return BranchResult(step_id, text, result.text, status, run=result, usage=result.usage)


@final
@dataclass(frozen=True, slots=True)
class Scope:
    """Where a step runs: the run it belongs to, the signal that stops it, its owner path."""

    run: FlowRun
    signal: AbortSignal
    path: tuple[OwnerRef, ...]
    prefix: str = ""

    def nested(self, step_id: str) -> Scope:
        """The scope of a flow nested as step ``step_id`` (its steps' ids start ``step_id/``)."""
        return Scope(self.run, self.signal, (*self.path, OwnerRef("step", step_id)), f"{step_id}/")

    def under(self, signal: AbortSignal) -> Scope:
        """This scope under another signal (a fan-out's own, which a failing branch aborts)."""
        return Scope(self.run, signal, self.path, self.prefix)
