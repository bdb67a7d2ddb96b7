"""Routing a registered agent's whole tree to activities: sub-agents and guardrails (issue 29).

Internal. A Temporal run builds its agent in workflow code and routes every provider call and
tool body to an activity. The agent's tree is routed the same way:

* a **sub-agent** (an :class:`~robota.AgentTool`, ``Agent.as_tool``) stays a tool of the
  workflow: its delegation — the parent's abort signal, what is left of the parent's limits and
  round budget, the gate ceiling, the usage roll-up — runs in workflow code, exactly as
  in-process, and the child's own loop runs there too; its providers and tools are routed like
  the parent's, addressed by their *path* below the registered agent (``tool:<name>``). The
  child's model calls and tool effects are therefore activities of the parent's run: recorded
  in its history, never repeated by a replay, journaled under the same workers' journal (S40);
* a **function guardrail** (a plain function, sync or async) runs in the ``robota.guardrail``
  activity — never in workflow code, where it would run again on every replay — and its
  verdict is recorded in the run's history;
* a **guardrail agent** is routed like a sub-agent (path ``guardrail:<index>:<check>``): its
  loop runs in workflow code, its model calls are model-call activities.

An agent object met twice in the tree (one guardrail agent checking input and output, say) is
routed once and addressed by the first path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

from robota.core import (
    Agent,
    AgentTool,
    ConfigurationError,
    GuardrailPhase,
    GuardrailResult,
    Handoff,
    InputGuardrail,
    OutputGuardrail,
    PermissionGate,
    Provider,
    Tool,
    ToolGate,
    ToolGuardrail,
)
from robota.lowlevel import agent_parts, route_dispatch
from robota.temporal._codec import GuardrailInput

__all__ = ["Router", "check_runnable"]

_MAX_DEPTH: Final = 32  # sub-agents below sub-agents; far past any real tree

ProviderFactory = Callable[[Provider, tuple[str, ...], Any], Provider]
ToolFactory = Callable[[Tool, tuple[str, ...]], Tool]
CheckRunner = Callable[[GuardrailInput, str], Awaitable[GuardrailResult]]
GateFactory = Callable[[ToolGate | None], ToolGate | None]


def _children(agent: Agent) -> list[tuple[str, Agent]]:
    """The agents directly below ``agent``: its sub-agents and its guardrail agents."""
    parts = agent_parts(agent)
    found: list[tuple[str, Agent]] = [
        (f"tool:{entry.name}", entry.agent)
        for entry in parts.tools.values()
        if isinstance(entry, AgentTool) and isinstance(entry.agent, Agent)
    ]
    for index, guardrail in enumerate(parts.guardrails):
        for check in ("check", "before", "after"):
            target = getattr(guardrail, check, None)
            if isinstance(target, Agent):
                found.append((f"guardrail:{index}:{check}", target))
    return found


def _problem(agent: Agent) -> str:
    parts = agent_parts(agent)
    if parts.journal is not None:
        return (
            "it has its own execution journal; on Temporal the workers' journal records "
            "effects (create_worker(journal=...)) — build the agent without journal="
        )
    if any(isinstance(getattr(t, "handoff", None), Handoff) for t in parts.tools.values()):
        # Issue 29: a handoff swaps the run's agent in process; not on Temporal yet.
        return "it has handoffs, which do not run on Temporal yet — build it without them"
    if parts.sources:
        names = ", ".join(source.name for source in parts.sources)
        return (
            f"it has tool sources ({names}); a source starts and answers inside one process "
            "— register its tools directly"
        )
    hooks = getattr(parts.gate, "hooks", None)  # a guardrail-wrapped gate shows its own gate's
    if parts.hooks is not None or hooks is not None:
        return (
            "it has hooks; a hook runs a command or a request, which workflow code cannot do "
            "(it is replayed)"
        )
    return ""


def check_runnable(agent: Agent, name: str, build: Callable[[], Agent] | None = None) -> None:
    """Refuse what cannot run in workflow code (it is replayed, and may do no I/O).

    The registered agent and every agent below it (sub-agents, guardrail agents) are checked.
    With ``build`` (the agent's factory), an agent that has agents below it is built once more:
    an agent object met in both builds was not built fresh by the factory (see
    :func:`_check_fresh`).
    """
    if build is not None and _children(agent):
        _check_fresh(agent, build(), name)
    stack: list[tuple[Agent, tuple[str, ...]]] = [(agent, ())]
    seen: set[int] = set()
    while stack:
        current, path = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        problem = _problem(current)
        if problem:
            where = "" if not path else f" (its sub-agent {current.name!r} at {'/'.join(path)})"
            raise ConfigurationError(
                f"the registered agent {name!r} cannot run on Temporal{where}: {problem}"
            )
        if len(path) >= _MAX_DEPTH:
            raise ConfigurationError(
                f"the registered agent {name!r} nests sub-agents deeper than {_MAX_DEPTH}"
            )
        stack.extend((child, (*path, step)) for step, child in _children(current))


def _tree(agent: Agent) -> dict[int, tuple[str, tuple[str, ...]]]:
    """Every agent below ``agent``, by identity: its name and its first path."""
    found: dict[int, tuple[str, tuple[str, ...]]] = {}
    stack: list[tuple[Agent, tuple[str, ...]]] = [(agent, ())]
    while stack:
        current, path = stack.pop()
        if id(current) in found or len(path) > _MAX_DEPTH:
            continue
        if path:
            found[id(current)] = (current.name, path)
        stack.extend((child, (*path, step)) for step, child in _children(current))
    return found


def _check_fresh(agent: Agent, again: Agent, name: str) -> None:
    """Refuse a sub-agent (or guardrail agent) the factory hands every call (issue 29).

    A run routes the agents below its agent (their providers and tools become activities'
    stand-ins). An object the factory shares between calls would be routed by one run and
    found routed by the next — and by the worker's own instance of the agent, where the
    activities look for the real provider and tools — so nothing of it could run.
    """
    first = _tree(agent)
    for key, (child, path) in _tree(again).items():
        if key in first:
            raise ConfigurationError(
                f"the registered agent {name!r} cannot run on Temporal: its sub-agent "
                f"{child!r} (at {'/'.join(path)}) is the same object on every call of the "
                "factory; a factory must build its sub-agents and guardrail agents fresh on "
                "every call (issue 29)"
            )


class Router:
    """Routes one run's agent tree (see the module docstring).

    Args:
        provider: Builds the routed provider of a real one: ``(real, path, retry policy)``.
        tool: Builds the routed tool of a real one: ``(real, path)``.
        check: Runs a function guardrail's check in its activity: ``(input, guardrail name)``.
        gate: Gives a routed agent its run's own gate (the approver of this run).
    """

    def __init__(
        self, provider: ProviderFactory, tool: ToolFactory, check: CheckRunner, gate: GateFactory
    ) -> None:
        self._provider = provider
        self._tool = tool
        self._check = check
        self._gate = gate
        self._seen: set[int] = set()

    def route(self, agent: Agent, path: tuple[str, ...] = ()) -> None:
        """Route ``agent`` (at ``path`` below the registered one) and everything below it."""
        if id(agent) in self._seen:
            return  # met again: already routed, addressed by its first path
        self._seen.add(id(agent))
        if any(not _fresh(item) for item in agent_parts(agent).providers):
            raise ConfigurationError(
                f"the agent {agent.name!r} was already routed by another run: a factory must "
                "build its sub-agents and guardrail agents fresh on every call (issue 29)"
            )
        retry = agent.retry  # read before routing: Temporal owns the retries (issue 28)
        below = dict(_children(agent))

        def tool(real: Tool) -> Tool:
            if isinstance(real, AgentTool):
                return real  # the delegation stays in workflow code; its child is routed
            return self._tool(real, path)

        def guardrail(entry: Any) -> Any:
            return self._guardrail(agent, entry, path)

        route_dispatch(
            agent,
            lambda real: self._provider(real, path, retry),
            tool,
            guardrail=guardrail,
            gate=self._gate,
        )
        for step, child in below.items():
            self.route(child, (*path, step))

    def _guardrail(self, agent: Agent, entry: Any, path: tuple[str, ...]) -> Any:
        index = agent_parts(agent).guardrails.index(entry)

        def check(name: str, phase: GuardrailPhase, function: Any) -> Any:
            if function is None or isinstance(function, Agent):
                return function  # a guardrail agent runs here; its model calls are routed
            runner = self._check

            async def run_in_activity(value: object) -> GuardrailResult:
                spec = GuardrailInput("", path, index, name, phase, value)
                return await runner(spec, entry.name)

            return run_in_activity

        if isinstance(entry, InputGuardrail):
            return InputGuardrail(
                check("check", "input", entry.check),
                name=entry.name,
                run_in_parallel=entry.run_in_parallel,
            )
        if isinstance(entry, OutputGuardrail):
            return OutputGuardrail(check("check", "output", entry.check), name=entry.name)
        assert isinstance(entry, ToolGuardrail)
        return ToolGuardrail(
            check("before", "tool_before", entry.before),
            after=check("after", "tool_after", entry.after),
            name=entry.name,
            tools=None if entry.tools is None else sorted(entry.tools),
        )


def _fresh(provider: Provider) -> bool:
    return not getattr(provider, "robota_routed", False)


def own_gate(approve: Any) -> GateFactory:
    """A gate factory: a routed agent's own copy of its permission gate, asking ``approve``.

    S21: an ask waits for the robota.answer_approval update to *this* run.
    """

    def gate(inner: ToolGate | None) -> ToolGate | None:
        if not isinstance(inner, PermissionGate):
            return inner
        own = inner.with_approver(approve)
        own.remembered = list(inner.remembered)  # this run's consent only
        return own

    return gate
