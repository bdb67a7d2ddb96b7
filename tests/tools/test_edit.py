"""``Edit``: exact-string replacements and unified patches on real files (issue 30)."""

from __future__ import annotations

import os
import pathlib
import stat
from collections.abc import Callable

import pytest

import robota
import robota.tools
from robota.tools._patch import apply_patch

Call = Callable[..., robota.ToolResult]


@pytest.fixture
def edit(workspace: pathlib.Path) -> robota.Tool:
    return robota.tools.edit_file(workspace=workspace)


def test_a_unique_string_is_replaced_and_the_change_shown_numbered(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.py").write_text("def f():\n    return 1\n\nprint(f())\n")
    result = call(edit, path="a.py", old_string="return 1", new_string="return 2")
    assert not result.is_error
    assert (workspace / "a.py").read_text() == "def f():\n    return 2\n\nprint(f())\n"
    assert result.content.splitlines()[0] == "Edited a.py: 1 replacement"
    assert "     2\t    return 2" in result.content
    assert isinstance(result.view, robota.tools.FileChange)
    assert result.view.path == "a.py"
    assert not result.view.created
    assert "-    return 1\n+    return 2\n" in result.view.diff
    assert result.view.diff.startswith("--- a/a.py\n+++ b/a.py\n@@ -1,4 +1,4 @@\n")


def test_an_ambiguous_string_is_refused_and_nothing_changes(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_text("x = 1\nx = 1\n")
    result = call(edit, path="a.txt", old_string="x = 1", new_string="x = 2")
    assert result.is_error
    assert "occurs 2 times" in result.content
    assert "replace_all" in result.content
    assert (workspace / "a.txt").read_text() == "x = 1\nx = 1\n"


def test_replace_all_replaces_every_occurrence(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    before = "x = 1\n" + "".join(f"line {n}\n" for n in range(20)) + "x = 1\nend\n"
    (workspace / "a.txt").write_text(before)
    result = call(edit, path="a.txt", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert result.content.startswith("Edited a.txt: 2 replacements")
    after = before.replace("x = 1", "x = 2")
    assert (workspace / "a.txt").read_text() == after
    # The view's diff (two hunks, far apart) is the change: applied back, it gives the file.
    assert isinstance(result.view, robota.tools.FileChange)
    assert result.view.diff.count("@@ -") == 2
    assert apply_patch(before.encode(), result.view.diff)[0] == after.encode()


def test_a_missing_string_is_refused_with_the_reason(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_text("hello\n")
    result = call(edit, path="a.txt", old_string="bye", new_string="hi")
    assert result.is_error
    assert "was not found" in result.content
    assert (workspace / "a.txt").read_text() == "hello\n"


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ({"old_string": "a", "new_string": "a"}, "are the same"),
        ({"old_string": "", "new_string": "a"}, "is empty"),
        ({"old_string": "a"}, "both"),
        ({}, "either"),
        ({"old_string": "a", "new_string": "b", "patch": "@@ -1 +1 @@\n-a\n+b\n"}, "either"),
    ],
)
def test_bad_argument_combinations_are_refused(
    workspace: pathlib.Path, edit: robota.Tool, call: Call, args: dict[str, str], reason: str
) -> None:
    (workspace / "a.txt").write_text("a\n")
    result = call(edit, path="a.txt", **args)
    assert result.is_error
    assert reason in result.content
    assert (workspace / "a.txt").read_text() == "a\n"


def test_a_missing_file_is_refused_pointing_at_write(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    result = call(edit, path="nope.txt", old_string="a", new_string="b")
    assert result.is_error
    assert "does not exist; use Write" in result.content
    assert not (workspace / "nope.txt").exists()


def test_a_patch_with_two_hunks_applies(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    lines = [f"line {n}\n" for n in range(1, 21)]
    (workspace / "a.txt").write_text("".join(lines))
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n"
        "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE THREE\n line 4\n"
        "@@ -15,2 +15,3 @@\n line 15\n+inserted\n line 16\n"
    )
    result = call(edit, path="a.txt", patch=patch)
    assert not result.is_error, result.content
    assert result.content.startswith("Edited a.txt: 2 hunks applied")
    expected = [*lines[:2], "LINE THREE\n", *lines[3:15], "inserted\n", *lines[15:]]
    assert (workspace / "a.txt").read_text() == "".join(expected)


def test_a_hunk_at_a_wrong_line_applies_where_it_matches_exactly_once(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_text("a\nb\nc\nd\n")
    result = call(edit, path="a.txt", patch="@@ -1,2 +1,2 @@\n c\n-d\n+D\n")
    assert not result.is_error, result.content
    assert (workspace / "a.txt").read_text() == "a\nb\nc\nD\n"


def test_a_hunk_that_does_not_match_is_refused_by_name_and_nothing_changes(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_text("a\nb\nc\nd\n")
    patch = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -3,2 +3,2 @@\n c\n-x\n+X\n"
    result = call(edit, path="a.txt", patch=patch)
    assert result.is_error
    assert "hunk 2 (@@ -3,2 +3,2 @@) does not apply" in result.content
    assert "line 4 of the file is 'd'" in result.content
    assert (workspace / "a.txt").read_text() == "a\nb\nc\nd\n"


def test_a_patch_that_is_not_a_diff_is_refused(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_text("a\n")
    result = call(edit, path="a.txt", patch="replace a with b")
    assert result.is_error
    assert "no hunk header" in result.content


def test_a_crlf_file_keeps_crlf_for_a_string_and_for_a_patch(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = call(edit, path="w.txt", old_string="one\ntwo", new_string="one\n2\nextra")
    assert not result.is_error, result.content
    assert (workspace / "w.txt").read_bytes() == b"one\r\n2\r\nextra\r\nthree\r\n"
    result = call(edit, path="w.txt", patch="@@ -3,2 +3,3 @@\n extra\n three\n+four\n")
    assert not result.is_error, result.content
    assert (workspace / "w.txt").read_bytes() == b"one\r\n2\r\nextra\r\nthree\r\nfour\r\n"
    assert isinstance(result.view, robota.tools.FileChange)
    assert "\r" not in result.view.diff


def test_bytes_that_are_not_utf8_are_kept_outside_the_edit(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "latin.txt").write_bytes(b"caf\xe9\nname = 1\n\xff\xfe end\n")
    result = call(edit, path="latin.txt", old_string="name = 1", new_string="name = 2")
    assert not result.is_error, result.content
    assert (workspace / "latin.txt").read_bytes() == b"caf\xe9\nname = 2\n\xff\xfe end\n"
    result = call(edit, path="latin.txt", patch="@@ -2,1 +2,1 @@\n-name = 2\n+name = 3\n")
    assert not result.is_error, result.content
    assert (workspace / "latin.txt").read_bytes() == b"caf\xe9\nname = 3\n\xff\xfe end\n"


def test_a_file_without_a_final_newline_keeps_it_that_way(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_bytes(b"a\nb")
    result = call(
        edit, path="a.txt", patch="@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n"
    )
    assert not result.is_error, result.content
    assert (workspace / "a.txt").read_bytes() == b"A\nb"


def test_the_file_mode_is_kept_and_no_temporary_file_is_left(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    script = workspace / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o751)
    call(edit, path="run.sh", old_string="hi", new_string="bye")
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert sorted(p.name for p in workspace.iterdir()) == ["run.sh"]


def test_a_binary_file_is_refused(workspace: pathlib.Path, edit: robota.Tool, call: Call) -> None:
    (workspace / "b.bin").write_bytes(b"abc\x00def")
    result = call(edit, path="b.bin", old_string="abc", new_string="xyz")
    assert result.is_error
    assert "binary" in result.content
    assert (workspace / "b.bin").read_bytes() == b"abc\x00def"


def test_a_file_over_the_size_cap_is_refused(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    big = workspace / "big.txt"
    with big.open("wb") as stream:
        stream.truncate(20 * 1024 * 1024 + 1)
    result = call(edit, path="big.txt", old_string="a", new_string="b")
    assert result.is_error
    assert "files over 20971520 bytes" in result.content


def test_s05_a_link_as_the_last_component_is_refused_even_inside(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "real.txt").write_text("value = 1\n")
    (workspace / "link.txt").symlink_to("real.txt")
    result = call(edit, path="link.txt", old_string="1", new_string="2")
    assert result.is_error
    assert "symbolic link" in result.content
    assert (workspace / "real.txt").read_text() == "value = 1\n"
    assert (workspace / "link.txt").is_symlink()


def test_s05_a_link_to_a_file_outside_is_refused_and_the_file_untouched(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "leak").symlink_to(workspace.parent / "outside" / "secret.txt")
    result = call(edit, path="leak", old_string="TOP", new_string="NO")
    assert result.is_error
    assert "outside the workspace" in result.content
    assert (workspace.parent / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


def test_s05_a_link_as_a_directory_component_is_refused(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "a.txt").write_text("a\n")
    (workspace / "alias").symlink_to("real")
    (workspace / "out").symlink_to(workspace.parent / "outside")
    inside = call(edit, path="alias/a.txt", old_string="a", new_string="b")
    outside = call(edit, path="out/secret.txt", old_string="TOP", new_string="NO")
    assert inside.is_error
    assert "symbolic link" in inside.content
    assert outside.is_error
    assert (workspace / "real" / "a.txt").read_text() == "a\n"
    assert (workspace.parent / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "{outside}/secret.txt", "~/x.txt"])
def test_s05_an_escape_by_dots_an_absolute_path_or_home_is_refused(
    workspace: pathlib.Path, edit: robota.Tool, call: Call, path: str
) -> None:
    path = path.format(outside=workspace.parent / "outside")
    result = call(edit, path=path, old_string="TOP", new_string="NO")
    assert result.is_error
    assert (workspace.parent / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


def test_s05_a_fifo_is_refused_without_hanging(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    os.mkfifo(workspace / "pipe")
    result = call(edit, path="pipe", old_string="a", new_string="b")
    assert result.is_error
    assert "FIFO" in result.content


def test_a_directory_is_refused(workspace: pathlib.Path, edit: robota.Tool, call: Call) -> None:
    (workspace / "d").mkdir()
    result = call(edit, path="d", old_string="a", new_string="b")
    assert result.is_error
    assert "directory" in result.content
    root = call(edit, path=".", old_string="a", new_string="b")
    assert root.is_error


def test_s21_edit_declares_modify_and_its_path_argument(edit: robota.Tool) -> None:
    assert edit.name == "Edit"
    assert edit.risk == "modify"
    assert edit.permission_argument == robota.PermissionArgument(
        "path", "path", also_judged_as=("Read",)
    )


def test_a_patch_as_models_write_it_applies(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    # An empty context line written as an empty line, a blank line between hunks, CRLF rows,
    # a pure insertion, a deletion, and a form feed inside a line.
    (workspace / "a.py").write_text("import os\n\ndef f():\n    pass\n\x0c\nx = 1\ny = 2\n")
    patch = (
        "--- a/a.py\r\n+++ b/a.py\r\n"
        "@@ -1,3 +1,4 @@\r\n import os\r\n+import sys\r\n\r\n def f():\r\n"
        "\n"
        "@@ -5,3 +6,2 @@\n \x0c\n-x = 1\n y = 2\n"
    )
    result = call(edit, path="a.py", patch=patch)
    assert not result.is_error, result.content
    expected = "import os\nimport sys\n\ndef f():\n    pass\n\x0c\ny = 2\n"
    assert (workspace / "a.py").read_text() == expected


def test_a_patch_for_two_files_is_refused(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_text("a\n")
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/b.txt\n+++ b/b.txt\n"
    result = call(edit, path="a.txt", patch=patch)
    assert result.is_error
    assert "more than one file" in result.content
    assert (workspace / "a.txt").read_text() == "a\n"


def test_a_file_with_a_name_at_the_length_limit_is_edited(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    name = "n" * 250 + ".txt"
    (workspace / name).write_text("a\n")
    result = call(edit, path=name, old_string="a", new_string="b")
    assert not result.is_error, result.content
    assert (workspace / name).read_text() == "b\n"
