"""Issue 27: core's per-message footprint, as tracemalloc counts it (deterministic, no timing).

An agent built beforehand runs a conversation of user turns answered by ``ScriptedProvider``;
what stays allocated afterwards (the provider's own request log cleared) is divided by the
messages in history and compared with a bare list of the same messages as plain dicts
(``{"role": ..., "content": ...}``). ``benchmarks/footprint.py`` measures the same thing at a
larger size and reports it.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import robota
from robota.testing import ScriptedProvider

TURNS = 20


def _question(turn: int) -> str:
    return f"Question number {turn}: what is {turn} times seven?"


async def _retained_per_message(*, keep_results: bool) -> tuple[float, float]:
    replies = [f"The answer to question {turn} is {turn * 7}." for turn in range(TURNS)]
    provider = ScriptedProvider(replies)
    agent = robota.Agent(provider=provider, model="footprint-model")
    warm = robota.Agent(provider=ScriptedProvider(["warm"]), model="footprint-model")
    await warm.run("warm every lazy import first")
    kept: list[Any] = []
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for turn in range(TURNS):
            result = await agent.run(_question(turn))
            if keep_results:
                kept.append(result)
        del result
        provider.requests.clear()  # the test provider's own record, not core's
        gc.collect()
        ours = tracemalloc.get_traced_memory()[0] - before
        before = tracemalloc.get_traced_memory()[0]
        bare = []
        for turn in range(TURNS):
            bare.append({"role": "user", "content": _question(turn)})
            bare.append({"role": "assistant", "content": replies[turn]})
        gc.collect()
        theirs = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    count = len(agent.history)
    assert count == len(bare) == 2 * TURNS
    return ours / count, theirs / count


async def test_issue27_an_agent_keeps_little_more_per_message_than_a_bare_dict_list() -> None:
    ours, theirs = await _retained_per_message(keep_results=False)
    # 1.08 on CPython 3.11 (1.30 before issue 27's changes; the goal is 3).
    assert ours / theirs <= 1.2, (ours, theirs)


async def test_issue27_kept_run_results_add_less_than_a_bare_message_each() -> None:
    ours, theirs = await _retained_per_message(keep_results=True)
    # 1.73 on CPython 3.11 (2.39 before issue 27's changes; the goal is 3).
    assert ours / theirs <= 2.0, (ours, theirs)


async def test_issue27_building_an_agent_builds_no_rarely_used_parts() -> None:
    """A plain agent (no tools, plugins, modules) costs ≤ 1,200 B to build (it was ~2,900 B).

    The set of reported tool-source rejections, the initialised-extension set, the stream-task
    set and the run_sync driver are built on first use; behaviour is unchanged (their own tests
    cover streams, plugins, sources and run_sync).
    """
    provider = ScriptedProvider(["x"])
    robota.Agent(provider=provider, model="footprint-model")  # lazy imports first
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        agents = [robota.Agent(provider=provider, model="footprint-model") for _ in range(50)]
        gc.collect()
        per_agent = (tracemalloc.get_traced_memory()[0] - before) / len(agents)
    finally:
        tracemalloc.stop()
    # ~1,050 B since the second round of issue 27 (fewer per-agent containers, lazy views, no
    # kept bound methods or idle run slot, rarely set fields held off the agent).
    assert per_agent <= 1_200, per_agent


@robota.tool
async def lookup(city: str) -> str:
    """Look up a city."""
    return f"{city}: 21 degrees"


async def _whole_agent_after_one_turn(*, tools: bool) -> float:
    """The whole agent (built inside the measurement) after one turn, over a bare dict list.

    The same scenario as ``benchmarks/footprint.py``'s "whole agent after 1 turn" row: 20
    agents, each built and run one turn while tracemalloc counts; the provider's own request log
    is cleared; the baseline builds the same messages as plain dicts.
    """
    count = 20
    warm = robota.Agent(provider=ScriptedProvider(["warm"]), model="footprint-model")
    await warm.run("warm every lazy import first")
    warm_tools = robota.Agent(
        provider=ScriptedProvider([[("lookup", {"city": "x"})], "warm"]),
        model="footprint-model",
        tools=[lookup],
    )
    await warm_tools.run("warm the tool path too")
    reply = "The answer to question 0 is 0."
    script: list[Any] = [[("lookup", {"city": "city 0"})], reply] if tools else [reply]
    providers = [ScriptedProvider(list(script)) for _ in range(count)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        agents = []
        for provider in providers:
            agent = robota.Agent(
                provider=provider, model="footprint-model", tools=[lookup] if tools else []
            )
            await agent.run(_question(0))
            provider.requests.clear()  # the test provider's own record, not core's
            agents.append(agent)
        gc.collect()
        ours = tracemalloc.get_traced_memory()[0] - before
        before = tracemalloc.get_traced_memory()[0]
        bare: list[list[dict[str, Any]]] = []
        for _ in range(count):
            messages: list[dict[str, Any]] = [{"role": "user", "content": _question(0)}]
            if tools:
                call = {"id": "call_0", "name": "lookup", "arguments": '{"city": "city 0"}'}
                messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
                messages.append({"role": "tool", "tool_call_id": "call_0", "content": "x"})
            messages.append({"role": "assistant", "content": reply})
            bare.append(messages)
        gc.collect()
        theirs = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert all(len(agent.history) == len(bare[0]) for agent in agents)
    return ours / theirs


async def test_issue27_a_whole_agent_after_one_turn_with_tools_is_within_3x_a_dict_list() -> None:
    # 2.2 here, 1.97 in benchmarks/footprint.py, CPython 3.11 (3.03 there before; the goal is 3).
    ratio = await _whole_agent_after_one_turn(tools=True)
    assert ratio <= 3.0, ratio


async def test_issue27_a_whole_agent_after_one_turn_without_tools_is_within_3x_a_dict_list() -> (
    None
):
    # 2.6 here, 2.76 in benchmarks/footprint.py, CPython 3.11 (5.67 there before; the goal is 3).
    # The agent's fixed cost (~1,050 B to build) is most of it.
    ratio = await _whole_agent_after_one_turn(tools=False)
    assert ratio <= 3.0, ratio
