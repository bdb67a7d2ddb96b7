"""The loop's speed and memory, each quoted against a baseline measured in the same process.

The scenario (issue 16): one run is 3 model rounds with 3 tool calls — two calls in round 1, one
in round 2, a text reply in round 3 — against a zero-latency model. Figures:

* **Per run vs the tasks floor.** The floor is a hand-written asyncio loop doing the same work
  with no framework: it keeps a message list, runs a round's calls with ``asyncio.gather`` and
  appends their results. ``ratio`` = robota's median per-run time / the floor's.
* **1,000 concurrent runs vs 1,000 sequential runs** on one event loop (1,000 agents).
* **Retained memory per finished conversation** (the agent and its result kept) vs the bare
  message list the conversation amounts to (the same messages as plain dicts).
* **Building an agent** whose tools are already built, and **building a tool** from a function
  with a pydantic-validated signature.

Timing is interleaved (robota, floor, robota, floor …) so machine noise lands on both series;
the garbage collector is paused while runs are timed, except in the concurrency figure, where
the collector's cost under a large live heap is part of what is measured.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
import tracemalloc
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pydantic
from bench_models import ZeroLatency, echo

import robota

ROUNDS = 3
SCRIPT: tuple[tuple[tuple[str, str], ...], ...] = (
    (("c1", '{"text": "a"}'), ("c2", '{"text": "b"}')),
    (("c3", '{"text": "c"}'),),
    (),
)


def new_agent() -> robota.Agent:
    return robota.Agent(provider=ZeroLatency(SCRIPT), model="bench-model", tools=[echo])


async def robota_run(agent: robota.Agent) -> None:
    result = await agent.run("go")
    assert result.rounds == ROUNDS, result


# ------------------------------------------------------------------ the tasks floor


async def _floor_tool(text: str) -> str:
    return text


async def floor_run() -> list[dict[str, Any]]:
    """The same run with no framework: a list of messages, gather for a round's calls."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for turn in range(ROUNDS):
        calls = SCRIPT[turn]
        if not calls:
            messages.append({"role": "assistant", "content": "done"})
            break
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [{"id": c, "name": "echo", "arguments": a} for c, a in calls],
            }
        )
        results = await asyncio.gather(
            *(_floor_tool(json.loads(arguments)["text"]) for _, arguments in calls)
        )
        for (call_id, _), result in zip(calls, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    return messages


# ------------------------------------------------------------------ measurements


@dataclass(frozen=True)
class Figures:
    robota_run_us: float
    floor_run_us: float
    concurrent_ratio: float
    retained_bytes: float
    bare_bytes: float
    agent_build_us: float
    tool_build_us: float

    @property
    def floor_ratio(self) -> float:
        return self.robota_run_us / self.floor_run_us

    @property
    def memory_ratio(self) -> float:
        return self.retained_bytes / self.bare_bytes


async def per_run(samples: int) -> tuple[float, float]:
    """Median µs per run: robota, the floor (interleaved, GC paused)."""
    warmup = max(20, samples // 10)
    agents = [new_agent() for _ in range(samples + warmup)]
    ours: list[float] = []
    floor: list[float] = []
    gc.collect()
    gc.disable()
    try:
        for index, agent in enumerate(agents):
            started = time.perf_counter()
            await robota_run(agent)
            middle = time.perf_counter()
            await floor_run()
            ended = time.perf_counter()
            if index >= warmup:
                ours.append(middle - started)
                floor.append(ended - middle)
    finally:
        gc.enable()
    return statistics.median(ours) * 1e6, statistics.median(floor) * 1e6


async def concurrency(count: int, repeats: int) -> float:
    """The cost of ``count`` runs at once over the same runs one after another (median ratio)."""
    ratios = []
    for _ in range(repeats):
        sequential_agents = [new_agent() for _ in range(count)]
        concurrent_agents = [new_agent() for _ in range(count)]
        gc.collect()
        started = time.perf_counter()
        for agent in sequential_agents:
            await robota_run(agent)
        sequential = time.perf_counter() - started
        gc.collect()
        started = time.perf_counter()
        await asyncio.gather(*(robota_run(agent) for agent in concurrent_agents))
        concurrent = time.perf_counter() - started
        ratios.append(concurrent / sequential)
        del sequential_agents, concurrent_agents
    return statistics.median(ratios)


async def retained(count: int) -> tuple[float, float]:
    """Bytes kept per finished conversation (agent + result) and per bare message list."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = []
    for _ in range(count):
        agent = new_agent()
        kept.append((agent, await agent.run("go")))
    gc.collect()
    ours = (tracemalloc.get_traced_memory()[0] - before) / count
    kept.clear()
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    bare = [await floor_run() for _ in range(count)]
    gc.collect()
    theirs = (tracemalloc.get_traced_memory()[0] - before) / count
    tracemalloc.stop()
    del bare
    return ours, theirs


class Point(pydantic.BaseModel):
    x: int
    y: int


def lookup(city: str, limit: int = 5, where: Point | None = None) -> str:
    """Look up a city.

    Args:
        city: The city name.
        limit: How many results.
        where: Near this point.
    """
    return city


def building(number: int) -> tuple[float, float]:
    """Median µs to build an agent (tools prebuilt) and to build a tool from ``lookup``."""
    provider = ZeroLatency(SCRIPT)
    agent_samples = []
    for _ in range(7):
        started = time.perf_counter()
        for _ in range(number):
            robota.Agent(provider=provider, model="bench-model", tools=[echo])
        agent_samples.append((time.perf_counter() - started) / number)
    tool_samples = []
    for _ in range(7):
        started = time.perf_counter()
        for _ in range(max(1, number // 10)):
            robota.tool(lookup)
        tool_samples.append((time.perf_counter() - started) / max(1, number // 10))
    return statistics.median(agent_samples) * 1e6, statistics.median(tool_samples) * 1e6


async def measure(*, samples: int = 500, concurrent: int = 1000, repeats: int = 3) -> Figures:
    robota.register_model_metadata("bench-model", context_window=10_000_000, provider="bench")
    ours, floor = await per_run(samples)
    ratio = await concurrency(concurrent, repeats)
    kept, bare = await retained(200)
    agent_us, tool_us = building(2000)
    return Figures(ours, floor, ratio, kept, bare, agent_us, tool_us)


def report(figures: Figures) -> None:
    print("\nLoop suite (issue 16): 3 rounds, 3 tool calls per run, zero-latency model")
    print(
        f"  per run: robota {figures.robota_run_us:.1f} µs, tasks floor "
        f"{figures.floor_run_us:.1f} µs — ratio {figures.floor_ratio:.2f} (goal ≤ 3)"
    )
    print(
        f"  1,000 concurrent runs / 1,000 sequential runs: {figures.concurrent_ratio:.2f} "
        "(goal ≤ 1.1)"
    )
    print(
        f"  retained per finished conversation: {figures.retained_bytes / 1024:.1f} KiB vs bare "
        f"message list {figures.bare_bytes / 1024:.1f} KiB — ratio {figures.memory_ratio:.2f} "
        "(goal ≤ 2)"
    )
    print(f"  building an agent (tools prebuilt): {figures.agent_build_us:.1f} µs (goal ≤ 20)")
    print(f"  building a tool from a pydantic-typed function: {figures.tool_build_us:.1f} µs")


OUT = Path(__file__).with_name("out") / "loop_suite.json"


def main() -> None:
    figures = asyncio.run(measure())
    report(figures)
    OUT.parent.mkdir(exist_ok=True)
    data = {
        **asdict(figures),
        "floor_ratio": figures.floor_ratio,
        "memory_ratio": figures.memory_ratio,
    }
    OUT.write_text(json.dumps(data, indent=2) + "\n")
    print(f"  written to {OUT}")


if __name__ == "__main__":
    main()
