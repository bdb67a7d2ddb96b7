"""The scenario on pydantic-ai (its ``FunctionModel``; see common.py)."""

from __future__ import annotations

from typing import Any

import pydantic_ai
from common import SCRIPT, run_scenario
from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def build() -> Agent[None, str]:
    turn = [0]

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        calls = SCRIPT[turn[0] % len(SCRIPT)]
        turn[0] += 1
        if calls:
            return ModelResponse(
                parts=[ToolCallPart("echo", dict(args), tool_call_id=cid) for cid, args in calls]
            )
        return ModelResponse(parts=[TextPart("done")])

    agent: Agent[None, str] = Agent(FunctionModel(model))

    @agent.tool_plain
    async def echo(text: str) -> str:
        return text

    return agent


async def run(agent: Agent[None, str]) -> None:
    result = await agent.run("go")
    assert result.output == "done", result


if __name__ == "__main__":
    run_scenario("pydantic-ai", pydantic_ai.__version__, build, run, build_tool=Tool)
