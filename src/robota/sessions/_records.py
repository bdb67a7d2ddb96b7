"""What a session store keeps: a header per session and an append-only log of entries.

A session is its :class:`SessionHeader` (id, creation time, the fork it came from) and an ordered
log of :data:`SessionEntry` values. Nothing in the log is ever changed or removed — a rewind is
an entry, not an erasure, so the store is the session's full record (its audit) — and the
session's state is the fold of the log (``robota.sessions._state``):

* :class:`TurnStarted` — a journaled turn is about to run as execution ``execution_id``; written
  before the run, so a crash leaves the turn *pending* and the next open resumes it (S40).
* :class:`TurnSaved` — a turn's messages, usage and cost, written once when the turn ends; the
  one atomic write that makes a turn part of the conversation.
* :class:`Rewound` — keep only the first ``to`` turns of the active conversation.
* :class:`MetadataSet` — the session's title, user id and tags from here on.
* :class:`CompactionStarted` — a journaled compaction's summary call is about to run (S39, S40);
  a crash leaves it pending and the next turn resumes it instead of repeating the call.
* :class:`Compacted` — the first ``upto`` active turns are replaced, for the model, by a summary
  (S39); the turns themselves stay in the log.

A store never interprets entries: it keeps their text (:func:`encode_session_entry`) in order, so
a new entry kind needs no store change. A reader meeting a kind it
does not know refuses the log (:class:`~robota.StorageError`, code ``session_entry_unknown``)
instead of showing a conversation without it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias, final

from robota.core import Message, StorageError, Usage
from robota.core.payloads import decode_message, decode_usage, encode_message, encode_usage

__all__ = [
    "ENTRY_FORMAT_VERSION",
    "Compacted",
    "CompactionSource",
    "CompactionStarted",
    "CompactionTrigger",
    "MetadataSet",
    "Rewound",
    "SessionEntry",
    "SessionHeader",
    "StoredSession",
    "TurnSaved",
    "TurnStarted",
    "TurnStatus",
    "decode_session_entry",
    "encode_session_entry",
]

ENTRY_FORMAT_VERSION: Final = 1
"""The version written into every encoded entry; a reader refuses a newer one."""

TurnStatus: TypeAlias = Literal["complete", "interrupted", "failed", "abandoned"]
"""How a saved turn ended:

* ``complete`` — the run returned ``status="complete"``;
* ``interrupted`` — the run was aborted or cancelled; its messages are as the agent committed them
  (an interrupted reply is annotated for the model, S34);
* ``failed`` — the run raised (a provider error …); the messages it had added are kept, as the
  agent itself keeps them;
* ``abandoned`` — nothing of it ran: a pending turn whose execution never reached the journal
  (S40), or a turn whose prompt a ``UserPromptSubmit`` hook blocked (S22).
"""


@final
@dataclass(frozen=True, slots=True)
class SessionHeader:
    """What never changes about a session.

    Attributes:
        id: The session id (1–180 characters).
        created_at: When it was created (seconds since the epoch).
        parent_id: The session it was forked from, or ``None``.
        fork_at: How many of the parent's active turns it started with (with ``parent_id``).
    """

    id: str
    created_at: float
    parent_id: str | None = None
    fork_at: int | None = None


@final
@dataclass(frozen=True, slots=True)
class TurnStarted:
    """A journaled turn is about to run (written before the run, S40).

    Attributes:
        turn: The turn's number: unique in the session, never reused (a rewind does not free
            numbers), increasing in the order turns were started.
        execution_id: The journal's execution that runs the turn.
        system_prompt: The system prompt the execution starts with; a continuation keeps it
            (S35), while a new turn uses the agent's live prompt.
        at: When (seconds since the epoch).
    """

    turn: int
    execution_id: str
    system_prompt: str | None
    at: float
    kind: Literal["turn_started"] = field(default="turn_started", init=False)


@final
@dataclass(frozen=True, slots=True)
class TurnSaved:
    """A turn's outcome, saved atomically when it ends.

    Attributes:
        turn: The turn's number (see :class:`TurnStarted`).
        status: See :data:`TurnStatus`.
        messages: The messages the turn added, its user input first (``RunResult.messages``).
        usage: Usage summed over the turn's provider calls.
        cost: Its estimated USD cost; ``None`` when unknown (S13: never a guess).
        execution_id: The execution that ran it, when the agent is journaled.
        at: When it was saved.
        error: For a ``failed`` turn, what was raised (class and message); empty otherwise.
    """

    turn: int
    status: TurnStatus
    messages: tuple[Message, ...]
    usage: Usage
    cost: float | None
    execution_id: str | None
    at: float
    error: str = ""
    kind: Literal["turn_saved"] = field(default="turn_saved", init=False)


@final
@dataclass(frozen=True, slots=True)
class Rewound:
    """Keep only the first ``to`` turns of the active conversation; later ones stay stored.

    Attributes:
        to: How many active turns to keep (0 empties the conversation).
        at: When.
    """

    to: int
    at: float
    kind: Literal["rewound"] = field(default="rewound", init=False)


@final
@dataclass(frozen=True, slots=True)
class MetadataSet:
    """The session's metadata from this entry on (the latest one wins).

    Attributes:
        title: A title for lists, or ``None``.
        user_id: The user the session belongs to, or ``None``.
        tags: Labels, in the caller's order.
        at: When.
    """

    title: str | None
    user_id: str | None
    tags: tuple[str, ...]
    at: float
    kind: Literal["metadata"] = field(default="metadata", init=False)


CompactionTrigger: TypeAlias = Literal["auto", "manual"]
"""What started a compaction: the session's policy (``auto``) or ``session.compact()``."""

CompactionSource: TypeAlias = Literal["model", "summarizer", "hook"]
"""Who wrote a compaction's summary: the agent's provider, the caller's summariser, or a
``PreCompact`` hook (``hookSpecificOutput.summary``)."""


@final
@dataclass(frozen=True, slots=True)
class CompactionStarted:
    """A journaled compaction's summary call is about to run (written before it, S40).

    Attributes:
        number: The compaction's number: unique in the session, never reused.
        execution_id: The journal execution of the summary call
            (``"<session id>/compact-<number>"``).
        upto: How many active turns it replaces (from the first).
        instruction: The system prompt of the summary call; a continuation keeps it.
        custom_instructions: What the caller added to the instruction (``compact()``).
        trigger: See :data:`CompactionTrigger`.
        at: When.
    """

    number: int
    execution_id: str
    upto: int
    instruction: str
    custom_instructions: str
    trigger: CompactionTrigger
    at: float
    kind: Literal["compaction_started"] = field(default="compaction_started", init=False)


@final
@dataclass(frozen=True, slots=True)
class Compacted:
    """The first ``upto`` active turns are replaced, for the model, by ``summary`` (S39).

    The replaced turns stay in the log and in ``session.turns`` (marked ``compacted``); the
    conversation the model is sent is the summary message, then the turns from ``upto`` on. A
    rewind to before ``upto`` drops this compaction (an earlier one that still fits applies
    again).

    Attributes:
        number: The compaction's number (see :class:`CompactionStarted`).
        upto: How many active turns the summary replaces (from the first; a later compaction's
            summary includes the earlier one's).
        active_turns: How many active turns the conversation had when it was compacted: the
            provider reports of turns before that saw the replaced turns (S31).
        summary: The summary text.
        header: The text placed before it in the summary message (the policy's marker).
        source: See :data:`CompactionSource`.
        trigger: See :data:`CompactionTrigger`.
        usage: The summary call's usage (empty for a hook's or a summariser's summary).
        cost: Its estimated USD cost; ``None`` when unknown.
        execution_id: The summary call's execution, when it ran on the agent.
        at: When.
    """

    number: int
    upto: int
    active_turns: int
    summary: str
    header: str
    source: CompactionSource
    trigger: CompactionTrigger
    usage: Usage
    cost: float | None
    execution_id: str | None
    at: float
    kind: Literal["compacted"] = field(default="compacted", init=False)


SessionEntry: TypeAlias = (
    TurnStarted | TurnSaved | Rewound | MetadataSet | CompactionStarted | Compacted
)
"""One entry of a session's log."""


@final
@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session as its store holds it: the header and every entry, in append order."""

    header: SessionHeader
    entries: tuple[SessionEntry, ...]


_STATUSES: Final = frozenset(("complete", "interrupted", "failed", "abandoned"))


def encode_session_entry(entry: SessionEntry) -> str:
    """``entry`` as versioned JSON text, the form every store keeps.

    Raises:
        ConfigurationError: a value that is not JSON (it is not stored).
    """
    data: dict[str, Any] = {"v": ENTRY_FORMAT_VERSION, "kind": entry.kind}
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


def decode_session_entry(text: str) -> SessionEntry:
    """The entry :func:`encode_session_entry` wrote.

    Raises:
        StorageError: damaged text (code ``session_entry_damaged``), or an entry written by a
            newer robota (code ``session_entry_unknown``: upgrade robota to read it).
    """
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("not an object")
        version, kind = data.get("v"), data.get("kind")
        if not isinstance(version, int) or version > ENTRY_FORMAT_VERSION or kind not in _KINDS:
            raise StorageError(
                f"a session entry of kind {kind!r}, format {version!r}, was written by a newer "
                "robota; upgrade robota to read this session",
                code="session_entry_unknown",
            )
        return _KINDS[kind](data)
    except StorageError:
        raise
    except (TypeError, ValueError, KeyError) as exc:
        raise StorageError(
            f"a session entry is damaged ({exc}); the store was changed outside robota",
            code="session_entry_damaged",
            cause=exc,
        ) from exc


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


_KINDS: Final = {
    "turn_started": _started,
    "turn_saved": _saved,
    "rewound": _rewound,
    "metadata": _metadata,
    "compaction_started": _compaction_started,
    "compacted": _compacted,
}
