"""The provider contract (S28, S41): what a model adapter implements.

A :class:`Provider` has two surfaces on purpose (S28):

* the **universal** surface — :meth:`Provider.chat` and :meth:`Provider.chat_stream`, both
  required — over Robota's own message types, used by the loop, generic layers and users;
* the **raw** surface — :meth:`Provider.chat_raw` and :meth:`Provider.chat_stream_raw` — an
  internal protocol through which an adapter hands its vendor-native request/response payloads
  to the conversation service for replay-grade capture (S25). It defaults to the universal
  surface reporting nothing; an adapter overrides it to report. Only the runtime drives it.

A streamed response is a sequence of :data:`StreamEvent`: text deltas and complete tool calls in
the order the model produced them, then one :class:`ResponseDone` with the response's metadata
(which model answered, usage, finish reason, continuation). The content is the events; the
``ResponseDone`` carries no copy of it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeAlias, final

from robota.core._abort import AbortSignal
from robota.core._errors import ConfigurationError
from robota.core._messages import Message, ToolCall
from robota.core._tracing import ProviderTrace
from robota.core._usage import Usage
from robota.core.providers._effort import EffortResolution, EffortSelection
from robota.core.providers._settings import NO_SETTINGS, ModelSettings

if TYPE_CHECKING:
    from robota.core.providers._tables import ProviderCapabilities

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "NativeCapture",
    "NativePayload",
    "Provider",
    "ResponseDone",
    "ResponseFormat",
    "StreamEvent",
    "TextDelta",
    "ToolCallReady",
    "ToolChoice",
    "ToolSpec",
    "collect_stream",
    "stream_response",
]

ToolChoice: TypeAlias = Literal["auto", "none", "required"]
"""Whether the model may (``auto``), must not (``none``) or must (``required``) call tools."""


@final
@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as offered to a model: its name, description and JSON parameter schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@final
@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """A structured-output transport option (S18).

    Attributes:
        type: ``"json_schema"`` — the response must match ``schema`` (a native schema parameter);
            ``"json_object"`` — the response must be valid JSON (a plain JSON mode).
        schema: The schema, for ``json_schema``.
        name: A wire-safe name for the schema.
    """

    type: Literal["json_schema", "json_object"]
    schema: Mapping[str, Any] | None = None
    name: str = "output"


@final
@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One request to a model.

    Attributes:
        model: The model to address (the provider's own name for it).
        messages: The conversation as the model should see it, system head first. An immutable
            snapshot: later history writes do not change it.
        tools: The local function tools offered on this request.
        tool_choice: See :data:`ToolChoice`.
        native_tools: Provider-hosted tools requested for this call (e.g. ``"web_search"``);
            checked against the provider's capabilities before any transport (S30).
        max_output_tokens: Upper bound on the response length, when set; always equal to
            ``settings.max_output_tokens`` (give either, or both with the same value).
        temperature: Sampling temperature, when set; always equal to ``settings.temperature``.
        response_format: The structured-output transport chosen for this request (S18), if any.
        effort: The run's reasoning-effort selection (S24); the adapter resolves it against its
            own per-model table. ``"auto"`` sends no native control.
        options: Provider-specific options, passed through untouched (core never reads them).
        settings: The run's merged model settings (S28): the agent's with the run's laid over
            them. The adapter maps the fields its API has and skips the ones its capability
            table does not list for the model (the runtime reports those, S30).
        trace: This call's trace context (S27), set by the runtime at invocation only for a
            provider that declares :meth:`Provider.propagates_trace_context`. Send
            ``trace.headers_for(url)`` with the call: empty unless the host listed the URL's
            origin. Never part of the fingerprint, and never in an event.
    """

    model: str
    messages: Sequence[Message]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice = "auto"
    native_tools: tuple[str, ...] = ()
    max_output_tokens: int | None = None
    temperature: float | None = None
    response_format: ResponseFormat | None = None
    effort: EffortSelection = "auto"
    options: Mapping[str, object] = field(default_factory=dict)
    trace: ProviderTrace | None = field(default=None, repr=False)
    settings: ModelSettings = NO_SETTINGS

    def __post_init__(self) -> None:
        # The two historical fields and ``settings`` say the same thing: fill each from the
        # other, and refuse a contradiction rather than guess which one the caller meant.
        settings = self.settings
        if settings is NO_SETTINGS and self.max_output_tokens is None and self.temperature is None:
            return  # the common case, once per model call: nothing to reconcile
        if not isinstance(settings, ModelSettings):
            raise ConfigurationError(
                f"ChatRequest.settings must be a robota.ModelSettings, got {settings!r}"
            )
        for name in ("max_output_tokens", "temperature"):
            own, inner = getattr(self, name), getattr(settings, name)
            if own is None and inner is not None:
                object.__setattr__(self, name, inner)
            elif own is not None and inner is None:
                settings = settings.merged(ModelSettings(**{name: own}))
            elif own is not None and own != inner:
                raise ConfigurationError(
                    f"ChatRequest.{name}={own!r} contradicts settings.{name}={inner!r}; "
                    "give one of them"
                )
        object.__setattr__(self, "settings", settings)


@final
@dataclass(frozen=True, slots=True)
class ChatResponse:
    """A complete (non-streamed) model response.

    Attributes:
        content: The text.
        tool_calls: The tool calls, provider ids kept as opaque tokens (S36).
        model: The model that actually answered (S30); ``None`` means the one requested.
        usage: The usage the vendor reported, normalised (:meth:`Usage.from_counts`).
        finish_reason: The vendor's stop reason, opaque.
        continuation: Opaque text the provider wants back on a later request (S26).
        effort: How the adapter resolved the request's effort (S24), when it resolved one.
    """

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    model: str | None = None
    usage: Usage | None = None
    finish_reason: str | None = None
    continuation: str | None = None
    effort: EffortResolution | None = None


@final
@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of response text."""

    kind: ClassVar[Literal["text_delta"]] = "text_delta"
    text: str


@final
@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A complete tool call (the adapter assembles vendor argument fragments)."""

    kind: ClassVar[Literal["tool_call"]] = "tool_call"
    call: ToolCall


@final
@dataclass(frozen=True, slots=True)
class ResponseDone:
    """The end of a streamed response, with its metadata (see :class:`ChatResponse`)."""

    kind: ClassVar[Literal["done"]] = "done"
    model: str | None = None
    usage: Usage | None = None
    finish_reason: str | None = None
    continuation: str | None = None
    effort: EffortResolution | None = None


StreamEvent: TypeAlias = TextDelta | ToolCallReady | ResponseDone
"""What :meth:`Provider.chat_stream` yields."""


@final
@dataclass(frozen=True, slots=True)
class NativePayload:
    """A vendor-native payload reported through the raw surface (S25).

    Attributes:
        direction: ``"request"``, ``"response"`` or ``"stream_event"``.
        api: The provider's own name for the API surface (e.g. ``"chat.completions"``), opaque.
        body: The native object (an SDK model, a dict …), opaque to core.
        order: Position in the stream, when the provider knows it; the runtime assigns one
            otherwise.
    """

    direction: Literal["request", "response", "stream_event"]
    api: str
    body: object
    order: int | None = None


class NativeCapture(Protocol):
    """The callback an adapter reports native payloads to (S25)."""

    def __call__(self, payload: NativePayload) -> None:
        """Receive one payload; must not raise into the adapter."""
        ...


class Provider(ABC):
    """Base class of every model adapter (S28, S41).

    Implement :attr:`name`, :meth:`chat` and :meth:`chat_stream`; override
    :meth:`capabilities` to publish a capability table (S30) — returning ``None`` means "no
    table", which generic code treats as silence, never as a denial — and :meth:`aclose` if the
    adapter owns connections.

    Lifecycle: a provider may serve many agents and many concurrent calls. An agent closes a
    provider only when it was told it owns it (``Agent(owns_providers=True)``).

    Cancellation: every call receives the run's ``signal``. The runtime also cancels the
    awaiting task when the signal aborts, so an adapter must let ``asyncio.CancelledError``
    propagate (after releasing what it holds) rather than swallow it.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """The provider's opaque name (``"openai"``, ``"my-gateway"`` …); unique per agent."""

    @abstractmethod
    async def chat(
        self, request: ChatRequest, *, signal: AbortSignal | None = None
    ) -> ChatResponse:
        """Send ``request`` and return the complete response.

        Raise :class:`~robota.ProviderError` (or a subclass) for vendor failures, keeping the
        HTTP status and vendor error type.
        """

    @abstractmethod
    def chat_stream(
        self, request: ChatRequest, *, signal: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield the response as :data:`StreamEvent` values.

        Usually written as an ``async def`` generator. End with exactly one
        :class:`ResponseDone`. An adapter without native streaming can ``yield from``
        :func:`stream_response` of its :meth:`chat` result.
        """

    def endpoint_provenance(self) -> Literal["vendor_default", "custom"] | None:
        """Whether this instance talks to the vendor's own endpoint or a custom base URL (S18).

        A fact separate from the capability table: a gateway behind a custom URL may not honour
        the vendor's stated guarantees. ``None`` (the default) means not stated.
        """
        return None

    def propagates_trace_context(self) -> bool:
        """Whether this provider sends W3C trace context with its calls (S27).

        Declare it (return ``True``) only when the adapter sends ``request.trace.headers_for(url)``
        with every call, ``url`` being where the call actually goes. A provider that does not
        declare it is handed no trace context at all, and a host that listed origins is told.
        """
        return False

    def resolve_effort(self, request: ChatRequest) -> EffortResolution | None:
        """How this provider resolves ``request.effort`` for ``request.model`` (S24).

        The runtime calls it before dispatch, so the run's outcome records what went on the
        wire even when the call then fails or is aborted. Override it together with sending the
        control; the default ``None`` means "no resolution reported" (no control claimed).
        Must not perform I/O.
        """
        return None

    def unsupported_request_settings(self, request: ChatRequest) -> Collection[str]:
        """Set settings this provider cannot honour on ``request`` itself (S28, S30).

        The capability table states per model which :class:`~robota.ModelSettings` fields a
        model honours; some limits depend on the request instead — Anthropic's extended
        thinking, switched on by the request's effort, excludes ``temperature``. Return the
        names of such fields (a :data:`~robota.core.providers.SETTING_NAMES` member each);
        :func:`~robota.core.providers.unsupported_settings` adds them to the model's, so the
        field is not sent and the run reports it (``execution.setting_unsupported``). A field
        the request does not set is ignored. Must not perform I/O. Default: none.
        """
        return ()

    def capabilities(self) -> ProviderCapabilities | None:
        """This provider's capability table (S30), or ``None`` when it publishes none.

        Generic code never calls this directly; it asks
        :func:`~robota.core.providers.provider_capabilities`.
        """
        return None

    async def reported_context_window(self, model: str) -> int | None:
        """The context window of ``model`` as the provider's server reports it, or ``None``.

        A run asks this before its first provider call, after a window the caller passed and
        before the registered table (S13, S39). Override it for a server that can be asked (an
        OpenAI-compatible ``/v1/models``, llama.cpp's ``/props``): ask once per instance and
        cache the answer, use a short timeout, and return ``None`` — never raise — when the
        server cannot say. The default ``None`` means "not reported".
        """
        return None

    async def chat_raw(
        self,
        request: ChatRequest,
        *,
        signal: AbortSignal | None = None,
        capture: NativeCapture,
    ) -> ChatResponse:
        """Internal protocol (S28): :meth:`chat`, reporting native payloads to ``capture``.

        The default reports nothing. Only the runtime's conversation service calls this.
        """
        return await self.chat(request, signal=signal)

    def chat_stream_raw(
        self,
        request: ChatRequest,
        *,
        signal: AbortSignal | None = None,
        capture: NativeCapture,
    ) -> AsyncIterator[StreamEvent]:
        """Internal protocol (S28): :meth:`chat_stream`, reporting native payloads to ``capture``.

        The default reports nothing. Only the runtime's conversation service calls this.
        """
        return self.chat_stream(request, signal=signal)

    def disable_sdk_retries(self) -> None:  # noqa: B027 - optional hook with a no-op default
        """Turn off the vendor SDK's own retries: a host that owns retries calls it.

        A workflow engine (robota.temporal) or a journal retries a failed call itself, on its
        own schedule; an SDK retrying underneath would multiply attempts and hide failures from
        it. Default: nothing (a provider without retries of its own).
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook with a no-op default
        """Release what the provider owns (connections, clients). Idempotent; default: nothing."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


async def stream_response(response: ChatResponse) -> AsyncIterator[StreamEvent]:
    """The events of an already complete response, for adapters without native streaming."""
    if response.content:
        yield TextDelta(response.content)
    for call in response.tool_calls:
        yield ToolCallReady(call)
    yield ResponseDone(
        model=response.model,
        usage=response.usage,
        finish_reason=response.finish_reason,
        continuation=response.continuation,
        effort=response.effort,
    )


async def collect_stream(events: AsyncIterator[StreamEvent]) -> ChatResponse:
    """Gather a stream into a :class:`ChatResponse` (to implement ``chat`` by streaming)."""
    parts: list[str] = []
    calls: list[ToolCall] = []
    done = ResponseDone()
    async for event in events:
        if isinstance(event, TextDelta):
            parts.append(event.text)
        elif isinstance(event, ToolCallReady):
            calls.append(event.call)
        else:
            done = event
    return ChatResponse(
        content="".join(parts),
        tool_calls=tuple(calls),
        model=done.model,
        usage=done.usage,
        finish_reason=done.finish_reason,
        continuation=done.continuation,
        effort=done.effort,
    )
