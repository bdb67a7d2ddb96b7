"""``robota.sessions``: conversations with an id that outlive processes (issue 27).

A layer above core (S01: core stays session-free) and host. A :class:`Session` binds an
:class:`~robota.Agent` to one conversation kept in a :class:`SessionStore`; each
``await session.run(...)`` loads the conversation into the agent, runs one turn and saves the
turn's messages atomically. Stores: :class:`SQLiteSessionStore` (the embedded default, an
owner-only file, S07), :class:`PostgresSessionStore` (many workers) and
:class:`robota.testing.InMemorySessionStore`, all behind the one port held to its contract by
:func:`robota.testing.run_session_store_conformance`.

Sessions: :class:`Session` (``open``, ``run``, ``run_stream``, ``resume``, ``compact``, ``fork``,
``rewind``, ``delete``, ``set_metadata``, ``history``, ``turns``, ``info``, ``usage``, ``cost``,
``aclose``), what it reports (:class:`SessionInfo`, :class:`SessionMetadata`, :class:`Turn`),
:func:`list_sessions`, compaction (S39: :class:`CompactionPolicy`, :class:`CompactionRequest`,
:data:`Summarizer`, :func:`is_compaction_summary`, the default texts
:data:`DEFAULT_COMPACTION_INSTRUCTION` and :data:`DEFAULT_SUMMARY_HEADER`), and the errors
:class:`SessionBusyError` (one writer: a second
concurrent turn fails at once), :class:`SessionNotFoundError`, :class:`SessionStateError`.

The port (for store authors): :class:`SessionStore`, :class:`SessionLease`, the header and entry
records (:class:`SessionHeader`, :data:`SessionEntry` — :class:`TurnStarted`,
:class:`TurnSaved`, :class:`Rewound`, :class:`MetadataSet`, :class:`CompactionStarted`,
:class:`Compacted`), their JSON form
(:func:`encode_session_entry`, :func:`decode_session_entry`), :func:`check_session_id` and
:func:`check_entry_count`.
"""

from robota.sessions._codec import ENTRY_FORMAT_VERSION, decode_session_entry, encode_session_entry
from robota.sessions._compaction import (
    DEFAULT_COMPACTION_INSTRUCTION,
    DEFAULT_SUMMARY_HEADER,
    CompactionPolicy,
    CompactionRequest,
    Summarizer,
)
from robota.sessions._errors import SessionBusyError, SessionNotFoundError, SessionStateError
from robota.sessions._postgres import PostgresSessionStore
from robota.sessions._records import (
    Compacted,
    CompactionSource,
    CompactionStarted,
    CompactionTrigger,
    MetadataSet,
    Rewound,
    SessionEntry,
    SessionHeader,
    StoredSession,
    TurnSaved,
    TurnStarted,
    TurnStatus,
)
from robota.sessions._session import Session, list_sessions
from robota.sessions._sqlite import SQLiteSessionStore
from robota.sessions._state import (
    SUMMARY_ID_PREFIX,
    SessionInfo,
    SessionMetadata,
    Turn,
    is_compaction_summary,
)
from robota.sessions._store import (
    MAX_SESSION_ID_LENGTH,
    SessionLease,
    SessionStore,
    check_entry_count,
    check_session_id,
)

__all__ = [
    "DEFAULT_COMPACTION_INSTRUCTION",
    "DEFAULT_SUMMARY_HEADER",
    "ENTRY_FORMAT_VERSION",
    "MAX_SESSION_ID_LENGTH",
    "SUMMARY_ID_PREFIX",
    "Compacted",
    "CompactionPolicy",
    "CompactionRequest",
    "CompactionSource",
    "CompactionStarted",
    "CompactionTrigger",
    "MetadataSet",
    "PostgresSessionStore",
    "Rewound",
    "SQLiteSessionStore",
    "Session",
    "SessionBusyError",
    "SessionEntry",
    "SessionHeader",
    "SessionInfo",
    "SessionLease",
    "SessionMetadata",
    "SessionNotFoundError",
    "SessionStateError",
    "SessionStore",
    "StoredSession",
    "Summarizer",
    "Turn",
    "TurnSaved",
    "TurnStarted",
    "TurnStatus",
    "check_entry_count",
    "check_session_id",
    "decode_session_entry",
    "encode_session_entry",
    "is_compaction_summary",
    "list_sessions",
]
