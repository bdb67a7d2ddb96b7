"""One call's path through the tool execution service (S16, S21, S22, S23, S33, S39, S40, S43).

A mixin of :class:`~robota.core.tools._executor.ToolExecutionService`: resolve the name →
parse the arguments → validate them → admission by the gate → the body → the result, for a model's
call in a batch (``_run_one``) and for a direct invocation (``_admit_and_run``). The module
docstring of :mod:`robota.core.tools._executor` states the rules; the batch around the calls
(concurrency, halting, cancellation) stays there.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from robota.core._abort import AbortSignal, abandon_signal, is_abort
from robota.core._cancel import AbortGuard
from robota.core._emit import EventEmitter
from robota.core._errors import (
    ConfigurationError,
    ExecutionControlError,
    RobotaError,
    SchemaValidationError,
)
from robota.core._events import EventNames
from robota.core._logging import get_logger
from robota.core._messages import ToolCall, new_id, now
from robota.core._run_events import RunEvent, ToolCallStarted, ToolOutcomeStatus
from robota.core._texts import ModelTexts, render
from robota.core._tracing import body_span_key
from robota.core.providers._contract import ToolSpec
from robota.core.schema._validate import SCHEMA_ERROR_CODE
from robota.core.tools._deferral import ToolCatalog
from robota.core.tools._invocation import EffectJournal, ToolGate, ToolInvocation, _Batch, _Scope
from robota.core.tools._outcomes import ToolCallOutcome, interrupted
from robota.core.tools._registry import ToolRegistry
from robota.core.tools._tool import OutsideResponder, Tool, ToolContext, ToolResult, to_tool_result

__all__ = ["ToolCallPath"]

_log = get_logger("robota.tools")


class ToolCallPath:
    """The per-call path of :class:`~robota.core.tools._executor.ToolExecutionService`."""

    if not TYPE_CHECKING:
        __slots__ = ()

    if TYPE_CHECKING:  # the service's own state and methods
        catalog: ToolCatalog | None
        gate: ToolGate | None
        registry: ToolRegistry
        texts: ModelTexts

        def resolve(self, name: str) -> Tool | None: ...
        def offered_specs(
            self, window: Callable[[], int | None] | None = None, ceiling: ToolGate | None = None
        ) -> tuple[ToolSpec, ...]: ...

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
