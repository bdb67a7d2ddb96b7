"""Hooks (S22).

The outcome contract, the events catalog with its one enforcement predicate, and the runner over
caller-passed executors.
"""

from robota.core.hooks._events import HOOK_EVENTS, EventPosture, HookEventName, event_enforces
from robota.core.hooks._outcome import (
    HookOutcome,
    HookOutcomeKind,
    PermissionSteer,
    decode_hook_body,
)
from robota.core.hooks._runner import (
    HookConfig,
    HookExecutor,
    HookMatcher,
    HookResult,
    HookRunner,
    HookSpec,
    hook_fields,
)

__all__ = [
    "HOOK_EVENTS",
    "EventPosture",
    "HookConfig",
    "HookEventName",
    "HookExecutor",
    "HookMatcher",
    "HookOutcome",
    "HookOutcomeKind",
    "HookResult",
    "HookRunner",
    "HookSpec",
    "PermissionSteer",
    "decode_hook_body",
    "event_enforces",
    "hook_fields",
]
