"""The normalised form and fingerprint of a request.

Two requests with the same fingerprint ask a model the same thing: the same model, tool choice,
offered tools and conversation (message kinds, contents, tool calls, states) — ids and timestamps
excluded. Used by the response cache (S30: keyed by model) and by ``robota.testing``'s cassettes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from robota.core._messages import AssistantMessage, Message, ToolMessage
from robota.core._parts import encode_content
from robota.core.providers._contract import ChatRequest

__all__ = ["normalize_request", "request_fingerprint"]

_ASKED = (
    "top_p",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "parallel_tool_calls",
)


def _normalize_message(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": message.kind, "content": encode_content(message.content)}
    if isinstance(message, AssistantMessage):
        data["state"] = message.state
        data["tool_calls"] = [[c.id, c.name, c.arguments] for c in message.tool_calls]
    elif isinstance(message, ToolMessage):
        data["tool_call_id"] = message.tool_call_id
        data["tool_name"] = message.tool_name
        data["is_error"] = message.is_error
        if message.parts:
            # The media a tool returned are part of what is asked; none adds nothing, so
            # fingerprints of results without media stay what they were.
            data["parts"] = encode_content(message.parts)
    return data


def normalize_request(request: ChatRequest, *, model: str | None = None) -> dict[str, Any]:
    """The request as plain JSON-able data (``model`` overrides the request's model).

    A non-default effort selection (S24) and the model settings that change the answer (S28)
    are part of what is asked; ``"auto"`` and unset settings add nothing, so fingerprints of
    requests that never selected them stay what they were.
    """
    data: dict[str, Any] = {
        "model": request.model if model is None else model,
        "tool_choice": request.tool_choice,
        "native_tools": list(request.native_tools),
        "max_output_tokens": request.max_output_tokens,
        "temperature": request.temperature,
        "response_format": None
        if request.response_format is None
        else {
            "type": request.response_format.type,
            "schema": request.response_format.schema,
            "name": request.response_format.name,
        },
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in request.tools
        ],
        "messages": [_normalize_message(m) for m in request.messages],
    }
    if request.effort != "auto":
        data["effort"] = request.effort
    # S28: settings that change the answer are part of what is asked; none set adds nothing
    # (temperature and the output cap are above). The timeout does not change the answer.
    sampling = {
        name: list(value) if isinstance(value, tuple) else value
        for name in _ASKED
        if (value := getattr(request.settings, name)) is not None
    }
    extra = request.settings.extra
    if extra:
        sampling["extra"] = {key: dict(body) for key, body in extra.items()}
    if sampling:
        data["settings"] = sampling
    return data


def request_fingerprint(request: ChatRequest, *, model: str | None = None) -> str:
    """SHA-256 of :func:`normalize_request` (``model`` overrides the request's model)."""
    text = json.dumps(
        normalize_request(request, model=model),
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()
