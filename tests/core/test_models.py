"""S04/S13 model metadata registry and pricing table."""

from __future__ import annotations

import ast
import logging
import pathlib

import pytest

import robota
from robota import (
    ConfigurationError,
    MemorySink,
    Usage,
    estimate_cost,
    get_model_context_window,
    get_model_metadata,
    get_model_pricing,
    register_model_metadata,
    register_model_pricing,
)

CORE = pathlib.Path(robota.__file__).parent / "core"


def test_s13_registered_model_answers_its_own_window(model_name: str) -> None:
    register_model_metadata(model_name, context_window=32_000, max_output_tokens=4_096)
    assert get_model_context_window(model_name) == 32_000
    meta = get_model_metadata(model_name)
    assert meta is not None
    assert meta.max_output_tokens == 4_096


def test_s13_unknown_model_has_an_unknown_window_with_exactly_one_warning_per_model(
    memory_sink: MemorySink, model_name: str
) -> None:
    # Issue 25: no vendor's number is borrowed for a model nobody registered.
    other = model_name + "-other"
    for _ in range(5):
        assert get_model_context_window(model_name) is None
    get_model_context_window(other)
    get_model_context_window(other)
    warnings = [e for e in memory_sink.events if e.level == logging.WARNING]
    assert [e.fields["model"] for e in warnings] == [model_name, other]
    assert all(e.logger == "robota.models" for e in warnings)
    assert "unknown" in warnings[0].message


def test_s13_the_named_default_window_is_never_assumed(model_name: str) -> None:
    # Issue 25: DEFAULT_CONTEXT_WINDOW stays a named number, but an unregistered model's window
    # is unknown, not that number.
    assert robota.DEFAULT_CONTEXT_WINDOW == 200_000
    assert get_model_context_window(model_name) is None


def test_s13_provider_specific_entry_is_preferred(model_name: str) -> None:
    register_model_metadata(model_name, context_window=100, provider="gateway")
    register_model_metadata(model_name, context_window=200)
    assert get_model_context_window(model_name, provider="gateway") == 100
    assert get_model_context_window(model_name) == 200
    assert get_model_context_window(model_name, provider="elsewhere") == 200
    robota.unregister_model_metadata(model_name, provider="gateway")


def test_s13_two_providers_disagreeing_without_a_named_provider_is_unknown(
    model_name: str, memory_sink: MemorySink
) -> None:
    register_model_metadata(model_name, context_window=100, provider="a")
    register_model_metadata(model_name, context_window=300, provider="b")
    try:
        assert get_model_metadata(model_name) is None
        assert get_model_context_window(model_name, provider="b") == 300
    finally:
        robota.unregister_model_metadata(model_name, provider="a")
        robota.unregister_model_metadata(model_name, provider="b")


def test_s13_single_provider_entry_serves_lookups_without_a_provider(model_name: str) -> None:
    register_model_metadata(model_name, context_window=64, provider="only")
    try:
        assert get_model_context_window(model_name) == 64
    finally:
        robota.unregister_model_metadata(model_name, provider="only")


def test_s13_conflicting_registration_needs_replace(model_name: str) -> None:
    register_model_metadata(model_name, context_window=1_000)
    register_model_metadata(model_name, context_window=1_000)  # identical: fine
    with pytest.raises(ConfigurationError, match="replace=True"):
        register_model_metadata(model_name, context_window=2_000)
    register_model_metadata(model_name, context_window=2_000, replace=True)
    assert get_model_context_window(model_name) == 2_000


@pytest.mark.parametrize("window", [0, -5, 1.5, True, None])
def test_s13_context_window_must_be_a_positive_integer(model_name: str, window: object) -> None:
    with pytest.raises(ConfigurationError, match="context_window"):
        register_model_metadata(model_name, context_window=window)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", ["", "   ", None])
def test_s13_model_name_must_be_non_empty(model: object) -> None:
    with pytest.raises(ConfigurationError, match="model"):
        register_model_metadata(model, context_window=10)  # type: ignore[arg-type]


def test_s13_provider_name_must_be_non_empty(model_name: str) -> None:
    with pytest.raises(ConfigurationError, match="provider"):
        register_model_metadata(model_name, context_window=10, provider=" ")


def test_s13_unregister_reports_whether_anything_was_removed(model_name: str) -> None:
    assert robota.unregister_model_metadata(model_name) is False
    register_model_metadata(model_name, context_window=10)
    assert robota.unregister_model_metadata(model_name) is True


def test_s02_core_registers_no_vendor_models() -> None:
    # Core is vendor-neutral: no module in robota.core calls a registration function.
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        calls = [
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        ]
        assert "register_model_metadata" not in calls, path
        assert "register_model_pricing" not in calls, path


def test_s04_cost_reads_the_pricing_table(model_name: str) -> None:
    register_model_pricing(
        model_name, input_per_million=3, output_per_million=15, cache_read_per_million=0.3
    )
    usage = Usage.from_counts(prompt=1_000_000, completion=100_000, cache_read=400_000)
    # 600k uncached at $3 + 400k cached at $0.30 + 100k output at $15, per million
    assert estimate_cost(usage, model_name) == pytest.approx(1.8 + 0.12 + 1.5)


def test_s04_cache_reads_cost_the_input_price_when_no_cache_price_is_set(model_name: str) -> None:
    register_model_pricing(model_name, input_per_million=2, output_per_million=0)
    usage = Usage.from_counts(prompt=1_000_000, completion=0, cache_read=500_000)
    assert estimate_cost(usage, model_name) == pytest.approx(2.0)


def test_s04_unpriced_model_has_no_cost_never_a_guess(model_name: str) -> None:
    assert get_model_pricing(model_name) is None
    assert estimate_cost(Usage.from_counts(prompt=10, completion=10), model_name) is None


@pytest.mark.parametrize("price", [-1, float("nan"), float("inf"), "3", True])
def test_s04_prices_must_be_finite_and_non_negative(model_name: str, price: object) -> None:
    with pytest.raises(ConfigurationError, match="input_per_million"):
        register_model_pricing(model_name, input_per_million=price, output_per_million=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="cache_read_per_million"):
        register_model_pricing(
            model_name,
            input_per_million=1,
            output_per_million=1,
            cache_read_per_million=price,  # type: ignore[arg-type]
        )


def test_s04_pricing_conflict_needs_replace(model_name: str) -> None:
    register_model_pricing(model_name, input_per_million=1, output_per_million=1)
    with pytest.raises(ConfigurationError):
        register_model_pricing(model_name, input_per_million=2, output_per_million=1)
    entry = register_model_pricing(
        model_name, input_per_million=2, output_per_million=1, replace=True
    )
    assert get_model_pricing(model_name) == entry


def test_s04_a_named_provider_is_never_served_another_providers_entry() -> None:
    # Regression: a compatible server reusing a vendor's model name was priced (and planned) by
    # that vendor's table. A named lookup gets its own entry or a neutral one, nothing else.
    robota.register_model_pricing(
        "shared-name-model", input_per_million=1.0, output_per_million=2.0, provider="vendor-a"
    )
    robota.register_model_metadata("shared-name-model", context_window=1234, provider="vendor-a")
    try:
        assert robota.get_model_pricing("shared-name-model", provider="vendor-b") is None
        assert robota.get_model_metadata("shared-name-model", provider="vendor-b") is None
        assert (
            robota.estimate_cost(robota.Usage(1, 1, 2), "shared-name-model", provider="vendor-b")
            is None
        )
        assert robota.get_model_pricing("shared-name-model", provider="vendor-a") is not None
        # Unnamed lookups still find the only entry there is.
        assert robota.get_model_metadata("shared-name-model") is not None
        robota.register_model_pricing(
            "shared-name-model", input_per_million=0.5, output_per_million=0.5
        )
        neutral = robota.get_model_pricing("shared-name-model", provider="vendor-b")
        assert neutral is not None
        assert neutral.provider is None
    finally:
        robota.unregister_model_pricing("shared-name-model", provider="vendor-a")
        robota.unregister_model_pricing("shared-name-model")
        robota.unregister_model_metadata("shared-name-model", provider="vendor-a")
