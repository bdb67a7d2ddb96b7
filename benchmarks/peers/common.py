"""What every peer scenario process shares: the script, the tasks floor, the timing protocol.

Each framework runs in a process of its own (``python <framework>.py --samples N``). It times N
runs of the scenario — 3 model rounds, 3 tool calls (two in round 1, one in round 2), a text reply
in round 3, against that framework's own zero-latency test model — interleaved run by run with the
same work done by a hand-written asyncio loop (the tasks floor), the garbage collector paused, and
prints one JSON line: the medians in microseconds.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic

SCRIPT: tuple[tuple[tuple[str, dict[str, str]], ...], ...] = (
    (("c1", {"text": "a"}), ("c2", {"text": "b"})),
    (("c3", {"text": "c"}),),
    (),
)
ROUNDS = len(SCRIPT)


async def _floor_tool(text: str) -> str:
    return text


async def floor_run() -> list[dict[str, Any]]:
    """The scenario with no framework: a message list, gather for a round's calls."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for calls in SCRIPT:
        if not calls:
            messages.append({"role": "assistant", "content": "done"})
            break
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": c, "name": "echo", "arguments": json.dumps(a)} for c, a in calls
                ],
            }
        )
        results = await asyncio.gather(
            *(_floor_tool(json.loads(json.dumps(a))["text"]) for _, a in calls)
        )
        for (call_id, _), result in zip(calls, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    return messages


class Point(pydantic.BaseModel):
    """A point; ``lookup``'s pydantic-typed parameter."""

    x: float
    y: float


def lookup(city: str, limit: int = 5, where: Point | None = None) -> str:
    """Look up a city.

    Args:
        city: The city name.
        limit: How many results.
        where: Near this point.
    """
    return city


def _tool_build_us(build_tool: Callable[[Callable[..., Any]], object], samples: int) -> float:
    """Median µs to build a tool from ``lookup`` (a function with a pydantic-typed signature)."""
    for _ in range(20):
        build_tool(lookup)
    times: list[float] = []
    for _ in range(samples):
        started = time.perf_counter()
        build_tool(lookup)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def run_scenario(
    name: str,
    version: str,
    build: Callable[[], Any],
    run: Callable[[Any], Awaitable[None]],
    build_tool: Callable[[Callable[..., Any]], object] | None = None,
) -> None:
    """Time the framework's runs beside the floor and print the JSON line (the process's job).

    With ``build_tool`` (how the framework turns a function into a tool), the line also carries
    ``tool_build_us``: the median cost of building a tool from :func:`lookup`.
    """
    samples = int(sys.argv[sys.argv.index("--samples") + 1]) if "--samples" in sys.argv else 300

    async def main() -> dict[str, Any]:
        warmup = max(20, samples // 10)
        instances = [build() for _ in range(samples + warmup)]
        ours: list[float] = []
        floor: list[float] = []
        gc.collect()
        gc.disable()
        try:
            for index, instance in enumerate(instances):
                started = time.perf_counter()
                await run(instance)
                middle = time.perf_counter()
                await floor_run()
                ended = time.perf_counter()
                if index >= warmup:
                    ours.append(middle - started)
                    floor.append(ended - middle)
        finally:
            gc.enable()
        figures: dict[str, Any] = {
            "framework": name,
            "version": version,
            "run_us": statistics.median(ours) * 1e6,
            "floor_us": statistics.median(floor) * 1e6,
        }
        if build_tool is not None:
            figures["tool_build_us"] = _tool_build_us(build_tool, samples)
        return figures

    print(json.dumps(asyncio.run(main())))
