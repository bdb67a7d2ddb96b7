"""Every part kind survives a crash and a resume from SQLite byte for byte (issue 26 review, S40).

The user's parts and a tool result's media are journaled; a fresh agent on a fresh journal
handle (another process, in effect) resumes the execution, and the next model call carries
exactly the bytes, URLs, media types and names that were sent before the crash.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

import robota
from journal_hooks import Crash, HookedJournal, crash_at
from robota.host import SQLiteJournal
from robota.testing import ScriptedProvider


def _png() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 3, 2, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    # Every byte value, so no encoding step may normalise anything away.
    tail = bytes(range(256)) * 3
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
        + tail
    )


USER_PARTS = (
    robota.TextPart("look at these, and ünïcödé \u2028 text"),
    robota.ImagePart(data=_png(), media_type="image/png"),
    robota.ImagePart(url="https://a.example/x.webp?size=big#frag"),
    robota.DocumentPart(data=b"%PDF-1.7\n\x00\xff binary", name="r\u00e9sum\u00e9.pdf"),
    robota.DocumentPart(url="https://a.example/doc.pdf"),
    robota.AudioPart(
        data=b"RIFF\x00\x00\x00\x00WAVEfmt " + bytes(range(64)), media_type="audio/wav"
    ),
    robota.AudioPart(url="https://a.example/a.mp3"),
)
TOOL_PARTS = (
    robota.ImagePart(data=_png()[::-1], media_type="image/gif"),
    robota.DocumentPart(data=b"%PDF-1.4 tool", name=None),
    robota.AudioPart(data=b"\xff\xfb\x90mp3", media_type="audio/mpeg"),
    robota.ImagePart(url="https://a.example/shot.png"),
)


@robota.tool
def capture() -> robota.ToolResult:
    """Capture the screen."""
    return robota.ToolResult("captured", parts=TOOL_PARTS)


@pytest.mark.parametrize("crash", ["effect_settled", "model_call_started"])
async def test_s40_every_part_kind_resumes_from_sqlite_byte_for_byte(
    tmp_path: Path, crash: str
) -> None:
    path = tmp_path / "journal.db"
    # Right after the tool's result is durable, or right before the next model call is.
    hook = crash_at(crash, nth=1 if crash == "effect_settled" else 2)
    async with SQLiteJournal(path) as inner:
        if crash == "effect_settled":
            journal = HookedJournal(inner, after=hook)
        else:
            journal = HookedJournal(inner, before=hook)
        provider = ScriptedProvider([[("capture", {})], "unused"])
        agent = robota.Agent(provider=provider, model="m", tools=[capture], journal=journal)
        with pytest.raises(Crash):
            await agent.run(USER_PARTS, execution_id="e")
    async with SQLiteJournal(path) as journal:
        provider = ScriptedProvider(["done"])
        fresh = robota.Agent(provider=provider, model="m", tools=[capture], journal=journal)
        result = await fresh.resume("e")
        await fresh.aclose()
    assert result.status == "complete"
    assert result.output == "done"
    (request,) = provider.requests
    user = request.messages[0]
    assert isinstance(user, robota.UserMessage)
    assert user.content == USER_PARTS
    for sent, original in zip(user.content, USER_PARTS, strict=True):
        assert type(sent) is type(original)
        assert getattr(sent, "data", None) == getattr(original, "data", None)
    tool = request.messages[-1]
    assert isinstance(tool, robota.ToolMessage)
    assert tool.content == "captured"
    assert tool.parts == TOOL_PARTS
    assert [getattr(p, "data", None) for p in tool.parts] == [
        getattr(p, "data", None) for p in TOOL_PARTS
    ]
    assert result.messages[0] == user
