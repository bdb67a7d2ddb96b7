"""The orchestration primitives, steps, specs and results (S32): frozen values, no runtime.

Each spec checks only its own shape when built (non-empty, unique step ids, references that name
a step, positive bounds), so an implementer never receives an inconsistent one; what a primitive
does with it is the implementer's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError
from robota.core._usage import Usage

__all__ = [
    "ORCHESTRATION_PRIMITIVES",
    "Delegation",
    "GroupChatSpec",
    "HandoffSpec",
    "HierarchicalSpec",
    "OrchestrationPrimitive",
    "OrchestrationResult",
    "OrchestrationSpec",
    "OrchestrationStep",
    "ParallelSpec",
    "SequentialSpec",
    "StepResult",
]

OrchestrationPrimitive: TypeAlias = Literal[
    "sequential", "parallel", "hierarchical", "handoff", "group_chat"
]
"""The neutral orchestration mechanisms:

* ``sequential`` — a fixed pipeline, one step after another;
* ``parallel`` — steps at once, results in step order;
* ``hierarchical`` — a manager step keeps control and delegates to workers, round by round;
* ``handoff`` — control moves from step to step as a policy decides;
* ``group_chat`` — steps take turns, a policy choosing who speaks next.
"""

ORCHESTRATION_PRIMITIVES: Final[tuple[OrchestrationPrimitive, ...]] = (
    "sequential",
    "parallel",
    "hierarchical",
    "handoff",
    "group_chat",
)
"""Every primitive, in the order above."""


def _text(value: object, what: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise ConfigurationError(f"{what} must be a {'' if empty else 'non-empty '}string")
    return value


def _bound(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{what} must be a positive integer or None, got {value!r}")
    return value


@final
@dataclass(frozen=True, slots=True)
class OrchestrationStep:
    """One neutral unit of work of a run.

    Attributes:
        id: The step's id, unique within its spec.
        label: A human-facing label (never an application role).
        agent_type: The key of the agent definition that runs the step.
        prompt: The step's instruction.
        model: A model for this step, when it differs.
        allowed_tools: Tools the step may use (permission scoping); empty: no restriction.
        disallowed_tools: Tools the step may not use.
    """

    id: str
    label: str
    agent_type: str
    prompt: str
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _text(self.id, "a step id")
        _text(self.label, f"step {self.id!r}: label", empty=True)
        _text(self.agent_type, f"step {self.id!r}: agent_type")
        _text(self.prompt, f"step {self.id!r}: prompt", empty=True)
        if self.model is not None:
            _text(self.model, f"step {self.id!r}: model")
        for field_name in ("allowed_tools", "disallowed_tools"):
            names = getattr(self, field_name)
            if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
                raise ConfigurationError(
                    f"step {self.id!r}: {field_name} must be a sequence of tool names"
                )
            object.__setattr__(self, field_name, tuple(names))


def _steps(steps: Sequence[OrchestrationStep], spec: str) -> tuple[OrchestrationStep, ...]:
    items = tuple(steps)
    if not items:
        raise ConfigurationError(f"a {spec} spec needs at least one step")
    seen: set[str] = set()
    for step in items:
        if not isinstance(step, OrchestrationStep):
            raise ConfigurationError(
                f"a {spec} spec's steps must be OrchestrationStep, got {step!r}"
            )
        if step.id in seen:
            raise ConfigurationError(f"a {spec} spec has two steps with id {step.id!r}")
        seen.add(step.id)
    return items


def _reference(step_id: object, steps: tuple[OrchestrationStep, ...], what: str) -> str:
    known = [step.id for step in steps]
    if step_id not in known:
        raise ConfigurationError(f"{what} {step_id!r} names no step; the steps are {known}")
    return str(step_id)


@final
@dataclass(frozen=True, slots=True)
class SequentialSpec:
    """Steps run one after another.

    Attributes:
        steps: In order.
        thread_output: Give each step the previous step's output with its prompt.
    """

    steps: tuple[OrchestrationStep, ...]
    thread_output: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", _steps(self.steps, "sequential"))


@final
@dataclass(frozen=True, slots=True)
class ParallelSpec:
    """Steps run at once, each with its own prompt; results come back in step order.

    Attributes:
        steps: The steps.
        max_concurrency: Most steps in flight at once; ``None``: all of them.
    """

    steps: tuple[OrchestrationStep, ...]
    max_concurrency: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", _steps(self.steps, "parallel"))
        _bound(self.max_concurrency, "max_concurrency")


@final
@dataclass(frozen=True, slots=True)
class HandoffSpec:
    """Control moves between steps as the implementer's policy decides.

    Attributes:
        steps: The candidates, addressed by id.
        entry_step_id: The step that has control first.
        max_handoffs: Most transfers before the run fails; ``None``: the number of steps.
    """

    steps: tuple[OrchestrationStep, ...]
    entry_step_id: str
    max_handoffs: int | None = None

    def __post_init__(self) -> None:
        steps = _steps(self.steps, "handoff")
        object.__setattr__(self, "steps", steps)
        _reference(self.entry_step_id, steps, "entry_step_id")
        _bound(self.max_handoffs, "max_handoffs")


@final
@dataclass(frozen=True, slots=True)
class Delegation:
    """One piece of work a manager step delegates: run ``step_id`` with ``prompt``."""

    step_id: str
    prompt: str

    def __post_init__(self) -> None:
        _text(self.step_id, "a delegation's step_id")
        _text(self.prompt, "a delegation's prompt", empty=True)


@final
@dataclass(frozen=True, slots=True)
class HierarchicalSpec:
    """A manager step keeps control and delegates to worker steps, round by round.

    Attributes:
        steps: The manager and its workers, addressed by id.
        manager_step_id: The manager.
        max_rounds: Most manager rounds before the run fails; ``None``: the number of steps.
    """

    steps: tuple[OrchestrationStep, ...]
    manager_step_id: str
    max_rounds: int | None = None

    def __post_init__(self) -> None:
        steps = _steps(self.steps, "hierarchical")
        object.__setattr__(self, "steps", steps)
        _reference(self.manager_step_id, steps, "manager_step_id")
        _bound(self.max_rounds, "max_rounds")


@final
@dataclass(frozen=True, slots=True)
class GroupChatSpec:
    """Steps take turns; the implementer's policy picks who speaks next.

    Attributes:
        steps: The participants, addressed by id.
        first_step_id: Who speaks first; ``None``: the first step.
        max_turns: Most turns before the run fails; ``None``: the number of steps.
    """

    steps: tuple[OrchestrationStep, ...]
    first_step_id: str | None = None
    max_turns: int | None = None

    def __post_init__(self) -> None:
        steps = _steps(self.steps, "group_chat")
        object.__setattr__(self, "steps", steps)
        if self.first_step_id is not None:
            _reference(self.first_step_id, steps, "first_step_id")
        _bound(self.max_turns, "max_turns")


OrchestrationSpec: TypeAlias = (
    SequentialSpec | ParallelSpec | HandoffSpec | HierarchicalSpec | GroupChatSpec
)
"""Any primitive's spec."""


@final
@dataclass(frozen=True, slots=True)
class StepResult:
    """What one executed step produced.

    Attributes:
        id: The step's id (a step that runs again appears again).
        output: Its output text.
        usage: Its usage, when the implementer's runner reports one (S29's triple, extended).
    """

    id: str
    output: str
    usage: Usage | None = None


@final
@dataclass(frozen=True, slots=True)
class OrchestrationResult:
    """What an orchestration run produced.

    Attributes:
        primitive: The primitive that ran.
        steps: Per-step results: in execution order, except ``parallel`` (step order).
        output: The last executed step's output; for ``parallel``, every output in step order,
            separated by a blank line.
    """

    primitive: OrchestrationPrimitive
    steps: tuple[StepResult, ...]
    output: str

    def __post_init__(self) -> None:
        if self.primitive not in ORCHESTRATION_PRIMITIVES:
            raise ConfigurationError(
                f"primitive must be one of {ORCHESTRATION_PRIMITIVES}, got {self.primitive!r}"
            )
        object.__setattr__(self, "steps", tuple(self.steps))
