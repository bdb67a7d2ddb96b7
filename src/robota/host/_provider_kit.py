"""The machinery every SDK-based provider adapter shares (S23, S25, S28, S30, S42).

Vendor-neutral, so each adapter package (``robota.providers.openai``, ``…anthropic``,
``…gemini``) uses it without importing another adapter: reading SDK objects, the usage
attestation rule, the error values for answers that are not the API's, the mapping of
``httpx2`` transport failures, the call and stream drivers (native payloads reported on the raw
surface, the run's signal honoured at every await, the SDK stream always closed), the tool
projection cache, the :class:`SDKProvider` base and :func:`base64_text` (media bytes as base64
text in one allocation, issue 26). Each adapter supplies its own mapping of its
SDK's exceptions (``map_error``) on top of :func:`map_transport_error`.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import inspect
import time
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import replace
from json import JSONDecodeError
from typing import Any, Final, Literal, Protocol, TypeAlias
from urllib.parse import urlsplit

import httpx2

from robota.core import (
    AbortSignal,
    ConfigurationError,
    EffortResolution,
    NativePayload,
    NetworkError,
    Provider,
    ProviderError,
    ToolSpec,
    Usage,
    abort_error_from_reason,
    check_media,
    check_native_tools,
    origin_of,
    register_model_metadata,
    register_model_pricing,
)
from robota.core._cancel import AbortGuard
from robota.core.providers import (
    ChatRequest,
    ChatResponse,
    NativeCapture,
    StreamEvent,
    stream_response,
    without_unsupported_settings,
)
from robota.core.schema import ProjectionPolicy, project_tool_spec
from robota.host._base64 import base64_text
from robota.host._media_fetch import NO_FETCH, FetchRule, MediaFetcher

__all__ = [
    "USE_EFFORT",
    "USE_OUTPUT",
    "ErrorMapper",
    "ExtraReserved",
    "SDKProvider",
    "StreamTranslator",
    "ToolProjector",
    "attested",
    "base64_text",
    "check_adapter_options",
    "check_base_url",
    "check_stop_count",
    "count",
    "drive_call",
    "drive_stream",
    "extra_collision",
    "given",
    "incomplete_stream",
    "invalid_response",
    "map_transport_error",
    "member",
    "no_capture",
    "register_model_table",
    "replayed",
    "retry_after_seconds",
    "sdk_call",
    "use_setting",
    "with_extra_fields",
]


def member(obj: Any, name: str) -> Any:
    """An attribute of an SDK object or a key of a dict (servers' extras stay reachable)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, Mapping):
            return extra.get(name)
    return value


def count(value: Any) -> int | None:
    """``value`` when it is an integer count (never a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def attested(usage: Usage) -> Usage:
    """``usage`` marked partial when a dispatched response claims no prompt at all (S31).

    A request always has a prompt, so a zero prompt count (one recorded turn reports 0/0/0 for a
    reply with two tool calls) is not a count anyone can attest; it is kept and marked partial.
    """
    if usage.prompt_tokens == 0 and not usage.partial:
        return replace(usage, partial=True)
    return usage


def invalid_response(message: str, *, provider: str, model: str | None) -> ProviderError:
    """The server answered with something that is not this API's response (S42)."""
    return ProviderError(
        f"provider {provider!r}: {message}",
        vendor_type="invalid_response",
        provider=provider,
        model=model,
        switchable=False,
    )


def incomplete_stream(*, provider: str, model: str | None) -> NetworkError:
    """A stream that ended before the server said the response was finished (S42)."""
    return NetworkError(
        f"provider {provider!r}: the response stream ended before the server finished it",
        vendor_type="incomplete_stream",
        provider=provider,
        model=model,
        switchable=False,
    )


def no_capture(payload: NativePayload) -> None:
    """The capture used on the universal surface: reports nowhere."""


def map_transport_error(error: BaseException, *, provider: str, model: str | None) -> BaseException:
    """A transport failure (``httpx2``) or an unreadable answer as the error to raise (S42).

    Timeouts and connection failures become :class:`~robota.NetworkError`, a ``ValueError``
    from decoding the answer ``invalid_response``; anything else (cancellation, an abort, a
    bug, an SDK exception the adapter maps itself) is returned unchanged.
    """
    if isinstance(error, httpx2.TimeoutException):
        return NetworkError(
            f"provider {provider!r} did not answer in time (timeout)",
            vendor_type="timeout",
            provider=provider,
            model=model,
            switchable=True,
            cause=error,
        )
    if isinstance(error, httpx2.TransportError):
        # E.g. the connection dropped in the middle of a streamed response.
        return NetworkError(
            f"provider {provider!r}: the connection failed: {type(error).__name__}: {error}",
            vendor_type="connection_error",
            provider=provider,
            model=model,
            switchable=False,
            cause=error,
        )
    if isinstance(error, ValueError):
        # The SDK decodes each SSE ``data:`` line and JSON body as it reads it: a server that
        # sent something else made it raise a plain ValueError (JSONDecodeError).
        mapped = invalid_response(
            f"the server's answer could not be read: {error}", provider=provider, model=model
        )
        mapped.__cause__ = error
        return mapped
    return error


ErrorMapper: TypeAlias = Callable[..., BaseException]
"""An adapter's ``map_error(error, *, provider, model)``: its SDK's exceptions as robota errors,
anything it does not know passed to :func:`map_transport_error`."""


class StreamTranslator(Protocol):
    """Turns one API's native stream items into :data:`~robota.StreamEvent` values."""

    def feed(self, item: Any) -> Iterable[StreamEvent]:
        """Events for one native stream item (possibly none)."""
        ...

    def finish(self) -> Iterable[StreamEvent]:
        """Events once the native stream ended (pending tool calls, the one ``ResponseDone``)."""
        ...


def _check_signal(signal: AbortSignal | None) -> None:
    if signal is not None and signal.aborted:
        raise abort_error_from_reason(signal.reason)


async def _mapped(
    call: Callable[[], Awaitable[Any]],
    *,
    signal: AbortSignal | None,
    provider: str,
    model: str | None,
    map_error: ErrorMapper,
    reading: bool,
) -> Any:
    """Await ``call()`` under the run's signal, raising SDK failures as ProviderError (S42).

    An abort ends the wait at once (S23) — a server that pauses between events, or never
    answers, does not keep an aborted call pending — and raises :class:`~robota.AbortError`.
    The guard nests with the runtime's own (each withdraws only its own cancellation).

    ``reading`` says whether the call only reads an answer already under way (the next stream
    event). A call that also builds and sends the request can fail before anything is sent —
    the SDK refusing a parameter, a validation error — and such a ``ValueError`` is the
    caller's request, a :class:`~robota.ConfigurationError`, never "the server's answer could
    not be read"; a JSON decoding error is always the answer's.
    """
    try:
        if signal is None:
            return await call()
        with AbortGuard(signal) as guard:
            return await guard.call(call)
    except Exception as error:
        if not reading and isinstance(error, ValueError) and not isinstance(error, JSONDecodeError):
            raise ConfigurationError(
                f"provider {provider!r} could not build the request: {error}", cause=error
            ) from error
        mapped = map_error(error, provider=provider, model=model)
        if mapped is error:
            raise
        raise mapped from error


async def drive_call(
    call: Callable[[], Awaitable[Any]],
    *,
    api: str,
    params: Mapping[str, Any],
    capture: NativeCapture,
    signal: AbortSignal | None,
    provider: str,
    model: str | None,
    map_error: ErrorMapper,
) -> Any:
    """Run one non-streamed SDK call; report the request and response natively (S25)."""
    _check_signal(signal)
    capture(NativePayload("request", api, params))
    response = await _mapped(
        call, signal=signal, provider=provider, model=model, map_error=map_error, reading=False
    )
    capture(NativePayload("response", api, response))
    return response


async def drive_stream(
    open_stream: Callable[[], Awaitable[Any]],
    translator: StreamTranslator,
    *,
    api: str,
    params: Mapping[str, Any],
    capture: NativeCapture,
    signal: AbortSignal | None,
    provider: str,
    model: str | None,
    map_error: ErrorMapper,
) -> AsyncIterator[StreamEvent]:
    """Run one streamed SDK call and yield its events; the stream is always closed."""
    _check_signal(signal)
    capture(NativePayload("request", api, params))
    stream = await _mapped(
        open_stream,
        signal=signal,
        provider=provider,
        model=model,
        map_error=map_error,
        reading=False,
    )
    order = 0
    iterator: Any = None
    try:
        iterator = stream.__aiter__()
        while True:
            try:
                item = await _mapped(
                    iterator.__anext__,
                    signal=signal,
                    provider=provider,
                    model=model,
                    map_error=map_error,
                    reading=True,
                )
            except StopAsyncIteration:
                iterator = None  # read to its end: nothing is left suspended to finish
                break
            _check_signal(signal)  # S23: nothing after an abort reaches the caller
            capture(NativePayload("stream_event", api, item, order=order))
            order += 1
            for event in translator.feed(item):
                yield event
        _check_signal(signal)
        for event in translator.finish():
            yield event
    finally:
        await _release(stream, iterator)


async def _release(stream: Any, iterator: Any) -> None:
    """Close the SDK ``stream`` and finish every generator under it, in this task (S23).

    When a stream ends early — an abort seen between two events, the caller closing it — the
    SDK's generators (its stream, the SSE decoder, the HTTP response's byte iterators) are
    suspended at a ``yield``, and closing the response does not finish them: the garbage
    collector would, later, each in a task of its own, racing one another and whatever runs then
    ("async generator already executing"). With the response closed, reading ``iterator`` on runs
    each of them to its end now, innermost first; what it still yields or raises is discarded.
    """
    try:
        await stream.close()
    finally:
        if iterator is not None:
            # A failure here is the closed response's, after the outcome was decided.
            with contextlib.suppress(Exception):
                async for _ in iterator:
                    pass


class ToolProjector:
    """Projects tools through core's one projector (S17), remembering recent results.

    Tool specs are usually the same objects round after round, so the projection is computed
    once per spec object. A schema the policy rejects fails the request before any transport
    with a :class:`~robota.ConfigurationError` naming the tool and why.
    """

    __slots__ = ("_cache", "_policy", "_provider")

    _LIMIT = 512

    def __init__(self, policy: ProjectionPolicy, provider: str) -> None:
        self._policy = policy
        self._provider = provider
        self._cache: dict[int, tuple[ToolSpec, ToolSpec]] = {}

    def project(self, spec: ToolSpec) -> ToolSpec:
        """The spec as this vendor is shown it."""
        hit = self._cache.get(id(spec))
        if hit is not None and hit[0] is spec:
            return hit[1]
        projected, result = project_tool_spec(spec, self._policy)
        if projected is None:
            raise ConfigurationError(
                f"tool {spec.name!r} cannot be offered to provider {self._provider!r}: its "
                f"parameter schema was refused ({result.reason}); simplify the schema"
            )
        if len(self._cache) >= self._LIMIT:
            self._cache.clear()
        self._cache[id(spec)] = (spec, projected)
        return projected


async def replayed(response: Awaitable[ChatResponse]) -> AsyncIterator[StreamEvent]:
    """The events of a complete response, for an adapter told not to stream."""
    async for event in stream_response(await response):
        yield event


class SDKProvider(Provider):
    """What every SDK-based adapter shares, written once (S28, S30).

    The universal surface runs the raw one with a capture that reports nowhere; every call
    refuses hosted tools this instance does not enable before any transport; the effort is
    resolved by the subclass's :meth:`~robota.Provider.resolve_effort`; an instance told not to
    stream makes a complete call and replays it as events; :meth:`aclose` closes the SDK client
    unless its ``http_client`` was the caller's. A subclass sets ``_name``, ``_url`` (the base
    URL it was given, or ``None``), ``_client``, ``_owns_client`` and ``_streaming`` and
    implements :meth:`_send` and :meth:`_open`. An adapter whose vendor does not fetch some URL
    parts itself sets ``_media`` (a :class:`MediaFetcher`) and overrides :meth:`_fetch_rule`:
    those parts are fetched through the egress client before the wire (S06).
    """

    _name: str
    _url: str | None
    _client: Any
    _owns_client: bool
    _streaming: bool
    _media: MediaFetcher | None = None

    @property
    def name(self) -> str:
        """The provider's name: the one given to the constructor, else the vendor's."""
        return self._name

    def endpoint_provenance(self) -> Literal["vendor_default", "custom"]:
        """``"custom"`` when a base URL was set (here or in the vendor's URL setting), S18."""
        return "vendor_default" if not self._url else "custom"

    def propagates_trace_context(self) -> bool:
        """``True`` (S27): every call sends its request's trace headers, to a listed origin only.

        The origin compared is that of the URL the SDK client actually sends to.
        """
        return True

    def _guard_traces(self) -> None:
        """S27: strip trace headers from any redirect hop off their origin (SDK client built)."""
        guard_trace_redirects(getattr(self._client, "_client", None))

    def endpoint_url(self) -> str | None:
        """Where this adapter's calls go: the SDK client's base URL (S27 compares its origin)."""
        base = getattr(self._client, "base_url", None)
        return str(base) if base is not None else self._url

    @abstractmethod
    async def _send(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> ChatResponse:
        """One complete call on the wire."""

    @abstractmethod
    def _open(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> AsyncIterator[StreamEvent]:
        """One streamed call on the wire."""

    async def chat(
        self, request: ChatRequest, *, signal: AbortSignal | None = None
    ) -> ChatResponse:
        """One complete response."""
        return await self.chat_raw(request, signal=signal, capture=no_capture)

    def chat_stream(
        self, request: ChatRequest, *, signal: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        """One streamed response."""
        return self.chat_stream_raw(request, signal=signal, capture=no_capture)

    def _fetch_rule(self, model: str) -> FetchRule:
        """Which URL parts this adapter fetches itself for ``model`` (default: none)."""
        return NO_FETCH

    async def _fetched(self, request: ChatRequest, signal: AbortSignal | None) -> ChatRequest:
        """``request`` with the URL parts the vendor cannot fetch fetched (S06), else itself."""
        if self._media is None:
            return request
        return await self._media.prepare(request, self._fetch_rule(request.model), signal=signal)

    async def chat_raw(
        self,
        request: ChatRequest,
        *,
        signal: AbortSignal | None = None,
        capture: NativeCapture,
    ) -> ChatResponse:
        """:meth:`chat`, reporting the native request and response (S25, S28)."""
        check_native_tools(self, request.native_tools)  # S30: before any transport
        check_media(self, request.model, request.messages)
        request = without_unsupported_settings(self, request)  # S28: the runtime reports them
        request = await self._fetched(request, signal)  # S06: before the vendor is called
        return await self._send(request, self.resolve_effort(request), signal, capture)

    def chat_stream_raw(
        self,
        request: ChatRequest,
        *,
        signal: AbortSignal | None = None,
        capture: NativeCapture,
    ) -> AsyncIterator[StreamEvent]:
        """:meth:`chat_stream`, reporting the native request and stream events (S25, S28)."""
        check_native_tools(self, request.native_tools)  # S30: before any transport
        check_media(self, request.model, request.messages)
        request = without_unsupported_settings(self, request)  # S28: the runtime reports them
        if not self._streaming:
            return replayed(self.chat_raw(request, signal=signal, capture=capture))
        if self._media is not None and self._media.needs_fetch(
            request, self._fetch_rule(request.model)
        ):
            return self._fetched_stream(request, signal, capture)
        return self._open(request, self.resolve_effort(request), signal, capture)

    async def _fetched_stream(
        self, request: ChatRequest, signal: AbortSignal | None, capture: NativeCapture
    ) -> AsyncIterator[StreamEvent]:
        request = await self._fetched(request, signal)  # S06: before the stream opens
        stream = self._open(request, self.resolve_effort(request), signal, capture)
        try:
            async for event in stream:
                yield event
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                await closer()  # the SDK stream is closed with this one

    def disable_sdk_retries(self) -> None:
        """Turn off the SDK client's own retries (``max_retries=0``); the host retries instead.

        For the OpenAI and Anthropic SDKs; the new client shares the connections. The Gemini
        adapter overrides it (its SDK retries only under ``retry_options``, which it drops).
        """
        with_options = getattr(self._client, "with_options", None)
        if callable(with_options):
            self._client = with_options(max_retries=0)

    async def aclose(self) -> None:
        """Close the SDK client's connections, unless the ``http_client`` was the caller's.

        A default egress client the adapter built to fetch media is closed too; one passed as
        ``egress=`` stays the caller's.
        """
        if self._media is not None:
            await self._media.aclose()
        if self._owns_client:
            await self._client.close()


def trace_headers(request: ChatRequest, url: str | None) -> dict[str, str]:
    """The trace headers of ``request`` for a call to ``url`` (S27): none unless listed."""
    trace = request.trace
    return trace.headers_for(url) if trace is not None else {}


_TRACE_ORIGIN: ContextVar[str | None] = ContextVar("robota_trace_origin", default=None)
_TRACE_HEADERS: Final = ("traceparent", "tracestate")


def traced_call(
    create: Callable[..., Awaitable[Any]],
    request: ChatRequest,
    url: str | None,
    params: Mapping[str, Any],
    **extra: Any,
) -> Callable[[], Awaitable[Any]]:
    """The SDK call ``create(**params, **extra)``, sending ``request``'s trace headers (S27).

    The headers go to the SDK call only (``extra_headers``), never into the captured native
    request, and only when ``url``'s origin is listed. While the call runs, the origin they were
    issued for is known to :func:`guard_trace_redirects`, so a redirect hop to any other origin
    carries neither header.
    """
    headers = trace_headers(request, url)
    if not headers:
        return lambda: create(**params, **extra)
    issued_for = origin_of(url or "")

    async def call() -> Any:
        token = _TRACE_ORIGIN.set(issued_for)
        try:
            return await create(**params, **extra, extra_headers=headers)
        finally:
            _TRACE_ORIGIN.reset(token)

    return call


def check_stop_count(request: ChatRequest, limit: int | None, *, api: str) -> None:
    """Refuse, before any transport, more stop sequences than the vendor takes (S28).

    Refused rather than shortened: a stop list cut to the limit ends the output somewhere the
    caller did not ask for. ``limit`` ``None``: the vendor states none.

    Raises:
        ConfigurationError: naming the limit, the API, the model and the fix.
    """
    stop = request.settings.stop
    if limit is None or stop is None or len(stop) <= limit:
        return
    raise ConfigurationError(
        f"{api} takes at most {limit} stop sequences, but ModelSettings.stop has {len(stop)} "
        f"for model {request.model!r}; nothing was sent. Pass at most {limit} (robota does not "
        "shorten the list: a dropped sequence would let the output run past it)",
        code="stop_limit",
    )


ExtraReserved: TypeAlias = Mapping[str, str | None]
"""Request-body fields an adapter sets itself, each with what to use instead of ``extra``:
``"ModelSettings(temperature=...)"``, ``"the run's effort="`` … or ``None`` for a field built
from the run (messages, tools) that nothing overrides."""


USE_EFFORT: Final = "the agent's or the run's effort="
USE_OUTPUT: Final = "the run's output= (structured output)"


def use_setting(name: str) -> str:
    """What to use instead of an ``extra`` field :class:`~robota.ModelSettings` has."""
    return f"ModelSettings({name}=...)"


def extra_collision(
    key: str, instead: str | None, *, request: ChatRequest, provider: str, api: str
) -> ConfigurationError:
    """The error for an ``extra`` field that collides with one the adapter sets (S28)."""
    fix = (
        f"use {instead} instead"
        if instead is not None
        else f"{key!r} is built from the run and cannot be overridden through extra"
    )
    return ConfigurationError(
        f"ModelSettings.extra[{provider!r}] sets {key!r}, a field the {api} adapter sets "
        f"itself, for model {request.model!r}; nothing was sent. Leave it out of extra: {fix}",
        code="extra_collision",
    )


def with_extra_fields(
    params: dict[str, Any],
    request: ChatRequest,
    provider: str,
    *,
    reserved: ExtraReserved,
    api: str,
) -> None:
    """Add ``request.settings.extra[provider]`` to the request body ``params`` (S28).

    One rule for every adapter: an extra field the adapter sets itself — one of ``reserved``
    (whether or not this request sets it) or one ``params`` already has — is refused, never
    skipped and never merged over it.

    Raises:
        ConfigurationError: before any transport, naming the field and what to use instead.
    """
    extra = request.settings.extra_for(provider)
    for key in extra:
        if key in reserved or key in params:
            raise extra_collision(
                key, reserved.get(key), request=request, provider=provider, api=api
            )
    params.update(extra)


@functools.cache
def _keywords(function: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(function).parameters)


def sdk_call(
    create: Callable[..., Awaitable[Any]],
    request: ChatRequest,
    url: str | None,
    params: Mapping[str, Any],
) -> Callable[[], Awaitable[Any]]:
    """:func:`traced_call` sending ``params`` as the request body exactly (S28).

    For an SDK method with ``extra_body`` and ``timeout`` keywords (OpenAI's, Anthropic's): the
    body fields the method takes as keywords go as keywords, any other (a settings ``extra``
    field the SDK does not know yet) through ``extra_body``; ``request.settings.timeout`` is the
    SDK's per-request timeout.
    """
    options: dict[str, Any] = {}
    timeout = request.settings.timeout
    if timeout is not None:
        options["timeout"] = timeout
    known = _keywords(getattr(create, "__func__", create))
    unknown = {key: value for key, value in params.items() if key not in known}
    if unknown:
        params = {key: value for key, value in params.items() if key in known}
        options["extra_body"] = unknown
    return traced_call(create, request, url, params, **options)


async def _strip_trace_off_origin(request: Any) -> None:
    # An httpx2 request hook: it runs before every hop, redirects included (S27: the header
    # discloses trace identifiers, so it goes only to the origin it was issued for).
    headers = request.headers
    if not any(name in headers for name in _TRACE_HEADERS):
        return
    issued_for = _TRACE_ORIGIN.get()
    if issued_for is None or origin_of(str(request.url)) != issued_for:
        for name in _TRACE_HEADERS:
            if name in headers:
                del headers[name]


def guard_trace_redirects(http_client: Any) -> None:
    """Install the S27 redirect guard on an SDK's ``httpx2.AsyncClient`` (once)."""
    hooks = getattr(http_client, "event_hooks", None)
    if not isinstance(hooks, Mapping):
        return
    request_hooks = list(hooks.get("request", ()))
    if _strip_trace_off_origin not in request_hooks:
        request_hooks.append(_strip_trace_off_origin)
        http_client.event_hooks = {**hooks, "request": request_hooks}


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (delta or HTTP date), when present."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


_registered_tables: set[tuple[int, str]] = set()


def register_model_table(
    provider: str,
    rows: Mapping[str, tuple[int, int | None, float, float, float | None]],
) -> None:
    """Register a vendor table's metadata (S13) and prices (S04) under ``provider``.

    ``rows`` maps each model name (aliases included) to ``(context_window, max_output_tokens,
    input_per_million, output_per_million, cache_read_per_million)``. Idempotent per table and
    provider name, so an adapter can call it from its constructor.
    """
    key = (id(rows), provider)
    if key in _registered_tables:
        return
    for name, (window, max_output, input_price, output_price, cache_price) in rows.items():
        register_model_metadata(
            name, context_window=window, max_output_tokens=max_output, provider=provider
        )
        register_model_pricing(
            name,
            input_per_million=input_price,
            output_per_million=output_price,
            cache_read_per_million=cache_price,
            provider=provider,
        )
    _registered_tables.add(key)


def check_adapter_options(
    name: object, native_tools: Iterable[str], supported: Iterable[str], *, where: str
) -> frozenset[str]:
    """The checks every adapter's constructor makes; returns the enabled hosted tools (S30).

    Raises:
        ConfigurationError: for an empty or non-string ``name``, or a hosted tool ``where``
            (the adapter, or the API it speaks) does not support.
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"name must be a non-empty string, got {name!r}")
    native = frozenset(native_tools)
    allowed = frozenset(supported)
    unsupported = native - allowed
    if unsupported:
        raise ConfigurationError(
            f"native tool(s) {sorted(unsupported)} are not supported by {where}; "
            f"supported: {', '.join(sorted(allowed)) or 'none'}"
        )
    return native


def check_base_url(base_url: object, *, where: str) -> None:
    """Refuse a ``base_url`` that is not an ``http(s)://host…`` URL, when the adapter is built.

    Otherwise a typo surfaces at the first run as "could not be reached", or a non-string as the
    HTTP client's ``TypeError``. ``None`` (not given) passes.

    Raises:
        ConfigurationError: naming ``where`` and how to write the URL.
    """
    if base_url is None:
        return
    example = "e.g. base_url='https://gateway.example/v1'"
    if not isinstance(base_url, str):
        raise ConfigurationError(
            f"{where} base_url must be a string URL with http:// or https:// ({example}), got "
            f"{type(base_url).__name__}"
        )
    try:
        parts = urlsplit(base_url.strip())
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid:
        raise ConfigurationError(
            f"{where} base_url {base_url!r} is not a URL: write the API root with http:// or "
            f"https://, {example}"
        )


def given(**options: Any) -> dict[str, Any]:
    """The options that were given (not ``None``), for an SDK client's constructor."""
    return {key: value for key, value in options.items() if value is not None}
