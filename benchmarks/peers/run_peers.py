"""The side-by-side suite (issue 16): robota beside its peers, one process per framework.

The peers never enter robota's own environment: they are installed (pinned, below) into a venv
of their own under ``${ROBOTA_CACHE_DIR:-~/.cache/robota}/bench-venv``, together with this
checkout of robota, on first use. Each repetition runs every framework's process once, in turn
(interleaved), and each process quotes its framework against the same tasks floor it measured
itself, so machine speed cancels out. Prints a table and writes ``benchmarks/out/peers.json``.

    python benchmarks/peers/run_peers.py [--repeats 5] [--samples 300]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
REPO = HERE.parent.parent
OUT = HERE.parent / "out" / "peers.json"
PEERS = {
    "pydantic-ai": ("pydantic_ai_scenario.py", ["pydantic-ai-slim==2.68.0"]),
    "openai-agents": ("openai_agents_scenario.py", ["openai-agents==0.24.0"]),
    "langgraph": ("langgraph_scenario.py", ["langgraph==1.2.24"]),
    "agno": ("agno_scenario.py", ["agno==3.1.10"]),
}


def bench_venv() -> Path:
    cache = Path(os.environ.get("ROBOTA_CACHE_DIR", Path.home() / ".cache" / "robota"))
    venv = cache / "bench-venv"
    python = venv / "bin" / "python"
    wanted = sorted(pin for _, pins in PEERS.values() for pin in pins)
    stamp = venv / "robota-bench.json"
    # The venv holds an editable install of one checkout: the one measured must be this one.
    state = {"pins": wanted, "checkout": str(REPO.resolve())}
    if python.exists() and stamp.exists() and json.loads(stamp.read_text()) == state:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # robota as the dev environment pins it; then the peers with their own requirements (they
    # may move a shared dependency within this venv: robota's scenario does not use them).
    subprocess.run([*pip, "-c", str(REPO / "constraints.txt"), "-e", str(REPO)], check=True)
    subprocess.run([*pip, *wanted], check=True)
    stamp.write_text(json.dumps(state))
    return python


def main(argv: list[str]) -> int:
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 5
    samples = argv[argv.index("--samples") + 1] if "--samples" in argv else "300"
    python = bench_venv()
    scripts = {"robota": "robota_scenario.py", **{n: s for n, (s, _) in PEERS.items()}}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in scripts}
    for _ in range(repeats):
        for name, script in scripts.items():
            done = subprocess.run(
                [str(python), script, "--samples", samples],
                cwd=HERE,
                check=True,
                capture_output=True,
                text=True,
            )
            results[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    table = {}
    for name, runs in results.items():
        ratios = [r["run_us"] / r["floor_us"] for r in runs]
        table[name] = {
            "version": runs[0]["version"],
            "run_us": statistics.median(r["run_us"] for r in runs),
            "floor_us": statistics.median(r["floor_us"] for r in runs),
            "floor_ratio": statistics.median(ratios),
        }
        builds = [r["tool_build_us"] for r in runs if "tool_build_us" in r]
        if builds:
            table[name]["tool_build_us"] = statistics.median(builds)
    print("\nSide by side (issue 16): 3 rounds, 3 tool calls, each framework's zero-latency model")
    header = ("framework", "version", "per run", "floor", "/ floor", "/ robota")
    print("  {:<14} {:<10} {:>10} {:>9} {:>8} {:>9}".format(*header))
    ours = table["robota"]["floor_ratio"]
    for name, row in table.items():
        print(
            f"  {name:<14} {row['version']:<10} {row['run_us']:>8.1f}µs {row['floor_us']:>7.1f}µs "
            f"{row['floor_ratio']:>8.2f} {row['floor_ratio'] / ours:>9.2f}"
        )
    built = {name: row["tool_build_us"] for name, row in table.items() if "tool_build_us" in row}
    if "robota" in built and len(built) > 1:
        print("\nBuilding a tool from a function with a pydantic-typed signature (common.lookup)")
        for name, micros in built.items():
            print(f"  {name:<14} {micros:>8.1f}µs {micros / built['robota']:>6.2f}× robota")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(table, indent=2) + "\n")
    print(f"  written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
