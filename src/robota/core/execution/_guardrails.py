"""Where a run's guardrails run (issue 29; the types are in :mod:`robota.core._guardrails`).

Input guardrails run in :meth:`RunGuardrails.check_input` before the input enters history and
before any model call; the ones marked ``run_in_parallel`` start there as a task beside the first
model call, and :meth:`RunGuardrails.run` races it against the loop: a trip cancels the loop (the
model call in flight settles as interrupted, S34) and the run raises. Before every tool batch the
loop awaits :meth:`RunGuardrails.passed`, so no tool body starts until they passed. Output
guardrails run in :meth:`RunGuardrails.run` once the loop completed, before the journal's
checkpoint (S40), so a tripped output is never checkpointed as the execution's result and a
resumed run checks its settled reply again. A continuation does not run input guardrails again:
they are turn-level and the turn's model call already settled (S40: turn-level hooks are not
replayed).

Tool guardrails wrap the agent's tool gate (:class:`GuardrailGate`): ``before`` refuses through
the admission seam, exactly like a permission deny (S21); ``after`` reviews a body's result
before the journal records it (S40).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from robota.core._guardrails import (
    RUN_GUARDRAILS,
    GuardrailCall,
    GuardrailRecord,
    GuardrailTripped,
    InputGuardrail,
    OutputGuardrail,
    ToolCallCheck,
    ToolGuardrail,
)
from robota.core.tools._executor import Admission, ToolInvocation
from robota.core.tools._tool import ToolResult

if TYPE_CHECKING:
    from robota.core._abort import AbortSignal
    from robota.core._emit import EventEmitter
    from robota.core._guardrails import Guardrail
    from robota.core._messages import ToolCall
    from robota.core.execution._result import RunStatus
    from robota.core.tools._executor import ToolGate

__all__ = ["GuardrailGate", "RunGuardrails"]


class RunGuardrails:
    """One run's input and output guardrails, and its ledger of guardrail calls."""

    __slots__ = ("_call", "_inputs", "_outputs", "_parallel", "_pending")

    def __init__(
        self, guardrails: tuple[Guardrail, ...], emitter: EventEmitter, signal: AbortSignal
    ) -> None:
        self._call = GuardrailCall(emitter, signal)
        inputs = [g for g in guardrails if isinstance(g, InputGuardrail)]
        self._inputs = [g for g in inputs if not g.run_in_parallel]
        self._parallel = [g for g in inputs if g.run_in_parallel]
        self._outputs = [g for g in guardrails if isinstance(g, OutputGuardrail)]
        self._pending: asyncio.Task[None] | None = None

    @property
    def records(self) -> tuple[GuardrailRecord, ...]:
        """Every guardrail call of the run so far, tool guardrails' included."""
        return tuple(self._call.records)

    async def _inputs_pass(self, guardrails: list[InputGuardrail], text: str) -> None:
        token = RUN_GUARDRAILS.set(self._call)
        try:
            for guardrail in guardrails:
                verdict = await self._call(guardrail, "input", guardrail.check, text)
                if verdict.tripped:
                    raise GuardrailTripped(guardrail.name, verdict.reason, "input")
        finally:
            with contextlib.suppress(
                ValueError
            ):  # closed by the collector in another context (S40)
                RUN_GUARDRAILS.reset(token)

    async def check_input(self, text: str) -> None:
        """Run the blocking input guardrails; start the parallel ones (raises on a trip)."""
        await self._inputs_pass(self._inputs, text)
        if self._parallel:
            self._pending = asyncio.ensure_future(self._inputs_pass(self._parallel, text))

    async def passed(
        self,
        calls: tuple[ToolCall, ...] = (),
        refuse: Callable[[tuple[ToolCall, ...], str], None] | None = None,
    ) -> None:
        """Wait for the parallel input guardrails (before a tool body may start).

        If they trip (or the wait is cancelled), ``calls`` — the batch waiting for them — are
        answered through ``refuse`` as not dispatched, so history never holds a call without
        its result (S34, S39).
        """
        if self._pending is None:
            return
        try:
            await asyncio.shield(self._pending)
        except BaseException:
            if refuse is not None and calls:
                refuse(calls, "an input guardrail did not pass")
            raise

    async def run(
        self, work: Coroutine[Any, Any, RunStatus], output: Callable[[], object]
    ) -> RunStatus:
        """Run the loop ``work``, raced against parallel input guardrails; check the output."""
        token = RUN_GUARDRAILS.set(self._call)
        try:
            status = await self._race(work)
            if status == "complete":
                await self.passed()
                for guardrail in self._outputs:
                    verdict = await self._call(guardrail, "output", guardrail.check, output())
                    if verdict.tripped:
                        raise GuardrailTripped(guardrail.name, verdict.reason, "output")
            return status
        finally:
            # The collector may close an abandoned run's coroutine in another context, where
            # the reset raises ValueError; raised here, it would turn the close into a failed
            # run (RUN_FAILED, plugins' on_error) inside whatever runs there (S40).
            with contextlib.suppress(ValueError):
                RUN_GUARDRAILS.reset(token)
            if self._pending is not None and not self._pending.done():
                self._pending.cancel()  # the run ended another way: the check has no use now

    async def _race(self, work: Coroutine[Any, Any, RunStatus]) -> RunStatus:
        pending = self._pending
        if pending is None or pending.done():
            if pending is not None:
                pending.result()  # a trip that already landed
            return await work
        loop = asyncio.ensure_future(work)
        try:
            await asyncio.wait((loop, pending), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            loop.cancel()
            with contextlib.suppress(BaseException):
                await loop  # the loop commits what it had, as for any cancellation (S23)
            raise
        if not loop.done() and pending.exception() is not None:
            # A trip beside the model call: stop the loop; its call settles as interrupted.
            loop.cancel()
            with contextlib.suppress(BaseException):  # the loop's own end gives way to the trip
                await loop
            pending.result()
        return await loop


class GuardrailGate:
    """A tool gate running tool guardrails around the agent's own gate (wraps, never flags)."""

    __slots__ = ("_emitter", "_guardrails", "inner")

    def __init__(
        self,
        inner: ToolGate | None,
        guardrails: tuple[ToolGuardrail, ...],
        emitter: EventEmitter | None,
    ) -> None:
        self.inner = inner
        self._guardrails = guardrails
        self._emitter = emitter

    def __getattr__(self, name: str) -> Any:
        # ``offered``, ``hooks`` … of the wrapped gate stay visible through the wrapper. Dunders
        # and ``inner`` itself are not forwarded (copy and pickle probe them on a bare object).
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        inner = self.inner
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)

    async def admit(self, invocation: ToolInvocation) -> Admission:
        """The wrapped gate first (a denied call costs no guardrail call), then ``before``."""
        if self.inner is not None:
            admission = await self.inner.admit(invocation)
            if not admission.allowed:
                return admission
            if admission.arguments is not None:
                invocation = replace(invocation, arguments=admission.arguments)
        else:
            admission = Admission(True)
        call = RUN_GUARDRAILS.get() or GuardrailCall(self._emitter, invocation.context.signal)
        name = invocation.tool.name
        for guardrail in self._guardrails:
            if guardrail.before is None or not guardrail.applies(name):
                continue
            check = ToolCallCheck(name, invocation.arguments)
            verdict = await call(guardrail, "tool_before", guardrail.before, check)
            if verdict.tripped:
                reason = verdict.reason or "no reason given"
                return Admission(
                    False,
                    f"The call to {name!r} was refused by guardrail {guardrail.name!r}: {reason}",
                )
        return admission

    async def settled(self, invocation: ToolInvocation, result: ToolResult) -> None:
        """The wrapped gate's post-execution observation (hooks)."""
        if self.inner is not None:
            await self.inner.settled(invocation, result)

    async def review(self, invocation: ToolInvocation, result: ToolResult) -> ToolResult:
        """``after``: what the model sees of a body's result (replaced or withheld)."""
        call = RUN_GUARDRAILS.get() or GuardrailCall(self._emitter, invocation.context.signal)
        name = invocation.tool.name
        for guardrail in self._guardrails:
            if guardrail.after is None or not guardrail.applies(name):
                continue
            check = ToolCallCheck(name, invocation.arguments, result.content, result.is_error)
            verdict = await call(guardrail, "tool_after", guardrail.after, check)
            if verdict.replacement is not None:
                result = ToolResult(verdict.replacement, is_error=verdict.tripped)
            elif verdict.tripped:
                reason = verdict.reason or "no reason given"
                result = ToolResult(
                    f"The result of {name!r} was withheld by guardrail {guardrail.name!r}: "
                    f"{reason}",
                    is_error=True,
                )
        return result


def tool_guardrails(guardrails: tuple[Guardrail, ...]) -> tuple[ToolGuardrail, ...]:
    """The tool guardrails among ``guardrails``."""
    return tuple(g for g in guardrails if isinstance(g, ToolGuardrail))
