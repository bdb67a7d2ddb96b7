"""The journal's JSON form of messages and usage, every field kept (S40).

Shared by the journal's record codec and the Temporal payload codec, so a message stored in either
reads back equal to the one written.
"""

from __future__ import annotations

import math
from typing import Any

from robota.core._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from robota.core._parts import decode_content, decode_media, encode_content
from robota.core._usage import Usage

__all__ = [
    "decode_history",
    "decode_message",
    "decode_usage",
    "encode_message",
    "encode_usage",
    "opt_int",
    "opt_str",
    "read_bool",
    "read_int",
    "read_str",
]


def encode_message(message: Message) -> dict[str, Any]:
    """A message as a JSON object, every field kept (id, timestamp; a string content as is)."""
    data: dict[str, Any] = {
        "kind": message.kind,
        "content": encode_content(message.content),  # parts: objects, bytes base64
        "id": message.id,
        "created_at": message.created_at,
    }
    if isinstance(message, AssistantMessage):
        data["tool_calls"] = [[c.id, c.name, c.arguments] for c in message.tool_calls]
        data["state"] = message.state
        data["model"] = message.model
        data["continuation"] = message.continuation
        data["usage"] = encode_usage(message.usage)
    elif isinstance(message, ToolMessage):
        data["tool_call_id"] = message.tool_call_id
        data["tool_name"] = message.tool_name
        data["is_error"] = message.is_error
        data.update({"parts": encode_content(message.parts)} if message.parts else {})
    return data


def decode_message(data: Any) -> Message:
    """The message :func:`encode_message` wrote.

    Raises:
        TypeError, KeyError, ValueError: for a damaged object (the record decoder maps them).
    """
    if not isinstance(data, dict):
        raise TypeError("a message must be an object")
    kind = data["kind"]
    common: dict[str, Any] = {"id": read_str(data["id"]), "created_at": _float(data["created_at"])}
    if kind == "user":
        return UserMessage(decode_content(data["content"]), **common)
    content = read_str(data["content"])
    if kind == "system":
        return SystemMessage(content, **common)
    if kind == "tool":
        return ToolMessage(
            content,
            tool_call_id=read_str(data["tool_call_id"]),
            tool_name=read_str(data["tool_name"]),
            is_error=read_bool(data["is_error"]),
            parts=decode_media(data),
            **common,
        )
    if kind == "assistant":
        usage = decode_usage(data["usage"])
        state = data["state"]
        if state not in ("complete", "interrupted"):
            raise ValueError(f"unknown assistant state {state!r}")
        return AssistantMessage(
            content,
            tool_calls=tuple(
                ToolCall(read_str(i), read_str(n), read_str(a)) for i, n, a in data["tool_calls"]
            ),
            state=state,
            model=opt_str(data["model"]),
            usage=usage,
            continuation=opt_str(data["continuation"]),
            **common,
        )
    raise ValueError(f"unknown message kind {kind!r}")


def encode_usage(usage: Usage | None) -> list[Any] | None:
    """A usage as a JSON array (``None`` stays ``None``), every count kept."""
    if usage is None:
        return None
    return [
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.total_tokens,
        usage.cache_read_tokens,
        usage.partial,
        usage.reasoning_tokens,
    ]


def decode_usage(raw: Any) -> Usage | None:
    """The usage :func:`encode_usage` wrote.

    Raises:
        TypeError, ValueError: for a damaged array (the record decoder maps them).
    """
    if raw is None:
        return None
    p, c, t, cache, partial, reasoning = raw
    usage = Usage(read_int(p), read_int(c), read_int(t), opt_int(cache), read_bool(partial))
    if reasoning is None:
        return usage
    return Usage(
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.total_tokens,
        usage.cache_read_tokens,
        usage.partial,
        read_int(reasoning),
    )


def decode_history(items: Any) -> tuple[Message, ...]:
    """The messages of a JSON list (a record's history)."""
    if not isinstance(items, list):
        raise TypeError("a history must be a list")
    return tuple(decode_message(item) for item in items)


def read_str(value: Any) -> str:
    """A string, or TypeError."""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def opt_str(value: Any) -> str | None:
    """``None`` or a string."""
    return None if value is None else read_str(value)


def read_int(value: Any) -> int:
    """An integer (not a bool), or TypeError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


def opt_int(value: Any) -> int | None:
    """``None`` or an integer."""
    return None if value is None else read_int(value)


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)


def read_bool(value: Any) -> bool:
    """A boolean, or TypeError."""
    if not isinstance(value, bool):
        raise TypeError(f"expected a boolean, got {type(value).__name__}")
    return value
