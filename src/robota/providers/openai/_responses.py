"""The Responses API (``POST /responses``): our messages ↔ the wire, both directions.

Requests are stateless (``store: false``): everything a later turn needs travels with it. The
system head is the ``instructions`` field; user input is an ``input`` message; an assistant
message becomes, in this order, the reasoning items it carried (from its continuation, S26),
its text as an assistant message and one ``function_call`` item per tool call (``call_id`` is
the provider's id, untouched, S36); a tool result is a ``function_call_output`` linked by
``call_id``. Reasoning items keep their ``encrypted_content`` whole, which is why
``include: ["reasoning.encrypted_content"]`` is asked for whenever the model may reason.

Responses: ``message`` items give the text (a reply can carry text *and* calls, e.g. a
``phase: commentary`` message before a call); ``function_call`` items the calls, linked by
``call_id`` (not the item ``id``); ``reasoning`` items (and their summaries, which are not reply
text) the continuation; hosted-tool items such as ``web_search_call`` are the vendor's own
record and are not local calls. Streams are assembled from ``response.output_text.delta``,
``response.output_item.added/done`` and ``response.function_call_arguments.delta`` (fragments
keyed by item), ending with ``response.completed`` (or ``response.incomplete``); a
``response.failed`` or ``error`` event is a :class:`~robota.ProviderError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from robota.core import (
    AbortSignal,
    AssistantMessage,
    AudioPart,
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
from robota.providers._kit import decode_continuation as decode_items
from robota.providers._kit import encode_continuation as encode_items
from robota.providers.openai._common import (
    USE_EFFORT,
    USE_OUTPUT,
    Driver,
    ExtraReserved,
    ToolProjector,
    attested,
    audio_input,
    count,
    data_url,
    document_name,
    incomplete_stream,
    invalid_response,
    map_error,
    member,
    no_capture,
    output_schema,
    sdk_call,
    unsendable,
    use_setting,
    user_content,
    with_extra_fields,
)
from robota.providers.openai._errors import from_error_payload
from robota.providers.openai._projection import OPENAI_POLICY

__all__ = [
    "API_NAME",
    "RESPONSES_RESERVED",
    "RESPONSES_SETTINGS",
    "ResponsesAPI",
    "ResponsesStreamAssembler",
    "responses_input",
    "responses_params",
    "responses_response",
    "responses_usage",
]

API_NAME = "responses"
"""The API surface name reported with native payloads (S25), opaque to core."""

_CONTINUATION_KEY = "openai_responses"
_HOSTED_TOOLS: Mapping[str, Mapping[str, Any]] = {"web_search": {"type": "web_search"}}


def _plain(obj: Any) -> Any:
    """An SDK model (or dict) as plain JSON data, ``None`` fields left out."""
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump(mode="json", exclude_none=True)
    return obj


def _reasoning_item(item: Any) -> dict[str, Any]:
    """A reasoning item as it must be sent back: id, summary and encrypted content, whole."""
    data = _plain(item)
    kept = {
        key: data[key]
        for key in ("type", "id", "summary", "encrypted_content", "content")
        if key in data and data[key] is not None
    }
    kept.setdefault("summary", [])
    return kept


def encode_continuation(reasoning: Sequence[Mapping[str, Any]]) -> str | None:
    """The continuation text (S26) for a reply's reasoning items; ``None`` when there are none."""
    return encode_items(_CONTINUATION_KEY, "reasoning", reasoning)


def _decode_continuation(text: str | None) -> list[dict[str, Any]]:
    return decode_items(text, _CONTINUATION_KEY, "reasoning")


RESPONSES_SETTINGS: Final = frozenset(
    {"temperature", "top_p", "max_output_tokens", "parallel_tool_calls", "timeout", "extra"}
)
"""The :class:`~robota.ModelSettings` fields the Responses API has (``responses.create``,
openai-python 2.x): no ``stop``, ``seed`` or penalties there."""


_API: Final = "OpenAI Responses"

RESPONSES_RESERVED: Final[ExtraReserved] = {
    **dict.fromkeys(
        ("model", "input", "instructions", "tools", "tool_choice", "store", "include", "stream")
    ),
    **{
        name: use_setting(name)
        for name in ("temperature", "top_p", "max_output_tokens", "parallel_tool_calls")
    },
    "text": USE_OUTPUT,
    "reasoning": USE_EFFORT,
}
"""The Responses body fields this adapter sets itself: ``ModelSettings.extra`` may not name
them (S28). ``store`` stays ``False``: the adapter is stateless (NOTES)."""


def _items(parts: Sequence[MessagePart], model: str) -> list[dict[str, Any]]:
    """Parts as Responses input content items."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            out.append({"type": "input_image", "image_url": data_url(part), "detail": "auto"})
        elif isinstance(part, DocumentPart):
            if part.url is not None:
                out.append({"type": "input_file", "file_url": part.url})
            else:
                out.append(
                    {
                        "type": "input_file",
                        "filename": document_name(part),
                        "file_data": data_url(part),
                    }
                )
        else:
            out.append(audio_input(part, _API, model))
    return out


def responses_input(
    messages: Sequence[Message], model: str = ""
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(instructions, input)`` for our conversation (``model`` names it in errors)."""
    instructions: str | None = None
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            instructions = message.content
        elif isinstance(message, UserMessage):
            items.append({"role": "user", "content": user_content(message.content, model, _items)})
        elif isinstance(message, AssistantMessage):
            items.extend(_decode_continuation(message.continuation))
            if message.content:
                items.append({"role": "assistant", "content": message.content})
            items.extend(
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                }
                for call in message.tool_calls
            )
        elif isinstance(message, ToolMessage):
            output: str | list[dict[str, Any]] = message.content
            if message.parts:  # issue 26: text, image and file items in the output
                output = [{"type": "input_text", "text": message.content}]
                for part in message.parts:
                    if isinstance(part, AudioPart):
                        raise unsendable(
                            part, _API, model, "a function call's output takes no audio"
                        )
                    output.extend(_items((part,), model))
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": output,
                }
            )
    return instructions, items


def responses_params(
    request: ChatRequest,
    *,
    projector: ToolProjector,
    effort: EffortResolution | None,
    reasoning_model: bool | None,
    stream: bool,
    provider: str = "openai",
) -> dict[str, Any]:
    """The request body of ``responses.create`` for ``request``.

    ``provider`` names whose ``settings.extra`` fields the body carries (S28).
    """
    instructions, items = responses_input(request.messages, request.model)
    params: dict[str, Any] = {"model": request.model, "input": items, "store": False}
    if instructions is not None:
        params["instructions"] = instructions
    tools: list[dict[str, Any]] = [
        {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters),
            "strict": False,
        }
        for spec in map(projector.project, request.tools)
    ]
    tools.extend(
        dict(_HOSTED_TOOLS[name]) for name in request.native_tools if name in _HOSTED_TOOLS
    )
    if tools:
        params["tools"] = tools
        params["tool_choice"] = request.tool_choice
    # S28: the settings this API has (RESPONSES_SETTINGS); the rest are not sent.
    settings = request.settings
    if settings.max_output_tokens is not None:
        params["max_output_tokens"] = settings.max_output_tokens
    if settings.temperature is not None:
        params["temperature"] = settings.temperature
    if settings.top_p is not None:
        params["top_p"] = settings.top_p
    if settings.parallel_tool_calls is not None and request.tools:
        params["parallel_tool_calls"] = settings.parallel_tool_calls
    response_format = request.response_format
    if response_format is not None:
        if response_format.type == "json_schema" and response_format.schema is not None:
            schema, strict = output_schema(response_format.schema)
            params["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": response_format.name,
                    "schema": schema,
                    "strict": strict,
                }
            }
        else:
            params["text"] = {"format": {"type": "json_object"}}
    if effort is not None and effort.native_value is not None:
        params["reasoning"] = {"effort": effort.native_value}
    if reasoning_model:
        # Stateless reasoning needs the encrypted items back (NOTES: store=False). Asked only
        # for models the table says reason: a model that does not may refuse the parameter.
        params["include"] = ["reasoning.encrypted_content"]
    # ChatRequest.options: the caller's vendor options (``service_tier``, ``web_search_options``
    # …), passed through as given; they may not replace what the conversation itself decides.
    for key, value in request.options.items():
        if key not in params and key not in ("stream", "stream_options"):
            params[key] = value
    with_extra_fields(params, request, provider, reserved=RESPONSES_RESERVED, api=_API)
    if stream:
        params["stream"] = True
    return params


def responses_usage(raw: Any) -> Usage | None:
    """Responses usage by core's one rule (S29): ``input_tokens`` include the cached ones."""
    if raw is None:
        return None
    return attested(
        Usage.from_counts(
            prompt=count(member(raw, "input_tokens")),
            completion=count(member(raw, "output_tokens")),
            total=count(member(raw, "total_tokens")),
            cache_read=count(member(member(raw, "input_tokens_details"), "cached_tokens")),
            reasoning=count(member(member(raw, "output_tokens_details"), "reasoning_tokens")),
        )
    )


def _message_text(item: Any) -> str:
    return "".join(
        str(member(part, "text") or "")
        for part in member(item, "content") or ()
        if member(part, "type") == "output_text"
    )


def _finish_reason(response: Any) -> str | None:
    details = member(response, "incomplete_details")
    reason = member(details, "reason")
    if reason:
        return str(reason)
    status = member(response, "status")
    return str(status) if status else None


def _check_failed(response: Any, *, provider: str, model: str | None) -> None:
    if member(response, "status") == "failed":
        error = member(response, "error")
        payload = _plain(error) if error is not None else {"message": "the response failed"}
        raise from_error_payload({"error": payload}, provider=provider, model=model)


def responses_response(
    response: Any, *, effort: EffortResolution | None, provider: str
) -> ChatResponse:
    """A complete ``Response`` as our response."""
    model = member(response, "model") or None
    _check_failed(response, provider=provider, model=model)
    error = member(response, "error")
    if error is not None:
        raise from_error_payload({"error": _plain(error)}, provider=provider, model=model)
    if not isinstance(member(response, "output"), list):
        raise invalid_response(
            "the server's answer is not a Responses API response (it has no output)",
            provider=provider,
            model=model,
        )
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[dict[str, Any]] = []
    for item in member(response, "output") or ():
        kind = member(item, "type")
        if kind == "message":
            text.append(_message_text(item))
        elif kind == "function_call":
            calls.append(
                ToolCall(
                    str(member(item, "call_id") or ""),
                    str(member(item, "name") or ""),
                    str(member(item, "arguments") or "") or "{}",
                )
            )
        elif kind == "reasoning":
            reasoning.append(_reasoning_item(item))
    return ChatResponse(
        content="".join(text),
        tool_calls=tuple(calls),
        model=model,
        usage=responses_usage(member(response, "usage")),
        finish_reason=_finish_reason(response),
        continuation=encode_continuation(reasoning),
        effort=effort,
    )


@dataclass(slots=True)
class _PendingCall:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    done: bool = False


class ResponsesStreamAssembler:
    """Assembles Responses stream events into our stream events (see the module docstring)."""

    __slots__ = (
        "_calls",
        "_done",
        "_effort",
        "_model",
        "_order",
        "_provider",
        "_reasoning",
        "_text_seen",
    )

    def __init__(self, *, provider: str, effort: EffortResolution | None) -> None:
        self._provider = provider
        self._effort = effort
        self._calls: dict[str, _PendingCall] = {}
        self._order: list[str] = []
        self._reasoning: list[dict[str, Any]] = []
        self._model: str | None = None
        self._done: ResponseDone | None = None
        self._text_seen = False

    def _call(self, key: str) -> _PendingCall:
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = _PendingCall()
            self._order.append(key)
        return call

    def feed(self, event: Any) -> Iterable[StreamEvent]:
        """Events for one stream event."""
        kind = member(event, "type")
        if kind == "response.output_text.delta":
            delta = member(event, "delta")
            if delta:
                return (TextDelta(str(delta)),)
            return ()
        if kind == "response.function_call_arguments.delta":
            key = str(member(event, "item_id") or member(event, "output_index"))
            delta = member(event, "delta")
            if delta:
                self._call(key).arguments.append(str(delta))
            return ()
        if kind in ("response.output_item.added", "response.output_item.done"):
            return self._item(event, done=kind == "response.output_item.done")
        if kind in ("response.created", "response.in_progress"):
            self._model = member(member(event, "response"), "model") or self._model
            return ()
        if kind in ("response.completed", "response.incomplete"):
            self._finish(member(event, "response"))
            return ()
        if kind == "response.failed":
            response = member(event, "response")
            _check_failed(response, provider=self._provider, model=self._model)
            raise from_error_payload(
                {"error": {"message": "the response failed"}},
                provider=self._provider,
                model=self._model,
            )
        if kind == "error":
            # The event's ``type`` is always ``"error"``: its documented ``code`` is the
            # vendor's error type (S42), so the event's own type is not passed on.
            payload = {"code": member(event, "code"), "message": member(event, "message")}
            raise from_error_payload({"error": payload}, provider=self._provider, model=self._model)
        return ()

    def _item(self, event: Any, *, done: bool) -> Iterable[StreamEvent]:
        item = member(event, "item")
        kind = member(item, "type")
        if kind == "function_call":
            key = str(member(item, "id") or member(event, "output_index"))
            call = self._call(key)
            call.call_id = str(member(item, "call_id") or call.call_id)
            call.name = str(member(item, "name") or call.name)
            if done:
                arguments = member(item, "arguments")
                if arguments is not None:
                    call.arguments = [str(arguments)]  # the item's whole arguments win
                call.done = True
        elif kind == "reasoning" and done:
            self._reasoning.append(_reasoning_item(item))
        return ()

    def _finish(self, response: Any) -> None:
        self._model = member(response, "model") or self._model
        self._done = ResponseDone(
            model=self._model,
            usage=responses_usage(member(response, "usage")),
            finish_reason=_finish_reason(response),
            continuation=encode_continuation(self._reasoning),
            effort=self._effort,
        )

    def finish(self) -> Iterable[StreamEvent]:
        """The tool calls in output order, then the one ``ResponseDone``."""
        events: list[StreamEvent] = [
            ToolCallReady(ToolCall(call.call_id, call.name, "".join(call.arguments) or "{}"))
            for call in (self._calls[key] for key in self._order)
        ]
        if self._done is None:
            # No response.completed / response.incomplete: the stream was cut short, and its
            # last call may be too. A failure, never a complete reply (S42).
            raise incomplete_stream(provider=self._provider, model=self._model)
        events.append(self._done)
        return events


class ResponsesAPI:
    """Responses calls over an ``AsyncOpenAI`` client, for one adapter."""

    __slots__ = ("_driver", "_projector", "_provider")

    def __init__(self, *, provider: str) -> None:
        self._provider = provider
        self._projector = ToolProjector(OPENAI_POLICY, provider)
        self._driver = Driver(API_NAME, provider, map_error)

    async def chat(
        self,
        client: Any,
        request: ChatRequest,
        *,
        effort: EffortResolution | None,
        reasoning_model: bool | None,
        signal: AbortSignal | None,
        capture: NativeCapture = no_capture,
    ) -> ChatResponse:
        """One non-streamed call."""
        params = responses_params(
            request,
            projector=self._projector,
            effort=effort,
            reasoning_model=reasoning_model,
            stream=False,
            provider=self._provider,
        )
        response = await self._driver.call(
            sdk_call(client.responses.create, request, str(client.base_url), params),
            request,
            params,
            signal=signal,
            capture=capture,
        )
        return responses_response(response, effort=effort, provider=self._provider)

    def chat_stream(
        self,
        client: Any,
        request: ChatRequest,
        *,
        effort: EffortResolution | None,
        reasoning_model: bool | None,
        signal: AbortSignal | None,
        capture: NativeCapture = no_capture,
    ) -> AsyncIterator[StreamEvent]:
        """One streamed call."""
        params = responses_params(
            request,
            projector=self._projector,
            effort=effort,
            reasoning_model=reasoning_model,
            stream=True,
            provider=self._provider,
        )
        return self._driver.stream(
            sdk_call(client.responses.create, request, str(client.base_url), params),
            ResponsesStreamAssembler(provider=self._provider, effort=effort),
            request,
            params,
            signal=signal,
            capture=capture,
        )
