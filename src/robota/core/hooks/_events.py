"""The hook events catalog and each event's enforcement posture (S22).

Whether an ``error`` outcome blocks is decided per event, recorded together with whether the
event's fire site even *can* honour a block: it must await the hooks and inspect their result.
``PreToolUse``, ``UserPromptSubmit``, ``Stop`` and ``PreCompact`` do both and act on a deny (a
refused call, a blocked prompt, a continued run, a vetoed compaction), but only tool-use gating
fails closed on an *error*; every other event is advisory. :func:`event_enforces` is the single
published predicate — consumers ask it instead of re-deriving the rule from the table.

Fire sites: ``PreToolUse``, ``PostToolUse`` and ``Notification`` in
:class:`~robota.PermissionGate`; ``UserPromptSubmit`` and ``Stop`` in the run
(``core/execution/_lifecycle.py``); ``SessionStart``, ``SessionEnd`` and ``PreCompact`` in
``robota.sessions``; ``SubagentStop`` in the calling run's tool body when an agent called as a
tool ends (``core/_agent_tool.py``, awaited, advisory). ``tests/core/hooks/test_posture.py``
pins every row that has a fire site to what the site observably does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, TypeAlias, final

__all__ = ["HOOK_EVENTS", "EventPosture", "HookEventName", "event_enforces"]

HookEventName: TypeAlias = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PreCompact",
]


@final
@dataclass(frozen=True, slots=True)
class EventPosture:
    """How one event's fire site treats its hooks.

    Attributes:
        awaited: The fire site waits for the hooks to finish.
        inspected: The fire site reads their outcomes.
        enforces: An error outcome blocks the operation (only possible when both above hold).
    """

    awaited: bool
    inspected: bool
    enforces: bool

    def __post_init__(self) -> None:
        if self.enforces and not (self.awaited and self.inspected):
            raise ValueError("an event can enforce only where its fire site awaits and inspects")


HOOK_EVENTS: Final[Mapping[str, EventPosture]] = MappingProxyType(
    {
        "PreToolUse": EventPosture(awaited=True, inspected=True, enforces=True),
        "PostToolUse": EventPosture(awaited=True, inspected=False, enforces=False),
        # The run's own fire sites (core/execution/_lifecycle.py): a deny blocks the prompt, a
        # block continues the run; a failed hook is advisory.
        "UserPromptSubmit": EventPosture(awaited=True, inspected=True, enforces=False),
        "Stop": EventPosture(awaited=True, inspected=True, enforces=False),
        # No fire site yet: declared so a settings file may name it; fires once sub-agents
        # exist (issue 29), which must then match this row.
        "SubagentStop": EventPosture(awaited=True, inspected=False, enforces=False),
        # robota.sessions (Session.open / Session.aclose) awaits them and reads no outcome.
        "SessionStart": EventPosture(awaited=True, inspected=False, enforces=False),
        "SessionEnd": EventPosture(awaited=True, inspected=False, enforces=False),
        # PermissionGate, when an ask waits for a person: started beside the approver, never
        # waited for, its outcome never read (core/permissions/_notify.py).
        "Notification": EventPosture(awaited=False, inspected=False, enforces=False),
        # robota.sessions' compaction awaits it and reads it: a deny vetoes that compaction, and
        # a hookSpecificOutput.summary replaces the model's summary; a failed hook is advisory.
        "PreCompact": EventPosture(awaited=True, inspected=True, enforces=False),
    }
)
"""Every hook event and its posture (S22)."""


def event_enforces(event: str) -> bool:
    """Whether an ``error`` outcome of ``event``'s hooks blocks the operation (S22).

    True only for ``PreToolUse``: tool-use gating fails closed on an undecodable hook result. An
    unknown event does not enforce.
    """
    posture = HOOK_EVENTS.get(event)
    return posture is not None and posture.enforces
