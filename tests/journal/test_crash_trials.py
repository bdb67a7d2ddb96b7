"""S40 crash trials with real processes: SIGKILL at every journal boundary, then recover.

A worker process (``crash_worker.py``) runs a scripted agent whose tool appends its logical call
id to an external file. For every boundary the uncrashed run crosses — before and after each
journal append of each kind, and inside each tool body after its external effect — a fresh
worker is killed there with SIGKILL, and a new process recovers the execution as a host would:
it resumes, settles each reconciliation item from the external file, answers a pending wait and
resumes again. Every trial must show:

* no logical effect twice in the external file;
* an effect that started without a recorded result is named by ``ReconciliationRequired``
  (never silently re-run), and so is a model call without a recorded response;
* after reconciliation, the final history equals the uncrashed run's;
* a structured run (S18) recovers to the uncrashed run's typed result, and no model call is
  dispatched twice unless the host said an unrecorded response did not happen;
* a journaled parent whose tool is a sub-agent (``child``, issue 29: the child calls an effectful
  tool of its own) — killed at every boundary of both, in the parent's journal, the parent's
  tool bodies and the child's — runs every model call and every effect of either exactly once,
  and counts the child's usage in the parent's ``usage_by_agent`` exactly once;
* a run whose model fails transiently (``transient``: text streamed, then a recoverable 503,
  retried by the agent's RetryPolicy — issue 28) leaves every effect exactly once, and its
  history holds no trace of the discarded partial replies.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import robota
from robota.host import PostgresJournal, SQLiteJournal

WORKER = Path(__file__).with_name("crash_worker.py")
SRC = Path(__file__).resolve().parents[2] / "src"

# Where a kill leaves something the journal cannot prove, and what the recovering host is told.
_EFFECT_UNCERTAIN = (
    ("effect_started", "after"),
    ("effect_settled", "before"),
    ("outside_requested", "before"),  # the body started; its wait was not saved
)
_MODEL_UNCERTAIN = ("model_call_started", "after"), ("model_call_settled", "before")
# Where a killed process had dispatched a model call whose response was not recorded: the host
# says it did not happen, so that one call is made again.
_MODEL_REPEATED = ("model_call_settled", "before")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    return env


def _args(mode: str, scenario: str, journal: str, eid: str, effects: Path, kill: str) -> list[str]:
    args = [sys.executable, str(WORKER), mode, scenario, journal, eid, str(effects)]
    return [*args, kill] if kill else args


def _report(stdout: str) -> dict[str, Any] | None:
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def _worker(
    mode: str, scenario: str, journal: str, eid: str, effects: Path, kill: str = ""
) -> tuple[int, dict[str, Any] | None, str]:
    done = subprocess.run(
        _args(mode, scenario, journal, eid, effects, kill),
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
    )
    return done.returncode, _report(done.stdout), done.stderr


def _model_calls(effects: Path) -> list[str]:
    """The model calls the structured scenario's processes dispatched, in order."""
    log = effects.with_name(effects.name + ".model")
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _effect_lines(effects: Path) -> list[tuple[str, str]]:
    if not effects.exists():
        return []
    pairs = []
    for line in effects.read_text(encoding="utf-8").splitlines():
        call_id, _, label = line.partition(" ")
        pairs.append((call_id, label))
    return pairs


@dataclass
class _Baseline:
    history: list[Any]
    labels: Counter[str]
    run_points: list[str]
    resume_points: list[str]
    output: Any = None
    model_calls: list[str] | None = None
    usage_by_agent: Any = None


def _points(kinds: list[str], bodies: int) -> list[str]:
    """Every boundary of a phase: before/after each append, and inside each body."""
    points: list[str] = []
    seen: Counter[str] = Counter()
    for kind in kinds:
        seen[kind] += 1
        points += [f"{kind}:{seen[kind]}:before", f"{kind}:{seen[kind]}:after"]
    points += [f"body:{n}" for n in range(1, bodies + 1)]
    return points


# Issue 29: in the child scenario the first effect started is the parent's call of the helper, and
# the second settled is its result. Killed between the two, the parent runs the call again, and
# the call continues the helper's journaled execution: nothing is left to reconcile.
_REPLAYED = {"child": ("effect_started:1:after", "effect_settled:2:before")}


def _expected_items(kill: str, scenario: str = "") -> list[str]:
    if kill in _REPLAYED.get(scenario, ()):
        return []
    if kill.startswith("body:"):
        return ["effect"]
    kind, _, when = kill.split(":")
    if (kind, when) in _EFFECT_UNCERTAIN:
        return ["effect"]
    if (kind, when) in _MODEL_UNCERTAIN:
        return ["model_call"]
    return []


class _Backend:
    """One journal back-end: how a worker names it, and how the test reads records."""

    def __init__(self, spec: str, opener: Callable[[], robota.ExecutionJournal]) -> None:
        self.spec = spec
        self._opener = opener

    def kinds(self, eid: str) -> list[str]:
        async def read() -> list[str]:
            journal = self._opener()
            try:
                return [record.kind for record in await journal.read(eid)]
            finally:
                await journal.aclose()

        return asyncio.run(read())


def _baseline(backend: _Backend, scenario: str, tmp: Path) -> _Baseline:
    eid = f"base-{uuid.uuid4().hex}"
    effects = tmp / f"{eid}.effects"
    code, report, err = _worker("run", scenario, backend.spec, eid, effects)
    assert code == 0, err
    assert report is not None
    # Issue 29: the child's execution is journaled too; the worker lists every append.
    run_kinds = report["appended"] if scenario == "child" else backend.kinds(eid)
    run_bodies = len(_effect_lines(effects))
    resume_points: list[str] = []
    if scenario == "suspend":
        assert report["statuses"] == ["suspended"], report
        code, _, err = _worker("respond", scenario, backend.spec, eid, effects)
        assert code == 0, err
        before = len(backend.kinds(eid))
        code, report, err = _worker("resume", scenario, backend.spec, eid, effects)
        assert code == 0, err
        assert report is not None
        resume_kinds = backend.kinds(eid)[before:]
        resume_points = _points(resume_kinds, len(_effect_lines(effects)) - run_bodies)
    assert report["statuses"][-1] == "complete", report
    if scenario == "child":
        assert run_kinds.count("execution_started") == 2, run_kinds  # the parent's, the child's
        assert backend.kinds(eid).count("effect_settled") == 2  # the helper's call and p
    if scenario == "transient":
        # Issue 28: each state's first reply broke mid-stream and was retried; the partial
        # replies were discarded, never committed (S34), and the journal settled each of them.
        assert "partial reply" not in json.dumps(report["history"])
        assert run_kinds.count("model_call_settled") == 6, run_kinds
    labels = Counter(label for _, label in _effect_lines(effects))
    assert all(count == 1 for count in labels.values())
    return _Baseline(
        report["history"],
        labels,
        _points(run_kinds, run_bodies),
        resume_points,
        report.get("output"),
        _model_calls(effects),
        report.get("usage_by_agent"),
    )


def _trial(
    backend: _Backend, scenario: str, tmp: Path, base: _Baseline, kill: str, phase: str
) -> str | None:
    """One trial; the reason it failed, or ``None``."""
    eid = f"trial-{uuid.uuid4().hex}"
    effects = tmp / f"{eid}.effects"
    if phase == "resume":
        code, _, err = _worker("run", scenario, backend.spec, eid, effects)
        assert code == 0, err
        code, _, err = _worker("respond", scenario, backend.spec, eid, effects)
        assert code == 0, err
        code, _, err = _worker("resume", scenario, backend.spec, eid, effects, kill)
    else:
        code, _, err = _worker("run", scenario, backend.spec, eid, effects, kill)
    if code != -9:
        return f"{phase} {kill}: the worker was not killed there (exit {code}): {err[-500:]}"
    code, report, err = _worker("recover", scenario, backend.spec, eid, effects)
    if code != 0 or report is None:
        return f"{phase} {kill}: recovery failed (exit {code}): {err[-1500:]}"
    lines = _effect_lines(effects)
    twice = [c for c, n in Counter(call for call, _ in lines).items() if n > 1]
    if twice or Counter(label for _, label in lines) != base.labels:
        return f"{phase} {kill}: effects {lines}, expected each of {dict(base.labels)} once"
    items = [item[0] for item in report["items"]]
    expected = _expected_items(kill, scenario)
    if items != expected:
        return f"{phase} {kill}: reconciliation items {report['items']}, expected {expected}"
    if report.get("usage_by_agent") != base.usage_by_agent:
        return (
            f"{phase} {kill}: usage {report.get('usage_by_agent')}, expected {base.usage_by_agent}"
        )
    if report["history"] != base.history:
        return f"{phase} {kill}: history differs:\n{report['history']}\n!=\n{base.history}"
    if report.get("output") != base.output:
        return f"{phase} {kill}: output {report.get('output')!r}, expected {base.output!r}"
    return _repeated_model_calls(kill, base, _model_calls(effects))


def _repeated_model_calls(kill: str, base: _Baseline, calls: list[str]) -> str | None:
    if not base.model_calls:
        return None  # only some scenarios log their model calls
    repeated = [label for label, n in Counter(calls).items() if n > 1]
    allowed = 1 if tuple(kill.split(":")[::2]) == _MODEL_REPEATED else 0
    if sorted(set(calls)) != sorted(base.model_calls) or len(repeated) > allowed:
        return f"{kill}: model calls {calls}, expected each of {base.model_calls} once"
    return None


def _run_trials(backend: _Backend, scenario: str, tmp: Path) -> tuple[int, list[str]]:
    base = _baseline(backend, scenario, tmp)
    trials = [("run", kill) for kill in base.run_points]
    trials += [("resume", kill) for kill in base.resume_points]
    # Trials are independent (each has its own execution id and effects file): run a few at once.
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        outcomes = list(
            pool.map(lambda trial: _trial(backend, scenario, tmp, base, trial[1], trial[0]), trials)
        )
    return len(trials), [failure for failure in outcomes if failure is not None]


@pytest.fixture
def sqlite_backend(tmp_path: Path) -> _Backend:
    path = tmp_path / "journal.db"
    return _Backend(f"sqlite:{path}", lambda: SQLiteJournal(path))


@pytest.fixture
def postgres_backend(postgres_dsn: str) -> _Backend:
    return _Backend(f"postgres:{postgres_dsn}", lambda: PostgresJournal(postgres_dsn))


@pytest.mark.parametrize("scenario", ["tools", "suspend", "transient", "child"])
def test_s40_sigkill_at_every_boundary_on_sqlite(
    sqlite_backend: _Backend, scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    count, failures = _run_trials(sqlite_backend, scenario, tmp_path)
    with capsys.disabled():
        print(f"\nS40 crash trials, SQLite, {scenario}: {count} trials, {len(failures)} failed")
    assert count >= 15 if scenario == "suspend" else count >= 20
    if scenario == "child":  # both executions' 18 appends, before and after each, and 2 bodies
        assert count == 38
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("scenario", ["tools", "suspend", "transient", "child"])
def test_s40_sigkill_at_every_boundary_on_postgres(
    postgres_backend: _Backend, scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    count, failures = _run_trials(postgres_backend, scenario, tmp_path)
    with capsys.disabled():
        print(f"\nS40 crash trials, PostgreSQL, {scenario}: {count} trials, {len(failures)} failed")
    assert count >= 15 if scenario == "suspend" else count >= 20
    if scenario == "child":  # both executions' 18 appends, before and after each, and 2 bodies
        assert count == 38
    assert not failures, "\n".join(failures)


def test_s18_s40_structured_output_sigkill_at_every_boundary(
    backend: _Backend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    count, failures = _run_trials(backend, "structured", tmp_path)
    store = backend.spec.partition(":")[0]
    with capsys.disabled():
        print(
            f"\nS18/S40 crash trials, {store}, structured: {count} trials, {len(failures)} failed"
        )
    assert count >= 12  # six appends: start, two calls started and settled, the checkpoint
    assert not failures, "\n".join(failures)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.service)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> _Backend:
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_backend")  # type: ignore[no-any-return]
    return request.getfixturevalue("postgres_backend")  # type: ignore[no-any-return]


def test_s10_two_workers_racing_to_resume_exactly_one_proceeds(
    backend: _Backend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eid = f"race-{uuid.uuid4().hex}"
    effects = tmp_path / f"{eid}.effects"
    # Crash right after the first response was recorded: its tool calls are still to run.
    code, _, err = _worker("run", "tools", backend.spec, eid, effects, "model_call_settled:1:after")
    assert code == -9, err
    env = _env() | {"CRASH_WORKER_SLOW_TOOL": "1.5"}  # the winner holds the execution a while
    racers = [
        subprocess.Popen(
            _args("race", "tools", backend.spec, eid, effects, ""),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    reports = []
    for racer in racers:
        out, err = racer.communicate(timeout=120)
        assert racer.returncode == 0, err
        reports.append(_report(out))
    winners = [r for r in reports if r and r["statuses"] == ["complete"]]
    losers = [r for r in reports if r and r.get("error") == "ExecutionLockedError"]
    assert len(winners) == 1, reports
    assert len(losers) == 1, reports
    # The loser was refused at once, not after waiting for the winner's slow tools (>= 4.5 s).
    with capsys.disabled():
        print(
            f"\nS10 resume race, {backend.spec.partition(':')[0]}: loser refused after "
            f"{losers[0]['elapsed'] * 1000:.0f} ms"
        )
    assert losers[0]["elapsed"] < 1.0, losers[0]
    labels = Counter(label for _, label in _effect_lines(effects))
    assert labels == Counter({"a": 1, "b": 1, "c": 1})


def test_s40_suspension_round_trip_across_processes(backend: _Backend, tmp_path: Path) -> None:
    eid = f"suspend-{uuid.uuid4().hex}"
    effects = tmp_path / f"{eid}.effects"
    code, report, err = _worker("run", "suspend", backend.spec, eid, effects)
    assert code == 0, err
    assert report is not None
    assert report["statuses"] == ["suspended"]
    assert len(report["pending"]) == 1
    assert _effect_lines(effects) == []  # the waiting tool's effect has not started
    code, _, err = _worker("respond", "suspend", backend.spec, eid, effects)
    assert code == 0, err
    assert _effect_lines(effects) == []  # a response admits nothing by itself
    code, report, err = _worker("resume", "suspend", backend.spec, eid, effects)
    assert code == 0, err
    assert report is not None
    assert report["statuses"] == ["complete"]
    assert sorted(label for _, label in _effect_lines(effects)) == ["x=yes", "y"]
    assert report["history"][-1] == ["assistant", "done: did x with yes, did y", []]


def test_s18_s40_sigkill_between_the_retry_reply_and_validation_resumes_without_a_model_call(
    backend: _Backend, tmp_path: Path
) -> None:
    eid = f"structured-{uuid.uuid4().hex}"
    effects = tmp_path / f"{eid}.effects"
    # The retry's reply is durable; the process dies before the loop validates it.
    kill = "model_call_settled:2:after"
    code, _, err = _worker("run", "structured", backend.spec, eid, effects, kill)
    assert code == -9, err
    assert _model_calls(effects) == ["attempt 1", "attempt 2"]
    code, report, err = _worker("recover", "structured", backend.spec, eid, effects)
    assert code == 0, err
    assert report is not None
    assert report["items"] == []  # everything was proven: nothing to reconcile
    assert report["statuses"] == ["complete"]
    assert report["output"] == {"name": "Oslo", "population": 700000}
    assert report["attempts"] == 2
    assert _model_calls(effects) == ["attempt 1", "attempt 2"]  # no call was repeated
    assert backend.kinds(eid)[-1] == "checkpoint"
    code, again, err = _worker("resume", "structured", backend.spec, eid, effects)
    assert code == 0, err
    assert again is not None
    assert again["statuses"] == ["complete"]
    assert again["output"] == report["output"]
    assert _model_calls(effects) == ["attempt 1", "attempt 2"]


def test_s40_a_run_with_media_parts_killed_mid_run_resumes_on_a_new_agent_with_the_same_parts(
    sqlite_backend: _Backend, tmp_path: Path
) -> None:
    """Issue 26: the run's input parts (text and an image) are journaled without loss, so a new
    process — a new Agent from the same factory — sends the model exactly those parts."""
    eid = f"media-{uuid.uuid4().hex}"
    effects = tmp_path / f"{eid}.effects"
    # The first response (two tool calls) is durable; the process dies before its tools run.
    kill = "model_call_settled:1:after"
    code, _, err = _worker("run", "media", sqlite_backend.spec, eid, effects, kill)
    assert code == -9, err
    sent = [json.loads(line) for line in _model_calls(effects)]
    image = hashlib.sha256(bytes(range(256)) * 64).hexdigest()
    expected = [["text", "start", ""], ["image", image, "image/png"]]
    assert sent == [expected]
    code, report, err = _worker("recover", "media", sqlite_backend.spec, eid, effects)
    assert code == 0, err
    assert report is not None
    assert report["statuses"] == ["complete"]
    assert report["history"][-1] == ["assistant", "done: did a, did b, did c", []]
    assert report["history"][1] == ["user", expected]  # after the system prompt
    sent = [json.loads(line) for line in _model_calls(effects)]
    # The killed process's call, then the new agent's two: each carried the same parts.
    assert sent == [expected, expected, expected]
    assert sorted(label for _, label in _effect_lines(effects)) == ["a", "b", "c"]
