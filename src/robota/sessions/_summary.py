"""A session's summary: what a list of sessions shows, kept by a store beside the log.

Listing sessions must not read every session's log (issue 27: 10,000 sessions in one file), so
a durable store keeps one small summary per session and folds each entry into it as the entry is
stored — in the same atomic write. The fold here must agree with the session state's fold
(``robota.sessions._state``) on everything :class:`~robota.sessions.SessionInfo` shows; the
conformance kit's ``session_infos`` check holds every store to that, against the log itself.
An entry kind this fold does not know (a newer robota's) only moves ``updated_at``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Final, final

from robota.core import ConfigurationError, StorageError, Usage
from robota.core.payloads import decode_usage, encode_usage
from robota.sessions._records import (
    MetadataSet,
    Rewound,
    SessionEntry,
    SessionHeader,
    TurnSaved,
    TurnStarted,
)
from robota.sessions._state import SessionInfo, SessionMetadata
from robota.sessions._store import SessionStore

__all__ = [
    "Summary",
    "decode_summary",
    "encode_summary",
    "fold_summary",
    "list_sessions",
    "summary_info",
]

_NO_METADATA: Final = SessionMetadata()
_NO_USAGE: Final = Usage()


@final
@dataclass(frozen=True, slots=True)
class Summary:
    """The running totals of one session's log (``pending``: the pending turn's number)."""

    updated: float
    metadata: SessionMetadata = _NO_METADATA
    turns: int = 0
    usage: Usage = _NO_USAGE
    cost: float | None = 0.0
    pending: int | None = None


def fold_summary(summary: Summary, entries: Iterable[SessionEntry]) -> Summary:
    """``summary`` with ``entries`` folded in, in order (as the session state folds them)."""
    for entry in entries:
        at = getattr(entry, "at", None)
        if isinstance(at, (int, float)) and at > summary.updated:
            summary = replace(summary, updated=float(at))
        if isinstance(entry, TurnStarted):
            summary = replace(summary, pending=entry.turn)
        elif isinstance(entry, TurnSaved):
            if summary.pending == entry.turn:
                summary = replace(summary, pending=None)
            if entry.status == "abandoned":
                continue  # S40: nothing of it ran
            cost = summary.cost
            summary = replace(
                summary,
                turns=summary.turns + 1,
                usage=summary.usage + entry.usage,
                cost=None if cost is None or entry.cost is None else cost + entry.cost,
            )
        elif isinstance(entry, Rewound):
            summary = replace(summary, turns=min(summary.turns, entry.to))
        elif isinstance(entry, MetadataSet):
            summary = replace(
                summary, metadata=SessionMetadata(entry.title, entry.user_id, entry.tags)
            )
    return summary


def encode_summary(summary: Summary) -> str:
    """``summary`` as compact JSON text, the form a store keeps."""
    meta = summary.metadata
    data: dict[str, Any] = {
        "updated": summary.updated,
        "title": meta.title,
        "user_id": meta.user_id,
        "tags": list(meta.tags),
        "turns": summary.turns,
        "usage": encode_usage(summary.usage),
        "cost": summary.cost,
        "pending": summary.pending,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def decode_summary(text: str) -> Summary:
    """The summary :func:`encode_summary` wrote.

    Raises:
        StorageError: damaged text (code ``session_summary_damaged``).
    """
    try:
        data = json.loads(text)
        tags = tuple(data["tags"])
        if not all(isinstance(tag, str) for tag in tags):
            raise TypeError("a tag is not text")
        cost = data["cost"]
        return Summary(
            float(data["updated"]),
            SessionMetadata(data["title"], data["user_id"], tags),
            int(data["turns"]),
            decode_usage(data["usage"]) or Usage(),
            None if cost is None else float(cost),
            None if data["pending"] is None else int(data["pending"]),
        )
    except (TypeError, ValueError, KeyError) as exc:
        raise StorageError(
            f"a session summary is damaged ({exc}); the store was changed outside robota",
            code="session_summary_damaged",
            cause=exc,
        ) from exc


def summary_info(header: SessionHeader, summary: Summary) -> SessionInfo:
    """The :class:`~robota.sessions.SessionInfo` of a session from its header and summary."""
    return SessionInfo(
        header.id,
        header.created_at,
        max(header.created_at, summary.updated),
        summary.metadata,
        summary.turns,
        summary.usage,
        summary.cost,
        header.parent_id,
        header.fork_at,
        summary.pending is not None,
    )


async def list_sessions(store: SessionStore) -> tuple[SessionInfo, ...]:
    """Every session of ``store`` with its :class:`SessionInfo`, oldest first.

    Reads the store's summaries (:meth:`SessionStore.list_session_infos`): the SQLite and
    PostgreSQL stores keep one per session, so listing reads no session's log.

    Raises:
        ConfigurationError: ``store`` is not a SessionStore.
        StorageError: the store failed.
    """
    if not isinstance(store, SessionStore):
        raise ConfigurationError(f"list_sessions() needs a SessionStore, got {store!r}")
    return await store.list_session_infos()
