"""S21/S22/S33/S43 the gate wired into tool execution: validation → permission → hooks → body."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import Approval, ApprovalRequest, HookOutcome, PermissionGate, PermissionPolicy
from robota.core.hooks import HookRunner, HookSpec
from robota.core.permissions import parse_rule
from robota.testing import ScriptedProvider

from .conftest import make_tool

ran: list[str] = []


@robota.tool(risk="execute", argument=robota.PermissionArgument("command", "command"))
def shell(command: str) -> str:
    """Run a command (pretend)."""
    ran.append(command)
    return f"ran {command}"


@pytest.fixture(autouse=True)
def _reset() -> None:
    ran.clear()


class Recorder:
    def __init__(self, answer: Approval) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.answer


async def _run(
    gate: PermissionGate, *calls: dict[str, Any], events: robota.RecordingEventService | None = None
) -> robota.Agent:
    turns: list[Any] = [[("shell", c) for c in calls], "done"]
    agent = robota.Agent(
        provider=ScriptedProvider(turns),
        model="m",
        tools=[shell],
        tool_gate=gate,
        event_service=events,
    )
    await agent.run("go")
    return agent


def _results(agent: robota.Agent) -> list[str]:
    return [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]


async def test_s21_an_ask_with_no_approver_denies() -> None:
    agent = await _run(PermissionGate(PermissionPolicy()), {"command": "make build"})
    assert ran == []
    assert "no one is attached" in _results(agent)[0]


async def test_s21_an_ask_resolves_to_a_person_where_one_is_attached() -> None:
    approver = Recorder(Approval(True))
    await _run(PermissionGate(PermissionPolicy(), approver=approver), {"command": "make build"})
    assert ran == ["make build"]
    assert approver.requests[0].tool.name == "shell"
    declined = Recorder(Approval(False, reason="not now"))
    agent = await _run(
        PermissionGate(PermissionPolicy(), approver=declined), {"command": "make build"}
    )
    assert "declined this call: not now" in _results(agent)[0]


async def test_s21_remember_adds_consent_that_answers_later_asks_but_not_always_ask_ones() -> None:
    approver = Recorder(Approval(True, remember=True))
    gate = PermissionGate(PermissionPolicy(ask=["shell(rm -rf *)"]), approver=approver)
    await _run(gate, {"command": "make build"}, {"command": "make build"})
    assert len(approver.requests) == 1  # the second identical call is answered by the consent
    assert gate.remembered == ["shell(make build)"]
    await _run(gate, {"command": "rm -rf out"}, {"command": "rm -rf out"})
    assert len(approver.requests) == 3  # an explicit ask rule asks every time


@pytest.mark.parametrize(
    "command",
    [
        "echo `id`",  # a substitution: no rule can be read from it
        "ls ~bob",  # ~user: no rule can be read from it
        "echo 'a*b'",  # the remembered glob would not cover the quoted star
    ],
)
async def test_s21_remember_never_stores_a_rule_that_does_not_read_back_as_this_call(
    command: str,
) -> None:
    # Review 3, item 3: a remembered rule that cannot be read failed every later call.
    approver = Recorder(Approval(True, remember=True))
    gate = PermissionGate(PermissionPolicy(), approver=approver)
    await _run(gate, {"command": command})
    assert ran == [command]
    assert gate.remembered == []


async def test_s21_remember_stores_a_call_whose_text_has_parentheses() -> None:
    approver = Recorder(Approval(True, remember=True))
    gate = PermissionGate(PermissionPolicy(), approver=approver)
    command = "git log --format='%(describe)'"
    await _run(gate, {"command": command}, {"command": command})
    assert len(approver.requests) == 1
    assert gate.remembered == [f"shell({command})"]


_TEXT = st.lists(
    st.one_of(
        st.characters(),
        st.sampled_from(["\ud800", "\udcff", "\x00", "\x1b", "\n", "'", "$(", ")", "*", "~"]),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(first=_TEXT, later=_TEXT)
def test_s21_property_a_remembered_rule_covers_its_call_and_never_fails_a_later_one(
    first: str, later: str
) -> None:
    approver = Recorder(Approval(True, remember=True))
    gate = PermissionGate(PermissionPolicy(), approver=approver)
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[shell], tool_gate=gate)
    for command in (first, later, first, later):
        asyncio.run(agent.invoke_tool("shell", {"command": command}, approver=approver))
    for rule in gate.remembered:
        read = parse_rule(rule, "allow")
        assert any(
            read.applies(shell, {"command": c}, workspace="/", home=None, resolve=None) == "match"
            for c in (first, later)
        ), rule


async def test_s21_a_deny_is_a_refusal_and_never_a_tool_span() -> None:
    events = robota.RecordingEventService()
    agent = await _run(
        PermissionGate(PermissionPolicy(mode="bypass", deny=["shell(rm *)"])),
        {"command": "rm x"},
        events=events,
    )
    assert ran == []
    assert _results(agent)[0].startswith("Permission denied: denied by rule 'shell(rm *)'")
    assert "tool.refused" in events.names()
    assert "tool.started" not in events.names()


async def test_s12_a_tool_denied_outright_is_withheld_from_the_model() -> None:
    provider = ScriptedProvider(["no tools for me"])
    gate = PermissionGate(PermissionPolicy(deny=["shell"]))
    other = make_tool("Read", risk="inspect", argument=None)
    agent = robota.Agent(provider=provider, model="m", tools=[shell, other], tool_gate=gate)
    await agent.run("go")
    assert [t.name for t in provider.requests[0].tools] == ["Read"]


async def test_s22_validation_runs_before_permission_and_hooks() -> None:
    seen: list[str] = []

    class Gate:
        async def admit(self, invocation: robota.ToolInvocation) -> robota.Admission:
            seen.append("admit")
            return robota.Admission(True)

        async def settled(
            self, invocation: robota.ToolInvocation, result: robota.ToolResult
        ) -> None:
            seen.append("settled")

    agent = robota.Agent(
        provider=ScriptedProvider([[("shell", {"command": 5})], "x"]),
        model="m",
        tools=[shell],
        tool_gate=Gate(),
    )
    await agent.run("go")
    assert seen == []  # invalid arguments never reach the gate


class _Hook:
    def __init__(self, outcome: HookOutcome) -> None:
        self.outcome = outcome
        self.payloads: list[Mapping[str, Any]] = []

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
    ) -> HookOutcome:
        self.payloads.append(payload)
        return self.outcome


def _hooks(event: str, outcome: HookOutcome) -> tuple[HookRunner, _Hook]:
    executor = _Hook(outcome)
    return HookRunner(
        {event: [{"matcher": "shell", "hooks": [{"type": "command", "command": "x"}]}]},
        {"command": executor},
    ), executor


async def test_s22_pre_tool_use_error_fails_closed_in_the_loop() -> None:
    runner, _ = _hooks("PreToolUse", HookOutcome.error("the policy server is down"))
    agent = await _run(
        PermissionGate(PermissionPolicy(mode="bypass"), hooks=runner), {"command": "ls"}
    )
    assert ran == []
    assert "the policy server is down" in _results(agent)[0]


async def test_s22_post_tool_use_error_does_not_change_the_call() -> None:
    runner, executor = _hooks("PostToolUse", HookOutcome.error("logger offline"))
    agent = await _run(
        PermissionGate(PermissionPolicy(mode="bypass"), hooks=runner), {"command": "ls"}
    )
    assert ran == ["ls"]
    assert _results(agent) == ["ran ls"]
    assert executor.payloads[0]["tool_response"]["content"] == "ran ls"


async def test_s22_a_hook_ask_reaches_a_person_even_in_bypass() -> None:
    runner, _ = _hooks("PreToolUse", HookOutcome("allow", permission_decision="ask"))
    approver = Recorder(Approval(False))
    await _run(
        PermissionGate(PermissionPolicy(mode="bypass"), approver=approver, hooks=runner),
        {"command": "ls"},
    )
    assert ran == []
    assert approver.requests[0].source == "hook"


async def test_s22_updated_input_replaces_the_arguments_and_is_validated_again() -> None:
    runner, _ = _hooks("PreToolUse", HookOutcome("allow", updated_input={"command": "ls --safe"}))
    await _run(PermissionGate(PermissionPolicy(mode="bypass"), hooks=runner), {"command": "ls"})
    assert ran == ["ls --safe"]
    bad, _ = _hooks("PreToolUse", HookOutcome("allow", updated_input={"command": 5}))
    agent = await _run(
        PermissionGate(PermissionPolicy(mode="bypass"), hooks=bad), {"command": "ls"}
    )
    assert "expected string" in _results(agent)[0]


async def test_s22_a_hook_deny_blocks_with_its_reason() -> None:
    runner, executor = _hooks("PreToolUse", HookOutcome.deny("blocked by policy"))
    agent = await _run(
        PermissionGate(PermissionPolicy(mode="bypass"), hooks=runner), {"command": "ls"}
    )
    assert "blocked by policy" in _results(agent)[0]
    assert executor.payloads[0] == {
        "hook_event_name": "PreToolUse",
        "permission_mode": "bypassPermissions",  # as Claude Code's hook inputs spell it
        "tool_name": "shell",
        "tool_input": {"command": "ls"},
    }


# --------------------------------------------------------------------------- S43 direct invocation


async def test_s43_direct_invocation_takes_the_same_path_without_a_model_turn() -> None:
    events = robota.RecordingEventService()
    agent = robota.Agent(
        provider=ScriptedProvider([]),
        model="m",
        tools=[shell],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass")),
        event_service=events,
    )
    outcome = await agent.invoke_tool("shell", {"command": "ls"})
    assert (outcome.status, outcome.result.content) == ("completed", "ran ls")
    assert len(agent.history) == 0  # no fabricated turn
    assert outcome.call_id is not None
    assert {"tool.started", "tool.completed"} <= set(events.names())
    invalid = await agent.invoke_tool("shell", {"command": 5})
    assert invalid.status == "refused"


async def test_s43_direct_invocation_keeps_permissions_and_injects_no_ask_handler() -> None:
    model_approver = Recorder(Approval(True))
    gate = PermissionGate(PermissionPolicy(deny=["shell(rm *)"]), approver=model_approver)
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[shell], tool_gate=gate)
    denied = await agent.invoke_tool("shell", {"command": "rm -rf x"})
    assert denied.status == "refused"
    asked = await agent.invoke_tool("shell", {"command": "make"})
    assert asked.status == "refused"
    assert model_approver.requests == []  # the agent's own approver is not used for direct calls
    caller = Recorder(Approval(True))
    allowed = await agent.invoke_tool("shell", {"command": "make"}, approver=caller)
    assert allowed.status == "completed"
    assert len(caller.requests) == 1


async def test_s43_direct_invocation_errors_are_clear() -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[shell])
    with pytest.raises(robota.ConfigurationError, match="available: shell"):
        await agent.invoke_tool("missing", {})
    with pytest.raises(robota.ConfigurationError, match="mapping"):
        await agent.invoke_tool("shell", ["ls"])  # type: ignore[arg-type]


# ------------------------------------------------ S22 a command hook's permissionDecision "allow"


async def test_s22_a_command_hook_allow_pre_approves_an_ordinary_ask() -> None:
    runner, executor = _hooks("PreToolUse", HookOutcome("allow", permission_decision="allow"))
    approver = Recorder(Approval(False))
    await _run(
        PermissionGate(PermissionPolicy(), approver=approver, hooks=runner), {"command": "make"}
    )
    assert ran == ["make"]
    assert approver.requests == []  # nobody was asked
    assert executor.payloads[0]["tool_input"] == {"command": "make"}


async def test_s22_a_command_hook_allow_never_lifts_a_deny() -> None:
    runner, _ = _hooks("PreToolUse", HookOutcome("allow", permission_decision="allow"))
    agent = await _run(
        PermissionGate(PermissionPolicy(deny=["shell(make *)"]), hooks=runner),
        {"command": "make build"},
    )
    assert ran == []
    assert "denied" in _results(agent)[0]


@pytest.mark.parametrize(
    ("policy", "command"),
    [
        (PermissionPolicy(ask=["shell(deploy *)"]), "deploy prod"),  # an explicit ask rule
        (PermissionPolicy(), "rm -rf /"),  # a catastrophic removal
    ],
)
async def test_s22_a_command_hook_allow_never_answers_an_always_ask(
    policy: PermissionPolicy, command: str
) -> None:
    runner, _ = _hooks("PreToolUse", HookOutcome("allow", permission_decision="allow"))
    approver = Recorder(Approval(False))
    await _run(PermissionGate(policy, approver=approver, hooks=runner), {"command": command})
    assert ran == []
    assert len(approver.requests) == 1
    assert approver.requests[0].always_ask


async def test_s22_only_a_command_hook_can_pre_approve() -> None:
    executor = _Hook(HookOutcome("allow", permission_decision="allow"))
    runner = HookRunner(
        {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "http", "url": "http://x"}]}]},
        {"http": executor},
    )
    agent = await _run(PermissionGate(PermissionPolicy(), hooks=runner), {"command": "make"})
    assert ran == []  # the http hook's allow was dropped: the ask had no approver
    assert "no one is attached" in _results(agent)[0]


async def test_s22_a_hook_ask_outranks_another_hooks_allow() -> None:
    class ByCommand:
        async def execute(
            self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
        ) -> HookOutcome:
            decision = "ask" if hook.command == "ask" else "allow"
            return HookOutcome("allow", permission_decision=decision)  # type: ignore[arg-type]

    runner = HookRunner(
        {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {"type": "command", "command": "allow"},
                        {"type": "command", "command": "ask"},
                    ],
                }
            ]
        },
        {"command": ByCommand()},
    )
    approver = Recorder(Approval(False))
    await _run(
        PermissionGate(PermissionPolicy(), approver=approver, hooks=runner), {"command": "ls"}
    )
    assert ran == []
    assert approver.requests[0].source == "hook"


async def test_s22_a_replacement_input_is_read_by_the_policy_again() -> None:
    # A hook cannot launder a call: the policy denies the replacement as it would the original.
    runner, _ = _hooks(
        "PreToolUse",
        HookOutcome("allow", permission_decision="allow", updated_input={"command": "make x"}),
    )
    agent = await _run(
        PermissionGate(PermissionPolicy(deny=["shell(make *)"]), hooks=runner), {"command": "ls"}
    )
    assert ran == []
    assert "denied" in _results(agent)[0]


async def test_s22_a_real_command_hook_allow_pre_approves(tmp_path: Any) -> None:
    from robota.host import CommandHookExecutor

    script = tmp_path / "allow.sh"
    script.write_text(
        "cat >/dev/null\n"
        'printf \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "allow"}}\'\n'
    )
    runner = HookRunner(
        {
            "PreToolUse": [
                {"matcher": "shell", "hooks": [{"type": "command", "command": f"sh {script}"}]}
            ]
        },
        {"command": CommandHookExecutor()},
    )
    await _run(PermissionGate(PermissionPolicy(), hooks=runner), {"command": "make build"})
    assert ran == ["make build"]


async def test_s22_hook_fields_reach_every_hook_payload_in_their_context() -> None:
    from robota.core.hooks import hook_fields

    runner, executor = _hooks("PreToolUse", HookOutcome.allow())
    with hook_fields(session_id="ses_1", tool_name="not this"):
        await _run(
            PermissionGate(PermissionPolicy(mode="accept_edits"), hooks=runner), {"command": "ls"}
        )
    payload = executor.payloads[0]
    assert payload["session_id"] == "ses_1"
    assert payload["tool_name"] == "shell"  # the fire site's own field wins
    assert payload["permission_mode"] == "acceptEdits"
    await _run(PermissionGate(PermissionPolicy(mode="bypass"), hooks=runner), {"command": "ls"})
    assert "session_id" not in executor.payloads[-1]  # only inside the context
