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

A child execution that cannot be continued as things are — this agent's live history conflicts
with its checkpoint, its model chain or output changed, its tool sources do not start — fails the
parent's run with an :class:`~robota.ExecutionControlError` (code ``subagent_not_resumable``,
:func:`not_resumable`), never a tool failure the parent would settle: the child's effects may have
happened, and a model calling the child again would repeat them (S40).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from robota.core._abort import is_abort
from robota.core._agent_tool import AgentTool, child_execution_id
from robota.core._errors import ConfigurationError, ExecutionControlError
from robota.core._handoff import HandoffReceiver, TransferTool
from robota.core._limits import UsageLimits
from robota.core._messages import AssistantMessage
from robota.core.execution._attempts import NO_USAGE, add_usage, charged_cost
from robota.core.execution._durable import read_records
from robota.core.execution._journal import EffectStarted, ExecutionStarted, ExecutionStateError
from robota.core.execution._limits import Budget
from robota.core.execution._recovery import Recovery, recover
from robota.core.execution._subagents import Delegation, Spend, SubagentLedger, roll_up

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core._abort import AbortSignal
    from robota.core._run_events import RunEvent
    from robota.core.execution._journal import ExecutionJournal
    from robota.core.execution._loop import ExecutionSettings
    from robota.core.execution._result import RunResult
    from robota.core.tools._registry import ToolRegistry

__all__ = [
    "child_execution_id",
    "direct_resume",
    "not_resumable",
    "replayed",
    "run_child",
    "settled_children",
    "state_owner",
]


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


def direct_resume(execution_id: str, owner: Any) -> ExecutionStateError:
    """``resume()`` of a sub-agent's execution through its caller's agent: refused, clearly.

    Resuming it as the calling agent would continue the child's conversation with the caller's
    model and tools; it is continued by resuming the calling execution, whose call runs again.
    """
    caller, slash, _ = execution_id.rpartition("/")
    which = f"execution {caller!r}" if slash else "its calling execution"
    return ExecutionStateError(
        f"execution {execution_id!r} is the run of the sub-agent {owner.name!r} that a call of "
        f"this agent's {which} started; resume {which} instead (the call continues this one), "
        f"and settle this execution's reconciliation items with reconcile({execution_id!r}, ...)",
        code="subagent_execution",
    )


def not_resumable(
    error: Exception, execution_id: str, running: bool, signal: AbortSignal
) -> ExecutionControlError | None:
    """The control error a continued child's ``error`` becomes, or ``None`` to let it through.

    Before the child's loop runs (``running`` false) any failure but a control outcome or the
    run's abort; once it runs, a refusal of the continuation itself (an execution-state or
    configuration error, e.g. a changed model chain). A provider or tool failure of the running
    child stays what it is live: the call's failure, shown to the parent's model.
    """
    if isinstance(error, ExecutionControlError) or is_abort(error, signal):
        return None
    if running and not isinstance(error, (ExecutionStateError, ConfigurationError)):
        return None
    return ExecutionControlError(
        f"the sub-agent's execution {execution_id!r} cannot be continued: {error}; its effects "
        "may have happened, so the call is not settled as a failure — fix the cause (the cause "
        "of this error says what) and resume the calling execution",
        code="subagent_not_resumable",
        context={"execution_id": execution_id},
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
                receiver = cast("HandoffReceiver", tool.handoff.agent)._tools
                if id(receiver) not in seen:
                    seen.add(id(receiver))
                    queue.append(receiver)
    return found


def _tool(tools: ToolRegistry, name: str) -> object:
    """The tool ``name`` among ``tools`` or, after a handoff, a receiver's (nearest first)."""
    for registry in _chain(tools):
        tool = registry.get(name)
        if tool is not None:
            return tool
    return None


def _agent_tool(tools: ToolRegistry, name: str | None) -> AgentTool | None:
    """The agent tool ``name`` among ``tools`` or, after a handoff, a receiver's tools."""
    tool = _tool(tools, name) if name is not None else None
    return tool if isinstance(tool, AgentTool) else None


async def replayed(
    journal: ExecutionJournal, recovery: Recovery, tools: ToolRegistry, catalog: str
) -> None:
    """Drop the items of sub-agent calls that started without a recorded result.

    Running such a call again repeats nothing: its body continues the child's journaled
    execution, which refuses for reconciliation whatever it cannot prove itself. Only a call the
    journal shows was a sub-agent's: its tool is an agent tool now, and either the catalog
    (``catalog``: this agent's digest now) is the one the execution began with or the child's
    execution exists. A plain tool's uncertain effect under a name an agent tool took later
    stays an item (S40: never guessed).
    """
    unchanged = recovery.state.tool_catalog_digest == catalog
    kept = []
    for item in recovery.items:
        agent_call = item.kind == "effect" and _agent_tool(tools, item.tool_name) is not None
        if agent_call and (unchanged or await _child_started(journal, recovery, item.call_id)):
            continue
        kept.append(item)
    recovery.items = kept


async def _child_started(
    journal: ExecutionJournal, recovery: Recovery, call_id: str | None
) -> bool:
    if call_id is None:
        return False
    return bool(await read_records(journal, child_execution_id(recovery.execution_id, call_id)))


async def settled_children(
    journal: ExecutionJournal, recovery: Recovery, tools: ToolRegistry | None
) -> list[tuple[str, Spend]]:
    """What each sub-agent call ``recovery`` settled used, from the child's own journal.

    A call of a tool ``tools`` no longer has (the host accepted a changed catalog; ``None``: the
    calling agent itself is unknown) may have been a sub-agent's: its child execution is looked
    for too, so what it used is not lost to the limits (S40). Each comes with its call's key, so
    a continuation lists it under the agent that made the call (a handoff's, issue 29).
    """
    spends: list[tuple[str, Spend]] = []
    for effect in recovery.effects.values():
        started = effect.started
        if effect.state != "settled" or started is None:
            continue
        known = _tool(tools, started.tool_name) if tools is not None else None
        if known is not None and not isinstance(known, AgentTool):
            continue
        child_id = child_execution_id(recovery.execution_id, started.call_id)
        records = await read_records(journal, child_id)
        if not records:
            continue  # the child never started (refused before its run, say): nothing used
        below: ToolRegistry | None = None
        if isinstance(known, AgentTool):
            below = known.agent._tools  # type: ignore[attr-defined]
        spend = await _spend_of(journal, recover(child_id, records), below)
        spends.append((effect.call_key, spend))
    return spends


async def _spend_of(
    journal: ExecutionJournal, recovery: Recovery, tools: ToolRegistry | None
) -> Spend:
    """A journaled child run's spending as its parent was charged with it (its own included).

    As :meth:`Execution.spend` counts it live: usage and cost from the replies as reported (a
    discarded attempt's included; an unattested one leaves the cost unknown, S29 — never priced
    from an estimate), model and tool calls as the limits count them.
    """
    state = recovery.state
    own = recovery.history[recovery.own_from :]
    budget = Budget(UsageLimits(), provider=state.provider, model=state.model)
    budget.restore(
        own,
        requests=recovery.dispatched_calls,
        resumed=None,
        discarded=recovery.discarded,
        answered=recovery.answered,
    )
    replies = [m for m in own if isinstance(m, AssistantMessage)]
    usage = NO_USAGE
    for message, _ in recovery.discarded:
        usage = add_usage(usage, message.usage)
    for message in replies:
        usage = add_usage(usage, message.usage)
    answered, provider = recovery.answered, state.provider
    charges = [(m, answered.get(m.id, provider)) for m in replies]
    charges.extend((m, by or provider) for m, by in recovery.discarded)
    cost = charged_cost(charges, state.model, recovery.unattested)
    ledger = SubagentLedger()
    requests, tool_calls = budget.requests, budget.tool_calls
    for _, spend in await settled_children(journal, recovery, tools):
        ledger.add(spend.usage, spend.cost, spend.by_agent)
        requests += spend.requests
        tool_calls += spend.tool_calls
    total, cost, by_agent = roll_up(ledger, state.agent_name, usage, cost)
    return Spend(total, cost, requests, tool_calls, by_agent)


async def state_owner(agent: Any, journal: ExecutionJournal, execution_id: str) -> Any:
    """The agent an execution's runtime state is compared with (S40 reconciliation).

    ``agent`` itself, or — for a sub-agent's execution in ``agent``'s journal — the agent below it
    that ran it, so a host accepting a child's runtime-state difference through the parent accepts
    the child's value. Found by the call that started it (``<parent id>/<call id>``: the calling
    execution's ``EffectStarted`` names the agent tool), not by name — a parent and its child may
    share one (two unnamed agents are both ``"agent"``). A hashed child id (``sub_…``) names no
    call: the agent below with the execution's saved agent name, nearest first.
    """
    by_call = await _started_by(agent, journal, execution_id)
    if by_call is not None:
        return by_call
    if _HASHED.fullmatch(execution_id) is None:
        return agent
    records = await read_records(journal, execution_id)
    if not records or not isinstance(records[0], ExecutionStarted):
        return agent
    name = records[0].state.agent_name
    queue, seen = [agent], {id(agent)}
    while queue:
        current = queue.pop(0)
        if current is not agent and current.name == name:
            return current
        for tool in current._tools:
            # A handoff's receiver runs in the caller's execution; its sub-agents are below it.
            below: Any = tool.agent if isinstance(tool, AgentTool) else None
            if isinstance(tool, TransferTool):
                below = tool.handoff.agent
            if below is not None and id(below) not in seen:
                seen.add(id(below))
                queue.append(below)
    return agent


_HASHED: Final = re.compile(r"sub_[0-9a-f]{48}")


async def _started_by(agent: Any, journal: ExecutionJournal, execution_id: str) -> Any:
    """The sub-agent whose call in the calling execution started ``execution_id``, if one did."""
    caller_id, _, call_id = execution_id.rpartition("/")
    if not caller_id:
        return None
    tool_name = next(
        (
            record.tool_name
            for record in await read_records(journal, caller_id)
            if isinstance(record, EffectStarted) and record.call_id == call_id
        ),
        None,
    )
    if tool_name is None:
        return None  # an id the host chose with a "/" in it, not a call's child
    caller = await state_owner(agent, journal, caller_id)
    tool = _agent_tool(caller._tools, tool_name)
    return tool.agent if tool is not None else None
