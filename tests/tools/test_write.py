"""``Write``: creating and overwriting real files inside the workspace only (issue 30)."""

from __future__ import annotations

import os
import pathlib
import stat
from collections.abc import Callable

import pytest

import robota
import robota.tools
from robota.tools._files import check_path, open_parent, read_existing, replace_file
from robota.tools._workspace import Refused, Workspace

Call = Callable[..., robota.ToolResult]


@pytest.fixture
def write(workspace: pathlib.Path) -> robota.Tool:
    return robota.tools.write_file(workspace=workspace)


def test_write_creates_the_file_and_its_missing_parents(
    workspace: pathlib.Path, write: robota.Tool, call: Call
) -> None:
    result = call(write, path="pkg/sub/mod.py", content="x = 1\ny = 2\n")
    assert not result.is_error, result.content
    assert result.content == "Created pkg/sub/mod.py (2 lines, 12 bytes)"
    assert (workspace / "pkg" / "sub" / "mod.py").read_text() == "x = 1\ny = 2\n"
    assert result.view == robota.tools.FileChange(
        "pkg/sub/mod.py",
        "--- /dev/null\n+++ b/pkg/sub/mod.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n",
        created=True,
    )


def test_overwriting_keeps_the_mode_and_leaves_no_temporary_file(
    workspace: pathlib.Path, write: robota.Tool, call: Call
) -> None:
    target = workspace / "run.sh"
    target.write_text("echo old\n")
    target.chmod(0o700)
    result = call(write, path="run.sh", content="echo new\n")
    assert result.content == "Wrote run.sh (1 lines, 9 bytes)"
    assert target.read_text() == "echo new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert [p.name for p in workspace.iterdir()] == ["run.sh"]
    assert isinstance(result.view, robota.tools.FileChange)
    assert not result.view.created
    assert "-echo old\n+echo new\n" in result.view.diff


def test_s05_a_link_as_the_last_component_is_refused_and_its_target_untouched(
    workspace: pathlib.Path, write: robota.Tool, call: Call
) -> None:
    (workspace / "real.txt").write_text("keep\n")
    (workspace / "link.txt").symlink_to("real.txt")
    (workspace / "dangling").symlink_to(workspace.parent / "outside" / "new.txt")
    inside = call(write, path="link.txt", content="x")
    dangling = call(write, path="dangling", content="x")
    assert inside.is_error
    assert "symbolic link" in inside.content
    assert dangling.is_error
    assert (workspace / "real.txt").read_text() == "keep\n"
    assert not (workspace.parent / "outside" / "new.txt").exists()


def test_s05_a_link_as_a_directory_component_is_refused_and_nothing_is_made_outside(
    workspace: pathlib.Path, write: robota.Tool, call: Call
) -> None:
    (workspace / "out").symlink_to(workspace.parent / "outside")
    (workspace / "real").mkdir()
    (workspace / "alias").symlink_to("real")
    out = call(write, path="out/deep/new.txt", content="x")
    alias = call(write, path="alias/new.txt", content="x")
    assert out.is_error
    assert alias.is_error
    assert "symbolic link" in alias.content
    assert sorted(p.name for p in (workspace.parent / "outside").iterdir()) == ["secret.txt"]
    assert list((workspace / "real").iterdir()) == []


@pytest.mark.parametrize("path", ["../outside/new.txt", "{outside}/new.txt", "~/new.txt"])
def test_s05_an_escape_is_refused(
    workspace: pathlib.Path, write: robota.Tool, call: Call, path: str
) -> None:
    result = call(write, path=path.format(outside=workspace.parent / "outside"), content="x")
    assert result.is_error
    assert sorted(p.name for p in (workspace.parent / "outside").iterdir()) == ["secret.txt"]
    assert list(workspace.iterdir()) == []


def test_s05_a_fifo_and_a_directory_are_refused(
    workspace: pathlib.Path, write: robota.Tool, call: Call
) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "dir").mkdir()
    pipe = call(write, path="pipe", content="x")
    directory = call(write, path="dir", content="x")
    assert pipe.is_error
    assert "FIFO" in pipe.content
    assert directory.is_error
    assert "directory" in directory.content
    assert stat.S_ISFIFO((workspace / "pipe").lstat().st_mode)


def test_a_file_in_the_way_of_a_parent_directory_is_refused(
    workspace: pathlib.Path, write: robota.Tool, call: Call
) -> None:
    (workspace / "file").write_text("f\n")
    result = call(write, path="file/new.txt", content="x")
    assert result.is_error
    assert (workspace / "file").read_text() == "f\n"


def test_s21_write_declares_modify_and_its_path_argument(write: robota.Tool) -> None:
    assert write.name == "Write"
    assert write.risk == "modify"
    assert write.permission_argument == robota.PermissionArgument(
        "path", "path", also_judged_as=("Edit",)
    )


def test_builtin_lists_the_tools_in_order(workspace: pathlib.Path) -> None:
    names = [tool.name for tool in robota.tools.builtin(workspace=workspace)]
    assert names == [
        "Read",
        "LS",
        "Glob",
        "Grep",
        "Edit",
        "Write",
        "Bash",
        "WebFetch",
        "AskUserQuestion",
    ]


def test_content_over_the_size_cap_is_refused_before_any_directory_is_made(
    workspace: pathlib.Path, write: robota.Tool, call: Call
) -> None:
    result = call(write, path="deep/big.txt", content="x" * (20 * 1024 * 1024 + 1))
    assert result.is_error
    assert "at most 20971520" in result.content
    assert list(workspace.iterdir()) == []


def test_s05_a_directory_swapped_for_a_link_after_the_check_is_not_followed(
    workspace: pathlib.Path,
) -> None:
    # The check and the open are apart here, as a race would have them: the kernel refuses.
    (workspace / "sub").mkdir()
    ws = Workspace(workspace)
    relative, shown = check_path(ws, "sub/new.txt")
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(workspace.parent / "outside")
    with pytest.raises(Refused, match="symbolic link; not followed"):
        open_parent(ws, relative, shown, create_parents=True)
    assert sorted(p.name for p in (workspace.parent / "outside").iterdir()) == ["secret.txt"]


def test_s05_a_file_swapped_for_a_link_after_the_check_is_replaced_not_written_through(
    workspace: pathlib.Path,
) -> None:
    (workspace / "a.txt").write_text("a\n")
    ws = Workspace(workspace)
    relative, shown = check_path(ws, "a.txt")
    target = open_parent(ws, relative, shown, create_parents=False)
    try:
        (workspace / "a.txt").unlink()
        (workspace / "a.txt").symlink_to(workspace.parent / "outside" / "secret.txt")
        with pytest.raises(Refused, match="symbolic link"):
            read_existing(target)
        replace_file(target, b"mine\n", None)  # the rename replaces the link itself
    finally:
        os.close(target.dir_fd)
    assert (workspace.parent / "outside" / "secret.txt").read_text() == "TOP SECRET\n"
    assert not (workspace / "a.txt").is_symlink()
    assert (workspace / "a.txt").read_text() == "mine\n"
