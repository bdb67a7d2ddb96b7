"""A file name cannot forge a line of an answer (issue 30): control characters are shown escaped.

``Grep`` answers ``path:line:text`` and ``Glob``/``LS`` one path a line, so a name holding a
newline (a directory ``a\\nsrc`` holding ``x.py:1:fake``, which Linux allows) would print a line that looks like a match
or a path. Such a name is shown with each control character as ``\\xNN``, the way a byte that is
not UTF-8 is shown, and every tool accepts that spelling back.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

import robota.tools

FORGER = "a\nsrc/x.py:1:fake"


@pytest.fixture
def project(workspace: pathlib.Path) -> pathlib.Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "x.py").write_text("real\n")
    (workspace / "a\nsrc").mkdir()  # S05 aside, a name may hold any byte but `/` and NUL
    (workspace / FORGER).write_text("needle\n")
    (workspace / "tab\there").write_text("needle\n")
    (workspace / "line\u2028break").write_text("needle\n")
    return workspace


def test_grep_shows_a_newline_in_a_name_escaped(project: pathlib.Path, call: Any) -> None:
    result = call(robota.tools.grep(workspace=project), pattern="needle", path=".")
    lines = result.content.splitlines()
    assert "a\\x0asrc/x.py:1:fake:1:needle" in lines
    assert "tab\\x09here:1:needle" in lines
    assert "line\\xe2\\x80\\xa8break:1:needle" in lines
    assert not any(line.startswith("src/x.py") for line in lines)  # nothing forged
    assert len(lines) == 3


def test_glob_and_ls_show_one_line_per_entry(project: pathlib.Path, call: Any) -> None:
    glob = call(robota.tools.glob(workspace=project), pattern="**/*", path=".").content
    listing = call(robota.tools.list_dir(workspace=project), path=".").content
    assert sorted(glob.splitlines()) == sorted(
        ["a\\x0asrc/x.py:1:fake", "tab\\x09here", "line\\xe2\\x80\\xa8break", "src/x.py"]
    )
    assert "a\\x0asrc/" in listing.splitlines()
    assert len(listing.splitlines()) == 4  # two files and two directories


@pytest.mark.parametrize(
    ("shown", "tool"),
    [
        ("a\\x0asrc/x.py:1:fake", "read"),
        ("tab\\x09here", "read"),
        ("line\\xe2\\x80\\xa8break", "read"),
        ("a\\x0asrc/x.py:1:fake", "grep"),
    ],
)
def test_the_escaped_spelling_reads_the_file_back(
    project: pathlib.Path, call: Any, shown: str, tool: str
) -> None:
    if tool == "read":
        result = call(robota.tools.read_file(workspace=project), path=shown)
        assert result.content == "     1\tneedle"
    else:
        result = call(robota.tools.grep(workspace=project), pattern="needle", path=shown)
        assert result.content == "a\\x0asrc/x.py:1:fake:1:needle"


def test_an_escaped_control_byte_never_names_a_separator(project: pathlib.Path, call: Any) -> None:
    # `\x2f` is `/` and `\x2e` is `.`: display never writes them, so they are not read back.
    result = call(robota.tools.read_file(workspace=project), path="src\\x2fx.py")
    assert result.is_error
    inner = call(robota.tools.list_dir(workspace=project), path="a\\x0asrc")
    assert inner.content == "x.py:1:fake (7 bytes)"


def test_a_literal_name_with_a_backslash_keeps_its_meaning(
    project: pathlib.Path, call: Any
) -> None:
    (project / "lit\\x0aname").write_text("literal\n")
    (project / "lit\nname").write_text("newline\n")
    result = call(robota.tools.read_file(workspace=project), path="lit\\x0aname")
    assert result.content == "     1\tliteral"  # the name as written exists: it wins


def test_builtin_sets_the_grep_time_limit(project: pathlib.Path) -> None:
    tools = {tool.name: tool for tool in robota.tools.builtin(workspace=project)}
    assert getattr(tools["Grep"], "time_limit", None) == 30.0
    quick = {
        tool.name: tool for tool in robota.tools.builtin(workspace=project, grep_time_limit=2.5)
    }
    assert getattr(quick["Grep"], "time_limit", None) == 2.5
    with pytest.raises(ValueError, match="time_limit"):
        robota.tools.builtin(workspace=project, grep_time_limit=0)
