"""Sessions across real processes: two workers racing a turn, SIGKILL mid-turn and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

WORKER = Path(__file__).with_name("session_worker.py")
SRC = Path(__file__).resolve().parents[2] / "src"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC)}


def _args(mode: str, tmp: Path, journal: str, text: str = "") -> list[str]:
    return [
        sys.executable,
        str(WORKER),
        mode,
        str(tmp / "sessions.db"),
        "chat",
        str(tmp),
        journal,
        text,
    ]


def _run(mode: str, tmp: Path, journal: str = "-", text: str = "") -> tuple[int, Any]:
    done = subprocess.run(
        _args(mode, tmp, journal, text),
        check=False,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if lines and done.returncode == 0 else None
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    return done.returncode, report


def _calls(tmp: Path) -> list[str]:
    path = tmp / "calls"
    return (
        [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if path.exists() else []
    )


def _effects(tmp: Path) -> list[str]:
    path = tmp / "effects"
    return path.read_text().splitlines() if path.exists() else []


def test_s10_two_workers_racing_one_session_never_interleave(tmp_path: Path) -> None:
    _run("turn", tmp_path, text="zero")
    slow = subprocess.Popen(
        _args("slow", tmp_path, "-", "one"),
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():  # the first worker holds the lease now
            assert slow.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.02)
        code, second = _run("turn", tmp_path, text="two")
        assert code == 0
        assert "in use by another writer" in second["busy"]
    finally:
        (tmp_path / "go").touch()
        out, err = slow.communicate(timeout=120)
    assert slow.returncode == 0, err
    first = json.loads(out.strip().splitlines()[-1])
    assert first["output"] == "done one"
    _, shown = _run("show", tmp_path)
    users = [text for kind, text in shown["history"] if kind == "user"]
    assert users == ["zero", "one"]  # the refused turn left nothing behind
    assert shown["statuses"] == ["complete", "complete"]


def test_sigkill_mid_turn_without_a_journal_leaves_the_last_complete_turn(
    tmp_path: Path,
) -> None:
    _run("turn", tmp_path, text="first")
    code, _ = _run("kill", tmp_path, text="second")
    assert code == -signal.SIGKILL
    _, shown = _run("show", tmp_path)
    assert [text for kind, text in shown["history"] if kind == "user"] == ["first"]
    assert shown["statuses"] == ["complete"]
    assert shown["pending"] is False
    code, after = _run("turn", tmp_path, text="third")
    assert after["output"] == "done third"


def test_s40_sigkill_mid_turn_with_a_journal_resumes_without_repeating_a_model_call(
    tmp_path: Path,
) -> None:
    journal = str(tmp_path / "journal.db")
    _run("turn", tmp_path, journal, text="first")
    code, _ = _run("kill", tmp_path, journal, text="second")
    assert code == -signal.SIGKILL
    assert _calls(tmp_path) == ["first first", "first second", "second first"]
    _, shown = _run("show", tmp_path, journal)  # opening resumes the pending turn
    assert shown["pending"] is False
    assert shown["statuses"] == ["complete", "complete"]
    assert shown["history"][-1] == ["assistant", "done second"]
    # The resumed turn made only the model call the crash had not made, and ran no tool again.
    assert _calls(tmp_path) == ["first first", "first second", "second first", "second second"]
    assert _effects(tmp_path) == ["first", "second"]
    _, again = _run("turn", tmp_path, journal, text="third")
    assert again["output"] == "done third"
    assert [t for k, t in again["history"] if k == "user"] == ["first", "second", "third"]


@pytest.mark.parametrize("mode", ["race", "race-open"])
def test_workers_opening_one_new_session_at_once_all_succeed(tmp_path: Path, mode: str) -> None:
    """The loser of the create resumes what the winner created (``race-open``: the file is
    open in every worker first); ``race``: the first opens of a fresh file race its switch to
    write-ahead logging too."""
    for trial in range(3):
        work = tmp_path / str(trial)
        work.mkdir()
        workers = [
            subprocess.Popen(
                _args(mode, work, "-"),
                env=_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(5)
        ]
        time.sleep(1.0)  # let them import robota and wait at the rendezvous
        (work / "go").touch()
        for worker in workers:
            out, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err
            report = json.loads(out.strip().splitlines()[-1])
            assert report == {"history": [], "statuses": [], "pending": False}


def test_s22_hooks_of_a_turn_resumed_after_sigkill_carry_the_session_id(tmp_path: Path) -> None:
    journal = str(tmp_path / "journal.db")
    log = tmp_path / "hooks.jsonl"
    code, _ = _run("kill", tmp_path, journal, text="first")
    assert code == -signal.SIGKILL
    done = subprocess.run(
        _args("show", tmp_path, journal),  # opening resumes the pending turn: Stop fires
        check=True,
        env={**_env(), "HOOK_LOG": str(log)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1])["statuses"] == ["complete"]
    fired = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["hook_event_name"], e.get("session_id")) for e in fired] == [("Stop", "chat")]


def test_s35_a_turn_resumed_after_sigkill_keeps_its_execution_without_a_prompt(
    tmp_path: Path,
) -> None:
    """S35: continuing an interrupted execution keeps the prompt it used — here none, though
    the agent that resumes it has one; the next new turn carries the live prompt."""
    journal = str(tmp_path / "journal.db")

    def run(mode: str, prompt: str, text: str = "") -> Any:
        done = subprocess.run(
            _args(mode, tmp_path, journal, text),
            check=False,
            env={**_env(), "SYSTEM_PROMPT": prompt},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode in (0, -signal.SIGKILL), done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None

    assert run("kill", "", "first") is None  # killed mid-turn; the execution had no prompt
    shown = run("show", "a prompt written since")  # opening resumes it
    assert shown["statuses"] == ["complete"]
    assert shown["history"][-1] == ["assistant", "done first"]
    assert _calls(tmp_path) == ["first first", "first second"]
    after = run("turn", "a prompt written since", "second")
    assert after["output"] == "done second"
