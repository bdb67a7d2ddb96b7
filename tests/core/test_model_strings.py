"""Model strings: ``Agent(model="prefix:model")`` through the ``robota.providers`` entry points."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

import robota


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str, module: str) -> None:
    """Install a real distribution (dist-info on sys.path) registering ``entry``."""
    (tmp_path / "fakeprov_mod.py").write_text(textwrap.dedent(module))
    info = tmp_path / "fakeprov-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeprov\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[robota.providers]\n{entry}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fakeprov_mod", raising=False)


_MODULE = """
from robota.testing import ScriptedProvider

class Fake(ScriptedProvider):
    closed = 0
    def __init__(self):
        super().__init__(["hello from fake"], name="fake")
    async def aclose(self):
        type(self).closed += 1

def broken():
    return object()
"""


async def test_a_registered_prefix_builds_its_provider_and_the_agent_owns_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "fake = fakeprov_mod:Fake", _MODULE)
    assert "fake" in robota.registered_provider_prefixes()
    agent = robota.Agent(model="fake:some-model")
    assert str(agent.get_model()) == "fake:some-model"
    result = await agent.run("hi")
    assert result.output == "hello from fake"
    await agent.aclose()
    assert sys.modules["fakeprov_mod"].Fake.closed == 1


def test_an_unknown_prefix_names_the_registered_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "fake = fakeprov_mod:Fake", _MODULE)
    with pytest.raises(robota.ConfigurationError, match=r"unknown model prefix 'nope'.*fake"):
        robota.Agent(model="nope:m")


def test_a_factory_that_fails_to_import_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "gone = fakeprov_missing_mod:Thing", _MODULE)
    with pytest.raises(robota.ConfigurationError, match=r"cannot be imported.*install"):
        robota.Agent(model="gone:m")


def test_a_factory_returning_a_non_provider_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "bad = fakeprov_mod:broken", _MODULE)
    with pytest.raises(robota.ConfigurationError, match="not a robota Provider"):
        robota.Agent(model="bad:m")


def test_a_model_without_prefix_and_without_provider_is_refused() -> None:
    with pytest.raises(robota.ConfigurationError, match="needs a provider"):
        robota.Agent(model="gpt-5-mini")
