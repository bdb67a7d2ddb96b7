"""The agent's run API (S23, S34, S38, S40): ``run``, ``run_sync``, ``run_stream``.

A mixin of :class:`~robota.Agent`. A run's options are checked and merged over the agent's into
one :class:`~robota.core.execution._settings.ExecutionSettings`; the run then waits for the
agent's FIFO slot (S38), binds its journal when there is one (S40), and one
:class:`~robota.core.execution._loop.Execution` does the work. A sub-agent's run (issue 29)
enters here too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar, overload

from typing_extensions import Unpack

from robota.core._abort import AbortSignal, abort_error_from_reason
from robota.core._agent_checks import check_run_input, unknown_run_options
from robota.core._agent_children import run_child
from robota.core._agent_models import check_retry
from robota.core._agent_options import (
    RUN_OPTIONS,
    RunOptions,
    check_lifecycle_hooks,
    check_limit,
    check_non_negative,
    check_rounds,
    check_tool_choice,
    fresh_conversation,
)
from robota.core._agent_state import AgentState
from robota.core._cancel import AbortGuard
from robota.core._emit import EventEmitter
from robota.core._errors import ConfigurationError
from robota.core._events import AgentEvent, CallbackEventService, EventService, OwnerRef
from robota.core._guardrails import Guardrail, check_guardrails
from robota.core._messages import new_id
from robota.core._parts import UserInput, user_content
from robota.core._run_events import RunEvent
from robota.core._sync import SyncDriver, refuse_inside_event_loop
from robota.core._tracing import check_trace
from robota.core.execution._durable import (
    acquire_lease,
    check_execution_id,
    read_records,
    release_lease,
)
from robota.core.execution._guardrails import tool_guardrails
from robota.core.execution._journal import ExecutionStateError, JournalLease
from robota.core.execution._journaled import JournalBinding
from robota.core.execution._limits import run_limits
from robota.core.execution._loop import Execution, ExecutionSettings
from robota.core.execution._result import RunResult
from robota.core.execution._slot import RunSlot
from robota.core.execution._stream import RunStream
from robota.core.execution._structured import OutputSpec, StructuredSettings
from robota.core.execution._subagents import Delegation
from robota.core.providers._effort import check_effort
from robota.core.providers._settings import check_settings

__all__ = ["AgentRunMixin"]

T = TypeVar("T")


class AgentRunMixin(AgentState):
    """Runs of :class:`~robota.Agent`: the public run methods and the path every run takes."""

    if not TYPE_CHECKING:
        __slots__ = ()

    @overload
    async def run(
        self, input: UserInput, *, output: None = None, **options: Unpack[RunOptions]
    ) -> RunResult[str]: ...
    @overload
    async def run(
        self, input: UserInput, *, output: type[T], **options: Unpack[RunOptions]
    ) -> RunResult[T | None]: ...
    @overload
    async def run(
        self, input: UserInput, *, output: Mapping[str, Any], **options: Unpack[RunOptions]
    ) -> RunResult[Any]: ...
    async def run(
        self, input: UserInput, *, output: object = None, **options: Unpack[RunOptions]
    ) -> RunResult[Any]:
        """Run one turn: send ``input``, run the tools the model asks for, return the result.

        Args:
            input: The user's message: a string, or a sequence of parts (``TextPart``,
                ``ImagePart``, ``DocumentPart``, ``AudioPart``) for images, PDFs and audio.
            output: Ask for a structured result (S18): a type (a pydantic model, a dataclass, a
                ``typing_extensions.TypedDict`` …) or an object JSON schema. ``result.output`` is
                then the validated object (``None`` when the run was interrupted).
            **options: See :class:`RunOptions` (``signal``, ``max_rounds``, ``tool_choice`` …).

        Raises:
            AbortError: the signal aborted while the run waited for its turn (S38).
            DisposedAgentError: the agent is closed.
            ProviderError: a provider call failed (its message is also in history).
            SameToolInputLoopError: a tool was called with identical input too often (S39).
            EmptyCompletionError: tool-only completion was allowed and a reply was empty.
            UsageLimitExceeded: going on would pass a usage limit (``limits=``, S31).
            StructuredOutputError: the output never validated within ``output_retries``.
        """
        check_run_input(input, "run", options)
        settings = self._settings(output, options)
        return await self._execute(input, settings, options.get("signal"), None, options)

    @overload
    def run_sync(
        self, input: UserInput, *, output: None = None, **options: Unpack[RunOptions]
    ) -> RunResult[str]: ...
    @overload
    def run_sync(
        self, input: UserInput, *, output: type[T], **options: Unpack[RunOptions]
    ) -> RunResult[T | None]: ...
    @overload
    def run_sync(
        self, input: UserInput, *, output: Mapping[str, Any], **options: Unpack[RunOptions]
    ) -> RunResult[Any]: ...
    def run_sync(
        self, input: UserInput, *, output: object = None, **options: Unpack[RunOptions]
    ) -> RunResult[Any]:
        """:meth:`run` for synchronous code: same arguments, same result.

        Every synchronous call of one agent runs on one event loop the agent keeps (a provider
        the agent built holds connections bound to it), closed by :meth:`close` or when the
        agent is garbage-collected. Ctrl-C cancels the run, which settles as interrupted, and
        then raises :class:`KeyboardInterrupt`.

        Raises:
            RobotaError: when called from a running event loop (``await agent.run()`` there).
        """
        refuse_inside_event_loop("run_sync()", "await agent.run(...)")
        check_run_input(input, "run_sync", options)
        settings = self._settings(output, options)
        return self._sync_driver().run(
            self._execute(input, settings, options.get("signal"), None, options)
        )

    @overload
    def run_stream(
        self, input: UserInput, *, output: None = None, **options: Unpack[RunOptions]
    ) -> RunStream[str]: ...
    @overload
    def run_stream(
        self, input: UserInput, *, output: type[T], **options: Unpack[RunOptions]
    ) -> RunStream[T | None]: ...
    @overload
    def run_stream(
        self, input: UserInput, *, output: Mapping[str, Any], **options: Unpack[RunOptions]
    ) -> RunStream[Any]: ...
    def run_stream(
        self, input: UserInput, *, output: object = None, **options: Unpack[RunOptions]
    ) -> RunStream[Any]:
        """A streamed run: iterate it for events, then ``await stream.result()``.

        Options as for :meth:`run`; a structured result arrives as the result's ``output``,
        never as a delta (S18). The run starts when iteration begins (S38); leaving early aborts
        it (S23).
        """
        self._check_not_closed()
        check_run_input(input, "run_stream", options)
        settings = self._settings(output, options)

        def start(
            run_signal: AbortSignal, notify: Callable[[RunEvent], None]
        ) -> Coroutine[Any, Any, RunResult[Any]]:
            return self._execute(input, settings, run_signal, notify, options)

        return RunStream(start, options.get("signal"), self._track)

    def _track(self, task: asyncio.Task[RunResult[Any]]) -> None:
        tasks = self._stream_tasks
        if tasks is None:
            tasks = self._stream_tasks = set()
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _sync_driver(self) -> SyncDriver:
        if self._sync is None:
            self._sync = SyncDriver()
        return self._sync

    def _settings(self, output: object, options: RunOptions) -> ExecutionSettings:
        if not RUN_OPTIONS.issuperset(options):
            raise unknown_run_options(options, RUN_OPTIONS)
        fresh_conversation(options, None)  # a bad value is refused before the run queues
        max_rounds = options.get("max_rounds")
        same = options.get("max_same_tool_inputs")
        tool_only = options.get("allow_tool_only_completion")
        tool_choice = options.get("tool_choice")
        allow_tool_only = self._allow_tool_only if tool_only is None else bool(tool_only)
        structured = None
        if output is not None:
            if allow_tool_only:
                raise ConfigurationError(
                    "output= asks for a validated final reply, which a tool-only completion does "
                    "not have; do not combine it with allow_tool_only_completion"
                )
            structured = StructuredSettings(
                spec=OutputSpec(output),
                retries=check_non_negative(options.get("output_retries", 2), "output_retries"),
                instruction=self._texts.output_instruction,
                feedback=self._texts.output_feedback,
            )
        retry = check_retry(options["retry"], "retry") if "retry" in options else self._retry
        if retry is not None:
            self._own_retries()
        fallback = self._fallback
        limits = options.get("limits")
        agent_limits = self._limits
        if limits is not None or agent_limits is not None:  # a plain run skips the merge
            limits = run_limits(
                agent_limits,
                limits,
                self._provider,
                self._model,
                [(c.provider, c.model) for c in fallback],
            )
        return ExecutionSettings(
            retry=retry,
            fallback=fallback,
            agent_name=self._name,
            provider=self._provider,
            model=self._model,
            max_rounds=self._max_rounds
            if max_rounds is None
            else check_rounds(max_rounds, "max_rounds"),
            tool_choice="auto" if tool_choice is None else check_tool_choice(tool_choice),
            native_tools=tuple(options.get("native_tools", ())),
            max_same_tool_inputs=self._max_same_inputs
            if same is None
            else check_limit(same, "max_same_tool_inputs"),
            allow_tool_only_completion=allow_tool_only,
            context_floor=check_non_negative(options.get("context_floor", 0), "context_floor"),
            texts=self._texts,
            response_cache=self._response_cache,
            structured=structured,
            effort=self._effort
            if options.get("effort") is None
            else check_effort(options.get("effort")),
            trace=check_trace(options.get("trace")),
            context_window=self._caller_window(self._provider.name, self._model),
            model_settings=self._model_settings.merged(
                check_settings(options.get("settings"), "run option settings")
            ),
            hooks=self._hooks if check_lifecycle_hooks(options.get("lifecycle_hooks")) else None,
            limits=limits,
            guardrails=self._run_guardrails(options),
            max_handoffs=self._max_handoffs,
        )

    def _run_guardrails(self, options: RunOptions) -> tuple[Guardrail, ...]:
        if "guardrails" not in options:
            return self._guardrails
        added = check_guardrails(options["guardrails"], "run option guardrails")
        if tool_guardrails(added):
            raise ConfigurationError(
                "a ToolGuardrail wraps the agent's tool gate: pass it to Agent(guardrails=[...]); "
                "the run option guardrails= takes InputGuardrail and OutputGuardrail"
            )
        if any(getattr(g, "check", None) is self for g in added):
            raise ConfigurationError(
                "an agent cannot be its own guardrail (its run would wait for itself, S38); "
                "use another Agent or a function"
            )
        return self._guardrails + added

    async def _execute(
        self,
        input: UserInput,
        settings: ExecutionSettings,
        signal: AbortSignal | None,
        notify: Callable[[RunEvent], None] | None,
        options: RunOptions,
        parent: Delegation | None = None,
    ) -> RunResult[Any]:
        self._check_not_closed()
        # A sequence of parts becomes the tuple history keeps (the caller's list may change).
        content = user_content(input, "agent.run()")
        run_signal = signal if signal is not None else AbortSignal()
        with AbortGuard(run_signal) as guard:
            await guard.call(self._acquire)
        try:
            if run_signal.aborted:  # S38: its turn came after the abort — touch nothing
                raise abort_error_from_reason(run_signal.reason)
            # A run queued before aclose() began still runs: close waits for the queue (S20).
            # S23: an abort while tool sources start ends the run before it touched anything.
            with AbortGuard(run_signal) as guard:
                await guard.call(self._ensure_initialized)
            chosen = options.get("execution_id")
            run_id = new_id("run") if chosen is None else check_execution_id(chosen)
            lease: JournalLease | None = None
            binding: JournalBinding | None = None
            # Issue 29: a journaled parent's sub-agent run is journaled in the parent's journal.
            journal = parent.journal if parent is not None and parent.journal else self._journal
            if journal is not None:
                lease = await acquire_lease(journal, run_id)
                try:
                    if await read_records(journal, run_id):
                        raise ExecutionStateError(
                            f"execution {run_id!r} already exists in the journal; continue it "
                            f"with agent.resume({run_id!r}) or choose a new execution_id",
                            code="execution_exists",
                        )
                except BaseException:
                    await release_lease(lease)
                    raise
                # Issue 29: a child cannot pass a suspension to its caller: its asks stay in memory.
                binding = JournalBinding(lease, store=journal, asks_suspend=parent is None)
                settings = replace(settings, runtime_state=self._runtime_state(settings))
            try:
                emitter = self._scoped_emitter(
                    OwnerRef("execution", run_id),
                    options.get("event_service"),
                    options.get("on_event"),
                    parent.span if parent is not None else None,
                )
                # Issue 29, S34: a fresh call runs in a conversation of its own; the agent's
                # own history is left as it was (append-only), not replaced.
                store = self._new_store(()) if fresh_conversation(options, parent) else self._store
                self._flush_reports(emitter)
                execution = Execution(
                    settings,
                    run_id=run_id,
                    store=store,
                    tools=self._executor,
                    plugins=self._plugins,
                    signal=run_signal,
                    emitter=emitter,
                    notify=notify,
                    journal=binding,
                )
                if parent is not None:
                    execution.ceiling = parent.gate  # S21: the ceiling, for this run only
                try:
                    result = await self._run_current(execution, execution.run(content))
                finally:
                    if execution.handoffs is not None:  # S35: its own prompt is the head again
                        execution.handoffs.settle(store)
                    if parent is not None and parent.settled is not None:
                        # Issue 29: the parent is charged whatever the child used, however
                        # its run ended (a provider error, a limit, a cancel).
                        parent.settled(execution.spend())
                if result.context_window is not None:
                    answered = execution.settings  # S13: a fallback's window is its own
                    key = (answered.provider.name, answered.model)
                    self._keep_window(key, result.context_window)
                return result
            finally:
                if lease is not None:
                    await release_lease(lease)
        finally:
            self._release()

    async def _acquire(self) -> None:
        """Wait for this agent's turn (S38, first come first served).

        The slot is built by the first caller and dropped once idle again, so an agent between
        runs holds none (issue 27). Only one slot exists at a time: it is dropped only when
        nobody holds it or waits on it.
        """
        slot = self._slot
        if slot is None:
            slot = self._slot = RunSlot()
        await slot.acquire()

    def _release(self) -> None:
        """Hand the turn to the next waiter, or free it (and drop the idle slot)."""
        slot = self._slot
        assert slot is not None, "released without acquiring"
        slot.release()
        if slot.idle:
            self._slot = None

    async def _run_current(
        self, execution: Execution, work: Coroutine[Any, Any, RunResult[Any]]
    ) -> RunResult[Any]:
        """Await ``work`` with ``execution`` as the one receiving history mutations."""
        self._current = execution
        try:
            return await work
        finally:
            self._current = None

    def _scoped_emitter(
        self,
        owner: OwnerRef,
        event_service: EventService | None,
        on_event: Callable[[AgentEvent], None] | None,
        parent: EventEmitter | None = None,
    ) -> EventEmitter:
        """An emitter for one run or invocation: the agent's service plus the caller's own.

        ``parent``: the tool call's span when this agent runs as another's tool (S33): its
        services hear this run too, under the owner path nested in the call's.
        """
        services: list[EventService] = list(parent.services) if parent is not None else []
        if self._event_service is not None:
            services.append(self._event_service)
        if event_service is not None:
            services.append(event_service)
        if on_event is not None:
            services.append(CallbackEventService(on_event))
        path = (OwnerRef("agent", self._id), owner)
        return EventEmitter(services, path if parent is None else (*parent.owner_path, *path))

    async def _run_delegated(
        self,
        input: str,
        output: object,
        signal: AbortSignal,
        options: RunOptions,
        parent: Delegation,
    ) -> RunResult[Any]:
        """One run as another agent's tool call (issue 29, robota.core._agent_tool)."""
        settings = self._settings(output, options)
        if parent.journal is not None:  # S40: journaled, and continued, in the parent's journal
            return await run_child(self, input, output, settings, signal, options, parent)
        return await self._execute(input, settings, signal, parent.notify, options, parent)
