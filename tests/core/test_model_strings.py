"""Model strings: ``Agent(model="prefix:model")`` through the ``robota.providers`` entry points."""

from __future__ import annotations

import inspect
import sys
import textwrap
from pathlib import Path

import pytest

import robota
from robota.testing import ScriptedProvider


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


_OPTIONS_MODULE = """
from robota.testing import ScriptedProvider

class Configurable(ScriptedProvider):
    seen = {}
    def __init__(self, *, api_key=None, base_url=None, api="responses"):
        type(self).seen = {"api_key": api_key, "base_url": base_url, "api": api}
        super().__init__(["configured"], name="conf")

class Plain(ScriptedProvider):
    def __init__(self):
        super().__init__(["plain"], name="plain")
"""


def test_the_agent_passes_api_key_and_base_url_to_the_factory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "conf = fakeprov_mod:Configurable", _OPTIONS_MODULE)
    robota.Agent("conf:m", api_key="k", base_url="http://127.0.0.1:9/v1")
    seen = sys.modules["fakeprov_mod"].Configurable.seen
    assert seen == {"api_key": "k", "base_url": "http://127.0.0.1:9/v1", "api": "responses"}
    robota.Agent("conf:m")  # nothing given: the factory is called with no arguments
    assert sys.modules["fakeprov_mod"].Configurable.seen["api_key"] is None
    _, model = robota.provider_for_model("conf:a:b", options={"api": "chat"})
    assert model == "a:b"  # everything after the first colon
    assert sys.modules["fakeprov_mod"].Configurable.seen["api"] == "chat"


def test_a_factory_that_takes_no_base_url_is_refused_before_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "plain = fakeprov_mod:Plain", _OPTIONS_MODULE)
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent("plain:m", base_url="http://127.0.0.1:9/v1")
    assert caught.value.message == (
        "the provider for prefix 'plain' (fakeprov_mod:Plain) does not take base_url=; build it "
        "yourself and pass provider="
    )
    assert robota.Agent("plain:m").run_sync("hi").output == "plain"


def test_the_model_is_the_first_positional_argument_and_the_rest_are_keywords() -> None:
    provider = ScriptedProvider(["positional", "keyword"])
    assert robota.Agent("m", provider=provider).run_sync("hi").output == "positional"
    assert robota.Agent(model="m", provider=provider).run_sync("hi").output == "keyword"
    parameters = list(inspect.signature(robota.Agent).parameters.values())
    assert parameters[0].name == "model"
    assert parameters[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[1:])
    with pytest.raises(TypeError):
        robota.Agent("m", provider)  # type: ignore[misc]


@pytest.mark.parametrize("spec", ["openai:", "openai-compatible:", "openai: "])
def test_a_registered_prefix_without_a_model_says_the_model_is_missing(spec: str) -> None:
    """Review of issue 25: 'openai:' was reported as naming no provider, though it names one."""
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent(spec, base_url="http://127.0.0.1:9/v1")
    prefix = spec.partition(":")[0]
    assert caught.value.message == (
        f"model {spec!r} names no model after the prefix {prefix!r}: write '{prefix}:MODEL'"
    )
