"""Built-in ``Grep`` over a 100,000-file tree (issue 30), as a ratio to ``grep -rn``.

The tree is generated once under ``$ROBOTA_BENCH_CACHE`` (default ``~/.cache/robota-bench``),
outside the repository, and reused: 1,000 directories of 100 small text files (about 1.5 KB
each, Python-looking lines), 40 of which hold the needle. Both searches look for the same
regular expression over the same tree, warm (the page cache holds the tree after the first
pass), interleaved sample by sample; the figure is each one's median wall-clock time and the
ratio of ours to ``grep -rnE``. Ours runs as a model's call would: the tool's ``execute`` with
its containment check, walk (no links followed, ``.gitignore`` read where present) and result
formatting. Goal (issue 30): at most 2x. A second figure runs it under a permission gate with
deny rules that match nothing in the tree, so every file and directory the walk meets is judged
(S12: ``ToolContext.path_screen``) — the cost of that check.

Run alone: ``python benchmarks/tools_grep.py [--samples N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import pathlib
import shutil
import statistics
import subprocess
import time
from typing import Final

import robota
import robota.host
import robota.tools

DIRECTORIES: Final = 1000
FILES_PER_DIRECTORY: Final = 100
NEEDLES: Final = 40
PATTERN: Final = r"needle_[0-9]+\("
GOAL: Final = 2.0
_MARK: Final = "complete-v1"
# Rules of the usual shapes (a subtree, a name anywhere, an extension), matching nothing here.
DENY: Final = ("Read(secrets/**)", "Grep(**/.env)", "Read(**/*.pem)")


def cache_tree() -> pathlib.Path:
    """The generated tree, built on first use (a marker file says it is complete)."""
    base = pathlib.Path(
        os.environ.get("ROBOTA_BENCH_CACHE", pathlib.Path.home() / ".cache" / "robota-bench")
    )
    tree = base / "grep-100k"
    if (tree / _MARK).exists():
        return tree
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    body = "".join(
        f"def function_{i}(value):\n    return value * {i} + len(str(value))  # line {i}\n\n"
        for i in range(20)
    )
    needle_every = DIRECTORIES * FILES_PER_DIRECTORY // NEEDLES
    number = 0
    for d in range(DIRECTORIES):
        directory = tree / f"pkg{d // 100:02}" / f"mod{d:04}"
        directory.mkdir(parents=True)
        for f in range(FILES_PER_DIRECTORY):
            text = body
            if number % needle_every == 0:
                text += f"value = needle_{number}(1)\n"
            (directory / f"file{f:03}.py").write_text(text)
            number += 1
    (tree / _MARK).write_text("")
    return tree


def _ours(
    tool: robota.Tool, tree: pathlib.Path, gate: robota.PermissionGate | None = None
) -> tuple[float, str]:
    ctx = robota.ToolContext(
        signal=robota.AbortController().signal,
        call_id="b",
        tool_name="Grep",
        screen=functools.partial(gate.path_screen, tool) if gate is not None else None,
    )
    args = tool.validate_arguments({"pattern": PATTERN, "path": ".", "max_results": 1000})
    start = time.perf_counter()
    result = asyncio.run(tool.execute(args, ctx))
    elapsed = time.perf_counter() - start
    assert isinstance(result, robota.ToolResult)
    return elapsed, result.content


def _grep(tree: pathlib.Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - the system grep, fixed arguments
        ["grep", "-rnE", PATTERN, "."],  # noqa: S607 - grep from PATH, as a user would run it
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - start, done.stdout


def main(samples: int = 5) -> bool:
    """Print the figures; ``True`` when the ratio meets the goal."""
    print("\nBuilt-in Grep over a 100,000-file tree, against grep -rnE (issue 30)")
    if shutil.which("grep") is None:
        print("skipped: no grep on PATH")
        return True
    tree = cache_tree()
    tool = robota.tools.grep(workspace=tree)
    ours_out = _ours(tool, tree)[1]  # warm-up (and the page cache)
    grep_out = _grep(tree)[1]
    ours_hits = sorted(line for line in ours_out.splitlines() if not line.startswith("["))
    grep_hits = sorted(line.removeprefix("./") for line in grep_out.splitlines())
    if ours_hits != grep_hits:
        print(f"FAIL: different answers ({len(ours_hits)} lines against {len(grep_hits)})")
        return False
    gate = robota.PermissionGate(
        robota.PermissionPolicy(deny=list(DENY)), robota.host.permission_context(tree)
    )
    if _ours(tool, tree, gate)[1] != ours_out:
        print("FAIL: the gated search answered differently")
        return False
    ours: list[float] = []
    gated: list[float] = []
    theirs: list[float] = []
    for _ in range(samples):
        ours.append(_ours(tool, tree)[0])
        gated.append(_ours(tool, tree, gate)[0])
        theirs.append(_grep(tree)[0])
    mine, reference = statistics.median(ours), statistics.median(theirs)
    screened = statistics.median(gated)
    ratio = mine / reference
    print(f"  files searched:   {DIRECTORIES * FILES_PER_DIRECTORY:,}, matches {len(grep_hits)}")
    print(f"  robota Grep:      {mine * 1000:8.0f} ms (best {min(ours) * 1000:.0f} ms)")
    print(
        f"  robota Grep, gate:{screened * 1000:8.0f} ms (best {min(gated) * 1000:.0f} ms; "
        f"{len(DENY)} deny rules on each path)"
    )
    print(f"  grep -rnE:        {reference * 1000:8.0f} ms (best {min(theirs) * 1000:.0f} ms)")
    verdict = "PASS" if ratio <= GOAL else "OVER GOAL"
    print(f"  ratio:            {ratio:8.2f}x (goal <= {GOAL:.0f}x) {verdict}")
    print(f"  ratio, gate:      {screened / reference:8.2f}x")
    return ratio <= GOAL


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5)
    main(parser.parse_args().samples)
