"""``list_dir``, ``glob`` and ``grep`` (issue 30): patterns, context, .gitignore, caps."""

from __future__ import annotations

import pathlib
from collections.abc import Callable

import pytest

import robota
import robota.tools
from robota.tools._listing import MAX_ENTRIES

Call = Callable[..., robota.ToolResult]


@pytest.fixture
def project(workspace: pathlib.Path) -> pathlib.Path:
    files = {
        "README.md": "# Demo\nTODO: write docs\n",
        "src/app.py": "import os\n\ndef main():\n    # TODO: more\n    return os.getcwd()\n",
        "src/util/helpers.py": "def helper():\n    return 1\n",
        "build/out.py": "TODO generated\n",
        "logs/today.log": "TODO in a log\n",
        "src/cache.tmp": "TODO temporary\n",
        "src/keep.tmp": "TODO kept\n",
        ".git/config": "TODO git internals\n",
    }
    for name, text in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (workspace / ".gitignore").write_text("build/\n*.log\n*.tmp\n!keep.tmp\n")
    return workspace


def test_list_dir_lists_one_directory_sorted_with_kinds(project: pathlib.Path, call: Call) -> None:
    listing = call(robota.tools.list_dir(workspace=project), path=".").content.splitlines()
    assert listing == [
        ".git/",
        ".gitignore (29 bytes)",
        "README.md (24 bytes)",
        "build/",
        "logs/",
        "src/",
    ]
    assert (
        "is not a directory"
        in call(robota.tools.list_dir(workspace=project), path="README.md").content
    )


def test_glob_matches_across_directories_and_respects_gitignore(
    project: pathlib.Path, call: Call
) -> None:
    glob = robota.tools.glob(workspace=project)
    assert call(glob, pattern="**/*.py", path=".").content.splitlines() == [
        "src/app.py",
        "src/util/helpers.py",
    ]
    assert call(glob, pattern="*.py", path="src").content == "src/app.py"
    assert call(glob, pattern="**/*.tmp", path=".").content == "src/keep.tmp"  # `!` re-includes
    assert call(glob, pattern="**/config", path=".").content.startswith("No files match")
    refused = call(glob, pattern="../**", path=".")
    assert refused.is_error
    assert "must not contain `..`" in refused.content


def test_nested_gitignore_and_one_above_the_search_directory_apply(
    project: pathlib.Path, call: Call
) -> None:
    (project / "src" / ".gitignore").write_text("helpers.py\n")
    glob = robota.tools.glob(workspace=project)
    assert call(glob, pattern="**/*.py", path=".").content == "src/app.py"
    # Searching below the root, the root's rules still apply (`*.tmp` but `!keep.tmp`).
    assert call(glob, pattern="*.tmp", path="src").content == "src/keep.tmp"
    (project / ".gitignore").write_text("src/util/\n")
    assert call(glob, pattern="*", path="src/util").content.startswith("No files match")


def test_grep_answers_like_grep_rn_and_respects_gitignore(
    project: pathlib.Path, call: Call
) -> None:
    grep = robota.tools.grep(workspace=project)
    assert call(grep, pattern="TODO", path=".").content.splitlines() == [
        "README.md:2:TODO: write docs",
        "src/app.py:4:    # TODO: more",
        "src/keep.tmp:1:TODO kept",
    ]
    assert call(grep, pattern="todo", path="src", case_insensitive=True, glob="*.py").content == (
        "src/app.py:4:    # TODO: more"
    )
    assert call(grep, pattern=r"^def \w+", path="src/util/helpers.py").content == (
        "src/util/helpers.py:1:def helper():"
    )


def test_grep_context_lines_and_group_separators(workspace: pathlib.Path, call: Call) -> None:
    (workspace / "f.txt").write_text(
        "".join(f"{'hit' if i in (3, 4, 10) else 'line'} {i}\n" for i in range(1, 13))
    )
    out = call(robota.tools.grep(workspace=workspace), pattern="hit", path=".", context=1).content
    assert out.splitlines() == [
        "f.txt-2-line 2",
        "f.txt:3:hit 3",
        "f.txt:4:hit 4",
        "f.txt-5-line 5",
        "--",
        "f.txt-9-line 9",
        "f.txt:10:hit 10",
        "f.txt-11-line 11",
    ]


def test_grep_caps_results_and_says_so(workspace: pathlib.Path, call: Call) -> None:
    (workspace / "many.txt").write_text("match\n" * 50)
    out = call(robota.tools.grep(workspace=workspace), pattern="match", path=".", max_results=5)
    lines = out.content.splitlines()
    assert lines[:5] == [f"many.txt:{i}:match" for i in range(1, 6)]
    assert lines[5].startswith("[result cap reached: 5 matching lines shown")
    assert len(lines) == 6


def test_grep_skips_binary_files_and_refuses_a_bad_regex(
    workspace: pathlib.Path, call: Call
) -> None:
    (workspace / "blob.bin").write_bytes(b"needle\x00\x01\x02")
    (workspace / "text.txt").write_text("needle\n")
    grep = robota.tools.grep(workspace=workspace)
    out = call(grep, pattern="needle", path=".").content.splitlines()
    assert out == ["text.txt:1:needle", "[1 binary files that match were skipped]"]
    bad = call(grep, pattern="(unclosed", path=".")
    assert bad.is_error
    assert "not a valid regular expression" in bad.content


def test_glob_caps_its_listing(workspace: pathlib.Path, call: Call) -> None:
    for i in range(MAX_ENTRIES + 5):
        (workspace / f"f{i:05}.txt").write_text("")
    lines = call(
        robota.tools.glob(workspace=workspace), pattern="*.txt", path="."
    ).content.splitlines()
    assert len(lines) == MAX_ENTRIES + 1
    assert (
        lines[-1]
        == f"[5 more matches not shown; {MAX_ENTRIES + 5} in all. Narrow the pattern or the path]"
    )
