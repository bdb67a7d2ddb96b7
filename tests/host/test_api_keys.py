"""The one API-key lookup order (issue 25): explicit, then the environment, then the stored key.

Every store here is the real owner-only file store in a temporary directory, reached the way
the library reaches it: ``$XDG_CONFIG_HOME`` and ``$ROBOTA_CREDENTIAL_STORE=file``.
"""

from __future__ import annotations

import os
import pathlib

import pytest

from robota.core import ConfigurationError, CredentialStoreError
from robota.host import (
    MISSING_API_KEY,
    FileCredentialStore,
    api_key_hint,
    credential_file_path,
    default_credential_store,
    find_api_key,
    require_api_key,
)

STORED = "sk-stored-not-a-real-key"  # made-up keys to tell the sources apart
FROM_ENV = "sk-env-not-a-real-key"
EXPLICIT = "sk-explicit-not-a-real-key"


@pytest.fixture
def config_home(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """An empty config directory the default store lives under; no key variable set."""
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("ROBOTA_CREDENTIAL_STORE", "file")
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return home


def _store_key(service: str, secret: str) -> pathlib.Path:
    """Store ``secret`` as ``robota auth set`` does: the default store, a 0700 directory."""
    path = credential_file_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    FileCredentialStore(path).set(service, "api-key", secret)
    return path


def test_the_default_store_is_the_file_robota_auth_writes(config_home: pathlib.Path) -> None:
    choice = default_credential_store()
    assert choice.kind == "file"
    assert choice.where == str(config_home / "robota" / "credentials.json")


def test_a_stored_key_is_found_when_nothing_else_is_given(config_home: pathlib.Path) -> None:
    path = _store_key("openai", STORED)
    assert os.stat(path).st_mode & 0o077 == 0  # a real owner-only file
    found = find_api_key("openai", variables=("OPENAI_API_KEY",))
    assert found is not None
    assert (found.key, found.source) == (STORED, "the file credential store")
    assert STORED not in repr(found)


def test_the_order_is_explicit_then_environment_then_stored(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store_key("openai", STORED)
    variables = ("OPENAI_API_KEY",)
    monkeypatch.setenv("OPENAI_API_KEY", FROM_ENV)
    from_env = find_api_key("openai", variables=variables)
    assert from_env is not None
    assert (from_env.key, from_env.source) == (FROM_ENV, "$OPENAI_API_KEY")
    explicit = find_api_key("openai", api_key=EXPLICIT, variables=variables)
    assert explicit is not None
    assert (explicit.key, explicit.source) == (EXPLICIT, "api_key=")
    monkeypatch.setenv("OPENAI_API_KEY", "")  # set but empty counts as unset
    stored = find_api_key("openai", variables=variables)
    assert stored is not None
    assert stored.key == STORED


def test_the_store_is_not_read_when_the_environment_answers(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _store_key("openai", STORED)
    path.chmod(0o644)  # a store that cannot be trusted: reading it would raise
    monkeypatch.setenv("OPENAI_API_KEY", FROM_ENV)
    found = find_api_key("openai", variables=("OPENAI_API_KEY",))
    assert found is not None
    assert found.key == FROM_ENV
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(CredentialStoreError, match=r"^cannot read the credential store: .*0644"):
        find_api_key("openai", variables=("OPENAI_API_KEY",))


def test_a_given_store_is_read_instead_of_the_default(
    config_home: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    own = FileCredentialStore(tmp_path / "own.json")
    own.set("openai", "api-key", STORED)
    found = find_api_key("openai", store=own)
    assert found is not None
    assert (found.key, found.source) == (STORED, "the given credential store")
    assert find_api_key("openai") is None  # the default store holds nothing


def test_the_missing_key_error_names_all_three_ways(config_home: pathlib.Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        require_api_key("openai", who="OpenAIProvider", variables=("OPENAI_API_KEY",))
    assert caught.value.message == (
        "OpenAIProvider needs an API key for openai: pass api_key=, set OPENAI_API_KEY, or run "
        "`robota auth set openai`"
    )
    assert caught.value.code == MISSING_API_KEY
    assert caught.value.context == {"service": "openai", "variables": ("OPENAI_API_KEY",)}


def test_the_missing_key_error_does_not_suggest_a_variable_already_set(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    with pytest.raises(ConfigurationError) as caught:
        require_api_key("openai", who="OpenAIProvider", variables=("OPENAI_API_KEY",))
    assert caught.value.message == (
        "OpenAIProvider needs an API key for openai: $OPENAI_API_KEY is set but empty; "
        "pass api_key= or run `robota auth set openai`"
    )


def test_an_empty_explicit_key_is_refused_naming_the_other_ways(
    config_home: pathlib.Path,
) -> None:
    _store_key("openai", STORED)  # not used: an explicit key, even empty, is the answer
    with pytest.raises(ConfigurationError) as caught:
        find_api_key("openai", api_key="", variables=("OPENAI_API_KEY",))
    assert caught.value.message == (
        "api_key= is empty for openai: pass the key itself, or leave api_key= out and "
        "set OPENAI_API_KEY or run `robota auth set openai`"
    )


def test_the_hint_lists_several_variables_and_extra_ways(config_home: pathlib.Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        require_api_key(
            "gemini",
            who="GeminiProvider",
            variables=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            also="use vertexai=True with Google Cloud credentials",
        )
    assert caught.value.message == (
        "GeminiProvider needs an API key for gemini: pass api_key=, set GEMINI_API_KEY (or "
        "GOOGLE_API_KEY), run `robota auth set gemini`, or use vertexai=True with Google Cloud "
        "credentials"
    )
    assert api_key_hint("openai-compatible", explicit=None) == (
        "run `robota auth set openai-compatible`"
    )
    assert (
        api_key_hint(
            "openai",
            variables=("OPENAI_API_KEY",),
            explicit="pass --api-key-env VAR",
            explicit_last=True,
        )
        == "set OPENAI_API_KEY, run `robota auth set openai`, or pass --api-key-env VAR"
    )


@pytest.mark.parametrize("value", ["vault", "keychain"])
def test_an_unknown_store_choice_is_a_configuration_error(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ROBOTA_CREDENTIAL_STORE", value)
    with pytest.raises(ConfigurationError, match=r"must be auto, keyring or file; got"):
        find_api_key("openai")


@pytest.mark.parametrize("wrong", [5, b"sk-bytes", ["sk"]])
def test_an_explicit_key_that_is_not_a_string_is_refused(
    config_home: pathlib.Path, wrong: object
) -> None:
    """Review of issue 25: `api_key=5` was accepted and sent as `Bearer 5`."""
    with pytest.raises(ConfigurationError) as caught:
        find_api_key("openai", api_key=wrong, variables=("OPENAI_API_KEY",))  # type: ignore[arg-type]
    assert caught.value.message == (
        f'api_key= must be the key as a string (api_key="sk-..."), got {type(wrong).__name__}'
    )
    assert "sk" not in caught.value.message.replace('"sk-..."', "")  # the value is never shown
