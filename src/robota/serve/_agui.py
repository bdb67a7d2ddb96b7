"""Robota's stream events as AG-UI events (the ``ag-ui-protocol`` package's models).

One :class:`AguiTranslator` per run turns :class:`~robota.RunEvent` values into AG-UI events,
each built as the package's own pydantic model (so a field the protocol does not have cannot
be written) and encoded as the JSON text of one SSE ``data:`` line:

* the run: ``RUN_STARTED`` first; ``RUN_FINISHED`` (``result``: status, text, usage, cost;
  ``outcome`` ``cancelled`` for an interrupted run) or ``RUN_ERROR`` (a generic message and a
  code) last — a run suspended waiting for answers (S40) ends with ``outcome`` ``interrupt``,
  one interrupt per waiting request (answer each by POST, or by a run whose ``resume`` entries
  name them);
* text: ``TEXT_MESSAGE_START`` / ``TEXT_MESSAGE_CONTENT`` / ``TEXT_MESSAGE_END``, one message
  per model round;
* tools: ``TOOL_CALL_START`` / ``TOOL_CALL_ARGS`` / ``TOOL_CALL_END`` when the call is known,
  ``TOOL_CALL_RESULT`` when it has its result (a refused call gets the first three then too);
* state: ``STATE_SNAPSHOT`` echoes the ``state`` the client sent, kept with the session;
* ``CUSTOM`` events: ``robota.retry`` (a failed model call is tried again; text streamed since
  the round began is discarded), ``robota.permission_request`` (an ask waiting for a POST) and
  ``robota.outside_request`` (a tool's request for an outside response, S40).

A sub-agent's own events (:class:`~robota.SubagentEvent`) are not forwarded yet; its tool call
and result are.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any, assert_never, final

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from pydantic_core import PydanticSerializationError

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

__all__ = ["AguiTranslator"]


def _encode(event: BaseEvent) -> str:
    try:
        return event.model_dump_json(by_alias=True, exclude_none=True)
    except PydanticSerializationError:
        # A lone surrogate (a model's text, a tool's argument) is no UTF-8: pydantic refuses
        # it; json keeps it, and the stream writer escapes it (_buffer.wire_bytes).
        fields = event.model_dump(mode="python", by_alias=True, exclude_none=True)
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":"), default=str)


@final
class AguiTranslator:
    """Translates one run's events to encoded AG-UI events (see the module docstring)."""

    __slots__ = (
        "_message_id",
        "_run_id",
        "_started_calls",
        "_state",
        "_thread_id",
        "text_encoder",
    )

    waits_for_answers = False

    def __init__(self, thread_id: str, run_id: str, state: Any = None) -> None:
        self._thread_id = thread_id
        self._run_id = run_id
        self._state = state
        self._message_id: str | None = None
        self._started_calls: set[str] = set()
        self.text_encoder: Callable[[str], str] | None = None
        """Encodes a ``TEXT_MESSAGE_CONTENT`` event while a message is open (else ``None``)."""

    def start(self) -> list[str]:
        """``RUN_STARTED``, then the session's state when the client keeps one."""
        out = [_encode(RunStartedEvent(thread_id=self._thread_id, run_id=self._run_id))]
        if self._state is not None:
            out.append(_encode(StateSnapshotEvent(snapshot=self._state)))
        return out

    def _close_text(self) -> list[str]:
        if self._message_id is None:
            return []
        message_id, self._message_id = self._message_id, None
        self.text_encoder = None
        return [_encode(TextMessageEndEvent(message_id=message_id))]

    def _call_events(self, call: ToolCall) -> list[str]:
        if call.id in self._started_calls:
            return []
        self._started_calls.add(call.id)
        out = self._close_text()
        out.append(_encode(ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name)))
        if call.arguments:
            out.append(_encode(ToolCallArgsEvent(tool_call_id=call.id, delta=call.arguments)))
        out.append(_encode(ToolCallEndEvent(tool_call_id=call.id)))
        return out

    def open_text(self) -> tuple[list[str], Callable[[str], str]]:
        """``TEXT_MESSAGE_START`` when no message is open, and the message's delta encoder.

        The encoder writes a ``TEXT_MESSAGE_CONTENT`` event with one ``json.dumps`` after a
        prefix made once per message — not a pydantic model per token (issue 31); the tests
        validate every emitted event against the package's models. ``text`` must not be empty.
        """
        out: list[str] = []
        if self._message_id is None or self.text_encoder is None:
            self._message_id = f"msg-{uuid.uuid4().hex}"
            out.append(
                _encode(TextMessageStartEvent(message_id=self._message_id, role="assistant"))
            )
            self.text_encoder = text_encoder(
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": self._message_id}
            )
        return out, self.text_encoder

    def event(self, event: RunEvent) -> list[str]:
        """The AG-UI events for one robota stream event (often none)."""
        if isinstance(event, TextDelta):
            if not event.text:
                return []
            out, encode = self.open_text()
            out.append(encode(event.text))
            return out
        if isinstance(event, ToolCallStarted):
            return self._call_events(event.call)
        if isinstance(event, ToolCallFinished):
            out = self._call_events(event.call)
            out.append(
                _encode(
                    ToolCallResultEvent(
                        message_id=f"tool-{uuid.uuid4().hex}",
                        tool_call_id=event.call.id,
                        content=event.content,
                        role="tool",
                    )
                )
            )
            return out
        if isinstance(event, RoundStarted):
            return self._close_text()
        if isinstance(event, RetryStarted):
            out = self._close_text()
            value = {"round": event.round, "attempt": event.attempt, "discarded": event.discarded}
            out.append(_encode(CustomEvent(name="robota.retry", value=value)))
            return out
        if isinstance(event, MessageCommitted | SubagentEvent):
            return []
        assert_never(event)

    def permission(self, ask_id: str, tool: str, arguments: object, reason: str) -> list[str]:
        """A ``CUSTOM`` ``robota.permission_request`` event for an ask waiting for an answer."""
        value = {"id": ask_id, "tool": tool, "arguments": arguments, "reason": reason}
        out = self._close_text()
        out.append(_encode(CustomEvent(name="robota.permission_request", value=value)))
        return out

    def outside_request(self, request: OutsideRequest) -> list[str]:
        """A ``CUSTOM`` ``robota.outside_request`` event for a tool's waiting request (S40)."""
        value = {
            "id": request.id,
            "kind": request.kind,
            "payload": request.payload,
            "tool": request.tool_name,
        }
        out = self._close_text()
        out.append(_encode(CustomEvent(name="robota.outside_request", value=value)))
        return out

    def finish(self, result: RunResult[Any]) -> list[str]:
        """Close any open message and end with ``RUN_FINISHED`` carrying the run's summary."""
        out = self._close_text()
        finished = RunFinishedEvent(
            thread_id=self._thread_id, run_id=self._run_id, result=result_summary(result)
        )
        outcome: dict[str, object] | None = None
        if result.status == "interrupted":
            outcome = {"type": "cancelled"}
        elif result.status == "suspended" and result.pending_requests:
            outcome = {
                "type": "interrupt",
                "interrupts": [_interrupt(r) for r in result.pending_requests],
            }
        if outcome is not None:
            finished = RunFinishedEvent.model_validate(
                {
                    "threadId": self._thread_id,
                    "runId": self._run_id,
                    "result": result_summary(result),
                    "outcome": outcome,
                }
            )
        out.append(_encode(finished))
        return out

    def fail(self, code: str, message: str) -> list[str]:
        """Close any open message and end with ``RUN_ERROR`` (a generic message and a code)."""
        out = self._close_text()
        out.append(_encode(RunErrorEvent(message=message, code=code)))
        return out

    def done(self) -> list[str]:
        """Nothing: an AG-UI stream ends with its last event."""
        return []


_APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "reason": {"type": "string"},
        "remember": {"type": "boolean"},
    },
    "required": ["approved"],
}


def _interrupt(request: OutsideRequest) -> dict[str, object]:
    # An ask (robota.serve's approval kind) says what it asks and how to answer it.
    payload = request.payload
    interrupt: dict[str, object] = {
        "id": request.id,
        "reason": request.kind,
        "metadata": {"tool": request.tool_name, "payload": payload},
    }
    if request.kind == "robota.approval" and isinstance(payload, dict):
        reason = payload.get("reason")
        interrupt["message"] = reason if isinstance(reason, str) else None
        interrupt["responseSchema"] = _APPROVAL_SCHEMA
    return interrupt
