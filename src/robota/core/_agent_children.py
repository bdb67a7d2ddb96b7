"""A journaled parent's sub-agents (issue 29, S40): journaled in the same store, resumed there.

When the run that calls an :class:`~robota.AgentTool` is journaled, the child's run is journaled
in the same journal, as an execution of its own whose id is derived from the calling execution's
id and the call's stable body id (:attr:`~robota.ToolContext.call_id`, the same in every process
that runs the call): :func:`child_execution_id`. The agent tool's call is an ordinary effect of
the parent, settled when the child's run ends.

On resume, the parent reuses every child call it settled, and charges what those children used
once (:func:`settled_children`, read from their journals: S40 keeps a continuation's limits
counting what was used before the crash). A child call the parent started without a recorded
result is not a reconciliation item (:func:`replayed`): its body runs again, and the body
continues the child's journaled execution — its recorded model calls and settled effects are
reused, a completed child returns its recorded result without a model call — so nothing of the
child is repeated. What the child's own journal cannot prove is refused for reconciliation as
for any execution: the parent's run fails with the child's
:class:`~robota.ReconciliationRequired` (its ``execution_id`` is the child's), the host settles
the items through the parent agent's :meth:`~robota.Agent.reconcile`, and resumes the parent.

A run that handed off (:class:`~robota.Handoff`) calls its receivers' agent tools too: every
look-up here searches the agent's tools, then those of each agent reachable through its handoffs
(nearest first), so a receiver's sub-agent is continued and charged like the entry agent's.

Leases: each execution has its own, so the child's never waits for the parent's (S10).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from robota.core._agent_tool import AgentTool, child_execution_id
from robota.core._handoff import TransferTool
from robota.core._limits import UsageLimits
from robota.core.execution._durable import read_records
from robota.core.execution._journal import ExecutionStarted
from robota.core.execution._journaled import Recovery, recover
from robota.core.execution._limits import Budget
from robota.core.execution._subagents import Delegation, Spend, SubagentLedger, roll_up

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core._abort import AbortSignal
    from robota.core._run_events import RunEvent
    from robota.core.execution._journal import ExecutionJournal
    from robota.core.execution._loop import ExecutionSettings
    from robota.core.execution._result import RunResult
    from robota.core.tools._registry import ToolRegistry

__all__ = ["child_execution_id", "replayed", "run_child", "settled_children", "state_owner"]


class _Child(Protocol):
    """What :func:`run_child` uses of the child :class:`~robota.Agent`."""

    async def _execute(
        self,
        input: str,
        settings: ExecutionSettings,
        signal: AbortSignal | None,
        notify: Callable[[RunEvent], None] | None,
        options: Any,
        parent: Delegation | None = None,
    ) -> RunResult[Any]: ...

    async def _continue_execution(
        self,
        journal: ExecutionJournal,
        execution_id: str,
        *,
        output: object,
        signal: AbortSignal | None,
        trace: Any = None,
        parent: Delegation | None = None,
    ) -> RunResult[Any]: ...


async def run_child(
    agent: _Child,
    input: str,
    output: object,
    settings: ExecutionSettings,
    signal: AbortSignal,
    options: Any,
    parent: Delegation,
) -> RunResult[Any]:
    """The child's run journaled in the parent's journal: started, or continued if it exists."""
    journal, execution_id = parent.journal, parent.execution_id
    assert journal is not None
    assert execution_id is not None
    if await read_records(journal, execution_id):
        # The parent runs this call again after a crash: continue what the child recorded.
        return await agent._continue_execution(
            journal,
            execution_id,
            output=output,
            signal=signal,
            trace=options.get("trace"),
            parent=parent,
        )
    return await agent._execute(
        input, settings, signal, parent.notify, {**options, "execution_id": execution_id}, parent
    )


def _chain(tools: ToolRegistry) -> list[ToolRegistry]:
    """``tools``, then the tools of every agent its handoffs reach, nearest first (issue 29)."""
    found: list[ToolRegistry] = []
    queue, seen = [tools], {id(tools)}
    while queue:
        current = queue.pop(0)
        found.append(current)
        for tool in current:
            if isinstance(tool, TransferTool):
                receiver: ToolRegistry = tool.handoff.agent._tools
                if id(receiver) not in seen:
                    seen.add(id(receiver))
                    queue.append(receiver)
    return found


def _agent_tool(tools: ToolRegistry, name: str | None) -> AgentTool | None:
    """The agent tool ``name`` among ``tools`` or, after a handoff, a receiver's tools."""
    if name is None:
        return None
    for registry in _chain(tools):
        tool = registry.get(name)
        if isinstance(tool, AgentTool):
            return tool
    return None


def replayed(recovery: Recovery, tools: ToolRegistry) -> None:
    """Drop the items of sub-agent calls that started without a recorded result.

    Running such a call again repeats nothing: its body continues the child's journaled
    execution, which refuses for reconciliation whatever it cannot prove itself.
    """
    recovery.items = [
        item
        for item in recovery.items
        if item.kind != "effect" or _agent_tool(tools, item.tool_name) is None
    ]


async def settled_children(
    journal: ExecutionJournal, recovery: Recovery, tools: ToolRegistry
) -> list[tuple[str, Spend]]:
    """What each sub-agent call ``recovery`` settled used, from the child's own journal.

    Each with its call's key, so a continuation lists it under the agent that made the call.
    """
    spends: list[tuple[str, Spend]] = []
    for effect in recovery.effects.values():
        started = effect.started
        if effect.state != "settled" or started is None:
            continue
        tool = _agent_tool(tools, started.tool_name)
        if tool is None:
            continue
        child_id = child_execution_id(recovery.execution_id, started.call_id)
        records = await read_records(journal, child_id)
        if not records:
            continue  # the child never started (refused before its run, say): nothing used
        child_tools: ToolRegistry = tool.agent._tools  # type: ignore[attr-defined]
        spend = await _spend_of(journal, recover(child_id, records), child_tools)
        spends.append((effect.call_key, spend))
    return spends


async def _spend_of(journal: ExecutionJournal, recovery: Recovery, tools: ToolRegistry) -> Spend:
    """A journaled child run's spending as its parent was charged with it (its own included)."""
    state = recovery.state
    budget = Budget(UsageLimits(), provider=state.provider, model=state.model)
    budget.restore(
        recovery.history[recovery.own_from :],
        requests=recovery.dispatched_calls,
        resumed=None,
        discarded=recovery.discarded,
        answered=recovery.answered,
    )
    ledger = SubagentLedger()
    requests, tool_calls = budget.requests, budget.tool_calls
    for _, spend in await settled_children(journal, recovery, tools):
        ledger.add(spend.usage, spend.cost, spend.by_agent)
        requests += spend.requests
        tool_calls += spend.tool_calls
    usage, cost, by_agent = roll_up(ledger, state.agent_name, budget.usage, budget.cost)
    return Spend(usage, cost, requests, tool_calls, by_agent)


async def state_owner(agent: Any, journal: ExecutionJournal, execution_id: str) -> Any:
    """The agent an execution's runtime state is compared with (S40 reconciliation).

    ``agent`` itself, or — for a sub-agent's execution in ``agent``'s journal — the agent below it
    (through its agent tools, nearest first) with the execution's saved agent name, so a host
    accepting a child's runtime-state difference through the parent accepts the child's value.
    """
    records = await read_records(journal, execution_id)
    if not records or not isinstance(records[0], ExecutionStarted):
        return agent
    name = records[0].state.agent_name
    queue, seen = [agent], {id(agent)}
    while queue:
        current = queue.pop(0)
        if current.name == name:
            return current
        for tool in current._tools:
            # A handoff's receiver runs in the caller's execution; its sub-agents are below it.
            below = tool.agent if isinstance(tool, AgentTool) else None
            if isinstance(tool, TransferTool):
                below = tool.handoff.agent
            if below is not None and id(below) not in seen:
                seen.add(id(below))
                queue.append(below)
    return agent
