"""``OpenAICompatibleProvider``: Chat Completions against any server that speaks it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, final
from urllib.parse import urlsplit

from robota.core import (
    AbortSignal,
    ChatRequest,
    ChatResponse,
    ConfigurationError,
    EffortLevel,
    EffortResolution,
    ModelMetadata,
    ModelPricing,
    ProviderCapabilities,
    register_model_metadata,
    register_model_pricing,
    resolve_effort,
)
from robota.core.providers import NativeCapture, StreamEvent
from robota.host import EgressClient, find_api_key
from robota.lowlevel import FetchRule, MediaFetcher
from robota.providers.openai._chat import (
    ChatCompletionsAPI,
    ChatWireOptions,
    SDKProvider,
    check_adapter_options,
    given,
    load_openai,
)
from robota.providers.openai_compatible._window import WindowProbe

__all__ = ["BASE_URL_VARIABLE", "OpenAICompatibleProvider"]

BASE_URL_VARIABLE: Final = "OPENAI_COMPATIBLE_BASE_URL"
"""The environment variable read for the server's API root when ``base_url`` is not given.

Its own name on purpose: ``OPENAI_BASE_URL`` belongs to OpenAI's SDK and to ``openai:`` models.
"""


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


_NO_KEY = "not-needed"  # the SDK requires a non-empty key; local servers ignore it

_MiB: Final = 1024 * 1024
FETCH_ALL: Final = FetchRule(
    kinds=frozenset({"image", "document", "audio"}),
    # The limits of OpenAI's own format (20 MiB an image or a clip, 32 MiB a PDF): a server that
    # speaks it states none of its own that a client could read.
    max_bytes={"image": 20 * _MiB, "document": 32 * _MiB, "audio": 20 * _MiB},
    # input_audio's `format` is wav or mp3 (the Chat Completions wire this adapter speaks).
    accepts={"audio": frozenset({"audio/wav", "audio/mpeg"})},
)
"""S06: every URL part is fetched here — a local server (llama.cpp's llama-server and most
others) fetches no remote URL, and one that could would reach the network from its own host."""


@final
class OpenAICompatibleProvider(SDKProvider):
    """Any OpenAI-compatible Chat Completions endpoint (vLLM, llama.cpp, Ollama, LM Studio …).

    Nothing is assumed about the server (S18, S30): it publishes no capability table unless you
    declare one, so a structured-output request is sent unchanged rather than guessed at; its
    endpoint provenance is ``"custom"``; no effort control is sent unless you declare the levels
    a model offers. A model's context window is what you declare (``Agent(context_window=...)``
    or ``models=``), else what the server reports — asked once per provider instance, on the first
    run, from ``GET /v1/models`` and llama.cpp's ``GET /props`` (3 s each, no retries; a server
    answering neither is fine) — else unknown: never a borrowed default (S13).

    The model string ``"openai-compatible:NAME"`` builds one (``robota.Agent(
    "openai-compatible:llama3", base_url="http://127.0.0.1:8080/v1")``, or the same with
    ``OPENAI_COMPATIBLE_BASE_URL`` set), exactly as the command's ``--model
    openai-compatible:NAME --base-url URL`` does.

    Args:
        base_url: The server's API root, e.g. ``"http://127.0.0.1:8080/v1"``; default: the
            ``OPENAI_COMPATIBLE_BASE_URL`` environment variable.
        api_key: The server's key, if it wants one; default: the key ``robota auth set
            openai-compatible`` stored, else none (:func:`robota.host.find_api_key`; there is no
            environment variable for it). ``OPENAI_API_KEY`` is deliberately *not* read, nor any
            other OpenAI account setting the SDK takes from the environment (organization,
            project, admin key, custom headers, ``OPENAI_BASE_URL``): none is sent to another
            server.
        name: The provider's name in an agent; set it so two servers can coexist.
        http_client: An ``httpx2.AsyncClient`` for the SDK (stays yours; not closed here).
        timeout: Seconds before a request times out (the SDK's default when ``None``).
        max_retries: The SDK's own retries (its default when ``None``; ``0`` when a host owns
            retries).
        capabilities: The server's capability table, if you know it (S30).
        models: Metadata of the models it serves (context window, max output), registered under
            this provider's name (S13); the server is not asked about a model declared here.
        pricing: Prices of those models, registered under this provider's name (S04).
        effort_levels: Per model, the effort levels the server accepts as
            ``reasoning_effort`` (S24); a model not listed gets no effort control.
        max_tokens_field: The request field for the output limit (``"max_tokens"`` — what
            most servers read — or ``"max_completion_tokens"``).
        stream_usage: Ask for usage at the end of a stream (``stream_options``); turn it off
            for a server that refuses the option.
        headers: Extra HTTP headers on every request.
        streaming: Stream responses (the default); ``False`` for a server that cannot stream:
            each call is then a complete request whose answer is replayed as events.
        egress: The :class:`~robota.host.EgressClient` that fetches URL parts (S06). The server
            is assumed to fetch no URL, so every image, document and audio part given by URL is
            fetched here and sent inline (at most 20 MiB an image or a clip, 32 MiB a PDF; audio
            as wav or mp3). Default: an ``EgressClient()`` built on the first fetch and closed by
            :meth:`aclose`; one passed here stays yours. A failure is a
            :class:`~robota.host.MediaFetchError` before the server is called.

    Raises:
        ConfigurationError: for no ``base_url`` (nor ``OPENAI_COMPATIBLE_BASE_URL``), one that
            is not an ``http(s)://`` URL (the message names where it came from), an empty
            ``api_key``, a missing name, or the ``openai`` SDK not installed (the message says
            what to install).
        CredentialStoreError: no key was given and the credential store cannot be read.
    """

    __slots__ = (
        "_api",
        "_capabilities",
        "_client",
        "_declared",
        "_efforts",
        "_media",
        "_name",
        "_owns_client",
        "_probe",
        "_streaming",
    )

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        name: str = "openai-compatible",
        http_client: Any = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        capabilities: ProviderCapabilities | None = None,
        models: Iterable[ModelMetadata] = (),
        pricing: Iterable[ModelPricing] = (),
        effort_levels: Mapping[str, Sequence[EffortLevel]] | None = None,
        max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        stream_usage: bool = True,
        headers: Mapping[str, str] | None = None,
        streaming: bool = True,
        egress: EgressClient | None = None,
    ) -> None:
        url: object = base_url if base_url is not None else os.environ.get(BASE_URL_VARIABLE)
        if not isinstance(url, str) or not url.strip():
            raise ConfigurationError(
                _no_base_url(base_url),
                code="missing_base_url",
                context={"variable": BASE_URL_VARIABLE},
            )
        if not _is_http_url(url):
            # Name where the bad value came from: the argument, or the variable the user set.
            raise ConfigurationError(
                f"OpenAICompatibleProvider base_url {url!r} is not a URL: write the server's "
                "API root with http:// or https://, e.g. 'http://127.0.0.1:8080/v1'"
                if base_url is not None
                else f"${BASE_URL_VARIABLE} {url!r} is not a URL: set it to the server's API "
                "root with http:// or https://, e.g. 'http://127.0.0.1:8080/v1'",
                code="invalid_base_url",
                context={"variable": BASE_URL_VARIABLE},
            )
        base_url = url
        check_adapter_options(name, (), (), where="OpenAICompatibleProvider")
        if capabilities is not None and not isinstance(capabilities, ProviderCapabilities):
            raise ConfigurationError(
                f"capabilities must be a ProviderCapabilities, got {type(capabilities).__name__}"
            )
        if max_tokens_field not in ("max_tokens", "max_completion_tokens"):
            raise ConfigurationError(
                "max_tokens_field must be 'max_tokens' or 'max_completion_tokens', "
                f"got {max_tokens_field!r}"
            )
        openai = load_openai("OpenAICompatibleProvider")
        self._media = MediaFetcher(egress, provider=name)  # checks egress= before any client
        # One lookup order with the command (robota.host.find_api_key): api_key=, then the key
        # `robota auth set openai-compatible` stored; no variable, and a key is optional.
        found = find_api_key("openai-compatible", api_key=api_key)
        client = openai.AsyncOpenAI(
            **given(
                api_key=_NO_KEY if found is None else found.key,
                base_url=base_url,
                http_client=http_client,
                timeout=timeout,
                max_retries=max_retries,
                default_headers=dict(headers) if headers else None,
            )
        )
        # The SDK fills in OpenAI account settings from the environment (OPENAI_ORG_ID,
        # OPENAI_PROJECT_ID, OPENAI_ADMIN_KEY, OPENAI_CUSTOM_HEADERS …); none of them belongs to
        # another server, so none is sent there.
        client.organization = None
        client.project = None
        client.admin_api_key = None
        client.webhook_secret = None
        client._custom_headers = dict(headers or {})
        self._client = client
        self._probe = WindowProbe(client, base_url)
        self._owns_client = http_client is None
        self._guard_traces()  # S27: no trace header on a redirect hop off its origin
        self._name = name
        self._capabilities = capabilities
        self._streaming = bool(streaming)
        self._efforts = {model: tuple(levels) for model, levels in (effort_levels or {}).items()}
        self._api = ChatCompletionsAPI(
            provider=name,
            options=ChatWireOptions(
                max_tokens_field=max_tokens_field,
                stream_usage=stream_usage,
                strict_structured_output=False,
                max_stop=None,  # a compatible server states no limit of OpenAI's
                api=f"the OpenAI-compatible server of provider {name!r}",
            ),
        )
        self._declared: set[str] = set()
        for entry in models:
            self._declared.add(entry.model)
            register_model_metadata(
                entry.model,
                context_window=entry.context_window,
                max_output_tokens=entry.max_output_tokens,
                provider=name,
                replace=True,
            )
        for price in pricing:
            register_model_pricing(
                price.model,
                input_per_million=price.input_per_million,
                output_per_million=price.output_per_million,
                cache_read_per_million=price.cache_read_per_million,
                provider=name,
                replace=True,
            )

    def endpoint_provenance(self) -> Literal["custom"]:
        """Always ``"custom"``: this is never the vendor's own endpoint (S18)."""
        return "custom"

    async def reported_context_window(self, model: str) -> int | None:
        """The window the server reports for ``model`` (asked once per instance), or ``None``.

        A model declared with ``models=`` is not asked about: the declaration is the caller's
        own statement, and the registered table answers for it.
        """
        if model in self._declared:
            return None
        return await self._probe.window(model)

    def capabilities(self) -> ProviderCapabilities | None:
        """The declared table, or ``None``: silence, never a denial (S30)."""
        return self._capabilities

    def resolve_effort(self, request: ChatRequest) -> EffortResolution:
        """The effort resolution for ``request`` against the declared levels (S24)."""
        return resolve_effort(
            request.effort, self._efforts.get(request.model), model=request.model, source="caller"
        )

    def _fetch_rule(self, model: str) -> FetchRule:
        return FETCH_ALL

    async def _send(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> ChatResponse:
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
        return self._api.chat_stream(
            self._client, request, effort=effort, signal=signal, capture=capture
        )

    def __repr__(self) -> str:
        return f"<OpenAICompatibleProvider name={self._name!r}>"


def _no_base_url(given: object) -> str:
    """The missing-URL message, naming only the ways the caller has not tried."""
    if given is not None:
        return (
            f"OpenAICompatibleProvider got base_url={given!r}; pass the server's API root, "
            "e.g. 'http://127.0.0.1:8080/v1'"
        )
    if BASE_URL_VARIABLE in os.environ:
        return (
            f"${BASE_URL_VARIABLE} is set but empty; set it to the server's API root (e.g. "
            "'http://127.0.0.1:8080/v1') or pass base_url="
        )
    return (
        "OpenAICompatibleProvider needs the server's API root: pass base_url= (e.g. "
        f"'http://127.0.0.1:8080/v1') or set {BASE_URL_VARIABLE}"
    )
