"""S05: every path the tools are given is judged by the host's containment, links followed."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable

import pytest

import robota
import robota.tools
from special_files import finishes, plant

Call = Callable[..., robota.ToolResult]


@pytest.fixture
def linked(workspace: pathlib.Path) -> pathlib.Path:
    """A workspace with links out of the root: to a file, to a directory, and through a chain."""
    outside = workspace.parent / "outside"
    (workspace / "inside.txt").write_text("hello\n")
    (workspace / "file-out").symlink_to(outside / "secret.txt")
    (workspace / "dir-out").symlink_to(outside)
    (workspace / "hop2").symlink_to(outside / "secret.txt")
    (workspace / "hop1").symlink_to("hop2")  # a chain: hop1 -> hop2 -> outside
    (workspace / "sub").mkdir()
    (workspace / "sub" / "up").symlink_to("../../outside")
    (workspace / "ok-link").symlink_to("inside.txt")  # a link that stays inside
    return workspace


@pytest.mark.parametrize(
    "path",
    [
        "file-out",
        "dir-out/secret.txt",
        "hop1",
        "sub/up/secret.txt",
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "ABSOLUTE",
        "/etc/passwd",
    ],
)
def test_s05_read_file_refuses_every_way_out_of_the_root(
    linked: pathlib.Path, call: Call, path: str
) -> None:
    if path == "ABSOLUTE":
        path = str(linked.parent / "outside" / "secret.txt")
    result = call(robota.tools.read_file(workspace=linked), path=path)
    assert result.is_error
    assert "outside the workspace" in result.content
    assert "TOP SECRET" not in result.content


def test_s05_a_link_that_stays_inside_and_an_absolute_path_inside_are_read(
    linked: pathlib.Path, call: Call
) -> None:
    read = robota.tools.read_file(workspace=linked)
    assert call(read, path="ok-link").content == "     1\thello"
    assert call(read, path=str(linked / "inside.txt")).content == "     1\thello"


@pytest.mark.parametrize("path", ["dir-out", "sub/up", "..", "/"])
def test_s05_list_dir_glob_and_grep_refuse_a_directory_outside(
    linked: pathlib.Path, call: Call, path: str
) -> None:
    for tool, args in (
        (robota.tools.list_dir(workspace=linked), {}),
        (robota.tools.glob(workspace=linked), {"pattern": "**/*"}),
        (robota.tools.grep(workspace=linked), {"pattern": "SECRET"}),
    ):
        result = call(tool, path=path, **args)
        assert result.is_error, (tool, result.content)
        assert "outside the workspace" in result.content


def test_s05_walks_never_follow_a_link_out(linked: pathlib.Path, call: Call) -> None:
    found = call(robota.tools.glob(workspace=linked), pattern="**/*", path=".").content
    assert found.splitlines() == ["inside.txt"]  # links are not walked into, nor listed as files
    grep = call(robota.tools.grep(workspace=linked), pattern="SECRET", path=".")
    assert "TOP SECRET" not in grep.content
    assert grep.content.startswith("No matches")


def test_s05_a_link_loop_is_refused_not_followed(workspace: pathlib.Path, call: Call) -> None:
    (workspace / "a").symlink_to("b")
    (workspace / "b").symlink_to("a")
    result = call(robota.tools.read_file(workspace=workspace), path="a")
    assert result.is_error


def test_list_dir_shows_links_as_links_without_their_targets(
    linked: pathlib.Path, call: Call
) -> None:
    listing = call(robota.tools.list_dir(workspace=linked), path=".").content
    assert "dir-out@" in listing.splitlines()
    assert "outside" not in listing


def test_a_fifo_is_refused_without_blocking(workspace: pathlib.Path, call: Call) -> None:
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    read = robota.tools.read_file(workspace=workspace)
    result = finishes(lambda: call(read, path="pipe"), fifos=(fifo,))
    assert result.is_error
    assert "FIFO" in result.content
    grep = robota.tools.grep(workspace=workspace)
    assert finishes(lambda: call(grep, pattern="x", path="."), fifos=(fifo,)).content.startswith(
        "No matches"
    )
    single = finishes(lambda: call(grep, pattern="x", path="pipe"), fifos=(fifo,))
    assert single.is_error
    assert "FIFO" in single.content
    listing = call(robota.tools.list_dir(workspace=workspace), path=".")
    assert listing.content == "pipe (FIFO)"


def test_a_device_is_refused(workspace: pathlib.Path, call: Call) -> None:
    # /dev/null is outside the root; reach it through an absolute path: refused by containment.
    result = call(robota.tools.read_file(workspace=workspace), path="/dev/zero")
    assert result.is_error


def test_non_utf8_names_are_shown_escaped_and_read_back(
    workspace: pathlib.Path, call: Call
) -> None:
    raw = os.fsencode(str(workspace)) + b"/caf\xe9.txt"
    with open(raw, "wb") as handle:
        handle.write(b"bonjour\n")
    found = call(robota.tools.glob(workspace=workspace), pattern="*.txt", path=".").content
    assert found == "caf\\xe9.txt"
    read = call(robota.tools.read_file(workspace=workspace), path=found)
    assert read.content == "     1\tbonjour"
    hits = call(robota.tools.grep(workspace=workspace), pattern="bonj", path=".").content
    assert hits == "caf\\xe9.txt:1:bonjour"
    assert call(robota.tools.list_dir(workspace=workspace), path=".").content == (
        "caf\\xe9.txt (8 bytes)"
    )


def test_a_workspace_that_does_not_exist_is_a_value_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match="existing directory"):
        robota.tools.builtin(workspace=tmp_path / "missing")


def test_a_socket_is_refused_and_named(workspace: pathlib.Path, call: Call) -> None:
    plant(workspace / "sock", "socket")
    result = call(robota.tools.read_file(workspace=workspace), path="sock")
    assert result.is_error
    assert "is a socket, not a regular file" in result.content


async def test_s23_an_aborted_run_gets_no_result_from_a_walk(workspace: pathlib.Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    controller = robota.AbortController()
    controller.abort()
    tool = robota.tools.grep(workspace=workspace)
    ctx = robota.ToolContext(signal=controller.signal, call_id="c", tool_name=tool.name)
    with pytest.raises(robota.AbortError):
        await tool.execute({"pattern": "x", "path": "."}, ctx)
