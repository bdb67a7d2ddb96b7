"""Format 1 of the session entry codec: one JSON object per entry, every field named.

Written by robota before issue 27's compact form (``robota.sessions._codec``); kept so a store
holding format-1 entries still opens. Nothing writes it any more, except tests that prove old
logs still read.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from robota.core import Usage
from robota.core.payloads import decode_message, decode_usage, encode_message, encode_usage
from robota.sessions._records import (
    Compacted,
    CompactionStarted,
    CompactionTrigger,
    MetadataSet,
    Rewound,
    SessionEntry,
    TurnSaved,
    TurnStarted,
)

__all__ = ["V1_KINDS", "encode_v1"]

_STATUSES: Final = frozenset(("complete", "interrupted", "failed", "abandoned"))


def encode_v1(entry: SessionEntry) -> str:
    """``entry`` in format 1 (for tests of old logs; robota writes format 2)."""
    data: dict[str, Any] = {"v": 1, "kind": entry.kind}
    if isinstance(entry, TurnStarted):
        data.update(
            turn=entry.turn,
            execution_id=entry.execution_id,
            system_prompt=entry.system_prompt,
            at=entry.at,
        )
    elif isinstance(entry, TurnSaved):
        data.update(
            turn=entry.turn,
            status=entry.status,
            messages=[encode_message(m) for m in entry.messages],
            usage=encode_usage(entry.usage),
            cost=entry.cost,
            execution_id=entry.execution_id,
            at=entry.at,
            error=entry.error,
        )
    elif isinstance(entry, Rewound):
        data.update(to=entry.to, at=entry.at)
    elif isinstance(entry, CompactionStarted):
        data.update(
            number=entry.number,
            execution_id=entry.execution_id,
            upto=entry.upto,
            instruction=entry.instruction,
            custom_instructions=entry.custom_instructions,
            trigger=entry.trigger,
            at=entry.at,
        )
    elif isinstance(entry, Compacted):
        data.update(
            number=entry.number,
            upto=entry.upto,
            active_turns=entry.active_turns,
            summary=entry.summary,
            header=entry.header,
            source=entry.source,
            trigger=entry.trigger,
            usage=encode_usage(entry.usage),
            cost=entry.cost,
            execution_id=entry.execution_id,
            at=entry.at,
        )
    else:
        data.update(title=entry.title, user_id=entry.user_id, tags=list(entry.tags), at=entry.at)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {value!r}")
    return value


def _opt_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"expected a non-negative integer, got {value!r}")
    return value


def _time(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"expected a time, got {value!r}")
    return float(value)


def _started(data: dict[str, Any]) -> SessionEntry:
    return TurnStarted(
        _int(data["turn"]),
        _text(data["execution_id"]),
        _opt_text(data["system_prompt"]),
        _time(data["at"]),
    )


def _saved(data: dict[str, Any]) -> SessionEntry:
    status = data["status"]
    if status not in _STATUSES:
        raise ValueError(f"unknown turn status {status!r}")
    messages = data["messages"]
    if not isinstance(messages, list):
        raise TypeError("messages is not a list")
    cost = data["cost"]
    if cost is not None:
        cost = _time(cost)
    return TurnSaved(
        _int(data["turn"]),
        status,
        tuple(decode_message(m) for m in messages),
        decode_usage(data["usage"]) or Usage(),
        cost,
        _opt_text(data["execution_id"]),
        _time(data["at"]),
        _text(data.get("error", "")),
    )


def _rewound(data: dict[str, Any]) -> SessionEntry:
    return Rewound(_int(data["to"]), _time(data["at"]))


def _metadata(data: dict[str, Any]) -> SessionEntry:
    tags = data["tags"]
    if not isinstance(tags, list):
        raise TypeError("tags is not a list")
    return MetadataSet(
        _opt_text(data["title"]),
        _opt_text(data["user_id"]),
        tuple(_text(t) for t in tags),
        _time(data["at"]),
    )


def _trigger(value: Any) -> CompactionTrigger:
    if value not in ("auto", "manual"):
        raise ValueError(f"unknown compaction trigger {value!r}")
    return value  # type: ignore[no-any-return]


def _compaction_started(data: dict[str, Any]) -> SessionEntry:
    return CompactionStarted(
        _int(data["number"]),
        _text(data["execution_id"]),
        _int(data["upto"]),
        _text(data["instruction"]),
        _text(data["custom_instructions"]),
        _trigger(data["trigger"]),
        _time(data["at"]),
    )


def _compacted(data: dict[str, Any]) -> SessionEntry:
    source = data["source"]
    if source not in ("model", "summarizer", "hook"):
        raise ValueError(f"unknown compaction source {source!r}")
    cost = data["cost"]
    if cost is not None:
        cost = _time(cost)
    return Compacted(
        _int(data["number"]),
        _int(data["upto"]),
        _int(data["active_turns"]),
        _text(data["summary"]),
        _text(data["header"]),
        source,
        _trigger(data["trigger"]),
        decode_usage(data["usage"]) or Usage(),
        cost,
        _opt_text(data["execution_id"]),
        _time(data["at"]),
    )


V1_KINDS: Final = {
    "turn_started": _started,
    "turn_saved": _saved,
    "rewound": _rewound,
    "metadata": _metadata,
    "compaction_started": _compaction_started,
    "compacted": _compacted,
}
