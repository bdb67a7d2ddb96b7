"""The Messages API (``POST /v1/messages``): our messages ↔ the wire, both directions.

Requests: the system head goes in ``system`` (never a message). A user message is a ``user``
turn; the tool results of one turn (consecutive :class:`~robota.ToolMessage` values) are
``tool_result`` blocks of ONE ``user`` message, in call order, ``is_error`` kept. An assistant
message becomes, in this order, the thinking / redacted-thinking blocks it carried (from its
continuation, exactly as returned, signatures included: S26), its text and one ``tool_use``
block per call (the provider's id untouched, S36; ``input`` the parsed arguments). Consecutive
turns of one role are merged, as the API requires alternation. ``max_tokens`` is always sent
(:func:`max_tokens_for`).

Prompt caching (when enabled), one documented rule with at most three of the API's four
breakpoints: ``cache_control: {"type": "ephemeral"}`` on the last ``system`` block, on the last
tool definition, and on the last block of the conversation sent (so the next round reads the
whole prefix; a thinking block is never marked — the API refuses that — the block before it is).

Responses: text blocks are concatenated (citations split one answer over several), except
whitespace-only text blocks before any text with content (adaptive thinking can open with one);
``tool_use`` blocks are the calls (``arguments`` = ``json.dumps(input)``); thinking and
redacted-thinking blocks the continuation; server-tool blocks (``server_tool_use``,
``web_search_tool_result``, ``tool_search_tool_result`` …) are the vendor's own record, never
local calls. Usage by core's rule (S29): prompt = ``input_tokens`` + ``cache_read_input_tokens``
+ ``cache_creation_input_tokens`` (Anthropic's ``input_tokens`` excludes both), cache read =
``cache_read_input_tokens``. Streams (``message_start``, ``content_block_start/delta/stop``,
``message_delta``, ``message_stop``) are assembled per block index; a stream that ends without
``message_stop`` is a failure, never a complete reply (S42).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from robota.core import (
    AssistantMessage,
    AudioPart,
    ChatRequest,
    ChatResponse,
    ConfigurationError,
    EffortResolution,
    Message,
    MessagePart,
    ModelSettings,
    ResponseDone,
    SystemMessage,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallReady,
    ToolMessage,
    Usage,
    UserMessage,
)
from robota.core.providers import StreamEvent
from robota.core.schema import project_tool_schema
from robota.providers._kit import (
    USE_EFFORT,
    ExtraReserved,
    ToolProjector,
    attested,
    base64_text,
    count,
    incomplete_stream,
    invalid_response,
    member,
    text_or_none,
    use_setting,
    with_extra_fields,
)
from robota.providers._kit import decode_continuation as decode_items
from robota.providers._kit import encode_continuation as encode_items
from robota.providers.anthropic._errors import from_error_payload
from robota.providers.anthropic._models import DEFAULT_MAX_TOKENS, MESSAGES_SETTINGS, row
from robota.providers.anthropic._projection import ANTHROPIC_POLICY

__all__ = [
    "API_NAME",
    "MESSAGES_RESERVED",
    "MESSAGES_SETTINGS",
    "NATIVE_TOOLS",
    "NON_STREAMED_MAX_TOKENS",
    "THINKING_TOP_P",
    "MessagesStreamAssembler",
    "decode_continuation",
    "encode_continuation",
    "max_tokens_for",
    "messages_params",
    "messages_response",
    "messages_usage",
    "thinking_excludes",
    "wire_messages",
]

API_NAME: Final = "messages"
"""The API surface name reported with native payloads (S25), opaque to core."""

NATIVE_TOOLS: Final[Mapping[str, Mapping[str, Any]]] = {
    "web_search": {"type": "web_search_20250305", "name": "web_search"},
}
"""Hosted (server) tools this adapter can enable (S30), as sent."""

NON_STREAMED_MAX_TOKENS: Final = 16_384
"""The default ``max_tokens`` of a non-streamed call is capped here: the SDK refuses a
non-streamed request whose ``max_tokens`` could take longer than ten minutes (~21k tokens)."""

_CONTINUATION_KEY: Final = "anthropic"
_THINKING_TYPES: Final = frozenset({"thinking", "redacted_thinking"})
_EPHEMERAL: Final[Mapping[str, str]] = {"type": "ephemeral"}
THINKING_TOP_P: Final = (0.95, 1.0)
"""The ``top_p`` range Anthropic accepts with extended thinking on (docs.anthropic.com "Extended
thinking", feature compatibility, read 2026-12: thinking is incompatible with ``temperature``
and ``top_k``; ``top_p`` may be set from 0.95 to 1)."""


def thinking_excludes(settings: ModelSettings, effort: EffortResolution | None) -> tuple[str, ...]:
    """The set sampling settings a request's extended thinking rules out (S28).

    Thinking is on when the effort resolved to a budget (a numeric native value). Then a set
    ``temperature`` is excluded, and a ``top_p`` outside :data:`THINKING_TOP_P`: not sent, and
    reported by the run (:meth:`AnthropicProvider.unsupported_request_settings`) rather than
    answered with a 400 by the API.
    """
    native = effort.native_value if effort is not None else None
    if native is None or not native.isdigit():
        return ()
    excluded: list[str] = []
    if settings.temperature is not None:
        excluded.append("temperature")
    low, high = THINKING_TOP_P
    if settings.top_p is not None and not low <= settings.top_p <= high:
        excluded.append("top_p")
    return tuple(excluded)


MESSAGES_RESERVED: Final[ExtraReserved] = {
    **dict.fromkeys(("model", "messages", "system", "tools", "tool_choice", "stream")),
    "max_tokens": use_setting("max_output_tokens"),
    "temperature": use_setting("temperature"),
    "top_p": use_setting("top_p"),
    "stop_sequences": use_setting("stop"),
    "thinking": USE_EFFORT,
    "output_config": f"{USE_EFFORT} (and the run's output= for a schema)",
}
"""The Messages body fields this adapter sets itself: ``ModelSettings.extra`` may not name
them (S28). ``tool_choice`` carries ``ModelSettings.parallel_tool_calls``."""

_TOOL_CHOICE: Final[Mapping[str, Mapping[str, str]]] = {
    "auto": {"type": "auto"},
    "required": {"type": "any"},
    "none": {"type": "none"},
}


# ------------------------------------------------------------------------ continuation (S26)


def _thinking_block(block: Any) -> dict[str, Any] | None:
    """A thinking or redacted-thinking block exactly as it must go back, else ``None``."""
    kind = member(block, "type")
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": str(member(block, "thinking") or ""),
            "signature": str(member(block, "signature") or ""),
        }
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": str(member(block, "data") or "")}
    return None


def encode_continuation(blocks: Sequence[Mapping[str, Any]]) -> str | None:
    """The continuation text (S26) for a reply's thinking blocks; ``None`` when there are none."""
    return encode_items(_CONTINUATION_KEY, "thinking", blocks)


def decode_continuation(text: str | None) -> list[dict[str, Any]]:
    """The thinking blocks a continuation carries; none for another provider's continuation."""
    blocks = decode_items(text, _CONTINUATION_KEY, "thinking")
    return [b for b in blocks if b.get("type") in _THINKING_TYPES]


# ------------------------------------------------------------------------------ requests


def _tool_input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the ``input`` object (``{}`` when they are not a JSON object)."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _user_blocks(content: str | tuple[MessagePart, ...]) -> list[dict[str, Any]]:
    """A user message as content blocks: text, ``image`` and ``document`` (base64 or URL)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextPart):
            if part.text:  # the API refuses an empty text block
                blocks.append({"type": "text", "text": part.text})
            continue
        if isinstance(part, AudioPart):
            raise ConfigurationError(
                f"Anthropic's Messages API takes no audio: {part!r} was not sent; transcribe "
                "it first, or use a provider that takes audio (OpenAI, Gemini)",
                code="media_unsupported",
            )
        source: dict[str, Any]
        if part.url is not None:
            source = {"type": "url", "url": part.url}
        else:
            assert part.data is not None  # a part holds exactly one of them
            # The one base64 copy of the bytes (issue 26: built in one allocation).
            encoded = base64_text(part.data)
            source = {"type": "base64", "media_type": part.media_type, "data": encoded}
        blocks.append({"type": part.kind, "source": source})  # "image" or "document"
    return blocks


def wire_messages(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` for our conversation (see the module docstring)."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.content)
        elif isinstance(message, UserMessage):
            add("user", _user_blocks(message.content))
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = decode_continuation(message.continuation)
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            blocks.extend(
                {
                    "type": "tool_use",
                    "id": call.id,  # S36: the provider's own id, untouched
                    "name": call.name,
                    "input": _tool_input(call.arguments),
                }
                for call in message.tool_calls
            )
            add("assistant", blocks)
        elif isinstance(message, ToolMessage):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                # issue 26: a result's images and documents as blocks after its text
                "content": _user_blocks((TextPart(message.content), *message.parts))
                if message.parts
                else message.content,
            }
            if message.is_error:
                result["is_error"] = True
            add("user", [result])
    return ("\n\n".join(system) if system else None), turns


def max_tokens_for(request: ChatRequest, *, streamed: bool) -> int:
    """The ``max_tokens`` sent: the caller's, else the model's max output, else the default.

    A non-streamed call's default is capped at :data:`NON_STREAMED_MAX_TOKENS`.
    """
    if request.max_output_tokens is not None:
        return request.max_output_tokens
    entry = row(request.model)
    value = entry.max_output_tokens if entry is not None else DEFAULT_MAX_TOKENS
    return min(value, NON_STREAMED_MAX_TOKENS) if not streamed else value


def _mark_last(blocks: list[dict[str, Any]]) -> None:
    for block in reversed(blocks):
        if block.get("type") not in _THINKING_TYPES:
            block["cache_control"] = dict(_EPHEMERAL)
            return


def messages_params(
    request: ChatRequest,
    *,
    projector: ToolProjector,
    effort: EffortResolution | None,
    prompt_caching: bool,
    stream: bool,
    provider: str = "anthropic",
) -> dict[str, Any]:
    """The request body of ``messages.create`` for ``request``.

    ``provider`` names whose ``settings.extra`` fields the body carries (S28).

    Raises:
        ConfigurationError: for a temperature above 1, which the Messages API refuses.
    """
    settings = request.settings
    if settings.temperature is not None and settings.temperature > 1:
        raise ConfigurationError(
            f"Anthropic takes a temperature from 0 to 1, got {settings.temperature}; "
            "set ModelSettings(temperature=...) within that range"
        )
    system, turns = wire_messages(request.messages)
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": max_tokens_for(request, streamed=stream),
        "messages": turns,
    }
    if system is not None:
        if prompt_caching:
            params["system"] = [{"type": "text", "text": system, "cache_control": dict(_EPHEMERAL)}]
        else:
            params["system"] = system
    tools: list[dict[str, Any]] = [
        {
            "name": spec.name,
            "description": spec.description,
            "input_schema": dict(spec.parameters),
        }
        for spec in map(projector.project, request.tools)
    ]
    tools.extend(dict(NATIVE_TOOLS[name]) for name in request.native_tools if name in NATIVE_TOOLS)
    if tools:
        if prompt_caching:
            tools[-1]["cache_control"] = dict(_EPHEMERAL)
        params["tools"] = tools
        choice: dict[str, Any] = dict(_TOOL_CHOICE[request.tool_choice])
        if settings.parallel_tool_calls is False and request.tool_choice != "none":
            choice["disable_parallel_tool_use"] = True
        params["tool_choice"] = choice
    if prompt_caching and turns:
        _mark_last(turns[-1]["content"])
    native = effort.native_value if effort is not None else None
    # S24: a numeric native value is an extended-thinking budget; a word is the model's own
    # effort control (``output_config.effort``), which leaves sampling alone.
    thinking = native is not None and native.isdigit()
    if native is not None and thinking:
        params["thinking"] = {"type": "enabled", "budget_tokens": int(native)}
    elif native is not None:
        params["output_config"] = {"effort": native}
    # S28: the provider reported what thinking excludes and the request arrives without it;
    # this keeps a direct call of this function from sending what the API refuses.
    excluded = thinking_excludes(settings, effort)
    if settings.temperature is not None and "temperature" not in excluded:
        params["temperature"] = settings.temperature
    if settings.top_p is not None and "top_p" not in excluded:
        params["top_p"] = settings.top_p
    if settings.stop is not None:
        params["stop_sequences"] = list(settings.stop)
    response_format = request.response_format
    entry = row(request.model)
    if (
        response_format is not None
        and response_format.type == "json_schema"
        and response_format.schema is not None
        and entry is not None
        and entry.structured_output
    ):
        # S18: the table says this model takes a schema; otherwise core has already put the
        # instruction in the system head and nothing is sent here.
        projected = project_tool_schema(response_format.schema, ANTHROPIC_POLICY).schema
        schema = dict(projected if projected is not None else response_format.schema)
        params.setdefault("output_config", {})["format"] = {"type": "json_schema", "schema": schema}
    # ChatRequest.options: the caller's vendor options (``metadata``, ``top_k`` …), passed
    # through as given; they may not replace what the conversation itself decides.
    for key, value in request.options.items():
        if key not in params and key != "stream":
            params[key] = value
    with_extra_fields(
        params, request, provider, reserved=MESSAGES_RESERVED, api="Anthropic Messages"
    )
    if stream:
        params["stream"] = True
    return params


# ----------------------------------------------------------------------------- responses


def messages_usage(raw: Any) -> Usage | None:
    """Messages usage by core's rule (S29): cache reads and writes are part of the prompt."""
    if raw is None:
        return None
    fresh = count(member(raw, "input_tokens"))
    read = count(member(raw, "cache_read_input_tokens"))
    written = count(member(raw, "cache_creation_input_tokens"))
    prompt = None if fresh is None else fresh + (read or 0) + (written or 0)
    return attested(
        Usage.from_counts(
            prompt=prompt,
            completion=count(member(raw, "output_tokens")),
            cache_read=read,
        )
    )


def messages_response(
    message: Any, *, effort: EffortResolution | None, provider: str
) -> ChatResponse:
    """A complete ``Message`` as our response."""
    model = member(message, "model") or None
    if member(message, "type") == "error":
        raise from_error_payload(_plain(message), provider=provider, model=model)
    content = member(message, "content")
    if not isinstance(content, list):
        raise invalid_response(
            "the server's answer is not a Messages API response (it has no content)",
            provider=provider,
            model=model,
        )
    text: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[dict[str, Any]] = []
    for block in content:
        kind = member(block, "type")
        if kind == "text":
            piece = str(member(block, "text") or "")
            if text or piece.strip():
                text.append(piece)
        elif kind == "tool_use":
            calls.append(
                ToolCall(
                    str(member(block, "id") or ""),
                    str(member(block, "name") or ""),
                    json.dumps(member(block, "input") or {}),
                )
            )
        else:
            kept = _thinking_block(block)
            if kept is not None:
                thinking.append(kept)
    return ChatResponse(
        content="".join(text),
        tool_calls=tuple(calls),
        model=model,
        usage=messages_usage(member(message, "usage")),
        finish_reason=text_or_none(member(message, "stop_reason")),
        continuation=encode_continuation(thinking),
        effort=effort,
    )


def _plain(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    return dump(mode="json", exclude_none=True) if dump is not None else obj


@dataclass(slots=True)
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)  # text, input JSON or thinking fragments
    signature: str = ""
    data: str = ""
    initial_input: Any = None


class MessagesStreamAssembler:
    """Assembles Messages stream events into our stream events (see the module docstring)."""

    __slots__ = (
        "_blocks",
        "_effort",
        "_finish_reason",
        "_held",
        "_model",
        "_provider",
        "_stopped",
        "_text_seen",
        "_usage",
    )

    def __init__(self, *, provider: str, effort: EffortResolution | None) -> None:
        self._provider = provider
        self._effort = effort
        self._blocks: dict[int, _Block] = {}
        self._model: str | None = None
        self._usage: dict[str, Any] = {}
        self._finish_reason: str | None = None
        self._stopped = False
        self._text_seen = False
        self._held = ""  # leading whitespace-only text, until text with content arrives

    def _read_usage(self, raw: Any) -> None:
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = count(member(raw, key))
            if value is not None:
                self._usage[key] = value

    def feed(self, event: Any) -> Iterable[StreamEvent]:
        """Events for one stream event."""
        kind = member(event, "type")
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_start":
            block = member(event, "content_block")
            index = int(member(event, "index") or 0)
            state = _Block(str(member(block, "type") or ""))
            state.id = str(member(block, "id") or "")
            state.name = str(member(block, "name") or "")
            state.initial_input = member(block, "input")
            state.signature = str(member(block, "signature") or "")
            state.data = str(member(block, "data") or "")
            if state.kind == "thinking" and member(block, "thinking"):
                state.parts.append(str(member(block, "thinking")))
            self._blocks[index] = state
            if state.kind == "text" and member(block, "text"):
                return self._text(str(member(block, "text")))
            return ()
        if kind == "message_start":
            message = member(event, "message")
            self._model = member(message, "model") or self._model
            self._read_usage(member(message, "usage"))
            return ()
        if kind == "message_delta":
            self._finish_reason = text_or_none(member(member(event, "delta"), "stop_reason"))
            self._read_usage(member(event, "usage"))
            return ()
        if kind == "message_stop":
            self._stopped = True
            return ()
        if kind == "error":
            raise from_error_payload(_plain(event), provider=self._provider, model=self._model)
        return ()  # content_block_stop, ping and future events carry nothing we need

    def _text(self, piece: str) -> Iterable[StreamEvent]:
        if not self._text_seen:
            if not piece.strip():
                self._held += piece
                return ()
            self._text_seen = True
            piece, self._held = self._held + piece, ""
            if not piece.strip():
                return ()
        return (TextDelta(piece),)

    def _delta(self, event: Any) -> Iterable[StreamEvent]:
        index = int(member(event, "index") or 0)
        delta = member(event, "delta")
        state = self._blocks.get(index)
        if state is None:
            state = self._blocks[index] = _Block("text")
        kind = member(delta, "type")
        if kind == "text_delta":
            piece = str(member(delta, "text") or "")
            return self._text(piece) if piece else ()
        if kind == "input_json_delta":
            state.parts.append(str(member(delta, "partial_json") or ""))
        elif kind == "thinking_delta":
            state.parts.append(str(member(delta, "thinking") or ""))
        elif kind == "signature_delta":
            state.signature += str(member(delta, "signature") or "")
        return ()

    def finish(self) -> Iterable[StreamEvent]:
        """The tool calls in block order, then the one ``ResponseDone``."""
        if not self._stopped:
            # No message_stop: the stream was cut short, and its last block may be too (S42).
            raise incomplete_stream(provider=self._provider, model=self._model)
        events: list[StreamEvent] = []
        thinking: list[dict[str, Any]] = []
        for index in sorted(self._blocks):
            state = self._blocks[index]
            if state.kind == "tool_use":
                arguments = "".join(state.parts)
                if not arguments:
                    arguments = json.dumps(state.initial_input or {})
                events.append(ToolCallReady(ToolCall(state.id, state.name, arguments)))
            elif state.kind == "thinking":
                thinking.append(
                    {
                        "type": "thinking",
                        "thinking": "".join(state.parts),
                        "signature": state.signature,
                    }
                )
            elif state.kind == "redacted_thinking":
                thinking.append({"type": "redacted_thinking", "data": state.data})
        events.append(
            ResponseDone(
                model=self._model,
                usage=messages_usage(self._usage) if self._usage else None,
                finish_reason=self._finish_reason,
                continuation=encode_continuation(thinking),
                effort=self._effort,
            )
        )
        return events
