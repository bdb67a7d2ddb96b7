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
``high`` with the budgets of its row (``"none"`` and ``"auto"`` send no thinking at all). Models
newer than these sources that appear in the recordings (``claude-sonnet-4-6``,
``claude-opus-4-6``, ``claude-opus-4-8``) are not listed: nothing is stated about them (S30
silence), so effort is ``not_applied`` and cost ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from robota.core import (
    EffortLevel,
    ModelCapabilities,
)
from robota.host._provider_kit import register_model_table

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "EFFORT_CONTROL",
    "MODELS",
    "MODELS_SOURCE",
    "AnthropicModel",
    "model_capabilities_table",
    "register_anthropic_models",
    "row",
]

MODELS_SOURCE: Final = "models-2025-12"
PRICING_SOURCE: Final = "pricing-2025-12"

DEFAULT_MAX_TOKENS: Final = 4096
"""``max_tokens`` for a model the table does not list, when the caller gives none (the API
requires the field; 4096 is what every Claude model so far accepts)."""

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


def row(model: str) -> AnthropicModel | None:
    """The row for ``model`` (an alias or dated snapshot included), when listed."""
    return _BY_NAME.get(model)


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
