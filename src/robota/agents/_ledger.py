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


def _executions(event: AgentEvent) -> list[str]:
    """The execution ids on ``event``'s owner path, outermost first (a sub-agent's last)."""
    return [ref.id for ref in event.owner_path if ref.type == "execution"]


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

    __slots__ = ("_charged", "_paths", "by_agent", "cost", "requests", "tool_calls", "usage")

    def __init__(self) -> None:
        self.requests = 0
        self.tool_calls = 0
        self.usage = Usage()
        self.cost: float | None = 0.0
        # Execution id -> its agent path (``lead``, ``lead/researcher``), from run_started.
        self._paths: dict[str, str] = {}
        self._charged: set[str] = set()  # the executions counted as a run in by_agent
        self.by_agent: dict[str, AgentUsage] = {}
        """Each agent's own usage by path (its sub-agents under theirs), model callers only."""

    def observe(self, event: AgentEvent) -> None:
        """Count ``event`` if it is a model call or a committed reply."""
        if event.name == EventNames.RUN_STARTED:
            runs = _executions(event)
            if runs:
                parent = self._paths.get(runs[-2], "") if len(runs) > 1 else ""
                name = str(event.data.get("agent_name") or "agent")
                self._paths[runs[-1]] = f"{parent}/{name}" if parent else name
        elif event.name == EventNames.ROUND_COMPLETED:
            if event.data.get("dispatched"):
                self.requests += 1
                self._charge(event, Usage(), 0.0)
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
                self._charge(event, message.usage, priced)

    def _charge(self, event: AgentEvent, usage: Usage, cost: float | None) -> None:
        runs = _executions(event)
        path = self._paths.get(runs[-1]) if runs else None
        if path is None:
            return
        first = runs[-1] not in self._charged  # this execution's first model call: one run
        self._charged.add(runs[-1])
        entry = AgentUsage(usage, cost, 1 if first else 0)
        _merge(self.by_agent, path, entry)


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
        if counter.by_agent:  # S29: each agent's own spend under its path, sub-agents apart
            for path, entry in counter.by_agent.items():
                _merge(self.by_agent, path, entry)
        elif requests:
            _merge(self.by_agent, name, AgentUsage(usage, cost))

    def _count(self, usage: Usage, cost: float | None, requests: int, tool_calls: int) -> None:
        self.usage = self.usage + usage
        self.cost = _add_cost(self.cost, cost)
        self.requests += requests
        self.tool_calls += tool_calls

    def snapshot(self) -> Mapping[str, AgentUsage]:
        """The per-agent breakdown so far (a copy)."""
        return dict(self.by_agent)
