"""S03: ``run_sync`` and ``close`` drive a real provider whose HTTP client outlives one call.

The vendor SDK keeps a connection pool bound to the event loop it first ran on, so every
synchronous call of one agent must run on the same loop (issue 25: the second ``run_sync`` of
``Agent("openai:…")`` failed with "Event loop is closed").
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Iterator

import pytest

import robota
from providers.replay import ReplayServer, cassette_path, load_cassette
from robota.testing import ScriptedProvider

_RECORDING = ("openai-responses", "test_openai_instructions_with_responses_logprobs_streaming")


@pytest.fixture
def openai_replay(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    with ReplayServer(load_cassette(cassette_path(*_RECORDING)) * 3) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/v1")
        yield server


def test_s03_run_sync_twice_on_an_agent_that_built_its_provider(
    openai_replay: ReplayServer,
) -> None:
    agent = robota.Agent(model="openai:gpt-5-mini")
    try:
        first = agent.run_sync("What is the capital of France?")
        second = agent.run_sync("And again?")
        third = agent.run_sync("Once more?")
    finally:
        assert agent.close() == []
    openai_replay.assert_all_served()
    assert first.status == second.status == third.status == "complete"
    assert first.output
    assert first.output == second.output == third.output
    assert agent.closed


def test_s20_close_is_aclose_for_synchronous_code_and_repeats_its_answer() -> None:
    closed: list[str] = []

    class Owned(ScriptedProvider):
        async def aclose(self) -> None:
            closed.append("provider")

    agent = robota.Agent(provider=Owned(["hi"]), model="m", owns_providers=True)
    assert agent.run_sync("x").output == "hi"
    assert agent.close() == []
    assert agent.close() == []
    assert closed == ["provider"]
    with pytest.raises(robota.DisposedAgentError):
        agent.run_sync("again")


def test_s20_close_without_any_sync_run_disposes_the_agent() -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m")
    assert agent.close() == []
    assert agent.closed


async def test_s03_close_inside_an_event_loop_says_how_to_fix_it() -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m")
    with pytest.raises(robota.RobotaError, match=r"await agent\.aclose\(\)"):
        agent.close()
    assert await agent.aclose() == []


def test_s03_an_agent_run_synchronously_then_dropped_leaves_no_event_loop_open() -> None:
    agent = robota.Agent(provider=ScriptedProvider(["hi"]), model="m")
    assert agent.run_sync("x").output == "hi"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del agent
        gc.collect()
    assert [str(w.message) for w in caught] == []


async def test_s03_an_agent_run_synchronously_then_dropped_inside_a_loop_closes_quietly() -> None:
    def drive() -> robota.Agent:
        agent = robota.Agent(provider=ScriptedProvider(["hi"]), model="m")
        assert agent.run_sync("x").output == "hi"
        return agent

    agent = await asyncio.to_thread(drive)  # its own loop ran in another thread
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del agent
        gc.collect()
    assert [str(w.message) for w in caught] == []
