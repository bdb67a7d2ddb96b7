"""Reasoning effort (S24): the neutral vocabulary, dispositions and the audit record.

Core owns the words and the shape of an answer; it knows no vendor default and no field name.
A caller selects a level — ``agent.run(..., effort="low")`` or ``Agent(effort=...)`` — and the
provider adapter resolves it against its own source-dated, per-model table, which yields an
:class:`EffortResolution`: what was asked, what the adapter decided (:data:`EffortDisposition`),
the level it settled on and the opaque native value it sent, if any.

``"auto"`` is a selection state, not a level: it means "leave it to the model" and is never sent
as a native control.

What a run finally reports (:class:`EffortOutcome`) is kept apart from the resolution: whether a
native control actually went on the wire, and whether a provider dispatch happened at all. A
response served from the response cache was never dispatched, so it never claims to have applied
a control — whatever the recorded resolution said when it was first produced.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final, get_args

from robota.core._errors import ConfigurationError

__all__ = [
    "EFFORT_LEVELS",
    "EffortDisposition",
    "EffortLevel",
    "EffortOutcome",
    "EffortResolution",
    "EffortSelection",
    "check_effort",
    "resolve_effort",
]

EffortLevel: TypeAlias = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
"""The neutral effort levels, from no reasoning to the most a model offers (S24)."""

EffortSelection: TypeAlias = EffortLevel | Literal["auto"]
"""What a caller selects: a level, or ``"auto"`` (the model's own default; nothing is sent)."""

EFFORT_LEVELS: Final[tuple[EffortLevel, ...]] = get_args(EffortLevel)
"""The levels in ascending order; clamping moves down this sequence."""

_SELECTIONS: Final[tuple[EffortSelection, ...]] = (*EFFORT_LEVELS, "auto")

EffortDisposition: TypeAlias = Literal["applied", "clamped", "model_default", "not_applied"]
"""How a selection was resolved for one model (S24):

* ``applied`` — the level was sent exactly;
* ``clamped`` — the model offers no such level, so the nearest lower one it offers was sent;
* ``model_default`` — nothing was sent and the model used its own default (``"auto"``, or a
  level below everything the model offers);
* ``not_applied`` — the model has no effort control (or none is known), so nothing was sent.
"""


def check_effort(value: object, where: str = "effort") -> EffortSelection:
    """``value`` as an :data:`EffortSelection`, or a :class:`~robota.ConfigurationError`."""
    for selection in _SELECTIONS:
        if value == selection and isinstance(value, str):
            return selection
    raise ConfigurationError(f"{where} must be one of {', '.join(_SELECTIONS)}; got {value!r}")


@final
@dataclass(frozen=True, slots=True)
class EffortResolution:
    """The immutable audit record of one effort resolution (S24).

    Attributes:
        requested: What the caller selected.
        disposition: See :data:`EffortDisposition`.
        level: The neutral level the adapter settled on; ``None`` when nothing is sent.
        native_value: The opaque value the adapter puts on the wire for ``level`` (its own
            vocabulary); ``None`` when nothing is sent. Core never reads it.
        model: The model the resolution was made for.
        source: Where the adapter's table row comes from (a dated document reference), opaque.
    """

    requested: EffortSelection
    disposition: EffortDisposition
    level: EffortLevel | None = None
    native_value: str | None = None
    model: str | None = None
    source: str | None = None

    @property
    def sends_control(self) -> bool:
        """Whether this resolution puts a native effort control on the request."""
        return self.native_value is not None


def resolve_effort(
    requested: EffortSelection,
    supported: Collection[EffortLevel] | None,
    *,
    native: dict[EffortLevel, str] | None = None,
    model: str | None = None,
    source: str | None = None,
) -> EffortResolution:
    """Resolve ``requested`` against the levels a model ``supported`` (S24).

    The one rule adapters share: ``"auto"`` sends nothing (``model_default``); a model with no
    known control (``supported`` is ``None`` or empty) gets nothing (``not_applied``); a level the
    model offers is ``applied``; any other is ``clamped`` to the highest offered level below it,
    or left to the model's default when every offered level is above it. ``native`` maps a
    neutral level to the adapter's wire value (the level's own name when absent).
    """
    if requested == "auto":
        return EffortResolution(requested, "model_default", model=model, source=source)
    if not supported:
        return EffortResolution(requested, "not_applied", model=model, source=source)
    wire = native or {}
    if requested in supported:
        return EffortResolution(
            requested, "applied", requested, wire.get(requested, requested), model, source
        )
    below = [
        level for level in EFFORT_LEVELS[: EFFORT_LEVELS.index(requested)] if level in supported
    ]
    if not below:
        return EffortResolution(requested, "model_default", model=model, source=source)
    level = below[-1]
    return EffortResolution(requested, "clamped", level, wire.get(level, level), model, source)


@final
@dataclass(frozen=True, slots=True)
class EffortOutcome:
    """What a run's last provider round did about effort (S24).

    Attributes:
        requested: The run's selection.
        resolution: The adapter's resolution for that round, when it reported one.
        native_control_sent: Whether a native effort control went on the wire. Never ``True``
            for a round without dispatch.
        dispatched: Whether the round reached the provider at all (``False`` for a response
            served from the response cache, or a run that made no call).
    """

    requested: EffortSelection
    resolution: EffortResolution | None = None
    native_control_sent: bool = False
    dispatched: bool = False
