"""S32/S44: the neutral orchestration contracts — runtime-free shapes and lifecycle names."""

from __future__ import annotations

import dataclasses

import pytest

import robota
from robota.core.orchestration import (
    ORCHESTRATION_EVENT_PREFIX,
    ORCHESTRATION_PRIMITIVES,
    Delegation,
    GroupChatSpec,
    HandoffSpec,
    HierarchicalSpec,
    OrchestrationEventNames,
    OrchestrationResult,
    OrchestrationStep,
    ParallelSpec,
    SequentialSpec,
    StepResult,
)


def _step(step_id: str) -> OrchestrationStep:
    return OrchestrationStep(step_id, label=f"step {step_id}", agent_type="worker", prompt="do it")


def test_s32_specs_are_frozen_values_with_tuple_steps() -> None:
    spec = SequentialSpec([_step("a"), _step("b")])  # type: ignore[arg-type]
    assert spec.steps == (_step("a"), _step("b"))
    assert spec.thread_output is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.thread_output = False  # type: ignore[misc]
    step = OrchestrationStep("a", "A", "worker", "go", allowed_tools=["Read"])  # type: ignore[arg-type]
    assert step.allowed_tools == ("Read",)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: SequentialSpec(()), "at least one step"),
        (lambda: ParallelSpec((_step("a"), _step("a"))), "two steps with id 'a'"),
        (lambda: ParallelSpec((_step("a"),), max_concurrency=0), "max_concurrency"),
        (lambda: HandoffSpec((_step("a"),), entry_step_id="z"), "entry_step_id 'z' names no step"),
        (lambda: HierarchicalSpec((_step("a"),), manager_step_id="m"), "manager_step_id"),
        (lambda: GroupChatSpec((_step("a"),), first_step_id="q"), "first_step_id"),
        (lambda: GroupChatSpec((_step("a"),), max_turns=True), "max_turns"),
        (lambda: OrchestrationStep("", "x", "worker", "p"), "step id"),
        (lambda: OrchestrationStep("a", "x", "", "p"), "agent_type"),
        (lambda: OrchestrationStep("a", "x", "w", "p", disallowed_tools="Bash"), "tool names"),
        (lambda: OrchestrationResult("swarm", (), ""), "primitive"),  # type: ignore[arg-type]
        (lambda: Delegation("", "p"), "step_id"),
    ],
)
def test_s32_a_spec_that_contradicts_itself_is_refused_when_built(
    build: object, message: str
) -> None:
    assert callable(build)
    with pytest.raises(robota.ConfigurationError, match=message):
        build()


def test_s32_every_primitive_has_a_spec_and_a_result_shape() -> None:
    steps = (_step("m"), _step("w"))
    specs = [
        SequentialSpec(steps),
        ParallelSpec(steps, max_concurrency=1),
        HierarchicalSpec(steps, manager_step_id="m", max_rounds=2),
        HandoffSpec(steps, entry_step_id="w", max_handoffs=3),
        GroupChatSpec(steps, first_step_id="w", max_turns=4),
    ]
    assert len(specs) == len(ORCHESTRATION_PRIMITIVES)
    usage = robota.Usage.from_counts(prompt=3, completion=2)
    for primitive in ORCHESTRATION_PRIMITIVES:
        result = OrchestrationResult(primitive, [StepResult("m", "out", usage)], "out")  # type: ignore[arg-type]
        assert result.steps == (StepResult("m", "out", usage),)


def test_s33_orchestration_event_names_are_owner_type_dot_local_name() -> None:
    names = OrchestrationEventNames.ALL
    assert len(set(names)) == len(names) == 5
    for name in names:
        owner, dot, local = name.partition(".")
        assert (owner, dot) == (ORCHESTRATION_EVENT_PREFIX, ".")
        assert local
        assert robota.AgentEvent(name, ()).owner_type == "orchestration"


def test_s32_contracts_carry_no_application_identity() -> None:
    # Neutral mechanism fields only: no role, persona or product vocabulary on any shape.
    shapes = (
        OrchestrationStep,
        Delegation,
        SequentialSpec,
        ParallelSpec,
        HandoffSpec,
        HierarchicalSpec,
        GroupChatSpec,
        StepResult,
        OrchestrationResult,
    )
    forbidden = {"role", "persona", "user", "customer", "assistant_name", "department"}
    for shape in shapes:
        assert not forbidden & {f.name for f in dataclasses.fields(shape)}, shape
