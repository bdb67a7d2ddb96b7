"""Model families per vendor (S13, S24, S30): a model the exact table does not list.

The exact table always wins; a family gives capabilities and an effort vocabulary, never a price
or a context window; ``register_model_metadata`` wins over both; a name no family covers stays
unknown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota.core import (
    ChatRequest,
    EffortLevel,
    ModelCapabilities,
    Provider,
    UserMessage,
    lookup_model_capabilities,
)
from robota.core._models import resolve_context_window
from robota.providers.anthropic import AnthropicProvider
from robota.providers.anthropic import _models as anthropic_models
from robota.providers.gemini import GeminiProvider
from robota.providers.gemini import _models as gemini_models
from robota.providers.openai import OpenAIProvider
from robota.providers.openai import _models as openai_models


def _openai() -> Provider:
    return OpenAIProvider(api_key="k")


def _anthropic() -> Provider:
    return AnthropicProvider(api_key="k")


def _gemini() -> Provider:
    return GeminiProvider(api_key="k")


def _names(table: Mapping[str, Any]) -> list[str]:
    return sorted(name for base, row in table.items() for name in (base, *row.aliases))


VENDORS: dict[str, tuple[Callable[[], Provider], list[str]]] = {
    "openai": (_openai, _names(openai_models.MODELS)),
    "anthropic": (_anthropic, _names(anthropic_models.MODELS)),
    "gemini": (_gemini, _names(gemini_models.MODELS)),
}
EXACT = [(vendor, name) for vendor, (_, names) in VENDORS.items() for name in names]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(EXACT))
def test_s13_every_exact_table_entry_wins_over_its_family(entry: tuple[str, str]) -> None:
    vendor, model = entry
    provider = VENDORS[vendor][0]()
    found = lookup_model_capabilities(provider, model)
    assert found.source == "exact"
    assert found.family is None
    table = provider.capabilities()
    assert table is not None
    assert found.own == table.models[model]
    # The exact row's price is registered: a family never stands in for it.
    assert robota.get_model_pricing(model, provider=provider.name) is not None


def _unlisted(vendor: str) -> st.SearchStrategy[str]:
    listed = set(VENDORS[vendor][1])
    prefix = {"openai": "gpt-5.", "anthropic": "claude-opus-4-", "gemini": "gemini-3."}[vendor]
    suffix = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.", max_size=12)
    return suffix.map(lambda tail: prefix + tail).filter(lambda name: name not in listed)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(VENDORS)).flatmap(lambda v: st.tuples(st.just(v), _unlisted(v))))
def test_s13_an_unlisted_family_member_has_capabilities_but_no_price_or_window(
    entry: tuple[str, str],
) -> None:
    vendor, model = entry
    provider = VENDORS[vendor][0]()
    found = lookup_model_capabilities(provider, model)
    assert found.source in ("family", "default")
    if found.source == "default":
        # Only an excluded variant (a chat, image or speech model) falls outside the family.
        assert any(
            tag in model for tag in ("-chat", "-image", "-tts", "-live", "audio", "thinking")
        )
        return
    assert found.family is not None
    assert found.capabilities is not None
    assert found.capabilities.reasoning is True
    assert robota.get_model_pricing(model, provider=provider.name) is None
    assert robota.get_model_metadata(model, provider=provider.name) is None


OPENAI_CASES = [
    ("gpt-5.5", "gpt-5", ("low", "medium", "high")),
    ("gpt-5.5-2026-04-23", "gpt-5", ("low", "medium", "high")),
    # A dated snapshot the table does not list: the family, not the row (no price).
    ("gpt-5.1-2025-11-13", "gpt-5", ("low", "medium", "high")),
    ("gpt-5-codex", "gpt-5", ("low", "medium", "high")),
    ("gpt-5.5-pro", "gpt-5-pro", ("high",)),
    ("gpt-5-pro-2025-10-06", "gpt-5-pro", ("high",)),
    ("o3-pro", "o-series", ("low", "medium", "high")),
    ("o4-mini-deep-research", "o-series", ("low", "medium", "high")),
    ("gpt-4.1-2025-05-01", "gpt-4.1", None),
    ("gpt-4o-audio-preview", "gpt-4o", None),
    # Names are matched case-insensitively (OpenAI's ids are lowercase).
    ("GPT-5.5", "gpt-5", ("low", "medium", "high")),
    ("Gpt-4.1-2025-05-01", "gpt-4.1", None),
    # A fine-tune (ft:BASE:org:suffix:id) matches its base's family, never its price.
    ("ft:gpt-5-mini-2025-08-07:acme:support:abc123", "gpt-5", ("low", "medium", "high")),
    ("ft:gpt-5-mini-2025-08-07:acme:my-chat-bot:abc123", "gpt-5", ("low", "medium", "high")),
    ("ft:gpt-4.1-2025-04-14:acme::abc123", "gpt-4.1", None),
    ("ft:gpt-4o-mini:acme::abc123", "gpt-4o", None),
    ("FT:GPT-5.5:acme:x:y", "gpt-5", ("low", "medium", "high")),
    # No family: a new major version, a chat model, o1 variants, older models, other fine-tunes.
    ("gpt-6", None, None),
    ("gpt-5-chat-latest", None, None),
    ("gpt-50", None, None),
    ("o1-mini", None, None),
    ("gpt-3.5-turbo", None, None),
    ("my-finetune", None, None),
    ("ft:gpt-3.5-turbo-0125:acme::abc123", None, None),
    ("ft:gpt-5-chat-latest:acme::abc123", None, None),
    ("ft:", None, None),
]


@pytest.mark.parametrize(("model", "family", "efforts"), OPENAI_CASES)
def test_s13_openai_family_rules(
    model: str, family: str | None, efforts: tuple[EffortLevel, ...] | None
) -> None:
    provider = _openai()
    found = lookup_model_capabilities(provider, model)
    assert found.source == ("family" if family else "default")
    assert (found.family.name if found.family else None) == family
    assert openai_models.effort_levels(model) == efforts
    resolution = provider.resolve_effort(ChatRequest(model, [UserMessage("x")], effort="high"))
    assert resolution.disposition == ("applied" if efforts else "not_applied")
    if family is None:
        assert openai_models.reasoning_model(model) is None
        assert resolution.source == openai_models.MODELS_SOURCE
    else:
        assert resolution.source == f"family {family} ({openai_models.FAMILIES_SOURCE})"


@pytest.mark.parametrize(
    "model",
    ["ft:gpt-5-mini-2025-08-07:acme:support:abc123", "ft:gpt-4.1-2025-04-14:acme::x", "GPT-5.5"],
)
def test_s13_a_fine_tune_or_other_case_gets_no_price_or_window(model: str) -> None:
    provider = _openai()
    assert lookup_model_capabilities(provider, model).source == "family"
    assert robota.get_model_pricing(model, provider=provider.name) is None
    assert robota.get_model_metadata(model, provider=provider.name) is None


def test_s30_a_reasoning_fine_tune_honours_no_sampling_settings() -> None:
    found = lookup_model_capabilities(_openai(), "ft:gpt-5-mini-2025-08-07:acme:support:abc123")
    assert found.capabilities is not None
    assert found.capabilities.reasoning is True
    assert found.capabilities.settings is not None
    assert "temperature" not in found.capabilities.settings
    assert openai_models.reasoning_model("ft:gpt-5-mini-2025-08-07:acme:support:abc123") is True


def test_s13_gpt_4_families_do_not_reason() -> None:
    assert openai_models.reasoning_model("gpt-4o-audio-preview") is False
    assert openai_models.reasoning_model("gpt-5.5") is True
    found = lookup_model_capabilities(_openai(), "gpt-4.1-2025-05-01")
    assert found.capabilities is not None
    assert found.capabilities.reasoning is False


ANTHROPIC_CASES = [
    ("claude-sonnet-4-6", "claude-4"),
    ("claude-haiku-4-6-20260101", "claude-4"),
    ("claude-opus-4-6-20260201", "claude-4"),  # a snapshot: budgets, deprecated but accepted
    ("claude-opus-4-7", "claude-opus-4-7+"),
    ("claude-opus-4-8", "claude-opus-4-7+"),
    ("claude-opus-4-7-20260416", "claude-opus-4-7+"),
    # The minor compared as a number: 4-10 and 4-11 are later than 4-9 (issue 26 review).
    ("claude-opus-4-10", "claude-opus-4-7+"),
    ("claude-opus-4-11-20270101", "claude-opus-4-7+"),
    ("Claude-Opus-4-9", "claude-opus-4-7+"),
    ("claude-opus-4-20260101", "claude-4"),  # a date after the major: Opus 4.0, not a minor
    ("claude-opus-4-6-1", "claude-4"),
    ("claude-3-5-sonnet-latest", None),
    ("claude-opus-5", None),
    ("my-finetune", None),
]


@pytest.mark.parametrize(("model", "family"), ANTHROPIC_CASES)
def test_s13_anthropic_family_rules(model: str, family: str | None) -> None:
    provider = _anthropic()
    found = lookup_model_capabilities(provider, model)
    assert found.source == ("family" if family else "default")
    assert (found.family.name if found.family else None) == family
    budgets, source = anthropic_models.thinking_budgets(model)
    control = anthropic_models.effort_control(model)
    request = ChatRequest(model, [UserMessage("x")], effort="high", max_output_tokens=30_000)
    resolution = provider.resolve_effort(request)
    if family is None:
        assert budgets is None
        assert control is None
        assert resolution.disposition == "not_applied"
        return
    assert found.capabilities is not None
    assert found.capabilities.reasoning is True
    assert found.capabilities.structured_output is None  # not stated for every member
    assert resolution.disposition == "applied"
    if family == "claude-4":
        assert control is None
        assert source.startswith("family claude-4 (")
        assert resolution.native_value == "24576"
    else:
        # Opus 4.7+ refuses a thinking budget: its effort control, never a budget.
        assert budgets is None
        assert control is not None
        assert control[0] == ("low", "medium", "high", "max")
        assert resolution.native_value == "high"
        assert resolution.source == f"family claude-opus-4-7+ ({anthropic_models.ADAPTIVE_SOURCE})"


def test_s24_an_exact_effort_control_still_wins_over_the_claude_4_family() -> None:
    # claude-opus-4-6 has its own effort control (output_config.effort), not a budget.
    resolution = _anthropic().resolve_effort(
        ChatRequest("claude-opus-4-6", [UserMessage("x")], effort="max")
    )
    assert resolution.native_value == "max"
    assert resolution.source == "recordings-2026"


GEMINI_CASES = [
    ("gemini-3-pro-preview", "exact", None, "level"),
    ("gemini-3.1-pro-preview", "family", "gemini-3", "level"),
    ("gemini-3-flash-lite-preview", "family", "gemini-3", "level"),
    ("gemini-2.5-flash-preview-09-2025", "family", "gemini-2.5", "budget"),
    ("gemini-2.0-flash-exp", "family", "gemini-2.0", None),
    ("gemini-2.5-flash-image", "default", None, None),
    ("gemini-2.5-flash-preview-tts", "default", None, None),
    ("gemini-2.0-flash-thinking-exp", "default", None, None),
    ("gemini-1.5-flash", "default", None, None),
    ("gemini-4-pro", "default", None, None),
    ("Gemini-3.5-Flash", "family", "gemini-3", "level"),
    ("models/GEMINI-2.5-pro-preview-09-2025", "family", "gemini-2.5", "budget"),
    ("gemini-30-pro", "default", None, None),
    ("my-finetune", "default", None, None),
]


@pytest.mark.parametrize(("model", "source", "family", "thinking"), GEMINI_CASES)
def test_s13_gemini_family_rules(
    model: str, source: str, family: str | None, thinking: str | None
) -> None:
    provider = _gemini()
    found = lookup_model_capabilities(provider, model)
    assert found.source == source
    assert (found.family.name if found.family else None) == family
    control = gemini_models.thinking_control(model)
    assert (control.thinking if control is not None else None) == thinking


def test_s24_a_newer_gemini_3_model_takes_a_thinking_level_by_its_family() -> None:
    resolution = _gemini().resolve_effort(
        ChatRequest("gemini-3.1-pro-preview", [UserMessage("x")], effort="medium")
    )
    # The family offers low/high (what every listed Gemini 3 model accepts): medium clamps.
    assert resolution.disposition == "clamped"
    assert resolution.native_value == "low"
    assert resolution.source is not None
    assert resolution.source.startswith("family gemini-3 (")


def _stated(caps: ModelCapabilities) -> dict[str, object]:
    return {name: getattr(caps, name) for name in caps.__slots__ if getattr(caps, name) is not None}


def test_s13_openai_families_agree_with_every_listed_member() -> None:
    """A family states only what each listed row it covers states, and offers a subset of
    every such row's effort levels: the rule extends the table, it never contradicts it."""
    table = openai_models.model_capabilities_table()
    for member in openai_models.FAMILIES:
        for name in VENDORS["openai"][1]:
            if not member.rule.matches(name):
                continue
            row = openai_models.row(name)
            assert row is not None
            assert _stated(member.rule.capabilities).items() <= _stated(table[name]).items(), name
            if member.efforts is None:
                assert row.efforts is None, name
            else:
                assert row.efforts is not None, name
                assert set(member.efforts) <= set(row.efforts), name


def test_s13_anthropic_and_gemini_families_agree_with_every_listed_member() -> None:
    anthropic_table = anthropic_models.model_capabilities_table()
    for a_member in anthropic_models.FAMILIES:
        for name in VENDORS["anthropic"][1]:
            a_row = anthropic_models.row(name)
            if not a_member.rule.matches(name) or a_row is None:
                continue
            stated = _stated(a_member.rule.capabilities).items()
            assert stated <= _stated(anthropic_table[name]).items(), name
            assert a_row.thinking is not None, name
            assert a_member.thinking is not None, name
            for level, budget in a_member.thinking.items():
                assert budget <= a_row.thinking[level], name
    gemini_table = gemini_models.model_capabilities_table()
    for g_member in gemini_models.FAMILIES:
        for name in VENDORS["gemini"][1]:
            g_row = gemini_models.row(name)
            if not g_member.rule.matches(name) or g_row is None:
                continue
            assert (
                _stated(g_member.rule.capabilities).items() <= _stated(gemini_table[name]).items()
            )
            assert g_row.thinking == g_member.thinking, name
            assert set(g_member.native) <= set(g_row.native), name
            if g_member.thinking == "budget":
                for level, budget in g_member.native.items():
                    assert int(budget) <= int(g_row.native[level]), name


def test_s13_register_model_metadata_wins_over_a_family() -> None:
    provider = _openai()
    assert asyncio.run(resolve_context_window(provider, "gpt-5.5")).source == "unknown"
    robota.register_model_metadata("gpt-5.5", context_window=1_000_000, provider=provider.name)
    robota.register_model_pricing(
        "gpt-5.5", input_per_million=2.0, output_per_million=16.0, provider=provider.name
    )
    try:
        window = asyncio.run(resolve_context_window(provider, "gpt-5.5"))
        assert (window.tokens, window.source) == (1_000_000, "registry")
        usage = robota.Usage(1_000_000, 1_000_000, 2_000_000)
        assert robota.estimate_cost(usage, "gpt-5.5", provider=provider.name) == 18.0
        # Capabilities still come from the family: metadata states windows and prices only.
        assert lookup_model_capabilities(provider, "gpt-5.5").source == "family"
    finally:
        robota.unregister_model_metadata("gpt-5.5", provider=provider.name)
        robota.unregister_model_pricing("gpt-5.5", provider=provider.name)
    assert robota.estimate_cost(robota.Usage(1, 1, 2), "gpt-5.5", provider=provider.name) is None
