"""S21 + S40: a permission ask saved as an outside request of a journaled execution.

An approver that cannot keep the run waiting in memory (one answered over HTTP, or after a
restart) calls ``request.request_outside_response``: the ask is saved, the execution suspends,
and after ``respond()`` + ``resume()`` the call is judged again — current rules first — and the
saved answer answers the ask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import robota
from journal_hooks import records_of
from robota.core.hooks import HookOutcome, HookRunner, HookSpec
from robota.testing import InMemoryJournal, ScriptedProvider


class DurableApprover:
    """Saves every ask; turns the saved answer into an Approval."""

    def __init__(self) -> None:
        self.asked: list[robota.ApprovalRequest] = []

    async def __call__(self, request: robota.ApprovalRequest) -> robota.Approval:
        self.asked.append(request)
        assert request.request_outside_response is not None
        answer: Any = await request.request_outside_response(
            "approval", {"tool": request.tool.name, "arguments": dict(request.arguments)}
        )
        return robota.Approval(approved=bool(answer["approved"]), reason="a person said no")


def _tools(effects: list[str], waits: list[str] | None = None) -> list[robota.Tool]:
    @robota.tool(risk="modify")
    async def deploy(target: str, ctx: robota.ToolContext) -> str:
        """Deploy a target."""
        if waits is not None:
            answer: Any = await ctx.request_outside_response("window", {"target": target})
            waits.append(str(answer))
        effects.append(target)
        return f"deployed {target}"

    return [deploy]


def _agent(
    journal: robota.ExecutionJournal | None,
    provider: ScriptedProvider,
    approver: robota.Approver,
    effects: list[str],
    *,
    deny: tuple[str, ...] = (),
    waits: list[str] | None = None,
) -> robota.Agent:
    gate = robota.PermissionGate(
        robota.PermissionPolicy(mode="default", deny=list(deny)), approver=approver
    )
    return robota.Agent(
        provider=provider,
        model="m",
        tools=_tools(effects, waits),
        journal=journal,
        tool_gate=gate,
    )


DEPLOY = ("deploy", {"target": "prod"})


async def test_s40_an_ask_saved_as_an_outside_request_suspends_the_execution() -> None:
    journal = InMemoryJournal()
    effects: list[str] = []
    approver = DurableApprover()
    agent = _agent(journal, ScriptedProvider([[DEPLOY], "done"]), approver, effects)
    result = await agent.run("ship it", execution_id="e")
    assert result.status == "suspended"
    (request,) = result.pending_requests
    assert request.kind == "approval"
    assert request.payload == {"tool": "deploy", "arguments": {"target": "prod"}}
    assert request.tool_name == "deploy"
    assert effects == []
    (saved,) = records_of(await journal.read("e"), robota.OutsideRequested)
    assert saved.request_id == request.id


async def test_s40_an_approved_saved_ask_admits_the_call_on_resume_in_a_new_process() -> None:
    journal = InMemoryJournal()
    effects: list[str] = []
    first = _agent(journal, ScriptedProvider([[DEPLOY]]), DurableApprover(), effects)
    suspended = await first.run("ship it", execution_id="e")
    (request,) = suspended.pending_requests
    # "Another process": a fresh agent over the same journal answers and resumes.
    approver = DurableApprover()
    provider = ScriptedProvider(["shipped"])
    second = _agent(journal, provider, approver, effects)
    await second.respond("e", request.id, {"approved": True})
    result = await second.resume("e")
    assert result.status == "complete"
    assert result.output == "shipped"
    assert effects == ["prod"]  # ran once, after the answer
    assert len(approver.asked) == 1  # the ask was made again and answered from the journal
    assert len(provider.requests) == 1  # no model call repeated


async def test_s40_a_refused_saved_ask_refuses_the_call() -> None:
    journal = InMemoryJournal()
    effects: list[str] = []
    first = _agent(journal, ScriptedProvider([[DEPLOY]]), DurableApprover(), effects)
    (request,) = (await first.run("ship it", execution_id="e")).pending_requests
    second = _agent(journal, ScriptedProvider(["ok"]), DurableApprover(), effects)
    await second.respond("e", request.id, {"approved": False})
    result = await second.resume("e")
    assert result.status == "complete"
    assert effects == []
    (answer,) = [m for m in second.history if isinstance(m, robota.ToolMessage)]
    assert "a person said no" in answer.content


async def test_s40_a_saved_approval_never_admits_a_call_current_rules_deny() -> None:
    # S40: a response never admits an effect by itself — current admission still decides.
    journal = InMemoryJournal()
    effects: list[str] = []
    first = _agent(journal, ScriptedProvider([[DEPLOY]]), DurableApprover(), effects)
    (request,) = (await first.run("ship it", execution_id="e")).pending_requests
    approver = DurableApprover()
    second = _agent(journal, ScriptedProvider(["ok"]), approver, effects, deny=("deploy",))
    await second.respond("e", request.id, {"approved": True})
    result = await second.resume("e")
    assert result.status == "complete"
    assert effects == []
    assert approver.asked == []  # the deny rule decided before any ask


async def test_s40_ask_ids_are_apart_from_the_body_requests_ids() -> None:
    # The ask and the body's own wait are two requests with their own stable ids: answering
    # the ask does not answer the body's wait, whose id is the same whether admission asked.
    journal = InMemoryJournal()
    effects: list[str] = []
    waits: list[str] = []
    first = _agent(journal, ScriptedProvider([[DEPLOY]]), DurableApprover(), effects, waits=waits)
    (ask,) = (await first.run("ship it", execution_id="e")).pending_requests
    second = _agent(journal, ScriptedProvider(["ok"]), DurableApprover(), effects, waits=waits)
    await second.respond("e", ask.id, {"approved": True})
    again = await second.resume("e")
    assert again.status == "suspended"
    (window,) = again.pending_requests
    assert window.kind == "window"
    assert window.id != ask.id
    third = _agent(journal, ScriptedProvider(["ok"]), DurableApprover(), effects, waits=waits)
    await third.respond("e", window.id, "tonight")
    done = await third.resume("e")
    assert done.status == "complete"
    assert (effects, waits) == (["prod"], ["tonight"])


async def test_s21_an_ask_without_a_journal_has_no_outside_channel() -> None:
    seen: list[robota.ApprovalRequest] = []

    async def approver(request: robota.ApprovalRequest) -> robota.Approval:
        seen.append(request)
        return robota.Approval(approved=True)

    effects: list[str] = []
    agent = _agent(None, ScriptedProvider([[DEPLOY], "done"]), approver, effects)
    result = await agent.run("ship it")
    assert result.status == "complete"
    assert effects == ["prod"]
    assert seen[0].request_outside_response is None


async def test_s40_resume_stream_streams_only_the_continuation() -> None:
    journal = InMemoryJournal()
    effects: list[str] = []
    first = _agent(journal, ScriptedProvider([[DEPLOY]]), DurableApprover(), effects)
    (request,) = (await first.run("ship it", execution_id="e")).pending_requests
    provider = ScriptedProvider(["shipped to prod"])
    second = _agent(journal, provider, DurableApprover(), effects)
    await second.respond("e", request.id, {"approved": True})
    async with second.resume_stream("e") as stream:
        events = [event async for event in stream]
        result = await stream.result()
    assert result.status == "complete"
    assert effects == ["prod"]
    text = "".join(e.text for e in events if isinstance(e, robota.TextDelta))
    assert text == "shipped to prod"
    finished = [e for e in events if isinstance(e, robota.ToolCallFinished)]
    assert [e.call.name for e in finished] == ["deploy"]
    # Completed now: streaming it again runs nothing and returns the same result.
    async with second.resume_stream("e") as again:
        assert [e async for e in again] == []
        assert (await again.result()).output == "shipped to prod"
    assert len(provider.requests) == 1


async def test_s40_resume_stream_refuses_a_bad_id_at_once() -> None:
    import pytest

    agent = _agent(InMemoryJournal(), ScriptedProvider([]), DurableApprover(), [])
    with pytest.raises(robota.ConfigurationError):
        agent.resume_stream("")
    plain = robota.Agent(provider=ScriptedProvider([]), model="m")
    with pytest.raises(robota.ConfigurationError, match="journal"):
        plain.resume_stream("e")


class _Rewrite:
    """A PreToolUse command hook that replaces the call's target (S22 updatedInput)."""

    def __init__(self, target: str) -> None:
        self.target = target

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: Any = None
    ) -> HookOutcome:
        return HookOutcome("allow", updated_input={"target": self.target})


def _hooked_agent(
    journal: robota.ExecutionJournal,
    provider: ScriptedProvider,
    effects: list[str],
    rewrite: _Rewrite,
) -> robota.Agent:
    hooks = HookRunner(
        {"PreToolUse": [{"matcher": "deploy", "hooks": [{"type": "command", "command": "x"}]}]},
        {"command": rewrite},
    )
    gate = robota.PermissionGate(
        robota.PermissionPolicy(mode="default"), approver=DurableApprover(), hooks=hooks
    )
    return robota.Agent(
        provider=provider, model="m", tools=_tools(effects), journal=journal, tool_gate=gate
    )


async def test_s40_a_saved_approval_answers_only_the_ask_it_was_given_for() -> None:
    # S40: a response answers only its own request and never admits an effect by itself. A
    # hook's replacement input differs on resume: the person approved "staging", the call now
    # runs with "prod" — the saved answer must not admit it; the new question is asked anew.
    journal = InMemoryJournal()
    effects: list[str] = []
    rewrite = _Rewrite("staging")
    first = _hooked_agent(journal, ScriptedProvider([[DEPLOY]]), effects, rewrite)
    (request,) = (await first.run("ship it", execution_id="e")).pending_requests
    assert request.payload == {"tool": "deploy", "arguments": {"target": "staging"}}
    rewrite.target = "prod"
    second = _hooked_agent(journal, ScriptedProvider(["ok"]), effects, rewrite)
    await second.respond("e", request.id, {"approved": True})
    again = await second.resume("e")
    assert effects == []
    assert again.status == "suspended"
    (fresh,) = again.pending_requests
    assert fresh.id != request.id
    assert fresh.payload == {"tool": "deploy", "arguments": {"target": "prod"}}
    # Asked anew, under a stable id: resuming again waits for the same new request.
    still = await second.resume("e")
    assert [r.id for r in still.pending_requests] == [fresh.id]
    await second.respond("e", fresh.id, {"approved": True})
    done = await second.resume("e")
    assert done.status == "complete"
    assert effects == ["prod"]


async def test_s40_a_childs_ask_under_a_journaled_parent_is_asked_in_memory() -> None:
    # Issue 29: a sub-agent cannot pass a suspension to its caller yet, so a child's ask gets
    # no outside channel — its approver answers it in memory, the parent's run goes on (a
    # saved ask would fail the whole run with subagent_suspended).
    seen: list[robota.ApprovalRequest] = []

    async def approver(request: robota.ApprovalRequest) -> robota.Approval:
        seen.append(request)
        if request.request_outside_response is not None:
            answer: Any = await request.request_outside_response("approval", {})
            return robota.Approval(approved=bool(answer))
        return robota.Approval(approved=True)

    effects: list[str] = []
    child = robota.Agent(
        "c",
        provider=ScriptedProvider([[DEPLOY], "child done"]),
        name="researcher",
        tools=_tools(effects),
    )
    gate = robota.PermissionGate(robota.PermissionPolicy(mode="default"), approver=approver)
    parent = robota.Agent(
        "p",
        provider=ScriptedProvider([[("researcher", {"input": "go"})], "ok"]),
        name="lead",
        tools=[child],
        tool_gate=gate,
        journal=InMemoryJournal(),
    )
    result = await parent.run("start", execution_id="e")
    assert result.status == "complete"
    assert effects == ["prod"]
    asked = [r for r in seen if r.agent is not None]
    assert [r.tool.name for r in asked] == ["deploy"]
    assert asked[0].request_outside_response is None
