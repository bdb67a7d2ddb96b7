"""Tool sources (S41): tools an agent learns only once something is started (an MCP server).

A :class:`ToolSource` is passed in ``Agent(tools=[...])`` beside ordinary tools. The agent starts
it lazily — before its first run, direct invocation or on ``async with`` — and then registers the
tools it reports, which pass through the same registry, schema checks, permission gate, hooks and
events as any other tool. When the source reports a change (an MCP server's
``notifications/tools/list_changed``), the agent re-reads its tools, and because the offered list
is read fresh every round (S19) the model sees the change from its next request on.

Lifecycle belongs to the agent's disposal contract (S20): the agent calls :meth:`ToolSource.aclose`
in :meth:`~robota.Agent.aclose`, and a failed start is not cached — the next run starts it again.
Before each run the agent calls :meth:`ToolSource.start` again, so a source whose connection died
is restarted for that run (it says so through the diagnostic sink), never silently skipped.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import final

from robota.core.tools._tool import Tool

__all__ = ["RejectedTool", "ToolSource"]


@final
@dataclass(frozen=True, slots=True)
class RejectedTool:
    """A tool a source left out, and why (a schema the subset refuses, a name clash …).

    Attributes:
        name: The tool's name as it would have been registered.
        reason: Why it was left out, for the operator.
    """

    name: str
    reason: str


class ToolSource(ABC):
    """Supplies tools known only after :meth:`start` (S41 extension point).

    Implement :attr:`name`, :meth:`start`, :meth:`tools` and :meth:`aclose`. Call
    :meth:`changed` whenever :meth:`tools` would answer differently.
    """

    def __init__(self) -> None:
        self._listeners: list[Callable[[ToolSource], None]] = []

    @property
    @abstractmethod
    def name(self) -> str:
        """The source's name (unique among an agent's sources)."""

    @abstractmethod
    async def start(self) -> None:
        """Start or reconnect; return at once while already running and healthy.

        Called before every run of an agent that holds the source, so a source whose connection
        died restarts here. Shared by every run and agent holding it: it must be safe to call
        concurrently. Raise to fail the run that needed it (the next run calls it again).
        """

    @abstractmethod
    def tools(self) -> Sequence[Tool]:
        """The tools the source offers now (empty before :meth:`start`)."""

    async def settle(self) -> None:  # noqa: B027 - optional hook with a no-op default
        """Wait (briefly) for a change of :meth:`tools` already under way.

        The agent awaits it after every tool round, so a change the round caused — a server
        announcing new tools during a call — is offered from the very next request (S19).
        """

    def rejected(self) -> Sequence[RejectedTool]:
        """The tools the source left out, and why (reported by the agent as events)."""
        return ()

    async def aclose(self) -> None:  # noqa: B027 - optional hook with a no-op default
        """Stop what the source runs (processes, connections). Idempotent; never raises."""

    def subscribe(self, listener: Callable[[ToolSource], None]) -> None:
        """Have ``listener(source)`` called after every change of :meth:`tools`."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[ToolSource], None]) -> None:
        """Stop calling ``listener``."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def changed(self) -> None:
        """Tell every subscriber that :meth:`tools` changed (call it from the implementation)."""
        for listener in list(self._listeners):
            listener(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
