"""The flows: a sequential pipeline and a parallel fan-out with a join (S32 primitives).

A flow is built once and run many times; each :meth:`Flow.run` is one orchestration run with
one abort signal, one set of :class:`~robota.UsageLimits`, one usage roll-up and one event
stream (``orchestration.*`` events, S32, and every agent event under the flow's owner path).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, TypeAlias, final

from robota.agents._context import FlowRun, Scope, StepFunction
from robota.agents._results import BranchResult, FlowResult, OrchestrationError
from robota.agents._steps import (
    Failed,
    Outcome,
    Pool,
    Runnable,
    Step,
    as_step,
    run_step,
    step_name,
    unique_ids,
)
from robota.core import (
    AbortController,
    AbortSignal,
    Agent,
    AgentEvent,
    CallbackEventService,
    ConfigurationError,
    EventService,
    OwnerRef,
    TraceContext,
    UsageLimits,
)
from robota.core.orchestration import OrchestrationEventNames as Names

__all__ = ["ErrorPolicy", "Flow", "Join", "Parallel", "Sequential", "StepLike", "check_join"]

ErrorPolicy: TypeAlias = Literal["fail_fast", "collect"]
"""What a fan-out does when a branch fails: ``fail_fast`` (default) aborts the other branches
(they end interrupted, their partial text recorded) and the flow raises
:class:`OrchestrationError`; ``collect`` lets the others finish, joins the outputs of those that
succeeded and lists the failed ones in :attr:`FlowResult.failures` (it raises only when every
branch failed)."""


class Flow(Runnable):
    """A composable orchestration: run it, or use it as a step of another flow."""

    async def run(
        self,
        input: str | Sequence[str],
        *,
        signal: AbortSignal | None = None,
        limits: UsageLimits | None = None,
        event_service: EventService | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        trace: TraceContext | None = None,
        keep_history: bool = False,
    ) -> FlowResult:
        """Run the flow once.

        Args:
            input: The flow's input text; a map-reduce also takes the items themselves.
            signal: Cancels the whole flow (S23): every running agent is interrupted (its
                partial text is recorded), no further step starts, and the result says
                ``"interrupted"``.
            limits: One :class:`~robota.UsageLimits` for every agent run of the flow, sub-agents
                included. Each run is given what the runs before it left (and never more than
                its agent's own limits); with limits, agent runs take turns — one at a time —
                so concurrent branches never each spend the same remainder.
            event_service: Receives the flow's ``orchestration.*`` events and every agent event,
                its owner path starting ``orchestration/<run id>/step/<step id>`` (S33).
            on_event: A callable receiving the same events.
            trace: W3C trace context (S27): every agent run of the flow is parented on it.
            keep_history: Let each agent run continue (and add to) the agent's own
                conversation. By default each runs in a fresh conversation of its own (its
                system prompt only, ``fresh_conversation``), as ``Agent.as_tool`` calls do, and
                the agent's own history is left untouched (S34).

        Raises:
            OrchestrationError: a step failed (its error is ``__cause__``; ``.result`` holds
                what ran).
            ConfigurationError: an argument of the wrong kind, or an input the flow cannot
                take.
            Exception: what a map-reduce's ``split`` raised (before any step ran).

        Every run emits ``orchestration.started`` and then ``completed`` or ``failed`` (also
        when the caller cancels the run's task, which then propagates unchanged).
        """
        if limits is not None and not isinstance(limits, UsageLimits):
            raise ConfigurationError(
                f"limits must be a robota.UsageLimits or None, got {type(limits).__name__}"
            )
        if signal is not None and not isinstance(signal, AbortSignal):
            raise ConfigurationError(
                "signal must be a robota.AbortSignal (controller = robota.AbortController(); "
                f"signal=controller.signal), got {type(signal).__name__}"
            )
        if on_event is not None and not callable(on_event):
            raise ConfigurationError(
                f"on_event must be a function taking one AgentEvent, got {type(on_event).__name__}"
            )
        if event_service is not None and not isinstance(event_service, EventService):
            raise ConfigurationError(
                f"event_service must be a robota.EventService, got {type(event_service).__name__}"
            )
        services: list[EventService] = []
        if event_service is not None:
            services.append(event_service)
        if on_event is not None:
            services.append(CallbackEventService(on_event))
        flow = FlowRun(limits=limits, services=services, trace=trace, keep_history=keep_history)
        path = (OwnerRef("orchestration", flow.run_id),)
        scope = Scope(flow, signal if signal is not None else AbortController().signal, path)
        flow.emit(Names.STARTED, path, self.primitive)
        try:
            outcome = await self._execute(input, scope)
        except Failed as failed:
            flow.emit(
                Names.FAILED, path, self.primitive, step_id=failed.step_id, reason=str(failed.cause)
            )
            result = self._result(flow, Outcome("", "interrupted", failed.records))
            raise OrchestrationError(
                f"step {failed.step_id!r} failed: {failed.cause}",
                step_id=failed.step_id,
                result=result,
                cause=failed.cause,
            ) from failed.cause
        except Exception as exc:  # an input the flow cannot take (a split that raised): no step ran
            flow.emit(Names.FAILED, path, self.primitive, reason=str(exc))
            raise
        except asyncio.CancelledError:  # the caller cancelled the flow's task: its agents stopped
            flow.emit(Names.FAILED, path, self.primitive, reason="cancelled")
            raise
        flow.emit(Names.COMPLETED, path, self.primitive)
        return self._result(flow, outcome)

    def _result(self, flow: FlowRun, outcome: Outcome) -> FlowResult:
        ledger = flow.ledger
        return FlowResult(
            output=outcome.output,
            status="complete" if outcome.status == "complete" else "interrupted",
            primitive=self.primitive,
            steps=tuple(outcome.records),
            usage=ledger.usage,
            cost=ledger.cost,
            requests=ledger.requests,
            tool_calls=ledger.tool_calls,
            usage_by_agent=ledger.snapshot(),
            run_id=flow.run_id,
            # A flow that returned raised for no failed step it recorded: each was collected.
            failures=tuple(r for r in outcome.records if r.status == "failed"),
        )


StepLike: TypeAlias = Agent | Flow | StepFunction
"""What a flow's step may be: an :class:`~robota.Agent` (run once per use, in a fresh
conversation unless the run keeps history), a nested flow, or a plain function ``str -> str``
(sync or async; not metered, not limited)."""

Join: TypeAlias = Callable[[list[str]], Awaitable[str] | str] | Agent | Flow | None
"""A fan-out's join: ``None`` (the outputs separated by a blank line), a function given the
outputs as a list, or an agent or flow given them as one text (each under ``[branch id]``)."""


def check_join(join: object, where: str) -> None:
    """Refuse a join (a reducer) that is none of those :data:`Join` allows."""
    if join is None or isinstance(join, (Agent, Runnable)) or callable(join):
        return
    raise ConfigurationError(
        f"{where} must be None, a robota.Agent, a flow or a function taking the list of outputs "
        f"and returning a string, got {type(join).__name__}"
    )


def _text(input: str | Sequence[str], what: str) -> str:
    if isinstance(input, str):
        return input
    raise ConfigurationError(f"a {what} flow takes one input string, got {type(input).__name__}")


@final
class Sequential(Flow):
    """Steps one after another, each given the previous step's output (:func:`sequential`)."""

    primitive = "sequential"

    def __init__(self, steps: Sequence[Step]) -> None:
        if not steps:
            raise ConfigurationError("sequential() needs at least one step")
        self.steps = tuple(as_step(s, f"sequential() step {i}") for i, s in enumerate(steps))
        self.ids = unique_ids([step_name(s) for s in self.steps])

    async def _execute(self, input: str | Sequence[str], scope: Scope) -> Outcome:
        current: str | Sequence[str] = input if scope.prefix else _text(input, "sequential")
        outcome = Outcome("", "complete")
        for index, (local, step) in enumerate(zip(self.ids, self.steps, strict=True)):
            if scope.signal.aborted:
                outcome.status = "interrupted"
                break
            step_id = scope.prefix + local
            scope.run.emit(
                Names.STEP_STARTED, scope.path, "sequential", step_id=step_id, step_index=index
            )
            try:
                branch, records = await run_step(step, current, step_id, scope)
            except Failed as failed:
                records = outcome.records + failed.records
                raise Failed(failed.step_id, failed.cause, records) from failed.cause
            except Exception as exc:
                text = current if isinstance(current, str) else "\n".join(current)
                record = BranchResult(step_id, text, "", "failed", error=exc)
                raise Failed(step_id, exc, [*outcome.records, record]) from exc
            finally:  # S32: a step that started finished executing, however it ended
                scope.run.emit(
                    Names.STEP_COMPLETED,
                    scope.path,
                    "sequential",
                    step_id=step_id,
                    step_index=index,
                )
            outcome.records.extend(records)
            outcome.output = branch.output
            if branch.status != "complete":
                outcome.status = "interrupted"
                break
            current = branch.output
        return outcome


def _sections(ids: Sequence[str], outputs: Sequence[str]) -> str:
    return "\n\n".join(f"[{i}]\n{o}" for i, o in zip(ids, outputs, strict=True))


class Parallel(Flow):
    """Branches at once on one input, then a join; build with :func:`parallel`."""

    primitive = "parallel"

    def __init__(
        self,
        branches: Sequence[Step],
        *,
        join: Join = None,
        max_concurrency: int | None = None,
        on_error: ErrorPolicy = "fail_fast",
    ) -> None:
        if not branches:
            raise ConfigurationError("parallel() needs at least one branch")
        check_join(join, "parallel() join")  # here, not once every branch has run (and spent)
        self.branches = tuple(as_step(b, f"parallel() branch {i}") for i, b in enumerate(branches))
        self.ids = unique_ids([step_name(b) for b in self.branches])
        self.join_id = unique_ids([*self.ids, "join"])[-1]  # a branch may be named "join"
        bound: object = max_concurrency
        if bound is not None and (
            isinstance(bound, bool) or not isinstance(bound, int) or bound < 1
        ):
            raise ConfigurationError(
                f"max_concurrency must be a positive integer or None, got {max_concurrency!r}"
            )
        if on_error not in ("fail_fast", "collect"):
            raise ConfigurationError(f"on_error must be 'fail_fast' or 'collect', got {on_error!r}")
        self.join = join
        self.max_concurrency = max_concurrency
        self.on_error: ErrorPolicy = on_error

    def _work(
        self, input: str | Sequence[str], scope: Scope
    ) -> list[tuple[str, Step, str | Sequence[str]]]:
        text = input if scope.prefix else _text(input, "parallel")
        return [(scope.prefix + i, b, text) for i, b in zip(self.ids, self.branches, strict=True)]

    async def _execute(self, input: str | Sequence[str], scope: Scope) -> Outcome:
        return await self._fan_out(self._work(input, scope), scope)

    async def _fan_out(
        self, work: list[tuple[str, Step, str | Sequence[str]]], scope: Scope
    ) -> Outcome:
        # One signal for this fan-out: the caller's, or a failing branch (fail fast).
        group = AbortController()
        signal = AbortSignal.any([scope.signal, group.signal])
        inner = scope.under(signal)
        gate = asyncio.Semaphore(self.max_concurrency or len(work))
        branches: list[BranchResult | None] = [None] * len(work)
        records: list[list[BranchResult]] = [[] for _ in work]
        first: list[tuple[str, BaseException]] = []

        async def one(index: int) -> None:
            step_id, step, item = work[index]
            text = item if isinstance(item, str) else "\n".join(item)
            async with gate:
                if signal.aborted:
                    branches[index] = BranchResult(step_id, text, "", "interrupted")
                    records[index] = [branches[index]]  # type: ignore[list-item]
                    return
                scope.run.emit(
                    Names.STEP_STARTED, scope.path, "parallel", step_id=step_id, step_index=index
                )
                try:
                    branch, added = await run_step(step, item, step_id, inner)
                except Exception as exc:  # noqa: BLE001 - a branch's failure is recorded
                    cause = exc.cause if isinstance(exc, Failed) else exc
                    added = exc.records if isinstance(exc, Failed) else []
                    branch = BranchResult(step_id, text, "", "failed", error=cause)
                    if not isinstance(exc, Failed):
                        added = [branch]
                    if not first:
                        first.append((step_id, cause))
                    if self.on_error == "fail_fast":
                        group.abort(f"branch {step_id!r} failed: {cause}")
                branches[index] = branch
                records[index] = added
                scope.run.emit(
                    Names.STEP_COMPLETED, scope.path, "parallel", step_id=step_id, step_index=index
                )

        tasks = [asyncio.ensure_future(one(i)) for i in range(len(work))]
        try:
            await asyncio.gather(*tasks)
        finally:
            # Settle the fan-out's own signal: it then lets go of the caller's (no listener left).
            # A branch that raised what it does not catch (a BaseException) left the others
            # running: the abort interrupts them, and the fan-out waits for them (none behind).
            group.abort("the fan-out settled")
            if tasks:
                await asyncio.wait(tasks)
        done = [b for b in branches if b is not None]
        flat = [r for rs in records for r in rs]
        failed = [b for b in done if b.status == "failed"]
        if failed and (self.on_error == "fail_fast" or len(failed) == len(done)):
            step_id, cause = first[0]
            raise Failed(step_id, cause, flat)
        outcome = Outcome("", "complete", flat, "parallel")
        kept = [b for b in done if b.status != "failed"]
        if scope.signal.aborted or any(b.status == "interrupted" for b in kept):
            outcome.status = "interrupted"
            outcome.output = "\n\n".join(b.output for b in kept if b.output)
            return outcome
        await self._join(kept, scope, outcome, len(work))
        return outcome

    async def _join(
        self, kept: list[BranchResult], scope: Scope, outcome: Outcome, index: int
    ) -> None:
        """Join ``kept``'s outputs as step ``index`` (after every branch: a map's items too)."""
        outputs = [b.output for b in kept]
        join = self.join
        if join is None:
            outcome.output = "\n\n".join(outputs)
            return
        step_id = scope.prefix + self.join_id
        scope.run.emit(
            Names.STEP_STARTED, scope.path, "parallel", step_id=step_id, step_index=index
        )
        try:
            if isinstance(join, (Agent, Pool, Runnable)):
                text = _sections([b.id for b in kept], outputs)
                branch, added = await run_step(join, text, step_id, scope)
            else:
                value: object = join(outputs)
                if inspect.isawaitable(value):
                    value = await value
                if not isinstance(value, str):
                    raise ConfigurationError(
                        f"the join returned {type(value).__name__}; a join function returns a str"
                    )
                branch = BranchResult(
                    step_id, _sections([b.id for b in kept], outputs), value, "complete"
                )
                added = [branch]
        except Failed as failed:
            records = outcome.records + failed.records
            raise Failed(failed.step_id, failed.cause, records) from failed.cause
        except Exception as exc:
            record = BranchResult(step_id, "", "", "failed", error=exc)
            raise Failed(step_id, exc, [*outcome.records, record]) from exc
        finally:  # S32: the join started, so it finished executing, however it ended
            scope.run.emit(
                Names.STEP_COMPLETED,
                scope.path,
                "parallel",
                step_id=step_id,
                step_index=index,
            )
        outcome.records.extend(added)
        outcome.output = branch.output
        if branch.status != "complete":
            outcome.status = "interrupted"
