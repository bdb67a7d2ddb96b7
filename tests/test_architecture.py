"""The import-linter contracts (docs/architecture.md "Layers") catch violations.

Each case copies the real source tree and configuration to a temporary directory, plants one bad
import, and runs ``lint-imports`` on the copy: the real contracts must break, naming the rule.
A clean copy must pass, so the test fails in both directions.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LINT_IMPORTS = pathlib.Path(sys.executable).with_name("lint-imports")


def _copy_project(tmp_path: pathlib.Path) -> pathlib.Path:
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copy(ROOT / "importlinter_contracts.py", tmp_path)
    return tmp_path


def _lint(project: pathlib.Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(project / "src"))
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_contracts_pass_on_the_real_tree(tmp_path: pathlib.Path) -> None:
    result = _lint(_copy_project(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


CORE_VIOLATIONS = [
    ("import subprocess\n", "robota.core is not allowed to import subprocess"),
    ("import socket\n", "robota.core is not allowed to import socket"),
    ("import sqlite3\n", "robota.core is not allowed to import sqlite3"),
    ("import http.client\n", "robota.core is not allowed to import http"),
    ("import urllib.request\n", "robota.core is not allowed to import urllib"),
    ("import httpx2\n", "robota.core is not allowed to import httpx2"),
    ("import openai\n", "robota.core is not allowed to import openai"),
    ("from google import genai\n", "robota.core is not allowed to import google"),
    ("import asyncio.subprocess\n", "robota.core._usage imports asyncio.subprocess"),
    ("from asyncio import subprocess\n", "robota.core._usage imports asyncio.subprocess"),
    ("from asyncio.subprocess import PIPE\n", "robota.core._usage imports asyncio.subprocess"),
    ("import robota.host\n", "robota.core is not allowed to import robota.host"),
]


@pytest.mark.parametrize(
    ("line", "expected"), CORE_VIOLATIONS, ids=[c[0].strip() for c in CORE_VIOLATIONS]
)
def test_s02_core_contracts_catch_a_forbidden_import(
    tmp_path: pathlib.Path, line: str, expected: str
) -> None:
    project = _copy_project(tmp_path)
    target = project / "src" / "robota" / "core" / "_usage.py"
    target.write_text(target.read_text() + "\n" + line)
    result = _lint(project)
    assert result.returncode != 0
    assert expected in " ".join(result.stdout.split()), result.stdout


def test_layers_contract_catches_host_importing_cli(tmp_path: pathlib.Path) -> None:
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "host" / "_bad.py").write_text("import robota.cli\n")
    result = _lint(project)
    assert result.returncode != 0
    assert "robota.host is not allowed to import robota.cli" in result.stdout


@pytest.mark.parametrize("line", ["import robota.sessions\n", "import robota.testing\n"])
def test_tools_may_import_only_core_and_host(tmp_path: pathlib.Path, line: str) -> None:
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "tools" / "_bad.py").write_text(line)
    result = _lint(project)
    assert result.returncode != 0
    assert "robota.tools is not allowed to import robota." in result.stdout


def test_layers_contract_catches_host_importing_tools(tmp_path: pathlib.Path) -> None:
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "host" / "_bad.py").write_text("import robota.tools\n")
    result = _lint(project)
    assert result.returncode != 0
    assert "robota.host is not allowed to import robota.tools" in result.stdout


def test_providers_independence_contract_catches_one_adapter_importing_another(
    tmp_path: pathlib.Path,
) -> None:
    project = _copy_project(tmp_path)
    providers = project / "src" / "robota" / "providers"
    (providers / "alpha").mkdir()
    (providers / "alpha" / "__init__.py").write_text("import robota.providers.beta\n")
    (providers / "beta").mkdir()
    (providers / "beta" / "__init__.py").write_text("")
    result = _lint(project)
    assert result.returncode != 0
    assert "robota.providers.alpha is not allowed to import robota.providers.beta" in result.stdout


def test_testing_kit_may_not_import_providers(tmp_path: pathlib.Path) -> None:
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "testing" / "_bad.py").write_text("import robota.providers\n")
    result = _lint(project)
    assert result.returncode != 0
    assert "robota.testing is not allowed to import robota.providers" in result.stdout


@pytest.mark.parametrize(
    "line", ["import robota.core.execution._loop\n", "from robota.core._messages import Message\n"]
)
def test_s44_orchestration_contracts_may_import_only_errors_and_usage(
    tmp_path: pathlib.Path, line: str
) -> None:
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "core" / "orchestration" / "_bad.py").write_text(line)
    result = _lint(project)
    assert result.returncode != 0
    assert "robota.core.orchestration is not allowed to import" in result.stdout


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("import robota.host\n", "robota.agents is not allowed to import robota.host"),
        ("import robota.temporal\n", "robota.agents is not allowed to import robota.temporal"),
        ("import robota.testing\n", "robota.agents is not allowed to import robota.testing"),
    ],
)
def test_agents_layer_may_import_only_core_and_sessions(
    tmp_path: pathlib.Path, line: str, expected: str
) -> None:
    # Issue 29 item 5: orchestration is a layer above core (+ sessions), below integrations.
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "agents" / "_bad.py").write_text(line)
    result = _lint(project)
    assert result.returncode != 0
    assert expected in " ".join(result.stdout.split()), result.stdout


def test_sessions_may_not_import_the_agents_layer(tmp_path: pathlib.Path) -> None:
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "sessions" / "_bad.py").write_text("import robota.agents\n")
    result = _lint(project)
    assert result.returncode != 0
    assert "robota.sessions is not allowed to import robota.agents" in result.stdout


def test_providers_kit_may_not_import_an_adapter(tmp_path: pathlib.Path) -> None:
    # Issue 32: every adapter may use the shared kit; the kit never reaches into an adapter.
    project = _copy_project(tmp_path)
    kit = project / "src" / "robota" / "providers" / "_kit"
    (kit / "_bad.py").write_text("import robota.providers.openai\n")
    result = _lint(project)
    assert result.returncode != 0
    expected = "robota.providers._kit is not allowed to import robota.providers.openai"
    assert expected in " ".join(result.stdout.split()), result.stdout


def test_otel_may_import_only_core(tmp_path: pathlib.Path) -> None:
    # Issue 32: the exporter left robota.host because it touches nothing of the OS.
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "otel" / "_bad.py").write_text("import robota.host\n")
    result = _lint(project)
    assert result.returncode != 0
    assert "robota.otel is not allowed to import robota.host" in result.stdout
