"""Capability tables (S30): the values a provider states about itself and its models.

:class:`ProviderCapabilities` and what it is made of live here, below both the provider contract
(:meth:`Provider.capabilities <robota.core.providers.Provider.capabilities>` returns one) and
the capability queries in :mod:`robota.core.providers._capabilities`, which re-exports them and
asks them on a provider's behalf — so the two modules do not import each other (issue 32).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal, TypeAlias, final

from robota.core._errors import ConfigurationError

__all__ = [
    "CapabilitySource",
    "ModelCapabilities",
    "ModelFamily",
    "ProviderCapabilities",
    "StructuredOutputTransport",
    "match_model_family",
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
        vision: Accepts images (:class:`~robota.ImagePart`).
        reasoning: Exposes a reasoning-effort control.
        documents: Accepts PDF documents (:class:`~robota.DocumentPart`).
        audio: Accepts audio input (:class:`~robota.AudioPart`).
        settings: The :class:`~robota.ModelSettings` fields this model honours (by field name);
            a set field outside it is not sent, and the run reports it (S28, S30).

    A media part a model's table states ``False`` for is refused before any transport
    (:func:`check_media`); ``None`` (not stated) lets the server decide.
    """

    tools: bool | None = None
    streaming: bool | None = None
    parallel_tool_calls: bool | None = None
    structured_output: StructuredOutputTransport | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    documents: bool | None = None
    audio: bool | None = None
    settings: frozenset[str] | None = None


CapabilitySource: TypeAlias = Literal["exact", "family", "default", "unknown"]
"""Where a model's capabilities came from (see :func:`lookup_model_capabilities`):
``"exact"`` the model's own row in the provider's table, ``"family"`` the family rule its name
matched, ``"default"`` only the vendor's general statement, ``"unknown"`` no table at all."""


@final
@dataclass(frozen=True, slots=True)
class ModelFamily:
    """A documented rule for models a provider's exact table does not list (S13, S30).

    A model string matches when it fits one of ``patterns`` and none of ``exclude``
    (:func:`fnmatch.fnmatchcase` globs: ``*`` any text, ``?`` one character), compared
    case-insensitively — vendors' model ids are lowercase, and ``GPT-5.5`` names the same
    model as ``gpt-5.5`` — and, when ``condition`` is given, passes it too.
    A match gives the family's ``capabilities`` — never a price (cost stays unknown, S04) and
    no context window: a family states capabilities and, in its adapter, an effort vocabulary.

    Attributes:
        name: A short label for the family (``"gpt-5"``), shown in lookups and effort records.
        patterns: Globs a member's name fits.
        capabilities: What the vendor states for every member (``None`` fields: not stated).
        source: Where the rule comes from, dated (``"models-2025-12"``), opaque to core.
        exclude: Globs that take a name back out of the family (``"gpt-5*-chat*"``).
        condition: A further test on the (lowercased) name, for what a glob cannot say — a
            numeric version bound such as "minor version 7 or later", which must also take
            ``4-10`` and ``4-11``. Must be pure and cheap; ``None``: none.
    """

    name: str
    patterns: tuple[str, ...]
    capabilities: ModelCapabilities
    source: str
    exclude: tuple[str, ...] = ()
    condition: Callable[[str], bool] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        patterns: object = self.patterns
        if isinstance(patterns, str) or not patterns:
            raise ConfigurationError(
                f"ModelFamily {self.name!r}: patterns must be a non-empty tuple of globs, e.g. "
                f"patterns=('gpt-5*',), got {patterns!r}"
            )

    def matches(self, model: str) -> bool:
        """Whether ``model`` belongs to this family (case-insensitively)."""
        name = model.lower()
        return (
            any(fnmatchcase(name, p.lower()) for p in self.patterns)
            and not any(fnmatchcase(name, p.lower()) for p in self.exclude)
            and (self.condition is None or self.condition(name))
        )


def match_model_family(families: Sequence[ModelFamily], model: str) -> ModelFamily | None:
    """The first of ``families`` that ``model`` belongs to, or ``None``."""
    for family in families:
        if family.matches(model):
            return family
    return None


@final
@dataclass(frozen=True, slots=True)
class ProviderCapabilities:
    """A provider's capability table (S30).

    Attributes:
        default_model: What the vendor states for its models in general.
        models: Per-model tables (the exact table), consulted first.
        families: Rules for names ``models`` does not list, in order (the first match wins);
            consulted after ``models`` and before ``default_model``.
        native_tools_supported: Provider-hosted tools this provider can run.
        native_tools_enabled: The supported ones this instance was constructed with.
        family_key: How a model string the exact table does not list is read before it is
            matched to ``families`` — a documented vendor naming rule, e.g. OpenAI's fine-tune
            ``ft:gpt-4.1-2025-04-14:org:name:id`` matching as its base ``gpt-4.1-2025-04-14``.
            The match still gives the family only (no price, no window). ``None``: the name as
            given.
    """

    default_model: ModelCapabilities = field(default_factory=ModelCapabilities)
    models: Mapping[str, ModelCapabilities] = field(default_factory=dict)
    families: Sequence[ModelFamily] = ()
    native_tools_supported: frozenset[str] = frozenset()
    native_tools_enabled: frozenset[str] = frozenset()
    family_key: Callable[[str], str] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        stray = self.native_tools_enabled - self.native_tools_supported
        if stray:
            raise ConfigurationError(
                f"native tools enabled but not supported: {sorted(stray)}; a provider can only "
                "enable what it supports"
            )
