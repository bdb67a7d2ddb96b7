"""Neutral multi-agent orchestration contracts (S32, S44).

Pure, runtime-free types and lifecycle event names that a higher agent-framework layer
implements orchestration over: the primitives, the step and spec shapes, the results, and the
``orchestration.*`` event names with their data shape. Nothing here runs anything, and nothing
carries an application-domain identity — a step has a neutral ``label``, never a role.

This package imports only :mod:`robota.core._errors` and :mod:`robota.core._usage` (an
import-linter contract holds it to that), so when a second independent implementer appears
(S44) it moves out into its own package as it is.
"""

from robota.core.orchestration._contracts import (
    ORCHESTRATION_PRIMITIVES,
    Delegation,
    GroupChatSpec,
    HandoffSpec,
    HierarchicalSpec,
    OrchestrationPrimitive,
    OrchestrationResult,
    OrchestrationSpec,
    OrchestrationStep,
    ParallelSpec,
    SequentialSpec,
    StepResult,
)
from robota.core.orchestration._events import (
    ORCHESTRATION_EVENT_PREFIX,
    OrchestrationEventData,
    OrchestrationEventNames,
)

__all__ = [
    "ORCHESTRATION_EVENT_PREFIX",
    "ORCHESTRATION_PRIMITIVES",
    "Delegation",
    "GroupChatSpec",
    "HandoffSpec",
    "HierarchicalSpec",
    "OrchestrationEventData",
    "OrchestrationEventNames",
    "OrchestrationPrimitive",
    "OrchestrationResult",
    "OrchestrationSpec",
    "OrchestrationStep",
    "ParallelSpec",
    "SequentialSpec",
    "StepResult",
]
