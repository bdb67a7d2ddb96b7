"""Model strings in Python find the same settings the command does (issue 25).

``robota.Agent("openai:…")`` uses the key ``robota auth set openai`` stored (the real command,
run as a child process, writes it to an owner-only file in a temporary directory), by the one
order explicit → environment → stored; ``robota.Agent("openai-compatible:NAME")`` takes the
server's root from ``base_url=`` or ``$OPENAI_COMPATIBLE_BASE_URL``. Requests go to a real HTTP
server on 127.0.0.1 (the replay harness), which records the ``Authorization`` header sent.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import robota
from cli._support import chat_sse
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.testing import ScriptedProvider

STORED = "sk-stored-not-a-real-key"
FROM_ENV = "sk-env-not-a-real-key"
EXPLICIT = "sk-explicit-not-a-real-key"


def get_capital(country: str) -> str:
    """The capital city of a country.

    Args:
        country: The country's English name.
    """
    return {"France": "Paris"}.get(country, "unknown")


@pytest.fixture
def config_home(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The file credential store under a temporary config directory; no key variable set."""
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("ROBOTA_CREDENTIAL_STORE", "file")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_COMPATIBLE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


def _auth_set(provider: str, secret: str) -> None:
    """Store ``secret`` with the real ``robota auth set`` in this test's config directory."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ["XDG_CONFIG_HOME"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "ROBOTA_CREDENTIAL_STORE": "file",
        "LANG": "C.UTF-8",
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    done = subprocess.run(
        [sys.executable, "-m", "robota", "auth", "set", provider],
        input=secret,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    stored = pathlib.Path(os.environ["XDG_CONFIG_HOME"]) / "robota" / "credentials.json"
    assert stored.stat().st_mode & 0o777 == 0o600


async def _run_openai(**agent_options: str) -> str:
    """Run one capital question through ``Agent("openai:gpt-4o")``; the key the server got."""
    cassette = load_cassette(cassette_path("openai-responses", "test_openai_responses_stream"))
    with ReplayServer(cassette) as server:
        async with robota.Agent(
            "openai:gpt-4o", base_url=server.base_url + "/v1", tools=[get_capital], **agent_options
        ) as agent:
            result = await agent.run("capital?")
        sent = server.requests[0].headers["authorization"]
    assert result.output == "The capital of France is Paris."
    return sent


async def test_agent_uses_the_key_robota_auth_set_stored(config_home: pathlib.Path) -> None:
    _auth_set("openai", STORED)
    assert await _run_openai() == f"Bearer {STORED}"


async def test_agent_key_order_is_explicit_then_environment_then_stored(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _auth_set("openai", STORED)
    monkeypatch.setenv("OPENAI_API_KEY", FROM_ENV)
    assert await _run_openai() == f"Bearer {FROM_ENV}"
    assert await _run_openai(api_key=EXPLICIT) == f"Bearer {EXPLICIT}"


def test_agent_without_a_key_names_every_way_to_give_one(config_home: pathlib.Path) -> None:
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent("openai:gpt-4o")
    assert caught.value.message == (
        "OpenAIProvider needs an API key for openai: pass api_key=, set OPENAI_API_KEY, or run "
        "`robota auth set openai`"
    )


def test_agent_reports_a_stored_key_file_it_cannot_trust(config_home: pathlib.Path) -> None:
    _auth_set("openai", STORED)
    (config_home / "robota" / "credentials.json").chmod(0o644)
    with pytest.raises(robota.CredentialStoreError) as caught:
        robota.Agent("openai:gpt-4o")
    assert caught.value.message.startswith("cannot read the credential store: ")
    assert "mode 0644" in caught.value.message
    assert STORED not in caught.value.message


def _answer(text: str) -> Exchange:
    return Exchange.sse(chat_sse(text, model="local-model"))


async def test_openai_compatible_model_string_with_base_url(config_home: pathlib.Path) -> None:
    with ReplayServer([_answer("hello from the local server")]) as server:
        async with robota.Agent(
            "openai-compatible:local-model", base_url=server.base_url + "/v1"
        ) as agent:
            result = await agent.run("hi")
        request = server.requests[0]
    assert result.output == "hello from the local server"
    assert request.path_only == "/v1/chat/completions"
    assert request.json()["model"] == "local-model"
    assert request.headers["authorization"] == "Bearer not-needed"  # no key anywhere


async def test_openai_compatible_model_string_reads_the_base_url_variable_and_stored_key(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _auth_set("openai-compatible", STORED)
    monkeypatch.setenv("OPENAI_API_KEY", FROM_ENV)  # never sent to another server
    with ReplayServer([_answer("from env")]) as server:
        monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", server.base_url + "/v1")
        async with robota.Agent("openai-compatible:llama3:8b") as agent:
            result = await agent.run("hi")
        request = server.requests[0]
    assert result.output == "from env"
    assert request.json()["model"] == "llama3:8b"  # everything after the first colon
    assert request.headers["authorization"] == f"Bearer {STORED}"


def test_openai_compatible_without_a_base_url_says_both_ways(config_home: pathlib.Path) -> None:
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent("openai-compatible:m")
    assert caught.value.message == (
        "OpenAICompatibleProvider needs the server's API root: pass base_url= (e.g. "
        "'http://127.0.0.1:8080/v1') or set OPENAI_COMPATIBLE_BASE_URL"
    )
    assert "unknown model prefix" not in caught.value.message


def test_openai_compatible_with_an_empty_base_url_variable_says_so(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", "")
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent("openai-compatible:m")
    assert caught.value.message == (
        "$OPENAI_COMPATIBLE_BASE_URL is set but empty; set it to the server's API root (e.g. "
        "'http://127.0.0.1:8080/v1') or pass base_url="
    )


def test_openai_compatible_with_a_base_url_variable_that_is_not_a_url_names_the_variable(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issue 25: the message named `base_url None`, not the variable the user set."""
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", "not-a-url")
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent("openai-compatible:m")
    assert caught.value.message == (
        "$OPENAI_COMPATIBLE_BASE_URL 'not-a-url' is not a URL: set it to the server's API root "
        "with http:// or https://, e.g. 'http://127.0.0.1:8080/v1'"
    )


def test_openai_compatible_with_a_base_url_argument_that_is_not_a_url_names_the_argument(
    config_home: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent("openai-compatible:m", base_url="not-a-url")
    assert caught.value.message == (
        "OpenAICompatibleProvider base_url 'not-a-url' is not a URL: write the server's API "
        "root with http:// or https://, e.g. 'http://127.0.0.1:8080/v1'"
    )


def test_base_url_and_api_key_with_an_explicit_provider_are_refused() -> None:
    provider = ScriptedProvider(["hi"])
    for options in ({"base_url": "http://127.0.0.1:9/v1"}, {"api_key": EXPLICIT}):
        with pytest.raises(robota.ConfigurationError, match="pass them to that provider"):
            robota.Agent("m", provider=provider, **options)
