"""A supervisor: one agent that decides which worker agent to ask, with the workers as tools.

Run it: ``python examples/supervisor.py``. Needs no orchestration package: ``Agent.as_tool``
(core, issue 29) makes each worker callable by the supervisor's model like any tool, and the
worker inherits the supervisor run's abort signal, limits, permission ceiling, trace and events.
The supervisor's result rolls every worker's usage up, by agent. ``ScriptedProvider`` stands in
for three real models (each agent may use a different one).
"""

from __future__ import annotations

import asyncio

import robota
from robota.testing import ScriptedProvider


async def main() -> None:
    researcher = robota.Agent(
        "research-model",
        provider=ScriptedProvider(["Tides follow the Moon: two highs a day, about 12h25m apart."]),
        name="researcher",
        system_prompt="Find facts. Answer in one sentence.",
    )
    writer = robota.Agent(
        "writing-model",
        provider=ScriptedProvider(["The Moon pulls the sea twice a day: high tide, then low."]),
        name="writer",
        system_prompt="Write one plain sentence for a child.",
    )
    supervisor = robota.Agent(
        "planning-model",
        provider=ScriptedProvider(
            [
                [("researcher", {"input": "Why are there tides?"})],
                [("writer", {"input": "Explain: tides follow the Moon, two highs a day."})],
                "Done: The Moon pulls the sea twice a day: high tide, then low.",
            ]
        ),
        name="supervisor",
        system_prompt="Delegate research, then writing. Reply with the writer's sentence.",
        tools=[
            researcher.as_tool(description="Finds facts about a question."),
            writer.as_tool(description="Turns facts into one sentence for a child."),
        ],
    )
    result = await supervisor.run(
        "Explain tides to a child.", limits=robota.UsageLimits(requests=10)
    )
    print(result.output)
    print(f"{result.status}, finished by {result.agent}")
    for path, used in result.usage_by_agent.items():
        print(f"  {path}: {used.usage.total_tokens} tokens in {used.runs} run(s)")


if __name__ == "__main__":
    asyncio.run(main())
