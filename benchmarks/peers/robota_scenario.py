"""The scenario on robota (its zero-latency provider; see common.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from common import SCRIPT, run_scenario

import robota
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream

USAGE = robota.Usage.from_counts(prompt=100, completion=10)


class ZeroLatency(robota.Provider):
    name = "bench"

    def __init__(self) -> None:
        self._turn = 0

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        calls = SCRIPT[self._turn % len(SCRIPT)]
        self._turn += 1
        import json

        for call_id, arguments in calls:
            yield robota.ToolCallReady(robota.ToolCall(call_id, "echo", json.dumps(arguments)))
        if not calls:
            yield robota.TextDelta("done")
        yield robota.ResponseDone(model="bench-model", usage=USAGE)


@robota.tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text


def build() -> robota.Agent:
    return robota.Agent(provider=ZeroLatency(), model="bench-model", tools=[echo])


async def run(agent: robota.Agent) -> None:
    result = await agent.run("go")
    assert result.text == "done", result


if __name__ == "__main__":
    robota.register_model_metadata("bench-model", context_window=10_000_000, provider="bench")
    run_scenario("robota", robota.__version__, build, run, build_tool=robota.tool)
