"""The round loop: one execution of one run (S23, S30, S31, S37, S38, S39).

A round is one provider call and, when the reply asks for tools, the batch of those calls. The
loop ends when a reply carries text and no tool call; when the run's signal aborts; or when a
guard stops it:

* the round budget is used up, or the model replied with nothing — then exactly one forced
  summary call without tools (S39), unless the caller allowed tool-only completion;
* tools that do not exist were called in consecutive rounds — one forced final call naming the
  calls that never ran (S37);
* the next request would overflow the context window — it is not sent (S39);
* a tool was called with byte-identical input too often — a named, recoverable failure (S39).

Invariants kept here:

* One signal gates every provider call — the forced ones included — and every tool (S23).
* Every assistant message goes through the store's single commit path, and every committed tool
  call gets a result message, on every exit path (S34).
* A provider failure is recorded as a readable assistant message, then raised as a
  :class:`~robota.ProviderError` (S39); execution-control errors propagate untouched.
* Every record of a response names the model that actually answered (S30).
* Observers (events, plugins, the stream consumer) never change execution.

A journaled run (S40) awaits its journal at every boundary — the execution's start, each model
call before dispatch and its response before use, each tool effect before its body and its
settlement after, a checkpoint where it stops — and joins provider settlement on cancellation
(S23). A saved wait suspends it; a continuation (:meth:`Execution.resume`) picks it up from its
latest settled response, reusing every durable settlement.

The execution is split by concern, one mixin a module: this one holds its state, its start,
continuation and end, and its records; the turns, forced calls and requests are in
:mod:`._round`, one provider call in :mod:`._provider_call`, a round's tool batch and the guards
before it in :mod:`._tool_batch`, the context window and the pre-send guard in
:mod:`._context_guard`, and the work between two attempts of a call in :mod:`._attempts`. Its
base :class:`~._state.ExecutionState` is how the machinery below the loop (a run's handoffs,
:mod:`._handoffs`) names the execution.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, Protocol, final, runtime_checkable

from robota.core._abort import AbortSignal
from robota.core._cancel import AbortGuard
from robota.core._emit import EventEmitter
from robota.core._errors import ExecutionSuspendedError, InternalError, RobotaError
from robota.core._events import EventNames
from robota.core._history import ConversationStore, HistoryMutation
from robota.core._messages import AssistantMessage, Message, ToolMessage, UserMessage, new_id
from robota.core._models import ContextWindow
from robota.core._parts import MessagePart, content_text
from robota.core._plugins import ExtensionHook, Plugin, PluginFailure, RunInfo, call_plugin_hook
from robota.core._run_events import MessageCommitted, RunEvent
from robota.core._tracing import RunTrace
from robota.core.execution._attempts import NO_USAGE as _NO_USAGE
from robota.core.execution._attempts import AttemptsMixin, charged_cost
from robota.core.execution._attempts import add_usage as _add_usage
from robota.core.execution._context_guard import ContextGuardMixin
from robota.core.execution._guardrails import RunGuardrails
from robota.core.execution._guards import SameInputCounter
from robota.core.execution._handoffs import RunHandoffs
from robota.core.execution._journal import OutsideRequest
from robota.core.execution._journaled import JournalBinding
from robota.core.execution._lifecycle import prompt_hooks
from robota.core.execution._limits import Budget
from robota.core.execution._provider_call import ProviderCallMixin, unresolved_effort, unrun_answer
from robota.core.execution._recovery import Recovery, call_key_of
from robota.core.execution._result import AgentUsage, RunResult, RunStatus, StopReason
from robota.core.execution._retry import ModelCalls, ModelCandidate
from robota.core.execution._round import RoundMixin
from robota.core.execution._settings import ExecutionSettings
from robota.core.execution._state import ExecutionState
from robota.core.execution._structured import OutputTransport, choose_output_transport
from robota.core.execution._subagents import NO_AGENTS, Spend, SubagentLedger, charge, roll_up
from robota.core.execution._tool_batch import ToolBatchMixin
from robota.core.providers._capabilities import check_media, check_native_tools
from robota.core.providers._contract import ToolSpec
from robota.core.providers._effort import EffortResolution
from robota.core.providers._settings import NO_SETTINGS
from robota.core.tools._executor import ToolExecutionService, ToolGate

__all__ = ["Execution", "ExecutionSettings"]


_NO_ANSWERS: Final[dict[str, str]] = {}  # never written: a run without a model chain


@final
class Execution(
    RoundMixin, ProviderCallMixin, ToolBatchMixin, ContextGuardMixin, AttemptsMixin, ExecutionState
):
    """One run's execution. Create, call :meth:`run` once."""

    __slots__ = (
        "_added",
        "_answered",
        "_attempt",
        "_attempts",
        "_budget",
        "_calls",
        "_charges",
        "_effort",
        "_executed",
        "_failures",
        "_finish_reason",
        "_guards",
        "_info",
        "_journal",
        "_notify",
        "_output_json",
        "_output_override",
        "_output_value",
        "_plugins",
        "_round_effort",
        "_rounds",
        "_same_inputs",
        "_settings_set",
        "_signal",
        "_stop",
        "_stop_continuations",
        "_store",
        "_suspended",
        "_tools",
        "_tools_tokens",
        "_trace",
        "_transport",
        "_unattested",
        "_unavailable_streak",
        "_unpropagated",
        "_unsupported_reported",
        "_usage",
        "_window",
        "ceiling",
        "emitter",
        "handoffs",
        "run_id",
        "settings",
        "siblings",
        "subagents",
    )

    def __init__(
        self,
        settings: ExecutionSettings,
        *,
        run_id: str,
        store: ConversationStore,
        tools: ToolExecutionService,
        plugins: Sequence[Plugin],
        signal: AbortSignal,
        emitter: EventEmitter,
        notify: Callable[[RunEvent], None] | None,
        journal: JournalBinding | None = None,
    ) -> None:
        self.settings = settings
        self.run_id = run_id
        self.emitter = emitter
        self._store = store
        self._tools = tools
        self._plugins = plugins
        self._signal = signal
        self._notify = notify
        self._added: list[Message] = []
        self._failures: list[PluginFailure] = []
        self._rounds = 0
        self._executed = 0
        self._usage = _NO_USAGE
        self._stop: StopReason = "end_turn"
        self._output_override: str | None = None
        self._same_inputs = SameInputCounter(settings.max_same_tool_inputs)
        self._unavailable_streak = 0
        self._tools_tokens: tuple[tuple[ToolSpec, ...], int] = ((), 0)
        self._window: ContextWindow | None = None
        self._attempts = 1
        self._stop_continuations = 0  # S22: runs a Stop hook continued (bounded)
        self._output_value: object = None
        self._output_json: str | None = None  # the validated value a journal keeps (S18, S40)
        self._transport: OutputTransport = "unchanged"
        self._effort = unresolved_effort(settings.effort, False)
        self._round_effort: EffortResolution | None = None
        self._unattested = False
        self._journal = journal
        self._suspended: tuple[OutsideRequest, ...] = ()
        # S27: only host-supplied context; the run's span derives from the execution id.
        self._trace = RunTrace(settings.trace, run_id) if settings.trace is not None else None
        self._unpropagated: set[str] = set()
        self._unsupported_reported: set[tuple[str, str]] = set()
        self._settings_set = settings.model_settings is not NO_SETTINGS
        self._attempt: str | None = None  # a continuation's own id (S27: its spans are new)
        self._finish_reason: str | None = None
        self._info = RunInfo(run_id, settings.agent_name, settings.provider.name, settings.model)
        self._budget = (
            None
            if settings.limits is None
            else Budget(settings.limits, provider=settings.provider.name, model=settings.model)
        )
        # Issue 28: retries and fallback only when the run has a policy or a chain.
        self._calls = (
            ModelCalls(
                settings.retry,
                (
                    ModelCandidate(settings.provider, settings.model, settings.context_window),
                    *settings.fallback,
                ),
            )
            if settings.retry is not None or settings.fallback
            else None
        )
        # Reply id -> provider (S30), kept once a chain exists; discarded attempts' charges (S29).
        # Shared empty values otherwise (issue 27: a plain run allocates nothing for them).
        self._answered: dict[str, str] = {} if self._calls is not None else _NO_ANSWERS
        self._charges: tuple[tuple[AssistantMessage, str], ...] = ()
        # Issue 29: only a run with guardrails builds their runner.
        self._guards = (
            RunGuardrails(settings.guardrails, emitter, signal) if settings.guardrails else None
        )
        self.subagents: SubagentLedger | None = None  # issue 29: built by the first sub-agent
        # Issue 29: the gate this run's tool calls pass when it runs as a sub-agent (S21: the
        # ceiling); None: the tool service's own. Set before the run starts, for this run only.
        self.ceiling: ToolGate | None = None
        # Issue 28/29: sub-agents of a run with limits take turns (robota.core._agent_tool).
        self.siblings: asyncio.Lock | None = None
        self.handoffs: RunHandoffs | None = None  # issue 29: built by the run's first transfer

    def on_mutation(self, mutation: HistoryMutation) -> None:
        """Record what this run added to history (the agent forwards store mutations here)."""
        if mutation.kind == "append" and mutation.message is not None:
            self._added.append(mutation.message)
            if self.handoffs is not None:  # issue 29: a receiver's tool_search loads (S19)
                self.handoffs.note(self, mutation.message)
            if self._journal is not None:
                self._journal.note(mutation.message)
            if self._notify is not None:
                self._notify(MessageCommitted(mutation.message))

    # ------------------------------------------------------------------ the run

    async def run(self, user_input: str | tuple[MessagePart, ...]) -> RunResult[Any]:
        """Execute the run: append the input, loop rounds, return the result."""
        settings = self.settings
        if self.emitter.enabled:
            self.emitter.emit(
                EventNames.RUN_STARTED,
                {
                    "input": content_text(user_input),
                    "model": settings.model,
                    "agent_name": settings.agent_name,
                    "provider": settings.provider.name,
                    "span_key": self.run_id,
                    "trace": self._trace.event_data() if self._trace is not None else None,
                },
            )
        await self._each_plugin("before_run", self._info, user_input)
        try:
            # S30: a native tool the provider cannot run fails before any transport.
            check_native_tools(settings.provider, settings.native_tools)
            if settings.structured is not None:
                # S18: asked once, before the first model call.
                self._transport = choose_output_transport(settings.provider, settings.model)
            await self._resolve_window()
            if settings.hooks is not None:  # S22: before the prompt enters history
                user_input = await prompt_hooks(
                    settings.hooks,
                    user_input,
                    execution_id=self.run_id,
                    texts=settings.texts,
                    signal=self._signal,
                    traceparent=self._hook_traceparent(),
                )
            if self._guards is not None:  # issue 29: before history and any model call
                await self._guards.check_input(content_text(user_input))
            message = UserMessage(user_input)
            if not isinstance(user_input, str):
                # S30: a part the model is stated not to take is refused before it enters
                # history, so the refusal leaves the conversation usable (the adapter checks
                # again before transport, for every message).
                check_media(settings.provider, settings.model, (message,))
            self._store.append(message)
            if self._journal is not None:
                # S40: the execution's identity, state and starting history (its input last),
                # before any call. Copied only here: a run without a journal stays O(1).
                assert settings.runtime_state is not None
                await self._journal.begin(settings.runtime_state, self._store.snapshot())
            status = await self._settle(self._guarded(self._loop()))
        except GeneratorExit:
            raise  # the coroutine is being closed (see _receive): nothing may be awaited now
        except BaseException as error:
            failure = await self._failed(error)
            if failure is error:
                raise
            raise failure from error
        return await self._finish(status)

    async def resume(self, recovery: Recovery) -> RunResult[Any]:
        """Continue a journaled execution from its latest settled response (S40).

        The store already holds the restored history. Turn-level hooks (``before_run``) are not
        replayed and restored settlements do not re-enter call observers. A run that had moved
        to a fallback model continues on it (issue 28).
        """
        own = recovery.history[recovery.own_from :]
        self._added.extend(own)
        await replay(self, recovery)  # issue 29: the agent the execution had handed to (S40)
        last = recovery.last_call
        handoffs = self.handoffs
        self._resume_model(
            recovery,
            handed_on=handoffs is not None and last is not None and handoffs.before(self, last[1]),
        )
        settings = self.settings
        self._attempt = new_id("resume")
        if self._trace is not None:
            # S27: a continuation is a span of its own under the host's parent.
            self._trace = RunTrace(self._trace.context, self._attempt)
        self._rounds = recovery.rounds
        self._executed = recovery.executed_before
        self._unattested = recovery.unattested
        resumed = recovery.resumed_message
        for message in own:
            if isinstance(message, AssistantMessage):
                self._usage = _add_usage(self._usage, message.usage)
                if message.tool_calls and message is not resumed:
                    # The counts the execution had before its pending batch (S39); the batch
                    # itself is checked again when it is picked up, as it was the first time.
                    self._same_inputs.admit(message.tool_calls)
        try:
            if self._budget is not None:  # S40: what the execution used counts against it
                self._budget.restore(
                    own,
                    requests=recovery.dispatched_calls,
                    resumed=resumed,
                    discarded=recovery.discarded,
                    answered=recovery.answered,
                )
            for key, spend in recovery.children:  # issue 29: sub-agent runs settled before
                reply = recovery.replies.get(key.rpartition("#")[0])  # a crash, listed under
                handoffs = self.handoffs  # the agent that called them (handoffs)
                charge(self, spend, handoffs.ledger_of(self, reply) if handoffs else None)
            check_native_tools(settings.provider, settings.native_tools)
            self._attempts = recovery.attempts
            pending = recovery.pending_requests()
            status: RunStatus
            if recovery.complete or pending:
                # A completed execution returns its result again; one still waiting returns its
                # requests. Nothing runs, nothing is written, no turn-level hook runs again.
                # No run starts, so none is announced (and none ends, S27: no span is opened).
                if pending:
                    self._suspended = pending
                    return self._result("suspended")
                self._stop = recovery.stop_reason or "end_turn"  # type: ignore[assignment]
                self._restore_output(recovery)
                return self._result("complete")
            if self.emitter.enabled:
                trace = self._trace
                self.emitter.emit(
                    EventNames.RUN_RESUMED,
                    {
                        "execution_id": self.run_id,
                        "model": settings.model,
                        "rounds": recovery.rounds,
                        "agent_name": settings.agent_name,
                        "provider": settings.provider.name,
                        "span_key": self._attempt,
                        "trace": trace.event_data() if trace is not None else None,
                    },
                )
            if settings.structured is not None:
                self._transport = choose_output_transport(settings.provider, settings.model)
            await self._resolve_window()
            status = await self._settle(self._guarded(self._loop(recovery)))
        except GeneratorExit:
            raise  # the coroutine is being closed (see _receive): nothing may be awaited now
        except BaseException as error:
            failure = await self._failed(error)
            if failure is error:
                raise
            raise failure from error
        return await self._finish(status)

    def _ended(self, result: RunResult[Any]) -> RunResult[Any]:
        """Emit the run's terminal events (every announced run ends with them)."""
        if self.emitter.enabled:
            if result.status == "suspended":
                self.emitter.emit(
                    EventNames.RUN_SUSPENDED,
                    {"execution_id": self.run_id, "pending_requests": self._suspended},
                )
            self.emitter.emit(
                EventNames.RUN_COMPLETED,
                {
                    "status": result.status,
                    "stop_reason": result.stop_reason,
                    "rounds": result.rounds,
                    "usage": result.usage,
                    "cost": result.cost,
                },
            )
        return result

    def _restore_output(self, recovery: Recovery) -> None:
        last = recovery.last_call
        if last is not None and last[0].forced and not last[1].message.content.strip():
            self._output_override = self.settings.texts.summary_fallback
        structured = self.settings.structured
        if structured is not None and recovery.output is not None:
            # S18, S40: the settled value, validated again; no model call.
            self._output_json = recovery.output
            self._output_value = structured.spec.rebuild(recovery.output)

    async def _continue(self, guard: AbortGuard, recovery: Recovery) -> RunStatus:
        last = recovery.last_call
        if last is None:
            return await self._turn(guard)
        begun, settled = last
        message = recovery.resumed_message
        if begun.forced and settled.outcome == "success":
            if not settled.message.content.strip():
                self._output_override = self.settings.texts.summary_fallback
            return self._stopped(begun.reason or "max_rounds")  # type: ignore[arg-type]
        if message is not None and not message.tool_calls and recovery.attempts > begun.attempt:
            # S18: this reply failed validation and its retry turn is already in history (the
            # retry call was reconciled as not having happened): the retry call follows.
            return await self._turn(guard)
        if message is None:
            # The next model call follows; calls of the last response that history does
            # not answer (it failed or was cut short, then the process died) get theirs.
            for index in recovery.unanswered:
                call = settled.message.tool_calls[index]
                self._store.append(
                    unrun_answer(call, settled.outcome, self.settings.texts).to_message()
                )
            return await self._turn(guard)
        assert self._journal is not None
        self._journal.resume_from(begun.call_id)
        return await self._turn(guard, resumed=(message, recovery.resume_calls))

    def _guarded(self, work: Coroutine[Any, Any, RunStatus]) -> Awaitable[RunStatus]:
        # Issue 29: the output guardrails (and parallel input ones) around the loop.
        if self._guards is None:
            return work
        return self._guards.run(work, lambda: self._result("complete").output)

    async def _settle(self, work: Any) -> RunStatus:
        """Run ``work``; a saved wait becomes the ``suspended`` status (S40)."""
        try:
            status: RunStatus = await work
        except ExecutionSuspendedError:
            journal = self._journal
            if journal is None or not journal.suspended:
                raise
            self._suspended = tuple(journal.suspended)
            status = "suspended"
        if self._journal is not None:
            await self._checkpoint(status)
        return status

    async def _checkpoint(self, status: RunStatus) -> None:
        assert self._journal is not None
        complete = status == "complete"
        await self._journal.checkpoint(
            status, self._stop if complete else None, self._output_json if complete else None
        )

    async def _failed(self, error: BaseException) -> BaseException:
        failure: BaseException = error
        if isinstance(error, Exception) and not isinstance(error, RobotaError):
            # S39: a crash of the pipeline itself becomes a typed error, cause kept.
            failure = InternalError(f"the run failed unexpectedly: {error!r}", cause=error)
        if self.emitter.enabled:
            self.emitter.emit(EventNames.RUN_FAILED, {"error": repr(failure)})
        if isinstance(failure, Exception):
            await self._each_plugin("on_error", self._info, failure)
        return failure

    async def _finish(self, status: RunStatus) -> RunResult[Any]:
        result = self._ended(self._result(status))
        await self._each_plugin("after_run", self._info, result)
        if self._failures:
            result = replace(result, plugin_errors=tuple(self._failures))
        return result

    def _hook_traceparent(self) -> str | None:
        return self._trace.hook_traceparent if self._trace is not None else None

    def _final_text(self) -> str:
        if self._output_override is not None:
            return self._output_override
        for message in reversed(self._added):
            if isinstance(message, AssistantMessage):
                return message.content
        return ""

    async def _each_plugin(self, hook: ExtensionHook, *args: object) -> None:
        # S20: a failing plugin hook is recorded, never fatal to the run; the call into the
        # plugin happens inside that guard (call_plugin_hook), not here.
        for plugin in self._plugins:
            await call_plugin_hook(plugin, hook, self._failures, *args)

    def _aborted(self) -> bool:
        # A call rather than an attribute read: the signal can abort during any await.
        return self._signal.aborted

    def _stopped(self, reason: StopReason) -> RunStatus:
        self._stop = reason
        return "interrupted" if reason == "interrupted" else "complete"

    # ------------------------------------------------------------------ records

    def _result(self, status: RunStatus) -> RunResult[Any]:
        assistants = [m for m in self._added if isinstance(m, AssistantMessage)]
        last = assistants[-1] if assistants else None
        text = self._final_text()
        output: object = text
        if self.settings.structured is not None:
            output = self._output_value
        name = self.settings.agent_name
        usage, cost, by_agent = self._usage, self._cost(assistants), NO_AGENTS
        if self.handoffs is not None:  # issue 29: each agent of the chain its own entry
            usage, cost, by_agent = self.handoffs.roll_up(self, usage, cost)
        elif self.subagents is not None:  # issue 29: what its sub-agents used is its spending
            usage, cost, by_agent = roll_up(self.subagents, name, usage, cost)
        return RunResult(
            output=output,
            status=status,
            usage=usage,
            agent=name,
            sub_usage=by_agent,
            messages=tuple(self._added),
            run_id=self.run_id,
            model=last.model if last is not None else None,
            provider=self._answered_by_last(last),
            cost=cost,
            rounds=self._rounds,
            tool_calls_executed=self._executed,
            stop_reason=self._stop,
            text=text,
            attempts=self._attempts,
            effort=self._effort,
            execution_id=self.run_id,
            pending_requests=self._suspended,
            context_window=self._window,
            guardrails=self._guards.records if self._guards is not None else (),
        )

    def _answered_by_last(self, last: AssistantMessage | None) -> str | None:
        """The provider that answered the run's last reply (S30)."""
        if last is None:
            return None
        if not self._answered:
            # No chain recorded who answered: the run's provider, without reading the id (a
            # message's id is spelled on first read, issue 27: a plain run never reads it).
            return self.settings.provider.name
        return self._answered.get(last.id, self.settings.provider.name)

    def spend(self) -> Spend:
        """What this run used so far, its sub-agents' included (issue 29: for a parent run).

        Read after the run ended however it ended, so a child that failed still charges its
        parent. The limits' counters are the truth when the run has limits (a parent with
        limits always gives its child some); otherwise rounds and executed calls stand in.
        """
        assistants = [m for m in self._added if isinstance(m, AssistantMessage)]
        name = self.settings.agent_name
        usage, cost = self._usage, self._cost(assistants)
        by_agent: Mapping[str, AgentUsage] = {name: AgentUsage(usage, cost)}
        if self.handoffs is not None:
            usage, cost, by_agent = self.handoffs.roll_up(self, usage, cost)
        elif self.subagents is not None:
            usage, cost, by_agent = roll_up(self.subagents, name, usage, cost)
        budget = self._budget
        if budget is not None:
            return Spend(usage, cost, budget.requests, budget.tool_calls, by_agent)
        return Spend(usage, cost, self._rounds, self._executed, by_agent)

    def _cost(self, assistants: list[AssistantMessage]) -> float | None:
        # Priced per answering model (S30); unknown rather than guessed (charged_cost).
        provider = self.settings.provider.name
        answered = self._answered
        charges = [(m, answered.get(m.id, provider) if answered else provider) for m in assistants]
        charges.extend(self._charges)
        return charged_cost(charges, self.settings.model, self._unattested)


# --- issue 29: a continuation takes again the handoffs its history proves (S40) ---------------


@runtime_checkable
class Transferring(Protocol):
    """A ``transfer_to_<name>`` tool, as the run sees it (robota.core._handoff.TransferTool)."""

    def accept(self, run: Execution) -> None:
        """Record its transfer on ``run`` (``run.handoffs.requested``), to take after the batch."""


async def replay(run: Execution, recovery: Recovery) -> None:
    """Take again the handoffs a continued execution's history proves (S40).

    The run starts on the entry agent, as it did; each batch of its own messages whose accepted
    transfer (a ``transfer_to_<name>`` call answered without error) is answered in full hands
    it on, each receiver found by its tool name among the tools of the agent active then. The
    latest batch, when history does not answer it yet, keeps its transfer for when the batch
    settles — a durable settlement of the transfer counts as its answer — exactly as the
    execution would have. Call it with the run's messages restored (``run._added``).
    """
    own = recovery.history[recovery.own_from :]
    offset = len(run._added) - len(own)
    resumed = recovery.resumed_message
    for position, message in enumerate(own):
        if not isinstance(message, AssistantMessage) or not message.tool_calls:
            continue
        # A batch's answers follow it, before the next reply (S36: ids may repeat across turns).
        answers: dict[str, tuple[int, ToolMessage]] = {}
        for later in range(position + 1, len(own)):
            item = own[later]
            if isinstance(item, AssistantMessage):
                break
            if isinstance(item, ToolMessage):
                answers.setdefault(item.tool_call_id, (later, item))
        calls = message.tool_calls
        complete = all(call.id in answers for call in calls)
        if not complete and message is not resumed:
            continue  # its calls never ran (answered on the continuation, S34): no transfer
        for index, call in enumerate(calls):
            tool: object = run._tools.registry.get(call.name)
            if not isinstance(tool, Transferring):
                continue
            known = answers.get(call.id)
            failed = known[1].is_error if known is not None else None
            if failed is None and message is resumed and recovery.last_call is not None:
                key = call_key_of(recovery.last_call[0].call_id, index)
                effect = recovery.effects.get(key)
                if effect is not None and effect.outcome is not None:
                    failed = effect.outcome.result.is_error
            if failed is False:
                tool.accept(run)  # a batch's first accepted transfer is its only one
                break
        state = run.handoffs
        if complete and state is not None and state.requested is not None:
            last = max(answers[call.id][0] for call in calls)
            await state.take(run, at=offset + last + 1)
