"""S22 hooks: the outcome contract, enforcement posture, and the runner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

import robota
from robota import HookOutcome, event_enforces
from robota.core.hooks import (
    HOOK_EVENTS,
    EventPosture,
    HookConfig,
    HookRunner,
    HookSpec,
    decode_hook_body,
)


def test_s22_verdict_is_trusted_only_when_exactly_true_or_false() -> None:
    assert decode_hook_body({"decision": True}, default=None, steering=False).kind == "allow"
    assert decode_hook_body(
        {"decision": False, "reason": "no"}, default=None, steering=False
    ) == HookOutcome.deny("no")
    for value in ("yes", "true", 1, 0, None, [], "approve"):
        outcome = decode_hook_body({"decision": value}, default="allow", steering=True)
        assert outcome.kind == "error", value
        assert "exactly true or false" in outcome.reason


def test_s22_a_missing_verdict_uses_the_executors_default_or_is_an_error() -> None:
    assert decode_hook_body({}, default="allow", steering=True).kind == "allow"
    assert decode_hook_body({}, default=None, steering=False).kind == "error"


def test_s22_an_explicit_block_is_honoured_beside_an_undecodable_verdict() -> None:
    for body in (
        {"decision": "block", "reason": "policy"},
        {"decision": "maybe", "continue": False, "stopReason": "stop"},
        {"decision": 7, "hookSpecificOutput": {"permissionDecision": "deny"}, "reason": "r"},
    ):
        assert decode_hook_body(body, default="allow", steering=True).kind == "deny", body


def test_s22_a_permission_deny_carries_its_permission_decision_reason() -> None:
    # The Claude Code settings format names a PreToolUse deny's reason permissionDecisionReason
    # (shown to the model); a deny must not reach the model as a bare "blocked by a hook".
    nested = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "production is frozen",
        }
    }
    for steering in (True, False):
        outcome = decode_hook_body(nested, default="allow", steering=steering)
        assert outcome == HookOutcome.deny("production is frozen"), steering
    top = {"permissionDecision": "deny", "permissionDecisionReason": "frozen"}
    assert decode_hook_body(top, default="allow", steering=True) == HookOutcome.deny("frozen")
    both = {**nested, "reason": "general reason"}
    assert decode_hook_body(both, default="allow", steering=True) == HookOutcome.deny(
        "production is frozen"
    )
    blocked = {"decision": "block", "reason": "policy", "permissionDecisionReason": 7}
    assert decode_hook_body(blocked, default="allow", steering=True) == HookOutcome.deny("policy")


def test_s22_only_command_hooks_can_steer() -> None:
    body = {"hookSpecificOutput": {"permissionDecision": "ask", "updatedInput": {"x": 1}}}
    steered = decode_hook_body(body, default="allow", steering=True)
    assert (steered.permission_decision, steered.updated_input) == ("ask", {"x": 1})
    plain = decode_hook_body({"decision": True, **body}, default=None, steering=False)
    assert (plain.kind, plain.permission_decision, plain.updated_input) == ("allow", None, None)
    assert (
        decode_hook_body({"permissionDecision": "perhaps"}, default="allow", steering=True).kind
        == "error"
    )
    assert decode_hook_body({"updatedInput": [1]}, default="allow", steering=True).kind == "error"
    assert decode_hook_body([1], default="allow", steering=True).kind == "error"


def test_s22_only_tool_use_gating_enforces() -> None:
    assert event_enforces("PreToolUse")
    assert [name for name in HOOK_EVENTS if event_enforces(name)] == ["PreToolUse"]
    assert not event_enforces("PostToolUse")
    assert not event_enforces("NoSuchEvent")
    for posture in HOOK_EVENTS.values():
        assert not posture.enforces or (posture.awaited and posture.inspected)
    with pytest.raises(ValueError, match="awaits and inspects"):
        EventPosture(awaited=False, inspected=False, enforces=True)


def test_hook_config_shape_and_errors() -> None:
    config = HookConfig.from_dict(
        {
            "PreToolUse": [
                {
                    "matcher": "Edit|Write",
                    "hooks": [{"type": "command", "command": "true", "timeout": 5}],
                }
            ]
        }
    )
    assert [h.command for h in config.hooks_for("PreToolUse", "Write")] == ["true"]
    assert config.hooks_for("PreToolUse", "Read") == ()
    assert config.hooks_for("PostToolUse", "Write") == ()
    bad: list[tuple[Any, str]] = [
        ({"OnSomething": []}, "unknown hook event"),
        ({"PreToolUse": [{"hooks": [{"type": "command"}]}]}, "non-empty 'command'"),
        ({"PreToolUse": [{"hooks": [{"type": "http"}]}]}, "needs a 'url'"),
        (
            {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]},
            "timeout",
        ),
        ({"PreToolUse": [{"matcher": "(", "hooks": []}]}, "not a valid pattern"),
        ({"PreToolUse": "nope"}, "list"),
    ]
    for shape, message in bad:
        with pytest.raises(robota.ConfigurationError, match=message):
            HookConfig.from_dict(shape)


class _Fixed:
    def __init__(self, outcome: HookOutcome) -> None:
        self.outcome = outcome
        self.seen: list[Mapping[str, Any]] = []

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
    ) -> HookOutcome:
        self.seen.append(payload)
        return self.outcome


def _runner(event: str, **executors: Any) -> HookRunner:
    hooks = [{"type": kind, "command": "x", "url": "http://x"} for kind in executors]
    return HookRunner({event: [{"matcher": "*", "hooks": hooks}]}, executors)


async def test_s22_pre_tool_use_error_fails_closed() -> None:
    result = await _runner("PreToolUse", command=_Fixed(HookOutcome.error("crashed"))).run(
        "PreToolUse", {}, tool_name="Bash"
    )
    assert result.blocked
    assert "crashed" in result.reason


async def test_s22_post_tool_use_error_does_not_block(memory_sink: robota.MemorySink) -> None:
    result = await _runner("PostToolUse", command=_Fixed(HookOutcome.error("crashed"))).run(
        "PostToolUse", {}, tool_name="Bash"
    )
    assert not result.blocked
    assert any(e.message == "advisory hook failed" for e in memory_sink.events)


async def test_s02_core_runs_hooks_only_through_executors_the_caller_passes() -> None:
    runner = HookRunner({"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}, {})
    result = await runner.run("PreToolUse", {}, tool_name="X")
    assert result.blocked
    assert "no executor was passed" in result.reason


async def test_s22_ask_outranks_defer_among_several_hooks() -> None:
    class ByCommand:
        async def execute(
            self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
        ) -> HookOutcome:
            return HookOutcome(
                "allow", permission_decision="ask" if hook.command == "ask" else "defer"
            )

    runner = HookRunner(
        {
            "PreToolUse": [
                {
                    "hooks": [
                        {"type": "command", "command": "defer"},
                        {"type": "command", "command": "ask"},
                    ]
                }
            ]
        },
        {"command": ByCommand()},
    )
    result = await runner.run("PreToolUse", {}, tool_name="T")
    assert result.ask
    assert not result.blocked


async def test_s22_a_non_command_hook_cannot_steer_even_if_its_executor_tries() -> None:
    sneaky = _Fixed(HookOutcome("allow", permission_decision="ask", updated_input={"x": 1}))
    result = await _runner("PreToolUse", http=sneaky).run("PreToolUse", {}, tool_name="T")
    assert not result.ask
    assert result.updated_input is None


async def test_s22_a_raising_or_misbehaving_executor_is_an_error_outcome() -> None:
    class Raises:
        async def execute(
            self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
        ) -> HookOutcome:
            raise RuntimeError("bug")

    class Wrong:
        async def execute(
            self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
        ) -> Any:
            return "allow"

    for executor in (Raises(), Wrong()):
        result = await _runner("PreToolUse", command=executor).run("PreToolUse", {}, tool_name="T")
        assert result.blocked


async def test_hooks_without_a_match_do_nothing() -> None:
    runner = HookRunner(
        {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "false"}]}]},
        {},
    )
    assert await runner.run("PreToolUse", {}, tool_name="Read") == robota.HookResult()


async def test_s41_a_command_executor_without_a_traceparent_parameter_keeps_working() -> None:
    # S41/S27: the executor protocol is an extension point; the run's traceparent goes only to
    # an executor that names it, and one written before it existed is called as it always was.
    handed = "00-33333333333333333333333333333333-4444444444444444-01"
    seen: list[dict[str, Any]] = []

    class Before:
        async def execute(
            self,
            hook: HookSpec,
            payload: Mapping[str, Any],
            *,
            signal: robota.AbortSignal | None = None,
        ) -> HookOutcome:
            seen.append({"hook": hook.command})
            return HookOutcome.allow("before")

    class Taking:
        async def execute(
            self,
            hook: HookSpec,
            payload: Mapping[str, Any],
            *,
            signal: robota.AbortSignal | None = None,
            traceparent: str | None = None,
        ) -> HookOutcome:
            seen.append({"hook": hook.command, "traceparent": traceparent})
            return HookOutcome.allow("taking")

    config = {"PreToolUse": [{"hooks": [{"type": "command", "command": "x"}]}]}
    for executor in (Before(), Taking()):
        runner = HookRunner(config, {"command": executor})
        result = await runner.run("PreToolUse", {}, tool_name="Bash", traceparent=handed)
        assert not result.blocked
        assert result.outcomes[0].kind == "allow"
        await runner.run("PreToolUse", {}, tool_name="Bash")
    assert seen == [
        {"hook": "x"},
        {"hook": "x"},
        {"hook": "x", "traceparent": handed},
        {"hook": "x", "traceparent": None},
    ]
