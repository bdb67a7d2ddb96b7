"""``AnthropicProvider``: Claude models over the official ``anthropic`` SDK (``AsyncAnthropic``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any, Final, final

from robota.core import (
    AbortSignal,
    ChatRequest,
    ChatResponse,
    EffortResolution,
    ModelCapabilities,
    ProviderCapabilities,
    resolve_effort,
)
from robota.core.providers import NativeCapture, StreamEvent
from robota.host import require_api_key
from robota.providers._kit import (
    Driver,
    SDKProvider,
    ToolProjector,
    check_adapter_options,
    check_base_url,
    given,
    map_transport_error,
    sdk_call,
)
from robota.providers.anthropic._errors import map_anthropic_error
from robota.providers.anthropic._models import (
    FAMILY_RULES,
    effort_control,
    model_capabilities_table,
    register_anthropic_models,
    thinking_budgets,
)
from robota.providers.anthropic._projection import ANTHROPIC_POLICY
from robota.providers.anthropic._sdk import load_anthropic
from robota.providers.anthropic._wire import (
    API_NAME,
    MESSAGES_SETTINGS,
    NATIVE_TOOLS,
    MessagesStreamAssembler,
    max_tokens_for,
    messages_params,
    messages_response,
    thinking_excludes,
)

__all__ = ["AnthropicProvider", "map_error"]

_API_KEY_VARIABLE: Final = "ANTHROPIC_API_KEY"
_BASE_URL_VARIABLE: Final = "ANTHROPIC_BASE_URL"
_GENERAL: Final = ModelCapabilities(
    tools=True, streaming=True, parallel_tool_calls=True, audio=False
)  # the Messages API has no audio input block
"""What Anthropic states for its current models in general (models-2025-12)."""


def map_error(error: BaseException, *, provider: str, model: str | None) -> BaseException:
    """An exception from the ``anthropic`` SDK or its transport as the error to raise (S42)."""
    import anthropic  # noqa: PLC0415 - loaded by now; the adapter imports it lazily

    if isinstance(error, anthropic.AnthropicError):
        return map_anthropic_error(error, provider=provider, model=model)
    return map_transport_error(error, provider=provider, model=model)


@final
class AnthropicProvider(SDKProvider):
    """Anthropic's Messages API, through the official SDK.

    Media URLs (issue 26, S06): Anthropic fetches an ``image`` or ``document`` block's ``url``
    source itself, so an image or PDF part given by URL is sent as a URL and this adapter fetches
    nothing (it takes no ``egress=``); the Messages API has no audio block at all.

    Args:
        api_key: The API key; default: the ``ANTHROPIC_API_KEY`` environment variable, else the
            key ``robota auth set anthropic`` stored (:func:`robota.host.find_api_key`).
        base_url: Another endpoint speaking the Messages API (a gateway, ``llama-server``);
            default: ``ANTHROPIC_BASE_URL`` or Anthropic's. With one set,
            :meth:`endpoint_provenance` is ``"custom"`` (S18).
        http_client: An ``httpx2.AsyncClient`` for the SDK to use. It stays yours:
            :meth:`aclose` does not close it.
        timeout: Seconds before a request times out (the SDK's default when ``None``).
        max_retries: The SDK's own retries (its default when ``None``); a host that owns
            retries passes ``0``.
        native_tools: Hosted tools this instance enables (S30): ``"web_search"`` (Anthropic's
            ``web_search`` server tool). A run may only request what is enabled here.
        prompt_caching: Place ``cache_control`` breakpoints on the system prompt, the tool
            definitions and the conversation prefix (the rule is in :mod:`._wire`).
        name: The provider's name in an agent (default ``"anthropic"``).
        streaming: Stream responses (the default). ``False`` makes every call a complete
            request whose answer is then replayed as events.

    Raises:
        ConfigurationError: for a hosted tool this adapter does not support, no API key
            anywhere, or the ``anthropic`` SDK not installed (the message says
            how to install the ``anthropic`` extra).
    """

    __slots__ = (
        "_caching",
        "_client",
        "_driver",
        "_name",
        "_native",
        "_owns_client",
        "_projector",
        "_streaming",
        "_url",
    )

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: Any = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        native_tools: Iterable[str] = (),
        prompt_caching: bool = False,
        name: str = "anthropic",
        streaming: bool = True,
    ) -> None:
        native = check_adapter_options(name, native_tools, NATIVE_TOOLS, where="AnthropicProvider")
        anthropic = load_anthropic("AnthropicProvider")  # a missing extra is said first
        check_base_url(base_url, where="AnthropicProvider")
        # One lookup order with the command (robota.host.find_api_key).
        key = require_api_key(
            "anthropic", who="AnthropicProvider", api_key=api_key, variables=(_API_KEY_VARIABLE,)
        ).key
        self._client = anthropic.AsyncAnthropic(
            **given(
                api_key=key,
                base_url=base_url,
                http_client=http_client,
                timeout=timeout,
                max_retries=max_retries,
            )
        )
        self._owns_client = http_client is None
        self._guard_traces()
        self._name = name
        self._native = native
        self._caching = bool(prompt_caching)
        self._streaming = bool(streaming)
        self._url = base_url if base_url is not None else os.environ.get(_BASE_URL_VARIABLE)
        self._projector = ToolProjector(ANTHROPIC_POLICY, name)
        self._driver = Driver(API_NAME, name, map_error)
        register_anthropic_models(name)

    def capabilities(self) -> ProviderCapabilities:
        """The per-model table (S30), over what Anthropic states for its models in general."""
        return ProviderCapabilities(
            default_model=replace(_GENERAL, settings=MESSAGES_SETTINGS),
            models=model_capabilities_table(),
            families=FAMILY_RULES,
            native_tools_supported=frozenset(NATIVE_TOOLS),
            native_tools_enabled=self._native,
        )

    def resolve_effort(self, request: ChatRequest) -> EffortResolution:
        """The effort as an extended-thinking budget from this model's row (S24).

        Only levels whose budget fits below the request's ``max_tokens`` are offered (the API
        requires ``budget_tokens < max_tokens``), so a larger one is ``clamped`` to the highest
        that fits. ``"auto"`` and ``"none"`` send no thinking; a model without thinking (or not
        listed) is ``not_applied``, and so is a request that forces a tool call: Anthropic allows
        extended thinking only with ``tool_choice`` auto or none.
        """
        return self._resolve(request, streamed=self._streaming)

    def unsupported_request_settings(self, request: ChatRequest) -> tuple[str, ...]:
        """The sampling settings this request's extended thinking rules out (S28, S30).

        With a thinking budget on, ``temperature`` cannot be set and ``top_p`` only from 0.95
        to 1 (:func:`._wire.thinking_excludes`); such a field is not sent and the run reports
        it. Whether thinking is on follows the effort resolved for the surface this instance
        calls (a budget fits a complete call's lower default whenever it fits a stream's).
        """
        settings = request.settings
        if settings.temperature is None and settings.top_p is None:
            return ()
        return thinking_excludes(settings, self._resolve(request, streamed=self._streaming))

    def _resolve(self, request: ChatRequest, *, streamed: bool) -> EffortResolution:
        # The budget must fit below the max_tokens of the call actually made (a complete call's
        # default is capped lower than a stream's).
        control = effort_control(request.model)
        if control is not None:
            # The model's own effort control (its entry, else its family's: a Claude Opus 4.7+
            # refuses a thinking budget), sent as its level name (S24).
            levels, source = control
            return resolve_effort(request.effort, levels, model=request.model, source=source)
        # The model's row, else its family (S13): a newer Claude 4 model still thinks.
        budgets, source = thinking_budgets(request.model)
        if budgets is None or request.tool_choice == "required":
            return resolve_effort(request.effort, None, model=request.model, source=source)
        limit = max_tokens_for(request, streamed=streamed)
        fitting = {level: budget for level, budget in budgets.items() if budget < limit}
        return resolve_effort(
            request.effort,
            tuple(fitting),
            native={level: str(budget) for level, budget in fitting.items()},
            model=request.model,
            source=source,
        )

    async def _send(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> ChatResponse:
        # A complete call has its own max_tokens: resolve for it (the effort passed in was made
        # for this instance's default surface, a stream when streaming is on).
        effort = self._resolve(request, streamed=False)
        params = messages_params(
            request,
            projector=self._projector,
            effort=effort,
            prompt_caching=self._caching,
            stream=False,
            provider=self._name,
        )
        message = await self._driver.call(
            self._create(params, request), request, params, signal=signal, capture=capture
        )
        return messages_response(message, effort=effort, provider=self._name)

    def _open(
        self,
        request: ChatRequest,
        effort: EffortResolution | None,
        signal: AbortSignal | None,
        capture: NativeCapture,
    ) -> AsyncIterator[StreamEvent]:
        params = messages_params(
            request,
            projector=self._projector,
            effort=effort,
            prompt_caching=self._caching,
            stream=True,
            provider=self._name,
        )
        return self._driver.stream(
            self._create(params, request),
            MessagesStreamAssembler(provider=self._name, effort=effort),
            request,
            params,
            signal=signal,
            capture=capture,
        )

    def _create(self, params: dict[str, Any], request: ChatRequest) -> Callable[[], Awaitable[Any]]:
        """The SDK call sending ``params`` as the request body, exactly.

        S27: the trace headers go to the call only (never into the captured ``params``).
        """
        # Body fields this SDK does not take as keywords (``temperature``, which newer SDKs no
        # longer type, or a caller's vendor option) go through ``extra_body``.
        return sdk_call(self._client.messages.create, request, self.endpoint_url(), params)

    def __repr__(self) -> str:
        return f"<AnthropicProvider name={self._name!r}>"
