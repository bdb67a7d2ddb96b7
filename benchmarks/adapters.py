"""Adapter overhead (issue 16): each adapter beside its bare SDK, parsing the same stream.

The OpenAI Chat Completions and Anthropic adapters run under their real SDKs, against a
streamed tool-call response in each vendor's documented wire format (built by the tests' wire
helpers). The response is served by an in-memory ``httpx2.MockTransport``, so no socket or
server time is in either figure. The bare SDK call is the SDK's own streaming request, consumed
to its end. Calls alternate (adapter, SDK, adapter …) and the ratio is median over median.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from providers.anthropic._helpers import message_body, stream_of
from providers.openai._wire import completion, restreamed
from providers.replay import Exchange
from robota.core import ChatRequest, ToolSpec, UserMessage

TOOL = ToolSpec(
    "lookup",
    "Look up a record.",
    {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
)
ARGUMENTS = json.dumps({"id": "record-42"})


def _transport(exchange: Exchange) -> httpx2.MockTransport:
    body = b"".join(exchange.events()) if exchange.mode == "sse" else exchange.body

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=dict(exchange.headers), content=body)

    return httpx2.MockTransport(answer)


def _openai_exchange() -> Exchange:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup", "arguments": ARGUMENTS},
    }
    return restreamed(
        Exchange.json(
            200,
            completion(
                None,
                tool_calls=[call],
                finish_reason="tool_calls",
                usage={"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
            ),
        )
    )


def _anthropic_exchange() -> Exchange:
    block = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"id": "record-42"}}
    return stream_of(message_body([block], stop_reason="tool_use"))


async def _time(adapter_call: Any, sdk_call: Any, samples: int) -> tuple[float, float]:
    for _ in range(30):
        await adapter_call()
        await sdk_call()
    ours, theirs = [], []
    for _ in range(samples):
        started = time.perf_counter()
        await adapter_call()
        middle = time.perf_counter()
        await sdk_call()
        ended = time.perf_counter()
        ours.append(middle - started)
        theirs.append(ended - middle)
    return statistics.median(ours) * 1e6, statistics.median(theirs) * 1e6


async def openai_chat(samples: int) -> tuple[float, float]:
    import openai

    from robota.providers.openai import OpenAIProvider

    http = httpx2.AsyncClient(transport=_transport(_openai_exchange()))
    provider = OpenAIProvider(api_key="k", api="chat", http_client=http, max_retries=0)
    client = openai.AsyncOpenAI(api_key="k", http_client=http, max_retries=0)
    request = ChatRequest(model="gpt-4o", messages=(UserMessage("find it"),), tools=(TOOL,))
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": TOOL.parameters}}]

    async def adapter() -> None:
        async for _ in provider.chat_stream(request):
            pass

    async def sdk() -> None:
        stream = await client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "find it"}],
            tools=tools,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in stream:
            pass

    try:
        return await _time(adapter, sdk, samples)
    finally:
        await http.aclose()


async def anthropic_messages(samples: int) -> tuple[float, float]:
    import anthropic

    from robota.providers.anthropic import AnthropicProvider

    http = httpx2.AsyncClient(transport=_transport(_anthropic_exchange()))
    provider = AnthropicProvider(api_key="k", http_client=http, max_retries=0)
    client = anthropic.AsyncAnthropic(api_key="k", http_client=http, max_retries=0)
    request = ChatRequest(
        model="claude-sonnet-4-5", messages=(UserMessage("find it"),), tools=(TOOL,)
    )
    tools = [{"name": "lookup", "description": TOOL.description, "input_schema": TOOL.parameters}]

    async def adapter() -> None:
        async for _ in provider.chat_stream(request):
            pass

    async def sdk() -> None:
        stream = await client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            messages=[{"role": "user", "content": "find it"}],
            tools=tools,  # type: ignore[arg-type]
            stream=True,
        )
        async for _ in stream:
            pass

    try:
        return await _time(adapter, sdk, samples)
    finally:
        await http.aclose()


def main(samples: int = 300) -> None:
    print("\nAdapters beside their bare SDK (issue 16): a streamed tool call, in-memory transport")
    for name, bench in (
        ("OpenAI Chat Completions", openai_chat),
        ("Anthropic Messages", anthropic_messages),
    ):
        ours, theirs = asyncio.run(bench(samples))
        print(
            f"  {name:<24} adapter {ours:8.1f} µs   bare SDK {theirs:8.1f} µs   "
            f"ratio {ours / theirs:.2f} (goal ≤ 1.2)"
        )


if __name__ == "__main__":
    main()
