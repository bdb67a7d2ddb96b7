"""S29 usage triple."""

from __future__ import annotations

import typing

from robota import Usage, UsageTriple


def test_s29_the_triple_is_exactly_three_counts() -> None:
    assert set(typing.get_type_hints(UsageTriple)) == {
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
    }
    usage = Usage.from_counts(prompt=10, completion=5, cache_read=4)
    assert usage.to_triple() == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def test_s29_cache_read_is_part_of_the_prompt_not_added_to_it() -> None:
    usage = Usage.from_counts(prompt=1000, completion=10, cache_read=800)
    assert usage.prompt_tokens == 1000
    assert usage.total_tokens == 1010
    assert usage.cache_read_tokens == 800
    assert usage.uncached_prompt_tokens == 200
    assert not usage.partial


def test_s29_cache_read_unreported_is_unknown_not_zero() -> None:
    assert Usage.from_counts(prompt=1, completion=1).cache_read_tokens is None


def test_s31_inconsistent_total_is_kept_and_marked_partial() -> None:
    usage = Usage.from_counts(prompt=10, completion=5, total=99)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (10, 5, 99)
    assert usage.partial


def test_s31_missing_count_is_marked_partial() -> None:
    usage = Usage.from_counts(prompt=None, completion=7)
    assert usage.partial
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (0, 7, 7)


def test_s31_cache_read_above_prompt_is_marked_partial() -> None:
    assert Usage.from_counts(prompt=5, completion=1, cache_read=9).partial


def test_s31_negative_counts_are_clamped_and_marked_partial() -> None:
    usage = Usage.from_counts(prompt=-3, completion=2)
    assert usage.partial
    assert usage.prompt_tokens == 0
    assert Usage.from_counts(prompt=3, completion=2, cache_read=-1).partial


def test_consistent_counts_are_not_partial() -> None:
    assert not Usage.from_counts(prompt=10, completion=5, total=15, cache_read=10).partial


def test_usage_sums_across_rounds() -> None:
    a = Usage.from_counts(prompt=10, completion=2, cache_read=5)
    b = Usage.from_counts(prompt=20, completion=3)
    total = a + b
    assert total.to_triple() == {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}
    assert total.cache_read_tokens == 5
    assert not total.partial
    assert (Usage() + Usage()).cache_read_tokens is None
    assert (a + Usage.from_counts(prompt=None, completion=1)).partial


def test_usage_does_not_add_to_other_types() -> None:
    assert Usage().__add__(3) is NotImplemented  # type: ignore[operator]


def test_s29_reasoning_tokens_are_a_part_of_the_completion() -> None:
    usage = Usage.from_counts(prompt=10, completion=20, total=30, reasoning=15)
    assert usage.reasoning_tokens == 15
    assert not usage.partial
    assert usage.to_triple() == {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    assert Usage.from_counts(prompt=10, completion=5, reasoning=6).partial  # more than the part
    assert Usage.from_counts(prompt=1, completion=1).reasoning_tokens is None  # unknown
    summed = usage + Usage.from_counts(prompt=1, completion=1)
    assert summed.reasoning_tokens == 15
    assert (Usage() + Usage()).reasoning_tokens is None
