"""Issue 28: a session's usage limits cap its totals across turns (S31).

Each turn runs with what the session's totals leave of its limits; a turn that would pass them
stops with :class:`~robota.UsageLimitExceeded` and is saved ``failed`` like any raising turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import robota
from robota import UsageLimitExceeded, UsageLimits
from robota.sessions import Session, SQLiteSessionStore
from robota.testing import InMemorySessionStore, ScriptedProvider, ScriptedTurn


def _reply(text: str, prompt: int, completion: int) -> ScriptedTurn:
    return ScriptedTurn(
        text=text, usage=robota.Usage.from_counts(prompt=prompt, completion=completion)
    )


def _caps(provider: ScriptedProvider) -> list[int | None]:
    return [request.settings.max_output_tokens for request in provider.requests]


@pytest.mark.parametrize(("limit", "passes"), [(9, False), (10, True), (11, True)])
async def test_S31_session_output_limit_across_two_turns_at_below_and_above(
    tmp_path: Path, limit: int, passes: bool
) -> None:
    provider = ScriptedProvider([_reply("one", 5, 6), _reply("two", 5, 4)])
    agent = robota.Agent("m", provider=provider)
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    session = await Session.open(agent, store, limits=UsageLimits(output_tokens=limit))
    assert session.limits == UsageLimits(output_tokens=limit)
    await session.run("first")
    if passes:
        await session.run("second")
        assert session.usage.completion_tokens == 10
    else:
        # 9 - 6 = 3 left: the request is capped at 3, and the reported 4 passes the limit.
        with pytest.raises(UsageLimitExceeded) as info:
            await session.run("second")
        assert info.value.limit == "output_tokens"
        assert session.turns[-1].status == "failed"
        assert session.usage.completion_tokens == 10  # the failed turn's usage is counted
    # The second turn was given what the first left, not the whole budget.
    assert _caps(provider) == [limit, limit - 6]
    await session.aclose()


async def test_S31_a_session_out_of_budget_sends_nothing_and_a_reopened_handle_counts_it(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider([_reply("one", 5, 6)])
    agent = robota.Agent("m", provider=provider)
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    limits = UsageLimits(output_tokens=6)
    session = await Session.open(agent, store, limits=limits)
    await session.run("first")
    await session.aclose()
    # Another handle (another process, say) reads the session's totals from the store.
    again = await Session.open(agent, store, session.id, limits=limits)
    with pytest.raises(UsageLimitExceeded) as info:
        await again.run("second")
    assert info.value.limit == "output_tokens"
    assert len(provider.requests) == 1  # the second turn's call was never sent
    await again.aclose()


async def test_S31_a_turns_own_limits_tighten_the_sessions_remainder() -> None:
    provider = ScriptedProvider([_reply("one", 5, 2), _reply("two", 5, 2)])
    agent = robota.Agent("m", provider=provider)
    session = await Session.open(
        agent, InMemorySessionStore(), limits=UsageLimits(output_tokens=100)
    )
    await session.run("first", limits=UsageLimits(output_tokens=7, requests=3))
    await session.run("second", limits=UsageLimits(output_tokens=500))
    assert _caps(provider) == [7, 98]
    await session.aclose()


async def test_S31_a_session_cost_limit_spans_turns(model_name: str) -> None:
    robota.register_model_pricing(model_name, input_per_million=0, output_per_million=1_000_000)
    provider = ScriptedProvider([_reply("one", 5, 3), _reply("two", 5, 1)])
    agent = robota.Agent(model_name, provider=provider)
    session = await Session.open(agent, InMemorySessionStore(), limits=UsageLimits(cost_usd=4.0))
    await session.run("first")
    assert session.cost == pytest.approx(3.0)
    await session.run("second")  # $1 left: exactly one output token
    assert _caps(provider) == [4, 1]
    with pytest.raises(UsageLimitExceeded) as info:
        await session.run("third")
    assert info.value.limit == "cost_usd"
    assert len(provider.requests) == 2
    await session.aclose()


@pytest.mark.parametrize("field", ["requests", "tool_calls"])
async def test_S31_session_limits_refuse_counts_a_session_does_not_total(field: str) -> None:
    agent = robota.Agent("m", provider=ScriptedProvider([]))
    with pytest.raises(robota.ConfigurationError, match="per turn"):
        await Session.open(agent, InMemorySessionStore(), limits=UsageLimits(**{field: 1}))
    with pytest.raises(robota.ConfigurationError, match="UsageLimits"):
        await Session.open(agent, InMemorySessionStore(), limits={"cost_usd": 1})  # type: ignore[arg-type]


@pytest.mark.parametrize(("limit", "passes"), [(6, False), (7, True)])
async def test_S31_a_compactions_summary_call_spends_from_the_session_limits(
    limit: int, passes: bool
) -> None:
    provider = ScriptedProvider(
        [_reply("one", 5, 3), _reply("two", 5, 3), _reply("summary", 5, 1), _reply("three", 1, 0)]
    )
    agent = robota.Agent("m", provider=provider)
    session = await Session.open(
        agent, InMemorySessionStore(), compaction=None, limits=UsageLimits(output_tokens=limit)
    )
    await session.run("first")
    await session.run("second")
    if passes:
        entry = await session.compact(keep_recent_turns=0)
        assert entry is not None
        assert entry.usage.completion_tokens == 1
        assert _caps(provider) == [limit, limit - 3, 1]  # the summary got what was left
        with pytest.raises(UsageLimitExceeded):
            await session.run("third")  # the summary's token counts against the session
    else:
        with pytest.raises(UsageLimitExceeded) as info:
            await session.compact(keep_recent_turns=0)
        assert info.value.limit == "output_tokens"
        assert session.compactions == ()
    assert len(provider.requests) == (3 if passes else 2)
    await session.aclose()


async def test_S31_a_session_limit_never_loosens_the_agents_own_per_run_limit() -> None:
    # The agent caps every run at 10 output tokens; a session's larger remainder is a ceiling on
    # top of that, not a run override that lifts it (it was passed as the run's limits=, which
    # replace the agent's field by field).
    provider = ScriptedProvider([_reply("one", 5, 50), _reply("two", 5, 4)])
    agent = robota.Agent("m", provider=provider, limits=UsageLimits(output_tokens=10))
    session = await Session.open(
        agent, InMemorySessionStore(), limits=UsageLimits(output_tokens=1000)
    )
    with pytest.raises(UsageLimitExceeded) as info:
        await session.run("first")
    assert info.value.limit == "output_tokens"
    # A turn's own limits= still overrides the agent's, as on agent.run, under the session's.
    await session.run("second", limits=UsageLimits(output_tokens=20))
    assert _caps(provider) == [10, 20]
    await session.aclose()


async def test_S31_a_compaction_keeps_the_agents_own_per_run_limit() -> None:
    provider = ScriptedProvider([_reply("one", 5, 3), _reply("summary", 5, 1)])
    agent = robota.Agent("m", provider=provider, limits=UsageLimits(output_tokens=5))
    session = await Session.open(
        agent, InMemorySessionStore(), compaction=None, limits=UsageLimits(output_tokens=1000)
    )
    await session.run("first")
    await session.compact(keep_recent_turns=0)
    assert _caps(provider) == [5, 5]  # the summary call too: min(agent's 5, session's 997)
    await session.aclose()


class _Unreported(ScriptedProvider):
    """Answers as scripted, but reports no usage (a server without stream usage)."""

    async def chat_stream(  # type: ignore[override]
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[robota.StreamEvent]:
        async for event in super().chat_stream(request, signal=signal):
            if isinstance(event, robota.ResponseDone):
                yield robota.ResponseDone(model=event.model, usage=None)
            else:
                yield event


async def test_S31_turns_without_reported_usage_still_spend_the_session_limit() -> None:
    # S31: counts the adapter could not attest are estimated, not dropped. A session's totals
    # held only reported usage, so with a provider that reports none every turn was given the
    # whole output limit again (5 turns of ~50 tokens under a 60-token session limit).
    words = " ".join(["word"] * 40)  # about 50 tokens a reply
    provider = _Unreported([words] * 5)
    agent = robota.Agent("m", provider=provider)
    session = await Session.open(
        agent, InMemorySessionStore(), compaction=None, limits=UsageLimits(output_tokens=60)
    )
    await session.run("first")
    with pytest.raises(UsageLimitExceeded):
        await session.run("second")  # given what the first left: 10 tokens
    with pytest.raises(UsageLimitExceeded):
        await session.run("third")  # nothing left: not sent
    assert _caps(provider) == [60, 10]
    await session.aclose()
