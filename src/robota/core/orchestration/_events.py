"""The orchestration lifecycle event names and their data shape (S32, S33, S44).

Names follow ``ownerType.localName`` (S33) with the owner type ``orchestration``. An implementer
emits them over the agent's event service with an :class:`OrchestrationEventData` as data.
"""

from __future__ import annotations

from typing import Final, NotRequired, TypedDict

from robota.core.orchestration._contracts import OrchestrationPrimitive

__all__ = ["ORCHESTRATION_EVENT_PREFIX", "OrchestrationEventData", "OrchestrationEventNames"]

ORCHESTRATION_EVENT_PREFIX: Final = "orchestration"
"""The owner type of every orchestration event name."""


class OrchestrationEventNames:
    """The lifecycle event names of an orchestration run."""

    STARTED: Final = "orchestration.started"
    """A run began."""
    STEP_STARTED: Final = "orchestration.step_started"
    """One step began executing."""
    STEP_COMPLETED: Final = "orchestration.step_completed"
    """One step finished executing."""
    COMPLETED: Final = "orchestration.completed"
    """The run finished."""
    FAILED: Final = "orchestration.failed"
    """The run failed."""

    ALL: Final = (STARTED, STEP_STARTED, STEP_COMPLETED, COMPLETED, FAILED)
    """Every name, in lifecycle order."""


class OrchestrationEventData(TypedDict):
    """The data of an orchestration event: neutral mechanism fields only.

    Attributes:
        primitive: Which primitive emitted it.
        step_id: The step, on step-scoped events.
        step_index: The step's position in execution order, on step-scoped events.
        reason: Why the run failed, on ``orchestration.failed``.
    """

    primitive: OrchestrationPrimitive
    step_id: NotRequired[str]
    step_index: NotRequired[int]
    reason: NotRequired[str]
