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
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol, final

from robota.core._abort import AbortSignal, abandon_signal, is_abort
from robota.core._cancel import AbortGuard
from robota.core._emit import EventEmitter
from robota.core._errors import (
    ConfigurationError,
    ExecutionControlError,
    ExecutionSuspendedError,
    RobotaError,
    SchemaValidationError,
    StorageError,
)
from robota.core._events import EventNames
from robota.core._logging import get_logger
from robota.core._messages import ToolCall, new_id, now
from robota.core._run_events import RunEvent, ToolCallFinished, ToolCallStarted, ToolOutcomeStatus
from robota.core._texts import ModelTexts, render
from robota.core._tracing import RunTrace, body_span_key
from robota.core.providers._contract import ToolSpec
from robota.core.schema._validate import SCHEMA_ERROR_CODE
from robota.core.tools._deferral import ToolCatalog
from robota.core.tools._outcomes import ToolCallOutcome, interrupted
from robota.core.tools._registry import ToolRegistry
from robota.core.tools._tool import (
    Approver,
    OutsideResponder,
    Tool,
    ToolContext,
    ToolResult,
    to_tool_result,
)

__all__ = [
    "Admission",
    "EffectJournal",
    "ToolCallOutcome",
    "ToolExecutionService",
    "ToolGate",
    "ToolInvocation",
]

_log = get_logger("robota.tools")

_DEFAULT_TEXTS: Final = ModelTexts()


@final
@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """A call on its way to a body, as the admission seam sees it.

    Attributes:
        tool: The registered tool.
        call: The model's call; ``None`` for a direct invocation (S43).
        arguments: The validated arguments.
        context: The context the body will receive.
        approver: For a direct invocation (S43), the approver its caller passed, if any; a
            model-driven call carries none (the gate's own approver answers it).
        texts: The agent's model-facing texts; a gate words its refusals with them (S35).
        outside_ask: For a call of a journaled run (S40), the channel an ask about this call is
            saved through as an outside request (a gate hands it to its approver as
            :attr:`ApprovalRequest.request_outside_response`); ``None`` otherwise.
    """

    tool: Tool
    call: ToolCall | None
    arguments: Mapping[str, Any]
    context: ToolContext
    approver: Approver | None = None
    texts: ModelTexts = _DEFAULT_TEXTS
    outside_ask: OutsideResponder | None = None


@final
@dataclass(frozen=True, slots=True)
class Admission:
    """The admission seam's answer.

    Attributes:
        allowed: Whether the body may run.
        reason: Why not (shown to the model), or a note.
        arguments: Replacement arguments (e.g. a hook's updated input); they are validated again
            before the body sees them.
    """

    allowed: bool
    reason: str = ""
    arguments: Mapping[str, Any] | None = None


class EffectJournal(Protocol):
    """What a journaled run gives the executor for one batch (S40)."""

    def call_identity(self, index: int) -> tuple[str, str]:
        """The logical call key and the body's stable id of the batch's call ``index``."""
        ...

    def outside(
        self, call_key: str, call_id: str, tool_name: str, *, asks: bool = False
    ) -> OutsideResponder | None:
        """The channel the body's ``ctx.request_outside_response`` goes through.

        ``asks=True``: the one its approver saves asks through, with ids of their own;
        ``None`` when an ask cannot suspend this execution (a sub-agent's, issue 29).
        """
        ...

    async def effect_started(
        self,
        call_key: str,
        call_id: str,
        call: ToolCall | None,
        tool_name: str,
        arguments: Mapping[str, Any],
    ) -> None:
        """Record the start with the final arguments; durable before the body starts."""
        ...

    async def effect_settled(self, call_key: str, outcome: ToolCallOutcome) -> None:
        """Record the body's settlement; durable before the result is used."""
        ...

    async def effect_abandoned(self, call_key: str) -> None:
        """Record that a call whose start was saved never ran its body (the batch stopped)."""
        ...

    def swallowed(self, call_key: str) -> BaseException | None:
        """A control outcome raised inside the body that the body did not let through.

        A persistence failure of the run, or this call's own saved wait: it still wins over
        whatever the body returned (S39, S40).
        """
        ...


@final
class _Batch:
    """One batch's stop flag: once set, no further body starts (S40)."""

    __slots__ = ("errors", "halted")

    def __init__(self) -> None:
        self.halted = False
        self.errors: list[BaseException] = []

    def halt(self, error: BaseException) -> None:
        self.halted = True
        self.errors.append(error)

    def raise_first(self) -> None:
        """Raise the outcome that wins: a persistence failure, any other error, then a wait."""
        if not self.errors:
            return
        errors = self.errors
        for error in errors:
            if isinstance(error, StorageError):
                raise error
        for error in errors:
            if not isinstance(error, ExecutionSuspendedError):
                raise error
        raise errors[0]


@final
@dataclass(frozen=True, slots=True)
class _Scope:
    """What every call of one batch (or one direct invocation) shares."""

    signal: AbortSignal
    emitter: EventEmitter
    execution_id: str | None = None
    round: int | None = None
    notify: Callable[[RunEvent], None] | None = None
    approver: Approver | None = None
    journal: EffectJournal | None = None
    batch: _Batch | None = None
    submitted_at: float = 0.0
    trace: RunTrace | None = None
    attempt: str | None = None
    run: object = None  # issue 29: the calling execution, for a sub-agent's body
    # Issue 29: a sub-agent's run passes its ceiling gate here, for its own calls only, rather
    # than swapping the service's gate (a direct call made meanwhile would see another's gate).
    ceiling: ToolGate | None = None

    def finish(self, outcome: ToolCallOutcome) -> ToolCallOutcome:
        """Report the call's end to the run's listener (S33), then hand the outcome back."""
        if self.notify is not None and outcome.call is not None:
            result = outcome.result
            self.notify(
                ToolCallFinished(
                    outcome.call, outcome.status, result.content, result.is_error, result.view
                )
            )
        return outcome


class ToolGate(Protocol):
    """Decides whether an invocation may run and observes its result (permissions, hooks)."""

    async def admit(self, invocation: ToolInvocation) -> Admission:
        """Allow, refuse, or allow with replaced arguments."""
        ...

    async def settled(self, invocation: ToolInvocation, result: ToolResult) -> None:
        """Observe the result of an admitted body (post-execution hooks)."""
        ...


def _parse_arguments(text: str) -> tuple[Mapping[str, Any] | None, str]:
    if not text.strip():
        return {}, ""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"the arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"the arguments must be a JSON object, got {type(value).__name__}"
    return value, ""


@final
class ToolExecutionService:
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

    async def _run_one(
        self, index: int, call: ToolCall, limiter: asyncio.Semaphore | None, scope: _Scope
    ) -> ToolCallOutcome | None:
        emitter = scope.emitter
        if emitter.enabled:
            emitter.emit(
                EventNames.TOOL_REQUESTED,
                {"provider_call_id": call.id, "tool_name": call.name, "arguments": call.arguments},
            )
        tool = self.resolve(call.name)
        if tool is None:
            _observe_queue(scope, call, "refusal", "unavailable")
            return scope.finish(self._unavailable(call, emitter))
        if scope.signal.aborted:
            _observe_queue(scope, call, "refusal", "interrupted")
            return scope.finish(interrupted(call, self.texts))
        async with limiter or contextlib.nullcontext():
            if limiter is not None and _aborted(scope.signal):
                # Queued behind the limit when the abort landed (S38).
                _observe_queue(scope, call, "refusal", "interrupted")
                return scope.finish(interrupted(call, self.texts))
            arguments, problem = _parse_arguments(call.arguments)
            if arguments is None:
                _observe_queue(scope, call, "refusal", "invalid_arguments")
                text = render(
                    self.texts.invalid_arguments_result, tool=repr(tool.name), problem=problem
                )
                return scope.finish(self._refused(call, tool, text, emitter))
            _observe_queue(scope, call, "admission")
            try:
                return await self._admit_and_run(tool, call, arguments, scope, index)
            except asyncio.CancelledError as exc:
                if _being_cancelled():
                    raise
                # A cancellation of the gate's own (an admission or post-hook await), not the
                # run's: that call failed; it is never reported as not started.
                result = ToolResult(_failure_text(tool, exc, self.texts), is_error=True)
                return scope.finish(ToolCallOutcome(call, "failed", result, source=tool.source))

    async def _admit_and_run(
        self,
        tool: Tool,
        call: ToolCall | None,
        arguments: Mapping[str, Any],
        scope: _Scope,
        index: int | None = None,
    ) -> ToolCallOutcome | None:
        journal = scope.journal if index is not None else None
        outside: OutsideResponder | None = None
        outside_ask: OutsideResponder | None = None
        call_key = ""
        if journal is not None and index is not None:
            # S40: the logical call keeps its id across processes, so a resumed wait is the same
            # call and a tool can use ctx.call_id as its idempotency key.
            call_key, call_id = journal.call_identity(index)
            outside = journal.outside(call_key, call_id, tool.name)
            outside_ask = journal.outside(call_key, call_id, tool.name, asks=True)
        else:
            call_id = new_id("tool")
        span = scope.emitter.child("tool", call_id)
        span_key = body_span_key(scope.attempt, call_id)
        gate = scope.ceiling if scope.ceiling is not None else self.gate
        # S12: a walking body judges each path it meets by this gate's rules (ctx.path_screen).
        screen_of = getattr(gate, "path_screen", None)
        # The approver this call's asks reach (S21; S43: a direct call only its caller's).
        approver = scope.approver if call is None else getattr(gate, "approver", None)
        ctx = ToolContext(
            signal=scope.signal,
            call_id=call_id,
            tool_name=tool.name,
            provider_call_id=call.id if call is not None else None,
            execution_id=scope.execution_id,
            round=scope.round,
            outside=outside,
            trace=scope.trace,  # S27: the body's traceparent derives from its own minted id
            span_key=span_key,
            run=scope.run,
            span=span,
            screen=functools.partial(screen_of, tool) if screen_of is not None else None,
            approver=approver,
            # The logical call's key, stable across a resume (S40); else run id + call id.
            idempotency_key=f"{scope.execution_id}:{call_key}" if call_key else None,
        )

        def refuse(text: str) -> ToolCallOutcome:
            return scope.finish(self._refused(call, tool, text, span))

        validated = _validated(tool, arguments, self.texts)
        if isinstance(validated, str):
            return refuse(validated)
        invocation = ToolInvocation(
            tool, call, validated, ctx, scope.approver, self.texts, outside_ask
        )
        if scope.batch is not None and scope.batch.halted:
            return None  # S40: the batch stopped; nothing more is admitted (no approver asked)
        if gate is not None:
            admission = await gate.admit(invocation)
            if not admission.allowed:
                return refuse(admission.reason or f"The call to {tool.name!r} was not permitted.")
            if admission.arguments is not None:
                validated = _validated(tool, admission.arguments, self.texts)
                if isinstance(validated, str):
                    return refuse(validated)
                invocation = replace(invocation, arguments=validated)
        if scope.batch is not None and scope.batch.halted:
            return None  # S40: the batch stopped; a call not yet started stays pending
        outcome = await self._body(
            invocation,
            _tool_span(span, tool),
            scope.notify,
            journal,
            call_key,
            scope.batch,
            span_key,
            gate,
        )
        return scope.finish(outcome) if outcome is not None else None

    async def _body(
        self,
        invocation: ToolInvocation,
        tool_span: EventEmitter,
        notify: Callable[[RunEvent], None] | None,
        journal: EffectJournal | None = None,
        call_key: str = "",
        batch: _Batch | None = None,
        span_key: str = "",
        gate: ToolGate | None = None,
    ) -> ToolCallOutcome | None:
        tool, call, ctx = invocation.tool, invocation.call, invocation.context
        if journal is not None:
            # S40: durable before the body starts, with the arguments it actually runs with.
            await journal.effect_started(
                call_key, ctx.call_id, call, tool.name, invocation.arguments
            )
            if batch is not None and batch.halted:
                # The batch stopped while the start was being saved: the body never runs, and
                # the journal says so, so recovery dispatches it again rather than ask.
                await journal.effect_abandoned(call_key)
                return None
        if tool_span.enabled:
            tool_span.emit(
                EventNames.TOOL_STARTED,
                {
                    "tool_name": tool.name,
                    "call_id": ctx.call_id,
                    "provider_call_id": ctx.provider_call_id,
                    "source": tool.source,
                    "span_key": span_key or ctx.call_id,  # S27: what the body's span derives from
                },
            )
        if notify is not None and call is not None:
            notify(ToolCallStarted(call, ctx.call_id))
        status: ToolOutcomeStatus
        try:
            if journal is None:
                # The hard stage (AbortController.abandon): stop waiting for the body; it is
                # cancelled where it awaits. A journaled run keeps waiting (S40).
                with AbortGuard(abandon_signal(ctx.signal)) as guard:
                    output = await guard.call(lambda: tool.execute(invocation.arguments, ctx))
            else:
                output = await tool.execute(invocation.arguments, ctx)
            result = to_tool_result(output)
            status = "failed" if result.is_error else "completed"
        except ExecutionControlError:
            raise  # S39: control outcomes propagate; never a result the model could retry
        except asyncio.CancelledError as exc:
            if _being_cancelled():
                raise
            # A cancellation the body caught from something of its own, not the run's: it ended
            # by raising, so that is its recorded outcome (never "did not start").
            status = "failed"
            result = ToolResult(_failure_text(tool, exc, self.texts), is_error=True)
        except Exception as exc:  # noqa: BLE001 - a body's failure becomes its recorded result
            control = _control_in(exc)
            if control is not None:
                # S39: e.g. raised inside a TaskGroup of the body; its own cause is kept.
                raise control from control.__cause__
            if is_abort(exc, ctx.signal):
                status = "interrupted"
                abandoned = ctx.signal.abandoned
                texts = self.texts
                text = (
                    texts.abandoned_while_running if abandoned else texts.interrupted_while_running
                )
                result = ToolResult(text, is_error=True)
            else:
                status = "failed"
                result = ToolResult(_failure_text(tool, exc, self.texts), is_error=True)
        review = getattr(self.gate, "review", None)  # issue 29: tool guardrails' ``after``
        if review is not None:
            result = await review(invocation, result)  # before the journal records it (S40)
        swallowed = journal.swallowed(call_key) if journal is not None else None
        if swallowed is not None:
            raise swallowed  # S39/S40: a control outcome the body caught still wins
        if tool_span.enabled:
            tool_span.emit(
                EventNames.TOOL_FAILED if result.is_error else EventNames.TOOL_COMPLETED,
                {
                    "tool_name": tool.name,
                    "call_id": ctx.call_id,
                    "provider_call_id": ctx.provider_call_id,
                    "status": status,
                    "content": result.content,
                    "source": tool.source,
                },
            )
        outcome = ToolCallOutcome(
            call, status, result, ctx.call_id, started=True, source=tool.source
        )
        if journal is not None:
            await journal.effect_settled(call_key, outcome)  # S40: before the result is used
        if gate is not None:
            await gate.settled(invocation, result)
        return outcome

    def _unavailable(self, call: ToolCall, emitter: EventEmitter) -> ToolCallOutcome:
        catalog = self.catalog
        hidden = catalog.deferred_count() if catalog is not None else 0
        if hidden:
            # S19: what is actually available is what is offered; the rest is found by search.
            available = tuple(spec.name for spec in self.offered_specs())
        else:
            available = self.registry.names()
        listing = ", ".join(available) if available else "none"
        texts = self.texts
        text = render(texts.unavailable_tool_result, tool=repr(call.name), available=listing)
        if hidden:
            text += " " + render(texts.deferred_tools_hint, count=str(hidden))
        if emitter.enabled:
            emitter.emit(
                EventNames.TOOL_SKIPPED,
                {
                    "reason": "unavailable",
                    "requested_tool": call.name,
                    "available_tools": list(available),
                    "provider_call_id": call.id,
                },
            )
        return ToolCallOutcome(call, "unavailable", ToolResult(text, is_error=True))

    @staticmethod
    def _refused(
        call: ToolCall | None, tool: Tool, text: str, emitter: EventEmitter
    ) -> ToolCallOutcome:
        if emitter.enabled:
            emitter.emit(
                EventNames.TOOL_REFUSED,
                {
                    "tool_name": tool.name,
                    "provider_call_id": call.id if call is not None else None,
                    "reason": text,
                },
            )
        return ToolCallOutcome(call, "refused", ToolResult(text, is_error=True), source=tool.source)


def _observe_queue(scope: _Scope, call: ToolCall, selection: str, reason: str = "") -> None:
    """S39: one tool queue observation — submission until selection for admission or refusal.

    It covers only the wait in the queue: admission, permission and body work come after it,
    and it never certifies an effect or stands in for a settlement. Built only when someone
    listens; an observer's failure is contained by the emitter and changes nothing.
    """
    emitter = scope.emitter
    if emitter.enabled:
        selected = now()
        emitter.emit(
            EventNames.TOOL_QUEUE_OBSERVED,
            {
                "provider_call_id": call.id,
                "tool_name": call.name,
                "submitted_at": scope.submitted_at,
                "selected_at": selected,
                "waited": max(0.0, selected - scope.submitted_at),
                "selection": selection,
                "reason": reason,
            },
        )


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _control_in(exc: BaseException) -> ExecutionControlError | None:
    """The first execution-control outcome inside an exception group, if any."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _control_in(inner)
            if found is not None:
                return found
        return None
    return exc if isinstance(exc, ExecutionControlError) else None


def _aborted(signal: AbortSignal) -> bool:
    # A call, not an attribute read: the signal can abort while this coroutine waits.
    return signal.aborted


def _tool_span(span: EventEmitter, tool: Tool) -> EventEmitter:
    # S33: the call's own services get its span; a call carrying none reports to the service
    # set on the tool instance (whichever agent set one last).
    if span.enabled:
        return span
    service = tool.event_service
    if service is None or not service.enabled:
        return span
    return EventEmitter((service,), span.owner_path)


def _validated(
    tool: Tool, arguments: Mapping[str, Any], texts: ModelTexts
) -> Mapping[str, Any] | str:
    """The arguments the body receives, or the text of the refusal (S16)."""
    try:
        return tool.validate_arguments(arguments)
    except SchemaValidationError as exc:
        return render(texts.rejected_arguments_result, tool=repr(tool.name), problem=exc.message)
    except ConfigurationError as exc:
        if exc.code != SCHEMA_ERROR_CODE:
            raise
        # S16: the tool's own schema is broken. A tool-definition error, never "invalid
        # arguments": the model cannot fix it, so it is told not to retry, and the operator is
        # told what to fix through the diagnostic sink. Refused rather than raised, like an
        # unavailable tool (S37), so the other calls of a batch settle normally.
        _log.error("tool schema is broken", tool=tool.name, issues=exc.context.get("issues"))
        return render(texts.broken_schema_result, tool=repr(tool.name))


def _failure_text(tool: Tool, exc: BaseException, texts: ModelTexts) -> str:
    if isinstance(exc, RobotaError):
        error = exc.message
    else:
        error = f"{type(exc).__name__}: {str(exc) or type(exc).__name__}"
    return render(texts.tool_failure_result, tool=repr(tool.name), error=error)
