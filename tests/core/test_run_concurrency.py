"""S38 run concurrency: one FIFO slot per agent instance."""

from __future__ import annotations

import asyncio

import pytest

import robota
from robota.testing import ScriptedProvider, ScriptedTurn


async def test_s38_twenty_concurrent_runs_on_one_instance_produce_sequential_history() -> None:
    provider = ScriptedProvider([ScriptedTurn(text=f"reply {i}", delay=0.001) for i in range(20)])
    agent = robota.Agent(provider=provider, model="m")
    results = await asyncio.gather(*(agent.run(f"question {i}") for i in range(20)))
    kinds = [m.kind for m in agent.history]
    assert kinds == ["user", "assistant"] * 20
    # Strictly sequential: each run's reply directly follows its own question, in call order.
    contents = [m.content for m in agent.history]
    assert contents == [x for i in range(20) for x in (f"question {i}", f"reply {i}")]
    assert [r.output for r in results] == [f"reply {i}" for i in range(20)]
    # Each request saw exactly the history of the runs before it.
    assert [len(r.messages) for r in provider.requests] == [2 * i + 1 for i in range(20)]


async def test_s38_already_aborted_queued_call_raises_abort_error_and_touches_nothing() -> None:
    provider = ScriptedProvider([ScriptedTurn(text="first", delay=0.05)])
    agent = robota.Agent(provider=provider, model="m")
    first = asyncio.create_task(agent.run("one"))
    await asyncio.sleep(0)
    controller = robota.AbortController()
    queued = asyncio.create_task(agent.run("two", signal=controller.signal))
    await asyncio.sleep(0)
    controller.abort("caller gave up")
    with pytest.raises(robota.AbortError) as info:
        await queued
    assert info.value.reason == "caller gave up"
    assert robota.is_abort(info.value)
    assert (await first).output == "first"
    assert len(provider.requests) == 1
    assert [m.content for m in agent.history] == ["one", "first"]


async def test_s38_signal_already_aborted_before_calling_never_queues() -> None:
    provider = ScriptedProvider([])
    agent = robota.Agent(provider=provider, model="m")
    controller = robota.AbortController()
    reason = robota.AbortError("my own abort error")
    controller.abort(reason)
    with pytest.raises(robota.AbortError) as info:
        await agent.run("x", signal=controller.signal)
    assert info.value is reason  # the signal's own reason when it already is an AbortError
    assert provider.requests == []
    assert len(agent.history) == 0


async def test_s38_abort_reason_that_is_not_an_abort_error_is_reachable_as_cause() -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m")
    controller = robota.AbortController()
    cause = TimeoutError("deadline passed")
    controller.abort(cause)
    with pytest.raises(robota.AbortError) as info:
        await agent.run("x", signal=controller.signal)
    assert info.value.__cause__ is cause


async def test_s38_stream_takes_the_slot_only_when_iteration_begins() -> None:
    provider = ScriptedProvider(["from run", "from stream"])
    agent = robota.Agent(provider=provider, model="m")
    stream = agent.run_stream("streamed")  # created first, never iterated yet
    assert (await agent.run("plain")).output == "from run"
    assert [e async for e in stream if isinstance(e, robota.TextDelta)] == [
        robota.TextDelta("from stream")
    ]
    assert [m.content for m in agent.history] == ["plain", "from run", "streamed", "from stream"]


async def test_s38_abandoned_never_consumed_stream_never_acquires_the_slot() -> None:
    provider = ScriptedProvider(["ok"])
    agent = robota.Agent(provider=provider, model="m")
    stream = agent.run_stream("never read")
    del stream
    assert (await asyncio.wait_for(agent.run("next"), 5)).output == "ok"


async def test_s38_stream_releases_the_slot_on_early_close() -> None:
    provider = ScriptedProvider(["a long streamed reply with many words", "next"], chunk_delay=0.01)
    agent = robota.Agent(provider=provider, model="m")
    stream = agent.run_stream("first")
    async for event in stream:
        if isinstance(event, robota.TextDelta):
            break
    await stream.aclose()
    assert (await asyncio.wait_for(agent.run("second"), 5)).output == "next"


async def test_s38_separate_instances_run_fully_concurrently() -> None:
    release = asyncio.Event()
    inside = 0

    @robota.tool
    async def hold() -> str:
        """Hold until both agents are inside."""
        nonlocal inside
        inside += 1
        if inside == 3:
            release.set()
        await asyncio.wait_for(release.wait(), 5)
        return "held"

    agents = [
        robota.Agent(provider=ScriptedProvider([[("hold", {})], "done"]), model="m", tools=[hold])
        for _ in range(3)
    ]
    await asyncio.wait_for(asyncio.gather(*(a.run("go") for a in agents)), 10)
    assert inside == 3


async def test_s38_a_failed_run_releases_the_slot() -> None:
    provider = ScriptedProvider([RuntimeError("boom"), "recovered"])
    agent = robota.Agent(provider=provider, model="m")
    with pytest.raises(robota.ProviderError):
        await agent.run("one")
    assert (await agent.run("two")).output == "recovered"


def test_s38_slot_survives_run_sync_on_fresh_event_loops() -> None:
    agent = robota.Agent(provider=ScriptedProvider(["one", "two"]), model="m")
    assert agent.run_sync("a").output == "one"
    assert agent.run_sync("b").output == "two"
