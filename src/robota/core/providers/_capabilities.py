"""Provider capabilities (S30): asked through one function, never by provider identity.

Generic code calls :func:`provider_capabilities` (the only reader of
:meth:`Provider.capabilities`) and :func:`model_capability`, and branches on what they say — never
on a provider's name or a model's name (S02).

Silence is not denial: every capability is ``bool | None`` (or a value or ``None``), where
``None`` means "not stated". A model's own table is asked first, then the family its name belongs
to (:class:`ModelFamily`, for a model newer than the table), then the vendor's stated default; a
capability none of them states is reported as ``None``. Callers that must act on silence state
their own assumption explicitly. :func:`lookup_model_capabilities` also says which of these
answered (:data:`CapabilitySource`).

Provider-hosted ("native") tools such as server-side web search are a different thing from
Robota's local function tools of the same name. A provider can *support* one without it being
*enabled* for an instance — whoever constructs the provider decides — and a request for one that
is not enabled fails in :func:`check_native_tools` before any transport starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Final, final

from robota.core._errors import ConfigurationError, NativeToolUnavailableError
from robota.core._messages import Message, ToolMessage, UserMessage, carried_parts
from robota.core._parts import MessagePart, TextPart, tool_parts
from robota.core._texts import render
from robota.core.providers._contract import ChatRequest, Provider
from robota.core.providers._tables import (
    CapabilitySource,
    ModelCapabilities,
    ModelFamily,
    ProviderCapabilities,
    StructuredOutputTransport,
    match_model_family,
)

__all__ = [
    "CapabilitySource",
    "ModelCapabilities",
    "ModelCapabilityLookup",
    "ModelFamily",
    "ProviderCapabilities",
    "StructuredOutputTransport",
    "check_media",
    "check_native_tools",
    "lookup_model_capabilities",
    "match_model_family",
    "model_capabilities",
    "model_capability",
    "provider_capabilities",
    "unsupported_settings",
    "without_unsupported_settings",
]

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


@final
@dataclass(frozen=True, slots=True)
class ModelCapabilityLookup:
    """A model's capabilities and where they came from (S30).

    Attributes:
        capabilities: The merged table (the model's own or its family's statements over the
            vendor default); ``None`` when the provider publishes no table.
        source: See :data:`CapabilitySource`.
        own: What the exact row or the family states, before the vendor default is merged in;
            ``None`` for ``"default"`` and ``"unknown"``.
        family: The family rule that matched, for ``source == "family"``.
    """

    capabilities: ModelCapabilities | None
    source: CapabilitySource
    own: ModelCapabilities | None = None
    family: ModelFamily | None = None


def _merged(own: ModelCapabilities, default: ModelCapabilities) -> ModelCapabilities:
    return ModelCapabilities(
        **{
            name: getattr(own, name) if getattr(own, name) is not None else getattr(default, name)
            for name in _CAPABILITY_NAMES
        }
    )


def lookup_model_capabilities(provider: Provider, model: str) -> ModelCapabilityLookup:
    """``model``'s capabilities on ``provider`` and their source (S13, S30).

    In order: the exact table (``"exact"``), the first matching family (``"family"``; the
    name read through :attr:`ProviderCapabilities.family_key` first), the vendor's general
    statement alone (``"default"``); a provider with no table is ``"unknown"``. The exact
    table always wins over a family.
    """
    table = provider_capabilities(provider)
    if table is None:
        return ModelCapabilityLookup(None, "unknown")
    own = table.models.get(model)
    if own is not None:
        return ModelCapabilityLookup(_merged(own, table.default_model), "exact", own)
    key = table.family_key(model) if table.family_key is not None else model
    family = match_model_family(table.families, key)
    if family is not None:
        merged = _merged(family.capabilities, table.default_model)
        return ModelCapabilityLookup(merged, "family", family.capabilities, family)
    return ModelCapabilityLookup(table.default_model, "default")


def model_capabilities(provider: Provider, model: str) -> ModelCapabilities | None:
    """The merged table for ``model``: its own (or its family's) statements over the default.

    ``None`` when the provider publishes no table at all. :func:`lookup_model_capabilities`
    also says where the answer came from.
    """
    return lookup_model_capabilities(provider, model).capabilities


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


_MEDIA_CAPABILITY: Final = {"image": "vision", "document": "documents", "audio": "audio"}
_MEDIA_WORD: Final = {"image": "images", "document": "PDF documents", "audio": "audio"}


def check_media(provider: Provider, model: str, messages: Sequence[Message]) -> None:
    """Refuse, before any transport, a media part ``model`` is stated not to accept (S30).

    Only a capability stated ``False`` refuses; an unknown one (``None``, e.g. a model an
    OpenAI-compatible server hosts) lets the server decide. A text-only conversation costs one
    type check per message.

    Raises:
        ConfigurationError: naming the part, its message and the model, and what to do.
    """
    merged: ModelCapabilities | None = None
    for index, message in enumerate(messages):
        for part in carried_parts(message):
            if part.kind == "text":
                continue
            if merged is None:
                merged = model_capabilities(provider, model) or ModelCapabilities()
            name = _MEDIA_CAPABILITY[part.kind]
            if getattr(merged, name) is False:
                raise ConfigurationError(
                    f"model {model!r} on provider {provider.name!r} does not accept "
                    f"{_MEDIA_WORD[part.kind]}: {part!r} in message {index} was not sent (its "
                    f"capability table says {name}=False); choose a model that takes "
                    f"{_MEDIA_WORD[part.kind]}, or leave the part out",
                    code="media_unsupported",
                )


def omit_unsupported_media(
    provider: Provider,
    model: str,
    messages: Sequence[Message],
    notice: str,
    *,
    carriers: Sequence[Message] | None = None,
) -> tuple[Sequence[Message], tuple[str, ...]]:
    """``messages`` with every media part ``model`` is stated not to take replaced by a notice.

    For what the run itself placed in history — a tool's or an MCP server's image, or an
    earlier turn's media after the model changed — so one result the model cannot see never
    makes the conversation unusable (S30). ``notice`` is a template with ``{media}`` and
    ``{model}``. Only a capability stated ``False`` omits; history is never changed. A
    conversation without media is returned as is, at one type check per message.

    ``carriers``, when given, are the messages of ``messages`` that carry media (what
    :attr:`ConversationStore.media_messages` keeps): only they are read unless one of them has
    a part to omit, so a round costs nothing per message of a long history.

    Returns:
        The messages to send, and the kinds of media omitted (``"image"`` …), each once.
    """
    if carriers is not None and not _any_refused(provider, model, carriers):
        return messages, ()
    merged: ModelCapabilities | None = None
    out: list[Message] | None = None
    omitted: list[str] = []
    for index, message in enumerate(messages):
        sent = message
        media = carried_parts(message)
        notes: list[str] = []
        kept: list[MessagePart] = []
        for part in media:
            if part.kind != "text":
                if merged is None:
                    merged = model_capabilities(provider, model) or ModelCapabilities()
                if getattr(merged, _MEDIA_CAPABILITY[part.kind]) is False:
                    notes.append(render(notice, media=_MEDIA_WORD[part.kind], model=model))
                    if part.kind not in omitted:
                        omitted.append(part.kind)
                    continue
            kept.append(part)
        if notes:
            if isinstance(message, ToolMessage):
                text = "\n".join([message.content, *notes] if message.content else notes)
                sent = replace(message, content=text, parts=tool_parts(kept, "a tool result"))
            elif isinstance(message, UserMessage):
                sent = replace(message, content=(*kept, *(TextPart(n) for n in notes)))
            if out is None:
                out = list(messages[:index])
        if out is not None:
            out.append(sent)
    if out is None:
        return messages, ()
    return tuple(out), tuple(omitted)


def _any_refused(provider: Provider, model: str, carriers: Sequence[Message]) -> bool:
    merged: ModelCapabilities | None = None
    for message in carriers:
        for part in carried_parts(message):
            if part.kind == "text":
                continue
            if merged is None:
                merged = model_capabilities(provider, model) or ModelCapabilities()
            if getattr(merged, _MEDIA_CAPABILITY[part.kind]) is False:
                return True
    return False


def unsupported_settings(provider: Provider, request: ChatRequest) -> tuple[str, ...]:
    """The set fields of ``request.settings`` that ``request.model`` does not honour (S28, S30).

    Two sources, in field order: the model's capability table (what the model honours at
    all) and :meth:`Provider.unsupported_request_settings` (what this request excludes, e.g.
    a sampling setting its extended thinking rules out). The table's part is empty when the
    provider publishes no table or the model's table does not state its settings: silence is
    not denial. ``parallel_tool_calls`` counts only on a request that offers tools (it is not
    sent otherwise).
    """
    wanted = request.settings.set_fields()
    if not wanted:
        return ()
    merged = model_capabilities(provider, request.model)
    honoured = merged.settings if merged is not None else None
    excluded = frozenset(provider.unsupported_request_settings(request))
    return tuple(
        name
        for name in wanted
        if ((honoured is not None and name not in honoured) or name in excluded)
        and (name != "parallel_tool_calls" or request.tools)
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
