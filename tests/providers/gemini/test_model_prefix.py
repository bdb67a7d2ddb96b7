"""Gemini model names with the ``models/`` prefix (issue 26 review, S13, S30).

Google's API and its model listing name models ``models/gemini-2.5-flash``; the SDK takes either
form and the adapter's own rows and effort accept both. The capability query, the family rule
and the registered metadata (context window, price) must answer the prefixed name as they answer
the bare one, or a listed model silently loses its window, its price and its capabilities.
"""

from __future__ import annotations

import pytest

from robota.core import get_model_context_window, lookup_model_capabilities
from robota.core._pricing import get_model_pricing
from robota.providers.gemini import GeminiProvider


@pytest.mark.parametrize(
    ("bare", "source"),
    [
        ("gemini-2.5-flash", "exact"),
        ("gemini-3-pro", "family"),
        ("gemini-2.5-flash-lite-x", "family"),
    ],
)
def test_s30_a_prefixed_name_has_the_capabilities_of_the_bare_name(bare: str, source: str) -> None:
    provider = GeminiProvider(api_key="k")
    plain = lookup_model_capabilities(provider, bare)
    prefixed = lookup_model_capabilities(provider, f"models/{bare}")
    assert plain.source == source
    assert prefixed.source == source
    assert prefixed.capabilities == plain.capabilities


def test_s13_a_prefixed_listed_name_has_the_registered_window_and_price() -> None:
    GeminiProvider(api_key="k")
    assert get_model_context_window("models/gemini-2.5-flash", provider="gemini") == (
        get_model_context_window("gemini-2.5-flash", provider="gemini")
    )
    assert get_model_context_window("models/gemini-2.5-flash", provider="gemini") is not None
    prefixed = get_model_pricing("models/gemini-2.5-flash", provider="gemini")
    bare = get_model_pricing("gemini-2.5-flash", provider="gemini")
    assert prefixed is not None
    assert bare is not None
    assert (prefixed.input_per_million, prefixed.output_per_million) == (
        bare.input_per_million,
        bare.output_per_million,
    )


def test_s13_a_prefixed_family_name_still_has_no_window_or_price() -> None:
    GeminiProvider(api_key="k")
    assert get_model_context_window("models/gemini-3.7-pro", provider="gemini") is None
    assert get_model_pricing("models/gemini-3.7-pro", provider="gemini") is None
