""".ci/with-progress: a long build says every few seconds that it is going, and what it is at.

Issue 25: a first `make test` compiled llama.cpp for many minutes with no output at all. The
wrapper hides the build's chatter, prints a progress line at a fixed interval quoting the latest
compiler step, and shows the last lines when the build fails. The fake builds below are Python
children; the first waits until the wrapper has reported it, so no test depends on a sleep.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

WRAPPER = pathlib.Path(__file__).resolve().parents[2] / ".ci" / "with-progress"

# A build that reports one CMake step, then stays silent until the wrapper's progress line has
# quoted that step (read from the file the wrapper's stderr goes to), then says more and ends.
_WAITS_FOR_A_PROGRESS_LINE = """
import pathlib, sys, time
seen = pathlib.Path(sys.argv[1])
print("-- Configuring done", flush=True)
print("[ 42%] Building CXX object ggml/src/ggml.c.o", flush=True)
deadline = time.monotonic() + 60
while "42%" not in seen.read_text():
    if time.monotonic() > deadline:
        sys.exit(7)
    time.sleep(0.02)
print("chatter the wrapper keeps to its log", flush=True)
"""


def _wrap(*args: str, stderr_to: pathlib.Path) -> int:
    with stderr_to.open("w") as err:
        done = subprocess.run(
            [sys.executable, str(WRAPPER), *args],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.stdout == ""  # nothing of the command reaches stdout
    return done.returncode


def test_a_silent_stretch_gets_a_progress_line_quoting_the_latest_step(
    tmp_path: pathlib.Path,
) -> None:
    err, log = tmp_path / "stderr.txt", tmp_path / "build.log"
    code = _wrap(
        *("--every", "0.05", "--log", str(log), "llama-server", "--"),
        *(sys.executable, "-c", _WAITS_FOR_A_PROGRESS_LINE, str(err)),
        stderr_to=err,
    )
    lines = err.read_text().splitlines()
    assert code == 0, lines
    assert any(
        re.fullmatch(
            r"llama-server: \d+s elapsed; \[ 42%\] Building CXX object ggml/src/ggml.c.o", line
        )
        for line in lines
    ), lines
    assert re.fullmatch(r"llama-server: done in \d+s", lines[-1]), lines
    # The command's own output is kept in the log, not shown.
    assert not any("chatter" in line or "Configuring" in line for line in lines), lines
    assert "chatter the wrapper keeps to its log" in log.read_text()


def test_a_failed_build_shows_its_last_lines_and_its_status(tmp_path: pathlib.Path) -> None:
    err, log = tmp_path / "stderr.txt", tmp_path / "build.log"
    failing = "import sys\nfor n in range(100): print(f'line-{n}')\nsys.exit(3)"
    code = _wrap(
        *("--log", str(log), "llama-server", "--", sys.executable, "-c", failing),
        stderr_to=err,
    )
    text = err.read_text()
    assert code == 3
    assert re.search(r"^llama-server: failed after \d+s \(exit 3\); last lines:$", text, re.M)
    assert "  line-99\n" in text
    assert "  line-60\n" in text  # the last 40 lines
    assert "line-59\n" not in text
    assert f"the whole output is in {log}" in text
    assert log.read_text().splitlines() == [f"line-{n}" for n in range(100)]


def test_without_a_command_it_is_a_usage_error(tmp_path: pathlib.Path) -> None:
    err = tmp_path / "stderr.txt"
    assert _wrap("llama-server", "--", stderr_to=err) == 2
    assert "no COMMAND" in err.read_text()
