"""The agent's durable-execution API (S40): resume, respond, reconcile.

A mixin of :class:`~robota.Agent` so the facade stays small; it uses the agent's run slot (S38),
store, tools and settings exactly as a run does. The journal work itself is in
:mod:`robota.core.execution._durable`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar, overload

from robota.core._abort import AbortSignal, abort_error_from_reason
from robota.core._agent_children import (
    direct_resume,
    not_resumable,
    replayed,
    settled_children,
    state_owner,
)
from robota.core._agent_state import AgentState
from robota.core._cancel import AbortGuard
from robota.core._errors import ConfigurationError
from robota.core._events import AgentEvent, EventService, OwnerRef
from robota.core._models import get_model_context_window
from robota.core._tracing import TraceContext, check_trace
from robota.core.execution._durable import (
    acquire_lease,
    check_execution_id,
    read_records,
    release_lease,
    require_settled,
    save_response,
    settle_item,
)
from robota.core.execution._journal import ExecutionJournal, ExecutionStateError, RuntimeState
from robota.core.execution._journaled import JournalBinding
from robota.core.execution._limits import check_capped, check_priced
from robota.core.execution._loop import Execution, ExecutionSettings
from robota.core.execution._recovery import Recovery, catalog_digest, recover, restore_plan
from robota.core.execution._result import RunResult
from robota.core.execution._stream import RunStream
from robota.core.providers._effort import check_effort
from robota.core.providers._settings import settings_from_data, settings_to_data

if TYPE_CHECKING:
    from robota.core._agent_options import RunOptions
    from robota.core._history import ConversationStore
    from robota.core._run_events import RunEvent
    from robota.core.execution._subagents import Delegation

__all__ = ["DurableAgentMixin"]

T = TypeVar("T")


class DurableAgentMixin(AgentState):
    """Resume, respond and reconcile on :class:`~robota.Agent` (S40)."""

    __slots__ = ()

    def _runtime_state(self, settings: ExecutionSettings) -> RuntimeState:
        """What an execution depends on, as this agent has it now (S40)."""
        structured = settings.structured
        return RuntimeState(
            agent_name=self._name,
            provider=settings.provider.name,
            model=settings.model,
            system_prompt=self._store.system_prompt,
            tool_catalog_digest=catalog_digest(self._tools.specs()),
            tool_residency=self._catalog.residency(
                # No I/O here, so a resume in another process computes the same residency.
                lambda: (
                    self._caller_window(settings.provider.name, settings.model)
                    or get_model_context_window(settings.model, provider=settings.provider.name)
                )
            ),
            max_rounds=settings.max_rounds,
            max_same_tool_inputs=settings.max_same_tool_inputs,
            allow_tool_only_completion=settings.allow_tool_only_completion,
            tool_choice=settings.tool_choice,
            native_tools=settings.native_tools,
            effort=settings.effort,
            context_floor=settings.context_floor,
            output_schema=structured.spec.schema_text if structured is not None else None,
            output_retries=structured.retries if structured is not None else 0,
            model_settings=settings_to_data(settings.model_settings),
            limits=settings.limits,
        )

    def _require_journal(self, what: str) -> ExecutionJournal:
        self._check_not_closed()
        if self._journal is None:
            raise ConfigurationError(
                f"{what}() needs an execution journal: build the agent with Agent(journal=...)"
            )
        return self._journal

    @overload
    async def resume(
        self,
        execution_id: str,
        *,
        output: None = None,
        signal: AbortSignal | None = None,
        event_service: EventService | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        trace: TraceContext | None = None,
        lifecycle_hooks: bool = True,
    ) -> RunResult[str]: ...
    @overload
    async def resume(
        self,
        execution_id: str,
        *,
        output: type[T],
        signal: AbortSignal | None = None,
        event_service: EventService | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        trace: TraceContext | None = None,
        lifecycle_hooks: bool = True,
    ) -> RunResult[T | None]: ...
    @overload
    async def resume(
        self,
        execution_id: str,
        *,
        output: Mapping[str, Any],
        signal: AbortSignal | None = None,
        event_service: EventService | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        trace: TraceContext | None = None,
        lifecycle_hooks: bool = True,
    ) -> RunResult[Any]: ...
    async def resume(
        self,
        execution_id: str,
        *,
        output: object = None,
        signal: AbortSignal | None = None,
        event_service: EventService | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        trace: TraceContext | None = None,
        lifecycle_hooks: bool = True,
    ) -> RunResult[Any]:
        """Continue a journaled execution from its latest settled model response (S40).

        No new input is sent. Every durable settlement is reused instead of repeated — a tool
        whose result was recorded does not run again — and the limits and tool residency the
        execution started with are kept: its usage limits (``limits=``) count what it already
        used before the crash (usage, model calls, tool calls, cost). The restored history stays
        with this agent (a fresh agent receives it; an agent whose history already is a prefix
        of it is extended). A
        completed execution returns its result again; a suspended one whose requests are not
        all answered returns ``status="suspended"`` again without running anything. An execution
        a loop guard stopped (S39: identical tool input, ``tool_choice="none"`` violated) keeps
        the limits it started with, so resuming it raises the same error again; the journal
        keeps the refused calls undispatched rather than inventing results for them.

        A structured execution (started with ``output=``, S18) is resumed with the same
        ``output=``: a completed one returns the validated value it settled, rebuilt as the typed
        object without a model call; an unfinished one validates the reply it resumes from and
        retries within the budget it started with, each retry an ordinary journaled model call.

        Args:
            execution_id: The execution (``RunResult.execution_id``, or the id the host chose).
            output: The ``output=`` the execution was started with (a type or a JSON schema;
                ``None`` for a plain run). Its schema must be the saved one.
            signal: Cancels the continuation, as for :meth:`run`.
            event_service: Receives its events besides the agent's service.
            on_event: A callable receiving its events.
            trace: Host-supplied trace context for the continuation (S27), as for :meth:`run`;
                the continuation is a span of its own under the host's parent.
            lifecycle_hooks: ``False`` runs no ``Stop`` hook in the continuation, as the run
                option of the same name (pass what the execution was started with).

        Raises:
            ReconciliationRequired: the journal cannot prove something — an effect started
                without a recorded result, a model call without a recorded response, or this
                agent's runtime state differs; settle each item with :meth:`reconcile`. Nothing
                ran and history was not touched.
            ExecutionLockedError: another writer holds the execution (raised at once).
            ExecutionStateError: the execution is unknown, or is a sub-agent's (code
                ``subagent_execution``: resume its caller's execution instead), ``output=`` asks
                for another schema than the execution was started with (code
                ``output_mismatch``; nothing ran), or this agent's live history conflicts with
                the checkpoint (it is never overwritten).
            StorageError: the journal failed.
            ConfigurationError: the agent has no journal.
        """
        journal, execution_id, trace = self._resume_target(
            "resume", execution_id, trace, lifecycle_hooks
        )
        return await self._continue_own(
            journal,
            execution_id,
            output=output,
            signal=signal,
            event_service=event_service,
            on_event=on_event,
            trace=trace,
            lifecycle_hooks=lifecycle_hooks,
        )

    def resume_stream(
        self,
        execution_id: str,
        *,
        output: object = None,
        signal: AbortSignal | None = None,
        trace: TraceContext | None = None,
        lifecycle_hooks: bool = True,
    ) -> RunStream[Any]:
        """:meth:`resume`, streamed: iterate it for events, then ``await stream.result()``.

        The same continuation as :meth:`resume` (S40) — nothing settled runs again, so only
        what happens after the latest settled model response is streamed (its text deltas, tool
        calls, permission asks …); a completed or still-suspended execution streams no event
        and its result is returned again. It starts when iteration begins and leaving early
        aborts it (S23), as :meth:`~robota.Agent.run_stream`. The arguments and errors are
        :meth:`resume`'s; a bad ``execution_id`` or a missing journal is refused here, the
        rest when the continuation starts.
        """
        journal, execution_id, trace = self._resume_target(
            "resume_stream", execution_id, trace, lifecycle_hooks
        )

        def start(
            run_signal: AbortSignal, notify: Callable[[RunEvent], None]
        ) -> Coroutine[Any, Any, RunResult[Any]]:
            return self._continue_own(
                journal,
                execution_id,
                output=output,
                signal=run_signal,
                trace=trace,
                lifecycle_hooks=lifecycle_hooks,
                notify=notify,
            )

        return RunStream(start, signal, self._track)

    def _resume_target(
        self,
        method: str,
        execution_id: str,
        trace: TraceContext | None,
        lifecycle_hooks: object,
    ) -> tuple[ExecutionJournal, str, TraceContext | None]:
        """:meth:`resume`'s checks of its arguments, refused before anything runs."""
        journal = self._require_journal(method)
        execution_id = check_execution_id(execution_id)
        trace = check_trace(trace)
        if not isinstance(lifecycle_hooks, bool):
            raise ConfigurationError(
                f"lifecycle_hooks must be True or False, got {lifecycle_hooks!r}"
            )
        return journal, execution_id, trace

    async def _continue_own(
        self, journal: ExecutionJournal, execution_id: str, **options: Any
    ) -> RunResult[Any]:
        """Continue ``execution_id`` if it is this agent's own (not a sub-agent's) (S40)."""
        owner: object = await state_owner(self, journal, execution_id)
        if owner is not self:  # issue 29: a sub-agent's execution is continued by its caller
            raise direct_resume(execution_id, owner)
        return await self._continue_execution(journal, execution_id, **options)

    async def _continue_execution(
        self,
        journal: ExecutionJournal,
        execution_id: str,
        *,
        output: object,
        signal: AbortSignal | None,
        event_service: EventService | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        trace: TraceContext | None = None,
        lifecycle_hooks: bool = True,
        parent: Delegation | None = None,
        notify: Callable[[RunEvent], None] | None = None,
    ) -> RunResult[Any]:
        """:meth:`resume` in ``journal``.

        ``parent``: a journaled parent's sub-agent call; ``notify``: :meth:`resume_stream`'s.
        """
        run_signal = signal if signal is not None else AbortSignal()
        running: list[bool] = []  # one item once the continuation's loop runs
        try:
            return await self._continued(
                journal,
                execution_id,
                output,
                run_signal,
                (event_service, on_event, trace, notify),
                lifecycle_hooks,
                parent,
                running,
            )
        except Exception as exc:
            # Issue 29, S40: a sub-agent that cannot be continued fails its caller's run.
            control = (
                None
                if parent is None
                else not_resumable(exc, execution_id, bool(running), run_signal)
            )
            if control is None:
                raise
            raise control from exc

    async def _continued(
        self,
        journal: ExecutionJournal,
        execution_id: str,
        output: object,
        run_signal: AbortSignal,
        observers: tuple[
            EventService | None,
            Callable[[AgentEvent], None] | None,
            Any,
            Callable[[RunEvent], None] | None,
        ],
        lifecycle_hooks: bool,
        parent: Delegation | None,
        running: list[bool],
    ) -> RunResult[Any]:
        event_service, on_event, trace, notify = observers
        with AbortGuard(run_signal) as guard:
            await guard.call(self._acquire)
        try:
            if run_signal.aborted:  # S38, as for run()
                raise abort_error_from_reason(run_signal.reason)
            with AbortGuard(run_signal) as guard:
                await guard.call(self._ensure_initialized)
            lease = await acquire_lease(journal, execution_id)
            try:
                recovery = recover(execution_id, await read_records(journal, execution_id))
                settings = replace(self._resumed_settings(recovery, output), trace=trace)
                if not lifecycle_hooks:
                    settings = replace(settings, hooks=None)
                current = self._runtime_state(self._settings(None, {}))
                # Issue 29: a sub-agent call continues its run.
                await replayed(journal, recovery, self._tools, current.tool_catalog_digest)
                require_settled(recovery, current)
                # Issue 29: what its settled sub-agent calls used, read before history changes.
                recovery.children = await settled_children(journal, recovery, self._tools)
                store = self._store
                if parent is not None and parent.fresh:
                    # Issue 29, S34: the call's own conversation; the agent's is left as it was.
                    store = self._new_store(())
                self._restore(recovery, store)
                emitter = self._scoped_emitter(
                    OwnerRef("execution", execution_id),
                    event_service,
                    on_event,
                    parent.span if parent is not None else None,
                )
                self._flush_reports(emitter)
                execution = Execution(
                    settings,
                    run_id=execution_id,
                    store=store,
                    tools=self._executor,
                    plugins=self._plugins,
                    signal=run_signal,
                    emitter=emitter,
                    notify=parent.notify if parent is not None else notify,
                    journal=JournalBinding(lease, recovery, journal, asks_suspend=parent is None),
                )
                running.append(True)
                if parent is not None:
                    execution.ceiling = parent.gate  # S21: the ceiling, for this run only
                try:
                    return await self._run_current(execution, execution.resume(recovery))
                finally:
                    if execution.handoffs is not None:  # S35: its own prompt is the head again
                        execution.handoffs.settle(store)
                    if parent is not None and parent.settled is not None:
                        parent.settled(execution.spend())  # issue 29: however it ended
            finally:
                await release_lease(lease)
        finally:
            self._release()

    def _resumed_settings(self, recovery: Recovery, output: object) -> ExecutionSettings:
        # S40: the limits the execution started with, not this agent's current ones.
        saved = recovery.state
        # A structured execution never allowed tool-only completion; one that did is refused
        # by the schema comparison below, not by the combination check.
        options: RunOptions = {
            "allow_tool_only_completion": False,
            "output_retries": saved.output_retries,
        }
        current = self._settings(output, options if output is not None else {})
        _check_output(recovery, current)
        for candidate in ((current.provider, current.model), *current.fallback_pairs()):
            # S31/S40: any model of the chain may answer the continuation; each needs a price
            # (a cost limit) and an output cap it honours (an output, total or cost limit).
            check_priced(saved.limits, candidate[1], candidate[0].name)
            check_capped(saved.limits, candidate[0], candidate[1])
        return replace(
            current,
            max_rounds=saved.max_rounds,
            max_same_tool_inputs=saved.max_same_tool_inputs,
            allow_tool_only_completion=saved.allow_tool_only_completion,
            tool_choice=saved.tool_choice,
            native_tools=saved.native_tools,
            effort=check_effort(saved.effort),
            context_floor=saved.context_floor,
            model_settings=settings_from_data(saved.model_settings),
            limits=saved.limits,
            runtime_state=saved,
        )

    def _restore(self, recovery: Recovery, store: ConversationStore | None = None) -> None:
        store = self._store if store is None else store
        keep_prompt = "state:system_prompt" in recovery.accepted
        conflict, missing = restore_plan(
            store.snapshot(), recovery.history, keep_live_prompt=keep_prompt
        )
        if conflict is not None:
            raise ExecutionStateError(
                f"cannot resume execution {recovery.execution_id!r} on this agent: {conflict}. "
                "Live history is never overwritten; resume on a fresh agent (or one whose "
                "history is a prefix of the execution's)",
                code="history_conflict",
            )
        store.restore(missing)

    async def respond(self, execution_id: str, request_id: str, response: object) -> None:
        """Save the outside response to one pending request of a suspended execution (S40).

        It answers only that request, is durable before this returns, and admits nothing by
        itself: on :meth:`resume` the waiting call runs again through permissions and hooks,
        and its ``ctx.request_outside_response`` returns ``response``. Works from any process
        that shares the journal.

        Args:
            execution_id: The suspended execution.
            request_id: ``RunResult.pending_requests[i].id``.
            response: The answer (JSON-serialisable).

        Raises:
            ExecutionStateError: no such pending request in that execution, or it was answered.
            ExecutionLockedError: the execution is running elsewhere.
            ConfigurationError: the response is not JSON, or the agent has no journal.
        """
        journal = self._require_journal("respond")
        await save_response(journal, check_execution_id(execution_id), request_id, response)

    async def reconcile(
        self, execution_id: str, item_id: str, *, happened: bool, result: str | None = None
    ) -> None:
        """Settle one :class:`~robota.ReconciliationItem` explicitly (S40); nothing is guessed.

        * an effect: ``happened=True`` with ``result`` (what the model is shown as the tool's
          result) — it is not run again; ``happened=False`` — it did not happen, so on
          :meth:`resume` the call is dispatched again (admission decides again);
        * a model call: ``happened=True`` with ``result`` (the reply text to keep);
          ``happened=False`` — the call is made again;
        * a runtime-state difference: only ``happened=True``, accepting this agent's current
          value (``result`` is ignored).

        Raises:
            ExecutionStateError: ``item_id`` is not an open item of the execution.
            ConfigurationError: ``happened`` is not a bool, a needed ``result`` is missing, or
                the agent has no journal.
            ExecutionLockedError: the execution is running elsewhere.
        """
        journal = self._require_journal("reconcile")
        execution_id = check_execution_id(execution_id)
        # Issue 29: a sub-agent's execution is compared with the sub-agent, not this agent.
        owner: DurableAgentMixin = await state_owner(self, journal, execution_id)
        await owner._ensure_initialized()  # tool sources started: their tools are in the state
        current = owner._runtime_state(owner._settings(None, {}))
        await settle_item(journal, execution_id, item_id, happened, result, current)


def _check_output(recovery: Recovery, settings: ExecutionSettings) -> None:
    """Refuse a continuation asking for another structured output than it started with (S18)."""
    saved = recovery.state.output_schema
    structured = settings.structured
    asked = structured.spec.schema_text if structured is not None else None
    if asked == saved:
        return
    execution = recovery.execution_id
    if saved is None:
        problem = "was started without output=; resume it without output="
    elif asked is None:
        problem = (
            f"was started with output= ({_describe(saved)}); resume it with the same output= "
            "type or schema"
        )
    else:
        problem = (
            f"was started with output= ({_describe(saved)}), and this resume asks for "
            f"{_describe(asked, structured.spec.name if structured else None)}; resume it with "
            "the output= it was started with"
        )
    raise ExecutionStateError(f"execution {execution!r} {problem}", code="output_mismatch")


def _describe(schema_text: str, title: object = None) -> str:
    if title is None:
        try:
            title = json.loads(schema_text).get("title")
        except (ValueError, AttributeError):
            title = None
    digest = hashlib.sha256(schema_text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    named = f"{title!r}, " if isinstance(title, str) else ""
    return f"schema {named}sha256 {digest}…"
