"""Map-reduce with ``robota.agents``: one text listed into items, each summarised, then combined.

Run it: ``python examples/map_reduce.py``. A pipeline (``sequential``) whose first step lists
the reviews, one per line; ``map_reduce`` runs a pool of two summariser agents over those lines at
once and a reducer agent over their summaries. The whole flow runs under one abort signal, and its
result rolls the usage up by agent. (Given ``limits=``, one ``UsageLimits`` would bound every
agent run of the flow, the runs then taking turns.) ``ScriptedProvider`` stands in for the
models.
"""

from __future__ import annotations

import asyncio

import robota
from robota.agents import map_reduce, sequential
from robota.testing import ScriptedProvider, ScriptedTurn

REVIEWS = """\
The battery lasts two days and the screen is sharp.
It overheats when charging and the case cracked in a week.
Good value; the camera is average in low light.
"""


def summariser(replies: list[ScriptedTurn]) -> robota.Agent:
    return robota.Agent(
        "small-model",
        provider=ScriptedProvider(replies),
        name="summariser",
        system_prompt="Summarise one review in three words.",
    )


async def main() -> None:
    lister = robota.Agent(
        "small-model",
        provider=ScriptedProvider([REVIEWS]),
        name="lister",
        system_prompt="List the reviews in the input, one per line.",
    )
    # Two interchangeable workers: up to two reviews are summarised at once.
    pool = [
        summariser([ScriptedTurn("long battery, sharp"), ScriptedTurn("good value")]),
        # A slower model: the first worker is free again first and takes the third review.
        summariser([ScriptedTurn("overheats, fragile", delay=0.05)]),
    ]
    reducer = robota.Agent(
        "large-model",
        provider=ScriptedProvider(["Mixed: praised battery and value; overheating is the risk."]),
        name="reducer",
        system_prompt="Combine the summaries into one verdict.",
    )
    flow = sequential(lister, map_reduce(pool, reducer))
    result = await flow.run("Reviews of the X1 phone")
    print(result.output)
    print(f"{result.status}: {len(result.steps)} steps, {result.requests} model calls")
    for step in result.steps:
        print(f"  {step.id}: {step.output.splitlines()[0]}")
    for path, used in result.usage_by_agent.items():
        print(f"  {path}: {used.runs} run(s), {used.usage.total_tokens} tokens")


if __name__ == "__main__":
    asyncio.run(main())
