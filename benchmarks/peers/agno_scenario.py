"""The scenario on agno (a zero-latency ``Model`` subclass)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

from agno.agent import Agent
from agno.models.base import Model
from agno.models.response import ModelResponse
from common import SCRIPT, run_scenario


@dataclass
class ZeroLatency(Model):
    id: str = "zero"
    name: str = "ZeroLatency"
    provider: str = "bench"
    turn: int = 0

    def _next(self) -> ModelResponse:
        calls = SCRIPT[self.turn % len(SCRIPT)]
        self.turn += 1
        if calls:
            return ModelResponse(
                role="assistant",
                tool_calls=[
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "echo", "arguments": json.dumps(arguments)},
                    }
                    for call_id, arguments in calls
                ],
            )
        return ModelResponse(role="assistant", content="done")

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self._next()

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self._next()

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        yield self._next()

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        yield self._next()

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]


async def echo(text: str) -> str:
    """Echo the text."""
    return text


def build() -> Agent:
    return Agent(model=ZeroLatency(), tools=[echo], telemetry=False)


async def run(agent: Agent) -> None:
    result = await agent.arun("go")
    assert result.content == "done", result


if __name__ == "__main__":
    run_scenario("agno", version("agno"), build, run)
