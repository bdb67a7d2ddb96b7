"""One flow run's spending: every agent run's usage, model and tool calls, by agent (S29, S31).

Each agent run of a flow is counted here however it ends. A run that returned is counted from
its :class:`~robota.RunResult` (usage and cost, its sub-agents' included) and from the events it
emitted (model calls dispatched, tool calls asked for — a ``RunResult`` does not carry them);
a run that raised is counted from its :class:`~robota.UsageLimitExceeded` when it is one, else
from its events alone. :meth:`Ledger.left` is what the flow's limits leave for the next run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

from robota.core import (
    AgentEvent,
    AgentUsage,
    AssistantMessage,
    EventNames,
    RunResult,
    Usage,
    UsageLimitExceeded,
    UsageLimits,
    estimate_cost,
)

__all__ = ["Ledger", "RunCounter", "tightest"]


def _add_cost(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _merge(into: dict[str, AgentUsage], path: str, entry: AgentUsage) -> None:
    known = into.get(path)
    into[path] = (
        entry
        if known is None
        else AgentUsage(
            known.usage + entry.usage, _add_cost(known.cost, entry.cost), known.runs + entry.runs
        )
    )


def tightest(own: UsageLimits | None, left: UsageLimits) -> UsageLimits:
    """Field by field the smaller of an agent's own limits and what the flow has left.

    A run's ``limits=`` overrides the agent's field by field, so the flow's remainder alone
    could lift a tighter limit the agent was built with; this keeps both.
    """
    if own is None:
        return left
    values: dict[str, Any] = {}
    for name in left.__dataclass_fields__:
        a, b = getattr(own, name), getattr(left, name)
        values[name] = b if a is None else a if b is None else min(a, b)
    return UsageLimits(**values)


@final
class RunCounter:
    """Counts one agent run's model and tool calls from its events (nested sub-agents too).

    ``execution.round_completed`` with ``dispatched`` is one model call (a retried attempt is
    one too, as the limits count it); the tool calls of each complete committed reply are the
    calls the run asked to dispatch (a batch a limit refused counts, which errs on the safe
    side). ``usage``/``cost`` sum the replies, for a run that raised before returning a result.
    """

    __slots__ = ("cost", "requests", "tool_calls", "usage")

    def __init__(self) -> None:
        self.requests = 0
        self.tool_calls = 0
        self.usage = Usage()
        self.cost: float | None = 0.0

    def observe(self, event: AgentEvent) -> None:
        """Count ``event`` if it is a model call or a committed reply."""
        if event.name == EventNames.ROUND_COMPLETED:
            if event.data.get("dispatched"):
                self.requests += 1
        elif event.name == EventNames.PROVIDER_RESPONSE:
            message = event.data.get("message")
            if not isinstance(message, AssistantMessage):
                return
            if message.state == "complete":
                self.tool_calls += len(message.tool_calls)
            if message.usage is not None:
                self.usage = self.usage + message.usage
                model = message.model
                priced = None if model is None else estimate_cost(message.usage, model)
                self.cost = _add_cost(self.cost, priced)


@final
class Ledger:
    """What a flow run's agents used so far, and what its limits leave."""

    __slots__ = ("by_agent", "cost", "limits", "requests", "tool_calls", "usage")

    def __init__(self, limits: UsageLimits | None) -> None:
        self.limits = limits
        self.usage = Usage()
        self.cost: float | None = 0.0
        self.requests = 0
        self.tool_calls = 0
        self.by_agent: dict[str, AgentUsage] = {}

    def left(self) -> UsageLimits | None:
        """What the flow's limits leave (``None``: the flow has none)."""
        if self.limits is None:
            return None
        return self.limits.remaining(
            usage=self.usage,
            requests=self.requests,
            tool_calls=self.tool_calls,
            cost_usd=self.cost,
        )

    def returned(self, result: RunResult[Any], counter: RunCounter) -> None:
        """Count a run that returned a result."""
        self._count(result.usage, result.cost, counter.requests, counter.tool_calls)
        for path, entry in result.usage_by_agent.items():
            _merge(self.by_agent, path, entry)

    def raised(self, name: str, error: BaseException, counter: RunCounter) -> None:
        """Count a run that raised."""
        if isinstance(error, UsageLimitExceeded):
            usage, cost = error.usage, error.cost_usd
            requests, tool_calls = error.requests, error.tool_calls
        else:
            usage, cost = counter.usage, counter.cost
            requests, tool_calls = counter.requests, counter.tool_calls
        self._count(usage, cost, requests, tool_calls)
        if requests:
            _merge(self.by_agent, name, AgentUsage(usage, cost))

    def _count(self, usage: Usage, cost: float | None, requests: int, tool_calls: int) -> None:
        self.usage = self.usage + usage
        self.cost = _add_cost(self.cost, cost)
        self.requests += requests
        self.tool_calls += tool_calls

    def snapshot(self) -> Mapping[str, AgentUsage]:
        """The per-agent breakdown so far (a copy)."""
        return dict(self.by_agent)
