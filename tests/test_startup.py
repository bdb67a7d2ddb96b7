"""`import robota` and `robota --help` load no runtime, no vendor SDK and no heavy dependency.

Issue 25: `robota --help` imported the whole package (the agent loop, pydantic, asyncio) before
printing a line. Each check runs a fresh interpreter with ``-X importtime`` and reads the names of
the modules it imported from that report; the start-up times are in benchmarks/startup.py.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"

# Vendor SDKs, HTTP clients and optional back-ends: loaded only by the provider or store that
# needs them.
VENDOR_AND_OPTIONAL = (
    "openai",
    "anthropic",
    "google.genai",
    "httpx",
    "httpx2",
    "httpcore2",
    "opentelemetry",
    "psycopg",
    "mcp",
    "temporalio",
    "keyring",
    "cryptography",
    "rich",
    "tree_sitter",
    "jsonschema",
)
# What the runtime itself brings; not wanted for `import robota` alone or for `--help`.
RUNTIME = ("robota.core", "pydantic", "asyncio", "ssl")


def _imported(*arguments: str) -> tuple[set[str], str]:
    """The modules a fresh interpreter imported running ``python -X importtime ARGUMENTS``."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert "robota" in names or "robota.cli" in names, done.stderr[-2000:]
    return names, done.stdout


def _loaded(names: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(
        name
        for name in names
        for package in packages
        if name == package or name.startswith(package + ".")
    )


def test_import_robota_loads_neither_the_runtime_nor_any_vendor_sdk() -> None:
    names, _ = _imported("-c", "import robota")
    assert _loaded(names, VENDOR_AND_OPTIONAL + RUNTIME) == []


def test_robota_help_loads_only_the_parser() -> None:
    names, out = _imported("-m", "robota", "--help")
    assert "usage: robota" in out
    assert _loaded(names, VENDOR_AND_OPTIONAL + RUNTIME) == []
    assert sorted(name for name in names if name.startswith("robota")) == [
        "robota",  # robota.__main__ runs as __main__, not as an import
        "robota._version",
        "robota.cli",
        "robota.cli._main",
    ]


@pytest.mark.parametrize("use", ["robota.Agent", "robota.__all__", "from robota import tool"])
def test_first_use_of_a_public_name_loads_the_runtime_but_no_vendor_sdk(use: str) -> None:
    code = f"import robota\n{use}" if not use.startswith("from") else use
    names, _ = _imported("-c", code)
    assert "robota.core" in names
    assert _loaded(names, VENDOR_AND_OPTIONAL) == []


def test_a_public_name_reports_the_public_module_however_core_was_imported() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from robota.core import Agent; print(Agent.__module__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "robota"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import robota

    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = robota.no_such_name  # type: ignore[attr-defined]
    assert "Agent" in dir(robota)
