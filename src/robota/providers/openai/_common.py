"""What both OpenAI wire APIs share beyond the vendor-neutral provider kit.

The kit (:mod:`robota.providers._kit`) drives SDK calls; this module adds OpenAI's own parts:
:func:`map_error` (the ``openai`` SDK's exceptions through :mod:`._errors`, everything else
through the kit's transport mapping) and :func:`output_schema` (when Structured Outputs may be
``strict``), the user-message parts both APIs map the same way (issue 26), and which URL parts
each API fetches itself (:data:`CHAT_FETCH`, :data:`RESPONSES_FETCH`, S06).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

from robota.core import AudioPart, ConfigurationError, DocumentPart, ImagePart, MessagePart
from robota.core.schema import project_tool_schema
from robota.lowlevel import FetchRule
from robota.providers._kit import (
    USE_EFFORT,
    USE_OUTPUT,
    Driver,
    ExtraReserved,
    SDKProvider,
    StreamTranslator,
    ToolProjector,
    attested,
    base64_text,
    check_adapter_options,
    check_base_url,
    check_stop_count,
    count,
    given,
    incomplete_stream,
    invalid_response,
    map_transport_error,
    member,
    no_capture,
    replayed,
    sdk_call,
    traced_call,
    use_setting,
    with_extra_fields,
)
from robota.providers.openai._errors import map_openai_error
from robota.providers.openai._projection import OPENAI_STRICT_POLICY

__all__ = [
    "CHAT_FETCH",
    "OPENAI_AUDIO_TYPES",
    "RESPONSES_FETCH",
    "USE_EFFORT",
    "USE_OUTPUT",
    "Driver",
    "ExtraReserved",
    "SDKProvider",
    "StreamTranslator",
    "ToolProjector",
    "attested",
    "audio_input",
    "check_adapter_options",
    "check_base_url",
    "check_stop_count",
    "count",
    "data_url",
    "document_name",
    "given",
    "incomplete_stream",
    "invalid_response",
    "map_error",
    "member",
    "no_capture",
    "output_schema",
    "replayed",
    "sdk_call",
    "traced_call",
    "unsendable",
    "use_setting",
    "user_content",
    "with_extra_fields",
]

_AUDIO_FORMATS: Final[Mapping[str, Literal["wav", "mp3"]]] = {
    "audio/wav": "wav",
    "audio/mpeg": "mp3",
}
OPENAI_AUDIO_TYPES: Final = frozenset(_AUDIO_FORMATS)
"""The audio types ``input_audio`` takes (its ``format``: ``wav`` or ``mp3``)."""

_MiB: Final = 1024 * 1024
# Per-part limits for what the adapter fetches and sends inline (S06, issue 26). A PDF: 32 MiB,
# the total file content OpenAI's PDF file-input guide states for one request. Audio: 20 MiB, under
# the 25 MB OpenAI states for an uploaded audio file (it states none for input_audio).
_OPENAI_LIMITS: Final = {"image": 20 * _MiB, "document": 32 * _MiB, "audio": 20 * _MiB}

CHAT_FETCH: Final = FetchRule(
    kinds=frozenset({"document", "audio"}),
    max_bytes=_OPENAI_LIMITS,
    accepts={"audio": OPENAI_AUDIO_TYPES},
)
"""Chat Completions: OpenAI fetches an ``image_url`` itself; a ``file`` part takes a PDF only as
bytes (``file_data``) and ``input_audio`` audio only as bytes, so those URLs are fetched here."""

RESPONSES_FETCH: Final = FetchRule(
    kinds=frozenset({"audio"}),
    max_bytes=_OPENAI_LIMITS,
    accepts={"audio": OPENAI_AUDIO_TYPES},
)
"""Responses: OpenAI fetches ``input_image`` URLs and ``input_file`` URLs (``file_url``) itself;
``input_audio`` takes bytes only, so an audio URL is fetched here."""


def data_url(part: ImagePart | DocumentPart) -> str:
    """The part's URL, or its bytes as a ``data:`` URL (the one base64 copy of them, issue 26)."""
    if part.url is not None:
        return part.url
    assert part.data is not None  # a part holds exactly one of them
    return base64_text(part.data, prefix=f"data:{part.media_type};base64,")


def document_name(part: DocumentPart) -> str:
    """The file name OpenAI requires with a document's bytes."""
    return part.name or "document.pdf"


def user_content(
    content: str | tuple[MessagePart, ...],
    model: str,
    items: Callable[[Sequence[MessagePart], str], list[dict[str, Any]]],
) -> str | list[dict[str, Any]]:
    """A user message's content: a string as is, parts as the API's ``items`` writes them."""
    return content if isinstance(content, str) else items(content, model)


def unsendable(part: MessagePart, api: str, model: str, fix: str) -> ConfigurationError:
    """The error for a part ``api`` has no form for (raised before any transport)."""
    return ConfigurationError(
        f"{api} cannot send {part!r} to model {model!r}: {fix}", code="media_unsupported"
    )


def audio_input(part: AudioPart, api: str, model: str) -> dict[str, Any]:
    """An ``input_audio`` part (both APIs): base64 bytes and ``wav`` or ``mp3``."""
    if part.data is None:
        raise unsendable(part, api, model, "OpenAI takes audio only as bytes; pass data=")
    audio_format = _AUDIO_FORMATS.get(part.media_type or "")
    if audio_format is None:
        raise unsendable(
            part, api, model, "OpenAI takes audio/wav or audio/mpeg (mp3) only; convert the clip"
        )
    return {
        "type": "input_audio",
        "input_audio": {
            "data": base64_text(part.data),
            "format": audio_format,
        },
    }


def map_error(error: BaseException, *, provider: str, model: str | None) -> BaseException:
    """An exception from the ``openai`` SDK or its transport as the error to raise (S42)."""
    import openai  # noqa: PLC0415 - loaded by now; adapters import it lazily

    if isinstance(error, openai.OpenAIError):
        return map_openai_error(error, provider=provider, model=model)
    return map_transport_error(error, provider=provider, model=model)


def output_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The structured-output schema to send and whether it can be ``strict`` (S17, S18).

    Strict mode is used when the strict projection changes nothing that matters: annotations
    dropped and objects closed explicitly (a node with properties is already closed, S16) are
    fine; a field made nullable-and-required or a constraint dropped is not, because the reply
    is validated against the original schema and strict mode would then ask for something else.
    """
    result = project_tool_schema(schema, OPENAI_STRICT_POLICY)
    if (
        result.schema is not None
        and result.outcome != "rejected"
        and not result.nullable_paths
        and not result.dropped_constraints
    ):
        return dict(result.schema), True
    return dict(schema), False
