"""`robota auth` and how `run` finds a key: a temporary HOME and the file credential store."""

from __future__ import annotations

import json
import pathlib
import stat

import pytest

from cli._support import robota
from providers.replay import ReplayServer, cassette_path, load_cassette
from robota import ConfigurationError

SECRET = "sk-test-not-a-real-key-1234"  # noqa: S105 - a made-up key the tests store


def _credential_file(home: pathlib.Path) -> pathlib.Path:
    return home / ".config" / "robota" / "credentials.json"


def test_set_status_delete_round_trip_in_an_owner_only_file(
    workdir: pathlib.Path, env: dict[str, str], home: pathlib.Path
) -> None:
    stored = robota(["auth", "set", "openai"], env=env, cwd=workdir, input=SECRET + "\n")
    assert stored.returncode == 0, stored.stderr
    path = _credential_file(home)
    assert f"in the file store ({path})" in stored.stdout
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text())["credentials"] == {"openai": {"api-key": SECRET}}

    status = robota(["auth", "status"], env=env, cwd=workdir)
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines() == [
        f"credential store: file ({path})",
        "openai: $OPENAI_API_KEY not set; stored key: yes; uses: the stored key",
        "anthropic: $ANTHROPIC_API_KEY not set; stored key: no; uses: none",
        "gemini: $GEMINI_API_KEY not set, $GOOGLE_API_KEY not set; stored key: no; uses: none",
        "openai-compatible: no env var; stored key: no; uses: none",
    ]
    with_env = robota(["auth", "status"], env={**env, "OPENAI_API_KEY": "x"}, cwd=workdir)
    assert "openai: $OPENAI_API_KEY set; stored key: yes; uses: $OPENAI_API_KEY" in with_env.stdout

    removed = robota(["auth", "delete", "openai"], env=env, cwd=workdir)
    assert removed.returncode == 0
    assert "removed the API key for openai" in removed.stdout
    again = robota(["auth", "delete", "openai"], env=env, cwd=workdir)
    assert again.returncode == 1
    assert "no API key for openai is stored" in again.stdout
    after = robota(["auth", "status"], env=env, cwd=workdir)
    assert "openai: $OPENAI_API_KEY not set; stored key: no; uses: none" in after.stdout

    for result in (stored, status, with_env, removed, again, after):
        assert SECRET not in result.stdout + result.stderr  # the key is never printed


def test_run_uses_the_stored_key_and_the_env_var_wins(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    assert robota(["auth", "set", "openai"], env=env, cwd=workdir, input=SECRET).returncode == 0
    cassette = load_cassette(cassette_path("openai-responses", "test_openai_responses_stream"))
    args = ["--model", "openai:gpt-4o", "--tools", "clitools:get_capital"]
    for run_env, expected in ((env, SECRET), ({**env, "OPENAI_API_KEY": "from-env"}, "from-env")):
        with ReplayServer(cassette) as server:
            result = robota(
                ["run", "capital?", *args, "--base-url", server.base_url + "/v1"],
                env=run_env,
                cwd=workdir,
            )
            sent = server.requests[0]
        assert result.returncode == 0, result.stderr
        assert result.stdout == "The capital of France is Paris.\n"
        assert "cost: $0.001583" in result.stderr  # OpenAI's table prices gpt-4o
        assert sent.headers["authorization"] == f"Bearer {expected}"


def test_api_key_env_names_the_variable_to_read(workdir: pathlib.Path, env: dict[str, str]) -> None:
    cassette = load_cassette(cassette_path("openai-responses", "test_openai_responses_stream"))
    with ReplayServer(cassette) as server:
        result = robota(
            [
                *("run", "capital?", "--model", "openai:gpt-4o", "--tools", "clitools:get_capital"),
                *("--base-url", server.base_url + "/v1", "--api-key-env", "MY_GATEWAY_KEY"),
            ],
            env={**env, "MY_GATEWAY_KEY": "gw-key", "OPENAI_API_KEY": "not-this-one"},
            cwd=workdir,
        )
        sent = server.requests[0]
    assert result.returncode == 0, result.stderr
    assert sent.headers["authorization"] == "Bearer gw-key"
    missing = robota(
        ["run", "hi", "--model", "openai:gpt-4o", "--api-key-env", "MY_GATEWAY_KEY"],
        env=env,
        cwd=workdir,
    )
    assert missing.returncode == 2
    assert missing.stderr == (
        "error: no API key for openai: $MY_GATEWAY_KEY (named by --api-key-env) is not set\n"
    )


def test_an_empty_key_is_refused_and_nothing_is_stored(
    workdir: pathlib.Path, env: dict[str, str], home: pathlib.Path
) -> None:
    result = robota(["auth", "set", "openai"], env=env, cwd=workdir, input="\n")
    assert result.returncode == 2
    assert result.stderr == "error: no API key given for openai; nothing was stored\n"
    assert not _credential_file(home).exists()


def test_the_store_choice_is_checked(workdir: pathlib.Path, env: dict[str, str]) -> None:
    result = robota(
        ["auth", "status"], env={**env, "ROBOTA_CREDENTIAL_STORE": "vault"}, cwd=workdir
    )
    assert result.returncode == 2
    assert result.stderr == (
        "error: $ROBOTA_CREDENTIAL_STORE must be auto, keyring or file; got 'vault'\n"
    )


def test_a_credential_file_others_can_read_is_refused(
    workdir: pathlib.Path, env: dict[str, str], home: pathlib.Path
) -> None:
    assert robota(["auth", "set", "openai"], env=env, cwd=workdir, input=SECRET).returncode == 0
    _credential_file(home).chmod(0o644)
    result = robota(["run", "hi", "--model", "openai:gpt-4o"], env=env, cwd=workdir)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: cannot read the credential store: ")
    assert "mode 0644" in lines[0]
    assert SECRET not in result.stderr


def test_the_status_table_names_the_variables_the_adapters_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`robota auth status` reports the adapters' own lookup: their missing-key errors name the
    same variables, and `openai-compatible:` reads the base-URL variable the command names."""
    from robota.cli._build import COMPATIBLE_BASE_URL
    from robota.cli._keys import KEY_VARIABLES
    from robota.providers.anthropic import AnthropicProvider
    from robota.providers.gemini import GeminiProvider
    from robota.providers.openai import OpenAIProvider
    from robota.providers.openai_compatible import BASE_URL_VARIABLE

    adapters = {"openai": OpenAIProvider, "anthropic": AnthropicProvider, "gemini": GeminiProvider}
    for name in {variable for names in KEY_VARIABLES.values() for variable in names}:
        monkeypatch.delenv(name, raising=False)
    for service, adapter in adapters.items():
        with pytest.raises(ConfigurationError) as caught:
            adapter()
        assert caught.value.context == {"service": service, "variables": KEY_VARIABLES[service]}
    assert set(KEY_VARIABLES) == {*adapters, "openai-compatible"}
    assert KEY_VARIABLES["openai-compatible"] == ()
    assert COMPATIBLE_BASE_URL == BASE_URL_VARIABLE
