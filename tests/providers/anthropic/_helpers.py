"""Shared helpers for the Anthropic adapter's replay tests (real SDK, local replay server)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.core import ChatRequest, ToolSpec, UserMessage
from robota.core.providers import ResponseDone, TextDelta, ToolCallReady
from robota.providers.anthropic import AnthropicProvider

__all__ = [
    "VENDOR",
    "collect",
    "message_body",
    "provider",
    "recorded",
    "request",
    "sse",
    "stream_of",
    "tool",
]

VENDOR = "anthropic"


def recorded(name: str) -> list[Exchange]:
    """The recorded answers of ``anthropic/<name>.yaml``."""
    return load_cassette(cassette_path(VENDOR, name))


def provider(server: ReplayServer, **options: Any) -> AnthropicProvider:
    """The adapter pointed at ``server`` (no SDK retries); it streams only when the first
    scripted answer is a stream."""
    options.setdefault("max_retries", 0)
    if server.exchanges:
        options.setdefault("streaming", server.exchanges[0].mode == "sse")
    return AnthropicProvider(api_key="test", base_url=server.base_url, **options)


def request(model: str, prompt: str = "hi", **fields: Any) -> ChatRequest:
    """A one-message request."""
    return ChatRequest(model=model, messages=(UserMessage(prompt),), **fields)


def tool(name: str, *properties: str) -> ToolSpec:
    """A tool whose parameters are all required strings."""
    schema = {
        "type": "object",
        "properties": {p: {"type": "string"} for p in properties},
        "required": list(properties),
    }
    return ToolSpec(name, f"The {name} tool.", schema)


async def collect(events: Any) -> tuple[str, list[ToolCallReady], ResponseDone]:
    """Text, calls and the final event of a stream (exactly one ``ResponseDone``, last)."""
    text: list[str] = []
    calls: list[ToolCallReady] = []
    done: list[ResponseDone] = []
    async for event in events:
        assert not done, "nothing may follow ResponseDone"
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ToolCallReady):
            calls.append(event)
        elif isinstance(event, ResponseDone):
            done.append(event)
    assert len(done) == 1
    return "".join(text), calls, done[0]


def message_body(
    content: Sequence[Mapping[str, Any]],
    *,
    model: str = "claude-sonnet-4-5-20250929",
    stop_reason: str = "end_turn",
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A complete Messages API response body, as Anthropic documents it."""
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(block) for block in content],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage or {"input_tokens": 10, "output_tokens": 5}),
    }


def sse(events: Iterable[Mapping[str, Any]], *, chunk_delay: float = 0.0) -> Exchange:
    """Events in Anthropic's SSE framing: ``event: <type>`` + ``data: <json>``."""
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return Exchange.sse(text, chunk_delay=chunk_delay)


def stream_of(body: Mapping[str, Any], *, chunk_delay: float = 0.0) -> Exchange:
    """A complete Messages body as the stream Anthropic documents for it.

    ``message_start`` (input usage, empty content), then per block ``content_block_start``, its
    deltas (``text_delta`` per word, ``input_json_delta`` fragments of 8 characters,
    ``thinking_delta`` + ``signature_delta``) and ``content_block_stop``; ``ping`` once;
    ``message_delta`` with the stop reason and output usage; ``message_stop``.
    """
    usage = dict(body["usage"])
    start_usage = {**usage, "output_tokens": 1}
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {**body, "content": [], "stop_reason": None, "usage": start_usage},
        },
        {"type": "ping"},
    ]
    for index, block in enumerate(body["content"]):
        kind = block["type"]
        if kind == "text":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "text": ""},
                }
            )
            words = block["text"].split(" ")
            for position, word in enumerate(words):
                piece = word if position == 0 else " " + word
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    }
                )
        elif kind == "tool_use":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "input": {}},
                }
            )
            arguments = json.dumps(block["input"])
            events.extend(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": arguments[at : at + 8]},
                }
                for at in range(0, len(arguments), 8)
            )
        elif kind == "thinking":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "thinking_delta", "thinking": block["thinking"]},
                }
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": block["signature"]},
                }
            )
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return sse(events, chunk_delay=chunk_delay)
