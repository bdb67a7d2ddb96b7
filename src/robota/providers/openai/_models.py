"""OpenAI's model facts (S02, S04, S13, S24, S30): capabilities, effort levels, metadata, prices.

Every row is source-dated. Sources, as read on the date given:

* ``models-2025-12`` — platform.openai.com/docs/models, each model's page (context window, max
  output tokens, reasoning effort values, structured outputs, function calling), read 2025-12.
* ``pricing-2025-12`` — openai.com/api/pricing (standard tier, USD per 1M tokens: input, cached
  input, output), read 2025-12.
* ``recordings-2026-08`` — the answering-model names in the recorded exchanges in
  ``shared/vendor-recordings`` (dated snapshots the API reports for an alias).

These tables were compiled by hand: check them against the live pages before a release.

A model the table does not list is matched to its *family* (:data:`FAMILIES`, S13/S30): a
newer release (``gpt-5.5``, the recorded exchange shows it reasoning) or a dated snapshot the
table does not list (``gpt-5.1-2025-11-13``). The family gives capabilities and an effort
vocabulary that every listed member accepts, never a price (cost ``None``) or a context window
(unknown, with a warning, S13). A new major version (``gpt-6``), ``o1-*`` variants (``o1-mini``
takes no effort), ``*-chat*`` models and anything else match no family: no stated capabilities
beyond the vendor default (silence, not denial: S30), no effort control (``not_applied``), an
unknown window and no price.

Names are matched to a family case-insensitively (OpenAI's ids are lowercase; ``GPT-5.5`` is
``gpt-5.5``), and a fine-tune by its base model (:func:`family_key`): OpenAI names a fine-tuned
model ``ft:<base>:<organization>:<suffix>:<id>`` (the fine-tuning API reference, read 2026-12:
``ft:gpt-4o-mini:openai:custom-model-name:7p4lURel``; the suffix may be empty), so
``ft:gpt-5-mini-2025-08-07:acme:support:abc`` gets the ``gpt-5`` family's capabilities, effort
vocabulary and settings — and, like every family member, no price and no window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Final

from robota.core import (
    EffortLevel,
    ModelCapabilities,
    ModelFamily,
    match_model_family,
)
from robota.providers._kit import register_model_table

__all__ = [
    "FAMILIES",
    "FAMILY_RULES",
    "MODELS",
    "SAMPLING_SETTINGS",
    "OpenAIFamily",
    "OpenAIModel",
    "effort_levels",
    "effort_source",
    "family",
    "family_key",
    "family_rules",
    "reasoning_model",
    "register_openai_models",
]

MODELS_SOURCE: Final = "models-2025-12"
PRICING_SOURCE: Final = "pricing-2025-12"


@dataclass(frozen=True, slots=True)
class OpenAIModel:
    """One row: what OpenAI states about a model."""

    context_window: int
    max_output_tokens: int
    input_price: float
    output_price: float
    cached_input_price: float | None
    efforts: tuple[EffortLevel, ...] | None  # None: no effort control
    structured_output: bool = True  # native JSON schema (Structured Outputs)
    vision: bool = True
    aliases: tuple[str, ...] = ()  # dated snapshots the API answers with (same row)


_GPT5: Final[tuple[EffortLevel, ...]] = ("minimal", "low", "medium", "high")
_GPT51: Final[tuple[EffortLevel, ...]] = ("none", "low", "medium", "high")
_GPT52: Final[tuple[EffortLevel, ...]] = ("none", "low", "medium", "high", "xhigh")
_O_SERIES: Final[tuple[EffortLevel, ...]] = ("low", "medium", "high")

MODELS: Final[Mapping[str, OpenAIModel]] = {
    "gpt-5.2": OpenAIModel(
        400_000, 128_000, 1.75, 14.0, 0.175, _GPT52, aliases=("gpt-5.2-2025-12-11",)
    ),
    "gpt-5.1": OpenAIModel(400_000, 128_000, 1.25, 10.0, 0.125, _GPT51),
    "gpt-5": OpenAIModel(400_000, 128_000, 1.25, 10.0, 0.125, _GPT5, aliases=("gpt-5-2025-08-07",)),
    "gpt-5-mini": OpenAIModel(
        400_000, 128_000, 0.25, 2.0, 0.025, _GPT5, aliases=("gpt-5-mini-2025-08-07",)
    ),
    "gpt-5-nano": OpenAIModel(
        400_000, 128_000, 0.05, 0.40, 0.005, _GPT5, aliases=("gpt-5-nano-2025-08-07",)
    ),
    "gpt-4.1": OpenAIModel(
        1_047_576, 32_768, 2.0, 8.0, 0.50, None, aliases=("gpt-4.1-2025-04-14",)
    ),
    "gpt-4.1-mini": OpenAIModel(
        1_047_576, 32_768, 0.40, 1.60, 0.10, None, aliases=("gpt-4.1-mini-2025-04-14",)
    ),
    "gpt-4.1-nano": OpenAIModel(
        1_047_576, 32_768, 0.10, 0.40, 0.025, None, aliases=("gpt-4.1-nano-2025-04-14",)
    ),
    "gpt-4o": OpenAIModel(
        128_000, 16_384, 2.50, 10.0, 1.25, None, aliases=("gpt-4o-2024-08-06", "gpt-4o-2024-11-20")
    ),
    "gpt-4o-2024-05-13": OpenAIModel(128_000, 4_096, 5.0, 15.0, None, None),
    "gpt-4o-mini": OpenAIModel(
        128_000, 16_384, 0.15, 0.60, 0.075, None, aliases=("gpt-4o-mini-2024-07-18",)
    ),
    "o3": OpenAIModel(200_000, 100_000, 2.0, 8.0, 0.50, _O_SERIES, aliases=("o3-2025-04-16",)),
    "o4-mini": OpenAIModel(
        200_000, 100_000, 1.10, 4.40, 0.275, _O_SERIES, aliases=("o4-mini-2025-04-16",)
    ),
    "o3-mini": OpenAIModel(
        200_000, 100_000, 1.10, 4.40, 0.55, _O_SERIES, vision=False, aliases=("o3-mini-2025-01-31",)
    ),
    "o1": OpenAIModel(200_000, 100_000, 15.0, 60.0, 7.50, _O_SERIES, aliases=("o1-2024-12-17",)),
}
"""The table, by the name a request carries (aliases share their row)."""

_BY_NAME: Final[Mapping[str, OpenAIModel]] = {
    name: row for base, row in MODELS.items() for name in (base, *row.aliases)
}


FAMILIES_SOURCE: Final = "models-2025-12 rows + recordings-2026-08"
"""Where the family rules come from: what every listed member of a family states (the rows
above, models-2025-12), and the recorded ``gpt-5.5`` exchange (recordings-2026-08: it returns
reasoning items, so it must be asked for their encrypted content). The exclusions (``*-chat*``
models take no effort; ``o1-*`` is left out because ``o1-mini`` takes none) and the pro
vocabulary come from OpenAI's model pages in the same reading, not from rows: verify them
before a release."""


@dataclass(frozen=True, slots=True)
class OpenAIFamily:
    """A family rule (S13, S30) and the effort levels every member accepts."""

    rule: ModelFamily
    efforts: tuple[EffortLevel, ...] | None  # None: no effort control


_REASONS: Final = ModelCapabilities(
    tools=True,
    streaming=True,
    parallel_tool_calls=True,
    structured_output="json_schema",
    reasoning=True,
)
_NO_REASONING: Final = ModelCapabilities(reasoning=False)

FAMILIES: Final[tuple[OpenAIFamily, ...]] = (
    # gpt-5-pro accepts only "high" (platform.openai.com/docs/models/gpt-5-pro, as of 2025-10;
    # verify before a release): the one level a pro release is known to take.
    OpenAIFamily(
        ModelFamily(
            "gpt-5-pro",
            ("gpt-5-pro", "gpt-5-pro-*", "gpt-5.*-pro", "gpt-5.*-pro-*"),
            ModelCapabilities(reasoning=True),
            FAMILIES_SOURCE,
        ),
        ("high",),
    ),
    # Every gpt-5 row takes low/medium/high (5: +minimal, 5.1: +none, 5.2: +none, xhigh).
    OpenAIFamily(
        ModelFamily(
            "gpt-5",
            ("gpt-5", "gpt-5-*", "gpt-5.*"),
            _REASONS,
            FAMILIES_SOURCE,
            exclude=("*-chat*",),
        ),
        ("low", "medium", "high"),
    ),
    OpenAIFamily(
        ModelFamily("o-series", ("o3", "o3-*", "o4", "o4-*"), _REASONS, FAMILIES_SOURCE),
        ("low", "medium", "high"),
    ),
    OpenAIFamily(
        ModelFamily("gpt-4.1", ("gpt-4.1", "gpt-4.1-*"), _NO_REASONING, FAMILIES_SOURCE), None
    ),
    OpenAIFamily(
        ModelFamily("gpt-4o", ("gpt-4o", "gpt-4o-*"), _NO_REASONING, FAMILIES_SOURCE), None
    ),
)
"""Family rules for names the table does not list, in order: the first match wins."""

FAMILY_RULES: Final[tuple[ModelFamily, ...]] = tuple(f.rule for f in FAMILIES)
_BY_RULE: Final = {f.rule.name: f for f in FAMILIES}


_FINE_TUNE: Final = "ft:"


def family_key(model: str) -> str:
    """The name ``model`` is matched to a family as (S13): lowercased, a fine-tune as its base.

    ``ft:gpt-4.1-2025-04-14:acme:name:abc`` → ``gpt-4.1-2025-04-14``. The user-chosen suffix
    never takes part, so a suffix such as ``my-chat-bot`` cannot exclude a fine-tune from its
    base's family.
    """
    name = model.lower()
    if name.startswith(_FINE_TUNE):
        return name.removeprefix(_FINE_TUNE).partition(":")[0]
    return name


def row(model: str) -> OpenAIModel | None:
    """The row for ``model`` (an alias or dated snapshot included), when listed."""
    return _BY_NAME.get(model)


def family(model: str) -> OpenAIFamily | None:
    """The family of a model the table does not list; ``None`` for a listed one or no match."""
    if model in _BY_NAME:
        return None
    rule = match_model_family(FAMILY_RULES, family_key(model))
    return None if rule is None else _BY_RULE[rule.name]


def effort_levels(model: str) -> tuple[EffortLevel, ...] | None:
    """The effort levels ``model`` offers (its row's, else its family's), or ``None``."""
    entry = _BY_NAME.get(model)
    if entry is not None:
        return entry.efforts
    member = family(model)
    return None if member is None else member.efforts


def effort_source(model: str) -> str:
    """The source recorded on an effort resolution (S24): the table's, or the family rule's."""
    member = family(model)
    if member is None:
        return MODELS_SOURCE
    return f"family {member.rule.name} ({member.rule.source})"


def reasoning_model(model: str) -> bool | None:
    """Whether ``model`` reasons (its row, else its family); ``None`` when nothing is stated."""
    entry = _BY_NAME.get(model)
    if entry is not None:
        return entry.efforts is not None
    member = family(model)
    return None if member is None else member.rule.capabilities.reasoning


SAMPLING_SETTINGS: Final = frozenset(
    {"temperature", "top_p", "presence_penalty", "frequency_penalty"}
)
"""The :class:`~robota.ModelSettings` fields a reasoning model does not honour (S28, S30).

Source, read 2026-12: OpenAI's reasoning guide ("limitations": the o-series and gpt-5 reasoning
models refuse ``temperature``, ``top_p`` and the penalties, or accept only their defaults) and the
gpt-5.1/5.2 parameter-compatibility note (``temperature``, ``top_p`` accepted only with reasoning
effort ``"none"``). Decided conservatively: a reasoning row or family honours none of them,
whatever the effort — a run that sets one is told (``execution.setting_unsupported``) rather than
refused by the API. Verify before a release; a model that accepts them again gets its own rule."""


def _honoured(reasons: bool | None, api_settings: frozenset[str] | None) -> frozenset[str] | None:
    if api_settings is None:
        return None
    return api_settings - SAMPLING_SETTINGS if reasons else api_settings


@cache  # one tuple per API: capabilities() is asked on every request
def family_rules(api_settings: frozenset[str] | None = None) -> tuple[ModelFamily, ...]:
    """:data:`FAMILY_RULES`, each stating the settings it honours on an API with ``api_settings``.

    A reasoning family honours the API's settings less :data:`SAMPLING_SETTINGS`; the others the
    API's whole set. ``None`` leaves settings unstated (the rules as listed).
    """
    if api_settings is None:
        return FAMILY_RULES
    return tuple(
        replace(
            rule,
            capabilities=replace(
                rule.capabilities,
                settings=_honoured(rule.capabilities.reasoning, api_settings),
            ),
        )
        for rule in FAMILY_RULES
    )


def model_capabilities_table(
    api_settings: frozenset[str] | None = None,
) -> dict[str, ModelCapabilities]:
    """Per-model capability tables (S30) for every listed name.

    ``api_settings``: the settings the API in use has; a reasoning row honours them less
    :data:`SAMPLING_SETTINGS`. ``None`` leaves each row's settings unstated.
    """
    return {
        name: ModelCapabilities(
            tools=True,
            streaming=True,
            parallel_tool_calls=True,
            structured_output="json_schema" if entry.structured_output else "json_mode",
            vision=entry.vision,
            reasoning=entry.efforts is not None,
            documents=entry.vision,  # PDF pages reach the model as text and images
            audio=False,  # audio input is for the -audio- models, none listed here
            settings=_honoured(entry.efforts is not None, api_settings),
        )
        for name, entry in _BY_NAME.items()
    }


_FACTS: Final = {
    name: (
        entry.context_window,
        entry.max_output_tokens,
        entry.input_price,
        entry.output_price,
        entry.cached_input_price,
    )
    for name, entry in _BY_NAME.items()
}


def register_openai_models(provider: str) -> None:
    """Register metadata (S13) and prices (S04) for every listed name under ``provider``.

    Idempotent per provider name.
    """
    register_model_table(provider, _FACTS)
