"""A run's input media kept aside in the execution journal, and the stand-ins that refer to it.

Internal (issue 26). Temporal refuses payloads over 2 MiB, so a large image, PDF or audio clip
in :func:`~robota.temporal.start_agent_run`'s input is written to the execution journal the
workers share — one ``EffectSettled`` record holding the parts, under an execution id of its own
— before the workflow starts, and the workflow's input carries a *stand-in* for each: a part of
the same kind (declaring its own bytes' type: PNG, PDF, WAV — the stored record keeps the real
one) whose few bytes hold a random reference and are shaped so the
context estimate (S31, the rule of :mod:`robota.core`'s media counting) reads the same number of
tokens as the real part:

* an image: a PNG header of ``750 × tokens`` by 1 pixels (the rule is width × height / 750);
* a document: one ``/Type /Page`` line per page of the real PDF;
* audio: a WAV header whose byte rate makes its length last as long as the real clip (exact up
  to about 35 minutes, within 16 tokens beyond).

The workflow never needs the bytes; every model-call activity swaps each stand-in it was given
a reference for back to the journal's part before the vendor sees the request.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
from collections.abc import Mapping, Sequence
from typing import Any, Final

from temporalio.exceptions import ApplicationError

from robota.core import (
    AudioPart,
    ConfigurationError,
    DocumentPart,
    EffectSettled,
    ExecutionJournal,
    ImagePart,
    Message,
    MessagePart,
    TextPart,
    UserMessage,
    estimate_message_tokens,
)
from robota.temporal._codec import StoredMedia

__all__ = ["INLINE_MEDIA_BYTES", "MAX_INPUT_BYTES", "resolve_media", "store_input_media"]

INLINE_MEDIA_BYTES: Final = 64 * 1024
"""With a journal, an input media part larger than this (base64) is kept aside."""
MAX_INPUT_BYTES: Final = 1536 * 1024
"""Without a journal, the most inline media an input may carry (Temporal refuses 2 MiB)."""

_TAG: Final = b"robota-stored:"
_FIND: Final = re.compile(rb"robota-stored:([0-9a-f]{32})")
_MAX_STAND_IN: Final = 1024 * 1024  # a stand-in is smaller (audio of 300 h); only these are read
_MAX_ID: Final = 200  # the journal's execution-id bound
_EXACT_AUDIO_TOKENS: Final = 65_536


def _encoded(part: MessagePart) -> int:
    data = getattr(part, "data", None)
    return 0 if data is None else (len(data) + 2) // 3 * 4


def _tokens(part: MessagePart) -> int:
    # The public estimate of a message holding only this part, less an empty message's.
    return estimate_message_tokens(UserMessage((part,))) - estimate_message_tokens(
        UserMessage((TextPart(""),))
    )


def _stand_in(part: ImagePart | DocumentPart | AudioPart, tokens: int, ref: str) -> MessagePart:
    tag = _TAG + ref.encode("ascii") + b"\n"
    if isinstance(part, ImagePart):
        header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + struct.pack(">II", 750 * tokens, 1)
        # Its own type (a part's bytes must be what it declares); the stored record keeps the
        # real one, and the model call swaps the real part back in.
        return ImagePart(data=header + tag, media_type="image/png")
    if isinstance(part, DocumentPart):
        pages = max(1, tokens // 3000)
        body = b"%PDF-1.7\n%" + tag + b"/Type /Page\n" * pages
        return DocumentPart(data=body, media_type=part.media_type, name=part.name)
    # Audio: length / byte rate seconds at 32 tokens a second.
    if tokens <= _EXACT_AUDIO_TOKENS:
        scale = -(-(44 + len(tag)) // tokens)
        length, rate = tokens * scale, 32 * scale
    else:
        length, rate = round(tokens / 32), 1
    header = b"RIFF" + struct.pack("<I", length - 8) + b"WAVEfmt " + b"\0" * 12
    header += struct.pack("<I", rate)
    data = (header + tag).ljust(length, b"\0")
    return AudioPart(data=data, media_type="audio/wav")


def _execution_key(workflow_id: str) -> str:
    key = f"temporal-input:{workflow_id}:{os.urandom(8).hex()}"
    if len(key) <= _MAX_ID:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"temporal-input:sha256:{digest}"


async def store_input_media(
    content: str | tuple[MessagePart, ...],
    workflow_id: str,
    journal: ExecutionJournal | None,
) -> tuple[str | tuple[MessagePart, ...], tuple[StoredMedia, ...]]:
    """The input as the workflow carries it, and the parts kept aside in ``journal``.

    Raises:
        ConfigurationError: without a journal, media over what a Temporal payload carries.
    """
    if isinstance(content, str):
        return content, ()
    inline = sum(_encoded(part) for part in content)
    if journal is None:
        if inline > MAX_INPUT_BYTES:
            raise ConfigurationError(
                f"the input's media parts are {inline} bytes as a Temporal payload carries them "
                f"(base64), over the {MAX_INPUT_BYTES} it takes; pass "
                "start_agent_run(..., journal=...) with the execution journal the workers share "
                "to keep them aside"
            )
        return content, ()
    large = [
        (index, part)
        for index, part in enumerate(content)
        if not isinstance(part, TextPart) and _encoded(part) > INLINE_MEDIA_BYTES
    ]
    if not large:
        return content, ()
    key = _execution_key(workflow_id)
    async with await journal.acquire(key) as lease:
        parts = tuple(part for _, part in large)
        await lease.append(EffectSettled("input", "succeeded", "", parts=parts))
    carried = list(content)
    stored: list[StoredMedia] = []
    for slot, (index, part) in enumerate(large):
        ref, tokens = os.urandom(16).hex(), _tokens(part)
        carried[index] = _stand_in(part, tokens, ref)
        size = len(part.data or b"")
        stored.append(StoredMedia(ref, key, slot, part.kind, part.media_type, size, tokens))
    return tuple(carried), tuple(stored)


def _ref_of(part: MessagePart, refs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    data = getattr(part, "data", None)
    if data is None or len(data) > _MAX_STAND_IN:
        return None
    found = _FIND.search(data)
    if found is None:
        return None
    ref = refs.get(found.group(1).decode("ascii"))
    return ref if isinstance(ref, Mapping) else None


async def resolve_media(
    messages: Sequence[Message], refs: object, journal: ExecutionJournal | None
) -> tuple[Message, ...]:
    """``messages`` with every stand-in the workflow issued a reference for made whole again."""
    if not isinstance(refs, Mapping) or not refs:
        return tuple(messages)
    if journal is None:
        raise ApplicationError(
            "this request refers to input media stored in the execution journal, and this "
            "worker has none: give every worker the journal start_agent_run was given",
            type="robota.ConfigurationError",
            non_retryable=True,
        )
    records: dict[str, tuple[Any, ...]] = {}
    out: list[Message] = []
    for message in messages:
        if not isinstance(message, UserMessage) or isinstance(message.content, str):
            out.append(message)
            continue
        parts: list[MessagePart] = []
        for part in message.content:
            ref = _ref_of(part, refs)
            if ref is None:
                parts.append(part)
                continue
            key = str(ref["key"])
            if key not in records:
                settled = [r for r in await journal.read(key) if isinstance(r, EffectSettled)]
                records[key] = settled[-1].parts if settled else ()
            stored = records[key]
            slot = int(ref["slot"])
            if slot >= len(stored):
                raise ApplicationError(
                    f"the input media {key!r} (part {slot}) is missing from the journal",
                    type="robota.StorageError",
                    non_retryable=True,
                )
            parts.append(stored[slot])
        out.append(UserMessage(tuple(parts), id=message.id, created_at=message.created_at))
    return tuple(out)
