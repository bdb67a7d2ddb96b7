"""Chat Completions (``POST /chat/completions``): our messages ↔ the wire, both directions.

Shared by :class:`~robota.providers.openai.OpenAIProvider` (``api="chat"``) and
:class:`~robota.providers.openai_compatible.OpenAICompatibleProvider`; the compatible adapter
imports this module and nothing else of this package (the one allowed edge between provider
packages, held by import-linter).

Requests: the system head as a ``system`` message; a user message per input; an assistant
message with ``content`` (``None`` when it only calls tools) and ``tool_calls`` whose ids are the
provider's own, untouched (S36); one ``tool`` message per result. Tools are projected with the
OpenAI policy (S17). Structured output uses ``response_format`` as the transport the loop chose
(S18). Effort is the ``reasoning_effort`` field when the resolution sends a control (S24).

Responses, streamed or not, are tolerant of what real servers do differently — each handled on
purpose and tested:

* usage may be missing from a stream (then ``None``: unknown, never zero), arrive on a chunk
  with ``choices: []`` (OpenAI with ``include_usage``) or on the last chunk with choices;
* tool-call chunks may repeat the id and the name on every fragment (some servers), or give
  the name in pieces; arguments are always concatenated fragments, keyed by the call ``index``
  (by the call's id where a server omits the index);
* a tool call may have an empty id (Google's endpoint): kept as given, never minted (S36);
* ``content`` may be ``null`` or ``""`` with tool calls;
* an error object may arrive inside a 200 stream (OpenRouter): a ProviderError, mapped by the
  status it names;
* chunks without choices (usage, moderation) and SSE comments carry no content.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from robota.core import (
    AbortSignal,
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    DocumentPart,
    EffortResolution,
    ImagePart,
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
from robota.core.providers import NativeCapture, StreamEvent
from robota.core.schema import ProjectionPolicy
from robota.providers.openai._common import (
    USE_EFFORT,
    USE_OUTPUT,
    Driver,
    ExtraReserved,
    SDKProvider,
    ToolProjector,
    attested,
    audio_input,
    check_adapter_options,
    check_stop_count,
    count,
    data_url,
    document_name,
    given,
    incomplete_stream,
    invalid_response,
    map_error,
    member,
    no_capture,
    output_schema,
    replayed,
    sdk_call,
    unsendable,
    use_setting,
    user_content,
    with_extra_fields,
)
from robota.providers.openai._errors import from_error_payload
from robota.providers.openai._projection import OPENAI_POLICY
from robota.providers.openai._sdk import load_openai

__all__ = [
    "API_NAME",
    "CHAT_RESERVED",
    "CHAT_SETTINGS",
    "ChatCompletionsAPI",
    "ChatStreamAssembler",
    "ChatWireOptions",
    "SDKProvider",
    "chat_messages",
    "chat_params",
    "chat_response",
    "check_adapter_options",
    "encode_continuation",
    "given",
    "load_openai",
    "map_error",
    "no_capture",
    "replayed",
    "usage_from",
]

API_NAME = "chat.completions"
"""The API surface name reported with native payloads (S25), opaque to core."""


@dataclass(frozen=True, slots=True)
class ChatWireOptions:
    """How one adapter speaks Chat Completions.

    Attributes:
        max_tokens_field: ``max_completion_tokens`` (OpenAI) or ``max_tokens`` (most servers).
        stream_usage: Ask for usage on streams (``stream_options.include_usage``).
        strict_structured_output: Send ``strict: true`` for a schema the strict policy adopts
            unchanged (OpenAI Structured Outputs).
        policy: The tool-schema projection policy (S17).
        max_stop: The most stop sequences the server takes: OpenAI's Chat Completions takes 4
            (its API reference, ``stop``: "Up to 4 sequences", read 2026-12); ``None`` for a
            server that states no limit. More are refused before transport, never shortened.
        api: The API's name in error messages.
    """

    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    stream_usage: bool = True
    strict_structured_output: bool = True
    policy: ProjectionPolicy = field(default=OPENAI_POLICY)
    max_stop: int | None = 4
    api: str = "OpenAI Chat Completions"


CHAT_RESERVED: Final[ExtraReserved] = {
    **dict.fromkeys(("model", "messages", "tools", "tool_choice", "stream", "stream_options")),
    "max_completion_tokens": use_setting("max_output_tokens"),
    "max_tokens": use_setting("max_output_tokens"),
    **{
        name: use_setting(name)
        for name in (
            "temperature",
            "top_p",
            "seed",
            "presence_penalty",
            "frequency_penalty",
            "stop",
            "parallel_tool_calls",
        )
    },
    "response_format": USE_OUTPUT,
    "reasoning_effort": USE_EFFORT,
}
"""The Chat Completions body fields this adapter sets itself: ``ModelSettings.extra`` may not
name them (S28, :func:`~robota.providers._kit.with_extra_fields`)."""

_RETURNED_FIELDS = ("extra_content",)
"""Message fields a server wants back verbatim (Google's endpoint: its thought signature)."""


def _continuation(message: AssistantMessage) -> dict[str, Any]:
    if not message.continuation:
        return {}
    try:
        data = json.loads(message.continuation)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _returned(fields: object) -> dict[str, Any]:
    # Only the fields a server asks back; history may come from a file, and a continuation must
    # never be able to rewrite a message's role, content or calls.
    if not isinstance(fields, dict):
        return {}
    return {key: fields[key] for key in _RETURNED_FIELDS if key in fields}


def _continuation_fields(message: AssistantMessage) -> dict[str, Any]:
    """Fields the server asked back on this assistant message (S26), e.g. a signature."""
    return _returned(_continuation(message).get("chat_message_fields"))


def _tool_call_fields(message: AssistantMessage) -> list[dict[str, Any]]:
    """Per tool call (by position), the fields the server asked back on that call (S26)."""
    fields = _continuation(message).get("tool_call_fields")
    if not isinstance(fields, list):
        return []
    return [_returned(item) for item in fields]


def encode_continuation(message_extra: Any, call_extras: Sequence[Any]) -> str | None:
    """The continuation text (S26) for what the server wants back; ``None`` when nothing."""
    data: dict[str, Any] = {}
    if message_extra is not None:
        data["chat_message_fields"] = {"extra_content": message_extra}
    if any(extra is not None for extra in call_extras):
        data["tool_call_fields"] = [
            {"extra_content": extra} if extra is not None else {} for extra in call_extras
        ]
    return json.dumps(data, separators=(",", ":")) if data else None


CHAT_SETTINGS: Final = frozenset(
    {
        "temperature",
        "top_p",
        "max_output_tokens",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "parallel_tool_calls",
        "timeout",
        "extra",
    }
)
"""The :class:`~robota.ModelSettings` fields Chat Completions has: all of them."""


_API: Final = "OpenAI Chat Completions"


def _items(parts: Sequence[MessagePart], model: str) -> list[dict[str, Any]]:
    """Parts as Chat Completions content parts."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            out.append({"type": "image_url", "image_url": {"url": data_url(part)}})
        elif isinstance(part, DocumentPart):
            if part.data is None:
                raise unsendable(
                    part,
                    _API,
                    model,
                    "Chat Completions takes a PDF only as bytes; pass data= or use the "
                    "Responses API (api='responses'), which takes a file URL",
                )
            file = {"filename": document_name(part), "file_data": data_url(part)}
            out.append({"type": "file", "file": file})
        else:
            out.append(audio_input(part, _API, model))
    return out


def chat_messages(messages: Sequence[Message], model: str = "") -> list[dict[str, Any]]:
    """Our conversation as Chat Completions ``messages`` (``model`` names it in errors)."""
    out: list[dict[str, Any]] = []
    # A tool message takes text only: a result's media follow its group of tool messages, in
    # one user message naming the calls they came from (issue 26).
    media: list[dict[str, Any]] = []
    for message in messages:
        if media and not isinstance(message, ToolMessage):
            out.append({"role": "user", "content": media})
            media = []
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": user_content(message.content, model, _items)})
        elif isinstance(message, AssistantMessage):
            item: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                per_call = _tool_call_fields(message)
                item["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                        **(per_call[i] if i < len(per_call) else {}),
                    }
                    for i, call in enumerate(message.tool_calls)
                ]
            elif not message.content:
                item["content"] = ""
            item.update(_continuation_fields(message))
            out.append(item)
        elif isinstance(message, ToolMessage):
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
            if message.parts:
                label = f"Attached to the result of {message.tool_name} ({message.tool_call_id}):"
                media.append({"type": "text", "text": label})
                media.extend(_items(message.parts, model))
    if media:
        out.append({"role": "user", "content": media})
    return out


def _schema_format(
    schema: Mapping[str, Any], name: str, options: ChatWireOptions
) -> dict[str, Any]:
    if options.strict_structured_output:
        wire, strict = output_schema(schema)
        return {"name": name, "schema": wire, "strict": strict}
    return {"name": name, "schema": dict(schema), "strict": False}


def chat_params(
    request: ChatRequest,
    *,
    options: ChatWireOptions,
    projector: ToolProjector,
    effort: EffortResolution | None,
    stream: bool,
    provider: str = "openai",
) -> dict[str, Any]:
    """The request body of ``chat.completions.create`` for ``request``.

    ``provider`` names whose ``settings.extra`` fields the body carries (S28).
    """
    params: dict[str, Any] = {
        "model": request.model,
        "messages": chat_messages(request.messages, request.model),
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": dict(spec.parameters),
                },
            }
            for spec in map(projector.project, request.tools)
        ]
        params["tool_choice"] = request.tool_choice
    # S28: every setting this API has (CHAT_SETTINGS).
    settings = request.settings
    if settings.max_output_tokens is not None:
        params[options.max_tokens_field] = settings.max_output_tokens
    for name in ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty"):
        value = getattr(settings, name)
        if value is not None:
            params[name] = value
    if settings.stop is not None:
        check_stop_count(request, options.max_stop, api=options.api)
        params["stop"] = list(settings.stop)
    if settings.parallel_tool_calls is not None and request.tools:
        params["parallel_tool_calls"] = settings.parallel_tool_calls
    response_format = request.response_format
    if response_format is not None:
        if response_format.type == "json_schema" and response_format.schema is not None:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": _schema_format(
                    response_format.schema, response_format.name, options
                ),
            }
        else:
            params["response_format"] = {"type": "json_object"}
    if effort is not None and effort.native_value is not None:
        params["reasoning_effort"] = effort.native_value
    # ChatRequest.options: the caller's vendor options (``service_tier``, ``web_search_options``
    # …), passed through as given; they may not replace what the conversation itself decides.
    for key, value in request.options.items():
        if key not in params and key not in ("stream", "stream_options"):
            params[key] = value
    with_extra_fields(params, request, provider, reserved=CHAT_RESERVED, api=options.api)
    if stream:
        params["stream"] = True
        if options.stream_usage:
            params["stream_options"] = {"include_usage": True}
    return params


def usage_from(raw: Any) -> Usage | None:
    """Chat Completions usage normalised by core's one rule (S29, S31); ``None`` if absent.

    OpenAI's ``prompt_tokens`` include the cached ones (``prompt_tokens_details.cached_tokens``),
    and reasoning tokens are part of ``completion_tokens``; a total that does not add up (some
    servers leave thinking out of the completion count) is kept and marked partial.
    """
    if raw is None:
        return None
    details = member(raw, "prompt_tokens_details")
    return attested(
        Usage.from_counts(
            prompt=count(member(raw, "prompt_tokens")),
            completion=count(member(raw, "completion_tokens")),
            total=count(member(raw, "total_tokens")),
            cache_read=count(member(details, "cached_tokens")),
            reasoning=count(member(member(raw, "completion_tokens_details"), "reasoning_tokens")),
        )
    )


def chat_response(
    completion: Any, *, effort: EffortResolution | None, provider: str
) -> ChatResponse:
    """A complete ``ChatCompletion`` as our response.

    An answer that is not a completion — an error object in a 200 body, no ``choices`` (a web
    page at a wrong base URL) — is a :class:`~robota.ProviderError`, never an empty reply.
    """
    model = member(completion, "model") or None
    error = member(completion, "error")
    if error is not None:
        payload = error if isinstance(error, Mapping) else {"message": str(error)}
        raise from_error_payload({"error": payload}, provider=provider, model=model)
    choices = member(completion, "choices")
    if not isinstance(choices, Sequence) or isinstance(choices, str) or not choices:
        raise invalid_response(
            "the server's answer is not a chat completion (it has no choices)",
            provider=provider,
            model=model,
        )
    choice = choices[0]
    message = member(choice, "message")
    raw_calls = member(message, "tool_calls") or ()
    calls = tuple(
        ToolCall(
            str(member(call, "id") or ""),
            str(member(member(call, "function"), "name") or ""),
            str(member(member(call, "function"), "arguments") or "") or "{}",
        )
        for call in raw_calls
    )
    return ChatResponse(
        content=str(member(message, "content") or ""),
        tool_calls=calls,
        model=model,
        usage=usage_from(member(completion, "usage")),
        finish_reason=member(choice, "finish_reason"),
        continuation=encode_continuation(
            member(message, "extra_content"), [member(call, "extra_content") for call in raw_calls]
        ),
        effort=effort,
    )


@dataclass(slots=True)
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    extra: Any = None

    def complete(self) -> bool:
        """Whether the arguments so far already form one whole JSON value."""
        try:
            json.loads("".join(self.arguments))
        except ValueError:
            return False
        return True


class ChatStreamAssembler:
    """Assembles ``ChatCompletionChunk`` items into stream events (see the module docstring)."""

    __slots__ = (
        "_calls",
        "_effort",
        "_extra",
        "_finish",
        "_model",
        "_provider",
        "_requested",
        "_usage",
    )

    def __init__(self, *, provider: str, requested: str, effort: EffortResolution | None) -> None:
        self._provider = provider
        self._requested = requested
        self._effort = effort
        self._calls: dict[int, _PendingCall] = {}
        self._model: str | None = None
        self._usage: Any = None
        self._finish: str | None = None
        self._extra: Any = None

    def feed(self, chunk: Any) -> Iterable[StreamEvent]:
        """Events for one chunk: text deltas now; tool calls wait for the end of the stream."""
        error = member(chunk, "error")
        if error is not None:
            raise from_error_payload(
                {"error": error} if isinstance(error, Mapping) else {"error": {"message": error}},
                provider=self._provider,
                model=self._model or self._requested,
            )
        model = member(chunk, "model")
        if model:
            self._model = str(model)
        usage = member(chunk, "usage")
        if usage is not None:
            self._usage = usage
        events: list[StreamEvent] = []
        for choice in member(chunk, "choices") or ():
            if (member(choice, "index") or 0) != 0:
                continue  # one response: the first choice
            delta = member(choice, "delta")
            text = member(delta, "content")
            if text:
                events.append(TextDelta(str(text)))
            for fragment in member(delta, "tool_calls") or ():
                self._add_fragment(fragment)
            extra = member(delta, "extra_content")
            if extra is not None:
                self._extra = extra
            finish = member(choice, "finish_reason")
            if finish:
                self._finish = str(finish)
        return events

    def _starts_call(self, call: _PendingCall, call_id: str, name: str) -> bool:
        """Whether a fragment for ``call``'s slot actually begins another call.

        Servers that repeat or omit ``index`` (Google's endpoint) still tell calls apart: a new
        non-empty id, or a name arriving after the pending call's arguments are whole.
        """
        if call_id and call.id and call_id != call.id:
            return True
        return bool(name) and bool(call.name) and bool(call.arguments) and call.complete()

    def _add_fragment(self, fragment: Any) -> None:
        call_id = str(member(fragment, "id") or "")
        function = member(fragment, "function")
        name = str(member(function, "name") or "")
        index = count(member(fragment, "index"))
        key = index if index is not None else (next(reversed(self._calls)) if self._calls else 0)
        call = self._calls.get(key)
        if call is None or self._starts_call(call, call_id, name):
            if call is not None:
                key = max(self._calls) + 1  # the slot is taken by a finished call
            call = self._calls[key] = _PendingCall()
        if call_id and not call.id:
            call.id = call_id
        if name and name != call.name:
            # A repeated whole name is ignored; a name arriving in pieces before any argument
            # is joined.
            call.name = name if not call.name else call.name + name
        arguments = member(function, "arguments")
        if arguments:
            call.arguments.append(str(arguments))
        extra = member(fragment, "extra_content")
        if extra is not None:
            call.extra = extra

    def finish(self) -> Iterable[StreamEvent]:
        """The assembled tool calls in index order, then the one ``ResponseDone``.

        A stream that ended before the server finished the response (no ``finish_reason``) is a
        failure, never a complete reply: its last tool call may be cut short.
        """
        if self._finish is None:
            raise incomplete_stream(provider=self._provider, model=self._model or self._requested)
        calls = [call for _, call in sorted(self._calls.items())]
        events: list[StreamEvent] = [
            ToolCallReady(ToolCall(call.id, call.name, "".join(call.arguments) or "{}"))
            for call in calls
        ]
        events.append(
            ResponseDone(
                model=self._model,
                usage=usage_from(self._usage),
                finish_reason=self._finish,
                continuation=encode_continuation(self._extra, [call.extra for call in calls]),
                effort=self._effort,
            )
        )
        return events


class ChatCompletionsAPI:
    """Chat Completions calls over an ``AsyncOpenAI`` client, for one adapter."""

    __slots__ = ("_driver", "_options", "_projector", "_provider")

    def __init__(self, *, provider: str, options: ChatWireOptions) -> None:
        self._provider = provider
        self._options = options
        self._projector = ToolProjector(options.policy, provider)
        self._driver = Driver(API_NAME, provider, map_error)

    def _params(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        *,
        stream: bool,
        extra: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        params = chat_params(
            request,
            options=self._options,
            projector=self._projector,
            effort=effort,
            stream=stream,
            provider=self._provider,
        )
        if extra:
            params.update(extra)
        return params

    async def chat(
        self,
        client: Any,
        request: ChatRequest,
        *,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture = no_capture,
        extra: Mapping[str, Any] | None = None,
    ) -> ChatResponse:
        """One non-streamed call."""
        params = self._params(request, effort, stream=False, extra=extra)
        completion = await self._driver.call(
            sdk_call(client.chat.completions.create, request, str(client.base_url), params),
            request,
            params,
            signal=signal,
            capture=capture,
        )  # S27, S28: the body sent exactly, trace headers to the listed origin only
        return chat_response(completion, effort=effort, provider=self._provider)

    def chat_stream(
        self,
        client: Any,
        request: ChatRequest,
        *,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture = no_capture,
        extra: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """One streamed call."""
        params = self._params(request, effort, stream=True, extra=extra)
        return self._driver.stream(
            sdk_call(client.chat.completions.create, request, str(client.base_url), params),
            ChatStreamAssembler(provider=self._provider, requested=request.model, effort=effort),
            request,
            params,
            signal=signal,
            capture=capture,
        )  # S27, S28: the body sent exactly, trace headers to the listed origin only
