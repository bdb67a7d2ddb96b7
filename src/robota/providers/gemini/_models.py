"""Gemini's model facts (S02, S04, S13, S24, S30): capabilities, thinking control, prices.

Every row is source-dated. Sources, as read on the date given:

* ``gemini-models-2025-12`` — ai.google.dev/gemini-api/docs/models (input token limit, output
  token limit, thinking, structured outputs, function calling per model) and
  ai.google.dev/gemini-api/docs/thinking (thinking budgets and thinking levels), read 2025-12.
* ``gemini-pricing-2025-12`` — ai.google.dev/gemini-api/docs/pricing (paid tier, USD per 1M
  tokens: input, output, context-caching read; the ≤200k-token prompt tier where a model has
  two), read 2025-12.

These tables were **compiled by hand: verify them against the live pages before a release**.

A model the table does not list is matched to its *family* (:data:`FAMILIES`, S13/S30):
``gemini-3-*``/``gemini-3.*`` take a thinking level, offering ``low``/``high`` (what every listed
Gemini 3 model accepts); ``gemini-2.5-*`` take a thinking budget, offering ``low``/``medium``/
``high`` with the budgets every listed 2.5 model accepts (no ``none``: 2.5 Pro cannot turn
thinking off); ``gemini-2.0-*`` do not think. Image, speech, live and audio variants and
``*thinking*`` experiments are excluded. A family gives no price (cost ``None``) and no context
window (unknown, with a warning, S13). Any other name (``gemini-1.5-…``, ``gemini-4…``) has no
stated capabilities beyond the vendor default (silence, not denial: S30) and no effort control.
Every name is also answered in the API's own form, ``models/gemini-2.5-flash``.

Thinking control (S24), per model:

* Gemini 2.5 models take a token budget (``thinking_budget``). The neutral levels map to budgets
  (``none`` 0, ``low`` 1024, ``medium`` 8192, ``high`` the model's maximum); 2.5 Pro cannot turn
  thinking off, so it offers no ``none``.
* Gemini 3 models take a level (``thinking_level``): Pro offers ``low``/``high``, Flash
  ``minimal``/``low``/``medium``/``high``.
* Gemini 2.0 models do not think: no control.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

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
    "MODELS_SOURCE",
    "GeminiFamily",
    "GeminiModel",
    "ThinkingControl",
    "family",
    "model_capabilities_table",
    "register_gemini_models",
    "row",
    "thinking_control",
]

MODELS_SOURCE: Final = "gemini-models-2025-12"
PRICING_SOURCE: Final = "gemini-pricing-2025-12"

ThinkingKind = Literal["budget", "level"]


@dataclass(frozen=True, slots=True)
class GeminiModel:
    """One row: what Google states about a model."""

    context_window: int
    max_output_tokens: int
    input_price: float
    output_price: float
    cached_input_price: float | None
    thinking: ThinkingKind | None  # None: no thinking control
    native: Mapping[EffortLevel, str] = field(default_factory=dict)
    """Neutral level → the wire value: a budget in tokens (as text) or a thinking level."""
    aliases: tuple[str, ...] = ()

    @property
    def efforts(self) -> tuple[EffortLevel, ...] | None:
        """The neutral levels offered, ascending; ``None`` without a thinking control."""
        return tuple(self.native) if self.thinking is not None else None


def _budgets(high: int, *, can_disable: bool) -> Mapping[EffortLevel, str]:
    levels: dict[EffortLevel, str] = {"none": "0"} if can_disable else {}
    levels.update({"low": "1024", "medium": "8192", "high": str(high)})
    return levels


_M: Final = 1_048_576

MODELS: Final[Mapping[str, GeminiModel]] = {
    "gemini-3-pro-preview": GeminiModel(
        _M, 65_536, 2.00, 12.00, 0.20, "level", {"low": "low", "high": "high"}
    ),
    "gemini-3-flash-preview": GeminiModel(
        _M,
        65_536,
        0.50,
        3.00,
        0.05,
        "level",
        {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high"},
    ),
    "gemini-2.5-pro": GeminiModel(
        _M, 65_536, 1.25, 10.00, 0.125, "budget", _budgets(32_768, can_disable=False)
    ),
    "gemini-2.5-flash": GeminiModel(
        _M, 65_536, 0.30, 2.50, 0.03, "budget", _budgets(24_576, can_disable=True)
    ),
    "gemini-2.5-flash-lite": GeminiModel(
        _M, 65_536, 0.10, 0.40, 0.01, "budget", _budgets(24_576, can_disable=True)
    ),
    "gemini-2.0-flash": GeminiModel(
        _M, 8_192, 0.10, 0.40, 0.025, None, aliases=("gemini-2.0-flash-001",)
    ),
    "gemini-2.0-flash-lite": GeminiModel(
        _M, 8_192, 0.075, 0.30, None, None, aliases=("gemini-2.0-flash-lite-001",)
    ),
}
"""The table, by the name a request carries (aliases share their row)."""

_BY_NAME: Final[Mapping[str, GeminiModel]] = {
    name: entry for base, entry in MODELS.items() for name in (base, *entry.aliases)
}


FAMILIES_SOURCE: Final = "gemini-models-2025-12 rows + recordings-2026-08"
"""Where the family rules come from: what every listed member of a family states (the rows
above) and the newer models answering with thoughts in the recordings (recordings-2026-08)."""


@dataclass(frozen=True, slots=True)
class GeminiFamily:
    """A family rule (S13, S30) and the thinking control every member accepts."""

    rule: ModelFamily
    thinking: ThinkingKind | None
    native: Mapping[EffortLevel, str] = field(default_factory=dict)


_THINKS: Final = ModelCapabilities(
    tools=True,
    streaming=True,
    parallel_tool_calls=True,
    structured_output="json_schema",
    vision=True,
    reasoning=True,
)
_NOT_TEXT: Final = ("*-image*", "*-tts*", "*-live*", "*audio*", "*thinking*")
_PREFIX: Final = "models/"
"""How Google's API and model listing name a model (``models/gemini-2.5-flash``); the SDK takes
both forms, so every lookup here answers both."""


def _named(*patterns: str) -> tuple[str, ...]:
    return (*patterns, *(_PREFIX + pattern for pattern in patterns))


FAMILIES: Final[tuple[GeminiFamily, ...]] = (
    GeminiFamily(
        ModelFamily(
            "gemini-3",
            _named("gemini-3-*", "gemini-3.*"),
            _THINKS,
            FAMILIES_SOURCE,
            exclude=_NOT_TEXT,
        ),
        "level",
        {"low": "low", "high": "high"},
    ),
    GeminiFamily(
        ModelFamily(
            "gemini-2.5", _named("gemini-2.5-*"), _THINKS, FAMILIES_SOURCE, exclude=_NOT_TEXT
        ),
        "budget",
        {"low": "1024", "medium": "8192", "high": "24576"},
    ),
    GeminiFamily(
        ModelFamily(
            "gemini-2.0",
            _named("gemini-2.0-*"),
            ModelCapabilities(reasoning=False),
            FAMILIES_SOURCE,
            exclude=_NOT_TEXT,
        ),
        None,
    ),
)
"""Family rules for names the table does not list, in order: the first match wins."""

FAMILY_RULES: Final[tuple[ModelFamily, ...]] = tuple(f.rule for f in FAMILIES)
_BY_RULE: Final = {f.rule.name: f for f in FAMILIES}


@dataclass(frozen=True, slots=True)
class ThinkingControl:
    """How a model's thinking is controlled (S24): from its row or its family."""

    thinking: ThinkingKind | None
    native: Mapping[EffortLevel, str]
    source: str

    @property
    def efforts(self) -> tuple[EffortLevel, ...] | None:
        """The neutral levels offered, ascending; ``None`` without a thinking control."""
        return tuple(self.native) if self.thinking is not None else None


def row(model: str) -> GeminiModel | None:
    """The row for ``model`` (``models/`` prefix allowed), when listed."""
    return _BY_NAME.get(model.removeprefix(_PREFIX))


def family(model: str) -> GeminiFamily | None:
    """The family of a model the table does not list (``models/`` prefix allowed)."""
    name = model.removeprefix(_PREFIX)
    if name in _BY_NAME:
        return None
    rule = match_model_family(FAMILY_RULES, name)
    return None if rule is None else _BY_RULE[rule.name]


def thinking_control(model: str) -> ThinkingControl | None:
    """``model``'s thinking control: its row's, else its family's; ``None`` for neither."""
    entry = row(model)
    if entry is not None:
        return ThinkingControl(entry.thinking, entry.native, MODELS_SOURCE)
    member = family(model)
    if member is None:
        return None
    source = f"family {member.rule.name} ({member.rule.source})"
    return ThinkingControl(member.thinking, member.native, source)


def model_capabilities_table() -> dict[str, ModelCapabilities]:
    """Per-model capability tables (S30) for every listed name, bare and ``models/``-prefixed."""
    return {
        named: ModelCapabilities(
            tools=True,
            streaming=True,
            parallel_tool_calls=True,
            structured_output="json_schema",
            vision=True,
            reasoning=entry.thinking is not None,
            documents=True,
            audio=True,
        )
        for name, entry in _BY_NAME.items()
        for named in (name, _PREFIX + name)
    }


_FACTS: Final = {
    named: (
        entry.context_window,
        entry.max_output_tokens,
        entry.input_price,
        entry.output_price,
        entry.cached_input_price,
    )
    for name, entry in _BY_NAME.items()
    for named in (name, _PREFIX + name)
}


def register_gemini_models(provider: str) -> None:
    """Register metadata (S13) and prices (S04) for every listed name under ``provider``.

    Idempotent per provider name.
    """
    register_model_table(provider, _FACTS)
