"""``ToolContext.approver`` (issue 30): a tool body reaches the person its call's asks reach.

The approver is the admission gate's for a model-driven call (a sub-agent's: its own gate's,
else its parent's), and only the one its caller passed for a direct invocation (S43).
"""

from __future__ import annotations

from typing import Any

import robota
from robota import Agent, Approval, ApprovalRequest, PermissionGate, PermissionPolicy
from robota.testing import ScriptedProvider


class _Approver:
    async def __call__(self, request: ApprovalRequest) -> Approval:
        return Approval(True)


def _recording() -> tuple[robota.Tool, list[object]]:
    seen: list[object] = []

    class Peek(robota.Tool):
        def __init__(self) -> None:
            super().__init__("peek", "Peek.", {"type": "object", "properties": {}}, risk="inspect")

        async def execute(self, args: Any, ctx: robota.ToolContext) -> robota.ToolResult:
            seen.append(ctx.approver)
            return robota.ToolResult("ok")

    return Peek(), seen


async def test_a_model_driven_call_sees_the_gates_approver() -> None:
    approver = _Approver()
    tool, seen = _recording()
    agent = Agent(
        "m",
        provider=ScriptedProvider([[("peek", {})], "done"]),
        tools=[tool],
        tool_gate=PermissionGate(PermissionPolicy(), approver=approver),
    )
    await agent.run("go")
    assert seen == [approver]


async def test_a_call_with_no_gate_or_no_approver_sees_none() -> None:
    tool, seen = _recording()
    bare = Agent("m", provider=ScriptedProvider([[("peek", {})], "done"]), tools=[tool])
    await bare.run("go")
    gated = Agent(
        "m",
        provider=ScriptedProvider([[("peek", {})], "done"]),
        tools=[tool],
        tool_gate=PermissionGate(PermissionPolicy()),
    )
    await gated.run("go")
    assert seen == [None, None]


async def test_s43_a_direct_invocation_sees_only_the_approver_its_caller_passed() -> None:
    gate_approver, caller_approver = _Approver(), _Approver()
    tool, seen = _recording()
    agent = Agent(
        "m",
        provider=ScriptedProvider([]),
        tools=[tool],
        tool_gate=PermissionGate(PermissionPolicy(), approver=gate_approver),
    )
    await agent.invoke_tool("peek", {})
    await agent.invoke_tool("peek", {}, approver=caller_approver)
    assert seen == [None, caller_approver]


async def test_a_sub_agents_tool_sees_its_parents_approver() -> None:
    approver = _Approver()
    tool, seen = _recording()
    child = Agent(
        "child-model",
        provider=ScriptedProvider([[("peek", {})], "done"]),
        name="researcher",
        tools=[tool],
    )
    parent = Agent(
        "parent-model",
        provider=ScriptedProvider([[("researcher", {"input": "go"})], "ok"]),
        name="lead",
        tools=[child],
        tool_gate=PermissionGate(PermissionPolicy(), approver=approver),
    )
    await parent.run("start")
    assert seen == [approver]
