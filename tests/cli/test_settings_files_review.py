"""A settings file that is not a plain, small file is an error, never a hang (issue 30).

A repository can check in `.robota/settings.json` as a symlink: to `/dev/zero` (an endless read),
to a FIFO or a terminal (a read that never returns). The loader refuses anything but a regular
file of reasonable size, before reading it.
"""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from cli._support import robota
from providers.replay import ReplayServer
from robota.cli._errors import CliError
from robota.cli._settings import MAX_SETTINGS_BYTES, load_settings


def _project(workspace: pathlib.Path) -> pathlib.Path:
    path = workspace / ".robota" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _refused(workspace: pathlib.Path, home: pathlib.Path, words: str) -> None:
    with pytest.raises(CliError) as caught:
        load_settings(workspace, home=str(home))
    assert caught.value.exit_code == 2
    assert caught.value.message.startswith(f"{_project(workspace)}: ")
    assert words in caught.value.message


def test_a_fifo_settings_file_is_refused_without_blocking(tmp_path: pathlib.Path) -> None:
    os.mkfifo(_project(tmp_path))  # no writer: an open or read would wait forever
    _refused(tmp_path, tmp_path / "home", "not a regular file")


def test_a_link_to_an_endless_device_is_refused(tmp_path: pathlib.Path) -> None:
    _project(tmp_path).symlink_to("/dev/zero")
    _refused(tmp_path, tmp_path / "home", "not a regular file")


def test_a_huge_settings_file_is_refused(tmp_path: pathlib.Path) -> None:
    _project(tmp_path).write_text("[" + " " * MAX_SETTINGS_BYTES + "]")
    _refused(tmp_path, tmp_path / "home", f"larger than {MAX_SETTINGS_BYTES} bytes")


def test_a_link_to_a_regular_file_is_read(tmp_path: pathlib.Path) -> None:
    real = tmp_path / "shared.json"
    real.write_text('{"permissions": {"deny": ["Bash(rm:*)"]}}')
    _project(tmp_path).symlink_to(real)
    assert load_settings(tmp_path, home=str(tmp_path / "home")).deny == ("Bash(rm:*)",)


# --- what the settings files grant is shown before the first prompt --------------------------


def test_chat_names_the_settings_files_a_mode_they_set_and_their_hook_commands(
    workdir: pathlib.Path, env: dict[str, str], tmp_path: pathlib.Path
) -> None:
    # A cloned repository's checked-in file can turn asking off and run commands: the person
    # must see it before typing anything (Claude Code asks whether to trust the folder).
    mark = tmp_path / "ran"
    hook = {"hooks": [{"type": "command", "command": f"touch {mark}"}]}
    project = _project(workdir)
    project.write_text(
        json.dumps(
            {
                "permissions": {"defaultMode": "bypassPermissions"},
                "hooks": {"UserPromptSubmit": [hook]},
            }
        )
    )
    with ReplayServer([]) as server:
        shown = robota(
            ["chat", "--model", "openai-compatible:m", "--base-url", server.base_url + "/v1"],
            env=env,
            cwd=workdir,
            input="/exit\n",
        )
    assert shown.returncode == 0, shown.stderr
    assert f"settings: {project}" in shown.stderr
    assert f"permission mode bypass (from {project})" in shown.stderr
    assert "tool calls run without asking" in shown.stderr
    assert f"hook UserPromptSubmit runs: touch {mark}" in shown.stderr
    assert not mark.exists()  # nothing ran before a prompt was typed
    with ReplayServer([]) as server:
        flagged = robota(
            [
                "chat",
                "--model",
                "openai-compatible:m",
                "--base-url",
                server.base_url + "/v1",
                "--permission-mode",
                "default",
            ],
            env=env,
            cwd=workdir,
            input="/exit\n",
        )
    assert "permission mode bypass" not in flagged.stderr  # the flag wins, and says nothing
