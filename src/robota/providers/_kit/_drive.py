"""The call and stream drivers every SDK adapter runs its calls through (S23, S25, S42).

Native payloads are reported on the raw surface, the run's signal is honoured at every await,
and an SDK stream is always closed. :class:`ToolProjector` caches the tool projection (S17).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from json import JSONDecodeError
from typing import Any, Protocol, TypeAlias, final

from robota.core import (
    AbortSignal,
    ConfigurationError,
    NativePayload,
    ToolSpec,
    abort_error_from_reason,
)
from robota.core.providers import (
    ChatRequest,
    ChatResponse,
    NativeCapture,
    StreamEvent,
    stream_response,
)
from robota.core.schema import ProjectionPolicy, project_tool_spec
from robota.lowlevel import AbortGuard

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


@final
@dataclass(frozen=True, slots=True)
class Driver:
    """One adapter's API, its calls run through :func:`drive_call` and :func:`drive_stream`.

    The API's name (as the native payloads report it), the provider's name and the adapter's
    error mapper are fixed when the adapter is built; the request, its body, the run's signal and
    the capture are each call's.
    """

    api: str
    provider: str
    map_error: ErrorMapper

    async def call(
        self,
        call: Callable[[], Awaitable[Any]],
        request: ChatRequest,
        params: Mapping[str, Any],
        *,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> Any:
        """:func:`drive_call` for ``request``, whose body is ``params``."""
        return await drive_call(
            call,
            api=self.api,
            params=params,
            capture=capture,
            signal=signal,
            provider=self.provider,
            model=request.model,
            map_error=self.map_error,
        )

    def stream(
        self,
        open_stream: Callable[[], Awaitable[Any]],
        translator: StreamTranslator,
        request: ChatRequest,
        params: Mapping[str, Any],
        *,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> AsyncIterator[StreamEvent]:
        """:func:`drive_stream` for ``request``, whose body is ``params``."""
        return drive_stream(
            open_stream,
            translator,
            api=self.api,
            params=params,
            capture=capture,
            signal=signal,
            provider=self.provider,
            model=request.model,
            map_error=self.map_error,
        )


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
