"""What a run's sub-agents used, rolled up into its result (issue 29, S29).

A sub-agent (``Agent.as_tool``) runs its own loop; what it spends is the parent's spending too.
One :class:`SubagentLedger` per parent run — built when the first sub-agent settles, so a run
without one allocates nothing — keeps each sub-agent's usage by its path relative to the
parent (``child``, ``child/grandchild``), and :func:`roll_up` turns the parent's own usage and
the ledger into the result's totals and its ``usage_by_agent``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, final

from robota.core._run_events import SubagentEvent
from robota.core._usage import Usage
from robota.core.execution._result import _NO_AGENTS as NO_AGENTS
from robota.core.execution._result import AgentUsage

if TYPE_CHECKING:
    from robota.core._emit import EventEmitter
    from robota.core._run_events import RunEvent
    from robota.core.execution._journal import ExecutionJournal
    from robota.core.execution._limits import Budget
    from robota.core.tools._executor import ToolGate

__all__ = ["NO_AGENTS", "Delegation", "Spend", "SubagentLedger", "charge", "roll_up", "surfaced"]


@final
@dataclass(frozen=True, slots=True)
class Spend:
    """What one child run used, its own sub-agents included (internal, issue 29).

    Attributes:
        usage: Usage of every model call of the run and of its sub-agents (S29).
        cost: Their estimated USD cost; ``None`` when unknown.
        requests: Model calls made, as the run's limits count them (retries, the forced
            summary and its sub-agents' calls included).
        tool_calls: Tool calls dispatched, its sub-agents' included.
        by_agent: Path relative to the run's parent → that agent's own usage.
    """

    usage: Usage
    cost: float | None
    requests: int
    tool_calls: int
    by_agent: Mapping[str, AgentUsage]


@final
@dataclass(frozen=True, slots=True)
class Delegation:
    """What a child's run takes from the tool call that started it (internal).

    Attributes:
        span: The tool call's event span: the child's events nest under it (S33).
        fresh: Run the child in a conversation of its own (its system prompt only), leaving
            the agent's own history untouched (S34); else continue the agent's conversation.
        gate: The gate the child's tool calls pass for this run (the ceiling, S21).
        settled: Told what the child's run used once it ended, however it ended (completed,
            failed, cancelled), so no spending of a failed child is lost to the parent.
        notify: Receives the child's stream events when the calling run is streamed (each
            already wrapped as a ``SubagentEvent`` for the caller's stream); else ``None``.
        journal: The calling run's journal when it is journaled (S40): the child's run is
            journaled there too, as ``execution_id``.
        execution_id: The child's execution id, derived from the calling execution's id and
            the tool call's stable id, so a resumed parent finds the same child execution.
    """

    span: EventEmitter | None
    fresh: bool
    gate: ToolGate | None
    settled: Callable[[Spend], None] | None = None
    notify: Callable[[RunEvent], None] | None = None
    journal: ExecutionJournal | None = None
    execution_id: str | None = None


def surfaced(
    notify: Callable[[RunEvent], None] | None, caller: str, child: str, call_id: str
) -> Callable[[RunEvent], None] | None:
    """Where a child's stream events go: the calling run's stream, wrapped; ``None`` if unstreamed.

    ``caller`` is the calling run's agent name, ``child`` the sub-agent's, ``call_id`` the
    calling tool call's minted id (S36). A grandchild's event arrives already wrapped by the
    child's own call, with its path from the child down: it keeps its ``call_id`` and gains the
    caller's name in front, so a consumer sees one flat wrapper with the full path.
    """
    if notify is None:
        return None
    path = f"{caller}/{child}"

    def forward(event: RunEvent) -> None:
        if isinstance(event, SubagentEvent):
            notify(replace(event, agent=f"{caller}/{event.agent}"))
        else:
            notify(SubagentEvent(path, call_id, event))

    return forward


def _add_cost(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


@final
class SubagentLedger:
    """Usage and cost of the sub-agents one run called, by path relative to the run's agent."""

    __slots__ = ("by_path", "cost", "usage")

    def __init__(self) -> None:
        self.by_path: dict[str, AgentUsage] = {}
        self.usage = Usage()
        self.cost: float | None = 0.0

    def add(self, usage: Usage, cost: float | None, by_agent: Mapping[str, AgentUsage]) -> None:
        """Count one sub-agent run: its total and its own per-agent breakdown (relative paths)."""
        self.usage = self.usage + usage
        self.cost = _add_cost(self.cost, cost)
        for path, entry in by_agent.items():
            known = self.by_path.get(path)
            self.by_path[path] = (
                entry
                if known is None
                else AgentUsage(
                    known.usage + entry.usage,
                    _add_cost(known.cost, entry.cost),
                    known.runs + entry.runs,
                )
            )


def roll_up(
    ledger: SubagentLedger, name: str, usage: Usage, cost: float | None
) -> tuple[Usage, float | None, Mapping[str, AgentUsage]]:
    """The run's total usage and cost, and its ``usage_by_agent`` (own entry first).

    A run without sub-agents keeps :data:`NO_AGENTS` (``RunResult.usage_by_agent`` then builds
    the single entry on access; issue 27: nothing allocated per plain run).
    """
    own = {name: AgentUsage(usage, cost)}
    for path, entry in ledger.by_path.items():
        own[f"{name}/{path}"] = entry
    return usage + ledger.usage, _add_cost(cost, ledger.cost), own


class Charged(Protocol):
    """What :func:`charge` reads and writes of a run; the loop's ``Execution`` is one.

    Typed by shape so that this module, which the loop imports, does not import the loop back
    (issue 32: no import cycle, type-level included).
    """

    subagents: SubagentLedger | None

    @property
    def _budget(self) -> Budget | None: ...


def charge(run: Charged, spend: Spend, ledger: SubagentLedger | None = None) -> None:
    """Count one child run's spending as ``run``'s: its result's roll-up and its limits.

    ``ledger``: the roll-up it is listed in, when not the active agent's (a handoff's, issue 29).
    """
    if ledger is None:
        ledger = run.subagents
    if ledger is None:
        ledger = run.subagents = SubagentLedger()
    ledger.add(spend.usage, spend.cost, spend.by_agent)
    if run._budget is not None:
        run._budget.delegated(spend.usage, spend.cost, spend.requests, spend.tool_calls)
