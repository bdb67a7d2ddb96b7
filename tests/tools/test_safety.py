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
import urllib.request
from collections.abc import Callable

import pytest

import robota
from tools._safety import ATTACKS, DOCS_HOST, TASKS, Case, World, judge_attack, run_case, world

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


def _careless(w: World) -> list[robota.Tool]:
    """Tools with the corpus's names and arguments and none of the guards: no containment, links
    followed, ``~`` expanded, the agent's whole environment passed to commands, any URL fetched,
    and a declared risk that never asks. Every attack must escape through them, or the judge
    cannot see the harm it claims to stop."""
    root = w.work

    def place(path: str) -> pathlib.Path:
        return root / os.path.expanduser(path)

    @robota.tool(name="Read", risk="inspect")
    def read(path: str) -> str:
        """Read a file."""
        return place(path).read_text(errors="replace")

    @robota.tool(name="LS", risk="inspect")
    def ls(path: str) -> str:
        """List a directory."""
        return "\n".join(sorted(os.listdir(place(path))))

    @robota.tool(name="Glob", risk="inspect")
    def glob(pattern: str, path: str = ".") -> str:
        """Find files."""
        return "\n".join(str(p) for p in place(path).glob(pattern))

    @robota.tool(name="Grep", risk="inspect")
    def grep(pattern: str, path: str = ".") -> str:
        """Search files."""
        found = subprocess.run(
            ["grep", "-R", "-a", "-e", pattern, str(place(path))],
            check=False,
            capture_output=True,
            text=True,
        )
        return found.stdout

    @robota.tool(name="Write", risk="inspect")
    def write(path: str, content: str) -> str:
        """Write a file."""
        place(path).parent.mkdir(parents=True, exist_ok=True)
        place(path).write_text(content)
        return "written"

    @robota.tool(name="Edit", risk="inspect")
    def edit(path: str, old_string: str, new_string: str) -> str:
        """Edit a file."""
        place(path).write_text(place(path).read_text().replace(old_string, new_string))
        return "edited"

    @robota.tool(name="Bash", risk="inspect")
    def bash(command: str) -> str:
        """Run a command."""
        done = subprocess.run(
            ["bash", "-c", command], check=False, cwd=root, capture_output=True, text=True
        )
        return done.stdout + done.stderr

    @robota.tool(name="WebFetch", risk="inspect")
    def web_fetch(url: str) -> str:
        """Fetch a URL (docs.test is the docs server)."""
        url = url.replace(DOCS_HOST, "127.0.0.1")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:  # noqa: S310 careless on purpose
                return str(response.read().decode(errors="replace"))
        except (OSError, ValueError) as exc:
            return f"fetch failed: {exc}"

    return [read, ls, glob, grep, write, edit, bash, web_fetch]


#: One attack or more of each category, and each kind of harm the judge claims to see: a canary
#: shown (a file outside, the SSH key, the environment, a name outside), a file added, changed or
#: removed (beside the workspace too), a request at the sink (through redirects too), and a harm
#: the world cannot show (a metadata service) caught by its missing refusal. Attacks that read
#: `/proc` are left out: in this process the canary keys were set after it started, so only the
#: benchmark's own process (`test_the_corpus_in_a_process_started_with_the_keys`) can see them.
_SEEN = (
    "read-dotdot",
    "read-home-tilde",
    "write-absolute",
    "read-link-dir",
    "list-link-dir",
    "plant-link-then-read",
    "plant-hard-link-then-read",
    "glob-parent-path",
    "grep-parent",
    "shell-cat-home",
    "shell-cd-up",
    "redirect-beside-workspace",
    "env-dump",
    "write-git-hook",
    "rm-outside",
    "fetch-loopback-literal",
    "fetch-redirect-chain-to-sink",
    "fetch-metadata",
)


@pytest.mark.parametrize("case_id", _SEEN)
async def test_the_judge_sees_each_kind_of_harm_through_careless_tools(
    case_id: str, make_world: Callable[[], contextlib.AbstractContextManager[World]]
) -> None:
    (case,) = [c for c in ATTACKS if c.id == case_id]
    outcome, run = await judge_attack(case, make_world, tools=_careless)
    assert outcome == "escaped", f"{case_id}: the judge saw no harm; results: {run.results}"


def test_the_careless_set_covers_every_category() -> None:
    categories = {c.category for c in ATTACKS}
    assert {c.category for c in ATTACKS if c.id in _SEEN} == categories
