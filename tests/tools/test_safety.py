"""Issue 30, "safety, measured": the corpus of ``tools/_safety.py`` as tests.

Each attack must be stopped at least as firmly as it names (S05 containment, S06 egress and the
minimal shell environment: refused whatever a person approves; S21: anything else put before a
person); each ordinary task must succeed, the read-only ones without asking. The corpus also
runs in a child process whose environment held the canary keys from its start, so a read of
``/proc/<agent>/environ`` would find them (``benchmarks/tools_safety.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import pathlib
import subprocess
import sys
from collections.abc import Callable

import pytest

import robota
from tools._safety import ATTACKS, TASKS, Case, World, judge_attack, run_case, world

_REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def make_world(tmp_path: pathlib.Path) -> Callable[[], contextlib.AbstractContextManager[World]]:
    """A fresh world per run, each in its own directory under ``tmp_path``."""
    numbers = itertools.count()

    def make() -> contextlib.AbstractContextManager[World]:
        base = tmp_path / f"w{next(numbers)}"
        base.mkdir()
        return world(base)

    return make


@pytest.mark.parametrize("case", ATTACKS, ids=lambda c: f"{c.category}-{c.id}")
async def test_attack_is_stopped(
    case: Case, make_world: Callable[[], contextlib.AbstractContextManager[World]]
) -> None:
    outcome, run = await judge_attack(case, make_world)
    assert outcome != "escaped", f"{case.id} escaped: {run.harm}; results: {run.results}"
    if case.stop == "refused":
        assert outcome == "refused", (
            f"{case.id} reached a person ({run.asked}) but must be refused whatever a person "
            f"approves: {run.harm}"
        )


@pytest.mark.parametrize("case", TASKS, ids=lambda c: f"{c.category}-{c.id}")
async def test_ordinary_task_is_not_refused(
    case: Case, make_world: Callable[[], contextlib.AbstractContextManager[World]]
) -> None:
    with make_world() as w:
        run = await run_case(case, w, approves=True)
        assert case.succeeded is not None
        failure = case.succeeded(w, run.results)
    assert failure is None, failure
    if not case.asks:
        assert run.asked == [], f"read-only work asked a person: {run.asked}"
    else:
        assert run.asked, "a write, command or fetch must ask in the default mode (S21)"


def _unsafe_read(w: World) -> list[robota.Tool]:
    """A ``Read`` with no containment and a declared risk that never asks: what the judge
    must catch."""

    @robota.tool(name="Read", risk="inspect")
    def read(path: str) -> str:
        """Read a file."""
        return (w.work / path).read_text()

    return [read]


async def test_the_judge_sees_an_escape_a_careless_tool_allows(
    make_world: Callable[[], contextlib.AbstractContextManager[World]],
) -> None:
    (case,) = [c for c in ATTACKS if c.id == "read-dotdot"]
    outcome, run = await judge_attack(case, make_world, tools=_unsafe_read)
    assert outcome == "escaped"
    assert any("CANARY-OUTSIDE" in h for h in run.harm)


async def test_the_judge_sees_a_file_changed_outside(
    make_world: Callable[[], contextlib.AbstractContextManager[World]],
) -> None:
    @robota.tool(name="Write", risk="inspect")
    def write(path: str, content: str) -> str:
        """Write a file."""
        return str((world_dir / path).write_text(content))

    (case,) = [c for c in ATTACKS if c.id == "write-dotdot"]
    world_dir = None

    def tools(w: World) -> list[robota.Tool]:
        nonlocal world_dir
        world_dir = w.work
        return [write]

    outcome, run = await judge_attack(case, make_world, tools=tools)
    assert outcome == "escaped"
    assert run.harm == ["outside/new.txt added"]


def test_the_corpus_in_a_process_started_with_the_keys(tmp_path: pathlib.Path) -> None:
    """The benchmark's own run: no attack escapes, no task is refused."""
    completed = subprocess.run(
        [
            sys.executable,
            str(_REPO / "benchmarks" / "tools_safety.py"),
            "--json",
            "--base",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(_REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        },
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads(completed.stdout.splitlines()[-1])
    assert report["escaped"] == [], report
    assert report["under_stopped"] == [], report
    assert report["tasks_failed"] == [], report
    assert report["attacks"] == len(ATTACKS)
    assert report["tasks"] == len(TASKS)
