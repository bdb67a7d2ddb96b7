"""Flows built from core's neutral specs (S32): ``SequentialSpec`` and ``ParallelSpec``.

A spec names agents by ``agent_type``; the caller maps each type to an :class:`~robota.Agent`.
Each step's user message is its ``prompt``, followed (after a blank line) by its input: the
flow's input for the first step of a sequence and every step of a parallel spec, the previous
step's output for the later steps of a sequence that threads outputs (``thread_output``).
"""

from __future__ import annotations

from collections.abc import Mapping

from robota.agents._flows import ErrorPolicy, Flow, Parallel, Sequential
from robota.agents._steps import Prompted
from robota.core import Agent, ConfigurationError
from robota.core.orchestration import (
    OrchestrationSpec,
    OrchestrationStep,
    ParallelSpec,
    SequentialSpec,
)

__all__ = ["from_spec"]


def _bind(step: OrchestrationStep, agents: Mapping[str, Agent], takes_input: bool) -> Prompted:
    agent = agents.get(step.agent_type)
    if not isinstance(agent, Agent):
        raise ConfigurationError(
            f"step {step.id!r} names agent_type {step.agent_type!r}, which the agents given do "
            f"not map to a robota.Agent; they map {sorted(agents)}"
        )
    unsupported = [
        name for name in ("model", "allowed_tools", "disallowed_tools") if getattr(step, name)
    ]
    if unsupported:
        raise ConfigurationError(
            f"step {step.id!r} sets {', '.join(unsupported)}, which robota.agents does not apply "
            "per step yet; configure the agent itself (its model, its tools and tool_gate)"
        )
    return Prompted(agent, step.id, step.prompt, takes_input)


def from_spec(
    spec: OrchestrationSpec,
    agents: Mapping[str, Agent],
    *,
    on_error: ErrorPolicy = "fail_fast",
) -> Flow:
    """A flow that runs ``spec`` (S32) with ``agents``, keyed by the steps' ``agent_type``.

    Step ids are the spec's. A :class:`~robota.core.orchestration.SequentialSpec` becomes a
    :func:`sequential` flow; a :class:`~robota.core.orchestration.ParallelSpec` a
    :func:`parallel` one whose output is every output in step order, separated by a blank
    line, as the contract's result says (``on_error`` applies to it).

    Raises:
        ConfigurationError: ``agents`` that is no mapping; another primitive's spec (a
            supervisor — the ``hierarchical`` case — is an agent with its workers as tools,
            ``Agent.as_tool``), an ``agent_type`` the mapping lacks, or a step setting
            ``model``/``allowed_tools``/``disallowed_tools`` (configure the agent instead).
    """
    if not isinstance(agents, Mapping):
        raise ConfigurationError(
            "agents must be a mapping of each step's agent_type to a robota.Agent, got "
            f"{type(agents).__name__}"
        )
    if isinstance(spec, SequentialSpec):
        steps = [_bind(s, agents, i == 0 or spec.thread_output) for i, s in enumerate(spec.steps)]
        return Sequential(steps)
    if isinstance(spec, ParallelSpec):
        branches = [_bind(s, agents, True) for s in spec.steps]
        return Parallel(branches, max_concurrency=spec.max_concurrency, on_error=on_error)
    raise ConfigurationError(
        "robota.agents runs a SequentialSpec or a ParallelSpec, not "
        f"{type(spec).__name__}; a supervisor is an agent with its workers as tools "
        "(Agent.as_tool)"
    )
