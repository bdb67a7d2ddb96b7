"""Running one step of a flow, whatever it is: an agent, a pool of agents, a flow, a function."""

from __future__ import annotations

import asyncio
import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, final

from robota.agents._context import Scope, StepFunction
from robota.agents._results import BranchResult, BranchStatus
from robota.core import Agent, ConfigurationError
from robota.core.orchestration import OrchestrationPrimitive

__all__ = [
    "Failed",
    "Outcome",
    "Pool",
    "Prompted",
    "Runnable",
    "Step",
    "as_step",
    "run_step",
    "step_name",
]


@final
class Pool:
    """Interchangeable agents a map's branches share: each branch borrows a free one.

    One agent runs one turn at a time (S38), so a map over a single agent runs its items one
    after another; a pool of ``n`` agents runs up to ``n`` at once.
    """

    __slots__ = ("_free", "agents")

    def __init__(self, agents: Sequence[Agent]) -> None:
        self.agents = tuple(agents)
        if not self.agents or not all(isinstance(a, Agent) for a in self.agents):
            raise ConfigurationError("a pool of agents needs at least one robota.Agent, only")
        self._free: tuple[asyncio.AbstractEventLoop, asyncio.Queue[Agent]] | None = None

    def _queue(self) -> asyncio.Queue[Agent]:
        # An asyncio.Queue serves the event loop it first waited on: a flow run again on another
        # loop (asyncio.run after asyncio.run) gets a queue of its own, every agent free in it.
        loop = asyncio.get_running_loop()
        if self._free is None or self._free[0] is not loop:
            queue: asyncio.Queue[Agent] = asyncio.Queue()
            for agent in self.agents:
                queue.put_nowait(agent)
            self._free = (loop, queue)
        return self._free[1]

    async def borrow(self) -> Agent:
        """A free agent (waits for one)."""
        return await self._queue().get()

    def give_back(self, agent: Agent) -> None:
        """Return a borrowed agent."""
        self._queue().put_nowait(agent)


@dataclass(slots=True)
class Outcome:
    """What a (nested) flow's steps produced: its output, how it ended, every step it ran."""

    output: str
    status: BranchStatus
    records: list[BranchResult] = field(default_factory=list)
    primitive: OrchestrationPrimitive = "sequential"


class Failed(Exception):
    """A step failed: the flow stops, carrying every step that ran so far up to ``Flow.run``."""

    def __init__(self, step_id: str, cause: BaseException, records: list[BranchResult]) -> None:
        super().__init__(step_id)
        self.step_id = step_id
        self.cause = cause
        self.records = records


@final
@dataclass(frozen=True, slots=True)
class Prompted:
    """An agent step of a neutral spec (S32 ``OrchestrationStep``): its own id and prompt.

    Attributes:
        agent: The agent the step's ``agent_type`` named.
        id: The spec step's id.
        prompt: The step's instruction, sent first.
        takes_input: Whether the step's input (the flow's, or the previous output) follows the
            prompt, after a blank line.
    """

    agent: Agent
    id: str
    prompt: str
    takes_input: bool

    def compose(self, text: str) -> str:
        """The user message: the prompt, then the input when the step takes it."""
        if not self.takes_input or not text:
            return self.prompt
        return f"{self.prompt}\n\n{text}" if self.prompt else text


class Runnable(ABC):
    """What a flow is to the steps code: something run on a text within a scope."""

    primitive: OrchestrationPrimitive
    label: str = ""
    """The flow's default step id when nested (its primitive's name unless set)."""

    @abstractmethod
    async def _execute(self, input: str | Sequence[str], scope: Scope) -> Outcome: ...


Step: TypeAlias = Agent | Runnable | StepFunction | Pool | Prompted
"""Any step the steps code runs (a pool of agents is a map's mapper)."""


def as_step(value: object, where: str) -> Step:
    """``value`` as a step, or a ConfigurationError naming ``where``."""
    if isinstance(value, (Agent, Runnable, Pool, Prompted)) or callable(value):
        return value
    raise ConfigurationError(
        f"{where} must be a robota.Agent, a flow (robota.agents.sequential/parallel/map_reduce) "
        f"or a function taking and returning a string, got {type(value).__name__}"
    )


def step_name(step: Step) -> str:
    """A step's default id: the agent's name, the flow's primitive, the function's name."""
    if isinstance(step, Agent):
        return step.name
    if isinstance(step, Pool):
        return step.agents[0].name
    if isinstance(step, Prompted):
        return step.id
    if isinstance(step, Runnable):
        return step.label or step.primitive
    return str(getattr(step, "__name__", "step"))


def unique_ids(names: Sequence[str]) -> list[str]:
    """``names`` with repeats told apart (``writer``, ``writer#2``); no two ids are equal."""
    taken: set[str] = set()
    ids: list[str] = []
    for name in names:
        candidate, n = name, 1
        while candidate in taken:  # a repeat, or a name another's repeat already took
            n += 1
            candidate = f"{name}#{n}"
        taken.add(candidate)
        ids.append(candidate)
    return ids


async def run_step(
    step: Step, input: str | Sequence[str], step_id: str, scope: Scope
) -> tuple[BranchResult, list[BranchResult]]:
    """Run ``step`` as ``step_id``: its own result, and every step record it adds.

    Raises:
        Failed: a nested flow's step failed (its records included).
        Exception: what an agent or function step raised.
    """
    text = input if isinstance(input, str) else "\n".join(input)
    if isinstance(step, Agent):
        branch = await scope.run.run_agent(step, text, step_id, scope)
        return branch, [branch]
    if isinstance(step, Prompted):
        branch = await scope.run.run_agent(step.agent, step.compose(text), step_id, scope)
        return branch, [branch]
    if isinstance(step, Pool):
        agent = await step.borrow()
        try:
            branch = await scope.run.run_agent(agent, text, step_id, scope)
        finally:
            step.give_back(agent)
        return branch, [branch]
    if isinstance(step, Runnable):
        outcome = await step._execute(input, scope.nested(step_id))
        branch = BranchResult(step_id, text, outcome.output, outcome.status)
        return branch, outcome.records
    if scope.signal.aborted:
        branch = BranchResult(step_id, text, "", "interrupted")
        return branch, [branch]
    value = step(text)
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, str):
        raise ConfigurationError(
            f"step {step_id!r} returned {type(value).__name__}; a function step returns a str"
        )
    branch = BranchResult(step_id, text, value, "complete")
    return branch, [branch]
