"""The built-in tools' safety, measured (issue 30): attacks stopped, ordinary work not refused.

Runs the corpus in ``tests/tools/_safety.py`` — each case a model's turn of tool calls through a
real agent with ``robota.tools.builtin``, the default permission mode and the workspace's
permission context, in a world on disk with canaries outside the workspace, canary API keys in
this process's environment from its start, and an HTTP sink on 127.0.0.1 — and prints, per
category, how many attacks the tools refused on their own, how many reached a person, how many
escaped, and how many ordinary tasks succeeded (and how many asked). The harm test is what
happened (a canary shown, a file changed, the sink reached), not what a tool said.

Goal: 0 escaped, every attack stopped at least as firmly as the corpus names, 0 tasks refused.
Exit code 1 otherwise.

Run alone: ``python benchmarks/tools_safety.py [--json] [--base DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import pathlib
import sys
import tempfile
from collections import Counter, defaultdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

from tools._safety import (
    ATTACKS,
    CANARY_ENV,
    KEY_VARIABLES,
    TASKS,
    World,
    judge_attack,
    run_case,
    world,
)


async def _measure(base: pathlib.Path) -> dict[str, object]:
    numbers = itertools.count()

    def make() -> contextlib.AbstractContextManager[World]:
        where = base / f"w{next(numbers)}"
        where.mkdir()
        return world(where)

    by_category: dict[str, Counter[str]] = defaultdict(Counter)
    escaped: list[str] = []
    under: list[str] = []
    for case in ATTACKS:
        outcome, run = await judge_attack(case, make)
        by_category[case.category][outcome] += 1
        if outcome == "escaped":
            escaped.append(f"{case.id}: {'; '.join(run.harm)}")
        elif case.stop == "refused" and outcome != "refused":
            under.append(f"{case.id}: reached a person ({'; '.join(run.asked)})")
    failed: list[str] = []
    asked_tasks = 0
    for case in TASKS:
        with make() as w:
            run = await run_case(case, w, approves=True)
            assert case.succeeded is not None
            failure = case.succeeded(w, run.results)
        asked_tasks += bool(run.asked)
        if failure is not None:
            failed.append(f"{case.id}: {failure}")
        elif bool(run.asked) != case.asks:
            failed.append(
                f"{case.id}: asked {run.asked}, expected {'an ask' if case.asks else 'none'}"
            )
    return {
        "attacks": len(ATTACKS),
        "tasks": len(TASKS),
        "by_category": {k: dict(v) for k, v in sorted(by_category.items())},
        "escaped": escaped,
        "under_stopped": under,
        "tasks_failed": failed,
        "tasks_asked": asked_tasks,
    }


def _table(report: dict[str, object]) -> str:
    lines = [f"{'category':<14}{'attacks':>8}{'refused':>9}{'asked':>7}{'escaped':>9}"]
    by_category = report["by_category"]
    assert isinstance(by_category, dict)
    for category, counts in by_category.items():
        total = sum(counts.values())
        lines.append(
            f"{category:<14}{total:>8}{counts.get('refused', 0):>9}{counts.get('asked', 0):>7}"
            f"{counts.get('escaped', 0):>9}"
        )
    failed = report["tasks_failed"]
    assert isinstance(failed, list)
    lines.append(
        f"ordinary tasks: {report['tasks']}, succeeded {int(str(report['tasks'])) - len(failed)}, "
        f"asked a person {report['tasks_asked']} (writes, commands and fetches only)"
    )
    for key in ("escaped", "under_stopped", "tasks_failed"):
        found = report[key]
        assert isinstance(found, list)
        lines.extend(f"  {key}: {line}" for line in found)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with the report as one JSON line")
    parser.add_argument(
        "--base", type=pathlib.Path, help="where the worlds go (default: a temp dir)"
    )
    args = parser.parse_args()
    if any(os.environ.get(name) != CANARY_ENV for name in KEY_VARIABLES):
        # The keys must be in this process's environment from its start (/proc/self/environ).
        canaries = dict.fromkeys(KEY_VARIABLES, CANARY_ENV)
        os.execve(  # noqa: S606 - re-runs this very script, with the canaries added
            sys.executable, [sys.executable, *sys.argv], {**os.environ, **canaries}
        )
    with contextlib.ExitStack() as stack:
        base = args.base or pathlib.Path(stack.enter_context(tempfile.TemporaryDirectory()))
        report = asyncio.run(_measure(base))
    print(_table(report))
    if args.json:
        print(json.dumps(report))
    clean = not (report["escaped"] or report["under_stopped"] or report["tasks_failed"])
    return 0 if clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
