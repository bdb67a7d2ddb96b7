"""``GeminiProvider``: Google's Gemini models over the official ``google-genai`` SDK."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import replace
from typing import Any, Final, final

from robota.core import (
    AbortSignal,
    ChatRequest,
    ChatResponse,
    ConfigurationError,
    EffortResolution,
    ModelCapabilities,
    ProviderCapabilities,
    resolve_effort,
)
from robota.core.providers import NativeCapture, StreamEvent
from robota.host import EgressClient, require_api_key
from robota.lowlevel import NO_FETCH, FetchRule, MediaFetcher
from robota.providers._kit import (
    Driver,
    SDKProvider,
    ToolProjector,
    check_adapter_options,
    check_base_url,
    trace_headers,
)
from robota.providers.gemini._errors import map_error
from robota.providers.gemini._models import (
    FAMILY_RULES,
    MODELS_SOURCE,
    model_capabilities_table,
    register_gemini_models,
    thinking_control,
)
from robota.providers.gemini._projection import GEMINI_POLICY
from robota.providers.gemini._sdk import load_genai
from robota.providers.gemini._wire import (
    API_NAME,
    GEMINI_SETTINGS,
    GeminiStreamAssembler,
    gemini_params,
    gemini_response,
)

__all__ = ["GeminiProvider"]

_HOSTED: Final = frozenset({"google_search"})
_KEY_VARIABLES: Final = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_BASE_URL_VARIABLE: Final = "GOOGLE_GEMINI_BASE_URL"
_GENERAL: Final = ModelCapabilities(tools=True, streaming=True, structured_output="json_schema")
"""What Google states for its current Gemini models in general (gemini-models-2025-12)."""

_MiB: Final = 1024 * 1024
# S06, issue 26 — which URLs Gemini fetches itself. Since 2026-01-12 a `file_data.file_uri` may be
# any public or signed http(s) URL, which the Gemini API fetches during the request, besides its
# own Files API URIs and registered Cloud Storage objects ("File input methods",
# https://ai.google.dev/gemini-api/docs/file-input-methods, and Google's announcement
# https://blog.google/innovation-and-ai/technology/developers-tools/gemini-api-new-file-limits).
# So a URL part stays a URL. The exception is the older models that change predates (the
# gemini-1.x and gemini-2.0 families, whose file_uri took Files API URIs only): for them every
# URL part except a Files API URI is fetched here and sent as inline_data, at most 20 MiB each,
# the inline request limit those models were documented with.
_OLDER_MODELS: Final = ("gemini-1.", "gemini-2.0")
_FETCH_FOR_OLDER: Final = FetchRule(
    kinds=frozenset({"image", "document", "audio"}),
    max_bytes={"image": 20 * _MiB, "document": 20 * _MiB, "audio": 20 * _MiB},
    vendor_hosts=frozenset({"generativelanguage.googleapis.com"}),
)


class _Stream:
    """The SDK's async generator with the ``close()`` the kit's stream driver calls."""

    __slots__ = ("_iterator",)

    def __init__(self, iterator: Any) -> None:
        self._iterator = iterator

    def __aiter__(self) -> Any:
        return self._iterator.__aiter__()

    async def close(self) -> None:
        closer = getattr(self._iterator, "aclose", None)
        if closer is not None:
            await closer()


@final
class GeminiProvider(SDKProvider):
    """Gemini's ``generateContent`` API (Gemini API or Vertex AI) through ``google-genai``.

    Args:
        api_key: The API key; default: ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``, else the key
            ``robota auth set gemini`` stored (:func:`robota.host.find_api_key`). Not needed
            with ``vertexai=True`` (Google Cloud credentials are used).
        base_url: Another endpoint speaking the Gemini API; the same as ``http_options``'
            ``base_url`` (give one or the other). Default: ``GOOGLE_GEMINI_BASE_URL``, else
            Google's.
        vertexai: Use Vertex AI instead of the Gemini API (with ``project`` and ``location``).
        project: The Google Cloud project, for Vertex AI.
        location: The Google Cloud region, for Vertex AI.
        http_options: A ``google.genai.types.HttpOptions`` (or the same as a dict): ``base_url``
            (then :meth:`endpoint_provenance` is ``"custom"``, S18), ``timeout`` (ms),
            ``retry_options`` (none: one attempt, what a host that owns retries wants;
            :meth:`disable_sdk_retries` drops them) and
            ``httpx_async_client`` — an ``httpx2.AsyncClient`` that stays the caller's:
            :meth:`aclose` never closes it.
        native_tools: Hosted tools this instance enables (S30): ``("google_search",)``.
        name: The provider's name in an agent (default ``"gemini"``).
        streaming: Stream responses (the default). ``False`` makes every call a complete
            request whose answer is then replayed as events.
        egress: The :class:`~robota.host.EgressClient` that fetches URL parts Gemini does not
            fetch itself (S06). Gemini fetches public and signed ``http(s)`` URLs itself
            (``file_data``), so a URL part stays a URL — except on the older ``gemini-1.*`` and
            ``gemini-2.0*`` models, whose ``file_data`` takes Files API URIs only: there a URL
            part (other than a Files API URI) is fetched here and sent as ``inline_data``, at
            most 20 MiB. Default: an ``EgressClient()`` built on the first fetch and closed by
            :meth:`aclose`; one passed here stays yours. A failure is a
            :class:`~robota.host.MediaFetchError` before Gemini is called.

    Raises:
        ConfigurationError: for an unsupported hosted tool, no API key anywhere (outside Vertex
            AI), or the SDK not installed (the message says how to install the ``gemini`` extra).
    """

    __slots__ = (
        "_client",
        "_client_options",
        "_driver",
        "_media",
        "_name",
        "_native",
        "_owns_client",
        "_projector",
        "_retired",
        "_streaming",
        "_url",
    )

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        vertexai: bool = False,
        project: str | None = None,
        location: str | None = None,
        http_options: Any = None,
        native_tools: Iterable[str] = (),
        name: str = "gemini",
        streaming: bool = True,
        egress: EgressClient | None = None,
    ) -> None:
        native = check_adapter_options(name, native_tools, _HOSTED, where="Gemini")
        genai = load_genai("GeminiProvider")  # a missing extra is said first
        self._media = MediaFetcher(egress, provider=name)  # checks egress= before any client
        check_base_url(base_url, where="GeminiProvider")
        key = api_key
        if not vertexai:
            # One lookup order with the command (robota.host.find_api_key). On Vertex AI the
            # caller's Google Cloud credentials authenticate; a key from the environment or the
            # store is never sent there (only one passed explicitly).
            key = require_api_key(
                "gemini",
                who="GeminiProvider",
                api_key=api_key,
                variables=_KEY_VARIABLES,
                also="use vertexai=True with Google Cloud credentials",
            ).key
        options: dict[str, Any] = {}
        if key:
            options["api_key"] = key
        if vertexai:
            options["vertexai"] = True
            if project is not None:
                options["project"] = project
            if location is not None:
                options["location"] = location
        if http_options is None:
            http_options = genai.types.HttpOptions()
        elif isinstance(http_options, Mapping):
            http_options = genai.types.HttpOptions.model_validate(dict(http_options))
        if base_url is not None:
            if http_options.base_url:
                raise ConfigurationError(
                    "GeminiProvider got base_url= and http_options with a base_url; give one"
                )
            http_options = http_options.model_copy(update={"base_url": base_url})
        base_url = http_options.base_url or os.environ.get(_BASE_URL_VARIABLE)
        if base_url and not vertexai and http_options.api_version is None:
            # The SDK drops its default version (v1beta) for a custom base URL; keep the wire
            # the same as on Google's own endpoint (responseJsonSchema, thinking levels …).
            http_options = http_options.model_copy(update={"api_version": "v1beta"})
        options["http_options"] = http_options
        self._client = genai.Client(**options)
        self._client_options = options
        self._retired: list[Any] = []  # clients replaced by disable_sdk_retries, closed by aclose
        self._owns_client = True  # the SDK itself never closes a caller's httpx_async_client
        self._name = name
        self._native = native
        self._streaming = bool(streaming)
        self._url = base_url
        self._projector = ToolProjector(GEMINI_POLICY, name)
        self._driver = Driver(API_NAME, name, map_error)
        register_gemini_models(name)

    def capabilities(self) -> ProviderCapabilities:
        """The per-model table (S30), over what Google states for Gemini models in general."""
        return ProviderCapabilities(
            default_model=replace(_GENERAL, settings=GEMINI_SETTINGS),
            models=model_capabilities_table(),
            families=FAMILY_RULES,
            native_tools_supported=_HOSTED,
            native_tools_enabled=self._native,
        )

    def resolve_effort(self, request: ChatRequest) -> EffortResolution:
        """The effort resolution for ``request`` against this model's row (S24)."""
        # The model's row, else its family (S13): a newer Gemini 3 model still takes a level.
        control = thinking_control(request.model)
        return resolve_effort(
            request.effort,
            None if control is None else control.efforts,
            native=None if control is None else dict(control.native),
            model=request.model,
            source=MODELS_SOURCE if control is None else control.source,
        )

    def endpoint_url(self) -> str | None:
        """Where calls go: the SDK client's effective base URL (S27 compares its origin)."""
        options = getattr(getattr(self._client, "_api_client", None), "_http_options", None)
        base = getattr(options, "base_url", None)
        return str(base) if base else (self._url or _DEFAULT_ENDPOINT)

    def _fetch_rule(self, model: str) -> FetchRule:
        # S06: see _OLDER_MODELS — only the older models need their URL parts fetched here.
        bare = model.removeprefix("models/")
        return _FETCH_FOR_OLDER if bare.startswith(_OLDER_MODELS) else NO_FETCH

    def _params(self, request: ChatRequest, effort: EffortResolution | None) -> dict[str, Any]:
        control = thinking_control(request.model)
        return gemini_params(
            request,
            projector=self._projector,
            effort=effort,
            thinking=None if control is None else control.thinking,
            provider=self._name,
        )

    async def _send(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> ChatResponse:
        params = self._params(request, effort)
        models = self._client.aio.models
        response = await self._driver.call(
            lambda: models.generate_content(**traced(params, request, self.endpoint_url())),
            request,
            params,
            signal=signal,
            capture=capture,
        )
        return gemini_response(response, effort=effort, provider=self._name, model=request.model)

    def _open(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> AsyncIterator[StreamEvent]:
        params = self._params(request, effort)
        models = self._client.aio.models

        async def open_stream() -> _Stream:
            return _Stream(
                await models.generate_content_stream(**traced(params, request, self.endpoint_url()))
            )

        return self._driver.stream(
            open_stream,
            GeminiStreamAssembler(provider=self._name, model=request.model, effort=effort),
            request,
            params,
            signal=signal,
            capture=capture,
        )

    def disable_sdk_retries(self) -> None:
        """Turn off the SDK's own retries: one attempt per call (a host that owns retries).

        google-genai retries only under the ``retry_options`` of ``http_options``; when they
        were given, the SDK client is rebuilt without them (same key, endpoint, timeout and
        ``httpx_async_client``), so a retry policy or Temporal is the one place that retries
        (issue 28). The replaced client is closed by :meth:`aclose`.
        """
        http_options = self._client_options["http_options"]
        if http_options.retry_options is None:
            return
        genai = load_genai("GeminiProvider")
        options = {
            **self._client_options,
            "http_options": http_options.model_copy(update={"retry_options": None}),
        }
        self._retired.append(self._client)
        self._client = genai.Client(**options)
        self._client_options = options

    async def aclose(self) -> None:
        """Close the SDK client's connections; a caller's ``httpx_async_client`` stays open.

        A default egress client built to fetch media is closed too (a caller's stays open).
        """
        if self._media is not None:
            await self._media.aclose()
        for client in (*self._retired, self._client):
            await client.aio.aclose()
            client.close()

    def __repr__(self) -> str:
        return f"<GeminiProvider name={self._name!r}>"


_DEFAULT_ENDPOINT = "https://generativelanguage.googleapis.com/"


def traced(params: dict[str, Any], request: ChatRequest, url: str | None) -> dict[str, Any]:
    """``params`` for the SDK call with the trace headers (S27) as per-request HTTP options.

    A copy: the captured native request (``params``) never holds them.
    """
    headers = trace_headers(request, url)
    if not headers:
        return params
    config = dict(params.get("config") or {})
    given: Any = config.get("http_options")  # a caller's own, through ChatRequest.options
    dump = getattr(given, "model_dump", None)
    if callable(dump):
        given = dump(exclude_none=True)
    options = dict(given) if isinstance(given, Mapping) else {}
    options["headers"] = {**dict(options.get("headers") or {}), **headers}
    config["http_options"] = options
    return {**params, "config": config}
