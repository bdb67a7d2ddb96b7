"""Built-in ``Edit`` and ``Read`` on a 10 MB file (issue 30): time, and how many bytes are read.

``Edit`` replaces one unique line in the middle of a generated 10 MB text file, as a model's
call would run (the tool's ``execute``: containment check, no-follow open, one read, the
pre-image kept for undo in process-scoped scratch, a temporary file flushed to disk and renamed
over the file, a diff for the view). Its median time is reported as a ratio to a plain Python
read and write of the same file (``open().read()``, ``replace``, ``open("wb").write()``: no
fsync, no pre-image, no diff), so the ratio is what safety and undo cost.

Reads are counted with the kernel's ``rchar`` for this process (``/proc/self/io``): the bytes
every ``read`` returned. The goal (issue 30) is that ``Edit`` and ``Read`` (reading to the last
line) each read the file once: at most 1.05 times its size. Without ``/proc`` (not Linux) the
counts are skipped. The edit is undone after each sample (not timed), so every sample edits
the same file.

Run alone: ``python benchmarks/tools_edit.py [--samples N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import statistics
import tempfile
import time
from typing import Any, Final

import robota
import robota.tools

SIZE: Final = 10 * 1024 * 1024
READ_GOAL: Final = 1.05
_OLD: Final = "value = needle(1)  # the line the benchmark edits\n"
_NEW: Final = "value = needle(2)  # the line the benchmark edits\n"


def _rchar() -> int | None:
    try:
        with open("/proc/self/io", encoding="ascii") as stream:
            for line in stream:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _make(directory: pathlib.Path) -> pathlib.Path:
    line = "def function(value):  # an ordinary line of a large generated module\n"
    half = line * (SIZE // len(line) // 2)
    target = directory / "big.py"
    target.write_text(half + _OLD + half)
    return target


def _execute(tool: robota.Tool, args: dict[str, Any]) -> tuple[float, int | None, str]:
    ctx = robota.ToolContext(signal=robota.AbortController().signal, call_id="b", tool_name="x")
    checked = tool.validate_arguments(args)
    before = _rchar()
    start = time.perf_counter()
    result = asyncio.run(tool.execute(checked, ctx))
    elapsed = time.perf_counter() - start
    after = _rchar()
    assert isinstance(result, robota.ToolResult)
    assert not result.is_error, result.content
    read = None if before is None or after is None else after - before
    return elapsed, read, result.content


def _plain(target: pathlib.Path) -> float:
    start = time.perf_counter()
    with open(target, "rb") as stream:
        data = stream.read()
    with open(target, "wb") as stream:
        stream.write(data.replace(_OLD.encode(), _NEW.encode()))
    elapsed = time.perf_counter() - start
    with open(target, "wb") as stream:  # back, untimed
        stream.write(data)
    return elapsed


def main(samples: int = 5) -> bool:
    """Print the figures; ``True`` when each tool read the file once."""
    print("\nBuilt-in Edit and Read on a 10 MB file, against a plain read + write (issue 30)")
    with tempfile.TemporaryDirectory(prefix="robota-bench-edit-") as directory:
        target = _make(pathlib.Path(directory))
        size = target.stat().st_size
        edit = robota.tools.edit_file(workspace=directory)
        read = robota.tools.read_file(workspace=directory)
        edit_args = {"path": "big.py", "old_string": _OLD, "new_string": _NEW}
        lines = target.read_bytes().count(b"\n")
        read_args = {"path": "big.py", "offset": lines, "limit": 1}
        _execute(edit, edit_args)  # warm-up: the scratch directory is made on first use
        robota.tools.undo(workspace=directory)
        _plain(target)
        ours: list[float] = []
        theirs: list[float] = []
        edit_reads: list[int | None] = []
        for _ in range(samples):
            elapsed, count, _ = _execute(edit, edit_args)
            ours.append(elapsed)
            edit_reads.append(count)
            robota.tools.undo(workspace=directory)
            theirs.append(_plain(target))
        read_time, read_count, _ = _execute(read, read_args)
    mine, reference = statistics.median(ours), statistics.median(theirs)
    print(f"  file:              {size:,} bytes, {lines:,} lines")
    print(f"  robota Edit:       {mine * 1000:8.1f} ms (best {min(ours) * 1000:.1f} ms)")
    print(f"  plain read+write:  {reference * 1000:8.1f} ms (best {min(theirs) * 1000:.1f} ms)")
    print(f"  ratio:             {mine / reference:8.2f}x (fsync, pre-image and diff included)")
    print(f"  robota Read (last line): {read_time * 1000:.1f} ms")
    if read_count is None or None in edit_reads:
        print("  bytes read:        not counted (no /proc/self/io)")
        return True
    worst = max(count for count in edit_reads if count is not None)
    once = worst <= READ_GOAL * size and read_count <= READ_GOAL * size
    print(f"  Edit read:         {worst:,} bytes = {worst / size:.3f}x the file (worst sample)")
    print(f"  Read read:         {read_count:,} bytes = {read_count / size:.3f}x the file")
    print(f"  read once:         {'PASS' if once else 'FAIL'} (goal <= {READ_GOAL}x each)")
    return once


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5)
    main(parser.parse_args().samples)
