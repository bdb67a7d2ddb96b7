"""The :class:`SDKProvider` base: what every SDK-based adapter shares, written once (S28, S30)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator
from typing import Any, Literal

from robota.core import (
    AbortSignal,
    EffortResolution,
    Provider,
    check_media,
    check_native_tools,
)
from robota.core.providers import (
    ChatRequest,
    ChatResponse,
    NativeCapture,
    StreamEvent,
    without_unsupported_settings,
)
from robota.lowlevel import NO_FETCH, FetchRule, MediaFetcher
from robota.providers._kit._drive import replayed
from robota.providers._kit._trace import guard_trace_redirects
from robota.providers._kit._values import no_capture


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
