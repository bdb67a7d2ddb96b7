"""What a fork copies, and the turn positions ``fork`` and ``rewind`` take."""

from __future__ import annotations

from robota.core import ConfigurationError
from robota.sessions._records import Compacted, MetadataSet, SessionEntry, TurnSaved
from robota.sessions._state import SessionMetadata, SessionState

__all__ = ["fork_entries", "position"]


def fork_entries(state: SessionState, at: int, now: float) -> list[SessionEntry]:
    """The log of a fork of ``state`` at turn ``at``: its metadata, turns and compactions."""
    metadata = state.metadata
    entries: list[SessionEntry] = []
    if metadata != SessionMetadata():
        entries.append(MetadataSet(metadata.title, metadata.user_id, metadata.tags, now))
    for number, turn in enumerate(state.active[:at]):
        entries.append(
            TurnSaved(
                number,
                turn.status,
                turn.messages,
                turn.usage,
                turn.cost,
                turn.execution_id,
                turn.at,
                turn.error,
            )
        )
    # S39: the compactions that lie within the fork's turns come along.
    entries.extend(
        Compacted(
            c.number,
            c.upto,
            min(c.active_turns, at),
            c.summary,
            c.header,
            c.source,
            c.trigger,
            c.usage,
            c.cost,
            c.execution_id,
            c.at,
        )
        for c in state.compactions
        if c.upto <= at
    )
    return entries


def position(value: object, count: int, method: str, name: str) -> int:
    """``value`` checked as a turn position, 0 to ``count`` (``None``: ``count``, for ``at``)."""
    if value is None and name == "at":
        return count
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= count:
        raise ConfigurationError(
            f"session.{method}({name}={value!r}): the session has {count} turns; pass an "
            f"integer from 0 to {count}"
        )
    return value
