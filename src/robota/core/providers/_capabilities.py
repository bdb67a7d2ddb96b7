"""Provider capabilities (S30): asked through one function, never by provider identity.

Generic code calls :func:`provider_capabilities` (the only reader of
:meth:`Provider.capabilities`) and :func:`model_capability`, and branches on what they say — never
on a provider's name or a model's name (S02).

Silence is not denial: every capability is ``bool | None`` (or a value or ``None``), where
``None`` means "not stated". A model's own table is asked first, then the vendor's stated
default; a capability neither states is reported as ``None``. Callers that must act on silence
state their own assumption explicitly.

Provider-hosted ("native") tools such as server-side web search are a different thing from
Robota's local function tools of the same name. A provider can *support* one without it being
*enabled* for an instance — whoever constructs the provider decides — and a request for one that
is not enabled fails in :func:`check_native_tools` before any transport starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError, NativeToolUnavailableError
from robota.core.providers._contract import ChatRequest, Provider

__all__ = [
    "ModelCapabilities",
    "ProviderCapabilities",
    "StructuredOutputTransport",
    "check_native_tools",
    "model_capabilities",
    "model_capability",
    "provider_capabilities",
    "unsupported_settings",
    "without_unsupported_settings",
]

StructuredOutputTransport: TypeAlias = Literal["json_schema", "json_mode", "none"]
"""How a model can be asked for structured output (S18): a native schema parameter, a plain JSON
mode, or neither."""


@final
@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """What is stated about one model; every field ``None`` means "not stated" (unknown).

    Attributes:
        tools: Can call function tools.
        streaming: Can stream responses.
        parallel_tool_calls: Can ask for several tool calls in one response.
        structured_output: See :data:`StructuredOutputTransport`.
        vision: Accepts images.
        reasoning: Exposes a reasoning-effort control.
        settings: The :class:`~robota.ModelSettings` fields this model honours (by field name);
            a set field outside it is not sent, and the run reports it (S28, S30).
    """

    tools: bool | None = None
    streaming: bool | None = None
    parallel_tool_calls: bool | None = None
    structured_output: StructuredOutputTransport | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    settings: frozenset[str] | None = None


@final
@dataclass(frozen=True, slots=True)
class ProviderCapabilities:
    """A provider's capability table (S30).

    Attributes:
        default_model: What the vendor states for its models in general.
        models: Per-model tables, consulted before ``default_model``.
        native_tools_supported: Provider-hosted tools this provider can run.
        native_tools_enabled: The supported ones this instance was constructed with.
    """

    default_model: ModelCapabilities = field(default_factory=ModelCapabilities)
    models: Mapping[str, ModelCapabilities] = field(default_factory=dict)
    native_tools_supported: frozenset[str] = frozenset()
    native_tools_enabled: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        stray = self.native_tools_enabled - self.native_tools_supported
        if stray:
            raise ConfigurationError(
                f"native tools enabled but not supported: {sorted(stray)}; a provider can only "
                "enable what it supports"
            )


_CAPABILITY_NAMES = frozenset(f.name for f in fields(ModelCapabilities))


def provider_capabilities(provider: Provider) -> ProviderCapabilities | None:
    """The capability table of ``provider``, or ``None`` when it publishes none (S30).

    The one function generic code uses to learn what a provider can do.
    """
    table = provider.capabilities()
    if table is not None and not isinstance(table, ProviderCapabilities):
        raise TypeError(
            f"{type(provider).__name__}.capabilities() must return ProviderCapabilities or None, "
            f"got {type(table).__name__}"
        )
    return table


def model_capabilities(provider: Provider, model: str) -> ModelCapabilities | None:
    """The merged table for ``model``: its own statements over the vendor default.

    ``None`` when the provider publishes no table at all.
    """
    table = provider_capabilities(provider)
    if table is None:
        return None
    own = table.models.get(model)
    if own is None:
        return table.default_model
    merged = {
        name: getattr(own, name)
        if getattr(own, name) is not None
        else getattr(table.default_model, name)
        for name in _CAPABILITY_NAMES
    }
    return ModelCapabilities(**merged)


def model_capability(provider: Provider, model: str, name: str) -> object | None:
    """One capability of ``model`` (``"tools"``, ``"structured_output"`` …); ``None`` = unknown.

    Raises:
        ValueError: for a capability name that does not exist.
    """
    if name not in _CAPABILITY_NAMES:
        raise ValueError(f"unknown model capability {name!r}; known: {sorted(_CAPABILITY_NAMES)}")
    merged = model_capabilities(provider, model)
    return None if merged is None else getattr(merged, name)


def check_native_tools(provider: Provider, requested: Iterable[str]) -> None:
    """Refuse, before any transport, native tools ``provider`` does not support or enable (S30).

    Raises:
        NativeToolUnavailableError: naming each tool and whether it is unsupported or merely
            not enabled on this instance.
    """
    wanted = list(dict.fromkeys(requested))
    if not wanted:
        return
    table = provider_capabilities(provider)
    supported = table.native_tools_supported if table is not None else frozenset()
    enabled = table.native_tools_enabled if table is not None else frozenset()
    problems = []
    for tool in wanted:
        if tool not in supported:
            problems.append(f"{tool!r} is not supported by provider {provider.name!r}")
        elif tool not in enabled:
            problems.append(
                f"{tool!r} is supported by provider {provider.name!r} but not enabled on this "
                "instance; enable it where the provider is constructed"
            )
    if problems:
        raise NativeToolUnavailableError("native tool unavailable: " + "; ".join(problems))


def unsupported_settings(provider: Provider, request: ChatRequest) -> tuple[str, ...]:
    """The set fields of ``request.settings`` that ``request.model`` does not honour (S28, S30).

    Empty when the provider publishes no table or the model's table does not state its
    settings: silence is not denial. ``parallel_tool_calls`` counts only on a request that
    offers tools (it is not sent otherwise).
    """
    wanted = request.settings.set_fields()
    if not wanted:
        return ()
    merged = model_capabilities(provider, request.model)
    if merged is None or merged.settings is None:
        return ()
    honoured = merged.settings
    return tuple(
        name
        for name in wanted
        if name not in honoured and (name != "parallel_tool_calls" or request.tools)
    )


def without_unsupported_settings(provider: Provider, request: ChatRequest) -> ChatRequest:
    """``request`` with the settings ``provider`` does not honour for its model unset (S28).

    What an adapter sends: a field its capability table leaves out never reaches the wire
    (the runtime reports it, :func:`unsupported_settings`). Returns ``request`` itself when
    nothing is dropped.
    """
    dropped = unsupported_settings(provider, request)
    if not dropped:
        return request
    unset: dict[str, Any] = dict.fromkeys(dropped)
    settings = replace(request.settings, **unset)
    return replace(
        request,
        settings=settings,
        max_output_tokens=settings.max_output_tokens,
        temperature=settings.temperature,
    )
