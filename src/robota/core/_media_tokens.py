"""How many context tokens a media part is counted as (S31, issue 26).

Only an estimate, used where no provider report exists, and read from the few header bytes of
the media — never by decoding it. The rule (also in the README, under the message parts):

* **image**: ``width × height / 750`` tokens (the rule Anthropic documents), at least 85 and at
  most 1,600 (vendors scale large images down to about 1.15 megapixels). The size is read from
  the PNG, GIF, JPEG or WebP header; an image whose size cannot be read (a URL, a damaged
  header) counts as the maximum, 1,600.
* **document** (PDF): 3,000 tokens per page (text plus the page image the vendors send); pages
  are the ``/Type /Page`` objects in the file, at least one. A URL counts as one page.
* **audio**: 32 tokens per second (Gemini's documented rate; OpenAI's is lower). Seconds come
  from a WAV header's byte rate, else from 16,000 bytes per second (128 kbit/s). A URL counts as
  one minute.
"""

from __future__ import annotations

import re
import struct
from typing import Final

from robota.core._parts import AudioPart, DocumentPart, ImagePart, MediaPart

__all__ = ["estimate_part_tokens", "image_size"]

IMAGE_MIN_TOKENS: Final = 85
IMAGE_MAX_TOKENS: Final = 1600
PDF_PAGE_TOKENS: Final = 3000
AUDIO_TOKENS_PER_SECOND: Final = 32
_ASSUMED_AUDIO_BYTES_PER_SECOND: Final = 16_000
_URL_AUDIO_SECONDS: Final = 60
_PAGE: Final = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_JPEG_SOF: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from a PNG, GIF, JPEG or WebP header; ``None`` when unreadable."""
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        if data[:6] in (b"GIF87a", b"GIF89a"):
            width, height = struct.unpack("<HH", data[6:10])
            return width, height
        if data[:2] == b"\xff\xd8":
            return _jpeg_size(data)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
    except (struct.error, IndexError):
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    index = 2
    # Segment headers only: a frame header comes before the image data, within a few KB.
    while index + 9 < len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return width, height
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        index += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _wav_seconds(data: bytes) -> float | None:
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE" or data[12:16] != b"fmt ":
        return None
    (byte_rate,) = struct.unpack("<I", data[28:32])
    return len(data) / byte_rate if byte_rate else None


def estimate_part_tokens(part: MediaPart) -> int:
    """The estimated context tokens of one media part (the module's rule)."""
    if isinstance(part, ImagePart):
        size = image_size(part.data) if part.data is not None else None
        if size is None:
            return IMAGE_MAX_TOKENS
        return max(IMAGE_MIN_TOKENS, min(IMAGE_MAX_TOKENS, (size[0] * size[1] + 749) // 750))
    if isinstance(part, DocumentPart):
        pages = len(_PAGE.findall(part.data)) if part.data is not None else 1
        return PDF_PAGE_TOKENS * max(1, pages)
    assert isinstance(part, AudioPart)
    if part.data is None:
        return AUDIO_TOKENS_PER_SECOND * _URL_AUDIO_SECONDS
    seconds = _wav_seconds(part.data)
    if seconds is None:
        seconds = len(part.data) / _ASSUMED_AUDIO_BYTES_PER_SECOND
    return max(1, round(AUDIO_TOKENS_PER_SECOND * seconds))
