"""The agent's tool catalogue (S19, S41, S43; issue 29).

A mixin of :class:`~robota.Agent`: tool sources started and re-read into the registry, the
history observer that lets ``tool_search`` load tools, direct invocation
(:meth:`~robota.Agent.invoke_tool`), the agent as another's tool, and the
routing of provider calls and tool bodies elsewhere that ``robota.temporal`` drives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from robota.core._abort import AbortSignal
from robota.core._agent_state import AgentState
from robota.core._agent_tool import AgentTool
from robota.core._cancel import AbortGuard
from robota.core._emit import EventEmitter
from robota.core._errors import ConfigurationError
from robota.core._events import AgentEvent, EventNames, EventService, OwnerRef
from robota.core._guardrails import Guardrail
from robota.core._history import HistoryMutation
from robota.core._logging import get_logger
from robota.core._messages import new_id
from robota.core.execution._guardrails import GuardrailGate, tool_guardrails
from robota.core.providers._contract import Provider
from robota.core.tools._executor import ToolCallOutcome, ToolGate
from robota.core.tools._source import ToolSource
from robota.core.tools._tool import RiskClass, Tool

if TYPE_CHECKING:
    from robota.core.permissions._gate import Approver


__all__ = ["AgentCatalogMixin"]

_log = get_logger("robota.agent")


class AgentCatalogMixin(AgentState):
    """Tool sources, direct invocation, handoffs and dispatch routing of :class:`~robota.Agent`."""

    if not TYPE_CHECKING:
        __slots__ = ()

    def _route_dispatch(
        self,
        provider: Callable[[Provider], Provider],
        tool: Callable[[Tool], Tool],
        *,
        guardrail: Callable[[Guardrail], Guardrail] | None = None,
        gate: Callable[[ToolGate | None], ToolGate | None] | None = None,
    ) -> None:
        """Internal; public as :func:`robota.lowlevel.route_dispatch`: do every call elsewhere.

        Each provider and each registered tool is replaced by what ``provider``/``tool`` return
        for it: the same name, schema and declarations, with the work done elsewhere (a
        Temporal activity). The loop, its guards, the gate and ``tool_search`` stay here. Only
        a fresh agent qualifies, and not one with tool sources: a source starts by itself.
        Issue 29: ``guardrail`` replaces each guardrail (its checks done elsewhere), ``gate``
        the agent's own tool gate (the tool guardrails wrap the result again). The agent's
        loop no longer retries a model call: whoever runs the routed provider owns retries
        (issue 28) — read :attr:`retry` before routing.

        Raises:
            ConfigurationError: for an agent that has run, is closing, or has tool sources.
        """
        if self._initialized or self._current is not None or self._state != "open":
            raise ConfigurationError(
                f"agent {self._name!r} has already run or is closing; route a fresh agent"
            )
        if self._sources:
            names = ", ".join(source.name for source in self._sources)
            raise ConfigurationError(
                f"agent {self._name!r} has tool sources ({names}); a source starts and answers "
                "inside one process, so it cannot be routed — register its tools directly"
            )
        current = self._providers.index(self._provider)
        every = self._every_provider()
        if len({item.name for item in every}) != len(every):
            raise ConfigurationError(
                f"agent {self._name!r}: two different providers of its model chain share a name; "
                "a routed call finds its provider by name, so give each a unique name"
            )
        pairs = [(item, provider(item)) for item in every]  # issue 28: the fallback's too

        def route(item: Provider) -> Provider:
            return next(new for old, new in pairs if old is item)

        self._providers = tuple(route(item) for item in self._providers)
        self._provider = self._providers[current]
        self._fallback = tuple(replace(c, provider=route(c.provider)) for c in self._fallback)
        registered = list(self._tools)
        for entry in registered:
            self._tools.unregister(entry.name)
        for entry in registered:
            routed = tool(entry)
            routed.event_service = entry.event_service
            self._tools.register(routed)
        self._retry = None
        if guardrail is not None:
            self._guardrails = tuple(guardrail(entry) for entry in self._guardrails)
        gated = self._executor.gate
        inner = gated.inner if isinstance(gated, GuardrailGate) else gated
        inner = inner if gate is None else gate(inner)
        guarded = tool_guardrails(self._guardrails)
        self._executor.gate = GuardrailGate(inner, guarded, self._emitter) if guarded else inner

    async def _start_sources(self) -> None:
        """Start every tool source (a no-op for running ones) and register its tools (S41)."""
        if self._source_lock is None:
            self._source_lock = asyncio.Lock()
        async with self._source_lock:  # runs and direct invocations share one start
            for source in self._sources:
                await source.start()
                if source.name not in self._source_names:
                    source.subscribe(self._sync_source)
                self._sync_source(source)

    def _is_own_tool(self, name: str) -> bool:
        """Whether ``name`` is a tool the agent was given itself (not a source's)."""
        if name not in self._tools:
            return False
        return not any(name in names for names in self._source_names.values())

    async def _settle_sources(self) -> None:
        """After a tool round: let the sources finish a change it caused (S19: next round)."""
        for source in self._sources:
            try:
                await source.settle()
            except Exception as exc:  # noqa: BLE001 - a source's failure never fails the run
                _log.error("tool source settle failed", source=source.name, error=repr(exc))

    def _sync_source(self, source: ToolSource) -> None:
        """Replace ``source``'s registered tools with the ones it reports now."""
        for name in self._source_names.get(source.name, ()):
            self._tools.unregister(name)
        registered: list[str] = []
        rejected = [(item.name, item.reason) for item in source.rejected()]
        for tool in source.tools():
            if tool.name in self._tools:
                rejected.append((tool.name, "another tool of this agent has that name"))
                continue
            self._tools.register(tool)
            if self._event_service is not None:
                tool.event_service = self._event_service
            registered.append(tool.name)
        self._source_names[source.name] = tuple(registered)
        for name, reason in rejected:
            key = (source.name, name, reason)
            if self._reported is None:
                self._reported = set()
            if key in self._reported:
                continue  # reported once, not on every run
            self._reported.add(key)
            _log.error("tool left out", source=source.name, tool=name, reason=reason)
            self._reports += (key,)
        if self._current is not None:
            self._flush_reports(self._current.emitter)

    def _flush_reports(self, emitter: EventEmitter | None) -> None:
        """Emit the left-out tools not reported yet, to the run (or call) now under way."""
        reports, self._reports = self._reports, ()
        if emitter is not None and emitter.enabled:
            for source, name, reason in reports:
                emitter.emit(
                    EventNames.TOOL_SOURCE_REJECTED,
                    {"source": source, "tool_name": name, "reason": reason},
                )

    def _on_history(self, mutation: HistoryMutation) -> None:
        execution = self._current
        emitter = execution.emitter if execution is not None else self._emitter
        if mutation.kind == "append" and mutation.message is not None:
            self._catalog.note(mutation.message)  # S19: tool_search results load their tools
        if emitter is not None and emitter.enabled:
            if mutation.kind == "append":
                emitter.emit(EventNames.HISTORY_APPENDED, {"message": mutation.message})
            elif mutation.kind == "system_prompt":
                emitter.emit(EventNames.HISTORY_SYSTEM_PROMPT_SET, {"message": mutation.message})
            else:
                emitter.emit(EventNames.HISTORY_TRIMMED, {"count": mutation.count})
        if execution is not None:
            execution.on_mutation(mutation)

    async def invoke_tool(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        signal: AbortSignal | None = None,
        approver: Approver | None = None,
        event_service: EventService | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
    ) -> ToolCallOutcome:
        """Invoke a registered tool directly (S43), without fabricating a model turn.

        The call takes the same path as a model-driven one — validation, the tool gate
        (permissions and hooks), the body with its own minted id, the events — and leaves
        history untouched. Allowlists and permissions still apply. No interactive "ask the user"
        handler is injected: an ``ask`` is answered only by the ``approver`` passed here, and is
        a denial without one, because a direct caller is not assumed to have a person behind it.

        Args:
            name: The tool's registered name.
            args: Its arguments (validated against its schema).
            signal: Cancels the body (it observes ``ctx.signal``).
            approver: Answers a permission ``ask`` for this call only.
            event_service: Receives this call's events besides the agent's service.
            on_event: A callable receiving this call's events.

        Returns:
            The :class:`~robota.ToolCallOutcome`: ``status`` (``completed``, ``failed``,
            ``refused`` …) and the ``result``.

        Raises:
            ConfigurationError: when no tool of that name is registered, or ``args`` is not a
                mapping.
            DisposedAgentError: the agent is closed.
        """
        self._check_not_closed()
        if self._sources and not self._is_own_tool(name):
            # S43: a source's tools are reachable directly too; a local tool needs none started.
            with AbortGuard(signal or AbortSignal()) as guard:
                await guard.call(self._start_sources)
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(self._tools.names()) or "none"
            raise ConfigurationError(
                f"no tool named {name!r} is registered; available: {available}"
            )
        if not isinstance(args, Mapping):
            raise ConfigurationError(f"tool arguments must be a mapping, got {type(args).__name__}")
        emitter = self._scoped_emitter(
            OwnerRef("invocation", new_id("inv")), event_service, on_event
        )
        self._flush_reports(emitter)
        return await self._executor.invoke(
            tool,
            args,
            signal=signal if signal is not None else AbortSignal(),
            emitter=emitter,
            approver=approver,
        )

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        input: object = None,
        output: object = None,
        keep_history: bool = False,
        risk: RiskClass | None = "inspect",
    ) -> AgentTool:
        """This agent as a tool another agent's model can call (issue 29).

        Each call runs this agent under what the calling run passes down (abort signal, what is
        left of its limits and round budget, its gate as a ceiling, trace, events, journal); see
        :class:`~robota.AgentTool` for the arguments. ``Agent(tools=[other])`` is
        ``other.as_tool()``.
        """
        return AgentTool(
            self,
            name=name,
            description=description,
            input=input,
            output=output,
            keep_history=keep_history,
            risk=risk,
        )
