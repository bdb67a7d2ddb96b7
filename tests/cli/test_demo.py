"""The `robota` command and its offline demo."""

from __future__ import annotations

import asyncio
import io
import json
import pathlib
import subprocess
import sys

import pytest

from robota.cli import main
from robota.cli._demo import cassette_path, record_demo_cassette, run_demo


def test_demo_runs_a_real_loop_and_says_where_the_replies_come_from() -> None:
    out = io.StringIO()
    assert run_demo(out, chunk_delay=0.0) == 0
    text = out.getvalue()
    assert "scripted for this demo, not produced by a real model" in text
    assert "tool capital_of(country='France') -> Paris" in text
    assert "tool word_count(text='the quick brown fox') -> 4" in text
    assert "tool add(a=12.5, b=30) -> 42.5" in text
    assert "assistant> The capital of France is Paris" in text
    assert "status: complete; 2 model calls; 3 tool bodies ran" in text
    assert "usage: " in text


def test_shipped_demo_cassette_is_current(tmp_path: pathlib.Path) -> None:
    # Re-recording from the demo's script, tools and prompt gives the shipped file: a change to
    # any of them without re-recording fails here (re-record with record_demo_cassette).
    fresh = tmp_path / "demo.json"
    asyncio.run(record_demo_cassette(fresh))
    shipped = json.loads(cassette_path().read_text())
    assert json.loads(fresh.read_text())["interactions"] == shipped["interactions"]


def test_cli_demo_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "robota", "demo", "--no-delay"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "offline demo" in result.stdout
    assert result.stderr == ""


def test_cli_without_a_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_cli_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("robota ")
