"""An agent called as a tool (issue 29): robota/core/_agent_tool.py.

Every agent runs on its own scripted provider; the parent and the child are on different
providers. Each test names the behaviour it proves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pydantic
import pytest

import robota
from robota import (
    AbortController,
    Agent,
    Approval,
    ApprovalRequest,
    HookOutcome,
    PermissionGate,
    PermissionPolicy,
    RecordingEventService,
    TraceContext,
    Usage,
    UsageLimits,
)
from robota.core._tracing import derive_span_id
from robota.core.hooks import HookRunner, HookSpec
from robota.testing import ScriptedProvider, ScriptedTurn

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def _usage(prompt: int, completion: int) -> Usage:
    return Usage(prompt, completion, prompt + completion)


def _child(turns: list[Any], **kwargs: Any) -> tuple[Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns, name="child-vendor")
    return Agent("child-model", provider=provider, name="researcher", **kwargs), provider


def _parent(turns: list[Any], tools: list[Any], **kwargs: Any) -> tuple[Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns, name="parent-vendor")
    return Agent("parent-model", provider=provider, name="lead", tools=tools, **kwargs), provider


class _Approver:
    def __init__(self, approved: bool = True) -> None:
        self.requests: list[ApprovalRequest] = []
        self._approved = approved

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return Approval(self._approved)


class _Recorder:
    """A hook executor (the S22 protocol) that records each payload and allows."""

    def __init__(self) -> None:
        self.payloads: list[Mapping[str, Any]] = []

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
    ) -> HookOutcome:
        self.payloads.append(dict(payload))
        return HookOutcome.allow()


async def test_the_model_calls_the_child_which_runs_its_own_loop_prompt_and_model() -> None:
    child, child_provider = _child(["the answer is 42"], system_prompt="You research.")
    parent, parent_provider = _parent(
        [[("researcher", {"input": "find the answer"})], "it is 42"],
        [child.as_tool(description="Researches a question.")],
    )
    result = await parent.run("what is the answer?")
    assert result.output == "it is 42"
    assert result.agent == "lead"
    request = child_provider.requests[0]
    assert request.model == "child-model"
    assert request.messages[0].content == "You research."
    assert request.messages[-1].content == "find the answer"
    tool_message = parent_provider.requests[1].messages[-1]
    assert tool_message.content == "the answer is 42"
    spec = parent_provider.requests[0].tools[0]
    assert spec.name == "researcher"
    assert spec.description == "Researches a question."


async def test_an_agent_passed_in_tools_is_callable_as_a_tool() -> None:
    child, _ = _child(["done"])
    parent, parent_provider = _parent([[("researcher", {"input": "go"})], "ok"], [child])
    result = await parent.run("start")
    assert result.output == "ok"
    assert parent_provider.requests[1].messages[-1].content == "done"


async def test_arguments_failing_the_schema_never_start_the_child() -> None:
    child, child_provider = _child(["never"])
    parent, parent_provider = _parent(
        [[("researcher", {"question": "wrong key"})], "gave up"], [child.as_tool()]
    )
    await parent.run("start")
    assert child_provider.requests == []
    refusal = parent_provider.requests[1].messages[-1]
    assert refusal.is_error
    assert "input" in str(refusal.content)


async def test_a_typed_input_schema_sends_the_arguments_as_json() -> None:
    class Query(pydantic.BaseModel):
        topic: str
        depth: int

    child, child_provider = _child(["fine"])
    parent, _ = _parent(
        [[("researcher", {"topic": "bees", "depth": 2})], "ok"], [child.as_tool(input=Query)]
    )
    await parent.run("start")
    assert child_provider.requests[0].messages[-1].content == '{"topic": "bees", "depth": 2}'


async def test_s18_a_typed_result_reaches_the_model_as_json_with_the_object_as_view() -> None:
    class Finding(pydantic.BaseModel):
        answer: int

    child, _ = _child(['{"answer": 42}'])
    parent, parent_provider = _parent(
        [[("researcher", {"input": "q"})], "ok"], [child.as_tool(output=Finding)]
    )
    result = await parent.run("start")
    (message,) = [m for m in result.messages if isinstance(m, robota.ToolMessage)]
    assert not message.is_error
    assert parent_provider.requests[1].messages[-1].content == '{"answer":42}'


async def test_s21_a_deny_rule_on_the_child_tool_refuses_it_without_running_the_child() -> None:
    child, child_provider = _child(["never"])
    gate = PermissionGate(PermissionPolicy(deny=["researcher"]))
    parent, parent_provider = _parent(
        [[("researcher", {"input": "go"})], "refused"], [child.as_tool()], tool_gate=gate
    )
    await parent.run("start")
    assert child_provider.requests == []
    refusal = parent_provider.requests[1].messages[-1]
    assert refusal.is_error
    assert str(refusal.content).startswith("Permission denied")


async def test_s23_aborting_the_parent_interrupts_the_child_and_records_its_partial_text() -> None:
    controller = AbortController()
    child_provider = ScriptedProvider(
        ["one two three four five six seven eight nine ten"], chunk_delay=0.05
    )
    child = Agent("child-model", provider=child_provider, name="researcher")
    parent, _ = _parent([[("researcher", {"input": "go"})], "unused"], [child.as_tool()])

    async def abort_soon() -> None:
        await asyncio.sleep(0.12)
        controller.abort("stop")

    aborter = asyncio.ensure_future(abort_soon())
    result = await parent.run("start", signal=controller.signal)
    await aborter
    assert result.status == "interrupted"
    assert child_provider.aborted_calls == 1
    recorded = [m for m in result.messages if isinstance(m, robota.ToolMessage)]
    assert len(recorded) == 1
    partial = str(recorded[0].content)
    assert partial.startswith("one")
    assert "ten" not in partial
    # The call ran in a conversation of its own (S34): the agent's own history is untouched.
    assert len(child.history) == 0


async def test_usage_and_cost_roll_up_into_the_parent_with_a_per_agent_breakdown() -> None:
    robota.register_model_pricing("child-model", input_per_million=1.0, output_per_million=2.0)
    robota.register_model_pricing("parent-model", input_per_million=3.0, output_per_million=4.0)
    child, _ = _child([ScriptedTurn("done", usage=_usage(100, 10))])
    parent, _ = _parent(
        [
            ScriptedTurn(tool_calls=[("researcher", {"input": "go"})], usage=_usage(50, 5)),
            ScriptedTurn("ok", usage=_usage(70, 7)),
        ],
        [child],
    )
    result = await parent.run("start")
    assert set(result.usage_by_agent) == {"lead", "lead/researcher"}
    own, sub = result.usage_by_agent["lead"], result.usage_by_agent["lead/researcher"]
    assert own.usage == _usage(120, 12)
    assert sub.usage == _usage(100, 10)
    assert result.usage == _usage(220, 22)
    assert own.cost == pytest.approx((120 * 3 + 12 * 4) / 1e6)
    assert sub.cost == pytest.approx((100 * 1 + 10 * 2) / 1e6)
    assert result.cost == pytest.approx(own.cost + sub.cost)


async def test_a_child_called_twice_is_one_entry_counting_both_runs() -> None:
    child, _ = _child(
        [ScriptedTurn("a", usage=_usage(10, 1)), ScriptedTurn("b", usage=_usage(20, 2))]
    )
    parent, _ = _parent(
        [[("researcher", {"input": "1"}), ("researcher", {"input": "2"})], "ok"], [child]
    )
    result = await parent.run("start")
    entry = result.usage_by_agent["lead/researcher"]
    assert entry.runs == 2
    assert entry.usage == _usage(30, 3)


async def test_a_fresh_conversation_per_call_unless_the_caller_keeps_one() -> None:
    child, child_provider = _child(["a", "b"])
    parent, _ = _parent(
        [[("researcher", {"input": "1"})], [("researcher", {"input": "2"})], "ok"], [child]
    )
    await parent.run("start")
    assert [m.content for m in child_provider.requests[1].messages] == ["2"]

    kept, kept_provider = _child(["a", "b"])
    parent, _ = _parent(
        [[("researcher", {"input": "1"})], [("researcher", {"input": "2"})], "ok"],
        [kept.as_tool(keep_history=True)],
    )
    await parent.run("start")
    assert [m.content for m in kept_provider.requests[1].messages] == ["1", "a", "2"]


async def test_s34_a_fresh_call_leaves_the_agents_own_conversation_untouched() -> None:
    # S34: history is append-only. A fresh delegated call runs in a conversation of its own;
    # the agent's own conversation (a user talking to it directly) neither shows in the call
    # nor loses anything to it, and the next direct run continues it.
    child, child_provider = _child(["direct 1", "delegated", "direct 2"], system_prompt="Sys.")
    await child.run("hello child")
    before = list(child.history)
    parent, _ = _parent([[("researcher", {"input": "task"})], "ok"], [child])
    await parent.run("start")
    assert [m.content for m in child_provider.requests[1].messages] == ["Sys.", "task"]
    assert list(child.history) == before
    await child.run("again")
    assert [m.content for m in child_provider.requests[2].messages] == [
        "Sys.",
        "hello child",
        "direct 1",
        "again",
    ]


async def test_keep_history_continues_the_agents_own_conversation() -> None:
    child, child_provider = _child(["direct", "delegated"])
    await child.run("hello child")
    parent, _ = _parent(
        [[("researcher", {"input": "task"})], "ok"], [child.as_tool(keep_history=True)]
    )
    await parent.run("start")
    assert [m.content for m in child_provider.requests[1].messages] == [
        "hello child",
        "direct",
        "task",
    ]
    assert [m.content for m in child.history] == ["hello child", "direct", "task", "delegated"]


async def test_issue28_a_child_never_spends_more_than_the_parent_has_left() -> None:
    # The parent may use 1,000 tokens; its first round uses 600, so the child gets 400 and its
    # second request (estimated past what is left) is never sent.
    child, child_provider = _child(
        [
            ScriptedTurn(tool_calls=[("lookup", {})], usage=_usage(300, 50)),
            ScriptedTurn("never", usage=_usage(10, 1)),
        ],
        tools=[_lookup],
    )
    parent, parent_provider = _parent(
        [
            ScriptedTurn(tool_calls=[("researcher", {"input": "x" * 400})], usage=_usage(500, 100)),
            ScriptedTurn("never", usage=_usage(1, 1)),
        ],
        [child],
        limits=UsageLimits(total_tokens=1000),
    )
    with pytest.raises(robota.UsageLimitExceeded) as caught:
        await parent.run("start")
    assert len(child_provider.requests) == 1  # the second would pass what the parent had left
    assert len(parent_provider.requests) == 1  # and the parent stops: the child spent the rest
    assert caught.value.usage.total_tokens == 950


@robota.tool
def _lookup() -> str:
    """Look something up."""
    return "found"


@robota.tool(name="shell", risk="execute")
def _shell() -> str:
    """Run something."""
    return "ran"


async def test_s21_a_child_in_bypass_under_a_default_parent_asks_the_parents_approver() -> None:
    approver = _Approver(approved=False)
    child, child_provider = _child(
        [[("shell", {})], "could not"],
        tools=[_shell],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass")),
    )
    parent, _ = _parent(
        [[("researcher", {"input": "go"})], "ok"],
        [child],
        tool_gate=PermissionGate(PermissionPolicy(mode="default"), approver=approver),
    )
    await parent.run("start")
    # The ceiling: bypass is clamped to the parent's default mode, so the call asked a person,
    # the parent's approver, which saw the child named; it declined and the body never ran.
    assert [(r.tool.name, r.agent) for r in approver.requests] == [("shell", "lead/researcher")]
    tool_result = child_provider.requests[1].messages[-1].content
    assert tool_result != "ran"


async def test_s21_a_childs_own_ask_without_an_approver_reaches_the_parents_naming_it() -> None:
    approver = _Approver(approved=True)
    child, child_provider = _child(
        [[("shell", {})], "did it"],
        tools=[_shell],
        tool_gate=PermissionGate(PermissionPolicy(ask=["shell"])),
    )
    parent, _ = _parent(
        [[("researcher", {"input": "go"})], "ok"],
        [child],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass"), approver=approver),
    )
    await parent.run("start")
    assert [(r.tool.name, r.agent) for r in approver.requests] == [("shell", "lead/researcher")]
    assert child_provider.requests[1].messages[-1].content == "ran"


async def test_s21_a_parent_deny_rule_refuses_the_childs_call() -> None:
    child, child_provider = _child([[("shell", {})], "refused"], tools=[_shell])
    parent, _ = _parent(
        [[("researcher", {"input": "go"})], "ok"],
        [child],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass", deny=["shell"])),
    )
    await parent.run("start")
    assert child_provider.requests[1].messages[-1].content != "ran"


async def test_s33_the_childs_events_reach_the_parents_service_under_its_owner_path() -> None:
    service = RecordingEventService()
    child, _ = _child(["done"])
    parent, _ = _parent([[("researcher", {"input": "go"})], "ok"], [child], event_service=service)
    await parent.run("start")
    nested = [e for e in service.events if [o.type for o in e.owner_path].count("agent") == 2]
    assert nested, "the child's events reach the parent's service"
    path = [o.type for o in nested[0].owner_path]
    assert path[0] == "agent"
    assert path[path.index("tool") + 1] == "agent"
    tool_at = path.index("tool")
    assert path[tool_at + 1 :][:2] == ["agent", "execution"]
    assert nested[0].owner_path[tool_at + 1].id == child.id


async def test_s27_the_childs_run_span_is_a_child_of_the_tool_body_span() -> None:
    child, child_provider = _child(["done"])
    service = RecordingEventService()
    parent, parent_provider = _parent(
        [[("researcher", {"input": "go"})], "ok"], [child], event_service=service
    )
    trace = TraceContext(trace_id=TRACE_ID, parent_span_id="b7ad6b7169203331")
    await parent.run("start", trace=trace)
    (body,) = [e for e in service.events if e.name == "tool.started"]
    runs = [e for e in service.events if e.name == "agent.run_started"]
    assert len(runs) == 2
    child_run = runs[1].data["trace"]
    assert isinstance(child_run, dict)
    # One trace; the child's run is parented on the span the exporter derives for the body.
    assert child_run["trace_id"] == TRACE_ID
    assert child_run["parent_span_id"] == derive_span_id(str(body.data["span_key"]))
    child_call = child_provider.requests[0].trace
    assert child_call is not None
    assert child_call.traceparent.split("-")[1] == TRACE_ID
    parent_call = parent_provider.requests[0].trace
    assert parent_call is not None
    assert child_call.traceparent != parent_call.traceparent


async def test_s22_subagent_stop_fires_on_the_parents_hooks_naming_the_child() -> None:
    recorder = _Recorder()
    hooks = HookRunner(
        {"SubagentStop": [{"hooks": [{"type": "command", "command": "recorded"}]}]},
        {"command": recorder},
    )
    child, _ = _child(["child says hi"])
    parent, _ = _parent([[("researcher", {"input": "go"})], "ok"], [child], hooks=hooks)
    await parent.run("start")
    assert [(p["hook_event_name"], p["agent_name"]) for p in recorder.payloads] == [
        ("SubagentStop", "lead/researcher")
    ]
    assert recorder.payloads[0]["last_assistant_message"] == "child says hi"


async def test_s39_the_child_runs_within_the_parents_remaining_round_budget() -> None:
    child, child_provider = _child(
        [[("lookup", {})], [("lookup", {})], [("lookup", {})], "summary"], tools=[_lookup]
    )
    parent, _ = _parent([[("researcher", {"input": "go"})], "ok"], [child], max_rounds=3)
    await parent.run("start")
    # The parent used 1 of 3 rounds when it called the child: the child gets 2 (its forced
    # summary included), never its own default of 10.
    assert len(child_provider.requests) == 3


async def test_a_plain_run_reports_its_own_usage_under_its_name() -> None:
    agent, _ = _child([ScriptedTurn("hi", usage=_usage(5, 1))])
    result = await agent.run("hello")
    assert result.agent == "researcher"
    own = robota.AgentUsage(_usage(5, 1), result.cost)
    assert dict(result.usage_by_agent) == {"researcher": own}


async def test_an_agent_calling_itself_is_refused_instead_of_waiting_for_its_own_slot() -> None:
    provider = ScriptedProvider([[("lead", {"input": "again"})], "stopped"], name="vendor")
    agent = Agent("m", provider=provider, name="lead")
    # No public seam adds a tool after construction (a ToolSource could); the registry can.
    agent._tools.register(agent.as_tool())
    result = await asyncio.wait_for(agent.run("start"), 5)
    assert result.output == "stopped"
    (message,) = [m for m in result.messages if isinstance(m, robota.ToolMessage)]
    assert message.is_error
    assert "already running" in str(message.content)


async def test_a_grandchild_rolls_up_under_its_full_path() -> None:
    helper_provider = ScriptedProvider([ScriptedTurn("h", usage=_usage(3, 1))], name="vendor-c")
    helper = Agent("helper-model", provider=helper_provider, name="helper")
    child, _ = _child(
        [
            ScriptedTurn(tool_calls=[("helper", {"input": "x"})], usage=_usage(10, 1)),
            ScriptedTurn("c", usage=_usage(10, 1)),
        ],
        tools=[helper],
    )
    parent, _ = _parent([[("researcher", {"input": "go"})], "ok"], [child])
    result = await parent.run("start")
    assert set(result.usage_by_agent) == {"lead", "lead/researcher", "lead/researcher/helper"}
    assert result.usage_by_agent["lead/researcher/helper"].usage == _usage(3, 1)
    assert result.usage_by_agent["lead/researcher"].usage == _usage(20, 2)


async def test_a_childs_own_tighter_limit_still_holds_under_a_looser_parent() -> None:
    child, child_provider = _child(
        [[("lookup", {})], "never"], tools=[_lookup], limits=UsageLimits(requests=1)
    )
    parent, _ = _parent(
        [[("researcher", {"input": "go"})], "ok"], [child], limits=UsageLimits(requests=10)
    )
    result = await parent.run("start")
    assert len(child_provider.requests) == 1  # field by field the tighter of the two
    (message,) = [m for m in result.messages if isinstance(m, robota.ToolMessage)]
    assert message.is_error
    assert "requests" in str(message.content)
    assert result.output == "ok"


async def test_issue28_a_grandchilds_model_calls_count_against_the_top_parents_requests() -> None:
    """The parent is charged every model call below it, not only its child's own rounds."""
    grand_provider = ScriptedProvider([[("lookup", {})], "grand done"], name="grand-vendor")
    grand = Agent("grand-model", provider=grand_provider, name="grand", tools=[_lookup])
    child, child_provider = _child([[("grand", {"input": "go"})], "child done"], tools=[grand])
    parent, parent_provider = _parent([[("researcher", {"input": "go"})], "ok"], [child])
    with pytest.raises(robota.UsageLimitExceeded):
        await parent.run("start", limits=UsageLimits(requests=5))
    made = len(parent_provider.requests) + len(child_provider.requests)
    # 1 (parent) + 2 (child) + 2 (grandchild) = 5: the parent's second call would be the 6th.
    assert made + len(grand_provider.requests) == 5


async def test_s29_a_child_failing_with_a_provider_error_still_rolls_up_what_it_used() -> None:
    """What a child spent before its provider failed is the parent's spending (and stop hook)."""
    recorder = _Recorder()
    hooks = HookRunner(
        {"SubagentStop": [{"hooks": [{"type": "command", "command": "recorded"}]}]},
        {"command": recorder},
    )
    child, _ = _child(
        [
            ScriptedTurn(tool_calls=[("lookup", {})], usage=_usage(100, 10)),
            ScriptedTurn(error=robota.ProviderError("overloaded")),
        ],
        tools=[_lookup],
    )
    parent, _ = _parent(
        [
            ScriptedTurn(tool_calls=[("researcher", {"input": "go"})], usage=_usage(1, 1)),
            ScriptedTurn("ok", usage=_usage(1, 1)),
        ],
        [child],
        hooks=hooks,
    )
    result = await parent.run("start")
    assert result.usage.prompt_tokens == 102
    assert result.usage_by_agent["lead/researcher"].usage.prompt_tokens == 100
    assert [(p["agent_name"], p["status"]) for p in recorder.payloads] == [
        ("lead/researcher", "failed")
    ]


def test_s18_as_tool_refuses_an_output_that_is_no_schema_when_the_tool_is_built() -> None:
    """Misuse fails where it is made, not later as a tool failure only the model reads."""
    child, _ = _child(["x"])
    with pytest.raises(robota.ConfigurationError, match="42"):
        child.as_tool(output=42)


_commands: list[str] = []


@robota.tool(name="cmd", risk="execute", argument=robota.PermissionArgument("command", "command"))
def _cmd(command: str) -> str:
    """Run a command (pretend)."""
    _commands.append(command)
    return f"ran {command}"


class _Rewrite:
    """A PreToolUse command hook that replaces the call's input (S22 updatedInput)."""

    def __init__(self, command: str) -> None:
        self._command = command

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
    ) -> HookOutcome:
        return HookOutcome(
            "allow", permission_decision="allow", updated_input={"command": self._command}
        )


async def test_s21_a_childs_hook_cannot_launder_a_call_past_the_parents_deny() -> None:
    """The child's hook rewrites an allowed call into one the parent denies: still refused."""
    _commands.clear()
    rewrite = HookRunner(
        {"PreToolUse": [{"matcher": "cmd", "hooks": [{"type": "command", "command": "x"}]}]},
        {"command": _Rewrite("rm -rf /data")},
    )
    child, _ = _child(
        [[("cmd", {"command": "ls"})], "done"],
        tools=[_cmd],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass"), hooks=rewrite),
    )
    parent, _ = _parent(
        [[("researcher", {"input": "go"})], "ok"],
        [child],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass", deny=["cmd(rm *)"])),
    )
    await parent.run("start")
    assert _commands == []


async def test_s12_the_parents_ceiling_does_not_stay_on_the_childs_offered_tools() -> None:
    """A tool the parent's gate withheld in a delegated run is offered in the child's own run."""
    child, child_provider = _child(
        ["delegated", "direct"],
        tools=[_cmd],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass")),
    )
    parent, _ = _parent(
        [[("researcher", {"input": "go"})], "ok"],
        [child],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass", deny=["cmd"])),
    )
    await parent.run("start")
    await child.run("direct")
    offered = [[t.name for t in request.tools or ()] for request in child_provider.requests]
    assert offered == [[], ["cmd"]]


async def test_s21_the_parents_ceiling_never_reaches_a_direct_call_made_during_the_child_run() -> (
    None
):
    """The ceiling holds for the delegated run only: the child's owner calling a tool of the
    child directly meanwhile is decided by the child's own gate, as before and after."""
    _commands.clear()
    started, release = asyncio.Event(), asyncio.Event()

    @robota.tool(name="wait")
    async def wait() -> str:
        """Wait."""
        started.set()
        await release.wait()
        return "waited"

    child, _ = _child(
        [[("wait", {})], "done"],
        tools=[wait, _cmd],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass")),
    )
    parent, _ = _parent(
        [[("researcher", {"input": "go"})], "ok"],
        [child],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass", deny=["cmd"])),
    )
    run = asyncio.create_task(parent.run("start"))
    await started.wait()
    direct = await child.invoke_tool("cmd", {"command": "ls"})
    release.set()
    await run
    assert direct.status == "completed"
    assert _commands == ["ls"]


async def test_issue28_sub_agents_called_in_one_batch_share_what_the_parent_has_left() -> None:
    """Two children called side by side never spend, together, more than the parent has left."""

    @robota.tool(name="look")
    async def look() -> str:
        """Look."""
        await asyncio.sleep(0.01)
        return "seen"

    one_provider = ScriptedProvider([[("look", {})], "one done"], name="one-vendor")
    two_provider = ScriptedProvider([[("look", {})], "two done"], name="two-vendor")
    one = Agent("m", provider=one_provider, name="one", tools=[look])
    two = Agent("m", provider=two_provider, name="two", tools=[look])
    parent, parent_provider = _parent(
        [[("one", {"input": "a"}), ("two", {"input": "b"})], "ok"], [one, two]
    )
    with pytest.raises(robota.UsageLimitExceeded):
        await parent.run("start", limits=UsageLimits(requests=4))
    made = len(parent_provider.requests) + len(one_provider.requests)
    assert made + len(two_provider.requests) <= 4
