"""Robota's stream events as the Vercel AI SDK UI message stream (what ``useChat`` reads).

Written from the AI SDK's published stream-protocol page: an SSE stream (header
``x-vercel-ai-ui-message-stream: v1``) whose ``data:`` lines are JSON parts, ending with the
line ``data: [DONE]``. One :class:`VercelTranslator` per run produces, in order:

* ``start`` (``messageId``: the run id), then per model round ``start-step`` … ``finish-step``;
* text: ``text-start`` / ``text-delta`` (``delta``) / ``text-end``, sharing an ``id``;
* tools: ``tool-input-start`` (``toolCallId``, ``toolName``), ``tool-input-delta``
  (``inputTextDelta``: the JSON arguments), ``tool-input-available`` (``input``: the parsed
  arguments); then ``tool-output-available`` (``output``) or ``tool-output-error``
  (``errorText``) for a failed or refused call;
* ``data-permission-request`` (``id``: the ask id, ``data``: tool, arguments, reason) for an
  ask waiting for a POST, and ``data-retry`` when a failed model call is tried again;
* ``finish`` (``messageMetadata``: status, usage, cost) or ``error`` (``errorText``: a
  generic message and its code), then ``[DONE]``.

A sub-agent's own events (:class:`~robota.SubagentEvent`) are not forwarded yet; its tool call
and result are.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any, assert_never, final

from robota import (
    MessageCommitted,
    OutsideRequest,
    RetryStarted,
    RoundStarted,
    RunEvent,
    RunResult,
    SubagentEvent,
    TextDelta,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
)
from robota.serve._buffer import text_encoder
from robota.serve._summary import result_summary

__all__ = ["DONE", "UI_MESSAGE_STREAM_HEADER", "VercelTranslator"]

DONE = "[DONE]"
"""The last ``data:`` line of a UI message stream."""

UI_MESSAGE_STREAM_HEADER = ("x-vercel-ai-ui-message-stream", "v1")
"""The response header that says the body is a UI message stream."""


def _part(part: dict[str, object]) -> str:
    return json.dumps(part, ensure_ascii=False, separators=(",", ":"))


def _parsed_arguments(arguments: str) -> object:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments  # the model's malformed JSON, shown as it came


@final
class VercelTranslator:
    """Translates one run's events to UI message stream parts (see the module docstring)."""

    __slots__ = ("_in_step", "_run_id", "_started_calls", "_text_id", "text_encoder")

    waits_for_answers = True

    def __init__(self, run_id: str) -> None:
        self._run_id = run_id
        self._text_id: str | None = None
        self._in_step = False
        self._started_calls: set[str] = set()
        self.text_encoder: Callable[[str], str] | None = None
        """Encodes a text's ``text-delta`` part while a text is open (else ``None``)."""

    def start(self) -> list[str]:
        """``start`` with the run id as the message id."""
        return [_part({"type": "start", "messageId": self._run_id})]

    def _close_text(self) -> list[str]:
        if self._text_id is None:
            return []
        text_id, self._text_id = self._text_id, None
        self.text_encoder = None
        return [_part({"type": "text-end", "id": text_id})]

    def _close_step(self) -> list[str]:
        out = self._close_text()
        if self._in_step:
            self._in_step = False
            out.append(_part({"type": "finish-step"}))
        return out

    def _open_step(self) -> list[str]:
        if self._in_step:
            return []
        self._in_step = True
        return [_part({"type": "start-step"})]

    def _call_parts(self, call: ToolCall) -> list[str]:
        if call.id in self._started_calls:
            return []
        self._started_calls.add(call.id)
        out = self._open_step() + self._close_text()
        out.append(
            _part({"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name})
        )
        if call.arguments:
            out.append(
                _part(
                    {
                        "type": "tool-input-delta",
                        "toolCallId": call.id,
                        "inputTextDelta": call.arguments,
                    }
                )
            )
        out.append(
            _part(
                {
                    "type": "tool-input-available",
                    "toolCallId": call.id,
                    "toolName": call.name,
                    "input": _parsed_arguments(call.arguments),
                }
            )
        )
        return out

    def open_text(self) -> tuple[list[str], Callable[[str], str]]:
        """The parts that open a text (none when one is open) and its delta encoder.

        The encoder writes one ``text-delta`` part with one ``json.dumps`` after a prefix made
        once per text (the hot path of a served stream, issue 31).
        """
        out = self._open_step()
        if self._text_id is None or self.text_encoder is None:
            self._text_id = f"text-{uuid.uuid4().hex}"
            out.append(_part({"type": "text-start", "id": self._text_id}))
            self.text_encoder = text_encoder({"type": "text-delta", "id": self._text_id})
        return out, self.text_encoder

    def event(self, event: RunEvent) -> list[str]:
        """The parts for one robota stream event (often none)."""
        if isinstance(event, TextDelta):
            if not event.text:
                return []
            out, encode = self.open_text()
            out.append(encode(event.text))
            return out
        if isinstance(event, ToolCallStarted):
            return self._call_parts(event.call)
        if isinstance(event, ToolCallFinished):
            out = self._call_parts(event.call)
            if event.is_error or event.status != "completed":
                part: dict[str, object] = {
                    "type": "tool-output-error",
                    "toolCallId": event.call.id,
                    "errorText": event.content,
                }
            else:
                part = {
                    "type": "tool-output-available",
                    "toolCallId": event.call.id,
                    "output": event.content,
                }
            out.append(_part(part))
            return out
        if isinstance(event, RoundStarted):
            return self._close_step() + self._open_step()
        if isinstance(event, RetryStarted):
            out = self._close_text()
            data = {"round": event.round, "attempt": event.attempt, "discarded": event.discarded}
            out.append(_part({"type": "data-retry", "data": data, "transient": True}))
            return out
        if isinstance(event, MessageCommitted | SubagentEvent):
            return []
        assert_never(event)

    def permission(self, ask_id: str, tool: str, arguments: object, reason: str) -> list[str]:
        """A ``data-permission-request`` part for an ask waiting for an answer."""
        data = {"tool": tool, "arguments": arguments, "reason": reason}
        out = self._close_text()
        out.append(_part({"type": "data-permission-request", "id": ask_id, "data": data}))
        return out

    def outside_request(self, request: OutsideRequest) -> list[str]:
        """A ``data-outside-request`` part for a tool's waiting request (S40)."""
        data = {"kind": request.kind, "payload": request.payload, "tool": request.tool_name}
        out = self._close_text()
        out.append(_part({"type": "data-outside-request", "id": request.id, "data": data}))
        return out

    def finish(self, result: RunResult[Any]) -> list[str]:
        """Close the open text and step, then ``finish`` with the run's summary as metadata."""
        out = self._close_step()
        out.append(_part({"type": "finish", "messageMetadata": result_summary(result)}))
        return out

    def fail(self, code: str, message: str) -> list[str]:
        """Close the open text and step, then ``error`` with a generic message and its code."""
        out = self._close_step()
        out.append(_part({"type": "error", "errorText": f"{message} ({code})"}))
        return out

    def done(self) -> list[str]:
        """The ``[DONE]`` line that ends a UI message stream."""
        return [DONE]
