"""Regressions from an adversarial review of ``Edit``, ``Write`` and undo (issue 30)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import pytest

import robota
import robota.tools
from robota.tools import _patch
from robota.tools._files import MAX_FILE_BYTES

Call = Callable[..., robota.ToolResult]


@pytest.fixture
def edit(workspace: pathlib.Path) -> robota.Tool:
    return robota.tools.edit_file(workspace=workspace)


@pytest.fixture
def write(workspace: pathlib.Path) -> robota.Tool:
    return robota.tools.write_file(workspace=workspace)


def test_replace_all_that_would_grow_the_file_past_the_cap_is_refused_before_it_is_built(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    # Each of a million occurrences grows by 99 bytes: about 100 MB, past the 20 MB cap. The
    # result is refused before it is built (a model's arguments must not make the agent hold
    # gigabytes), and the file is left as it was.
    before = "a" * 1_000_000
    (workspace / "a.txt").write_text(before)
    result = call(edit, path="a.txt", old_string="a", new_string="b" * 100, replace_all=True)
    assert result.is_error
    assert str(MAX_FILE_BYTES) in result.content
    assert (workspace / "a.txt").read_text() == before


def test_a_patch_whose_result_is_over_the_cap_is_refused(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    before = "x" * (MAX_FILE_BYTES - 10) + "\n"
    (workspace / "big.txt").write_text(before)
    patch = "@@ -1 +1,2 @@\n " + "x" * (MAX_FILE_BYTES - 10) + "\n+" + "y" * 20 + "\n"
    result = call(edit, path="big.txt", patch=patch)
    assert result.is_error
    assert str(MAX_FILE_BYTES) in result.content
    assert (workspace / "big.txt").stat().st_size == len(before)


def test_an_old_string_that_matches_at_two_overlapping_places_is_ambiguous(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    # "\n\n" occurs at offsets 0 and 1 of "\n\n\n": which blank line is meant is not known.
    (workspace / "a.txt").write_text("\n\n\n")
    result = call(edit, path="a.txt", old_string="\n\n", new_string="X")
    assert result.is_error
    assert "occurs 2 times" in result.content
    assert (workspace / "a.txt").read_text() == "\n\n\n"


def test_replace_all_with_overlapping_places_replaces_them_left_to_right(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_text("aaa\n")
    result = call(edit, path="a.txt", old_string="aa", new_string="b", replace_all=True)
    assert not result.is_error
    assert (workspace / "a.txt").read_text() == "ba\n"


@pytest.mark.parametrize("text", ["\ud800", "ok \udfff then"])
def test_a_lone_surrogate_in_content_is_an_error_the_model_reads(
    workspace: pathlib.Path, write: robota.Tool, edit: robota.Tool, call: Call, text: str
) -> None:
    # JSON can carry "\ud800"; it is no character. The model reads why, nothing is written.
    result = call(write, path="new.txt", content=text)
    assert result.is_error
    assert "surrogate" in result.content
    assert not (workspace / "new.txt").exists()
    (workspace / "a.txt").write_text("hello\n")
    for args in (
        {"old_string": "hello", "new_string": text},
        {"old_string": text, "new_string": "x"},
        {"patch": f"@@ -1 +1 @@\n-hello\n+{text}\n"},
    ):
        result = call(edit, path="a.txt", **args)
        assert result.is_error, args
        assert "surrogate" in result.content
    assert (workspace / "a.txt").read_text() == "hello\n"


def test_an_escaped_byte_surrogate_still_writes_that_byte(
    workspace: pathlib.Path, write: robota.Tool, call: Call
) -> None:
    # The one surrogate form that is meaningful: a byte that is not UTF-8, as Read shows it.
    result = call(write, path="b.txt", content="\udcff\n")
    assert not result.is_error
    assert (workspace / "b.txt").read_bytes() == b"\xff\n"


def test_undo_of_a_change_to_a_name_starting_with_a_tilde(
    workspace: pathlib.Path, write: robota.Tool, edit: robota.Tool, call: Call
) -> None:
    assert not call(write, path="./~notes.txt", content="one\n").is_error
    assert not call(edit, path="./~notes.txt", old_string="one", new_string="two").is_error
    undone = robota.tools.undo(workspace=workspace)
    assert undone is not None
    assert (workspace / "~notes.txt").read_text() == "one\n"
    assert robota.tools.undo(workspace=workspace) is not None
    assert not (workspace / "~notes.txt").exists()


def test_a_path_with_a_trailing_slash_names_a_directory_and_is_not_written_as_a_file(
    workspace: pathlib.Path, write: robota.Tool, edit: robota.Tool, call: Call
) -> None:
    result = call(write, path="notes.txt/", content="x\n")
    assert result.is_error
    assert "directory" in result.content
    assert not (workspace / "notes.txt").exists()
    (workspace / "a.txt").write_text("one\n")
    result = call(edit, path="a.txt/", old_string="one", new_string="two")
    assert result.is_error
    assert (workspace / "a.txt").read_text() == "one\n"


def test_a_crlf_file_edited_with_a_new_string_already_in_crlf_gets_no_doubled_cr(
    workspace: pathlib.Path, edit: robota.Tool, call: Call
) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = call(edit, path="w.txt", old_string="one\ntwo", new_string="uno\r\ndos")
    assert not result.is_error
    assert (workspace / "w.txt").read_bytes() == b"uno\r\ndos\r\nthree\r\n"


@pytest.mark.parametrize(
    ("before", "patch", "after"),
    [
        # The last line has no newline and a line is added after it, as models write it.
        (b"a\nb", "@@ -1,2 +1,3 @@\n a\n b\n+c\n", b"a\nb\nc\n"),
        (b"a\nb", "@@ -2,0 +3 @@\n+c\n", b"a\nb\nc\n"),
        (b"a\r\nb", "@@ -1,2 +1,3 @@\n a\n b\n+c\n", b"a\r\nb\r\nc\r\n"),
        # An added line marked as having no newline, followed by another line.
        (b"a\n", "@@ -1 +1,3 @@\n a\n+b\n\\ No newline at end of file\n+c\n", b"a\nb\nc\n"),
        # Still kept without a newline when it stays last.
        (b"a\nb", "@@ -1,2 +1,2 @@\n-a\n+A\n b\n", b"A\nb"),
    ],
)
def test_a_patch_never_joins_a_line_without_a_newline_to_the_next(
    workspace: pathlib.Path, edit: robota.Tool, call: Call, before: bytes, patch: str, after: bytes
) -> None:
    (workspace / "f.txt").write_bytes(before)
    result = call(edit, path="f.txt", patch=patch)
    assert not result.is_error, result.content
    assert (workspace / "f.txt").read_bytes() == after


class _Counting(list[bytes]):
    """A file's lines that count how many lines a search looks at."""

    looked = 0

    def __getitem__(self, index: Any) -> Any:
        found = super().__getitem__(index)
        self.looked += len(found) if isinstance(index, slice) else 1
        return found


def test_locating_a_hunk_looks_at_each_line_a_bounded_number_of_times() -> None:
    # 100,000 blank lines and a hunk of 1,000 blank lines then one that is nowhere: a search
    # that compares the whole hunk at every line looks at 10^8 lines (hours for a 20 MB file,
    # holding the workspace's lock, with no way to abort the thread). Linear in file + hunk.
    texts = _Counting([b""] * 100_000)
    hunk = _patch._Hunk("@@ -5,1001 +5,1 @@", 5, [b""] * 1000 + [b"missing"])
    assert _patch._locate(texts, hunk, 0) is None
    assert texts.looked <= 4 * (100_000 + 1001)
    # Unique and ambiguous places are still told apart.
    lines = [b"a", b"b", b"c", b"a", b"b", b"d"]
    assert (
        _patch._locate(_Counting(lines), _patch._Hunk("@@ -9 +9 @@", 9, [b"a", b"b", b"d"]), 0) == 3
    )
    assert _patch._locate(_Counting(lines), _patch._Hunk("@@ -9 +9 @@", 9, [b"a", b"b"]), 0) is None
    assert _patch._locate(_Counting(lines), _patch._Hunk("@@ -9 +9 @@", 9, [b"a", b"b"]), 1) == 3


def test_the_view_of_a_large_dense_change_is_a_plain_hunk_that_applies_back(
    workspace: pathlib.Path, edit: robota.Tool, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    # replace_all of a token on every other line of a 200,000-line file: difflib's matcher is
    # quadratic on such input (minutes, after the file was written, in a thread the run cannot
    # abort). Past a bound the view is one hunk of removed then added lines, still exact.
    real = _patch.difflib.unified_diff

    def bounded(a: list[str], b: list[str], *args: Any, **kwargs: Any) -> Any:
        assert max(len(a), len(b)) <= _patch.DIFF_MAX_LINES
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(_patch.difflib, "unified_diff", bounded)
    head = "".join(f"head {n}\n" for n in range(10))
    before = head + "".join("x\n" if n % 2 else f"{n}\n" for n in range(200_000)) + "end"
    (workspace / "f.txt").write_text(before)
    result = call(edit, path="f.txt", old_string="x", new_string="yy", replace_all=True)
    assert not result.is_error
    after = before.replace("x", "yy")
    assert (workspace / "f.txt").read_text() == after
    diff = result.view.diff
    assert diff.startswith("--- a/f.txt\n+++ b/f.txt\n@@ -9,")
    assert _patch.apply_patch(before.encode(), diff)[0] == after.encode()
    # A small change still gets difflib's minimal hunks.
    (workspace / "g.txt").write_text("a\nb\nc\n")
    result = call(edit, path="g.txt", old_string="b", new_string="B")
    assert result.view.diff == "--- a/g.txt\n+++ b/g.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"


def test_a_workspace_removed_under_the_tools_is_an_error_the_model_reads(
    tmp_path: pathlib.Path, call: Call
) -> None:
    # `rm -rf` of the workspace by an earlier command: the tools answer, they do not raise.
    root = tmp_path / "gone"
    root.mkdir()
    tools = {tool.name: tool for tool in robota.tools.builtin(workspace=root)}
    root.rmdir()
    for name, args in (
        ("Write", {"path": "a.txt", "content": "x"}),
        ("Edit", {"path": "a.txt", "old_string": "x", "new_string": "y"}),
        ("Read", {"path": "a.txt"}),
    ):
        result = call(tools[name], **args)
        assert result.is_error, name
        assert "workspace" in result.content, result.content
    assert not root.exists()
