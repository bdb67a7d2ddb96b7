"""``OpenAIProvider``: OpenAI's models over the official ``openai`` SDK (``AsyncOpenAI``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable
from dataclasses import replace
from typing import Any, Final, Literal, TypeAlias, final

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
from robota.lowlevel import FetchRule, MediaFetcher
from robota.providers.openai._chat import CHAT_SETTINGS, ChatCompletionsAPI, ChatWireOptions
from robota.providers.openai._common import (
    CHAT_FETCH,
    RESPONSES_FETCH,
    SDKProvider,
    check_adapter_options,
    check_base_url,
    given,
)
from robota.providers.openai._models import (
    effort_levels,
    effort_source,
    family_key,
    family_rules,
    model_capabilities_table,
    reasoning_model,
    register_openai_models,
)
from robota.providers.openai._responses import RESPONSES_SETTINGS, ResponsesAPI
from robota.providers.openai._sdk import load_openai

__all__ = ["OpenAIAPI", "OpenAIProvider"]

OpenAIAPI: TypeAlias = Literal["responses", "chat"]
"""Which OpenAI API an :class:`OpenAIProvider` speaks."""

_HOSTED: Final = {"responses": frozenset({"web_search"}), "chat": frozenset[str]()}
_API_KEY_VARIABLE: Final = "OPENAI_API_KEY"
_GENERAL: Final = ModelCapabilities(tools=True, streaming=True, structured_output="json_schema")
"""What OpenAI states for its current models in general (models-2025-12)."""


@final
class OpenAIProvider(SDKProvider):
    """OpenAI's Responses (default) or Chat Completions API, through the official SDK.

    Args:
        api_key: The API key; default: the ``OPENAI_API_KEY`` environment variable, else the
            key ``robota auth set openai`` stored (:func:`robota.host.find_api_key`).
        base_url: Another endpoint speaking OpenAI's API (e.g. a gateway); default: OpenAI's.
            With one set, :meth:`endpoint_provenance` is ``"custom"`` (S18).
        api: ``"responses"`` or ``"chat"``.
        organization: The OpenAI organization id, when the key belongs to several.
        http_client: An ``httpx2.AsyncClient`` for the SDK to use (your transport, proxy or test
            server). It stays yours: :meth:`aclose` does not close it.
        timeout: Seconds before a request times out (the SDK's default when ``None``).
        max_retries: The SDK's own retries (its default when ``None``). A host that owns
            retries — a journal, a workflow engine — passes ``0``.
        native_tools: Hosted tools this instance enables (S30), e.g. ``("web_search",)`` on the
            Responses API. A run may only request what is enabled here.
        name: The provider's name in an agent (default ``"openai"``).
        streaming: Stream responses (the default). ``False`` makes every call a complete
            request whose answer is then replayed as events — for gateways that cannot stream.
        egress: The :class:`~robota.host.EgressClient` that fetches the URL parts OpenAI does not
            fetch itself (S06): an audio URL on both APIs (``input_audio`` takes bytes only) and
            a document URL on Chat Completions (its ``file`` part takes a PDF only as bytes).
            Image URLs, and document URLs on the Responses API (``file_url``), are passed as URLs
            for OpenAI to fetch. Default: an ``EgressClient()`` built on the first fetch and
            closed by :meth:`aclose`; one passed here stays yours. A fetched part is held to
            20 MiB (audio) or 32 MiB (a PDF) and to the type it declares; a failure is a
            :class:`~robota.host.MediaFetchError` before OpenAI is called.

    Raises:
        ConfigurationError: for an unknown ``api``, a hosted tool this API does not support, no
            API key anywhere, or the ``openai`` SDK not installed (the message says
            how to install the ``openai`` extra).
    """

    __slots__ = (
        "_api",
        "_api_name",
        "_client",
        "_media",
        "_name",
        "_native",
        "_owns_client",
        "_streaming",
        "_url",
    )

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        api: OpenAIAPI = "responses",
        organization: str | None = None,
        http_client: Any = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        native_tools: Iterable[str] = (),
        name: str = "openai",
        streaming: bool = True,
        egress: EgressClient | None = None,
    ) -> None:
        if api not in ("responses", "chat"):
            raise ConfigurationError(f"api must be 'responses' or 'chat', got {api!r}")
        native = check_adapter_options(
            name, native_tools, _HOSTED[api], where=f"OpenAI's {api!r} API"
        )
        openai = load_openai("OpenAIProvider")  # a missing extra is said first
        self._media = MediaFetcher(egress, provider=name)  # checks egress= before any client
        check_base_url(base_url, where="OpenAIProvider")
        # One lookup order with the command (robota.host.find_api_key): api_key=, then
        # $OPENAI_API_KEY, then the key `robota auth set openai` stored.
        key = require_api_key(
            "openai", who="OpenAIProvider", api_key=api_key, variables=(_API_KEY_VARIABLE,)
        ).key
        self._client = openai.AsyncOpenAI(
            **given(
                api_key=key,
                base_url=base_url,
                organization=organization,
                http_client=http_client,
                timeout=timeout,
                max_retries=max_retries,
            )
        )
        self._owns_client = http_client is None
        self._guard_traces()  # S27: no trace header on a redirect hop off its origin
        self._name = name
        self._api_name: OpenAIAPI = api
        self._native = native
        self._streaming = bool(streaming)
        self._url = base_url if base_url is not None else os.environ.get("OPENAI_BASE_URL")
        self._api: ResponsesAPI | ChatCompletionsAPI = (
            ResponsesAPI(provider=name)
            if api == "responses"
            else ChatCompletionsAPI(provider=name, options=ChatWireOptions())
        )
        register_openai_models(name)

    @property
    def api(self) -> OpenAIAPI:
        """The API this instance speaks."""
        return self._api_name

    def capabilities(self) -> ProviderCapabilities:
        """The per-model table (S30), over what OpenAI states for its current models in general.

        The general statement (function tools, streaming, Structured Outputs) covers OpenAI's own
        endpoint; for a custom ``base_url`` (:meth:`endpoint_provenance` ``"custom"``) the
        runtime does not extend it to models the table does not list (S18).
        """
        honoured = RESPONSES_SETTINGS if self._api_name == "responses" else CHAT_SETTINGS
        return ProviderCapabilities(
            default_model=replace(_GENERAL, settings=honoured),
            # S28/S30: a reasoning model honours the API's settings less the sampling ones
            # (_models.SAMPLING_SETTINGS); the general statement covers everything else.
            models=model_capabilities_table(honoured),
            families=family_rules(honoured),
            family_key=family_key,  # S13: a fine-tune matches as its base
            native_tools_supported=_HOSTED[self._api_name],
            native_tools_enabled=self._native,
        )

    def resolve_effort(self, request: ChatRequest) -> EffortResolution:
        """The effort resolution for ``request`` against this model's row, else its family (S24)."""
        return resolve_effort(
            request.effort,
            effort_levels(request.model),
            model=request.model,
            source=effort_source(request.model),
        )

    def _fetch_rule(self, model: str) -> FetchRule:
        # S06: the URL kinds this API takes only as bytes (see the class docstring).
        return RESPONSES_FETCH if self._api_name == "responses" else CHAT_FETCH

    def _reasoning_model(self, model: str) -> bool | None:
        # The exact row, else the family rule (S13): a newer reasoning model must still be asked
        # for its encrypted reasoning items, or they are lost between turns.
        return reasoning_model(model)

    async def _send(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> ChatResponse:
        if isinstance(self._api, ResponsesAPI):
            reasoning = self._reasoning_model(request.model)
            return await self._api.chat(
                self._client,
                request,
                effort=effort,
                reasoning_model=reasoning,
                signal=signal,
                capture=capture,
            )
        return await self._api.chat(
            self._client, request, effort=effort, signal=signal, capture=capture
        )

    def _open(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> AsyncIterator[StreamEvent]:
        if isinstance(self._api, ResponsesAPI):
            reasoning = self._reasoning_model(request.model)
            return self._api.chat_stream(
                self._client,
                request,
                effort=effort,
                reasoning_model=reasoning,
                signal=signal,
                capture=capture,
            )
        return self._api.chat_stream(
            self._client, request, effort=effort, signal=signal, capture=capture
        )

    def __repr__(self) -> str:
        return f"<OpenAIProvider name={self._name!r} api={self._api_name!r}>"
