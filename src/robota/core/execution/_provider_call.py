"""One provider call of a round (S23, S24, S27, S28, S30, S31, S34, S39, S40).

A mixin of :class:`~robota.core.execution._loop.Execution`. An attempt is checked against the
context guard and the run's limits before it is sent, journaled before dispatch (S40), streamed
into one pending assistant message (or served from the response cache, S30) and committed on
every exit path; a failure is recorded as a readable message, then raised as a
:class:`~robota.ProviderError` (S39). A round's attempts follow the run's retry policy and
fallback chain (issue 28; the work between two attempts is :mod:`._attempts`').
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, TypeAlias, final

from robota.core._abort import abort_error_from_reason, is_abort
from robota.core._cancel import AbortGuard
from robota.core._emit import EventEmitter
from robota.core._errors import ExecutionControlError, ProviderError, RobotaError
from robota.core._events import EventNames
from robota.core._history import ConversationStore, PendingAssistant
from robota.core._logging import get_logger
from robota.core._messages import AssistantMessage, ToolCall, new_id, now
from robota.core._plugins import RunInfo
from robota.core._run_events import RoundStarted
from robota.core._texts import ModelTexts, render
from robota.core.execution._attempts import add_usage as _add_usage
from robota.core.execution._cache import CachedResponse
from robota.core.execution._loop_state import LoopState
from robota.core.execution._result import StopReason
from robota.core.execution._retry import Retrying, Switch
from robota.core.providers._capabilities import unsupported_settings
from robota.core.providers._contract import (
    ChatRequest,
    NativePayload,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCallReady,
)
from robota.core.providers._effort import EffortOutcome, EffortSelection
from robota.core.providers._fingerprint import request_fingerprint
from robota.core.tools._outcomes import ToolCallOutcome, interrupted, not_dispatched

__all__ = ["ProviderCallMixin", "commit_diagnostic", "unresolved_effort", "unrun_answer"]

_Outcome: TypeAlias = Literal["success", "failure", "interrupted"]

_log = get_logger("robota.execution")


@functools.lru_cache(maxsize=32)
def unresolved_effort(requested: EffortSelection, dispatched: bool) -> EffortOutcome:
    """The effort outcome of a round no resolution was reported for (S24)."""
    # Most rounds' outcome (no resolution reported): one shared value per selection and dispatch,
    # not one more object in every RunResult a caller keeps.
    return EffortOutcome(requested, None, native_control_sent=False, dispatched=dispatched)


class ProviderCallMixin(LoopState):
    """A round's provider call and its attempts, for :class:`Execution`."""

    if not TYPE_CHECKING:
        __slots__ = ()

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
            self._store.append(unrun_answer(call, outcome, self.settings.texts).to_message())

    def _record_effort(self, dispatched: bool) -> None:
        # S24: the outcome says what went on the wire. A round without dispatch (a cache hit)
        # keeps the recorded resolution for audit but never claims a control was sent.
        resolution = self._round_effort
        if resolution is None:
            self._effort = unresolved_effort(self.settings.effort, dispatched)
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


def unrun_answer(call: ToolCall, outcome: str, texts: ModelTexts) -> ToolCallOutcome:
    """The answer of a call whose response did not complete (S34): it never ran."""
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
