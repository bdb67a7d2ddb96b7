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
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, Literal, TypeAlias, final

from robota.core._abort import AbortSignal, abort_error_from_reason, is_abort
from robota.core._cancel import AbortGuard
from robota.core._context import (
    CONTEXT_GUARD_THRESHOLD,
    ContextUsage,
    estimate_message_tokens,
    estimate_text_tokens,
    estimate_tools_tokens,
)
from robota.core._emit import EventEmitter
from robota.core._errors import (
    EmptyCompletionError,
    ExecutionControlError,
    ExecutionSuspendedError,
    InternalError,
    ProviderError,
    RobotaError,
    SameToolInputLoopError,
    StructuredOutputError,
)
from robota.core._events import EventNames
from robota.core._history import ConversationStore, HistoryMutation, PendingAssistant
from robota.core._logging import get_logger
from robota.core._messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    new_id,
    now,
)
from robota.core._models import ContextWindow, get_model_context_window, resolve_context_window
from robota.core._parts import MessagePart, content_text
from robota.core._plugins import (
    ExtensionHook,
    Plugin,
    PluginFailure,
    RunInfo,
    call_plugin_hook,
)
from robota.core._run_events import MessageCommitted, RoundStarted, RunEvent
from robota.core._texts import ModelTexts, render
from robota.core._tracing import RunTrace
from robota.core.execution._attempts import NO_USAGE as _NO_USAGE
from robota.core.execution._attempts import AttemptsMixin, charged_cost
from robota.core.execution._attempts import add_usage as _add_usage
from robota.core.execution._cache import CachedResponse
from robota.core.execution._guardrails import RunGuardrails
from robota.core.execution._guards import (
    TOOL_RESULT_BUDGET,
    UNAVAILABLE_TOOL_ROUNDS,
    SameInputCounter,
    describe_calls,
    omitted_result_notice,
)
from robota.core.execution._handoffs import RunHandoffs, replay
from robota.core.execution._journal import OutsideRequest
from robota.core.execution._journaled import JournalBinding, Recovery
from robota.core.execution._lifecycle import prompt_hooks, stop_hooks
from robota.core.execution._limits import Budget
from robota.core.execution._result import AgentUsage, RunResult, RunStatus, StopReason
from robota.core.execution._retry import (
    ModelCalls,
    ModelCandidate,
    Retrying,
    Switch,
)
from robota.core.execution._settings import ExecutionSettings
from robota.core.execution._structured import (
    InstructedMessages,
    OutputTransport,
    choose_output_transport,
)
from robota.core.execution._subagents import NO_AGENTS, Spend, SubagentLedger, charge, roll_up
from robota.core.providers._capabilities import (
    check_media,
    check_native_tools,
    omit_unsupported_media,
    unsupported_settings,
)
from robota.core.providers._contract import (
    ChatRequest,
    NativePayload,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    ToolChoice,
    ToolSpec,
)
from robota.core.providers._effort import EffortOutcome, EffortResolution, EffortSelection
from robota.core.providers._fingerprint import request_fingerprint
from robota.core.providers._settings import NO_SETTINGS
from robota.core.tools._executor import (
    ToolCallOutcome,
    ToolExecutionService,
    ToolGate,
    interrupted,
    not_dispatched,
)

__all__ = ["Execution", "ExecutionSettings"]

_Outcome: TypeAlias = Literal["success", "failure", "interrupted"]


_NO_ANSWERS: Final[dict[str, str]] = {}  # never written: a run without a model chain


@functools.lru_cache(maxsize=32)
def _unresolved_effort(requested: EffortSelection, dispatched: bool) -> EffortOutcome:
    # Most rounds' outcome (no resolution reported): one shared value per selection and dispatch,
    # not one more object in every RunResult a caller keeps.
    return EffortOutcome(requested, None, native_control_sent=False, dispatched=dispatched)


_log = get_logger("robota.execution")
"""Added for a message without usage: the run's total is then partial (S29)."""


@final
class Execution(AttemptsMixin):
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
        self._effort = _unresolved_effort(settings.effort, False)
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
                    _unrun_answer(call, settled.outcome, self.settings.texts).to_message()
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

    async def _loop(self, recovery: Recovery | None = None) -> RunStatus:
        """The turns of a run; a continuation's first one picks up from ``recovery`` (S40)."""
        structured = self.settings.structured
        with AbortGuard(self._signal) as guard:
            while True:
                if recovery is not None:
                    status = await self._continue(guard, recovery)
                    recovery = None
                else:
                    status = await self._turn(guard)
                if structured is None or status != "complete" or self._stop == "context_limit":
                    if await self._stop_continues(status):
                        continue
                    return status
                # S18: validate the final text on every run; retry with the issues and schema.
                # A continuation validates the settled reply it resumed from the same way, so a
                # reply that settled before the process died is not asked for again (S40).
                saved, value, issues = structured.spec.validate(self._final_text())
                if not issues:
                    self._output_value = value
                    self._output_json = saved
                    if await self._stop_continues(status):
                        continue
                    return status
                if self._attempts > structured.retries:
                    raise StructuredOutputError(
                        f"the reply did not match the requested schema after {self._attempts} "
                        f"attempt(s): " + "; ".join(issues),
                        issues=issues,
                        attempts=self._attempts,
                    )
                self._attempts += 1
                feedback = structured.feedback.replace(
                    "{issues}", "\n".join(f"- {issue}" for issue in issues)
                ).replace("{schema}", structured.spec.schema_text)
                self._output_override = None
                self._store.append(UserMessage(feedback))

    async def _stop_continues(self, status: RunStatus) -> bool:
        """S22: whether a ``Stop`` hook blocked the end of a replied turn (bounded)."""
        hooks = self.settings.hooks
        if hooks is None or status != "complete" or self._stop != "end_turn":
            return False
        reason = await stop_hooks(
            hooks,
            self._final_text(),
            execution_id=self.run_id,
            continuations=self._stop_continuations,
            signal=self._signal,
            traceparent=self._hook_traceparent(),
        )
        if reason is None:
            return False
        self._stop_continuations += 1
        self._output_override = None
        self._store.append(
            UserMessage(render(self.settings.texts.stop_hook_feedback, reason=reason))
        )
        return True

    def _hook_traceparent(self) -> str | None:
        return self._trace.hook_traceparent if self._trace is not None else None

    def _final_text(self) -> str:
        if self._output_override is not None:
            return self._output_override
        for message in reversed(self._added):
            if isinstance(message, AssistantMessage):
                return message.content
        return ""

    def _instruction(self) -> str:
        """The structured-output instruction this request carries, or ``""`` (S18)."""
        structured = self.settings.structured
        if (
            structured is None
            or self._attempts != 1
            or self._transport not in ("json_mode", "instruction")
        ):
            return ""
        return structured.instruction.replace("{schema}", structured.spec.schema_text)

    def _request(
        self,
        messages: Sequence[Message],
        tools: tuple[ToolSpec, ...],
        tool_choice: ToolChoice,
        instruction: str,
    ) -> ChatRequest:
        settings = self.settings
        structured = settings.structured
        # S30: media in history the model cannot take (a tool's image) go as a notice.
        # Only the messages the store knows carry media are read (issue 4: a round's cost
        # does not grow with the history).
        carriers = self._store.media_messages
        omitted: tuple[str, ...] = ()
        if carriers:
            messages, omitted = omit_unsupported_media(
                settings.provider,
                settings.model,
                messages,
                settings.texts.media_omitted_notice,
                carriers=carriers,
            )
        if omitted:
            self._report_omitted(omitted)
        return ChatRequest(
            model=settings.model,
            messages=InstructedMessages(messages, instruction) if instruction else messages,
            tools=tools,
            tool_choice=tool_choice,
            native_tools=settings.native_tools,
            response_format=structured.spec.response_format(self._transport)
            if structured is not None
            else None,
            effort=settings.effort,
            settings=settings.model_settings,
        )

    def _history(self) -> Sequence[Message]:
        # Issue 29: after a handoff with an input filter, the receiver sees the filtered history.
        snapshot = self._store.provider_snapshot()
        return snapshot if self.handoffs is None else self.handoffs.view(snapshot)

    def _ordinary_request(self, tools_offered: bool) -> tuple[ChatRequest, str]:
        """A round's request for the current model, and its structured-output instruction."""
        output_instruction = self._instruction()
        return self._request(
            self._history(),
            self._tools.offered_specs(self._context_window, self.ceiling) if tools_offered else (),
            self.settings.tool_choice,
            output_instruction,
        ), output_instruction

    async def _turn(
        self,
        guard: AbortGuard,
        resumed: tuple[AssistantMessage, tuple[int, ...]] | None = None,
    ) -> RunStatus:
        settings = self.settings
        tools_offered = settings.tool_choice != "none"
        while True:
            message: AssistantMessage | None
            pending_calls: tuple[int, ...] | None = None
            if resumed is not None:
                # S40: the latest settled response, answered where history does not yet.
                (message, pending_calls), resumed = resumed, None
            else:
                if self._aborted():
                    return self._stopped("interrupted")
                if settings.max_rounds and self._rounds >= settings.max_rounds:
                    return await self._finish_without_text(guard, "max_rounds")
                request, output_instruction = self._ordinary_request(tools_offered)
                if self._calls is None:  # one attempt, no policy or chain: no retry frame
                    called = await self._provider_call(
                        guard, request, forced=False, extra=output_instruction
                    )
                    assert not isinstance(called, Retrying)  # only a policy or chain retries
                    message = called
                else:
                    message = await self._provider_round(
                        guard,
                        request,
                        forced=False,
                        extra=output_instruction,
                        rebuild=functools.partial(self._ordinary_request, tools_offered),
                    )
            if message is None:
                return self._stopped("context_limit")
            if message.state == "interrupted":
                return self._stopped("interrupted")
            if not message.tool_calls:
                if message.content.strip():
                    return self._stopped("end_turn")
                return await self._finish_without_text(guard, "empty_reply")
            if not tools_offered:
                self._refuse_batch(message.tool_calls, "this run set tool_choice='none'")
                raise ProviderError(
                    f"the model returned {len(message.tool_calls)} tool call(s) although this "
                    "run set tool_choice='none'; none was dispatched",
                    code="tool_choice_violated",
                    provider=self.settings.provider.name,  # S30: a fallback's, after a switch
                    model=message.model,
                )
            self._check_same_inputs(message.tool_calls)
            if self._budget is not None:
                self._check_limit(message, self._budget.admit_tools(len(message.tool_calls)))
            if self._guards is not None:  # issue 29: no tool body before input guardrails pass
                await self._guards.passed(message.tool_calls, self._refuse_batch)
            unavailable = await self._tool_round(message.tool_calls, pending_calls)
            if self._aborted():
                return self._stopped("interrupted")
            if self.handoffs is not None and await self.handoffs.take(self):
                continue  # issue 29: the batch settled; the receiver continues the run
            self._unavailable_streak = self._unavailable_streak + 1 if unavailable else 0
            if self._unavailable_streak >= UNAVAILABLE_TOOL_ROUNDS:
                instruction = self.settings.texts.unavailable_tools_instruction.replace(
                    "{calls}", describe_calls(unavailable)
                )
                return await self._forced_call(guard, instruction, "unavailable_tools")

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

    async def _finish_without_text(
        self, guard: AbortGuard, reason: Literal["max_rounds", "empty_reply"]
    ) -> RunStatus:
        if self.settings.allow_tool_only_completion:
            last = self._store.messages[-1] if len(self._store) else None
            if isinstance(last, ToolMessage):
                return self._stopped("tool_only")  # the tool results are the answer
            raise EmptyCompletionError(
                "the model's reply had neither text nor a tool call, and tool-only completion "
                "was allowed, so no summary was requested"
            )
        return await self._forced_call(guard, self.settings.texts.summary_instruction, reason)

    async def _forced_call(
        self, guard: AbortGuard, instruction: str, reason: StopReason
    ) -> RunStatus:
        # S39/S37: one call, no local tools, tool_choice none, the run's signal. The instruction
        # exists only in this request; it is never written into history.
        settings = self.settings
        build = functools.partial(self._forced_request, instruction)
        request, extra = build()
        message = await self._provider_round(
            guard, request, forced=True, extra=extra, reason=reason, rebuild=build
        )
        if message is None:
            return self._stopped("context_limit")
        if message.state == "interrupted":
            return self._stopped("interrupted")
        if not message.content.strip():
            self._output_override = settings.texts.summary_fallback
        return self._stopped(reason)

    def _forced_request(self, instruction: str) -> tuple[ChatRequest, str]:
        output_instruction = self._instruction()
        base = self._request(self._history(), (), "none", output_instruction)
        request = replace(base, messages=(*base.messages, UserMessage(instruction)))
        return request, f"{output_instruction}{instruction}"

    # ------------------------------------------------------------------ one provider call

    async def _provider_round(
        self,
        guard: AbortGuard,
        request: ChatRequest,
        *,
        forced: bool,
        extra: str = "",
        reason: StopReason | None = None,
        rebuild: Callable[[], tuple[ChatRequest, str]] | None = None,
    ) -> AssistantMessage | None:
        """The round's provider call, tried again while the run's policy or chain says (issue 28).

        Each attempt is its own call (:meth:`_provider_call`); ``rebuild`` re-projects the
        request after a switch to another model (S17, S18, S30).
        """
        again: Retrying | None = None
        while True:
            called = await self._provider_call(
                guard, request, forced=forced, extra=extra, reason=reason, again=again
            )
            if not isinstance(called, Retrying):
                return called
            again = called
            waited = await self._next_attempt(guard, called)
            if waited is not None:
                return waited  # S23: aborted during the backoff; the round is interrupted
            if isinstance(called.step, Switch):
                assert self._calls is not None
                await self._switch(self._calls.current)
                if rebuild is not None:
                    request, extra = rebuild()

    async def _provider_call(
        self,
        guard: AbortGuard,
        request: ChatRequest,
        *,
        forced: bool,
        extra: str = "",
        reason: StopReason | None = None,
        again: Retrying | None = None,
    ) -> AssistantMessage | Retrying | None:
        """One attempt; ``again``: the failed attempt of the same round it follows (issue 28)."""
        settings = self.settings
        # S39: a retry resends what was checked; another model's window is checked anew.
        fresh = again is None or isinstance(again.step, Switch)
        blocked = self._context_guard(request, extra) if fresh else None
        if blocked is not None:
            # S39: not sent; a neutral diagnostic explains why.
            diagnostic = commit_diagnostic(
                self._store, settings.texts.context_limit_message(blocked), self.emitter
            )
            if self._journal is not None:
                self._journal.keep(diagnostic)  # saved with the checkpoint, so a resume returns it
            return None
        if self._budget is not None:  # S31: what this attempt may cost, before it is sent
            request = self._budget.admit_call(
                request, self._input_estimate(request, extra), provider=settings.provider.name
            )
        if again is None:
            self._rounds += 1
            if self._calls is not None:
                self._calls.new_call()
        round_no = self._rounds
        attempt = self._calls.attempt if self._calls is not None else 1
        observation_id = new_id("obs")  # S31: fragments of this round dedupe by identity
        round_emitter = self.emitter.child("round", str(round_no))
        info = self._info
        if self._plugins:  # the per-call hooks' view of the round; nobody else reads it
            info = RunInfo(info.run_id, info.agent_name, info.provider, info.model, round_no)
        if self._notify is not None:
            self._notify(RoundStarted(round_no, observation_id))
        if round_emitter.enabled:
            round_emitter.emit(
                EventNames.PROVIDER_REQUEST,
                {
                    "request": request,
                    "requested_model": settings.model,
                    "forced": forced,
                    "observation_id": observation_id,
                    "provider": settings.provider.name,
                    "attempt": attempt,
                },
            )
        await self._each_plugin("before_provider_call", info, request)
        journal = self._journal
        call_id = ""
        if journal is not None:
            # S40: durable before dispatch, with the history committed since the last record.
            call_id = await journal.model_call_started(
                round_no, forced=forced, reason=reason, attempt=self._attempts
            )
        elif self._trace is not None or round_emitter.enabled:
            call_id = new_id("call")  # S27: the provider call's own id, its span's key
        started_at = now()
        pending = self._store.begin_assistant(model=settings.model)

        def observe(outcome: _Outcome, dispatched: bool) -> None:
            # S39: one content-free observation per attempted provider round.
            if round_emitter.enabled:
                round_emitter.emit(
                    EventNames.ROUND_COMPLETED,
                    {
                        "round": round_no,
                        "observation_id": observation_id,
                        "started_at": started_at,
                        "ended_at": now(),
                        "outcome": outcome,
                        "forced": forced,
                        "model": pending.model,
                        "dispatched": dispatched,
                        "provider": settings.provider.name,
                        "requested_model": settings.model,
                        "call_id": call_id if dispatched else None,
                        "finish_reason": self._finish_reason,
                        "usage": pending.usage,
                        "attempt": attempt,
                    },
                )

        outcome: _Outcome = "success"
        failure: RobotaError | None = None
        dispatched = True
        self._round_effort = None
        self._finish_reason = None
        try:
            dispatched = await self._receive(
                guard, pending, request, round_emitter, forced=forced, call_id=call_id
            )
            if journal is not None and self._aborted():
                # S23: a journaled run joined settlement; the late response is recorded, but it
                # never replaces the cancellation that won.
                outcome = "interrupted"
        except BaseException as error:
            if isinstance(error, Exception) and is_abort(error, self._signal):
                outcome = "interrupted"
            elif isinstance(error, Exception) and not isinstance(error, ExecutionControlError):
                outcome = "failure"
                failure = _as_provider_error(error, settings.provider.name, pending.model)
            else:
                # A control outcome (S39), or cancellation of the run's task: commit, then
                # let it propagate.
                cut = pending.commit(interrupted=True)
                self._answer_unrun(cut, "interrupted")
                observe("failure" if isinstance(error, Exception) else "interrupted", True)
                raise
        if failure is not None and self._calls is not None:
            step = self._calls.after_failure(failure, self._refusal(request))
            if step is not None:  # issue 28: discarded, not committed (S34); observed (S39)
                await self._discard(pending, call_id, dispatched, step, failure)
                observe("failure", dispatched)
                return Retrying(step, failure, pending.text, round_no, settings.provider)
        if failure is not None:
            # S39: the failure is surfaced as a readable assistant message, then raised.
            notice = render(self.settings.texts.request_failed_notice, error=failure.message)
            pending.append_text(f"\n\n{notice}" if pending.text else notice)
        message = pending.commit(interrupted=outcome != "success")
        self._usage = _add_usage(self._usage, message.usage)
        if dispatched and (message.usage is None or message.usage.partial):
            self._unattested = True  # a charge nobody can state: the run's cost is unknown
        if self._calls is not None:
            self._answered[message.id] = settings.provider.name  # S30: priced where it ran
        if journal is not None:
            # S40/S23: the response — a late one's usage and tool intents included — is durable
            # before it is used; a failed write wins over a cancellation that raced it.
            await journal.model_call_settled(
                call_id, message, outcome, dispatched, **self._answered_by()
            )
        if outcome != "success":
            self._answer_unrun(message, outcome)
        self._record_effort(dispatched)
        observe(outcome, dispatched)
        if round_emitter.enabled:
            round_emitter.emit(
                EventNames.PROVIDER_RESPONSE,
                {
                    "message": message,
                    "forced": forced,
                    "observation_id": observation_id,
                    "dispatched": dispatched,
                    "effort": self._effort,
                },
            )
            round_emitter.emit(EventNames.ASSISTANT_COMMITTED, {"message": message})
        await self._each_plugin("after_provider_call", info, message)
        # S31: every settled call counts, a failed one too; reported usage may pass the estimate.
        exceeded = (
            self._budget.settled(message, dispatched, provider=settings.provider.name)
            if self._budget is not None
            else None
        )
        if failure is not None:
            raise failure
        if exceeded is not None:
            self._check_limit(message, exceeded)
        return message

    def _answer_unrun(self, message: AssistantMessage, outcome: _Outcome) -> None:
        """Answer the calls of a response that did not complete (S34, S38).

        They never ran; each gets its answer, so no later request carries a call without its
        result.
        """
        for call in message.tool_calls:
            self._store.append(_unrun_answer(call, outcome, self.settings.texts).to_message())

    def _record_effort(self, dispatched: bool) -> None:
        # S24: the outcome says what went on the wire. A round without dispatch (a cache hit)
        # keeps the recorded resolution for audit but never claims a control was sent.
        resolution = self._round_effort
        if resolution is None:
            self._effort = _unresolved_effort(self.settings.effort, dispatched)
            return
        self._effort = EffortOutcome(
            self.settings.effort,
            resolution,
            native_control_sent=dispatched and resolution.sends_control,
            dispatched=dispatched,
        )

    async def _receive(
        self,
        guard: AbortGuard,
        pending: PendingAssistant,
        request: ChatRequest,
        round_emitter: EventEmitter,
        *,
        forced: bool,
        call_id: str = "",
    ) -> bool:
        """Stream the response into ``pending``; returns whether the provider was called."""
        settings = self.settings
        provider = settings.provider
        cache = settings.response_cache
        key = request_fingerprint(request) if cache is not None else ""
        if cache is not None:
            cached = await guard.call(lambda: cache.get(key))
            if cached is not None:
                for event in cached.events:
                    self._apply(event, pending, round_emitter, forced=forced)
                return False  # a no-dispatch round (S30)
        # S24: resolved before dispatch, so a call that then fails or is aborted still records
        # what went on the wire; a resolution on the response (ResponseDone.effort) refines it.
        self._round_effort = provider.resolve_effort(request)
        if self._settings_set:
            self._report_unsupported(request, round_emitter)
        sent = self._traced(request, call_id, round_emitter)
        stream: AsyncIterator[StreamEvent]
        if round_emitter.enabled:
            stream = provider.chat_stream_raw(
                sent, signal=self._signal, capture=_NativeCapture(round_emitter)
            )
        else:
            stream = provider.chat_stream(sent, signal=self._signal)
        recorded: list[StreamEvent] | None = [] if cache is not None else None
        # S23: a journaled run joins provider settlement — the provider observes the signal
        # itself, and what it returned late (usage, tool intents) is recorded, not dropped.
        join = self._journal is not None

        async def consume() -> None:
            while True:
                if not join and self._signal.aborted:
                    # An abort that landed while the stream did not suspend (buffered events,
                    # another thread): the guard's cancel cannot reach it, so check here.
                    raise abort_error_from_reason(self._signal.reason)
                try:
                    event = await stream.__anext__()
                except StopAsyncIteration:
                    return
                if recorded is not None:
                    recorded.append(event)
                self._apply(event, pending, round_emitter, forced=forced)

        closing = False
        try:
            # One guard for the whole stream, not one per event: an abort lands at the await
            # it interrupts either way (the events applied so far are kept).
            await (consume() if join else guard.call(consume))
        except GeneratorExit:
            # The run's coroutine is being closed, not cancelled: its event loop is gone or
            # will not run it again (a Temporal worker evicting a workflow, a task garbage-
            # collected). The stream is closed by the same close; awaiting here would fail.
            closing = True
            raise
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None and not closing:
                await aclose()
        if cache is not None and recorded is not None:
            answered = pending.model or settings.model
            # S30: keyed by the model that answered, so it is never served for another model.
            if answered != request.model:
                key = request_fingerprint(request, model=answered)
            await cache.put(key, CachedResponse(answered, tuple(recorded)))
        return True

    def _report_omitted(self, kinds: tuple[str, ...]) -> None:
        """Say, once per run for each model and kind, which media were sent as a notice (S30)."""
        model, provider = self.settings.model, self.settings.provider.name
        for kind in kinds:
            if (model, kind) in self._unsupported_reported:
                continue
            self._unsupported_reported.add((model, kind))
            _log.warning("media the model does not take; sent as a notice", media=kind, model=model)
            if self.emitter.enabled:
                self.emitter.emit(
                    EventNames.MEDIA_OMITTED, {"media": kind, "model": model, "provider": provider}
                )

    def _report_unsupported(self, request: ChatRequest, emitter: EventEmitter) -> None:
        """Say, once per run for each model and field, which settings are not sent (S28, S30).

        The adapter skips a set field its capability table does not list for the model; the run
        reports it here rather than letting it vanish.
        """
        provider = self.settings.provider
        for name in unsupported_settings(provider, request):
            if (request.model, name) in self._unsupported_reported:
                continue
            self._unsupported_reported.add((request.model, name))
            _log.warning(
                "model setting not supported; not sent",
                setting=name,
                model=request.model,
                provider=provider.name,
            )
            if emitter.enabled:
                emitter.emit(
                    EventNames.SETTING_UNSUPPORTED,
                    {"setting": name, "model": request.model, "provider": provider.name},
                )

    def _traced(self, request: ChatRequest, call_id: str, emitter: EventEmitter) -> ChatRequest:
        """The request as handed to the provider, with this call's trace context (S27).

        Resolved here, at invocation — after the request was announced and after a cache miss —
        so no event contains it. A provider that does not declare propagation gets nothing; when
        the host listed origins it is told which provider, by name only, once per run.
        """
        trace = self._trace
        if trace is None:
            return request
        provider = self.settings.provider
        if not provider.propagates_trace_context():
            context = trace.context
            if context.origins and provider.name not in self._unpropagated:
                self._unpropagated.add(provider.name)
                _log.warning("provider does not propagate trace context", provider=provider.name)
                if emitter.enabled:
                    emitter.emit(EventNames.TRACE_NOT_PROPAGATED, {"provider": provider.name})
            return request
        return replace(request, trace=trace.handed(call_id))

    def _apply(
        self,
        event: StreamEvent,
        pending: PendingAssistant,
        round_emitter: EventEmitter,
        *,
        forced: bool,
    ) -> None:
        if isinstance(event, TextDelta):
            pending.append_text(event.text)
            if self._notify is not None:
                self._notify(event)
        elif isinstance(event, ToolCallReady):
            if forced:
                # S39: a forced call's tool calls are never dispatched, and never committed as
                # calls that would go unanswered.
                if round_emitter.enabled:
                    round_emitter.emit(
                        EventNames.TOOL_SKIPPED,
                        {
                            "reason": "forced_call",
                            "requested_tool": event.call.name,
                            "provider_call_id": event.call.id,
                        },
                    )
                return
            pending.add_tool_call(event.call)
        elif isinstance(event, ResponseDone):
            if event.model:
                pending.model = event.model  # S30: the model that actually answered
            pending.usage = event.usage
            pending.continuation = event.continuation
            self._finish_reason = event.finish_reason
            if event.effort is not None:
                self._round_effort = event.effort
        else:
            raise ProviderError(
                f"provider {self.settings.provider.name!r} yielded {type(event).__name__}, which "
                "is not a stream event (TextDelta, ToolCallReady or ResponseDone)",
                provider=self.settings.provider.name,
            )

    def _input_estimate(self, request: ChatRequest, extra: str) -> int:
        """The pre-send estimate of a request's input tokens (S31, S39)."""
        return (
            self._store.context.effective_tokens(self.settings.context_floor)
            + self._tools_tokens_of(request.tools)
            + (estimate_text_tokens(extra) if extra else 0)
        )

    def _context_guard(self, request: ChatRequest, extra: str) -> ContextUsage | None:
        # S39 pre-send guard: estimate the request against the model's window (S13, S31).
        tokens = self._input_estimate(request, extra)
        window = self._context_window()
        if window is None or tokens <= CONTEXT_GUARD_THRESHOLD * window:
            return None  # an unknown window has no size to check against (S13, S39)
        usage = ContextUsage(tokens, window, self._store.context.reported)
        if self.emitter.enabled:
            self.emitter.emit(
                EventNames.CONTEXT_BLOCKED,
                {"tokens": tokens, "window": window, "threshold": CONTEXT_GUARD_THRESHOLD},
            )
        return usage

    async def _resolve_window(self) -> None:
        # S13/S39: once per run, before its first call — the caller's window, the server's
        # report, the registered table; else unknown, which the run states (event and result).
        settings = self.settings
        try:
            # S23: the question is one more await the run's abort ends; the run then settles as
            # interrupted at its first round, with the window left unresolved.
            with AbortGuard(self._signal) as guard:
                window = await guard.call(
                    lambda: resolve_context_window(
                        settings.provider, settings.model, given=settings.context_window
                    )
                )
        except Exception as error:
            if is_abort(error, self._signal):
                return
            raise
        self._window = window
        if not window.known and self.emitter.enabled:
            self.emitter.emit(
                EventNames.CONTEXT_WINDOW_UNKNOWN,
                {"model": settings.model, "provider": settings.provider.name},
            )

    def _context_window(self) -> int | None:
        if self._window is None:
            # Not resolved yet (nothing awaited so far): the caller's window or the table.
            settings = self.settings
            if settings.context_window is not None:
                return settings.context_window
            return get_model_context_window(settings.model, provider=settings.provider.name)
        return self._window.tokens

    def _tools_tokens_of(self, specs: tuple[ToolSpec, ...]) -> int:
        cached_specs, tokens = self._tools_tokens
        if cached_specs is not specs:
            tokens = estimate_tools_tokens(specs)
            self._tools_tokens = (specs, tokens)
        return tokens

    # ------------------------------------------------------------------ tools

    def _check_same_inputs(self, calls: tuple[ToolCall, ...]) -> None:
        offending = self._same_inputs.admit(calls)
        if offending is None:
            return
        limit = self._same_inputs.limit
        if self._journal is None:
            # S39: without a journal the batch is answered in history; a journaled run keeps its
            # durable recovery authority instead of inventing transcript-only settlements.
            self._refuse_batch(
                calls,
                f"{offending.name!r} was called with identical input more than {limit} times",
            )
        raise SameToolInputLoopError(
            f"tool {offending.name!r} was called with byte-identical input more than {limit} "
            "times in this run; the batch was not dispatched",
            tool_name=offending.name,
            limit=limit or 0,
        )

    def _check_limit(self, message: AssistantMessage, error: RobotaError | None) -> None:
        """Raise a usage-limit stop (S31), answering the response's calls first.

        Without a journal each call is answered as not dispatched (S34, S39: as for the
        identical-input guard); a journaled run keeps its durable recovery authority.
        """
        if error is None or message.state == "interrupted":
            return  # an interrupted reply's calls are answered already, and its abort wins
        if self._journal is None and message.tool_calls:
            self._refuse_batch(message.tool_calls, error.message)
        raise error

    def _refuse_batch(self, calls: tuple[ToolCall, ...], reason: str) -> None:
        # The calls stay in history with explicit "not dispatched" answers, so a later turn never
        # sends a call without its result (S39).
        for call in calls:
            self._store.append(not_dispatched(call, reason, self.settings.texts).to_message())

    async def _tool_round(
        self, calls: tuple[ToolCall, ...], pending: tuple[int, ...] | None = None
    ) -> list[ToolCall]:
        """Run the batch; return the calls that named unavailable tools (S37).

        ``pending``: on a continuation (S40), the calls history does not answer yet; the others
        are already answered, and a durable settlement among the pending ones is reused.
        """
        journal = self._journal
        outcomes: list[ToolCallOutcome | None] = [None] * len(calls)
        answered: set[int] = set()
        if pending is not None:
            answered = set(range(len(calls))) - set(pending)
            assert journal is not None
            for index in pending:
                outcomes[index] = journal.restored(index, calls[index])
        round_emitter = self.emitter.child("round", str(self._rounds))
        for index in answered:
            # A placeholder: already in history.
            outcomes[index] = interrupted(calls[index], self.settings.texts)
        try:
            await self._tools.run_batch(
                calls,
                outcomes,
                signal=self._signal,
                emitter=round_emitter,
                execution_id=self.run_id,
                round=self._rounds,
                notify=self._notify,
                journal=journal,
                trace=self._trace,
                attempt=self._attempt,
                run=self,  # issue 29: what a sub-agent's tool body inherits
                ceiling=self.ceiling,
            )
        except BaseException as error:
            if journal is not None and isinstance(error, ExecutionControlError):
                # S40: the journal holds what settled; nothing transcript-only is invented, and
                # calls that did not start stay pending.
                raise
            self._record_results(self._answers(calls, outcomes, answered), round_emitter)
            raise
        settled = self._answers(calls, outcomes, answered)
        self._record_results(settled, round_emitter)
        return [o.call for o in settled if o.status == "unavailable" and o.call is not None]

    def _answers(
        self,
        calls: tuple[ToolCall, ...],
        outcomes: list[ToolCallOutcome | None],
        answered: set[int],
    ) -> list[ToolCallOutcome]:
        # Every committed call gets its answer, whatever ended the batch (S34, S38).
        return [
            o if o is not None else interrupted(calls[i], self.settings.texts)
            for i, o in enumerate(outcomes)
            if i not in answered
        ]

    def _record_results(self, outcomes: list[ToolCallOutcome], round_emitter: EventEmitter) -> None:
        # S39 tool-result context budget: once results would push the context past its budget,
        # the remaining ones become bounded notices; outcome and source stay on every record.
        window = self._context_window()
        # An unknown window sets no budget (S13): nothing is omitted against an assumed size.
        budget = float("inf") if window is None else TOOL_RESULT_BUDGET * window
        used = self._store.context.effective_tokens(self.settings.context_floor)
        over = False
        for outcome in outcomes:
            if outcome.executed:
                self._executed += 1
            message = outcome.to_message()
            size = estimate_message_tokens(message)
            if over or used + size > budget:
                over = True
                notice = omitted_result_notice(outcome, self.settings.texts)
                message = replace(message, content=notice, parts=())
                size = estimate_message_tokens(message)
                if round_emitter.enabled:
                    round_emitter.emit(
                        EventNames.TOOL_RESULT_OMITTED,
                        {
                            "provider_call_id": message.tool_call_id,
                            "tool_name": message.tool_name,
                            "status": outcome.status,
                            "source": outcome.source,
                            "content": outcome.result.content,
                        },
                    )
            self._store.append(message)
            used += size

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


def commit_diagnostic(
    store: ConversationStore, text: str, emitter: EventEmitter
) -> AssistantMessage:
    """Commit the neutral diagnostic for a request the context guard did not send (S39)."""
    pending = store.begin_assistant(model=None)
    pending.append_text(text)
    message = pending.commit()
    if emitter.enabled:
        emitter.emit(EventNames.ASSISTANT_COMMITTED, {"message": message})
    return message


@final
class _NativeCapture:
    """Stamps native payloads with the round's identity and a fallback order (S25)."""

    __slots__ = ("_emitter", "_next")

    def __init__(self, emitter: EventEmitter) -> None:
        self._emitter = emitter
        self._next = 0

    def __call__(self, payload: NativePayload) -> None:
        order = payload.order if payload.order is not None else self._next
        self._next = max(self._next, order) + 1
        self._emitter.emit(
            EventNames.PROVIDER_NATIVE,
            {
                "direction": payload.direction,
                "api": payload.api,
                "body": payload.body,
                "order": order,
            },
        )


def _unrun_answer(call: ToolCall, outcome: str, texts: ModelTexts) -> ToolCallOutcome:
    if outcome == "interrupted":
        return interrupted(call, texts)
    return not_dispatched(call, "the response it came with did not complete", texts)


def _as_provider_error(error: Exception, provider: str, model: str | None) -> RobotaError:
    """S39/S42: a provider call's failure is raised as a ProviderError (typed errors pass)."""
    if isinstance(error, RobotaError):
        return error
    detail = str(error) or type(error).__name__
    return ProviderError(
        f"provider {provider!r} failed: {type(error).__name__}: {detail}",
        provider=provider,
        model=model,
        cause=error,
    )
