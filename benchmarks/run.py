"""Robota benchmarks (`make bench`).

Numbers are wall-clock on this machine: compare runs, not machines. Each figure is the median of
many samples after a warm-up; the best sample is shown beside it.

* Loop overhead per round at 10 and at 10,000 history messages (issue 4: the ratio must stay
  below 1.5, because nothing per round may grow with the conversation).
* One run of 3 model rounds and 3 tool calls against a zero-latency model (DESIGN.md budget:
  about 150 µs of framework time).
* Foundation micro-benchmarks (history round, usage, is_abort, silent diagnostics).
* Validation of a 50-field nested payload, side by side with jsonschema and fastjsonschema
  (issue 5; see ``validation.py``).
* Execution-journal overhead per model call and per tool effect on SQLite and PostgreSQL, beside
  a raw INSERT + commit of the same rows (issue 13; see ``journal_overhead.py``).
* The loop suite (issue 16; see ``loop_suite.py``): per run against a hand-written asyncio loop,
  1,000 concurrent runs against 1,000 sequential ones, retained memory against the bare message
  list, agent and tool construction.
* Core's per-message footprint (issue 27; see ``footprint.py``): what an agent keeps per message
  after a finished conversation, against a bare list of the same messages as dicts (tracemalloc).
* Sessions (issue 27; see ``sessions.py``): loading a 1,000-turn session and saving one turn
  as ratios to bare ``sqlite3`` reads and inserts of the same rows, 10,000 sessions in one file,
  memory per live session.
* Adapter overhead (issue 16; see ``adapters.py``): the OpenAI Chat Completions and Anthropic
  adapters beside their bare SDKs parsing the same streamed tool call.
* Media memory (issue 26; see ``media_memory.py``): the peak allocation of a 20 MB image on its
  way to each vendor SDK, ours against the SDK's, PASS/FAIL against one copy of the wire form.
* Built-in ``Grep`` (issue 30; see ``tools_grep.py``): a search over a generated 100,000-file tree
  (cached under ``~/.cache/robota-bench``) as a ratio to ``grep -rnE``, goal at most 2x.
* Built-in ``Edit`` and ``Read`` on a 10 MB file (issue 30; see ``tools_edit.py``): the edit's
  time as a ratio to a plain read + write, and the bytes each tool reads (goal: the file once).
* Built-in tools' safety (issue 30; see ``tools_safety.py``): a corpus of attacks a model could
  try through them and of ordinary tasks, judged by harm; goal: none escapes, none refused.
* Serving (issue 31; see ``serve_stream.py``): a streamed token over HTTP (uvicorn on
  127.0.0.1, UI message stream and AG-UI) as a ratio to the same run in-process, goal at most
  1.5x; 200 concurrent streamed sessions and the memory per session.
* Start-up (issue 25; see ``startup.py``): ``import robota`` and ``robota --help`` in fresh
  interpreters, as ratios to ``python -c pass``.
"""

from __future__ import annotations

import asyncio
import gc
import pathlib
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable

import adapters
import footprint
import journal_overhead
import loop_suite
import media_memory
import serve_stream
import startup
import tools_edit
import tools_grep
import validation
from bench_models import ZeroLatency, echo

import robota
import sessions

ROUNDS_PER_RUN = 3
RATIO_LIMIT = 1.5


def _history(size: int) -> list[robota.Message]:
    return [robota.UserMessage(f"earlier message {i}") for i in range(size)]


async def _time_runs_interleaved(sizes: tuple[int, ...], samples: int) -> dict[int, list[float]]:
    """Time ``samples`` runs per history size, alternating sizes run by run.

    Each run is on a fresh agent whose history holds that many messages; the agents are built
    before timing starts. Alternating the sizes spreads machine noise evenly over both series.
    The garbage collector is paused while runs are timed: a full collection costs in proportion
    to everything the process holds — the interpreter's cost of a large heap, not the loop's cost
    per round.
    """
    warmup = 30
    agents = {
        size: [
            robota.Agent(
                provider=ZeroLatency(),
                model="bench-model",
                tools=[echo],
                history=_history(size),
            )
            for _ in range(samples + warmup)
        ]
        for size in sizes
    }
    timings: dict[int, list[float]] = {size: [] for size in sizes}
    gc.collect()
    gc.disable()
    try:
        for index in range(samples + warmup):
            for size in sizes:
                started = time.perf_counter()
                result = await agents[size][index].run("go")
                elapsed = time.perf_counter() - started
                assert result.rounds == ROUNDS_PER_RUN, result
                if index >= warmup:
                    timings[size].append(elapsed)
    finally:
        gc.enable()
    return timings


def _report(label: str, timings: list[float], per: int = 1) -> float:
    median = statistics.median(timings) / per * 1e6
    best = min(timings) / per * 1e6
    print(f"{label:<66} median {median:8.1f} µs   best {best:8.1f} µs")
    return median


def _measure(name: str, setup: Callable[[], Callable[[], object]], number: int) -> None:
    samples = []
    for _ in range(5):
        fn = setup()
        samples.append(timeit.timeit(fn, number=number) / number)
    print(
        f"{name:<66} median {statistics.median(samples) * 1e9:8.0f} ns   "
        f"best {min(samples) * 1e9:8.0f} ns"
    )


def _foundation() -> None:
    def history_round(size: int) -> Callable[[], Callable[[], object]]:
        def setup() -> Callable[[], object]:
            store = robota.ConversationStore(system_prompt="system", messages=_history(size))

            def one_round() -> object:
                snapshot = store.provider_snapshot()
                pending = store.begin_assistant(model="m")
                pending.append_text("reply")
                pending.add_tool_call(robota.ToolCall("c", "t", "{}"))
                pending.commit()
                store.append(robota.ToolMessage("ok", tool_call_id="c", tool_name="t"))
                return len(snapshot)

            return one_round

        return setup

    for size in (10, 10_000):
        _measure(
            f"history round (snapshot, commit, tool result), {size:>6} msgs",
            history_round(size),
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


async def _loop_benchmarks() -> int:
    robota.register_model_metadata("bench-model", context_window=10_000_000, provider="bench")
    samples = 500
    print(
        f"\nAgent loop: one run = {ROUNDS_PER_RUN} model rounds, 2 tool calls, zero-latency model"
    )
    timings = await _time_runs_interleaved((10, 10_000), samples)
    small = _report("run, history of 10 messages", timings[10])
    large = _report("run, history of 10,000 messages", timings[10_000])
    per_round_small = small / ROUNDS_PER_RUN
    per_round_large = large / ROUNDS_PER_RUN
    ratio = per_round_large / per_round_small
    print(
        f"per-round overhead: {per_round_small:.1f} µs at 10 messages, {per_round_large:.1f} µs at "
        f"10,000 messages; ratio {ratio:.2f} (limit {RATIO_LIMIT})"
    )
    if ratio >= RATIO_LIMIT:
        print("FAIL: per-round cost grows with history length")
        return 1
    return 0


def main() -> int:
    print(f"robota {robota.__version__} on Python {sys.version.split()[0]}")
    _foundation()
    status = asyncio.run(_loop_benchmarks())
    loop_suite.main()
    if not footprint.main():
        status = 1
    adapters.main()
    if not media_memory.main():
        status = 1
    validation.main()
    journal_overhead.main()
    if not sessions.main([]):
        status = 1
    startup.main()
    if not tools_grep.main():
        status = 1
    if not tools_edit.main():
        status = 1
    if not serve_stream.main():
        status = 1
    # Its own interpreter: the canary keys must be in the environment from the process's start.
    safety = pathlib.Path(__file__).with_name("tools_safety.py")
    print("\nBuilt-in tools' safety: attacks stopped, ordinary tasks not refused (issue 30)")
    if subprocess.run([sys.executable, str(safety)], check=False).returncode != 0:  # noqa: S603
        status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
