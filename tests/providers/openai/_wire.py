"""Shared helpers for the Chat Completions adapters' replay tests.

Every test drives the real ``openai`` SDK against :class:`~providers.replay.ReplayServer`; these
helpers build the adapters pointed at it and write Chat Completions bodies in the wire format.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from providers.replay import Exchange, ReplayServer
from robota.providers.openai import OpenAIProvider
from robota.providers.openai_compatible import OpenAICompatibleProvider

__all__ = [
    "chat_provider",
    "collect_into",
    "compatible_provider",
    "completion",
    "restreamed",
    "sse",
    "sse_text",
]


def chat_provider(server: ReplayServer, **options: Any) -> OpenAIProvider:
    """``OpenAIProvider(api="chat")`` pointed at ``server``, without SDK retries by default."""
    options.setdefault("max_retries", 0)
    options.setdefault("api", "chat")
    return OpenAIProvider(api_key="test", base_url=server.base_url + "/v1", **options)


def compatible_provider(server: ReplayServer, **options: Any) -> OpenAICompatibleProvider:
    """``OpenAICompatibleProvider`` pointed at ``server``, without SDK retries by default."""
    options.setdefault("max_retries", 0)
    return OpenAICompatibleProvider(base_url=server.base_url + "/v1", **options)


def completion(
    content: str | None = "ok",
    *,
    model: str = "m",
    tool_calls: Sequence[Mapping[str, Any]] = (),
    usage: Mapping[str, Any] | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    """A ``chat.completion`` body as OpenAI documents it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [dict(call) for call in tool_calls]
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
    }
    if usage is not None:
        body["usage"] = dict(usage)
    return body


def sse_text(chunks: Iterable[Mapping[str, Any] | str], *, done: bool = True) -> str:
    """``data:`` lines for ``chunks`` (a ``str`` item is written as is, e.g. an SSE comment)."""
    parts = [
        chunk if isinstance(chunk, str) else f"data: {json.dumps(chunk)}\n\n" for chunk in chunks
    ]
    if done:
        parts.append("data: [DONE]\n\n")
    return "".join(parts)


def sse(chunks: Iterable[Mapping[str, Any] | str], *, done: bool = True) -> Exchange:
    """A 200 ``text/event-stream`` exchange of Chat Completions chunks."""
    return Exchange.sse(sse_text(chunks, done=done))


def restreamed(exchange: Exchange) -> Exchange:
    """A recorded non-streamed completion re-framed as the Chat Completions stream it stands for.

    The agent loop always streams, while many recordings are JSON. This keeps every vendor
    token of the recording — ids, model, message fields such as ``extra_content``, tool calls,
    usage — and frames them the way OpenAI streams them: a first chunk with the role, the
    content and each tool call (with its ``index``), a chunk with the finish reason, a
    ``choices: []`` chunk with the usage, then ``[DONE]``.
    """
    body = json.loads(exchange.body)
    head = {key: body[key] for key in ("id", "created", "model") if key in body}
    head["object"] = "chat.completion.chunk"
    choice = body["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [
            {"index": index, **call} for index, call in enumerate(message["tool_calls"])
        ]
    if "extra_content" in message:
        delta["extra_content"] = message["extra_content"]
    chunks: list[dict[str, Any]] = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]
    if body.get("usage") is not None:
        chunks.append({**head, "choices": [], "usage": body["usage"]})
    return sse(chunks)


async def collect_into(events: AsyncIterator[Any], into: list[Any]) -> None:
    """Append each event to ``into``, so a caller keeps what came before an error."""
    async for event in events:
        into.append(event)  # noqa: PERF401 - the partial list is the point
