"""Start-up cost (issue 25): `import robota` and `robota --help` beside a bare interpreter.

Each command runs in a fresh interpreter (the one running this file, with the same ``sys.path``
additions through ``PYTHONPATH``), interleaved with the others sample by sample so machine noise
falls evenly on all of them. The figure is the median wall-clock time, and its ratio to
``python -c pass`` measured in the same run. ``import robota`` loads no runtime (that happens on
first use of a public name, the third line); ``robota --help`` loads only the parser.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SAMPLES = 15
SRC = Path(__file__).resolve().parent.parent / "src"

COMMANDS: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "import robota": ["-c", "import robota"],
    "import robota; robota.Agent": ["-c", "import robota; robota.Agent"],
    "robota --help": ["-m", "robota", "--help"],
}


def _environment() -> dict[str, str]:
    paths = [str(SRC), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _time(arguments: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(  # noqa: S603 - this interpreter, with the fixed arguments above
        [sys.executable, *arguments],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - start


def measure(samples: int = SAMPLES) -> dict[str, float]:
    """The median seconds of each command, sampled interleaved after one warm-up round."""
    env = _environment()
    timings: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for round_number in range(samples + 1):
        for label, arguments in COMMANDS.items():
            took = _time(arguments, env)
            if round_number:  # the first round warms the file cache and .pyc files
                timings[label].append(took)
    return {label: statistics.median(values) for label, values in timings.items()}


def main() -> None:
    """Print each command's median start-up time and its ratio to a bare interpreter."""
    medians = measure()
    floor = medians["python -c pass"]
    print(f"\nStart-up ({SAMPLES} fresh interpreters each, interleaved; median):")
    for label, seconds in medians.items():
        print(f"  {label:<30} {seconds * 1000:7.1f} ms  {seconds / floor:5.2f}x python -c pass")


if __name__ == "__main__":
    main()
