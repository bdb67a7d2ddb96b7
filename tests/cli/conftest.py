"""Fixtures for the `robota` command's tests: a sealed environment and a working directory.

Every test runs the real command (`python -m robota`) as a child process. The environment is
built from nothing: a temporary HOME and XDG_CONFIG_HOME (so no real stored key is found), the
file credential store (no real keychain), and only the variables a test adds.
"""

from __future__ import annotations

import os
import pathlib

import pytest

TOOLS_MODULE = '''
import robota


def get_capital(country: str) -> str:
    """The capital city of a country.

    Args:
        country: The country's English name.
    """
    return {"UK": "London", "France": "Paris", "Italy": "Rome"}.get(country, "unknown")


@robota.tool(risk="inspect")
def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: The text.
    """
    return text.upper()


TOOLS = [get_capital, shout]
NOT_A_TOOL = 42
'''


@pytest.fixture
def workdir(tmp_path: pathlib.Path) -> pathlib.Path:
    """The child's working directory, holding `clitools.py` (importable via --tools)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "clitools.py").write_text(TOOLS_MODULE)
    return work


@pytest.fixture
def home(tmp_path: pathlib.Path) -> pathlib.Path:
    """An empty home directory for the child."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def env(home: pathlib.Path) -> dict[str, str]:
    """The child's whole environment: no API key, no proxy, the file credential store.

    ``PYTHONPATH`` is passed on when set, so the child imports the same ``robota`` as the tests
    (a worktree's ``src`` rather than whatever checkout the environment installed).
    """
    child = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "ROBOTA_CREDENTIAL_STORE": "file",
        "LANG": "C.UTF-8",
    }
    if os.environ.get("PYTHONPATH"):
        child["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return child
