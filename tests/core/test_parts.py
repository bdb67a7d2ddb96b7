"""Issue 26: message parts — construction, run() input, history, journal and context estimates."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

import robota
from robota.core._context import estimate_message_tokens
from robota.core._media_tokens import IMAGE_MAX_TOKENS, PDF_PAGE_TOKENS, image_size
from robota.host import SQLiteJournal
from robota.testing import InMemoryJournal, ScriptedProvider


def png(width: int, height: int) -> bytes:
    """A real (tiny-bodied) PNG header of the given size."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )


PDF = b"%PDF-1.4\n1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] >>\n2 0 obj << /Type /Page >>\n3 0 obj << /Type/Page >>\n%%EOF"


def wav(seconds: int, byte_rate: int = 16_000) -> bytes:
    header = b"RIFF" + struct.pack("<I", 36) + b"WAVE" + b"fmt " + struct.pack("<I", 16)
    header += struct.pack("<HHIIHH", 1, 1, byte_rate // 2, byte_rate, 2, 16)
    return header + b"data" + struct.pack("<I", byte_rate * seconds) + b"\0" * (byte_rate * seconds)


# --------------------------------------------------------------------------- construction


def test_parts_are_built_from_bytes_urls_and_paths(tmp_path: Path) -> None:
    image = robota.ImagePart(data=png(2, 2), media_type="image/png")
    assert image.kind == "image"
    jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF"
    assert robota.ImagePart.from_bytes(jpeg, "image/jpg").media_type == "image/jpeg"
    assert robota.ImagePart(url="https://example.com/a.webp").media_type == "image/webp"
    assert robota.ImagePart.from_url("https://example.com/photo").media_type is None
    assert robota.DocumentPart(data=PDF).media_type == "application/pdf"
    assert robota.AudioPart.from_bytes(b"x", "audio/mp3").media_type == "audio/mpeg"
    file = tmp_path / "report.pdf"
    file.write_bytes(PDF)
    document = robota.DocumentPart.from_path(file)
    assert (document.data, document.name) == (PDF, "report.pdf")
    (tmp_path / "pic.png").write_bytes(png(3, 3))
    assert robota.ImagePart.from_path(tmp_path / "pic.png").media_type == "image/png"


def test_part_bytes_are_kept_not_copied() -> None:
    data = png(10, 10)
    assert robota.ImagePart(data=data, media_type="image/png").data is data


def test_a_part_repr_never_prints_its_bytes() -> None:
    text = repr(robota.ImagePart(data=b"\x89PNG" * 1000, media_type="image/png"))
    assert text == "ImagePart(data=<4000 bytes>, media_type='image/png')"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (robota.ImagePart, "exactly one of data= .* got neither"),
        (
            lambda: robota.ImagePart(data=b"x", url="https://a/b.png", media_type="image/png"),
            "got both",
        ),
        (lambda: robota.ImagePart(data=b"x", media_type="image/tiff"), "use one of image/gif"),
        (lambda: robota.ImagePart(data=b"x"), "needs media_type="),
        (lambda: robota.ImagePart(url="file:///etc/passwd"), "http:// or https://"),
        (lambda: robota.AudioPart(url="ftp://host/a.wav"), "http:// or https://"),
        (lambda: robota.DocumentPart(data=b"x", media_type="text/html"), "application/pdf"),
        (lambda: robota.ImagePart(data="not bytes", media_type="image/png"), "must be bytes"),
        (lambda: robota.TextPart(3), "must be a string"),  # type: ignore[arg-type]
    ],
)
def test_invalid_parts_are_refused_at_construction_naming_the_fix(
    build: object, message: str
) -> None:
    with pytest.raises(robota.ConfigurationError, match=message):
        build()  # type: ignore[operator]


def test_from_path_of_a_missing_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(robota.ConfigurationError, match="could not read"):
        robota.ImagePart.from_path(tmp_path / "missing.png")


def test_user_message_keeps_working_with_a_string_and_takes_parts() -> None:
    assert robota.UserMessage("hi").content == "hi"
    parts = [robota.TextPart("look"), robota.ImagePart(url="https://a.example/x.png")]
    message = robota.UserMessage(parts)  # type: ignore[arg-type]
    assert message.content == tuple(parts)
    with pytest.raises(robota.ConfigurationError, match=r"wrap text in robota\.TextPart"):
        robota.UserMessage(("plain", robota.TextPart("x")))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- run() and history


async def test_run_accepts_a_sequence_of_parts_and_history_keeps_them() -> None:
    provider = ScriptedProvider(["a cat"])
    agent = robota.Agent(provider=provider, model="m")
    parts = [
        robota.TextPart("What is this?"),
        robota.ImagePart(data=png(4, 4), media_type="image/png"),
    ]
    result = await agent.run(parts)
    assert result.output == "a cat"
    sent = provider.requests[0].messages[-1]
    assert isinstance(sent, robota.UserMessage)
    assert sent.content == tuple(parts)
    assert agent.history[0].content == tuple(parts)


async def test_run_stream_accepts_parts_streams_and_the_provider_receives_them() -> None:
    provider = ScriptedProvider(["a small cat"])
    agent = robota.Agent(provider=provider, model="m")
    parts = [
        robota.TextPart("What is this?"),
        robota.ImagePart(data=png(4, 4), media_type="image/png"),
        robota.DocumentPart(data=PDF, media_type="application/pdf"),
    ]
    stream = agent.run_stream(parts)
    deltas = [event.text async for event in stream if isinstance(event, robota.TextDelta)]
    result = await stream.result()
    assert "".join(deltas) == result.output == "a small cat"
    sent = provider.requests[0].messages[-1]
    assert isinstance(sent, robota.UserMessage)
    assert sent.content == tuple(parts)
    assert sent.content[1].data is parts[1].data  # type: ignore[union-attr]  # not copied
    assert agent.history[0].content == tuple(parts)


async def test_run_refuses_a_wrong_input_naming_the_parts() -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m")
    with pytest.raises(robota.ConfigurationError, match="list of parts"):
        await agent.run([])
    with pytest.raises(robota.ConfigurationError, match="not a message part"):
        await agent.run([robota.TextPart("x"), 3])  # type: ignore[list-item]
    with pytest.raises(robota.ConfigurationError, match="list of parts"):
        await agent.run(b"bytes")  # type: ignore[arg-type]


async def test_a_plugin_sees_the_parts_and_the_run_event_a_text_rendering() -> None:
    seen: list[object] = []

    class Watch(robota.Plugin):
        async def before_run(self, run: robota.RunInfo, input: object) -> None:  # type: ignore[override]
            seen.append(input)

    events: list[robota.AgentEvent] = []
    agent = robota.Agent(provider=ScriptedProvider(["ok"]), model="m", plugins=[Watch()])
    parts = (robota.TextPart("read"), robota.DocumentPart(data=PDF))
    await agent.run(parts, on_event=events.append)
    assert seen == [parts]
    started = [e for e in events if e.name == robota.EventNames.RUN_STARTED]
    assert started
    assert started[0].data["input"] == "read\n\n[document]"


# --------------------------------------------------------------------------- persistence


def _roundtrip(message: robota.Message) -> robota.Message:
    record = robota.Checkpoint((message,), "complete")
    back = robota.decode_journal_record(robota.encode_journal_record(record))
    assert isinstance(back, robota.Checkpoint)
    return back.history[0]


def test_journal_codec_round_trips_every_part_without_loss() -> None:
    message = robota.UserMessage(
        (
            robota.TextPart("all of them"),
            robota.ImagePart(data=png(5, 7), media_type="image/png"),
            robota.ImagePart(url="https://a.example/i.jpg"),
            robota.DocumentPart(data=PDF, name="r.pdf"),
            robota.DocumentPart(url="https://a.example/d.pdf"),
            robota.AudioPart(data=wav(1), media_type="audio/wav"),
        ),
        id="msg-1",
        created_at=5.0,
    )
    assert _roundtrip(message) == message
    # A string stays a string on the wire: journals written before parts read back unchanged.
    assert '"content":"hi"' in robota.encode_journal_record(
        robota.Checkpoint((robota.UserMessage("hi", id="m", created_at=1.0),), "complete")
    ).replace(" ", "")


async def test_a_journaled_run_with_parts_persists_them_in_sqlite(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "j.db")
    try:
        agent = robota.Agent(provider=ScriptedProvider(["seen"]), model="m", journal=journal)
        parts = (robota.TextPart("see"), robota.ImagePart(data=png(8, 8), media_type="image/png"))
        await agent.run(parts, execution_id="e1")
        records = await journal.read("e1")
    finally:
        await journal.aclose()
    started = records[0]
    assert isinstance(started, robota.ExecutionStarted)
    user = started.history[-1]
    assert isinstance(user, robota.UserMessage)
    assert user.content == parts


async def test_in_memory_journal_resume_restores_parts() -> None:
    journal = InMemoryJournal()
    agent = robota.Agent(provider=ScriptedProvider(["one"]), model="m", journal=journal)
    parts = (robota.AudioPart(url="https://a.example/a.mp3"),)
    await agent.run(parts, execution_id="e2")
    records = await journal.read("e2")
    assert records[0].history[-1].content == parts  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- S31 estimates


def test_s31_image_size_is_read_from_png_gif_jpeg_and_webp_headers() -> None:
    assert image_size(png(640, 480)) == (640, 480)
    assert image_size(b"GIF89a" + struct.pack("<HH", 30, 20) + b"\0" * 4) == (30, 20)
    sof = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 120, 160) + b"\0" * 12
    jpeg = b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 4) + b"\0\0" + sof
    assert image_size(jpeg) == (160, 120)
    vp8x = (
        b"RIFF\0\0\0\0WEBPVP8X"
        + b"\0" * 8
        + (99).to_bytes(3, "little")
        + (49).to_bytes(3, "little")
    )
    assert image_size(vp8x) == (100, 50)
    assert image_size(b"not an image") is None


def test_s31_media_are_counted_by_the_documented_rule() -> None:
    def tokens(*parts: robota.MessagePart) -> int:
        return estimate_message_tokens(robota.UserMessage(parts)) - 4  # minus the overhead

    assert tokens(robota.ImagePart(data=png(750, 100), media_type="image/png")) == 100
    assert tokens(robota.ImagePart(data=png(4000, 4000), media_type="image/png")) == 1600
    assert tokens(robota.ImagePart(data=png(10, 10), media_type="image/png")) == 85
    assert tokens(robota.ImagePart(url="https://a.example/x.png")) == IMAGE_MAX_TOKENS
    assert tokens(robota.DocumentPart(data=PDF)) == 2 * PDF_PAGE_TOKENS
    assert tokens(robota.AudioPart(data=wav(3), media_type="audio/wav")) == 96
    assert tokens(robota.TextPart("abcdefgh")) == 2


async def test_s31_context_usage_counts_an_image_run() -> None:
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m")
    before = agent.context_usage().tokens
    agent_parts = [robota.ImagePart(data=png(4000, 4000), media_type="image/png")]
    await agent.run(agent_parts)
    # The scripted provider's own report anchors the count; the estimate is its floor.
    assert agent.context_usage().tokens >= before + IMAGE_MAX_TOKENS


# --------------------------------------------------------------------------- tool results


def test_a_tool_result_and_message_take_media_parts_only() -> None:
    image = robota.ImagePart(data=png(2, 2), media_type="image/png")
    assert robota.ToolResult("shot", parts=[image]).parts == (image,)  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="not a media part"):
        robota.ToolResult("x", parts=(robota.TextPart("no"),))  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="sequence of media parts"):
        robota.ToolMessage("x", tool_call_id="c", tool_name="t", parts=image)  # type: ignore[arg-type]


async def test_a_tool_returning_parts_puts_them_in_history_the_journal_and_estimates() -> None:
    image = robota.ImagePart(data=png(4000, 4000), media_type="image/png")

    @robota.tool
    def screenshot() -> robota.ToolResult:
        """Take a screenshot."""
        return robota.ToolResult("the screen", parts=(image,))

    journal = InMemoryJournal()
    provider = ScriptedProvider([[("screenshot", {})], "I see it"])
    agent = robota.Agent(provider=provider, model="m", tools=[screenshot], journal=journal)
    await agent.run("look", execution_id="e3")
    [tool] = [m for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert tool.parts == (image,)
    assert estimate_message_tokens(tool) >= IMAGE_MAX_TOKENS
    assert _roundtrip(tool) == tool
    settled = [r for r in await journal.read("e3") if isinstance(r, robota.EffectSettled)]
    assert [r.parts for r in settled] == [(image,)]
    back = robota.decode_journal_record(robota.encode_journal_record(settled[0]))
    assert back == settled[0]


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: robota.ImagePart(data=b"", media_type="image/png"), "is empty"),
        (lambda: robota.AudioPart(data=b"", media_type="audio/wav"), "is empty"),
        (lambda: robota.DocumentPart(data=b""), "is empty"),
        # Vendors refuse bytes that contradict the declared type (Anthropic: HTTP 400).
        (lambda: robota.ImagePart(data=png(2, 2), media_type="image/jpeg"), "'image/png'"),
        (lambda: robota.ImagePart(data=b"GIF89a....", media_type="image/webp"), "'image/gif'"),
        (lambda: robota.AudioPart(data=wav(1), media_type="audio/mpeg"), "'audio/wav'"),
    ],
)
def test_parts_refuse_empty_bytes_and_bytes_of_another_type(build: Any, says: str) -> None:
    with pytest.raises(robota.ConfigurationError, match=re.escape(says)):
        build()


def test_parts_accept_bytes_whose_signature_proves_nothing() -> None:
    assert robota.ImagePart(data=b"not sniffable", media_type="image/png").data == b"not sniffable"
