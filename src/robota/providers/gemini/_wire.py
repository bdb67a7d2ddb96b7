"""Gemini's ``generateContent`` wire: our messages ↔ the SDK's request and response, both ways.

Pure functions and one assembler, tested on the recordings without a network.

Requests (``models.generate_content(model=, contents=, config=)``): the system head is
``config.system_instruction``; a user message is a ``user`` content with one text part; an
assistant message is a ``model`` content whose parts are, in this order, the signed thought
parts its continuation kept, its text (one part, carrying the text part's thought signature) and
one ``function_call`` part per tool call (name, parsed arguments, the call's signature and, when
Gemini gave one, its id); consecutive tool results are one ``user`` content of
``function_response`` parts (name, ``{"result": content}`` — ``{"error": content}`` for a
failed tool — and the id when the call had one). Tools are ``function_declarations`` whose
``parameters`` are the schema projected by :data:`GEMINI_POLICY` (an OpenAPI-3.0 subset, which is
what the SDK's ``Schema`` takes; a tool without parameters sends none, since Gemini refuses an
``OBJECT`` with no properties); ``tool_choice`` is ``function_calling_config.mode`` AUTO / ANY /
NONE. Structured output is ``response_mime_type: application/json`` plus
``response_json_schema`` (the caller's JSON Schema, which that field accepts unprojected).

S26 — thought signatures: Gemini signs parts (a ``function_call`` part, a text part, a thought)
and needs each signature back on the same kind of part on the next turn. A reply's continuation
is ``{"gemini": {"text": sig, "calls": {"<index>": sig}, "thoughts": [{"text", "sig"}]}}`` with
the signatures base64-encoded exactly as received; only the first signed text part's signature
is kept (an answer is sent back as one text part), and unsigned thought parts are dropped
(thought summaries are never reply text).

S36 — call ids: Gemini 2.x returns calls without ids (the same function may be called three
times in one turn); Gemini 3 returns ids. A provider id is kept untouched. A call without one
gets the id ``gemini-call-<n>`` — ``n`` its position among the reply's calls — which this adapter
never sends: such a call and its result go back without ``id``, matched by Gemini the way it
documents for id-less calls, by name and order (results are sent in the order the runtime gives
them, which is call order).

Usage (S29): prompt = ``promptTokenCount`` (it includes ``cachedContentTokenCount``, reported as
``cache_read``) + ``toolUsePromptTokenCount``; completion = ``candidatesTokenCount`` +
``thoughtsTokenCount`` (reported as ``reasoning``); total = ``totalTokenCount``. A count the API
leaves out is 0 (proto3 JSON omits zeros) except the prompt count, whose absence is "not
reported"; a total that does not add up marks the usage partial. The model is ``modelVersion``
(the one that answered, S30).

Finish: ``finishReason`` is kept as given (``STOP``, ``MAX_TOKENS``, ``SAFETY`` …). A ``SAFETY``
(or other) stop with no parts is an empty reply, not an error: the vendor answered, and the
finish reason says why there is nothing; a blocked prompt (no candidates, a
``promptFeedback.blockReason``) is the same, with the block reason as the finish reason.
Streams: every chunk is a whole ``GenerateContentResponse``; text parts are deltas, a
``function_call`` part is a whole call, the usage of the last chunk that has one wins (early
chunks may report other prompt counts), and a stream that ends without a finish reason is the
kit's ``incomplete_stream``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from robota.core import (
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    ConfigurationError,
    EffortResolution,
    Message,
    MessagePart,
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
from robota.providers._kit import (
    USE_EFFORT,
    USE_OUTPUT,
    ExtraReserved,
    ToolProjector,
    attested,
    check_stop_count,
    count,
    extra_collision,
    incomplete_stream,
    invalid_response,
    member,
    use_setting,
)

__all__ = [
    "API_NAME",
    "CONTINUATION_KEY",
    "GEMINI_MAX_STOP",
    "GEMINI_RESERVED",
    "GEMINI_SETTINGS",
    "GENERATION_RESERVED",
    "MINTED_PREFIX",
    "GeminiStreamAssembler",
    "check_extra",
    "gemini_contents",
    "gemini_params",
    "gemini_response",
    "gemini_usage",
]

API_NAME: Final = "generate_content"
"""The API surface name reported with native payloads (S25), opaque to core."""

CONTINUATION_KEY: Final = "gemini"
MINTED_PREFIX: Final = "gemini-call-"
"""Ids this adapter gives calls Gemini returned without one (S36); never sent back."""

_MODES: Final[Mapping[str, str]] = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
_HOSTED_TOOLS: Final[Mapping[str, Mapping[str, Any]]] = {"google_search": {"google_search": {}}}


# ------------------------------------------------------------------------ thought signatures


def _encode_signature(value: Any) -> str | None:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, str) and value:
        return value  # already base64 text (a dict-shaped response)
    return None


def _decode_signature(value: object) -> bytes | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        if "-" in value or "_" in value:
            return base64.urlsafe_b64decode(value.encode("ascii"))
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, ValueError):
        return None


def _decode_continuation(text: str | None) -> Mapping[str, Any]:
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}  # written by another provider: not ours to read
    own = data.get(CONTINUATION_KEY) if isinstance(data, dict) else None
    return own if isinstance(own, dict) else {}


# ------------------------------------------------------------------------------- requests


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    kept = _decode_continuation(message.continuation)
    parts: list[dict[str, Any]] = []
    for thought in kept.get("thoughts") or ():
        signature = _decode_signature(thought.get("sig")) if isinstance(thought, dict) else None
        if signature is not None:
            parts.append(
                {
                    "text": str(thought.get("text") or ""),
                    "thought": True,
                    "thought_signature": signature,
                }
            )
    text_signature = _decode_signature(kept.get("text"))
    if message.content or text_signature is not None:
        part: dict[str, Any] = {"text": message.content}
        if text_signature is not None:
            part["thought_signature"] = text_signature
        parts.append(part)
    signatures = kept.get("calls")
    signatures = signatures if isinstance(signatures, dict) else {}
    for index, call in enumerate(message.tool_calls):
        function_call: dict[str, Any] = {"name": call.name, "args": _arguments(call.arguments)}
        if call.id and not call.id.startswith(MINTED_PREFIX):
            function_call["id"] = call.id
        part = {"function_call": function_call}
        signature = _decode_signature(signatures.get(str(index)))
        if signature is not None:
            part["thought_signature"] = signature
        parts.append(part)
    return parts


def _function_response(message: ToolMessage) -> dict[str, Any]:
    response = {"error" if message.is_error else "result": message.content}
    body: dict[str, Any] = {"name": message.tool_name, "response": response}
    if message.tool_call_id and not message.tool_call_id.startswith(MINTED_PREFIX):
        body["id"] = message.tool_call_id
    return {"function_response": body}


def _user_parts(content: str | tuple[MessagePart, ...]) -> list[dict[str, Any]]:
    """A user message's parts: ``text``, ``inline_data`` (bytes) or ``file_data`` (a URL).

    The bytes go to the SDK as they are; it base64-encodes them once, on the wire.
    """
    if isinstance(content, str):
        return [{"text": content}]
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextPart):
            parts.append({"text": part.text})
        elif part.data is not None:
            parts.append({"inline_data": {"mime_type": part.media_type, "data": part.data}})
        else:
            file: dict[str, Any] = {"file_uri": part.url}
            if part.media_type is not None:
                file["mime_type"] = part.media_type
            parts.append({"file_data": file})
    return parts


def gemini_contents(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system_instruction, contents)`` for our conversation."""
    system: str | None = None
    contents: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []

    def flush() -> None:
        if results:
            contents.append({"role": "user", "parts": list(results)})
            results.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            results.append(_function_response(message))
            if message.parts:  # issue 26: a result's media follow in the same user turn
                results.extend(_user_parts(message.parts))
            continue
        flush()
        if isinstance(message, SystemMessage):
            # Every system message is kept, joined in order (a direct request may carry more
            # than the one head history holds).
            system = message.content if system is None else f"{system}\n\n{message.content}"
        elif isinstance(message, UserMessage):
            contents.append({"role": "user", "parts": _user_parts(message.content)})
        elif isinstance(message, AssistantMessage):
            parts = _model_parts(message)
            if parts:  # Gemini refuses a content without parts
                contents.append({"role": "model", "parts": parts})
    flush()
    return system, contents


def _declaration(spec: Any) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": spec.name, "description": spec.description}
    parameters = dict(spec.parameters)
    if parameters.get("properties"):
        declaration["parameters"] = parameters
    return declaration


def _thinking(effort: EffortResolution | None, kind: str | None) -> dict[str, Any] | None:
    if effort is None or effort.native_value is None or kind is None:
        return None
    if kind == "budget":
        return {"thinking_budget": int(effort.native_value)}
    return {"thinking_level": effort.native_value.upper()}


GEMINI_SETTINGS: Final = frozenset(
    {
        "temperature",
        "top_p",
        "max_output_tokens",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "timeout",
        "extra",
    }
)
"""The :class:`~robota.ModelSettings` fields the Gemini API has (google-genai's
``GenerateContentConfig``: ``temperature``, ``top_p``, ``max_output_tokens``, ``stop_sequences``,
``seed``, ``presence_penalty``, ``frequency_penalty``; ``HttpOptions`` ``timeout`` and
``extra_body``). It has no control over parallel function calls."""

GEMINI_MAX_STOP: Final = 5
"""The most stop sequences Gemini takes (the Gemini API reference, ``GenerationConfig``
``stopSequences``: "up to 5", read 2026-12); more are refused before transport, never
shortened."""

GEMINI_RESERVED: Final[ExtraReserved] = dict.fromkeys(
    ("model", "contents", "system_instruction", "tools", "tool_config")
)
"""The REST body fields (snake_case) this adapter sets itself, besides ``generationConfig``:
``ModelSettings.extra`` may not name them (S28)."""

GENERATION_RESERVED: Final[ExtraReserved] = {
    **{
        name: use_setting(name)
        for name in (
            "temperature",
            "top_p",
            "max_output_tokens",
            "seed",
            "presence_penalty",
            "frequency_penalty",
        )
    },
    "stop_sequences": use_setting("stop"),
    "response_mime_type": USE_OUTPUT,
    "response_json_schema": USE_OUTPUT,
    "response_schema": USE_OUTPUT,
    "thinking_config": USE_EFFORT,
}
"""The ``generationConfig`` fields (snake_case) this adapter sets itself; any other one
(``topK``, ``responseModalities`` …) may come through ``extra``."""

_CAMEL: Final = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(key: str) -> str:
    return _CAMEL.sub("_", key).lower()


def check_extra(extra: Mapping[str, object], request: ChatRequest, provider: str) -> None:
    """Refuse an ``extra`` field that collides with one this adapter sets (S28).

    google-genai merges ``HttpOptions.extra_body`` recursively over the REST body, in either
    case (``generationConfig`` or ``generation_config``), so a colliding field would replace
    what the run built (``contents`` included). The rule every adapter follows: refuse it,
    before transport. Inside ``generationConfig`` only the fields this adapter sets collide;
    a field it never sets (``topK``) merges in. ``request.options`` fields count as set.

    Raises:
        ConfigurationError: naming the field and what to use instead.
    """
    options = {_snake(key) for key in request.options}

    def refuse(key: str, instead: str | None) -> ConfigurationError:
        return extra_collision(key, instead, request=request, provider=provider, api="Gemini")

    for key, value in extra.items():
        name = _snake(key)
        if name != "generation_config":
            if name in GEMINI_RESERVED or name in options:
                raise refuse(key, GEMINI_RESERVED.get(name))
            continue
        if not isinstance(value, Mapping):
            raise refuse(key, None)  # it would replace the whole generationConfig
        for inner in value:
            inner_name = _snake(str(inner))
            if inner_name in GENERATION_RESERVED or inner_name in options:
                raise refuse(f"{key}.{inner}", GENERATION_RESERVED.get(inner_name))


_SAMPLING: Final = (
    "temperature",
    "top_p",
    "max_output_tokens",
    "seed",
    "presence_penalty",
    "frequency_penalty",
)


def gemini_params(
    request: ChatRequest,
    *,
    projector: ToolProjector,
    effort: EffortResolution | None,
    thinking: str | None,
    provider: str = "gemini",
) -> dict[str, Any]:
    """The keyword arguments of ``models.generate_content[_stream]`` for ``request``.

    ``thinking`` is the model row's control kind (``"budget"``, ``"level"`` or ``None``);
    ``provider`` names whose ``settings.extra`` fields go into the REST body (the SDK's
    per-request ``http_options.extra_body``, shaped as the REST API names them, S28).
    """
    system, contents = gemini_contents(request.messages)
    config: dict[str, Any] = {}
    if system is not None:
        config["system_instruction"] = system
    tools: list[dict[str, Any]] = []
    declarations = [_declaration(projector.project(spec)) for spec in request.tools]
    if declarations:
        tools.append({"function_declarations": declarations})
    tools.extend(
        dict(_HOSTED_TOOLS[name]) for name in request.native_tools if name in _HOSTED_TOOLS
    )
    if tools:
        config["tools"] = tools
    if declarations:
        config["tool_config"] = {"function_calling_config": {"mode": _MODES[request.tool_choice]}}
        # Declarations, not Python callables: the SDK must never run tools itself.
        config["automatic_function_calling"] = {"disable": True}
    # S28: GenerateContentConfig's sampling fields (GEMINI_SETTINGS).
    settings = request.settings
    for name in _SAMPLING:
        value = getattr(settings, name)
        if value is not None:
            config[name] = value
    if settings.stop is not None:
        check_stop_count(request, GEMINI_MAX_STOP, api="Gemini")
        config["stop_sequences"] = list(settings.stop)
    http: dict[str, Any] = {}
    if settings.timeout is not None:
        http["timeout"] = max(1, round(settings.timeout * 1000))  # the SDK counts milliseconds
    extra = settings.extra_for(provider)
    if extra:
        check_extra(extra, request, provider)
        http["extra_body"] = dict(extra)
    if http:
        config["http_options"] = http
    response_format = request.response_format
    if response_format is not None:
        config["response_mime_type"] = "application/json"
        if response_format.type == "json_schema" and response_format.schema is not None:
            config["response_json_schema"] = dict(response_format.schema)
    thinking_config = _thinking(effort, thinking)
    if thinking_config is not None:
        config["thinking_config"] = thinking_config
    # ChatRequest.options: the caller's generation options (``safety_settings``,
    # ``cached_content`` …), passed through; they may not replace what the conversation decides.
    for key, value in request.options.items():
        config.setdefault(key, value)
    return {"model": request.model, "contents": contents, "config": config}


# ------------------------------------------------------------------------------ responses


def gemini_usage(raw: Any) -> Usage | None:
    """``usageMetadata`` by the rule in the module docstring (S29, S31)."""
    if raw is None:
        return None
    prompt = count(member(raw, "prompt_token_count"))
    tool_prompt = count(member(raw, "tool_use_prompt_token_count")) or 0
    candidates = count(member(raw, "candidates_token_count")) or 0
    thoughts = count(member(raw, "thoughts_token_count"))
    cached = count(member(raw, "cached_content_token_count"))
    return attested(
        Usage.from_counts(
            prompt=None if prompt is None else prompt + tool_prompt,
            completion=candidates + (thoughts or 0),
            total=count(member(raw, "total_token_count")),
            cache_read=cached,
            reasoning=thoughts,
        )
    )


def _enum_text(value: Any) -> str | None:
    if value is None:
        return None
    text = getattr(value, "value", value)
    return str(text) if text else None


class _Reply:
    """A reply's parts as they arrive (whole, or chunk by chunk): text, calls, signatures."""

    __slots__ = ("call_signatures", "calls", "finish_reason", "text", "text_signature", "thoughts")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.text_signature: str | None = None
        self.call_signatures: dict[str, str] = {}
        self.thoughts: list[dict[str, str]] = []
        self.finish_reason: str | None = None

    def add(self, response: Any) -> list[str]:
        """Take one ``GenerateContentResponse``; returns its reply-text pieces."""
        pieces: list[str] = []
        candidates = member(response, "candidates") or ()
        if not candidates:
            blocked = _enum_text(member(member(response, "prompt_feedback"), "block_reason"))
            if blocked:
                self.finish_reason = blocked
            return pieces
        candidate = candidates[0]
        for part in member(member(candidate, "content"), "parts") or ():
            signature = _encode_signature(member(part, "thought_signature"))
            function_call = member(part, "function_call")
            text = member(part, "text")
            if function_call is not None:
                index = len(self.calls)
                call_id = member(function_call, "id") or f"{MINTED_PREFIX}{index}"
                args = member(function_call, "args")
                self.calls.append(
                    ToolCall(
                        str(call_id),
                        str(member(function_call, "name") or ""),
                        json.dumps(args if isinstance(args, Mapping) else {}, ensure_ascii=False),
                    )
                )
                if signature is not None:
                    self.call_signatures[str(index)] = signature
            elif member(part, "thought"):
                if signature is not None:
                    self.thoughts.append({"text": str(text or ""), "sig": signature})
            elif text is not None:
                if text:
                    self.text.append(str(text))
                    pieces.append(str(text))
                if signature is not None and self.text_signature is None:
                    self.text_signature = signature
        reason = _enum_text(member(candidate, "finish_reason"))
        if reason:
            self.finish_reason = reason
        return pieces

    def continuation(self) -> str | None:
        """The continuation text (S26), ``None`` when nothing was signed."""
        kept: dict[str, Any] = {}
        if self.text_signature is not None:
            kept["text"] = self.text_signature
        if self.call_signatures:
            kept["calls"] = dict(self.call_signatures)
        if self.thoughts:
            kept["thoughts"] = list(self.thoughts)
        if not kept:
            return None
        return json.dumps({CONTINUATION_KEY: kept}, separators=(",", ":"))


def _looks_like_response(response: Any) -> bool:
    return any(
        member(response, name) is not None
        for name in ("candidates", "usage_metadata", "prompt_feedback")
    )


def gemini_response(
    response: Any, *, effort: EffortResolution | None, provider: str, model: str | None
) -> ChatResponse:
    """A complete ``GenerateContentResponse`` as our response."""
    answering = member(response, "model_version") or None
    if not _looks_like_response(response):
        raise invalid_response(
            "the server's answer is not a generateContent response (no candidates, no usage)",
            provider=provider,
            model=answering or model,
        )
    reply = _Reply()
    reply.add(response)
    return ChatResponse(
        content="".join(reply.text),
        tool_calls=tuple(reply.calls),
        model=answering,
        usage=gemini_usage(member(response, "usage_metadata")),
        finish_reason=reply.finish_reason,
        continuation=reply.continuation(),
        effort=effort,
    )


class GeminiStreamAssembler:
    """Assembles streamed ``GenerateContentResponse`` chunks into our stream events."""

    __slots__ = ("_answering", "_effort", "_model", "_provider", "_reply", "_usage")

    def __init__(self, *, provider: str, model: str | None, effort: EffortResolution | None):
        self._provider = provider
        self._model = model
        self._effort = effort
        self._reply = _Reply()
        self._usage: Any = None
        self._answering: str | None = None

    def feed(self, chunk: Any) -> Iterable[StreamEvent]:
        """Text deltas for one chunk (calls are reported when the stream finishes)."""
        self._answering = member(chunk, "model_version") or self._answering
        usage = member(chunk, "usage_metadata")
        if usage is not None:
            self._usage = usage  # the last chunk that reports usage wins
        return [TextDelta(piece) for piece in self._reply.add(chunk)]

    def finish(self) -> Iterable[StreamEvent]:
        """The tool calls in reply order, then the one ``ResponseDone``."""
        if self._reply.finish_reason is None:
            raise incomplete_stream(provider=self._provider, model=self._answering or self._model)
        events: list[StreamEvent] = [ToolCallReady(call) for call in self._reply.calls]
        events.append(
            ResponseDone(
                model=self._answering,
                usage=gemini_usage(self._usage),
                finish_reason=self._reply.finish_reason,
                continuation=self._reply.continuation(),
                effort=self._effort,
            )
        )
        return events
