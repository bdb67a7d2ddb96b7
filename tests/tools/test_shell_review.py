"""Regressions from an adversarial review of ``Bash`` (issue 30, S09, S12)."""

from __future__ import annotations

import os
import pathlib

import pytest

import robota
import robota.tools
from robota.tools._shell import _Report

from .conftest import Call

# Writes a megabyte to every pipe the leader ($PPID) holds open for writing other than the
# command's own output: the leader's exit-status report among them. Any process in the group
# can open another's descriptors through /proc, so the report is as open to the command as its
# output is.
_FLOOD_REPORT = (
    "mine=$(readlink /proc/$$/fd/1); for f in /proc/$PPID/fd/*; do "
    'case "$(stat -c %A "$f")" in l-wx*) ;; *) continue ;; esac; '
    'target=$(readlink "$f"); [ "$target" = "$mine" ] && continue; '
    'case "$target" in pipe:*) head -c 1000000 /dev/zero > "$f" ;; esac; done; '
)


def test_a_command_flooding_the_exit_status_report_still_gets_its_own_status(
    workspace: pathlib.Path, call: Call
) -> None:
    tool = robota.tools.shell(workspace=workspace)
    result = call(tool, command=_FLOOD_REPORT + "echo done")
    assert result.content == "done\n"
    assert result.is_error is False
    result = call(tool, command=_FLOOD_REPORT + "echo done; exit 3")
    assert result.content == "done\n\nexit code 3"


def test_the_exit_status_report_is_held_in_bounded_memory() -> None:
    # The report is read to its end whatever a command writes into it; only its last bytes
    # are kept (a flood of gigabytes must not be held by the agent).
    report = _Report()
    for _ in range(1000):
        report.add(b"\0" * 65536)
    report.add(b"\n7\n")
    assert report.size() <= 64
    assert report.status() == 7


@pytest.mark.parametrize("command", ["-x", "-il", "--login", "+O"])
def test_s12_a_command_starting_with_a_dash_is_run_as_a_command_not_as_bash_options(
    workspace: pathlib.Path, call: Call, command: str
) -> None:
    # The judged string is the command bash runs; it is never read as bash's own options
    # (`-il` would otherwise ask for an interactive login shell).
    tool = robota.tools.shell(workspace=workspace)
    result = call(tool, command=command)
    assert result.is_error
    assert f"{command}: command not found" in result.content
    assert "option" not in result.content


def test_only_real_locale_categories_pass_not_any_lc_name(
    workspace: pathlib.Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setenv("LC_MESSAGES", "C")
    monkeypatch.setenv("LC_SERVICE_TOKEN", "tok-secret")
    monkeypatch.setenv("LC_", "x")
    for name in ("BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "LD_PRELOAD", "PYTHONPATH"):
        monkeypatch.setenv(name, "/tmp/planted")
    monkeypatch.setenv("BASH_FUNC_ls%%", "() { echo hijacked; }")
    tool = robota.tools.shell(workspace=workspace)
    result = call(tool, command="env; ls -d .")
    names = {line.split("=", 1)[0] for line in result.content.splitlines() if "=" in line}
    assert {"LC_ALL", "LC_MESSAGES"} <= names
    assert "secret" not in result.content
    assert "planted" not in result.content
    assert "hijacked" not in result.content
    assert not {n for n in names if n.startswith("LC_")} - {"LC_ALL", "LC_MESSAGES"}


@pytest.mark.parametrize("extra", ["", ".", "bin", "./bin"])
def test_s21_a_relative_path_entry_never_runs_a_program_planted_in_the_workspace(
    workspace: pathlib.Path, call: Call, monkeypatch: pytest.MonkeyPatch, extra: str
) -> None:
    # An empty or relative PATH entry is the working directory, the workspace: `ls` (read-only,
    # so run without asking) would run the repository's own `ls`. Only absolute entries pass.
    for directory in (workspace, workspace / "bin"):
        directory.mkdir(exist_ok=True)
        planted = directory / "ls"
        planted.write_text("#!/bin/sh\necho planted\n")
        planted.chmod(0o755)

    monkeypatch.setenv("PATH", f"{extra}:{os.environ['PATH']}:{extra}")
    tool = robota.tools.shell(workspace=workspace)
    result = call(tool, command='ls -d bin; echo "$PATH"')
    assert "planted" not in result.content
    assert result.content.startswith("bin\n")
    path = result.content.splitlines()[1]
    assert all(entry.startswith("/") for entry in path.split(":"))


async def test_s23_a_call_whose_run_is_already_aborted_starts_nothing(
    workspace: pathlib.Path,
) -> None:
    controller = robota.AbortController()
    controller.abort()
    ctx = robota.ToolContext(signal=controller.signal, call_id="c", tool_name="Bash")
    tool = robota.tools.shell(workspace=workspace)
    with pytest.raises(robota.AbortError):
        await tool.execute({"command": "echo ran > marker"}, ctx)
    assert not (workspace / "marker").exists()
