"""Message parts: text, image, document and audio in a user message (issue 26).

A :class:`~robota.UserMessage` carries either a plain string (the common, cheapest case) or a
tuple of parts. A media part holds its bytes with a media type, or a URL; it is validated when
constructed, so a mistake surfaces where it was made, not at the wire. A URL is passed on for the
vendor to fetch, or — where the vendor takes that kind only as bytes — fetched by the provider
adapter through the egress client (S06) and sent inline; core itself never fetches.

Accepted media types (what the four vendors share, issue 26):

* images: ``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``;
* documents: ``application/pdf``;
* audio: ``audio/wav``, ``audio/mpeg`` (mp3), ``audio/ogg``, ``audio/flac``, ``audio/aac``,
  ``audio/aiff`` (OpenAI takes only wav and mp3; Gemini the rest too).

URLs must be ``http://`` or ``https://``. Bytes are kept as the caller's ``bytes`` object (never
copied); adapters base64-encode them once, at the wire. Parts are frozen and slotted like every
message value, and compare by value.
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError
from robota.core.urls._split import URLError, split_url

__all__ = [
    "AudioPart",
    "DocumentPart",
    "ImagePart",
    "MediaPart",
    "MessagePart",
    "TextPart",
    "UserInput",
    "content_text",
    "decode_content",
    "decode_media",
    "encode_content",
    "media_parts",
    "tool_parts",
    "user_content",
]

IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
DOCUMENT_TYPES: Final = frozenset({"application/pdf"})
AUDIO_TYPES: Final = frozenset(
    {"audio/wav", "audio/mpeg", "audio/ogg", "audio/flac", "audio/aac", "audio/aiff"}
)
# Common spellings mapped to the one each vendor documents.
_ALIASES: Final = {
    "image/jpg": "image/jpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/mp3": "audio/mpeg",
    "audio/x-flac": "audio/flac",
    "audio/x-aiff": "audio/aiff",
}
_SUFFIXES: Final = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".aac": "audio/aac",
    ".aif": "audio/aiff",
    ".aiff": "audio/aiff",
}


def _guess(name: str) -> str | None:
    if "://" in name:  # a URL: the suffix of its path, query and fragment left out
        name = name.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        name = name.split("/", 1)[1] if "/" in name else ""
    suffix = Path(name).suffix.lower()
    found = _SUFFIXES.get(suffix)
    if found is None:
        guessed, _ = mimetypes.guess_type(f"x{suffix}") if suffix else (None, None)
        found = guessed
    return None if found is None else _ALIASES.get(found, found)


def _sniff(data: bytes) -> str | None:
    """The media type the first bytes of ``data`` prove, or ``None`` when they prove none."""
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio/wav"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head.startswith(b"OggS"):
        return "audio/ogg"
    if head.startswith(b"FORM") and head[8:12] in (b"AIFF", b"AIFC"):
        return "audio/aiff"
    return None


def _check_bytes(part: str, data: bytes, media_type: str) -> None:
    """Refuse empty bytes, and bytes whose signature proves another media type.

    Vendors refuse both, after the upload (Anthropic answers 400 for a JPEG declared PNG);
    bytes whose signature proves nothing are left to the vendor.
    """
    if not data:
        raise ConfigurationError(f"{part}(data=b'') is empty; pass the file's bytes")
    found = _sniff(data)
    if found is not None and found != media_type:
        raise ConfigurationError(
            f"{part} was declared {media_type!r}, but its bytes are {found!r} (their first "
            f"bytes say so); pass media_type={found!r}"
        )


def _check_media(
    part: str,
    allowed: frozenset[str],
    data: object,
    media_type: object,
    url: object,
    *,
    type_required_with_url: bool = False,
) -> str | None:
    """Validate one media part's fields; return its normalised media type."""
    example = f"{part}(data=..., media_type=...) or {part}(url='https://...')"
    if (data is None) == (url is None):
        raise ConfigurationError(
            f"{part} takes exactly one of data= (bytes) and url=, got "
            f"{'both' if data is not None else 'neither'}; pass {example}"
        )
    if data is not None and not isinstance(data, bytes):
        raise ConfigurationError(
            f"{part}(data=...) must be bytes, got {type(data).__name__}; read a file with "
            f"{part}.from_path(path) or pass bytes(...)"
        )
    if url is not None:
        if not isinstance(url, str):
            raise ConfigurationError(f"{part}(url=...) must be a string, got {type(url).__name__}")
        try:
            split_url(url)  # S06's strict reading: http(s), no credentials, no ambiguity
        except URLError as error:
            raise ConfigurationError(
                f"{part}(url=...) must be an http:// or https:// URL, got {url!r} ({error}); "
                f"for a local file use {part}.from_path(path)"
            ) from None
    if media_type is None:
        guessed = _guess(url) if isinstance(url, str) else None
        if guessed in allowed:
            return guessed
        if data is not None or type_required_with_url:
            raise ConfigurationError(
                f"{part} needs media_type= (one of {', '.join(sorted(allowed))}) "
                + ("for its bytes" if data is not None else "for this URL")
            )
        return None
    if not isinstance(media_type, str):
        raise ConfigurationError(f"{part}(media_type=...) must be a string like {min(allowed)!r}")
    normalised = _ALIASES.get(media_type.lower().strip(), media_type.lower().strip())
    if normalised not in allowed:
        raise ConfigurationError(
            f"{part} does not take media type {media_type!r}; use one of "
            f"{', '.join(sorted(allowed))}"
        )
    if isinstance(data, bytes):
        _check_bytes(part, data, normalised)
    return normalised


@final
@dataclass(frozen=True, slots=True)
class TextPart:
    """A piece of text in a multi-part user message."""

    kind: ClassVar[Literal["text"]] = "text"

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ConfigurationError(
                f"TextPart(text) must be a string, got {type(self.text).__name__}"
            )


@final
@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image: ``ImagePart(data=png_bytes, media_type="image/png")`` or ``ImagePart(url=...)``.

    Attributes:
        data: The image bytes (exactly one of ``data`` and ``url``).
        media_type: ``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``; guessed from
            a URL's suffix when omitted (``None`` when it cannot be).
        url: An ``http(s)`` URL the vendor (or, where it cannot, the adapter) fetches.

    Raises:
        ConfigurationError: neither or both of ``data`` and ``url``, a media type not listed, a
            URL that is not ``http(s)``.
    """

    kind: ClassVar[Literal["image"]] = "image"

    data: bytes | None = None
    media_type: str | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        media = _check_media("ImagePart", IMAGE_TYPES, self.data, self.media_type, self.url)
        object.__setattr__(self, "media_type", media)

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str) -> ImagePart:
        """An image of ``media_type`` holding ``data`` (not copied)."""
        return cls(data=data, media_type=media_type)

    @classmethod
    def from_url(cls, url: str, media_type: str | None = None) -> ImagePart:
        """An image the vendor fetches from ``url`` (``http(s)`` only)."""
        return cls(url=url, media_type=media_type)

    @classmethod
    def from_path(cls, path: str | Path, media_type: str | None = None) -> ImagePart:
        """An image read from a local file; the media type is guessed from its suffix."""
        data, media = _read(path, media_type, "ImagePart")
        return cls(data=data, media_type=media)

    def __repr__(self) -> str:
        return _repr(self)


@final
@dataclass(frozen=True, slots=True)
class DocumentPart:
    """A document (PDF): ``DocumentPart(data=pdf_bytes, media_type="application/pdf")`` or a URL.

    Attributes:
        data: The document bytes (exactly one of ``data`` and ``url``).
        media_type: ``application/pdf`` (the default, as PDF is the only type taken).
        url: An ``http(s)`` URL the vendor (or, where it cannot, the adapter) fetches.
        name: A file name some vendors show the model (OpenAI requires one; ``document.pdf``
            is sent when this is ``None``).
    """

    kind: ClassVar[Literal["document"]] = "document"

    data: bytes | None = None
    media_type: str | None = "application/pdf"
    url: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        media = _check_media("DocumentPart", DOCUMENT_TYPES, self.data, self.media_type, self.url)
        object.__setattr__(self, "media_type", media or "application/pdf")
        if self.name is not None and not isinstance(self.name, str):
            raise ConfigurationError("DocumentPart(name=...) must be a string file name")

    @classmethod
    def from_bytes(
        cls, data: bytes, media_type: str = "application/pdf", *, name: str | None = None
    ) -> DocumentPart:
        """A document holding ``data`` (not copied)."""
        return cls(data=data, media_type=media_type, name=name)

    @classmethod
    def from_url(cls, url: str, media_type: str = "application/pdf") -> DocumentPart:
        """A document the vendor fetches from ``url`` (``http(s)`` only)."""
        return cls(url=url, media_type=media_type)

    @classmethod
    def from_path(cls, path: str | Path, media_type: str | None = None) -> DocumentPart:
        """A document read from a local file, named after it."""
        data, media = _read(path, media_type, "DocumentPart")
        return cls(data=data, media_type=media, name=Path(path).name)

    def __repr__(self) -> str:
        return _repr(self)


@final
@dataclass(frozen=True, slots=True)
class AudioPart:
    """An audio clip: ``AudioPart(data=wav_bytes, media_type="audio/wav")`` or a URL.

    Attributes:
        data: The audio bytes (exactly one of ``data`` and ``url``).
        media_type: One of the audio types the module lists; guessed from a URL's suffix.
        url: An ``http(s)`` URL; the vendor fetches it, or the adapter where the vendor cannot
            (OpenAI takes audio only as bytes: its adapter fetches the URL, S06).
    """

    kind: ClassVar[Literal["audio"]] = "audio"

    data: bytes | None = None
    media_type: str | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        media = _check_media("AudioPart", AUDIO_TYPES, self.data, self.media_type, self.url)
        object.__setattr__(self, "media_type", media)

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str) -> AudioPart:
        """An audio clip of ``media_type`` holding ``data`` (not copied)."""
        return cls(data=data, media_type=media_type)

    @classmethod
    def from_url(cls, url: str, media_type: str | None = None) -> AudioPart:
        """An audio clip the vendor fetches from ``url`` (``http(s)`` only)."""
        return cls(url=url, media_type=media_type)

    @classmethod
    def from_path(cls, path: str | Path, media_type: str | None = None) -> AudioPart:
        """An audio clip read from a local file; the media type is guessed from its suffix."""
        data, media = _read(path, media_type, "AudioPart")
        return cls(data=data, media_type=media)

    def __repr__(self) -> str:
        return _repr(self)


MediaPart: TypeAlias = ImagePart | DocumentPart | AudioPart
"""A part holding media (bytes or a URL)."""

MessagePart: TypeAlias = TextPart | ImagePart | DocumentPart | AudioPart
"""Any message part; discriminate with ``match`` or on ``.kind``."""

UserInput: TypeAlias = "str | Sequence[MessagePart]"
"""What ``agent.run()`` takes: a string, or a sequence of parts."""

_PART_TYPES: Final = (TextPart, ImagePart, DocumentPart, AudioPart)


def _repr(part: MediaPart) -> str:
    # Never print the bytes: a 20 MB image would flood a log or a traceback.
    source = (
        f"url={part.url!r}" if part.url is not None else f"data=<{len(part.data or b'')} bytes>"
    )
    return f"{type(part).__name__}({source}, media_type={part.media_type!r})"


def _read(path: str | Path, media_type: str | None, part: str) -> tuple[bytes, str | None]:
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as error:
        raise ConfigurationError(
            f"{part}.from_path could not read {str(file)!r}: {error.strerror or error}"
        ) from None
    return data, media_type if media_type is not None else _guess(file.name)


def user_content(value: object, where: str) -> str | tuple[MessagePart, ...]:
    """``value`` as a user message's content: a string as is, a sequence of parts as a tuple.

    Raises:
        ConfigurationError: an empty sequence, or an item that is not a part.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, Sequence):
        raise ConfigurationError(
            f"{where} takes a string or a sequence of parts (robota.TextPart, ImagePart, "
            f"DocumentPart, AudioPart), got {type(value).__name__}"
        )
    parts = tuple(value)
    if not parts:
        raise ConfigurationError(f"{where} got no parts; pass at least one part or a string")
    for index, part in enumerate(parts):
        if type(part) not in _PART_TYPES:
            hint = ""
            if isinstance(part, str):
                hint = "; wrap text in robota.TextPart(...)"
                if where.startswith("agent."):
                    method = where.removesuffix("()")
                    hint += f', or pass one string: {method}("What is 2+2?")'
            raise ConfigurationError(
                f"{where}: item {index} is a {type(part).__name__}, not a message part{hint}"
            )
    return parts


def tool_parts(value: object, where: str) -> tuple[MediaPart, ...]:
    """``value`` as a tool result's media: a tuple of image, document or audio parts.

    Raises:
        ConfigurationError: an item that is not a media part.
    """
    if isinstance(value, tuple) and not value:
        return ()
    if isinstance(value, (str, bytes, bytearray)) or not isinstance(value, Sequence):
        raise ConfigurationError(
            f"{where} takes a sequence of media parts (robota.ImagePart, DocumentPart, "
            f"AudioPart), got {type(value).__name__}"
        )
    parts = tuple(value)
    for index, part in enumerate(parts):
        if type(part) not in (ImagePart, DocumentPart, AudioPart):
            raise ConfigurationError(
                f"{where}: item {index} is a {type(part).__name__}, not a media part (text "
                "belongs in the result's content)"
            )
    return parts


def content_text(content: str | tuple[MessagePart, ...]) -> str:
    """The text of a message's content: the string, or its text parts joined by blank lines.

    Media parts are shown as ``[image]``, ``[document]``, ``[audio]`` placeholders, so a
    summary or a display never loses the fact that they were there.
    """
    if isinstance(content, str):
        return content
    return "\n\n".join(p.text if isinstance(p, TextPart) else f"[{p.kind}]" for p in content)


def media_parts(content: str | tuple[MessagePart, ...]) -> tuple[MediaPart, ...]:
    """The media parts of a message's content (``()`` for a string)."""
    if isinstance(content, str):
        return ()
    return tuple(p for p in content if not isinstance(p, TextPart))


def encode_content(content: str | tuple[MessagePart, ...]) -> str | list[dict[str, Any]]:
    """A message's content as JSON-able data: a string as is, parts as objects (bytes base64).

    Every field is kept, so :func:`decode_content` gives back an equal content.
    """
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextPart):
            out.append({"kind": "text", "text": part.text})
            continue
        item: dict[str, Any] = {
            "kind": part.kind,
            "media_type": part.media_type,
            "data": None if part.data is None else base64.b64encode(part.data).decode("ascii"),
            "url": part.url,
        }
        if isinstance(part, DocumentPart):
            item["name"] = part.name
        out.append(item)
    return out


def decode_content(data: object) -> str | tuple[MessagePart, ...]:
    """The content :func:`encode_content` wrote.

    Raises:
        TypeError, KeyError, ValueError: for damaged data (callers map them to their own error).
    """
    if isinstance(data, str):
        return data
    if not isinstance(data, list):
        raise TypeError("message content must be a string or a list of parts")
    parts: list[MessagePart] = []
    for item in data:
        kind = item["kind"]
        if kind == "text":
            parts.append(TextPart(str(item["text"])))
            continue
        raw = item["data"]
        payload = None if raw is None else base64.b64decode(raw, validate=True)
        common: dict[str, Any] = {
            "data": payload,
            "media_type": item["media_type"],
            "url": item["url"],
        }
        if kind == "image":
            parts.append(ImagePart(**common))
        elif kind == "document":
            parts.append(DocumentPart(**common, name=item.get("name")))
        elif kind == "audio":
            parts.append(AudioPart(**common))
        else:
            raise ValueError(f"unknown message part kind {kind!r}")
    return tuple(parts)


def decode_media(data: Mapping[str, Any]) -> tuple[MediaPart, ...]:
    """A stored tool result's ``"parts"`` (as :func:`encode_content` wrote them; absent: none)."""
    parts = data.get("parts")
    return () if parts is None else tool_parts(decode_content(parts), "a stored tool result")
