"""Core's per-message footprint (issue 27): what an agent keeps after one finished conversation.

The scenario: an agent with no system prompt, answered by :class:`robota.testing.ScriptedProvider`,
runs a conversation of user turns, one ``agent.run(...)`` each. Two shapes:

* **no tools** — each turn is a user message and a text reply (2 messages per turn);
* **with tools** — each turn is a user message, an assistant message with one tool call, the
  tool's result and a text reply (4 messages per turn).

Three figures per shape, each in bytes per message of the conversation's history, all counted
by tracemalloc after the collector has run (deterministic: no timing, no machine noise):

* **agent** (the goal figure): what the agent holds after ``TURNS`` turns, less the agent as it
  was built (built before tracemalloc starts); the ``RunResult`` of each turn is dropped;
* **every RunResult kept too**: the same, with the caller keeping every turn's ``RunResult``;
* **the whole agent** after each of ``WHOLE_TURNS`` turns: its construction included, so a
  short conversation carries the agent's fixed cost (about 1 KiB to build; about 3.5 KiB when
  the issue was filed) as well. After one turn with no tools this was the issue's "about 8×".

The provider is built before measuring and its own record of the requests it received
(``ScriptedProvider.requests``) is cleared before reading: a real provider keeps nothing.

**The baseline** is a bare Python list of the same messages as plain dicts, built the way a
hand-written loop would build them: ``{"role": "user", "content": question}``,
``{"role": "assistant", "content": "", "tool_calls": [{"id", "name", "arguments"}]}``,
``{"role": "tool", "tool_call_id": ..., "content": result}`` and ``{"role": "assistant",
"content": reply}`` — no ids, timestamps or usage. The question, the tool's result, the call id
and the JSON arguments are fresh strings on both sides; the reply texts are the script's strings
on both sides (the scripted provider hands its own string over), counted on neither. The ratio
is ours / the baseline's bytes per message.

``python benchmarks/footprint.py`` prints the table (``--where`` adds where the agent's bytes go,
grouped by the allocating lines in robota) and writes ``benchmarks/out/footprint.json``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tracemalloc
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import robota
from robota.testing import ScriptedProvider

TURNS = 50
WHOLE_TURNS = (1, 10)
CONVERSATIONS = 20
GOAL = 3.0


@robota.tool
async def lookup(city: str) -> str:
    """Look up a city."""
    return f"{city}: 21 degrees"


def _script(turns: int, *, tools: bool) -> list[Any]:
    script: list[Any] = []
    for turn in range(turns):
        if tools:
            script.append([("lookup", {"city": f"city {turn}"})])
        script.append(f"The answer to question {turn} is {turn * 7}.")
    return script


def _question(turn: int) -> str:
    return f"Question number {turn}: what is {turn} times seven?"


def _agent(provider: ScriptedProvider, *, tools: bool) -> robota.Agent:
    return robota.Agent(provider=provider, model="footprint-model", tools=[lookup] if tools else [])


def _bare(turns: int, replies: list[Any], *, tools: bool) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for turn in range(turns):
        messages.append({"role": "user", "content": _question(turn)})
        if tools:
            arguments = json.dumps({"city": f"city {turn}"})
            call = {"id": f"call_{turn}", "name": "lookup", "arguments": arguments}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            result = f"city {turn}: 21 degrees"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        messages.append({"role": "assistant", "content": replies[turn]})
    return messages


@dataclass(frozen=True)
class Footprint:
    """Bytes retained per message for one shape, and the bare dict list's."""

    shape: str
    messages: int  # in the TURNS-turn conversation
    per_message: float  # the agent after TURNS turns, less the agent as built
    with_results: float  # the same with every RunResult kept
    bare: float  # the bare list, per message
    # Per WHOLE_TURNS entry: (turns, messages, the whole agent per message, the bare list's).
    whole: tuple[tuple[int, int, float, float], ...]

    @property
    def ratio(self) -> float:
        return self.per_message / self.bare

    @property
    def results_ratio(self) -> float:
        return self.with_results / self.bare

    @property
    def whole_ratios(self) -> dict[int, float]:
        return {turns: ours / bare for turns, _, ours, bare in self.whole}


async def _bytes(build: Any) -> tuple[int, list[Any]]:
    """Bytes still allocated after ``CONVERSATIONS`` awaited builds (kept), collector run."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    kept = [await build(index) for index in range(CONVERSATIONS)]
    gc.collect()
    return tracemalloc.get_traced_memory()[0] - before, kept


async def _conversation(turns: int, *, tools: bool, keep: bool, whole: bool) -> tuple[int, int]:
    """Bytes kept by CONVERSATIONS conversations of ``turns`` turns, and messages in one."""
    providers = [ScriptedProvider(_script(turns, tools=tools)) for _ in range(CONVERSATIONS)]
    if whole:
        agents: list[Any] = [None] * CONVERSATIONS  # built inside the measurement
    else:
        agents = [_agent(provider, tools=tools) for provider in providers]

    async def run(index: int) -> tuple[robota.Agent, list[Any]]:
        agent = agents[index] or _agent(providers[index], tools=tools)
        results = [await agent.run(_question(turn)) for turn in range(turns)]
        providers[index].requests.clear()  # the test provider's own record; not core's
        return agent, results if keep else []

    tracemalloc.start()
    try:
        total, kept = await _bytes(run)
    finally:
        tracemalloc.stop()
    return total, len(kept[0][0].history)


async def _bare_bytes(turns: int, *, tools: bool) -> int:
    replies = [text for text in _script(turns, tools=tools) if isinstance(text, str)]

    async def build(index: int) -> list[dict[str, Any]]:
        return _bare(turns, replies, tools=tools)

    tracemalloc.start()
    try:
        total, _ = await _bytes(build)
    finally:
        tracemalloc.stop()
    return total


async def measure_shape(*, tools: bool) -> Footprint:
    """One shape's figures."""
    robota.register_model_metadata("footprint-model", context_window=10_000_000, provider="bench")
    await _conversation(2, tools=tools, keep=True, whole=True)  # warm lazy imports and caches
    await _bare_bytes(2, tools=tools)
    ours, count = await _conversation(TURNS, tools=tools, keep=False, whole=False)
    kept, _ = await _conversation(TURNS, tools=tools, keep=True, whole=False)
    bare = await _bare_bytes(TURNS, tools=tools)
    whole = []
    for turns in WHOLE_TURNS:
        agent_bytes, messages = await _conversation(turns, tools=tools, keep=False, whole=True)
        bare_bytes = await _bare_bytes(turns, tools=tools)
        m = CONVERSATIONS * messages
        whole.append((turns, messages, agent_bytes / m, bare_bytes / m))
    n = CONVERSATIONS * count
    return Footprint(
        "with tools" if tools else "no tools",
        count,
        ours / n,
        kept / n,
        bare / n,
        tuple(whole),
    )


async def measure() -> list[Footprint]:
    """Both shapes."""
    return [await measure_shape(tools=False), await measure_shape(tools=True)]


async def where(*, tools: bool, limit: int = 20) -> None:
    """Print what the agents keep per message, grouped by the allocating line in robota."""
    providers = [ScriptedProvider(_script(TURNS, tools=tools)) for _ in range(CONVERSATIONS)]
    agents = [_agent(provider, tools=tools) for provider in providers]
    await _conversation(2, tools=tools, keep=False, whole=True)
    tracemalloc.start(12)
    gc.collect()
    first = tracemalloc.take_snapshot()
    for agent, provider in zip(agents, providers, strict=True):
        for turn in range(TURNS):
            await agent.run(_question(turn))
        provider.requests.clear()
    gc.collect()
    second = tracemalloc.take_snapshot()
    tracemalloc.stop()
    count = CONVERSATIONS * len(agents[0].history)
    print(f"\nWhere the agent's bytes go ({'with' if tools else 'no'} tools), per message:")
    for stat in second.compare_to(first, "traceback")[:limit]:
        frames = [f for f in reversed(stat.traceback) if "/robota/" in f.filename][:2]
        place = " < ".join(f"{f.filename.split('/robota/')[-1]}:{f.lineno}" for f in frames)
        print(f"  {stat.size_diff / count:7.1f} B  {place or stat.traceback[-1].filename}")


def report(figures: list[Footprint]) -> None:
    """Print the table."""
    print(
        "\nCore's per-message footprint (issue 27): ScriptedProvider, vs a bare list of the same "
        "messages as dicts"
    )
    for f in figures:
        status = "meets" if f.ratio <= GOAL else "misses"
        print(
            f"  {f.shape}, {TURNS} turns ({f.messages} messages): agent {f.per_message:.0f} B vs "
            f"bare {f.bare:.0f} B per message — ratio {f.ratio:.2f} (goal ≤ {GOAL:g}: {status}); "
            f"every RunResult kept too: {f.with_results:.0f} B, ratio {f.results_ratio:.2f}"
        )
        for turns, messages, ours, bare in f.whole:
            print(
                f"    the whole agent (its construction included) after {turns} turn(s) "
                f"({messages} messages): {ours:.0f} B vs {bare:.0f} B per message — ratio "
                f"{ours / bare:.2f}"
            )


OUT = Path(__file__).with_name("out") / "footprint.json"


def main() -> bool:
    """Measure, print and save; ``True`` when every shape meets the goal."""
    figures = asyncio.run(measure())
    report(figures)
    if "--where" in sys.argv:
        asyncio.run(where(tools=False))
        asyncio.run(where(tools=True))
    OUT.parent.mkdir(exist_ok=True)
    data = [
        {
            **asdict(f),
            "ratio": f.ratio,
            "results_ratio": f.results_ratio,
            "whole_ratios": f.whole_ratios,
        }
        for f in figures
    ]
    OUT.write_text(json.dumps(data, indent=2) + "\n")
    print(f"  written to {OUT}")
    return all(f.ratio <= GOAL for f in figures)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
