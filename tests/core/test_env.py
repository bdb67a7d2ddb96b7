"""S02 `$ENV:` references resolve only through a caller-passed resolver."""

from __future__ import annotations

import ast
import pathlib

import pytest

import robota
from robota import ConfigurationError, EnvResolver, MappingEnvResolver, resolve_env_reference
from robota.host import ProcessEnvResolver

CORE = pathlib.Path(robota.__file__).parent / "core"


def test_s02_reference_without_a_resolver_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROBOTA_TEST_KEY", "present-in-environ")
    with pytest.raises(ConfigurationError, match="no default") as info:
        resolve_env_reference("$ENV:ROBOTA_TEST_KEY", None)
    assert "present-in-environ" not in str(info.value)


def test_s02_reference_resolves_through_the_passed_resolver() -> None:
    resolver = MappingEnvResolver({"API_KEY": "sk-123"})
    assert resolve_env_reference("$ENV:API_KEY", resolver) == "sk-123"


def test_s02_plain_strings_pass_through_unchanged() -> None:
    assert resolve_env_reference("sk-literal", None) == "sk-literal"
    assert not robota.is_env_reference("sk-literal")


def test_s02_unset_variable_names_the_variable_not_a_value() -> None:
    with pytest.raises(ConfigurationError, match="MISSING_VAR is not set"):
        resolve_env_reference("$ENV:MISSING_VAR", MappingEnvResolver({}))
    with pytest.raises(ConfigurationError, match="EMPTY"):
        resolve_env_reference("$ENV:EMPTY", MappingEnvResolver({"EMPTY": ""}))


@pytest.mark.parametrize("ref", ["$ENV:", "$ENV:1ABC", "$ENV:A-B", "$ENV:A B"])
def test_s02_malformed_reference_is_refused(ref: str) -> None:
    with pytest.raises(ConfigurationError, match="not a valid environment reference"):
        resolve_env_reference(ref, MappingEnvResolver({}))


def test_s02_core_never_reads_the_process_environment() -> None:
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                raise AssertionError(f"{path} reads the environment ({node.attr})")


def test_s02_host_process_resolver_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROBOTA_TEST_KEY", "from-environ")
    resolver = ProcessEnvResolver()
    assert isinstance(resolver, EnvResolver)
    assert resolve_env_reference("$ENV:ROBOTA_TEST_KEY", resolver) == "from-environ"
    monkeypatch.delenv("ROBOTA_TEST_KEY")
    assert resolver.get("ROBOTA_TEST_KEY") is None


def test_mapping_resolver_repr_shows_names_not_values() -> None:
    text = repr(MappingEnvResolver({"KEY": "secret-value"}))
    assert "KEY" in text
    assert "secret-value" not in text
    assert repr(ProcessEnvResolver()) == "ProcessEnvResolver()"
