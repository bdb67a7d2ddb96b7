"""The session entry codec (``robota.sessions._codec``): format 2, and format 1 still read."""

from __future__ import annotations

import json
import sqlite3
import struct
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

import robota
from robota.core import StorageError, Usage
from robota.sessions import (
    ENTRY_FORMAT_VERSION,
    Compacted,
    CompactionStarted,
    MetadataSet,
    Rewound,
    Session,
    SessionEntry,
    SessionHeader,
    SQLiteSessionStore,
    TurnSaved,
    TurnStarted,
    decode_session_entry,
    encode_session_entry,
)
from robota.sessions._codec_v1 import encode_v1
from robota.testing import ScriptedProvider


def _png() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 2, 3, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )


PNG = _png()
PDF = b"%PDF-1.4\n1 0 obj << /Type /Page >>\n%%EOF"
USAGE = Usage(10, 4, 14, 3, False, 2)


def _entries() -> list[SessionEntry]:
    call = robota.ToolCall("call_1", "look", '{"q": "caf\\u00e9"}')
    messages: tuple[Any, ...] = (
        robota.UserMessage(
            (
                robota.TextPart("Describe"),
                robota.ImagePart(data=PNG, media_type="image/png"),
                robota.DocumentPart(url="https://example.com/a.pdf"),
            )
        ),
        robota.AssistantMessage(
            "", tool_calls=(call,), usage=USAGE, model="m-1", continuation="sig", state="complete"
        ),
        robota.ToolMessage(
            "found",
            tool_call_id="call_1",
            tool_name="look",
            is_error=True,
            parts=(robota.DocumentPart(data=PDF, media_type="application/pdf"),),
        ),
        robota.ToolMessage("plain", tool_call_id="call_1", tool_name="look"),
        robota.AssistantMessage("cut", state="interrupted"),
        robota.SystemMessage("be brief"),
    )
    return [
        MetadataSet("T\u2028", None, ("a", "b"), 1.0),
        TurnStarted(0, "s/0", None, 2.0),
        TurnSaved(0, "complete", messages, USAGE, 0.5, "s/0", 3.0),
        TurnSaved(1, "failed", (robota.UserMessage("x"),), Usage(), None, None, 4, "Boom"),
        Rewound(1, 5.0),
        CompactionStarted(0, "s/compact-0", 1, "sum", "", "manual", 6.0),
        Compacted(0, 1, 1, "text", "head: ", "hook", "auto", Usage(), None, None, 7.0),
    ]


def test_every_entry_kind_round_trips_in_format_2_media_and_tool_calls_included() -> None:
    for entry in _entries():
        text = encode_session_entry(entry)
        assert json.loads(text)[:2] == [ENTRY_FORMAT_VERSION, entry.kind]
        assert decode_session_entry(text) == entry
    saved = _entries()[2]
    assert isinstance(saved, TurnSaved)
    back = decode_session_entry(encode_session_entry(saved))
    assert isinstance(back, TurnSaved)
    image = back.messages[0].content[1]  # type: ignore[index]
    assert isinstance(image, robota.ImagePart)
    assert image.data == PNG
    assert back.messages[2].parts[0].data == PDF  # type: ignore[union-attr]
    assert [m.id for m in back.messages] == [m.id for m in saved.messages]


def test_format_1_entries_still_read() -> None:
    for entry in _entries():
        assert decode_session_entry(encode_v1(entry)) == entry


async def test_a_store_of_format_1_entries_opens_and_takes_format_2_turns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SQLiteSessionStore(path)
    await store.create(SessionHeader("old", time.time()))
    old = [
        TurnSaved(
            0,
            "complete",
            (robota.UserMessage("hi"), robota.AssistantMessage("hello", usage=USAGE)),
            USAGE,
            0.5,
            None,
            3.0,
        )
    ]
    with sqlite3.connect(path) as db:  # as a robota of format 1 wrote them
        db.execute(
            "INSERT INTO robota_session_entries (session_id, seq, entry) VALUES ('old', 1, ?)",
            (encode_v1(old[0]),),
        )
    agent = robota.Agent("m", provider=ScriptedProvider(["next"]))
    session = await Session.open(agent, store, "old")
    assert session.history == old[0].messages
    await session.run("again")
    assert [m.content for m in session.history[-2:]] == ["again", "next"]
    await session.aclose()
    reopened = await Session.open(agent, store, "old")
    assert reopened.history == session.history
    await reopened.aclose()
    await store.aclose()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('[3,"turn_saved"]', "session_entry_unknown"),
        ('{"v":3,"kind":"turn_saved"}', "session_entry_unknown"),
        ('[2,"dreamt"]', "session_entry_unknown"),
        ('{"v":1,"kind":"dreamt"}', "session_entry_unknown"),
        ("[2]", "session_entry_damaged"),
        ("[]", "session_entry_damaged"),
        ("7", "session_entry_damaged"),
        ("not json", "session_entry_damaged"),
        ('[2,"rewound",-1,1.0]', "session_entry_damaged"),
        ('[2,"rewound",1]', "session_entry_damaged"),
        ('[2,"turn_saved",0,"complete",null,null,null,1.0,"",[["u",5,"i",1.0]]]', None),
        ('[2,"turn_saved",0,"complete",null,null,null,1.0,"",[["x","a","i",1.0]]]', None),
        ('[2,"turn_saved",0,"done",null,null,null,1.0,"",[]]', None),
        ('[2,"turn_saved",0,"complete",[1,2],null,null,1.0,"",[]]', None),
        ('[2,"turn_saved",0,"complete",null,null,null,1.0,"",[["a","x","i",1.0]]]', None),
    ],
)
def test_damaged_or_newer_entries_are_refused_with_their_code(text: str, code: str | None) -> None:
    with pytest.raises(StorageError) as caught:
        decode_session_entry(text)
    assert caught.value.code == (code or "session_entry_damaged")


def test_a_value_that_is_not_json_is_not_encoded() -> None:
    with pytest.raises(ValueError, match="JSON"):
        encode_session_entry(Rewound(0, float("nan")))


def test_a_stored_nan_is_refused_as_damage() -> None:
    with pytest.raises(StorageError) as caught:
        decode_session_entry('[2,"rewound",1,NaN]')
    assert caught.value.code == "session_entry_damaged"


async def test_a_version_2_sqlite_file_opens_and_is_marked_version_3(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    async with SQLiteSessionStore(path) as store:
        await store.create(SessionHeader("old", 1.0))
    with sqlite3.connect(path) as db:  # as a robota of schema 2 (entries in format 1) left it
        db.execute("UPDATE robota_sessions_meta SET value = '2' WHERE key = 'schema_version'")
        db.execute(
            "INSERT INTO robota_session_entries (session_id, seq, entry) VALUES ('old', 1, ?)",
            (encode_v1(Rewound(0, 2.0)),),
        )
    async with SQLiteSessionStore(path) as store:
        assert (await store.load("old")).entries == (Rewound(0, 2.0),)
    with sqlite3.connect(path) as db:
        (version,) = db.execute(
            "SELECT value FROM robota_sessions_meta WHERE key = 'schema_version'"
        ).fetchone()
    assert version == "3"
