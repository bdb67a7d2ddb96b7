"""The smallest useful agent: one tool, one streamed run, offline.

Run it: ``python examples/quickstart.py``. ``ScriptedProvider`` stands in for a real model.
"""

from __future__ import annotations

import asyncio

import robota
from robota.testing import ScriptedProvider


@robota.tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def main() -> None:
    model = ScriptedProvider([[("add", {"a": 2, "b": 40})], "2 + 40 = 42."])
    async with robota.Agent(provider=model, model="any", tools=[add]) as agent:
        stream = agent.run_stream("What is 2 + 40?")
        async for event in stream:
            if isinstance(event, robota.ToolCallFinished):
                print(f"tool {event.call.name} -> {event.content}")
            elif isinstance(event, robota.TextDelta):
                print(event.text, end="")
        result = await stream.result()
        print(f"\n{result.status}, {result.rounds} model calls, {result.usage.total_tokens} tokens")


if __name__ == "__main__":
    asyncio.run(main())
