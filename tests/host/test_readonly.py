"""S21 read-only command classification (host), on the real filesystem."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from robota.host import is_path_inside, is_read_only_command, permission_context


@pytest.fixture
def workspace(tmp_path: pathlib.Path) -> pathlib.Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src" / "a.py").write_text("print(1)\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "escape").symlink_to(outside)
    return root


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "ls src",
        "cat src/a.py | grep print | wc -l",
        "git status && git log --oneline -5",
        "find . -name '*.py'",
        "head -n 5 src/a.py 2>/dev/null",
        "echo hello",
        "rg TODO src",
    ],
)
def test_s21_read_only_lines_inside_the_workspace(workspace: pathlib.Path, command: str) -> None:
    assert is_read_only_command(command, workspace=str(workspace))


@pytest.mark.parametrize(
    "command",
    [
        "ls /etc",
        "cat ../secret",
        "cat escape/file",  # a symlink inside the workspace pointing outside
        "cat ~/.ssh/id_rsa",
        "cat < /etc/passwd",
        "ls > listing.txt",
        "rm src/a.py",
        "find . -delete",
        "find . -exec cat {} \\;",
        "sort -o out.txt src/a.py",
        "git push",
        "git -c core.pager=evil log",
        "echo $(whoami)",
        "cat $FILE",
        "sudo ls",
        "ls; python -c 'import os'",
        "echo 'unterminated",
    ],
)
def test_s21_anything_else_is_not_read_only(workspace: pathlib.Path, command: str) -> None:
    assert not is_read_only_command(command, workspace=str(workspace))


def test_s05_containment_follows_symlinks(workspace: pathlib.Path) -> None:
    assert is_path_inside(workspace, "src/a.py")
    assert is_path_inside(workspace, "src/not-yet-created.txt")
    assert not is_path_inside(workspace, "escape/x")
    assert not is_path_inside(workspace, "../outside")
    with pytest.raises(ValueError, match="absolute"):
        is_path_inside("relative", "x")
    with pytest.raises(ValueError, match="existing directory"):
        is_path_inside(workspace / "src" / "a.py", "x")


def test_permission_context_is_wired_to_this_machine(workspace: pathlib.Path) -> None:
    context = permission_context(workspace)
    assert context.home
    assert context.read_only_command is not None
    assert context.read_only_command("ls src")
    with pytest.raises(ValueError, match="workspace"):
        permission_context("relative/path")
