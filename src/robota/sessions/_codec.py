"""The session entry codec: the text every store keeps, and its compact form (issue 27).

:func:`encode_session_entry` writes format 2; :func:`decode_session_entry` reads format 2 and
format 1 (``robota.sessions._codec_v1``), and refuses a newer one. Format 1 wrote every entry
and message as a JSON object with its field names; loading a long
session spent most of its time on those objects and on checking every field through a chain
of small functions. Format 2 writes the same values, in the order the dataclasses declare them,
as arrays:

* an entry: ``[2, kind, field, …]`` — e.g. ``[2, "turn_saved", turn, status, usage, cost,
  execution_id, at, error, [message, …]]``;
* a message: ``[code, content, id, created_at, …]`` with ``code`` ``"u"`` (user), ``"s"``
  (system), ``"a"`` (assistant: then tool calls ``[[id, name, arguments], …]``, state, model,
  usage, continuation) or ``"t"`` (tool: then tool call id, tool name, is_error, media parts or
  ``null``);
* content: a string as is, or parts as :func:`~robota.core.payloads.encode_content` writes them
  (bytes as base64), so media round-trip without loss;
* usage: :func:`~robota.core.payloads.encode_usage`'s array, or ``null``.

The decoder checks each value's type where it reads it (``type(x) is str``, no helper calls),
so a damaged entry is still refused (``session_entry_damaged``) while a sound one costs one
``json.loads`` and one constructor call per value.
"""

from __future__ import annotations

import json
import json.scanner
from typing import Any, Final

from robota.core import (
    AssistantMessage,
    Message,
    StorageError,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from robota.core.payloads import decode_content, encode_content, encode_usage, tool_parts
from robota.sessions._codec_v1 import V1_KINDS
from robota.sessions._records import (
    Compacted,
    CompactionStarted,
    MetadataSet,
    Rewound,
    SessionEntry,
    TurnSaved,
    TurnStarted,
)

__all__ = ["ENTRY_FORMAT_VERSION", "decode_session_entry", "encode_session_entry"]

ENTRY_FORMAT_VERSION: Final = 2
"""The format written into every encoded entry; a reader refuses a newer one (1: objects with
named fields; 2: compact arrays, issue 27)."""

_STATUSES: Final = frozenset(("complete", "interrupted", "failed", "abandoned"))
_TRIGGERS: Final = frozenset(("auto", "manual"))
_SOURCES: Final = frozenset(("model", "summarizer", "hook"))
_STATES: Final = frozenset(("complete", "interrupted"))
_NUMBER: Final = (int, float)


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


# The encoder refuses NaN and infinities (allow_nan=False); the reader refuses them too.
_DECODER: Final = json.JSONDecoder(parse_constant=_not_a_number)
# The decoder's scanner, called directly: json.loads's two wrapper calls were a tenth of a
# long session's load. A text it does not take whole (surrounding whitespace, damage) goes
# through the decoder itself, for its answer or its error.
# (JSONDecoder builds its own scanner this way; typeshed types the argument as a scanner.)
_SCAN: Final = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]


def encode_session_entry(entry: SessionEntry) -> str:
    """``entry`` as versioned JSON text (format 2, see the module doc), the form every store keeps.

    Raises:
        ValueError: a value that is not JSON (a NaN cost, …): nothing is stored.
    """
    data: list[Any]
    if isinstance(entry, TurnSaved):
        data = [
            ENTRY_FORMAT_VERSION,
            entry.kind,
            entry.turn,
            entry.status,
            encode_usage(entry.usage),
            entry.cost,
            entry.execution_id,
            entry.at,
            entry.error,
            [_message(m) for m in entry.messages],
        ]
    elif isinstance(entry, TurnStarted):
        data = [2, entry.kind, entry.turn, entry.execution_id, entry.system_prompt, entry.at]
    elif isinstance(entry, Rewound):
        data = [2, entry.kind, entry.to, entry.at]
    elif isinstance(entry, MetadataSet):
        data = [2, entry.kind, entry.title, entry.user_id, list(entry.tags), entry.at]
    elif isinstance(entry, CompactionStarted):
        data = [
            2,
            entry.kind,
            entry.number,
            entry.execution_id,
            entry.upto,
            entry.instruction,
            entry.custom_instructions,
            entry.trigger,
            entry.at,
        ]
    else:
        data = [
            2,
            entry.kind,
            entry.number,
            entry.upto,
            entry.active_turns,
            entry.summary,
            entry.header,
            entry.source,
            entry.trigger,
            encode_usage(entry.usage),
            entry.cost,
            entry.execution_id,
            entry.at,
        ]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _message(message: Message) -> list[Any]:
    content = message.content if type(message.content) is str else encode_content(message.content)
    if isinstance(message, AssistantMessage):
        return [
            "a",
            content,
            message.id,
            message.created_at,
            [[c.id, c.name, c.arguments] for c in message.tool_calls],
            message.state,
            message.model,
            encode_usage(message.usage),
            message.continuation,
        ]
    if isinstance(message, UserMessage):
        return ["u", content, message.id, message.created_at]
    if isinstance(message, ToolMessage):
        parts = encode_content(message.parts) if message.parts else None
        return [
            "t",
            content,
            message.id,
            message.created_at,
            message.tool_call_id,
            message.tool_name,
            message.is_error,
            parts,
        ]
    return ["s", content, message.id, message.created_at]


def decode_session_entry(text: str) -> SessionEntry:
    """The entry :func:`encode_session_entry` wrote (format 2), or a format-1 entry.

    Raises:
        StorageError: damaged text (code ``session_entry_damaged``), or an entry written by a
            newer robota (code ``session_entry_unknown``: upgrade robota to read it).
    """
    try:
        try:
            data, end = _SCAN(text, 0)
            if end != len(text):
                raise ValueError("more than one value")
        except (StopIteration, ValueError):
            data = _DECODER.decode(text)
        if type(data) is list and data and data[0] == ENTRY_FORMAT_VERSION:
            return _decode(data)
        if type(data) is dict:
            version, kind = data.get("v"), data.get("kind")
            if version == 1 and kind in V1_KINDS:
                return V1_KINDS[kind](data)
        else:
            version = data[0] if type(data) is list and data else None
            kind = data[1] if type(data) is list and len(data) > 1 else None
        if type(version) is not int or version < 1 or kind is None:
            raise TypeError("not a session entry")
        raise StorageError(
            f"a session entry of kind {kind!r}, format {version!r}, was written by a newer "
            "robota; upgrade robota to read this session",
            code="session_entry_unknown",
        )
    except StorageError:
        raise
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise StorageError(
            f"a session entry is damaged ({exc}); the store was changed outside robota",
            code="session_entry_damaged",
            cause=exc,
        ) from exc


def _decode(data: list[Any]) -> SessionEntry:
    kind = data[1]
    if kind == "turn_saved":
        _, _, turn, status, usage, cost, execution_id, at, error, messages = data
        if status not in _STATUSES:
            raise ValueError(f"unknown turn status {status!r}")
        if type(turn) is not int or turn < 0 or type(error) is not str:
            raise TypeError("a damaged turn")
        total = _usage(usage) or Usage()
        return TurnSaved(
            turn,
            status,
            tuple([_decode_message(m, usage, total) for m in messages]),
            total,
            _opt_time(cost),
            _opt_text(execution_id),
            _time(at),
            error,
        )
    if kind == "turn_started":
        _, _, turn, execution_id, system_prompt, at = data
        return TurnStarted(_count(turn), _text(execution_id), _opt_text(system_prompt), _time(at))
    if kind == "rewound":
        _, _, to, at = data
        return Rewound(_count(to), _time(at))
    if kind == "metadata":
        _, _, title, user_id, tags, at = data
        return MetadataSet(
            _opt_text(title), _opt_text(user_id), tuple([_text(t) for t in tags]), _time(at)
        )
    if kind == "compaction_started":
        _, _, number, execution_id, upto, instruction, custom, trigger, at = data
        if trigger not in _TRIGGERS:
            raise ValueError(f"unknown compaction trigger {trigger!r}")
        return CompactionStarted(
            _count(number),
            _text(execution_id),
            _count(upto),
            _text(instruction),
            _text(custom),
            trigger,
            _time(at),
        )
    if kind == "compacted":
        (_, _, number, upto, active, summary, header, source, trigger, usage, cost, eid, at) = data
        if trigger not in _TRIGGERS or source not in _SOURCES:
            raise ValueError(f"unknown compaction trigger {trigger!r} or source {source!r}")
        return Compacted(
            _count(number),
            _count(upto),
            _count(active),
            _text(summary),
            _text(header),
            source,
            trigger,
            _usage(usage) or Usage(),
            _opt_time(cost),
            _opt_text(eid),
            _time(at),
        )
    raise StorageError(
        f"a session entry of kind {kind!r} was written by a newer robota; upgrade robota to "
        "read this session",
        code="session_entry_unknown",
    )


def _decode_message(data: list[Any], turn_raw: Any, turn_usage: Usage) -> Message:
    # A one-round turn's reply reports the turn's usage: that reply shares the turn's (frozen)
    # Usage instead of building an equal one.
    code = data[0]
    content, message_id, created_at = data[1], data[2], data[3]
    if type(message_id) is not str or type(created_at) not in _NUMBER:
        raise TypeError("a damaged message id or time")
    if code == "a":
        _, _, _, _, calls, state, model, usage, continuation = data
        if type(content) is not str or state not in _STATES:
            raise TypeError("a damaged assistant message")
        if type(model) is not str and model is not None:
            raise TypeError("a damaged model name")
        if type(continuation) is not str and continuation is not None:
            raise TypeError("a damaged continuation")
        return AssistantMessage(
            content,
            tool_calls=tuple([_call(c) for c in calls]) if calls else (),
            state=state,
            model=model,
            usage=turn_usage if usage == turn_raw and usage is not None else _usage(usage),
            continuation=continuation,
            id=message_id,
            created_at=created_at,
        )
    if code == "u":
        if type(content) is not str:
            content = decode_content(content)  # parts: checked by UserMessage
        return UserMessage(content, id=message_id, created_at=created_at)
    if type(content) is not str:
        raise TypeError("a damaged message content")
    if code == "t":
        _, _, _, _, call_id, name, is_error, parts = data
        if type(call_id) is not str or type(name) is not str or type(is_error) is not bool:
            raise TypeError("a damaged tool result")
        return ToolMessage(
            content,
            tool_call_id=call_id,
            tool_name=name,
            is_error=is_error,
            parts=() if parts is None else tool_parts(decode_content(parts), "a stored result"),
            id=message_id,
            created_at=created_at,
        )
    if code == "s":
        return SystemMessage(content, id=message_id, created_at=created_at)
    raise ValueError(f"unknown message kind {code!r}")


def _call(data: list[Any]) -> ToolCall:
    call_id, name, arguments = data
    if type(call_id) is not str or type(name) is not str or type(arguments) is not str:
        raise TypeError("a damaged tool call")
    return ToolCall(call_id, name, arguments)


def _usage(data: Any) -> Usage | None:
    if data is None:
        return None
    p, c, t, cache, partial, reasoning = data
    if (
        type(p) is not int
        or type(c) is not int
        or type(t) is not int
        or type(partial) is not bool
        or (cache is not None and type(cache) is not int)
        or (reasoning is not None and type(reasoning) is not int)
    ):
        raise TypeError(f"a damaged usage {data!r}")
    return Usage(p, c, t, cache, partial, reasoning)


def _text(value: Any) -> str:
    if type(value) is not str:
        raise TypeError(f"expected text, got {value!r}")
    return value


def _opt_text(value: Any) -> str | None:
    if value is not None and type(value) is not str:
        raise TypeError(f"expected text, got {value!r}")
    return value


def _count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise TypeError(f"expected a non-negative integer, got {value!r}")
    return value


def _time(value: Any) -> float:
    if type(value) not in _NUMBER:
        raise TypeError(f"expected a time, got {value!r}")
    return float(value)


def _opt_time(value: Any) -> float | None:
    return None if value is None else _time(value)
