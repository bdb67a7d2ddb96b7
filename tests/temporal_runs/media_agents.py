"""Agents for the media and typed-result tests on Temporal (issue 26), by name (``AGENTS``).

Each provider answers from the request alone, and reports what the vendor would have been sent
— the count, sizes and digests of the media parts — so a test reads off the reply whether the
full bytes arrived. ``CALLS`` counts the model calls made in this process.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import AsyncIterator

import robota
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream
from temporal_runs import agents as _registered  # noqa: F401 - registers rule-model

CALLS: list[str] = []


def png(size: int, width: int = 1280, height: int = 800) -> bytes:
    """``size`` bytes that start like a ``width`` × ``height`` PNG (deterministic)."""
    header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + struct.pack(">II", width, height)
    body = bytes(range(256)) * (size // 256 + 1)
    return (header + body)[:size]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _media(message: robota.Message) -> list[robota.ImagePart]:
    parts: list[object] = []
    if isinstance(message, robota.ToolMessage):
        parts += message.parts
    elif isinstance(message, robota.UserMessage) and not isinstance(message.content, str):
        parts += [p for p in message.content if not isinstance(p, robota.TextPart)]
    return [p for p in parts if isinstance(p, robota.ImagePart)]


class _Probe(robota.Provider):
    @property
    def name(self) -> str:
        return "rules"

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    def report(self, request: ChatRequest) -> str:
        seen = [
            f"{len(p.data or b'')}:{digest(p.data or b'')}"
            for m in request.messages
            for p in _media(m)
        ]
        return f"media {len(seen)} {' '.join(seen)}".strip()

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        CALLS.append(type(self).__name__)
        results = [m for m in request.messages if isinstance(m, robota.ToolMessage)]
        if request.tools and not results:
            user = next(m for m in request.messages if isinstance(m, robota.UserMessage))
            text = (
                user.content
                if isinstance(user.content, str)
                else next(p.text for p in user.content if isinstance(p, robota.TextPart))
            )
            arguments = json.dumps({"size": int(text) if text.isdigit() else 200_000})
            yield robota.ToolCallReady(robota.ToolCall("c0", request.tools[0].name, arguments))
        else:
            yield robota.TextDelta(self.report(request))
        yield robota.ResponseDone(model="rule-model")


@robota.tool
async def screenshot(size: int) -> robota.ToolResult:
    """Take a screenshot of ``size`` bytes.

    Args:
        size: How many bytes.
    """
    return robota.ToolResult(
        "the screen", parts=(robota.ImagePart(data=png(size), media_type="image/png"),)
    )


@robota.tool
async def text_bulk(size: int) -> str:
    """Return ``size`` bytes of text.

    Args:
        size: How many bytes.
    """
    return "x" * size


def snapper() -> robota.Agent:
    return robota.Agent(provider=_Probe(), model="rule-model", tools=[screenshot], name="snapper")


def viewer() -> robota.Agent:
    return robota.Agent(provider=_Probe(), model="rule-model", name="viewer")


def bulky_viewer() -> robota.Agent:
    return robota.Agent(provider=_Probe(), model="roomy-model", tools=[text_bulk], name="bulky")


class _Typed(_Probe):
    """A structured reply: invalid on the first attempt, valid once feedback is in."""

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        CALLS.append("typed")
        retried = any(isinstance(m, robota.AssistantMessage) for m in request.messages)
        yield robota.TextDelta(
            json.dumps({"city": "Paris", "population": 2_100_000}) if retried else "Paris, I think"
        )
        yield robota.ResponseDone(model="rule-model")


def typed() -> robota.Agent:
    return robota.Agent(provider=_Typed(), model="rule-model", name="typed")


AGENTS = {"snapper": snapper, "viewer": viewer, "bulky": bulky_viewer, "typed": typed}
