"""What an orchestration run returns, and the error a failed one raises (S32 shapes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, final

from robota.core import AgentUsage, RobotaError, RunResult, Usage
from robota.core.orchestration import OrchestrationPrimitive, OrchestrationResult, StepResult

__all__ = ["BranchResult", "BranchStatus", "FlowResult", "FlowStatus", "OrchestrationError"]

BranchStatus: TypeAlias = Literal["complete", "interrupted", "failed"]
"""How one step or branch ended: ``interrupted`` — the flow's signal aborted it (its partial
text is its output); ``failed`` — it raised (see :attr:`BranchResult.error`)."""

FlowStatus: TypeAlias = Literal["complete", "interrupted"]
"""How a flow ended; a failed flow raises :class:`OrchestrationError` instead."""


@final
@dataclass(frozen=True, slots=True)
class BranchResult:
    """One executed step of a flow: an agent run, a function call or a nested flow.

    Attributes:
        id: The step's id, unique in the run (``writer``, ``mapper[2]``, ``join`` …).
        input: The text the step was given.
        output: Its output text; an interrupted agent's partial text; ``""`` when it failed.
        status: See :data:`BranchStatus`.
        error: The exception of a failed step; ``None`` otherwise.
        run: The agent's :class:`~robota.RunResult`, for an agent step that returned one.
        usage: What the step's model calls used (its sub-agents' included); ``None`` for a
            function step.
    """

    id: str
    input: str
    output: str
    status: BranchStatus
    error: BaseException | None = None
    run: RunResult[Any] | None = field(default=None, repr=False)
    usage: Usage | None = None


@final
@dataclass(frozen=True, slots=True)
class FlowResult:
    """What one orchestration run produced.

    Attributes:
        output: The flow's final output: the last step's (sequential), the join's (parallel,
            map-reduce). An interrupted flow: the partial output of the steps that ran last.
        status: ``"complete"`` or ``"interrupted"`` (the caller's signal aborted it).
        primitive: ``"sequential"`` or ``"parallel"`` (a map-reduce is a parallel fan-out and
            a sequential reduce; it reports ``"parallel"``), as core's contracts name them.
        steps: Every executed step, nested flows' included, in execution order (the branches
            of one fan-out in branch order).
        failures: The steps that failed: in a returned result, the branches a fan-out with
            ``on_error="collect"`` carried on past (nested flows' included); in
            :attr:`OrchestrationError.result`, the failed step too.
        usage: Usage summed over every agent run of the flow (sub-agents included, S29).
        cost: Its estimated USD cost; ``None`` when any run's cost is unknown.
        requests: Model calls dispatched by the flow's agents (retries and sub-agents
            included), as :class:`~robota.UsageLimits` counts them.
        tool_calls: Tool calls the flow's agents dispatched.
        usage_by_agent: Agent path → :class:`~robota.AgentUsage`, merged over every run of the
            flow in ``RunResult.usage_by_agent``'s shape (an agent run three times: ``runs=3``).
        run_id: The flow run's id (on its ``orchestration.*`` events).
    """

    output: str
    status: FlowStatus
    primitive: OrchestrationPrimitive
    steps: tuple[BranchResult, ...]
    usage: Usage
    cost: float | None
    requests: int
    tool_calls: int
    usage_by_agent: Mapping[str, AgentUsage]
    run_id: str
    failures: tuple[BranchResult, ...] = ()

    def contract(self) -> OrchestrationResult:
        """This result in core's neutral contract shape (S32): steps as ``StepResult``."""
        return OrchestrationResult(
            primitive=self.primitive,
            steps=tuple(StepResult(step.id, step.output, step.usage) for step in self.steps),
            output=self.output,
        )


class OrchestrationError(RobotaError):
    """A step or branch of a flow failed and the flow stopped.

    The failing step's exception is ``__cause__`` (a :class:`~robota.UsageLimitExceeded`, a
    :class:`~robota.ProviderError` …); ``category`` and ``recoverable`` are the cause's when it
    is a :class:`~robota.RobotaError`.

    Attributes:
        step_id: The step that failed.
        result: What the flow did before it stopped: every step that ran (the failed one, and
            the branches the failure interrupted with their partial output), the usage so far.
    """

    default_code = "orchestration_failed"
    default_category = "system"

    def __init__(
        self, message: str, *, step_id: str, result: FlowResult, cause: BaseException
    ) -> None:
        robota_cause = cause if isinstance(cause, RobotaError) else None
        super().__init__(
            message,
            category=robota_cause.category if robota_cause is not None else None,
            recoverable=robota_cause.recoverable if robota_cause is not None else None,
            cause=cause,
        )
        self.step_id = step_id
        self.result = result
