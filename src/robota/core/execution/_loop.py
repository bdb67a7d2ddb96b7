"""The round loop: one execution of one run (S23, S37, S38, S39).

A round is one provider call and, when the reply asks for tools, the batch of those tool calls.
The loop ends when a reply carries no tool call (complete), when the run's signal aborts
(interrupted), or when the round budget is used up (then one forced summary call, S39).

Invariants kept here:

* One signal gates every provider call — the forced summary included — and every tool (S23).
  An abort during a provider call ends that await at once (``AbortGuard``) and commits the text
  received so far as ``interrupted``; running tools finish, queued ones get an "interrupted by
  user" result (S38).
* Every assistant message goes through the store's single commit path, and every committed tool
  call gets a result message, on every exit path — asyncio cancellation included (S34).
* A provider failure is recorded as a readable assistant message and raised as itself (S39).
* Observers (events, plugins, the stream consumer) never change execution.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Final, final

from robota.core._abort import AbortSignal, is_abort
from robota.core._cancel import AbortGuard
from robota.core._emit import EventEmitter
from robota.core._errors import ProviderError, RobotaError
from robota.core._events import EventNames
from robota.core._history import ConversationStore, HistoryMutation, PendingAssistant
from robota.core._messages import AssistantMessage, Message, ToolCall, UserMessage
from robota.core._plugins import Plugin, PluginFailure, RunInfo, call_plugin_hook
from robota.core._pricing import estimate_cost
from robota.core._run_events import MessageCommitted, RoundStarted, RunEvent
from robota.core._usage import Usage
from robota.core.execution._result import RunResult, RunStatus
from robota.core.providers._capabilities import check_native_tools
from robota.core.providers._contract import (
    ChatRequest,
    NativePayload,
    Provider,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    ToolChoice,
)
from robota.core.tools._executor import (
    ToolCallOutcome,
    ToolExecutionService,
    interrupted,
    not_dispatched,
)

__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "DEFAULT_SUMMARY_FALLBACK",
    "DEFAULT_SUMMARY_INSTRUCTION",
    "Execution",
    "ExecutionSettings",
]

DEFAULT_MAX_ROUNDS: Final = 10
"""Model/tool rounds one run may take before the forced summary (S39)."""

DEFAULT_SUMMARY_INSTRUCTION: Final = (
    "The tool-call budget for this turn is used up. Do not call any tools. Reply with what has "
    "been done and found so far, and what remains unfinished."
)
"""The per-call instruction of the forced summary (S39, S35: neutral; override per agent)."""

DEFAULT_SUMMARY_FALLBACK: Final = (
    "The tool-call budget for this turn was used up before a final answer was produced."
)
"""Returned when the forced summary produces no text (S39)."""


@final
@dataclass(frozen=True, slots=True)
class ExecutionSettings:
    """What one run executes with; fixed when the run starts."""

    agent_id: str
    agent_name: str
    provider: Provider
    model: str
    max_rounds: int
    tool_choice: ToolChoice
    native_tools: tuple[str, ...]
    summary_instruction: str
    summary_fallback: str


class _ProviderFailed(Exception):
    """Carries a provider failure out of a round after its message was committed."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


@final
class Execution:
    """One run's execution. Create, call :meth:`run` once."""

    __slots__ = (
        "_added",
        "_empty_summary",
        "_executed",
        "_failures",
        "_info",
        "_notify",
        "_plugins",
        "_rounds",
        "_signal",
        "_store",
        "_tools",
        "_usage",
        "_usage_partial",
        "emitter",
        "run_id",
        "settings",
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
        self._usage = Usage()
        self._usage_partial = False
        self._empty_summary = False
        self._info = RunInfo(run_id, settings.agent_name, settings.provider.name, settings.model)

    def on_mutation(self, mutation: HistoryMutation) -> None:
        """Record what this run added to history (the agent forwards store mutations here)."""
        if mutation.kind == "append" and mutation.message is not None:
            self._added.append(mutation.message)
            if self._notify is not None:
                self._notify(MessageCommitted(mutation.message))

    async def run(self, user_input: str) -> RunResult:
        """Execute the run: append the input, loop rounds, return the result."""
        settings = self.settings
        if self.emitter.enabled:
            self.emitter.emit(
                EventNames.RUN_STARTED, {"input": user_input, "model": settings.model}
            )
        for plugin in self._plugins:
            await call_plugin_hook(
                plugin, "before_run", plugin.before_run(self._info, user_input), self._failures
            )
        try:
            # S30: a native tool the provider cannot run fails before any transport.
            check_native_tools(settings.provider, settings.native_tools)
            self._store.append(UserMessage(user_input))
            status = await self._loop()
        except BaseException as error:
            if self.emitter.enabled:
                self.emitter.emit(EventNames.RUN_FAILED, {"error": repr(error)})
            if isinstance(error, Exception):
                for plugin in self._plugins:
                    await call_plugin_hook(
                        plugin, "on_error", plugin.on_error(self._info, error), self._failures
                    )
            raise
        result = self._result(status)
        if self.emitter.enabled:
            self.emitter.emit(
                EventNames.RUN_COMPLETED,
                {"status": status, "rounds": result.rounds, "usage": result.usage},
            )
        for plugin in self._plugins:
            await call_plugin_hook(
                plugin, "after_run", plugin.after_run(self._info, result), self._failures
            )
        if self._failures:
            result = _with_failures(result, self._failures)
        return result

    async def _loop(self) -> RunStatus:
        settings = self.settings
        tools_offered = settings.tool_choice != "none"
        with AbortGuard(self._signal) as guard:
            while True:
                if self._signal.aborted:
                    return "interrupted"
                if settings.max_rounds and self._rounds >= settings.max_rounds:
                    return await self._forced_summary(guard)
                self._rounds += 1
                round_no = self._rounds
                request = ChatRequest(
                    model=settings.model,
                    messages=self._store.provider_snapshot(),
                    tools=self._tools.registry.specs() if tools_offered else (),
                    tool_choice=settings.tool_choice,
                    native_tools=settings.native_tools,
                )
                message = await self._provider_round(guard, round_no, request, summary=False)
                if message.state == "interrupted":
                    return "interrupted"
                if not message.tool_calls:
                    return "complete"
                if not tools_offered:
                    self._refuse_batch(message.tool_calls)
                    raise ProviderError(
                        f"the model returned {len(message.tool_calls)} tool call(s) although this "
                        "run set tool_choice='none'; none was dispatched",
                        code="tool_choice_violated",
                        provider=settings.provider.name,
                        model=message.model,
                    )
                await self._tool_round(round_no, message.tool_calls)

    async def _provider_round(
        self, guard: AbortGuard, round_no: int, request: ChatRequest, *, summary: bool
    ) -> AssistantMessage:
        settings = self.settings
        round_emitter = self.emitter.child("round", str(round_no))
        info = RunInfo(
            self.run_id, settings.agent_name, settings.provider.name, settings.model, round_no
        )
        if self._notify is not None:
            self._notify(RoundStarted(round_no))
        if round_emitter.enabled:
            round_emitter.emit(
                EventNames.PROVIDER_REQUEST, {"request": request, "forced_summary": summary}
            )
        for plugin in self._plugins:
            await call_plugin_hook(
                plugin,
                "before_provider_call",
                plugin.before_provider_call(info, request),
                self._failures,
            )
        started_at = time.time()
        pending = self._store.begin_assistant(model=settings.model)
        outcome = "success"
        failure: BaseException | None = None
        try:
            await self._receive(guard, pending, request, round_emitter, summary=summary)
        except BaseException as error:
            if isinstance(error, Exception) and is_abort(error, self._signal):
                outcome = "interrupted"
            elif isinstance(error, Exception):
                outcome = "failure"
                failure = error
            else:  # asyncio cancellation of the run's task: commit, then let it propagate
                pending.commit(interrupted=True)
                self._observe(round_emitter, round_no, started_at, "interrupted", summary)
                raise
        if failure is not None:
            # S39: the failure is surfaced as a readable assistant message, then raised as itself.
            notice = f"Request failed: {_describe_failure(failure)}"
            pending.append_text(f"\n\n{notice}" if pending.text else notice)
        message = pending.commit(interrupted=outcome != "success")
        self._count_usage(message)
        self._observe(round_emitter, round_no, started_at, outcome, summary)
        if round_emitter.enabled:
            round_emitter.emit(
                EventNames.PROVIDER_RESPONSE, {"message": message, "forced_summary": summary}
            )
            round_emitter.emit(EventNames.ASSISTANT_COMMITTED, {"message": message})
        for plugin in self._plugins:
            await call_plugin_hook(
                plugin,
                "after_provider_call",
                plugin.after_provider_call(info, message),
                self._failures,
            )
        if failure is not None:
            raise failure
        return message

    async def _receive(
        self,
        guard: AbortGuard,
        pending: PendingAssistant,
        request: ChatRequest,
        round_emitter: EventEmitter,
        *,
        summary: bool,
    ) -> None:
        provider = self.settings.provider
        stream: AsyncIterator[StreamEvent]
        if round_emitter.enabled:
            stream = provider.chat_stream_raw(
                request, signal=self._signal, capture=_NativeCapture(round_emitter)
            )
        else:
            stream = provider.chat_stream(request, signal=self._signal)
        notify = self._notify
        try:
            while True:
                try:
                    event = await guard.call(stream.__anext__)
                except StopAsyncIteration:
                    break
                if isinstance(event, TextDelta):
                    pending.append_text(event.text)
                    if notify is not None:
                        notify(event)
                elif isinstance(event, ToolCallReady):
                    if summary:
                        # S39: the forced summary's tool calls are never dispatched, and never
                        # committed as calls that would go unanswered.
                        if round_emitter.enabled:
                            round_emitter.emit(
                                EventNames.TOOL_SKIPPED,
                                {
                                    "reason": "forced_summary",
                                    "requested_tool": event.call.name,
                                    "provider_call_id": event.call.id,
                                },
                            )
                        continue
                    pending.add_tool_call(event.call)
                elif isinstance(event, ResponseDone):
                    if event.model:
                        pending.model = event.model  # S30: the model that actually answered
                    pending.usage = event.usage
                    pending.continuation = event.continuation
                else:
                    raise ProviderError(
                        f"provider {provider.name!r} yielded {type(event).__name__}, which is not "
                        "a stream event (TextDelta, ToolCallReady or ResponseDone)",
                        provider=provider.name,
                    )
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _tool_round(self, round_no: int, calls: tuple[ToolCall, ...]) -> None:
        outcomes: list[ToolCallOutcome | None] = [None] * len(calls)
        round_emitter = self.emitter.child("round", str(round_no))
        try:
            await self._tools.run_batch(
                calls,
                outcomes,
                signal=self._signal,
                emitter=round_emitter,
                execution_id=self.run_id,
                round=round_no,
                notify=self._notify,
            )
        finally:
            # Every committed call gets its answer, whatever ended the batch (S34, S38).
            for index, outcome in enumerate(outcomes):
                final = outcome if outcome is not None else interrupted(calls[index])
                if final.executed:
                    self._executed += 1
                self._store.append(final.to_message())

    async def _forced_summary(self, guard: AbortGuard) -> RunStatus:
        # S39: the budget is used up without a final text. One call, no tools, tool_choice none,
        # the run's signal; the instruction exists only in this request, never in history.
        settings = self.settings
        self._rounds += 1
        messages = (*self._store.provider_snapshot(), UserMessage(settings.summary_instruction))
        request = ChatRequest(model=settings.model, messages=messages, tools=(), tool_choice="none")
        message = await self._provider_round(guard, self._rounds, request, summary=True)
        if message.state == "interrupted":
            return "interrupted"
        self._empty_summary = not message.content.strip()
        return "complete"

    def _refuse_batch(self, calls: tuple[ToolCall, ...]) -> None:
        # The calls stay in history with explicit "not dispatched" answers, so a later turn
        # never sends a call without its result (S39).
        for call in calls:
            self._store.append(not_dispatched(call).to_message())

    def _observe(
        self,
        round_emitter: EventEmitter,
        round_no: int,
        started_at: float,
        outcome: str,
        summary: bool,
    ) -> None:
        # S39: one content-free observation per attempted provider round.
        if round_emitter.enabled:
            round_emitter.emit(
                EventNames.ROUND_COMPLETED,
                {
                    "round": round_no,
                    "started_at": started_at,
                    "ended_at": time.time(),
                    "outcome": outcome,
                    "forced_summary": summary,
                },
            )

    def _count_usage(self, message: AssistantMessage) -> None:
        if message.usage is None:
            self._usage_partial = True
        else:
            self._usage = self._usage + message.usage

    def _result(self, status: RunStatus) -> RunResult:
        assistants = [m for m in self._added if isinstance(m, AssistantMessage)]
        last = assistants[-1] if assistants else None
        output = last.content if last is not None else ""
        if self._empty_summary:
            output = self.settings.summary_fallback
        usage = self._usage
        if self._usage_partial and not usage.partial:
            usage = Usage(
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.total_tokens,
                usage.cache_read_tokens,
                partial=True,
            )
        return RunResult(
            output=output,
            status=status,
            usage=usage,
            messages=tuple(self._added),
            run_id=self.run_id,
            model=last.model if last is not None else None,
            cost=self._cost(assistants),
            rounds=self._rounds,
            tool_calls_executed=self._executed,
        )

    def _cost(self, assistants: list[AssistantMessage]) -> float | None:
        total = 0.0
        provider = self.settings.provider.name
        for message in assistants:
            if message.usage is None:
                continue
            cost = estimate_cost(
                message.usage, message.model or self.settings.model, provider=provider
            )
            if cost is None:
                return None
            total += cost
        return total


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


def _describe_failure(error: BaseException) -> str:
    if isinstance(error, RobotaError):
        return error.message
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _with_failures(result: RunResult, failures: list[PluginFailure]) -> RunResult:
    return RunResult(
        output=result.output,
        status=result.status,
        usage=result.usage,
        messages=result.messages,
        run_id=result.run_id,
        model=result.model,
        cost=result.cost,
        rounds=result.rounds,
        tool_calls_executed=result.tool_calls_executed,
        plugin_errors=tuple(failures),
    )
