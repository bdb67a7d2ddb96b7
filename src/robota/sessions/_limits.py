"""A session's usage limits (S31): one budget for every turn, each turn given what is left.

The session keeps its token and cost totals (every turn and compaction, rewound turns included);
a turn (and a compaction's summary call) runs with :meth:`~robota.UsageLimits.remaining` of the
session's limits after those totals, tightened by the turn's own ``limits=`` when it gives one.
Model calls and tool calls are not totalled by a session, so a session limit on them is refused:
give those per turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any, Final

from robota.core import (
    AssistantMessage,
    ConfigurationError,
    Message,
    Usage,
    UsageLimits,
    estimate_text_tokens,
)

__all__ = ["ceiling", "check_session_limits", "turn_options", "unattested_output"]

_PER_TURN_ONLY = ("requests", "tool_calls")


def check_session_limits(value: object) -> UsageLimits | None:
    """``value`` as a session's limits, or a ConfigurationError naming the fix."""
    if value is None:
        return None
    if not isinstance(value, UsageLimits):
        raise ConfigurationError(
            "Session.open(limits=) takes a robota.UsageLimits (e.g. UsageLimits(cost_usd=5)) or "
            f"None, got {type(value).__name__}"
        )
    counted = [name for name in _PER_TURN_ONLY if getattr(value, name) is not None]
    if counted:
        raise ConfigurationError(
            f"a session's limits cap its token and cost totals; {', '.join(counted)} is not "
            "totalled per session — give it per turn: session.run(..., limits=UsageLimits(...))"
        )
    return value


def turn_options(
    limits: UsageLimits | None,
    agent: UsageLimits | None,
    usage: Usage,
    cost: float | None,
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """``options`` with ``limits`` set to what the session has left, tightened by the run's.

    ``agent``: the agent's own limits (:attr:`robota.Agent.limits`). The run's limits are the
    agent's with the turn's ``limits=`` laid over them, as ``agent.run`` lays them; the session's
    remainder is a ceiling on top, so it never lifts a tighter per-run limit of either.

    Raises:
        ConfigurationError: a cost limit while the session's cost so far is unknown.
    """
    if limits is None:
        return dict(options)
    given = options.get("limits")
    if given is not None and not isinstance(given, UsageLimits):
        return dict(options)  # the agent refuses it, naming the option
    run = given if agent is None else agent.merged(given)
    return {**options, "limits": ceiling(limits, usage, cost, run)}


def ceiling(
    limits: UsageLimits, usage: Usage, cost: float | None, run: UsageLimits | None
) -> UsageLimits:
    """What the session's ``limits`` leave after ``usage`` and ``cost``, tightened by ``run``.

    Raises:
        ConfigurationError: a cost limit while the session's cost so far is unknown.
    """
    left = limits.remaining(usage=usage, cost_usd=cost)
    if run is None:
        return left
    return UsageLimits(
        **{name: _tighter(getattr(left, name), getattr(run, name)) for name in LIMIT_FIELDS}
    )


LIMIT_FIELDS: Final = tuple(field.name for field in fields(UsageLimits))


def _tighter(a: float | None, b: float | None) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def unattested_output(messages: Iterable[Message]) -> int:
    """Output tokens of completed replies that their provider did not report, estimated (S31).

    For each reply whose usage is missing or partial, what its visible size exceeds the
    reported completion count by — the amount the run's own limit check counted too
    (:class:`robota.UsageLimits`), so a session's limits are not given back on every turn
    by a provider that reports no usage.
    """
    extra = 0
    for message in messages:
        if not isinstance(message, AssistantMessage) or message.state != "complete":
            continue
        usage = message.usage
        if usage is not None and not usage.partial:
            continue
        shown = estimate_text_tokens(message.content) + sum(
            estimate_text_tokens(call.name) + estimate_text_tokens(call.arguments)
            for call in message.tool_calls
        )
        extra += max(shown - (usage.completion_tokens if usage is not None else 0), 0)
    return extra
