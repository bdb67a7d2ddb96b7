"""The scenario on the OpenAI Agents SDK (a zero-latency ``Model`` of its interface)."""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from agents.models.interface import Model
from common import SCRIPT, run_scenario
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

set_tracing_disabled(True)  # no tracing exporter: the same footing as the others


class ZeroLatency(Model):
    def __init__(self) -> None:
        self.turn = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        calls = SCRIPT[self.turn % len(SCRIPT)]
        self.turn += 1
        output: list[Any]
        if calls:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id=call_id,
                    name="echo",
                    arguments=json.dumps(arguments),
                    id=f"fc_{call_id}",
                    status="completed",
                )
                for call_id, arguments in calls
            ]
        else:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            output = [
                ResponseOutputMessage(
                    type="message", id="m", role="assistant", status="completed", content=[text]
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text


def build() -> Agent[Any]:
    return Agent(name="bench", model=ZeroLatency(), tools=[echo])


async def run(agent: Agent[Any]) -> None:
    result = await Runner.run(agent, "go")
    assert result.final_output == "done", result


if __name__ == "__main__":
    run_scenario("openai-agents", version("openai-agents"), build, run)
