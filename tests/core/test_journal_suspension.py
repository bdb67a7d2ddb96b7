"""S40 suspension: a tool's saved wait for an outside response, and its answer.

A tool calls ``ctx.request_outside_response`` before its effect; the request is saved and the
execution suspends (neither completion nor failure). The host answers it with ``respond()`` and
continues with ``resume()``: the same logical call runs again — admission decides again — and
the wait returns the saved answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import pytest

import robota
from journal_hooks import HookedJournal, fail_at, records_of
from robota.testing import InMemoryJournal, ScriptedProvider

# --------------------------------------------------------------------------- helpers


class Log:
    """What the tools did, shared by every agent of a test."""

    def __init__(self) -> None:
        self.deploy_bodies: list[str] = []  # ctx.call_id of each body start
        self.effects: list[str] = []  # effects that actually happened
        self.events: list[str] = []


def _deploy(log: Log) -> robota.Tool:
    @robota.tool
    async def deploy(target: str, ctx: robota.ToolContext) -> str:
        """Deploy a target once a person approved it."""
        log.deploy_bodies.append(ctx.call_id)
        answer: Any = await ctx.request_outside_response("approval", {"target": target})
        log.effects.append(f"deployed {target} by {answer['by']}")
        return f"deployed {target}"

    return deploy


def _slow(log: Log) -> robota.Tool:
    @robota.tool
    async def slow() -> str:
        """A slow, allowed neighbour."""
        log.events.append("slow started")
        await asyncio.sleep(0.05)
        log.events.append("slow finished")
        log.effects.append("slow")
        return "slow done"

    return slow


def _late(log: Log) -> robota.Tool:
    @robota.tool
    def late() -> str:
        """A call queued behind the others."""
        log.events.append("late started")
        log.effects.append("late")
        return "late done"

    return late


def _tools(log: Log) -> list[robota.Tool]:
    return [_deploy(log), _slow(log), _late(log)]


class SwitchGate:
    """A tool gate that admits or refuses every call, as ``allow`` says."""

    def __init__(self, *, allow: bool) -> None:
        self.allow = allow
        self.admitted: list[str] = []

    async def admit(self, invocation: robota.ToolInvocation) -> robota.Admission:
        self.admitted.append(invocation.tool.name)
        if self.allow:
            return robota.Admission(allowed=True)
        return robota.Admission(allowed=False, reason="deploys are frozen")

    async def settled(self, invocation: robota.ToolInvocation, result: robota.ToolResult) -> None:
        return None


def _agent(
    journal: robota.ExecutionJournal | None,
    turns: Iterable[robota.testing.TurnLike],
    log: Log,
    **options: object,
) -> tuple[robota.Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns)
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=_tools(log),
        journal=journal,
        **options,  # type: ignore[arg-type]
    )
    return agent, provider


DEPLOY = ("deploy", {"target": "prod"})


async def _suspended(
    journal: InMemoryJournal, log: Log, *, eid: str = "e"
) -> tuple[robota.RunResult[str], robota.Agent]:
    agent, _ = _agent(journal, [[DEPLOY]], log)
    result = await agent.run("ship it", execution_id=eid)
    assert result.status == "suspended"
    return result, agent


# --------------------------------------------------------------------------- suspending


async def test_s40_outside_request_suspends_the_run_with_its_pending_request() -> None:
    journal = InMemoryJournal()
    log = Log()
    agent, provider = _agent(journal, [[DEPLOY], "never"], log)
    result = await agent.run("ship it", execution_id="e")
    assert result.status == "suspended"
    assert result.execution_id == "e"
    (request,) = result.pending_requests
    assert request.id
    assert request.kind == "approval"
    assert request.payload == {"target": "prod"}
    assert request.tool_name == "deploy"
    assert request.call_id == log.deploy_bodies[0]
    assert log.effects == []  # the effect waits for the answer
    assert len(provider.requests) == 1
    records = await journal.read("e")
    (saved,) = records_of(records, robota.OutsideRequested)
    assert (saved.request_id, saved.request_kind, saved.payload) == (
        request.id,
        "approval",
        {"target": "prod"},
    )
    checkpoint = records[-1]
    assert isinstance(checkpoint, robota.Checkpoint)
    assert checkpoint.outcome == "suspended"
    # Neither completion nor failure: no result was invented for the waiting call.
    assert [m for m in agent.history if isinstance(m, robota.ToolMessage)] == []


async def test_s40_suspension_returns_after_running_siblings_finish_leaving_unstarted_pending() -> (
    None
):
    journal = InMemoryJournal()
    log = Log()
    agent, _ = _agent(journal, [[("slow", {}), DEPLOY, ("late", {})]], log, tool_concurrency=2)
    result = await agent.run("ship it", execution_id="e")
    assert result.status == "suspended"
    # The running sibling finished rather than being interrupted, before run() returned ...
    assert log.events == ["slow started", "slow finished"]
    records = await journal.read("e")
    started = {r.call_key: r.tool_name for r in records_of(records, robota.EffectStarted)}
    settled = {started[r.call_key]: r for r in records_of(records, robota.EffectSettled)}
    assert set(settled) == {"slow"}  # ... and its settlement was durable by then
    assert (settled["slow"].status, settled["slow"].content) == ("completed", "slow done")
    # The call that had not started stays pending: it never ran and has no result.
    assert "late" not in started.values()
    answers = {m.tool_name for m in agent.history if isinstance(m, robota.ToolMessage)}
    assert "late" not in answers
    assert "deploy" not in answers


async def test_s40_suspended_run_emits_run_suspended() -> None:
    log = Log()
    agent, _ = _agent(InMemoryJournal(), [[DEPLOY]], log)
    seen: list[robota.AgentEvent] = []
    result = await agent.run("ship it", execution_id="e", on_event=seen.append)
    names = [e.name for e in seen]
    assert robota.EventNames.RUN_SUSPENDED == "agent.run_suspended"
    assert "agent.run_suspended" in names
    assert "agent.run_failed" not in names
    event = next(e for e in seen if e.name == "agent.run_suspended")
    assert event.data["execution_id"] == "e"
    assert tuple(event.data["pending_requests"]) == result.pending_requests  # type: ignore[arg-type]


# --------------------------------------------------------------------------- responding


async def test_s40_respond_to_an_unknown_request_is_a_state_error() -> None:
    journal = InMemoryJournal()
    await _suspended(journal, Log())
    records = await journal.read("e")
    agent, _ = _agent(journal, [], Log())
    with pytest.raises(robota.ExecutionStateError):
        await agent.respond("e", "req_not_there", {"by": "ops"})
    assert await journal.read("e") == records


async def test_s40_respond_twice_to_one_request_is_a_state_error() -> None:
    journal = InMemoryJournal()
    result, _ = await _suspended(journal, Log())
    request_id = result.pending_requests[0].id
    agent, _ = _agent(journal, [], Log())
    await agent.respond("e", request_id, {"by": "ops"})
    with pytest.raises(robota.ExecutionStateError):
        await agent.respond("e", request_id, {"by": "someone else"})
    responses = records_of(await journal.read("e"), robota.OutsideResponded)
    assert [(r.request_id, r.response) for r in responses] == [(request_id, {"by": "ops"})]


async def test_s40_a_non_json_response_is_a_configuration_error() -> None:
    journal = InMemoryJournal()
    result, _ = await _suspended(journal, Log())
    agent, _ = _agent(journal, [], Log())
    with pytest.raises(robota.ConfigurationError):
        await agent.respond("e", result.pending_requests[0].id, {"by": object()})
    assert records_of(await journal.read("e"), robota.OutsideResponded) == []


async def test_s40_respond_for_an_unknown_execution_is_a_state_error() -> None:
    agent, _ = _agent(InMemoryJournal(), [], Log())
    with pytest.raises(robota.ExecutionStateError):
        await agent.respond("never-ran", "req_x", {"by": "ops"})


# --------------------------------------------------------------------------- resuming


async def test_s40_resume_without_a_response_stays_suspended_and_runs_nothing() -> None:
    journal = InMemoryJournal()
    log = Log()
    first, _ = await _suspended(journal, log)
    records = await journal.read("e")
    agent, provider = _agent(journal, ["never"], log)
    again = await agent.resume("e")
    assert again.status == "suspended"
    assert [r.id for r in again.pending_requests] == [r.id for r in first.pending_requests]
    assert provider.requests == []
    assert len(log.deploy_bodies) == 1  # the body did not run again
    assert log.effects == []
    new = (await journal.read("e"))[len(records) :]
    assert not records_of(new, robota.EffectStarted)
    assert not records_of(new, robota.ModelCallStarted)


async def test_s40_after_respond_resume_reruns_the_same_call_which_gets_the_response() -> None:
    journal = InMemoryJournal()
    log = Log()
    suspended, _ = await _suspended(journal, log)
    request = suspended.pending_requests[0]
    responder, _ = _agent(journal, [], log)  # any agent sharing the journal may answer
    await responder.respond("e", request.id, {"by": "ops"})
    agent, provider = _agent(journal, ["shipped"], log)
    seen: list[robota.AgentEvent] = []
    result = await agent.resume("e", on_event=seen.append)
    assert result.status == "complete"
    assert result.output == "shipped"
    assert result.pending_requests == ()
    # The same logical call ran again (its id is stable) and its wait returned the answer.
    assert log.deploy_bodies == [request.call_id, request.call_id]
    assert log.effects == ["deployed prod by ops"]  # the effect happened once
    (model_request,) = provider.requests
    answer = model_request.messages[-1]
    assert isinstance(answer, robota.ToolMessage)
    assert answer.content == "deployed prod"
    assert "agent.run_resumed" in [e.name for e in seen]


async def test_s40_resumed_suspension_reuses_the_siblings_settlement_and_runs_the_pending() -> None:
    journal = InMemoryJournal()
    log = Log()
    first, _ = _agent(journal, [[("slow", {}), DEPLOY, ("late", {})]], log, tool_concurrency=2)
    suspended = await first.run("ship it", execution_id="e")
    await first.respond("e", suspended.pending_requests[0].id, {"by": "ops"})
    agent, provider = _agent(journal, ["all done"], log, tool_concurrency=2)
    result = await agent.resume("e")
    assert result.output == "all done"
    assert log.events == ["slow started", "slow finished", "late started"]  # slow ran once
    assert sorted(log.effects) == ["deployed prod by ops", "late", "slow"]
    (model_request,) = provider.requests
    answers = [m for m in model_request.messages if isinstance(m, robota.ToolMessage)]
    assert [(m.tool_name, m.content) for m in answers] == [
        ("slow", "slow done"),
        ("deploy", "deployed prod"),
        ("late", "late done"),
    ]


async def test_s40_a_response_never_admits_an_effect_by_itself() -> None:
    journal = InMemoryJournal()
    log = Log()
    agent, _ = _agent(journal, [[DEPLOY]], log, tool_gate=SwitchGate(allow=True))
    suspended = await agent.run("ship it", execution_id="e")
    assert suspended.status == "suspended"
    await agent.respond("e", suspended.pending_requests[0].id, {"by": "ops"})
    gate = SwitchGate(allow=False)  # permission changed meanwhile
    resumed, provider = _agent(journal, ["understood"], log, tool_gate=gate)
    result = await resumed.resume("e")
    assert gate.admitted == ["deploy"]  # current admission decided
    assert log.effects == []  # the answer did not admit the effect
    assert len(log.deploy_bodies) == 1  # the body did not run again
    (model_request,) = provider.requests
    answer = model_request.messages[-1]
    assert isinstance(answer, robota.ToolMessage)
    assert answer.is_error
    assert "deploys are frozen" in answer.content
    assert result.output == "understood"


# --------------------------------------------------------------------------- precedence


async def test_s40_outside_request_without_a_journal_fails_the_run() -> None:
    log = Log()
    agent, provider = _agent(None, [[DEPLOY], "never"], log)
    with pytest.raises(robota.ExecutionControlError) as info:
        await agent.run("ship it")
    assert not isinstance(info.value, robota.ExecutionSuspendedError)
    assert info.value.code == "journal_required"
    assert len(provider.requests) == 1  # never a tool failure the model is shown and retries
    assert log.effects == []
    assert not [
        m for m in agent.history if isinstance(m, robota.ToolMessage) and "failed" in m.content
    ]


async def test_s40_a_rejected_request_write_fails_the_run_instead_of_suspending() -> None:
    inner = InMemoryJournal()
    log = Log()
    agent, _ = _agent(HookedJournal(inner, before=fail_at("outside_requested")), [[DEPLOY]], log)
    with pytest.raises(robota.StorageError):
        await agent.run("ship it", execution_id="e")
    assert not records_of(await inner.read("e"), robota.OutsideRequested)
    assert log.effects == []


async def test_s40_a_persistence_failure_takes_precedence_over_a_wait() -> None:
    inner = InMemoryJournal()
    log = Log()
    # The slow sibling's settlement is the write rejected.
    journal = HookedJournal(inner, before=fail_at("effect_settled"))
    agent, _ = _agent(journal, [[("slow", {}), DEPLOY]], log, tool_concurrency=2)
    with pytest.raises(robota.StorageError):
        await agent.run("ship it", execution_id="e")
    assert log.events == ["slow started", "slow finished"]
    assert not records_of(await inner.read("e"), robota.Checkpoint)
