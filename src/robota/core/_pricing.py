"""The pricing table (S04): per-model token prices in USD per 1,000,000 tokens.

Provider packages register prices for their models; every cost estimate in Robota reads this one
table, and nothing else embeds a price. A model without a price has no cost estimate — ``None``,
never a guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import final

from robota.core._errors import ConfigurationError
from robota.core._registry import ModelKeyedRegistry
from robota.core._usage import Usage

__all__ = [
    "ModelPricing",
    "estimate_cost",
    "get_model_pricing",
    "register_model_pricing",
    "unregister_model_pricing",
]

_PER: float = 1_000_000.0


@final
@dataclass(frozen=True, slots=True)
class ModelPricing:
    """Token prices of one model, in USD per 1,000,000 tokens.

    Attributes:
        model: The model name.
        input_per_million: Price of prompt tokens not served from the cache.
        output_per_million: Price of completion tokens.
        cache_read_per_million: Price of prompt tokens served from the cache; ``None`` means the
            vendor has no separate cache price, so cache reads cost the input price.
        provider: The registering provider's opaque name; ``None`` for provider-neutral.
    """

    model: str
    input_per_million: float
    output_per_million: float
    cache_read_per_million: float | None = None
    provider: str | None = None

    def cost(self, usage: Usage) -> float:
        """The cost in USD of ``usage`` at these prices."""
        cache_price = (
            self.input_per_million
            if self.cache_read_per_million is None
            else self.cache_read_per_million
        )
        cached = usage.cache_read_tokens or 0
        return (
            usage.uncached_prompt_tokens * self.input_per_million
            + cached * cache_price
            + usage.completion_tokens * self.output_per_million
        ) / _PER


_pricing: ModelKeyedRegistry[ModelPricing] = ModelKeyedRegistry("model pricing")


def _price(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ConfigurationError(f"{name} must be a finite, non-negative number, got {value!r}")
    return float(value)


def register_model_pricing(
    model: str,
    *,
    input_per_million: float,
    output_per_million: float,
    cache_read_per_million: float | None = None,
    provider: str | None = None,
    replace: bool = False,
) -> ModelPricing:
    """Register a model's prices (USD per 1,000,000 tokens); returns the stored entry.

    Raises:
        ConfigurationError: for a negative or non-finite price, or a conflicting registration
            without ``replace=True``.
    """
    entry = ModelPricing(
        model,
        _price("input_per_million", input_per_million),
        _price("output_per_million", output_per_million),
        None
        if cache_read_per_million is None
        else _price("cache_read_per_million", cache_read_per_million),
        provider,
    )
    return _pricing.register(model, provider, entry, replace=replace)


def unregister_model_pricing(model: str, *, provider: str | None = None) -> bool:
    """Remove a price registration."""
    return _pricing.unregister(model, provider)


def get_model_pricing(model: str, *, provider: str | None = None) -> ModelPricing | None:
    """The registered prices for ``model`` (preferring ``provider``'s entry), or ``None``."""
    return _pricing.get(model, provider)


def estimate_cost(usage: Usage, model: str, *, provider: str | None = None) -> float | None:
    """The estimated cost in USD of ``usage`` on ``model``; ``None`` when the model has no price."""
    pricing = _pricing.get(model, provider)
    return None if pricing is None else pricing.cost(usage)
