"""S40: a session's turn that suspends, waiting for outside responses, across processes.

A journaled turn whose tool (or approver) saves an outside request stays pending; the session
opens again in a fresh process with the turn still waiting, answers its requests with
``session.respond`` (only its own) and continues with ``resume`` or ``resume_stream``.
"""

from __future__ import annotations

from typing import Any

import pytest

import robota
from robota.sessions import Session, SessionStateError
from robota.testing import InMemoryJournal, InMemorySessionStore, ScriptedProvider

DEPLOY = ("deploy", {"target": "prod"})


def _agent(
    journal: robota.ExecutionJournal, turns: list[Any], effects: list[str]
) -> tuple[robota.Agent, ScriptedProvider]:
    @robota.tool
    async def deploy(target: str, ctx: robota.ToolContext) -> str:
        """Deploy once a person approved it."""
        answer: Any = await ctx.request_outside_response("approval", {"target": target})
        effects.append(f"{target} by {answer['by']}")
        return f"deployed {target}"

    provider = ScriptedProvider(turns)
    return robota.Agent(provider=provider, model="m", tools=[deploy], journal=journal), provider


async def _suspend(
    journal: InMemoryJournal, store: InMemorySessionStore, effects: list[str]
) -> robota.OutsideRequest:
    agent, _ = _agent(journal, [[DEPLOY]], effects)
    session = await Session.open(agent, store, "s1")
    result = await session.run("ship it")
    assert result.status == "suspended"
    (request,) = session.pending_requests
    assert request.id == result.pending_requests[0].id
    await session.aclose()
    return request


async def test_s40_a_session_with_a_suspended_turn_opens_with_its_pending_requests() -> None:
    journal, store, effects = InMemoryJournal(), InMemorySessionStore(), []
    request = await _suspend(journal, store, effects)
    agent, provider = _agent(journal, ["never"], effects)
    session = await Session.open(agent, store, "s1")  # "after a restart"
    assert [r.id for r in session.pending_requests] == [request.id]
    assert provider.requests == []  # opening ran nothing
    with pytest.raises(SessionStateError) as caught:
        await session.run("something else")
    assert caught.value.code == "turn_suspended"
    assert request.id in str(caught.value)


async def test_s40_respond_then_resume_stream_finishes_the_turn_once() -> None:
    journal, store, effects = InMemoryJournal(), InMemorySessionStore(), []
    request = await _suspend(journal, store, effects)
    agent, provider = _agent(journal, ["shipped"], effects)
    session = await Session.open(agent, store, "s1")
    await session.respond(request.id, {"by": "ana"})
    async with session.resume_stream() as stream:
        events = [event async for event in stream]
        result = await stream.result()
    assert result.status == "complete"
    assert result.output == "shipped"
    assert effects == ["prod by ana"]
    assert "".join(e.text for e in events if isinstance(e, robota.TextDelta)) == "shipped"
    assert session.pending_requests == ()
    assert session.turns[-1].status == "complete"
    again = await Session.open(agent, store, "s1")
    assert [t.status for t in again.turns] == ["complete"]
    assert len(provider.requests) == 1


async def test_s40_resume_stream_of_a_turn_still_waiting_returns_suspended() -> None:
    journal, store, effects = InMemoryJournal(), InMemorySessionStore(), []
    request = await _suspend(journal, store, effects)
    agent, _ = _agent(journal, ["never"], effects)
    session = await Session.open(agent, store, "s1")
    async with session.resume_stream() as stream:
        assert [e async for e in stream] == []
        result = await stream.result()
    assert result.status == "suspended"
    assert [r.id for r in session.pending_requests] == [request.id]


async def test_s40_a_session_answers_only_its_own_requests() -> None:
    journal, store, effects = InMemoryJournal(), InMemorySessionStore(), []
    request = await _suspend(journal, store, effects)
    agent, _ = _agent(journal, [], effects)
    other = await Session.open(agent, store, "s2")
    with pytest.raises(SessionStateError) as caught:
        await other.respond(request.id, {"by": "mallory"})
    assert caught.value.code == "no_pending_turn"
    # A second suspended session cannot answer the first one's request either.
    agent2, _ = _agent(journal, [[DEPLOY]], effects)
    second = await Session.open(agent2, store, "s2")
    assert (await second.run("ship too")).status == "suspended"
    with pytest.raises(robota.ExecutionStateError):
        await second.respond(request.id, {"by": "mallory"})
    assert effects == []


async def test_s40_resume_stream_without_a_pending_turn_is_refused() -> None:
    journal, store = InMemoryJournal(), InMemorySessionStore()
    agent, _ = _agent(journal, [], [])
    session = await Session.open(agent, store, "s1")
    with pytest.raises(SessionStateError) as caught:
        async with session.resume_stream() as stream:
            await stream.result()
    assert caught.value.code == "no_pending_turn"
