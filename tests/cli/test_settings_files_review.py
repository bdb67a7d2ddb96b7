"""A settings file that is not a plain, small file is an error, never a hang (issue 30).

A repository can check in `.robota/settings.json` as a symlink: to `/dev/zero` (an endless read),
to a FIFO or a terminal (a read that never returns). The loader refuses anything but a regular
file of reasonable size, before reading it.
"""

from __future__ import annotations

import os
import pathlib

import pytest

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
