"""The zero-latency model and the echo tool every benchmark scenario runs against."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import robota
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream

Round = Sequence[tuple[str, str]]
"""One scripted model round: ``(call id, JSON arguments)`` pairs; empty means a text reply."""

TWO_SINGLE_CALLS: tuple[Round, ...] = (
    (("c0", '{"text": "x"}'),),
    (("c1", '{"text": "x"}'),),
    (),
)
USAGE = robota.Usage.from_counts(prompt=100, completion=10)


class ZeroLatency(robota.Provider):
    """Answers each request with the next scripted round at once, whatever it is sent."""

    name = "bench"

    def __init__(self, script: Sequence[Round] = TWO_SINGLE_CALLS) -> None:
        self._script = tuple(script)
        self._turn = 0

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        calls = self._script[self._turn % len(self._script)]
        self._turn += 1
        if calls:
            for call_id, arguments in calls:
                yield robota.ToolCallReady(robota.ToolCall(call_id, "echo", arguments))
        else:
            yield robota.TextDelta("done")
        yield robota.ResponseDone(model="bench-model", usage=USAGE)


@robota.tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text
