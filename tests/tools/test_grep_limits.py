"""``Grep``'s regular expression is time-limited and abortable (issue 30, S23, S09).

Python's ``re`` holds the GIL and cannot be interrupted, so a pattern that backtracks badly would
freeze the agent's process. Each case runs the tool in a separate Python process under a hard
outer timeout: a search that freezes its process fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import robota.tools

_OUTER_TIMEOUT = 30.0
_SRC = str(pathlib.Path(__file__).resolve().parents[2] / "src")


def _run(script: str, workspace: pathlib.Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": _SRC}
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script), str(workspace)],
            capture_output=True,
            text=True,
            timeout=_OUTER_TIMEOUT,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the search froze its process for over {_OUTER_TIMEOUT:g} s")
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


_LIMITED = """
    import asyncio, json, sys, time
    import robota, robota.tools

    tool = robota.tools.grep(workspace=sys.argv[1], time_limit=1.0)
    args = tool.validate_arguments({"pattern": PATTERN, "path": "."})
    ctx = robota.ToolContext(signal=robota.AbortController().signal, call_id="c", tool_name="Grep")
    start = time.monotonic()
    result = asyncio.run(tool.execute(args, ctx))
    elapsed = time.monotonic() - start
    print(json.dumps({"error": result.is_error, "content": result.content, "elapsed": elapsed}))
"""


@pytest.mark.parametrize(
    ("pattern", "content"),
    [
        # Nested repetition: exponential backtracking on a 31-byte file.
        (r"(a+)+$", "a" * 30 + "!\n"),
        # Quadratic: `a.*b` over a 2 MB single line without a `b`.
        (r"a.*b", "a" * (2 * 1024 * 1024) + "\n"),
    ],
)
def test_a_catastrophic_pattern_is_stopped_at_the_time_limit(
    workspace: pathlib.Path, pattern: str, content: str
) -> None:
    # Issue 30: the limit applies to the whole search, a single small file included.
    (workspace / "slow.txt").write_text(content)
    (workspace / "other.txt").write_text("nothing here\n")
    result = _run(f"PATTERN = {pattern!r}\n" + textwrap.dedent(_LIMITED), workspace)
    assert result["error"] is True
    assert "took too long" in str(result["content"])
    assert "simplify" in str(result["content"]).lower()
    assert float(str(result["elapsed"])) < 10.0


_ABORTED = """
    import asyncio, json, os, sys, time
    import robota, robota.tools

    def children():
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                found.append(int(entry))
        return found

    async def main():
        tool = robota.tools.grep(workspace=sys.argv[1], time_limit=600.0)
        args = tool.validate_arguments({"pattern": r"(a+)+$", "path": "."})
        controller = robota.AbortController()
        ctx = robota.ToolContext(signal=controller.signal, call_id="c", tool_name="Grep")
        task = asyncio.ensure_future(tool.execute(args, ctx))
        await asyncio.sleep(1.0)
        groups = children()  # each search child leads its own process group (S09)
        start = time.monotonic()
        controller.abort("stop")
        try:
            await task
            outcome = "returned"
        except BaseException as exc:
            outcome = type(exc).__name__
        elapsed = time.monotonic() - start
        alive = []
        for pgid in groups:
            try:
                os.killpg(pgid, 0)
                alive.append(pgid)
            except ProcessLookupError:
                pass
        return {"outcome": outcome, "elapsed": elapsed, "groups": groups, "alive": alive,
                "left": children()}

    print(json.dumps(asyncio.run(main())))
"""


def test_an_abort_during_a_slow_search_returns_promptly_and_kills_the_child(
    workspace: pathlib.Path,
) -> None:
    # S23: the run's abort kills the search's process group at once; nothing is left behind.
    (workspace / "slow.txt").write_text("a" * 34 + "!\n")
    result = _run(_ABORTED, workspace)
    assert result["outcome"] == "AbortError"
    assert float(str(result["elapsed"])) < 3.0
    assert result["groups"], "the search ran in no child process"
    assert result["alive"] == []
    assert result["left"] == []


def test_an_ordinary_search_in_a_child_answers_as_before(workspace: pathlib.Path) -> None:
    (workspace / "a.txt").write_text("one\nneedle two\nthree\n")
    (workspace / "b.txt").write_text("needle\n")
    script = _LIMITED.replace("time_limit=1.0", "time_limit=30.0")
    result = _run("PATTERN = 'needle'\n" + textwrap.dedent(script), workspace)
    assert result["error"] is False
    assert result["content"] == "a.txt:2:needle two\nb.txt:1:needle"


@pytest.mark.parametrize("limit", [0.0, -1.0, float("nan")])
def test_the_time_limit_must_be_positive(workspace: pathlib.Path, limit: float) -> None:
    with pytest.raises(ValueError, match="time_limit"):
        robota.tools.grep(workspace=workspace, time_limit=limit)
