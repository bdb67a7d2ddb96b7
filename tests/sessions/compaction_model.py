"""A model for compaction trials that answers from the conversation it is sent.

* A request whose system prompt is the compaction instruction (no tools offered) is a summary
  call: it answers ``"summary <n>"`` (n counts the summary calls this model answered).
* Otherwise a user turn first gets one call of the ``lookup`` tool (when tools are offered),
  then, after the tool's result, ``"answer <label>"`` where ``label`` is the user input's first
  word.

Every answer reports usage (the request's estimated tokens as the prompt). ``calls`` records
each request's kind (``"summary"``, ``"tool"``, ``"answer"``); ``on_call`` runs before an answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import robota
from robota import (
    ChatRequest,
    ResponseDone,
    StreamEvent,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolMessage,
    Usage,
    UserMessage,
    estimate_message_tokens,
)
from robota.sessions import DEFAULT_COMPACTION_INSTRUCTION

FILLER = "lorem ipsum dolor sit amet " * 60  # about 400 tokens by core's estimate


class CompactionModel(robota.Provider):
    """See the module docstring."""

    def __init__(self, on_call: Callable[[str], None] | None = None) -> None:
        self.calls: list[str] = []
        self.requests: list[ChatRequest] = []
        self._on_call = on_call

    @property
    def name(self) -> str:
        return "compaction-model"

    async def chat(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> robota.ChatResponse:
        return await robota.collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        messages = request.messages
        prompt = sum(estimate_message_tokens(m) for m in messages)
        usage = Usage.from_counts(prompt=prompt, completion=5)
        head = messages[0] if messages else None
        if isinstance(head, SystemMessage) and head.content == DEFAULT_COMPACTION_INSTRUCTION:
            kind, event = "summary", TextDelta(f"summary {self.calls.count('summary') + 1}")
        else:
            last_user = [m for m in messages if isinstance(m, UserMessage)][-1]
            label = str(last_user.content).split(" ", 1)[0]
            answered = any(
                isinstance(m, ToolMessage) for m in messages[messages.index(last_user) :]
            )
            if answered or not request.tools:
                kind, event = "answer", TextDelta(f"answer {label}")
            else:
                call = ToolCall(f"call_{len(self.calls)}", "lookup", json.dumps({"q": label}))
                kind, event = "tool", ToolCallReady(call)
        self.calls.append(kind)
        if self._on_call is not None:
            self._on_call(kind)
        yield event
        yield ResponseDone(model=request.model, usage=usage)


@robota.tool
def lookup(q: str) -> str:
    """Look something up (returns a long text)."""
    return f"result for {q}: {FILLER}"


def pairs_intact(messages: Any) -> bool:
    """Whether every tool call in ``messages`` has its result there, and every result its call."""
    calls = {c.id for m in messages if isinstance(m, robota.AssistantMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return calls == results
