"""What the ``Agent`` facade's mixins read of each other, declared once (issue 32 item 3).

:class:`~robota.Agent` is assembled from mixins by concern (``_agent_run``, ``_agent_catalog``,
``_agent_config``, ``_agent_lifetime``, ``_agent_durable``); each reads state ``Agent.__init__``
sets and methods another mixin defines. :class:`AgentState` declares them for type checkers,
with the defining method's own signature, and every mixin derives from it, so a signature is
written once and mypy holds each definition to it. At run time it is an empty slotted base.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from robota.core._abort import AbortSignal
    from robota.core._agent_options import RunOptions
    from robota.core._emit import EventEmitter
    from robota.core._events import AgentEvent, EventService, OwnerRef
    from robota.core._guardrails import Guardrail
    from robota.core._history import ConversationStore, HistoryMutation
    from robota.core._limits import UsageLimits
    from robota.core._messages import Message
    from robota.core._models import ContextWindow
    from robota.core._plugins import ModuleRegistry, Plugin
    from robota.core._retry import RetryPolicy
    from robota.core._run_events import RunEvent
    from robota.core._sync import SyncDriver
    from robota.core._texts import ModelTexts
    from robota.core._tracing import TraceContext
    from robota.core.execution._cache import ResponseCache
    from robota.core.execution._journal import ExecutionJournal, RuntimeState
    from robota.core.execution._loop import Execution, ExecutionSettings
    from robota.core.execution._result import RunResult
    from robota.core.execution._retry import ModelCandidate
    from robota.core.execution._slot import RunSlot
    from robota.core.execution._subagents import Delegation
    from robota.core.hooks._runner import HookRunner
    from robota.core.providers._contract import Provider
    from robota.core.providers._effort import EffortSelection
    from robota.core.providers._settings import ModelSettings
    from robota.core.tools._deferral import ToolCatalog
    from robota.core.tools._executor import ToolExecutionService
    from robota.core.tools._registry import ToolRegistry
    from robota.core.tools._source import ToolSource

__all__ = ["AgentState"]


class AgentState:
    """The state and the cross-mixin methods of :class:`~robota.Agent`, for type checkers."""

    if not TYPE_CHECKING:
        __slots__ = ()

    if TYPE_CHECKING:
        # Set by Agent.__init__ (robota.core._agent).
        _allow_tool_only: bool
        _built_provider: Provider | None
        _catalog: ToolCatalog
        _close_errors: list[BaseException] | None
        _current: Execution | None
        _disposal: asyncio.Task[None] | None
        _effort: EffortSelection
        _emitter: EventEmitter | None
        _event_service: EventService | None
        _executor: ToolExecutionService
        _fallback: tuple[ModelCandidate, ...]
        _fallback_owned: tuple[Provider, ...]
        _given_window: tuple[str, str, int] | None
        _guardrails: tuple[Guardrail, ...]
        _history_cap: int | None
        _hooks: HookRunner | None
        _id: str
        _initialized: bool
        _initialized_parts: set[int] | None
        _journal: ExecutionJournal | None
        _limits: UsageLimits | None
        _max_handoffs: int
        _max_rounds: int
        _max_same_inputs: int | None
        _model: str
        _model_settings: ModelSettings
        _modules: ModuleRegistry | tuple[()]
        _name: str
        _owns_providers: bool
        _plugins: Sequence[Plugin]
        _provider: Provider
        _providers: tuple[Provider, ...]
        _reported: set[tuple[str, str, str]] | None
        _reports: tuple[tuple[str, str, str], ...]
        _response_cache: ResponseCache | None
        _retries_owned: bool
        _retry: RetryPolicy | None
        _slot: RunSlot | None
        _source_lock: asyncio.Lock | None
        _source_names: dict[str, tuple[str, ...]]
        _sources: Sequence[ToolSource]
        _state: Literal["open", "closing", "closed"]
        _store: ConversationStore
        _stream_tasks: set[asyncio.Task[RunResult]] | None
        _sync: SyncDriver | None
        _system_prompt: str | None
        _texts: ModelTexts
        _tools: ToolRegistry
        _windows: dict[tuple[str, str], ContextWindow] | None

        # AgentConfigMixin (robota.core._agent_config).
        @property
        def name(self) -> str: ...
        def _caller_window(self, provider: str, model: str) -> int | None: ...
        def _check_not_closed(self) -> None: ...
        def _every_provider(self) -> tuple[Provider, ...]: ...
        def _keep_window(self, key: tuple[str, str], window: ContextWindow) -> None: ...
        def _new_store(
            self, items: tuple[Message, ...], reported_usage: bool = True, inject: bool = True
        ) -> ConversationStore: ...
        def _own_retries(self) -> None: ...

        # AgentCatalogMixin (robota.core._agent_catalog).
        def _flush_reports(self, emitter: EventEmitter | None) -> None: ...
        def _on_history(self, mutation: HistoryMutation) -> None: ...
        async def _start_sources(self) -> None: ...

        # AgentLifetimeMixin (robota.core._agent_lifetime).
        async def _ensure_initialized(self) -> None: ...

        # AgentRunMixin (robota.core._agent_run).
        async def _acquire(self) -> None: ...
        def _release(self) -> None: ...
        async def _run_current(
            self, execution: Execution, work: Coroutine[Any, Any, RunResult[Any]]
        ) -> RunResult[Any]: ...
        async def _run_delegated(
            self,
            input: str,
            output: object,
            signal: AbortSignal,
            options: RunOptions,
            parent: Delegation,
        ) -> RunResult[Any]: ...
        def _scoped_emitter(
            self,
            owner: OwnerRef,
            event_service: EventService | None,
            on_event: Callable[[AgentEvent], None] | None,
            parent: EventEmitter | None = None,
        ) -> EventEmitter: ...
        def _settings(self, output: object, options: RunOptions) -> ExecutionSettings: ...
        def _sync_driver(self) -> SyncDriver: ...
        def _track(self, task: asyncio.Task[RunResult[Any]]) -> None: ...

        # DurableAgentMixin (robota.core._agent_durable).
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
        ) -> RunResult[Any]: ...
        def _runtime_state(self, settings: ExecutionSettings) -> RuntimeState: ...
