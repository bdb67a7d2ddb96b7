"""The `robota` command and its offline demo."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from robota.cli import main
from robota.cli._demo import run_demo


def test_demo_exercises_the_foundation_honestly() -> None:
    out = io.StringIO()
    assert run_demo(out) == 0
    text = out.getvalue()
    assert "The agent loop is not built yet" in text
    assert "committed: 'Four is' state=interrupted" in text
    assert "is an abort? False" in text
    assert "1 warning through stdlib logging" in text
    assert "cost on a model with no registered price: None" in text


def test_cli_demo_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "robota", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "foundation demo" in result.stdout
    assert result.stderr == ""


def test_cli_without_a_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_cli_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("robota ")
