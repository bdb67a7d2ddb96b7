"""Robota benchmarks (`make bench`).

Foundation-level micro-benchmarks for the pieces every agent round touches. Later issues add the
loop benchmarks (per-round overhead, concurrent runs, memory per conversation) and the side-by-side
peer comparisons. Numbers are wall-clock on this machine: compare runs, not machines.
"""

from __future__ import annotations

import statistics
import sys
import timeit
from collections.abc import Callable

import robota


def _measure(name: str, setup: Callable[[], Callable[[], object]], number: int) -> None:
    samples = []
    for _ in range(5):
        fn = setup()
        samples.append(timeit.timeit(fn, number=number) / number)
    best = min(samples) * 1e9
    median = statistics.median(samples) * 1e9
    print(f"{name:<62} best {best:9.0f} ns   median {median:9.0f} ns")


def _round_on_history(size: int) -> Callable[[], Callable[[], object]]:
    """One round's history work: read the provider view, commit a reply, append a tool result."""

    def setup() -> Callable[[], object]:
        store = robota.ConversationStore(system_prompt="system")
        for i in range(size):
            store.append(robota.UserMessage(f"message {i}"))

        def one_round() -> object:
            view = store.provider_messages()
            pending = store.begin_assistant(model="m")
            pending.append_text("reply")
            pending.add_tool_call(robota.ToolCall("c", "t", "{}"))
            pending.commit()
            store.append(robota.ToolMessage("ok", tool_call_id="c", tool_name="t"))
            return len(view)

        return one_round

    return setup


def main() -> int:
    print(f"robota {robota.__version__} on Python {sys.version.split()[0]}")
    for size in (10, 10_000):
        _measure(
            f"history round (view + commit + tool result), {size:>6} messages",
            _round_on_history(size),
            2_000,
        )
    _measure(
        "Usage.from_counts with cache read",
        lambda: lambda: robota.Usage.from_counts(prompt=1000, completion=50, cache_read=800),
        50_000,
    )
    error = robota.ProviderError("upstream aborted", status=502)
    _measure(
        "is_abort on a non-abort provider error", lambda: lambda: robota.is_abort(error), 50_000
    )
    logger = robota.get_logger("robota.bench")
    _measure(
        "diagnostic call with the default (silent) sink",
        lambda: lambda: logger.debug("x", a=1),
        50_000,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
