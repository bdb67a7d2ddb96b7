"""The tool execution service: one path from a model's tool call to its recorded result.

Per call, in order (S41, S43): resolve the name (an unregistered name is a labelled skip, never
executed nor aliased, S37) → parse the arguments → validate them (S16; a broken *schema* is refused
as a tool-definition error the model is told not to retry, never as invalid arguments) →
admission by the :class:`ToolGate` (the seam where permissions and hooks plug in, S21/S22) → the
body, with the run's signal and its own minted id (S23, S36) → the result. Pre-execution refusals
are reported as ``tool.refused``/``tool.skipped``, never as a tool span (S33).

The calls of one response run concurrently up to a limit; their results are returned in call
order whatever order they finish in. One call runs inline — no task is created for it.

On an abort (S38): bodies already running are left to finish (they observe the signal) and their
results are kept; calls that had not started get an explicit "interrupted by user" result. When
the controller then abandons (:meth:`~robota.AbortController.abandon`, the hard stage), the run
stops waiting: each running body is cancelled where it awaits and its call is recorded as
interrupted while running (a journaled run keeps waiting: its journal records real settlements).
If the awaiting task itself is cancelled, every call still gets a result before the cancellation
propagates, so history never holds a call without its answer.

When one call of a batch ends in an execution-control outcome (a persistence failure, a required
reconciliation, a saved wait — S39, S40) or an unexpected error, no further body starts; the bodies
already running finish, and only then does the outcome propagate (a persistence failure first, a
wait last). With an :class:`EffectJournal` (a journaled run), each body's id is the logical call's
stable id, its start is recorded with the arguments it actually runs with before it starts, and its
settlement after it returned (S40).

The per-call path is in :mod:`robota.core.tools._call`, the shared types (invocation, admission,
gate, the effect journal, a batch's scope) in :mod:`robota.core.tools._invocation`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, final

from robota.core._abort import AbortSignal
from robota.core._emit import EventEmitter
from robota.core._errors import ConfigurationError
from robota.core._messages import ToolCall, now
from robota.core._run_events import RunEvent
from robota.core._texts import ModelTexts
from robota.core._tracing import RunTrace
from robota.core.providers._contract import ToolSpec
from robota.core.tools._call import ToolCallPath
from robota.core.tools._call import _failure_text as _failure_text  # noqa: PLC0414 - robota.temporal
from robota.core.tools._deferral import ToolCatalog
from robota.core.tools._invocation import (
    _DEFAULT_TEXTS,
    Admission,
    EffectJournal,
    ToolGate,
    ToolInvocation,
    _Batch,
    _Scope,
)
from robota.core.tools._outcomes import ToolCallOutcome
from robota.core.tools._registry import ToolRegistry
from robota.core.tools._tool import Approver, Tool

__all__ = [
    "Admission",
    "EffectJournal",
    "ToolCallOutcome",
    "ToolExecutionService",
    "ToolGate",
    "ToolInvocation",
]


@final
class ToolExecutionService(ToolCallPath):
    """Runs tool calls for one agent.

    Args:
        registry: The agent's tools.
        concurrency: Most bodies of one response running at once (>= 1).
        gate: The admission seam; ``None`` admits every valid call.
        catalog: Tool deferral over ``registry`` (S19); ``None``: every tool is offered.
        settle: Awaited after every batch, so tool-set changes the batch caused (a tool source's
            refresh) are in place for the next round.
        texts: The tool results core writes itself (unavailable, interrupted …; S35).
    """

    __slots__ = ("_concurrency", "_offered", "catalog", "gate", "registry", "settle", "texts")

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        concurrency: int = 8,
        gate: ToolGate | None = None,
        catalog: ToolCatalog | None = None,
        settle: Callable[[], Awaitable[None]] | None = None,
        texts: ModelTexts = _DEFAULT_TEXTS,
    ) -> None:
        limit: object = concurrency  # untyped callers can pass anything
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigurationError(
                f"tool_concurrency must be an integer >= 1, got {concurrency!r}"
            )
        self.registry = registry
        self._concurrency = concurrency
        self.gate = gate
        self.catalog = catalog
        self.settle = settle
        self.texts = texts
        if catalog is not None:
            catalog.withholder = self
        # (specs, gate, offered): the gate too, since a sub-agent's run swaps it (issue 29).
        self._offered: tuple[tuple[ToolSpec, ...] | None, object, tuple[ToolSpec, ...]] = (
            None,
            None,
            (),
        )

    def _withheld(self, tool: Tool) -> bool:
        decide = getattr(self.gate, "offered", None)
        return decide is not None and not decide(tool)

    def resolve(self, name: str) -> Tool | None:
        """The tool a model's call named ``name`` runs (``tool_search`` while deferral engages)."""
        if self.catalog is not None:
            return self.catalog.resolve(name)
        return self.registry.get(name)

    def offered_specs(
        self, window: Callable[[], int | None] | None = None, ceiling: ToolGate | None = None
    ) -> tuple[ToolSpec, ...]:
        """The tools offered to the model, read fresh every round (S19).

        The registry's — or with deferral engaged, the resident ones, ``tool_search`` and the
        loaded ones — minus any the gate withholds. S12: a tool denied outright is not offered
        (rather than offered and refused every call). ``window`` is the run's model's context
        window, which ``tool_deferral="auto"`` may weigh. ``ceiling``: a sub-agent run's gate,
        in place of the service's (issue 29).
        """
        catalog = self.catalog
        specs = catalog.visible(window) if catalog is not None else self.registry.specs()
        cached_for, cached_gate, offered = self._offered
        gate = ceiling if ceiling is not None else self.gate
        if cached_for is specs and cached_gate is gate:
            return offered
        decide = getattr(gate, "offered", None)
        if decide is None:
            return specs  # nothing filtered: nothing to cache (issue 27)
        else:
            kept: list[ToolSpec] = []
            for spec in specs:
                tool = self.resolve(spec.name)
                if tool is not None and decide(tool):
                    kept.append(spec)
            offered = tuple(kept)
        self._offered = (specs, gate, offered)
        return offered

    async def run_batch(
        self,
        calls: Sequence[ToolCall],
        outcomes: list[ToolCallOutcome | None],
        *,
        signal: AbortSignal,
        emitter: EventEmitter,
        execution_id: str | None,
        round: int | None,
        notify: Callable[[RunEvent], None] | None = None,
        journal: EffectJournal | None = None,
        trace: RunTrace | None = None,
        attempt: str | None = None,
        run: object = None,
        ceiling: ToolGate | None = None,
    ) -> None:
        """Run ``calls``; fill ``outcomes`` (same length, same order) as each one ends.

        A slot already filled (a settlement restored from the journal, S40) is not run again and
        nothing is emitted for it. On a normal return every slot is filled. If the awaiting task
        is cancelled, or the batch stops on an error or a control outcome (see the module
        docstring), the slots of calls that did not finish stay ``None`` for the caller to fill
        (see :func:`interrupted`) or — in a journaled run — to leave pending.
        """
        assert len(outcomes) == len(calls)
        todo = [i for i, outcome in enumerate(outcomes) if outcome is None]
        submitted = now() if emitter.enabled else 0.0  # S39: tool queue observations
        if not todo:
            return
        # One call runs inline — no task, nothing to halt beside it; several share a stop flag.
        batch = _Batch() if len(todo) > 1 else None
        scope = _Scope(
            signal,
            emitter,
            execution_id,
            round,
            notify,
            journal=journal,
            batch=batch,
            submitted_at=submitted,
            trace=trace,
            attempt=attempt,
            run=run,
            ceiling=ceiling,
        )
        if batch is None:
            index = todo[0]
            outcomes[index] = await self._run_one(index, calls[index], None, scope)
        else:
            await self._run_concurrently(calls, outcomes, todo, scope, batch)
        if self.settle is not None:
            await self.settle()

    async def _run_concurrently(
        self,
        calls: Sequence[ToolCall],
        outcomes: list[ToolCallOutcome | None],
        todo: list[int],
        scope: _Scope,
        batch: _Batch,
    ) -> None:
        async def one(index: int, limiter: asyncio.Semaphore | None) -> None:
            try:
                outcomes[index] = await self._run_one(index, calls[index], limiter, scope)
            except asyncio.CancelledError:
                raise
            except BaseException as error:  # noqa: BLE001 - re-raised by raise_first
                batch.halt(error)

        limiter = asyncio.Semaphore(self._concurrency)
        tasks = [asyncio.ensure_future(one(i, limiter)) for i in todo]
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            # Like gather: the calls are cancelled and waited for, so nothing of the batch
            # outlives the run (its slot and journal lease are released after this).
            for task in tasks:
                task.cancel()
            while not all(task.done() for task in tasks):
                try:
                    await asyncio.wait(tasks)
                except asyncio.CancelledError:
                    for task in tasks:
                        task.cancel()  # a further cancellation reaches the bodies too
            raise
        batch.raise_first()

    async def invoke(
        self,
        tool: Tool,
        arguments: Mapping[str, Any],
        *,
        signal: AbortSignal,
        emitter: EventEmitter,
        approver: Approver | None = None,
    ) -> ToolCallOutcome:
        """Direct invocation (S43): the same path as a model call, with no fabricated turn.

        Validation, admission, body and events are exactly those of a model-driven call.
        """
        outcome = await self._admit_and_run(
            tool, None, arguments, _Scope(signal, emitter, approver=approver)
        )
        assert outcome is not None  # only a batch call can stay pending
        return outcome
