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

A sub-agent's own events (an agent called as a tool, :class:`~robota.SubagentEvent`) are
forwarded attributed to it: ``SUBAGENT_STARTED`` (``subagentRunId`` is the minted id of the
tool call that runs it, ``name`` its path, ``parentToolCallId`` that call,
``parentSubagentRunId`` the sub-agent that made the call, for a grandchild) before its first
event, then its text messages and tool calls carrying its ``subagentRunId``, and
``SUBAGENT_FINISHED`` when the call that runs it has its result.
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
    SubagentFinishedEvent,
    SubagentStartedEvent,
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
        "_calls",
        "_message_id",
        "_owners",
        "_run_id",
        "_state",
        "_sub_messages",
        "_thread_id",
        "text_encoder",
    )

    waits_for_answers = False

    def __init__(self, thread_id: str, run_id: str, state: Any = None) -> None:
        self._thread_id = thread_id
        self._run_id = run_id
        self._state = state
        self._message_id: str | None = None
        # Each call's AG-UI id and minted id, by (the sub-run that made it, the provider's id)
        # — None: this run's own; the sub-run and AG-UI id of each call by its minted id; and
        # each running sub-run's open text message (None: none open). Sub-agents: issue 29.
        self._calls: dict[tuple[str | None, str], tuple[str, str | None]] = {}
        self._owners: dict[str, tuple[str | None, str]] = {}
        # A sub-run's open message: its id and its TEXT_MESSAGE_CONTENT encoder (else None).
        self._sub_messages: dict[str, tuple[str, Callable[[str], str]] | None] = {}
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

    def _call_events(
        self, call: ToolCall, sub: str | None = None, minted: str | None = None
    ) -> list[str]:
        key = (sub, call.id)
        if key in self._calls:
            return []
        # This run's own calls keep the provider's id; a sub-agent's get their minted id
        # (S36), as two agents' providers may both say "call_0".
        call_id = call.id if sub is None else (minted or f"{sub}/{call.id}")
        self._calls[key] = (call_id, minted)
        if minted is not None:
            self._owners[minted] = (sub, call_id)
        out = self._close_text() if sub is None else self._close_sub_text(sub)
        out.append(
            _encode(
                ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=call.name, subagent_run_id=sub
                )
            )
        )
        if call.arguments:
            out.append(
                _encode(
                    ToolCallArgsEvent(
                        tool_call_id=call_id, delta=call.arguments, subagent_run_id=sub
                    )
                )
            )
        out.append(_encode(ToolCallEndEvent(tool_call_id=call_id, subagent_run_id=sub)))
        return out

    def _result_event(self, event: ToolCallFinished, sub: str | None = None) -> list[str]:
        out = self._call_events(event.call, sub)
        call_id, minted = self._calls[(sub, event.call.id)]
        out.append(
            _encode(
                ToolCallResultEvent(
                    message_id=f"tool-{uuid.uuid4().hex}",
                    tool_call_id=call_id,
                    content=event.content,
                    role="tool",
                    subagent_run_id=sub,
                )
            )
        )
        if minted is not None and minted in self._sub_messages:
            # The call that ran a sub-agent has its result: that sub-run is over.
            out.extend(self._close_sub_text(minted))
            del self._sub_messages[minted]
            out.append(_encode(SubagentFinishedEvent(subagent_run_id=minted)))
        return out

    def _close_sub_text(self, sub: str) -> list[str]:
        message = self._sub_messages.get(sub)
        if message is None:
            return []
        self._sub_messages[sub] = None
        return [_encode(TextMessageEndEvent(message_id=message[0], subagent_run_id=sub))]

    def _subagent(self, wrapped: SubagentEvent) -> list[str]:
        """A sub-agent's event, attributed to its sub-run (announced on its first event)."""
        sub = wrapped.call_id  # the minted id of the call that runs it: unique in the run
        out: list[str] = []
        if sub not in self._sub_messages:
            self._sub_messages[sub] = None
            owner, parent_call = self._owners.get(sub, (None, sub))
            out.extend(self._close_text() if owner is None else self._close_sub_text(owner))
            started = SubagentStartedEvent(
                subagent_run_id=sub,
                name=wrapped.agent,
                parent_tool_call_id=parent_call,
                parent_subagent_run_id=owner,
            )
            out.append(_encode(started))
        event = wrapped.event
        if isinstance(event, TextDelta):
            if event.text:
                message = self._sub_messages[sub]
                if message is None:
                    message_id = f"msg-{uuid.uuid4().hex}"
                    fields = {"type": "TEXT_MESSAGE_CONTENT", "subagentRunId": sub}
                    encode = text_encoder({**fields, "messageId": message_id})
                    message = self._sub_messages[sub] = (message_id, encode)
                    opened = TextMessageStartEvent(
                        message_id=message_id, role="assistant", subagent_run_id=sub
                    )
                    out.append(_encode(opened))
                out.append(message[1](event.text))  # per token: no model object (issue 31)
        elif isinstance(event, ToolCallStarted):
            out.extend(self._call_events(event.call, sub, event.call_id))
        elif isinstance(event, ToolCallFinished):
            out.extend(self._result_event(event, sub))
        elif isinstance(event, RoundStarted | RetryStarted):
            out.extend(self._close_sub_text(sub))
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
            return self._call_events(event.call, None, event.call_id)
        if isinstance(event, ToolCallFinished):
            return self._result_event(event)
        if isinstance(event, RoundStarted):
            return self._close_text()
        if isinstance(event, RetryStarted):
            out = self._close_text()
            value = {"round": event.round, "attempt": event.attempt, "discarded": event.discarded}
            out.append(_encode(CustomEvent(name="robota.retry", value=value)))
            return out
        if isinstance(event, SubagentEvent):
            return self._subagent(event)
        if isinstance(event, MessageCommitted):
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
        fields: dict[str, object] = {
            "threadId": self._thread_id,
            "runId": self._run_id,
            "result": result_summary(result),
        }
        if result.status == "interrupted":
            fields["outcome"] = {"type": "cancelled"}
        elif result.status == "suspended" and result.pending_requests:
            fields["outcome"] = {
                "type": "interrupt",
                "interrupts": [_interrupt(r) for r in result.pending_requests],
            }
        out.append(_encode(RunFinishedEvent.model_validate(fields)))
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
