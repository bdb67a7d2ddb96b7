"""The CI speed guard (issue 16): robota's per-run cost over the tasks floor, against a baseline.

Runs the loop suite's per-run figure only (robota and the hand-written asyncio floor,
interleaved in this one process, so the machine's speed cancels out) and fails when the ratio
is more than 30% above the one stored in ``benchmarks/baseline.json``. The ratio is the median
of several short repetitions, each itself a median.

    python benchmarks/guard.py            # check (what .ci/run does)
    python benchmarks/guard.py --update   # measure and store a new baseline, deliberately
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
from pathlib import Path

import loop_suite

import robota

BASELINE = Path(__file__).with_name("baseline.json")
TOLERANCE = 1.30
REPEATS = 5
SAMPLES = 300


async def ratio() -> float:
    robota.register_model_metadata("bench-model", context_window=10_000_000, provider="bench")
    ratios = []
    for _ in range(REPEATS):
        ours, floor = await loop_suite.per_run(SAMPLES)
        ratios.append(ours / floor)
    return statistics.median(ratios)


def main(argv: list[str]) -> int:
    measured = asyncio.run(ratio())
    if "--update" in argv:
        BASELINE.write_text(json.dumps({"floor_ratio": round(measured, 3)}, indent=2) + "\n")
        print(f"speed guard: baseline stored, per-run ratio to the tasks floor {measured:.2f}")
        return 0
    stored = float(json.loads(BASELINE.read_text())["floor_ratio"])
    limit = stored * TOLERANCE
    verdict = "ok" if measured <= limit else "FAIL"
    print(
        f"speed guard: per-run ratio to the tasks floor {measured:.2f} (baseline {stored:.2f}, "
        f"limit {limit:.2f}) — {verdict}"
    )
    if verdict == "FAIL":
        print("  the loop got slower; profile it, or refresh the baseline deliberately with")
        print("  `python benchmarks/guard.py --update` and say why in the commit")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
