"""Issue 28 part 1: usage limits on journaled executions (S31, S40).

A continuation keeps the limits the execution started with, and counts what the execution used
before it stopped: usage, model calls, tool calls and cost. A "crash" is the in-process stand-in
of ``tests/core/test_journal_resume.py`` (a journal wrapper raising a ``BaseException`` right
after a chosen write); ``tests/journal/test_limit_crash_trial.py`` kills a real process.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import robota
from journal_hooks import Crash, HookedJournal, crash_at
from robota import UsageLimitExceeded, UsageLimits
from robota.testing import InMemoryJournal, ScriptedProvider, ScriptedTurn


def _look(ran: list[str]) -> robota.Tool:
    @robota.tool
    def look(n: int) -> str:
        """Look."""
        ran.append(f"look {n}")
        return f"seen {n}"

    return look


def _calls(*ns: int) -> ScriptedTurn:
    return ScriptedTurn(
        tool_calls=tuple(("look", {"n": n}) for n in ns),
        usage=robota.Usage.from_counts(prompt=10, completion=3),
    )


async def _crashed(
    inner: InMemoryJournal,
    turns: Sequence[robota.testing.TurnLike],
    limits: UsageLimits,
    *,
    nth: int = 1,
    model: str = "m",
) -> list[str]:
    """Run execution ``e`` with ``limits`` until it dies right after its nth tool settled."""
    ran: list[str] = []
    journal = HookedJournal(inner, after=crash_at("effect_settled", nth=nth))
    agent = robota.Agent(
        provider=ScriptedProvider(turns), model=model, tools=[_look(ran)], journal=journal
    )
    with pytest.raises(Crash):
        await agent.run("go", execution_id="e", limits=limits)
    return ran


def _fresh(
    inner: InMemoryJournal, turns: Sequence[robota.testing.TurnLike], model: str = "m"
) -> tuple[robota.Agent, ScriptedProvider, list[str]]:
    # No limits on the resuming agent: whatever stops it comes from the journal.
    ran: list[str] = []
    provider = ScriptedProvider(turns)
    agent = robota.Agent(provider=provider, model=model, tools=[_look(ran)], journal=inner)
    return agent, provider, ran


def test_S40_runtime_state_keeps_the_limits_and_old_records_have_none() -> None:
    state = robota.RuntimeState(
        agent_name="a",
        provider="p",
        model="m",
        system_prompt=None,
        tool_catalog_digest="d",
        tool_residency=(),
        max_rounds=3,
        max_same_tool_inputs=None,
        allow_tool_only_completion=False,
        tool_choice="auto",
        limits=UsageLimits(requests=2, cost_usd=0.5),
    )
    record = robota.ExecutionStarted("e", state, ())
    decoded = robota.decode_journal_record(robota.encode_journal_record(record))
    assert isinstance(decoded, robota.ExecutionStarted)
    assert decoded.state.limits == UsageLimits(requests=2, cost_usd=0.5)
    plain = robota.ExecutionStarted(
        "e", robota.RuntimeState(**{**_fields(state), "limits": None}), ()
    )
    text = robota.encode_journal_record(plain)
    assert '"limits"' not in text  # a run without limits writes what it always wrote
    decoded = robota.decode_journal_record(text)
    assert isinstance(decoded, robota.ExecutionStarted)
    assert decoded.state.limits is None


def _fields(state: robota.RuntimeState) -> dict[str, object]:
    return {name: getattr(state, name) for name in state.__dataclass_fields__}


@pytest.mark.parametrize(("limit", "passes"), [(1, False), (2, True), (3, True)])
async def test_S40_a_resumed_run_counts_the_requests_made_before_the_crash(
    limit: int, passes: bool
) -> None:
    inner = InMemoryJournal()
    ran = await _crashed(inner, [_calls(1)], UsageLimits(requests=limit))
    assert ran == ["look 1"]
    agent, provider, ran_again = _fresh(inner, ["done"])
    if passes:
        result = await agent.resume("e")
        assert result.output == "done"
    else:
        with pytest.raises(UsageLimitExceeded) as info:
            await agent.resume("e")
        assert (info.value.limit, info.value.requests) == ("requests", 1)
        assert info.value.usage.total_tokens == 13  # the pre-crash response's usage
        assert provider.requests == []  # refused before the call: nothing was sent
    assert ran_again == []  # the settled effect was reused, never repeated


async def test_S40_a_resumed_run_counts_the_tool_calls_made_before_the_crash() -> None:
    inner = InMemoryJournal()
    await _crashed(inner, [_calls(1)], UsageLimits(tool_calls=1))
    agent, provider, ran = _fresh(inner, [_calls(2), "done"])
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.resume("e")
    assert (info.value.limit, info.value.tool_calls) == ("tool_calls", 1)
    assert ran == []  # the second batch was not dispatched
    assert len(provider.requests) == 1


async def test_S40_a_resumed_run_counts_the_tokens_used_before_the_crash() -> None:
    inner = InMemoryJournal()
    # The first response used 3 output tokens: all of them.
    await _crashed(inner, [_calls(1)], UsageLimits(output_tokens=3))
    agent, provider, _ = _fresh(inner, ["done"])
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.resume("e")
    assert info.value.limit == "output_tokens"
    assert info.value.usage.completion_tokens == 3
    assert provider.requests == []
    # With room left, the continuation's request is clamped to what remains after the crash.
    inner = InMemoryJournal()
    await _crashed(inner, [_calls(1)], UsageLimits(output_tokens=10))
    agent, provider, _ = _fresh(inner, ["done"])
    await agent.resume("e")
    assert [r.settings.max_output_tokens for r in provider.requests] == [7]


async def test_S40_a_resumed_run_counts_the_cost_before_the_crash(model_name: str) -> None:
    # Input is free and each output token costs $1: the first response cost $3, leaving $0.50,
    # which cannot buy the continuation one output token.
    robota.register_model_pricing(
        model_name, input_per_million=0, output_per_million=1_000_000, provider="scripted"
    )
    inner = InMemoryJournal()
    await _crashed(inner, [_calls(1)], UsageLimits(cost_usd=3.5), model=model_name)
    agent, provider, _ = _fresh(inner, ["done"], model=model_name)
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.resume("e")
    assert info.value.limit == "cost_usd"
    assert info.value.cost_usd == pytest.approx(3.0)
    assert provider.requests == []


async def test_S40_a_resume_refuses_a_saved_cost_limit_once_the_model_has_no_price(
    model_name: str,
) -> None:
    robota.register_model_pricing(
        model_name, input_per_million=1.0, output_per_million=1.0, provider="scripted"
    )
    inner = InMemoryJournal()
    await _crashed(inner, [_calls(1)], UsageLimits(cost_usd=1.0), model=model_name)
    robota.unregister_model_pricing(model_name, provider="scripted")
    agent, provider, _ = _fresh(inner, ["done"], model=model_name)
    with pytest.raises(robota.ConfigurationError, match="no registered price"):
        await agent.resume("e")
    assert provider.requests == []


async def test_S40_a_journaled_tool_limit_stop_is_raised_again_on_resume() -> None:
    # S39/S40: a journaled run keeps its durable recovery authority; the refused batch is not
    # answered in the transcript, and a continuation under the same limits stops the same way.
    inner = InMemoryJournal()
    ran: list[str] = []
    agent = robota.Agent(
        provider=ScriptedProvider([_calls(1, 2)]), model="m", tools=[_look(ran)], journal=inner
    )
    with pytest.raises(UsageLimitExceeded):
        await agent.run("go", execution_id="e", limits=UsageLimits(tool_calls=1))
    again, provider, ran_again = _fresh(inner, [])
    with pytest.raises(UsageLimitExceeded) as info:
        await again.resume("e")
    assert info.value.limit == "tool_calls"
    assert ran == ran_again == []
    assert provider.requests == []


async def test_S40_a_failed_model_call_counts_as_a_request_on_resume() -> None:
    inner = InMemoryJournal()
    provider = ScriptedProvider([robota.ProviderError("overloaded", status=503)])
    agent = robota.Agent(provider=provider, model="m", tools=[_look([])], journal=inner)
    with pytest.raises(robota.ProviderError):
        await agent.run("go", execution_id="e", limits=UsageLimits(requests=1))
    again, fresh, _ = _fresh(inner, ["done"])
    with pytest.raises(UsageLimitExceeded) as info:
        await again.resume("e")
    assert (info.value.limit, info.value.requests) == ("requests", 1)
    assert fresh.requests == []


async def test_S40_a_resume_counts_each_retried_attempt_as_a_request() -> None:
    # Issue 28: a failed attempt a retry replaced was dispatched — a model call the requests
    # limit counts live (Budget.settled) — so a continuation must count it too, or a resumed
    # run gets a request the limit had already spent.
    inner = InMemoryJournal()
    ran: list[str] = []
    journal = HookedJournal(inner, after=crash_at("effect_settled", nth=1))
    retry = robota.RetryPolicy(attempts=2, initial_delay=0.001, jitter=0.0)
    first = ScriptedProvider([robota.ProviderError("overloaded", status=503), _calls(1)])
    agent = robota.Agent(
        provider=first, model="m", tools=[_look(ran)], journal=journal, retry=retry
    )
    with pytest.raises(Crash):
        await agent.run("go", execution_id="e", limits=UsageLimits(requests=3))
    assert len(first.requests) == 2  # the failed attempt and its retry
    again, provider, _ = _fresh(inner, [_calls(2), "done"])
    with pytest.raises(UsageLimitExceeded) as info:
        await again.resume("e")
    assert (info.value.limit, info.value.requests) == ("requests", 3)
    assert len(first.requests) + len(provider.requests) == 3
