"""``read_file`` (issue 30): ranges, caps, binary and non-UTF-8 files, a huge file in one pass."""

from __future__ import annotations

import pathlib
import tracemalloc
from collections.abc import Callable

import pytest

import robota
import robota.tools
from robota.tools._read import MAX_OUTPUT_CHARS

Call = Callable[..., robota.ToolResult]


@pytest.fixture
def read(workspace: pathlib.Path) -> robota.Tool:
    return robota.tools.read_file(workspace=workspace)


def test_the_tool_is_inspect_class_and_scoped_to_its_path_argument(read: robota.Tool) -> None:
    assert read.name == "Read"
    assert read.risk == "inspect"  # S21
    assert read.permission_argument == robota.PermissionArgument("path", "path")  # S12
    assert read.parameters["required"] == ["path"]


def test_numbered_lines_and_a_range(workspace: pathlib.Path, read: robota.Tool, call: Call) -> None:
    (workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert call(read, path="a.txt").content.splitlines()[0] == "     1\tline 1"
    part = call(read, path="a.txt", offset=4, limit=2).content
    assert part.splitlines() == [
        "     4\tline 4",
        "     5\tline 5",
        "[more lines follow; continue with offset=6]",
    ]
    past = call(read, path="a.txt", offset=50)
    assert "has 10 lines; offset 50 is past the end" in past.content


def test_an_empty_file_says_so(workspace: pathlib.Path, read: robota.Tool, call: Call) -> None:
    (workspace / "empty").write_bytes(b"")
    assert call(read, path="empty").content == "'empty' is empty (0 bytes)."


def test_a_binary_file_is_refused_with_the_reason(
    workspace: pathlib.Path, read: robota.Tool, call: Call
) -> None:
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100))
    result = call(read, path="img.png")
    assert result.is_error
    assert "binary file" in result.content
    assert "NUL" in result.content


def test_bytes_that_are_not_utf8_are_replaced_and_noted(
    workspace: pathlib.Path, read: robota.Tool, call: Call
) -> None:
    (workspace / "latin1.txt").write_bytes("café\n".encode("latin-1") + b"plain\n")
    result = call(read, path="latin1.txt")
    assert not result.is_error
    assert result.content.splitlines() == [
        "     1\tcaf\ufffd",
        "     2\tplain",
        "[some bytes are not UTF-8; they are shown as U+FFFD]",
    ]


def test_a_directory_and_a_missing_file_are_refused(
    workspace: pathlib.Path, read: robota.Tool, call: Call
) -> None:
    (workspace / "d").mkdir()
    assert "is a directory" in call(read, path="d").content
    assert "does not exist" in call(read, path="nope.txt").content


def test_long_lines_are_cut_and_the_answer_is_capped_with_where_to_continue(
    workspace: pathlib.Path, read: robota.Tool, call: Call
) -> None:
    (workspace / "wide.txt").write_text(("x" * 5000 + "\n") * 200)
    result = call(read, path="wide.txt").content
    assert len(result) < MAX_OUTPUT_CHARS + 500
    assert "[line cut: 5000 characters]" in result.splitlines()[0]
    last = result.splitlines()[-1]
    assert last.startswith(f"[output capped at {MAX_OUTPUT_CHARS} characters")
    offset = int(last.rsplit("offset=", 1)[1].rstrip("]"))
    resumed = call(read, path="wide.txt", offset=offset, limit=1).content
    assert resumed.startswith(f"{offset:>6}\t")


def test_a_10_mb_file_is_read_in_one_bounded_pass(
    workspace: pathlib.Path, read: robota.Tool, call: Call
) -> None:
    big = workspace / "big.log"
    line = b"0123456789" * 9 + b"abcdefgh\n"  # 99 bytes
    with big.open("wb") as handle:
        for i in range(106_000):
            handle.write(b"%06d" % i + line[6:])
    assert big.stat().st_size > 10 * 1024 * 1024
    tracemalloc.start()
    try:
        tail = call(read, path="big.log", offset=105_999, limit=5).content
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tail.splitlines() == [
        f"105999\t105998{line[6:-1].decode()}",
        f"106000\t105999{line[6:-1].decode()}",
    ]
    # Issue 30: never the whole file in memory (not even once): a bounded buffer, not 10 MB.
    assert peak < 2 * 1024 * 1024, peak


def test_a_file_used_as_a_directory_says_so_not_outside(
    workspace: pathlib.Path, read: robota.Tool, call: Call
) -> None:
    (workspace / "a.txt").write_text("x\n")
    result = call(read, path="a.txt/more")
    assert result.is_error
    assert "cannot be resolved" in result.content
    assert "outside" not in result.content
