"""Core's half of :mod:`robota.lowlevel`: the seams integrations use to drive an agent.

Import these names from :mod:`robota.lowlevel`, which re-exports all of them beside the host's
half (:mod:`robota.host.lowlevel`). This module exists so that ``robota.lowlevel`` reaches core
through a public path only: no module outside :mod:`robota.core` imports one of core's private
modules or reads an :class:`~robota.Agent`'s private attributes (issue 32; the import-linter
contract ``core-private`` and ``tests/test_architecture_private.py`` hold every package to it).

Stability: these names are public and typed, but lower level than :mod:`robota` — they follow
core's internals more closely, so a minor release may change them; each change is named in the
changelog.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import final

from robota.core._agent import Agent
from robota.core._cancel import AbortGuard
from robota.core._guardrails import Guardrail
from robota.core._messages import deterministic, new_id, now
from robota.core._texts import ModelTexts
from robota.core.execution._guards import omitted_result_notice
from robota.core.execution._journal import ExecutionJournal
from robota.core.execution._memory_journal import InMemoryJournal
from robota.core.hooks import HookRunner
from robota.core.providers import Provider
from robota.core.tools import Tool, ToolGate, ToolRegistry, ToolSource
from robota.core.tools._executor import _failure_text

__all__ = [
    "AbortGuard",
    "AgentParts",
    "Guardrail",
    "InMemoryJournal",
    "agent_parts",
    "deterministic",
    "new_id",
    "now",
    "omitted_result_notice",
    "route_dispatch",
    "tool_failure_text",
]


@final
class _ToolsView(Mapping[str, Tool]):
    """A read-only, live view of an agent's registered tools by name, in registration order."""

    __slots__ = ("_registry",)

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> Tool:
        found = self._registry.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.names())

    def __len__(self) -> int:
        return len(self._registry)

    def __repr__(self) -> str:
        return f"<tools {list(self._registry.names())!r}>"


@final
@dataclass(frozen=True, slots=True)
class AgentParts:
    """A read-only view of what an :class:`~robota.Agent` was built from (see :func:`agent_parts`).

    Attributes:
        name: The agent's name.
        tools: Its registered tools by name, in registration order (a live, read-only mapping;
            a tool source's tools appear once the source has started).
        guardrails: Its guardrails (input, output and tool guardrails), in the order given.
        providers: Every provider it may call: its model chain's, then its fallback chain's
            other ones, each once (issue 28).
        journal: The execution journal it was built with, if any (S40).
        sources: Its tool sources (S41), in the order given.
        hooks: The hook runner its tool calls go through, if any (S22).
        gate: The gate its tool calls pass (a permission gate, possibly wrapped by its tool
            guardrails), if any (S21).
        texts: The model-facing texts it renders (S35).
    """

    name: str
    tools: Mapping[str, Tool]
    guardrails: tuple[Guardrail, ...]
    providers: tuple[Provider, ...]
    journal: ExecutionJournal | None
    sources: tuple[ToolSource, ...]
    hooks: HookRunner | None
    gate: ToolGate | None
    texts: ModelTexts


def agent_parts(agent: Agent) -> AgentParts:
    """The parts ``agent`` was built from, read-only (for integrations that route or check it).

    The view is taken now: a later :func:`route_dispatch` replaces the agent's providers,
    guardrails and gate, so take a new view after routing. ``tools`` stays live.
    """
    return AgentParts(
        name=agent.name,
        tools=_ToolsView(agent._tools),
        guardrails=tuple(agent._guardrails),
        providers=agent._every_provider(),
        journal=agent._journal,
        sources=tuple(agent._sources),
        hooks=agent._hooks,
        gate=agent._executor.gate,
        texts=agent._texts,
    )


def route_dispatch(
    agent: Agent,
    provider: Callable[[Provider], Provider],
    tool: Callable[[Tool], Tool],
    *,
    guardrail: Callable[[Guardrail], Guardrail] | None = None,
    gate: Callable[[ToolGate | None], ToolGate | None] | None = None,
) -> None:
    """Make a fresh ``agent`` do every provider call and tool body elsewhere (robota.temporal).

    Each provider (its fallback chain's too) and each registered tool is replaced by what
    ``provider``/``tool`` return for it: the same name, schema and declarations, with the work
    done elsewhere (a Temporal activity, say). The loop, its guards, the gate and
    ``tool_search`` stay in the agent. ``guardrail`` replaces each guardrail (its checks done
    elsewhere) and ``gate`` the agent's own tool gate (its tool guardrails wrap the result
    again). The agent no longer retries a model call itself: whoever runs the routed provider
    owns retries (issue 28), so read :attr:`Agent.retry <robota.Agent.retry>` before routing.

    Raises:
        ConfigurationError: for an agent that has run or is closing, one with tool sources, or
            one whose providers share a name (a routed call finds its provider by name).
    """
    agent._route_dispatch(provider, tool, guardrail=guardrail, gate=gate)


def tool_failure_text(tool: Tool, exc: BaseException, texts: ModelTexts) -> str:
    """The error text the model reads when ``tool``'s body raised ``exc`` (S35 texts).

    The same text an in-process run puts in the tool's error result: a
    :class:`~robota.RobotaError`'s message, or the exception's type and text.
    """
    return _failure_text(tool, exc, texts)
