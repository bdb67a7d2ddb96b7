"""The hook outcome contract (S22): allow, deny, or error — decoded, never guessed.

A hook executor returns a :class:`HookOutcome`, not an exit code or an HTTP status. ``error`` is
the *absence* of a verdict (the hook failed, timed out, or said something undecodable) and carries
the reason; it is not a third verdict. Whether an error blocks is the event's enforcement posture
(see :func:`event_enforces`), not the executor's call.

:func:`decode_hook_body` reads a hook's JSON body:

* ``"decision"`` is the verdict field, trusted only when it is exactly ``true`` (allow) or exactly
  ``false`` (deny). Any other value is undecodable — ``"yes"`` is not approval, and a body cannot
  disable a gate by truthiness.
* An explicit block directive is honoured even beside an undecodable verdict, because it is a
  decision the hook stated outright: ``"decision": "block"``, ``"continue": false``, or a
  ``permissionDecision`` of ``"deny"`` (whose reason is its ``permissionDecisionReason`` when
  given, else ``reason``).
* Only a command hook may *steer* a pre-tool call short of refusing it: a ``permissionDecision``
  of ``allow``, ``ask`` or ``defer``, or an ``updatedInput`` (top level or inside
  ``hookSpecificOutput``). A prompt- or agent-hook answers from a model that reads the very input
  it judges; if its body could approve, that input could approve itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, final

__all__ = ["HookOutcome", "HookOutcomeKind", "PermissionSteer", "decode_hook_body"]

HookOutcomeKind: TypeAlias = Literal["allow", "deny", "error"]
PermissionSteer: TypeAlias = Literal["allow", "ask", "defer", "deny"]


@final
@dataclass(frozen=True, slots=True)
class HookOutcome:
    """What one hook decided.

    Attributes:
        kind: ``"allow"``, ``"deny"`` or ``"error"`` (no verdict could be decoded).
        reason: Why it denied, or why no verdict exists.
        output: Text the hook produced for the record (a command hook's stdout).
        permission_decision: A command hook's steering of a pre-tool call, if any.
        updated_input: A command hook's replacement tool input, if any.
        additional_context: Text the hook adds for the model (``hookSpecificOutput``'s
            ``additionalContext``, or a command hook's plain stdout); only the fire sites that
            take context use it (``UserPromptSubmit``).
        summary: A summary the hook supplies in place of the model's (``hookSpecificOutput``'s
            ``summary``); only ``PreCompact``'s fire site (``robota.sessions``) uses it.
    """

    kind: HookOutcomeKind
    reason: str = ""
    output: str = ""
    permission_decision: PermissionSteer | None = None
    updated_input: Mapping[str, Any] | None = None
    additional_context: str = ""
    summary: str = ""

    @classmethod
    def allow(cls, output: str = "") -> HookOutcome:
        """An allow verdict."""
        return cls("allow", output=output)

    @classmethod
    def deny(cls, reason: str) -> HookOutcome:
        """A deny verdict with its reason."""
        return cls("deny", reason=reason or "denied by a hook")

    @classmethod
    def error(cls, reason: str) -> HookOutcome:
        """No verdict: the hook failed or said nothing decodable; ``reason`` names why."""
        return cls("error", reason=reason)


def _context(body: Mapping[str, Any]) -> str:
    specific = body.get("hookSpecificOutput")
    nested = specific if isinstance(specific, Mapping) else {}
    context = nested.get("additionalContext", body.get("additionalContext"))
    return context if isinstance(context, str) else ""


def _summary(body: Mapping[str, Any]) -> str:
    specific = body.get("hookSpecificOutput")
    summary = specific.get("summary") if isinstance(specific, Mapping) else None
    return summary if isinstance(summary, str) else ""


def _steering(body: Mapping[str, Any]) -> tuple[object, object]:
    specific = body.get("hookSpecificOutput")
    nested = specific if isinstance(specific, Mapping) else {}
    decision = nested.get("permissionDecision", body.get("permissionDecision"))
    updated = nested.get("updatedInput", body.get("updatedInput"))
    return decision, updated


def _decision_reason(body: Mapping[str, Any]) -> str:
    specific = body.get("hookSpecificOutput")
    nested = specific if isinstance(specific, Mapping) else {}
    reason = nested.get("permissionDecisionReason", body.get("permissionDecisionReason"))
    return reason if isinstance(reason, str) else ""


def decode_hook_body(
    body: object,
    *,
    default: HookOutcomeKind | None,
    steering: bool,
    output: str = "",
) -> HookOutcome:
    """Decode a hook's JSON body (see the module docstring).

    Args:
        body: The parsed JSON.
        default: The verdict when the body states none (a command hook's exit 0 is ``"allow"``);
            ``None`` makes a missing verdict an error (an HTTP hook must state one).
        steering: Whether the body may steer (command hooks only).
        output: Text to carry on the outcome.
    """
    if not isinstance(body, Mapping):
        return HookOutcome.error(f"the hook's body is not a JSON object ({type(body).__name__})")
    reason = body.get("reason")
    reason_text = reason if isinstance(reason, str) else ""
    decision, updated = _steering(body)
    # Explicit block directives win, even beside an undecodable verdict field.
    if body.get("decision") == "block" or body.get("continue") is False or decision == "deny":
        stop = body.get("stopReason")
        # A permission deny states its reason for the model as permissionDecisionReason (the
        # Claude Code settings format); it is the reason of that directive, so it comes first.
        own = _decision_reason(body) if decision == "deny" else ""
        return HookOutcome.deny(
            own or reason_text or (stop if isinstance(stop, str) else "") or "blocked by a hook"
        )
    verdict = body.get("decision")
    if "decision" in body and verdict is not True and verdict is not False:
        return HookOutcome.error(
            f"the hook's verdict field 'decision' must be exactly true or false, got {verdict!r}"
        )
    if verdict is False:
        return HookOutcome.deny(reason_text)
    if verdict is None and default is None:
        return HookOutcome.error("the hook's body states no verdict ('decision': true or false)")
    if verdict is None and default == "deny":
        return HookOutcome.deny(reason_text)
    steer: PermissionSteer | None = None
    replacement: Mapping[str, Any] | None = None
    if steering:
        if decision is not None:
            if decision not in ("allow", "ask", "defer"):
                return HookOutcome.error(f"unknown permissionDecision {decision!r}")
            steer = decision
        if updated is not None:
            if not isinstance(updated, Mapping):
                return HookOutcome.error("updatedInput must be a JSON object")
            replacement = updated
    return HookOutcome(
        "allow", reason_text, output, steer, replacement, _context(body), _summary(body)
    )
