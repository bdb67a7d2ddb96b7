"""Anthropic's model facts (S02, S04, S13, S18, S24, S30): capabilities, thinking, metadata, prices.

Compiled by hand, verify before release. Every row is source-dated; sources, as read on the date
given:

* ``models-2025-12`` — docs.anthropic.com "Models overview" and "Extended thinking" (context
  window, max output tokens, extended-thinking support, ``budget_tokens`` ≥ 1024 and below
  ``max_tokens``), "Structured outputs" (the models taking ``output_config.format``), read
  2025-12.
* ``pricing-2025-12`` — anthropic.com/pricing (USD per 1M tokens: base input, output, cache
  hits; cache writes are not priced here), read 2025-12.
* ``recordings-2026-08`` — the answering-model names in ``shared/vendor-recordings/anthropic``
  (dated snapshots the API reports for an alias; they share the alias's row).

Effort (S24) maps to an extended-thinking budget: each thinking model offers ``minimal`` to
``high`` with the budgets of its row (``"none"`` and ``"auto"`` send no thinking at all).

Models newer than these sources (``claude-sonnet-4-6``, ``claude-opus-4-8`` in the recordings,
``claude-opus-4-7``) are matched to their *family* (:data:`FAMILIES`, S13/S30), first match wins:

* ``claude-opus-4-7`` and every later Opus 4 minor (``-4-8``, ``-4-10``, ``-4-11`` …: the minor
  compared as a number, :func:`opus_minor_at_least_7`; their dated snapshots too) refuse an
  extended-thinking budget — the API answers 400 "thinking.type.enabled is not supported for this
  model" — and take the effort control instead (``output_config.effort``). Offered: ``low``/
  ``medium``/``high``/``max``, the levels claude-opus-4-6 accepts (its recorded 400) that 4.7 also
  lists. They honour no sampling setting (``temperature``, ``top_p``: "deprecated for this
  model", a 400), so the family's settings leave both out and a run that sets one is told.
* every other Claude 4 model (``claude-opus-4*``, ``claude-sonnet-4*``, ``claude-haiku-4*``)
  takes extended thinking: ``minimal`` to ``high`` with the budgets every listed Claude 4 row
  accepts (the 32k-output rows'). As for any unlisted model, ``max_tokens`` defaults to
  :data:`DEFAULT_MAX_TOKENS` and a budget must fit below it, so a larger effort is clamped unless
  the caller sets ``max_output_tokens``.

A family gives no price (cost ``None``), no context window (unknown, with a warning, S13) and no
``output_config.format`` (not stated for every member). Claude 3 models not listed and any other
name (``claude-opus-5``) match no family.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from robota.core import (
    EffortLevel,
    ModelCapabilities,
    ModelFamily,
    match_model_family,
)
from robota.providers._kit import register_model_table

__all__ = [
    "ADAPTIVE_SOURCE",
    "DEFAULT_MAX_TOKENS",
    "EFFORT_CONTROL",
    "FAMILIES",
    "FAMILY_RULES",
    "MESSAGES_SETTINGS",
    "MODELS",
    "MODELS_SOURCE",
    "AnthropicFamily",
    "AnthropicModel",
    "effort_control",
    "family",
    "model_capabilities_table",
    "opus_minor_at_least_7",
    "register_anthropic_models",
    "row",
    "thinking_budgets",
]

MODELS_SOURCE: Final = "models-2025-12"
PRICING_SOURCE: Final = "pricing-2025-12"

DEFAULT_MAX_TOKENS: Final = 4096
"""``max_tokens`` for a model the table does not list, when the caller gives none (the API
requires the field; 4096 is what every Claude model so far accepts)."""

MESSAGES_SETTINGS: Final = frozenset(
    {
        "temperature",
        "top_p",
        "max_output_tokens",
        "stop",
        "parallel_tool_calls",
        "timeout",
        "extra",
    }
)
"""The :class:`~robota.ModelSettings` fields the Messages API has (``max_tokens``,
``temperature``, ``top_p``, ``stop_sequences``, ``tool_choice.disable_parallel_tool_use``);
it has no ``seed`` and no presence or frequency penalty."""

_BUDGETS_64K: Final[Mapping[EffortLevel, int]] = {
    "minimal": 1024,
    "low": 4096,
    "medium": 16384,
    "high": 32768,
}
_BUDGETS_32K: Final[Mapping[EffortLevel, int]] = {
    "minimal": 1024,
    "low": 4096,
    "medium": 12288,
    "high": 24576,
}


@dataclass(frozen=True, slots=True)
class AnthropicModel:
    """One row: what Anthropic states about a model."""

    context_window: int
    max_output_tokens: int
    input_price: float
    output_price: float
    cache_read_price: float
    thinking: Mapping[EffortLevel, int] | None  # effort level → budget_tokens; None: no thinking
    structured_output: bool = False  # ``output_config.format`` (json_schema) accepted
    aliases: tuple[str, ...] = ()


MODELS: Final[Mapping[str, AnthropicModel]] = {
    "claude-opus-4-5": AnthropicModel(
        200_000, 64_000, 5.0, 25.0, 0.50, _BUDGETS_64K, True, ("claude-opus-4-5-20251101",)
    ),
    "claude-opus-4-1": AnthropicModel(
        200_000, 32_000, 15.0, 75.0, 1.50, _BUDGETS_32K, True, ("claude-opus-4-1-20250805",)
    ),
    "claude-opus-4-0": AnthropicModel(
        200_000,
        32_000,
        15.0,
        75.0,
        1.50,
        _BUDGETS_32K,
        aliases=("claude-opus-4-20250514", "claude-opus-4"),
    ),
    "claude-sonnet-4-5": AnthropicModel(
        200_000, 64_000, 3.0, 15.0, 0.30, _BUDGETS_64K, True, ("claude-sonnet-4-5-20250929",)
    ),
    "claude-sonnet-4-0": AnthropicModel(
        200_000,
        64_000,
        3.0,
        15.0,
        0.30,
        _BUDGETS_64K,
        aliases=("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ),
    "claude-haiku-4-5": AnthropicModel(
        200_000, 64_000, 1.0, 5.0, 0.10, _BUDGETS_64K, True, ("claude-haiku-4-5-20251001",)
    ),
    "claude-3-7-sonnet-latest": AnthropicModel(
        200_000,
        64_000,
        3.0,
        15.0,
        0.30,
        _BUDGETS_64K,
        aliases=("claude-3-7-sonnet-20250219", "claude-3-7-sonnet"),
    ),
    "claude-3-5-haiku-latest": AnthropicModel(
        200_000, 8_192, 0.80, 4.0, 0.08, None, aliases=("claude-3-5-haiku-20241022",)
    ),
    "claude-3-opus-latest": AnthropicModel(
        200_000, 4_096, 15.0, 75.0, 1.50, None, aliases=("claude-3-opus-20240229",)
    ),
}
"""The table, by the name a request carries (aliases and dated snapshots share their row)."""

_BY_NAME: Final[Mapping[str, AnthropicModel]] = {
    name: entry for base, entry in MODELS.items() for name in (base, *entry.aliases)
}


EFFORT_CONTROL: Final[Mapping[str, tuple[EffortLevel, ...]]] = {
    "claude-opus-4-6": ("low", "medium", "high", "max"),
}
"""Models with a native effort control (``output_config.effort``) instead of a thinking budget,
and the levels each accepts. Source ``recordings-2026``: the API's own answer to an unsupported
level ("Supported levels: high, low, max, medium.", claude-opus-4-6). A model here needs no row
above for its effort; without a row it still has no registered price (cost ``None``)."""


FAMILIES_SOURCE: Final = "models-2025-12 rows + recordings-2026-08"
"""Where the family rules come from: what every listed Claude 4 row states (models-2025-12) and
the newer Claude 4 models answering with thinking blocks in the recordings (recordings-2026-08)."""


ADAPTIVE_SOURCE: Final = "api-400-reports-2026-06"
"""Where the effort-control family comes from: the API's own 400 for a thinking budget on
claude-opus-4-7 and claude-opus-4-8, as reported publicly 2026-04 to 2026-06 ("thinking.type.enabled
is not supported for this model. Use thinking.type.adaptive and output_config.effort"); verify
against docs.anthropic.com ("Adaptive thinking", "Effort") before a release."""


@dataclass(frozen=True, slots=True)
class AnthropicFamily:
    """A family rule (S13, S30) and its effort: thinking budgets, or the effort control's levels."""

    rule: ModelFamily
    thinking: Mapping[EffortLevel, int] | None
    effort_control: tuple[EffortLevel, ...] | None = None


_CLAUDE_4: Final = ModelCapabilities(
    tools=True, streaming=True, parallel_tool_calls=True, vision=True, reasoning=True
)

SAMPLING_REMOVED_SOURCE: Final = "opus-4-7-migration-2026-04"
"""Where "Opus 4.7 and later take no ``temperature`` or ``top_p``" comes from: Anthropic's
"Migrating to Claude Opus 4.7" (sampling parameters removed, a set one answered with 400
"`temperature` is deprecated for this model"), as quoted publicly 2026-04 to 2026-05; verify
against docs.anthropic.com before a release."""

_OPUS_MINOR: Final = re.compile(r"claude-opus-4-(\d{1,3})(?:-|$)")


def opus_minor_at_least_7(model: str) -> bool:
    """Whether ``model`` is a Claude Opus 4 release whose minor version is 7 or later.

    The minor is the number after ``claude-opus-4-``, compared as a number (``4-10`` is later
    than ``4-9``); an eight-digit group there is a date (``claude-opus-4-20250514``, Opus 4.0),
    not a minor.
    """
    found = _OPUS_MINOR.match(model.lower())
    return found is not None and int(found.group(1)) >= 7


FAMILIES: Final[tuple[AnthropicFamily, ...]] = (
    AnthropicFamily(
        ModelFamily(
            "claude-opus-4-7+",
            ("claude-opus-4-*",),
            replace(_CLAUDE_4, settings=MESSAGES_SETTINGS - frozenset({"temperature", "top_p"})),
            ADAPTIVE_SOURCE,  # the settings left out: SAMPLING_REMOVED_SOURCE
            condition=opus_minor_at_least_7,
        ),
        None,
        ("low", "medium", "high", "max"),
    ),
    AnthropicFamily(
        ModelFamily(
            "claude-4",
            ("claude-opus-4*", "claude-sonnet-4*", "claude-haiku-4*"),
            _CLAUDE_4,
            FAMILIES_SOURCE,
        ),
        _BUDGETS_32K,
    ),
)
"""Family rules for names the table does not list, in order: the first match wins."""

FAMILY_RULES: Final[tuple[ModelFamily, ...]] = tuple(f.rule for f in FAMILIES)
_BY_RULE: Final = {f.rule.name: f for f in FAMILIES}


def row(model: str) -> AnthropicModel | None:
    """The row for ``model`` (an alias or dated snapshot included), when listed."""
    return _BY_NAME.get(model)


def family(model: str) -> AnthropicFamily | None:
    """The family of a model the table does not list; ``None`` for a listed one or no match."""
    if model in _BY_NAME:
        return None
    rule = match_model_family(FAMILY_RULES, model)
    return None if rule is None else _BY_RULE[rule.name]


def effort_control(model: str) -> tuple[tuple[EffortLevel, ...], str] | None:
    """The levels of ``model``'s own effort control and their source (S24), when it has one.

    Its exact entry (:data:`EFFORT_CONTROL`), else its family's; ``None`` for a model that takes
    a thinking budget (or nothing).
    """
    levels = EFFORT_CONTROL.get(model)
    if levels is not None:
        return levels, "recordings-2026"
    member = family(model)
    if member is None or member.effort_control is None:
        return None
    return member.effort_control, f"family {member.rule.name} ({member.rule.source})"


def thinking_budgets(model: str) -> tuple[Mapping[EffortLevel, int] | None, str]:
    """``model``'s thinking budgets (its row's, else its family's) and their source (S24)."""
    entry = _BY_NAME.get(model)
    if entry is not None:
        return entry.thinking, MODELS_SOURCE
    member = family(model)
    if member is None:
        return None, MODELS_SOURCE
    return member.thinking, f"family {member.rule.name} ({member.rule.source})"


def model_capabilities_table() -> dict[str, ModelCapabilities]:
    """Per-model capability tables (S30) for every listed name."""
    return {
        name: ModelCapabilities(
            tools=True,
            streaming=True,
            parallel_tool_calls=True,
            structured_output="json_schema" if entry.structured_output else "none",
            vision=True,
            reasoning=entry.thinking is not None,
            documents=True,
            audio=False,
        )
        for name, entry in _BY_NAME.items()
    }


_FACTS: Final = {
    name: (
        entry.context_window,
        entry.max_output_tokens,
        entry.input_price,
        entry.output_price,
        entry.cache_read_price,
    )
    for name, entry in _BY_NAME.items()
}


def register_anthropic_models(provider: str) -> None:
    """Register metadata (S13) and prices (S04) for every listed name under ``provider``.

    Idempotent per provider name.
    """
    register_model_table(provider, _FACTS)
