"""`robota run`/`chat` take ``--temperature`` and ``--max-output-tokens`` (issue 26, S28).

The real command runs as a child process against the replay server on 127.0.0.1; what reached
the wire is read from the request the server received.
"""

from __future__ import annotations

import pathlib

import pytest

from cli._support import chat_sse, robota
from providers.replay import Exchange, ReplayServer


def _args(command: str, server: ReplayServer, *extra: str) -> list[str]:
    args = [command] if command == "chat" else [command, "hi"]
    return [*args, "--model", "openai-compatible:m", "--base-url", server.base_url + "/v1", *extra]


@pytest.mark.parametrize("command", ["run", "chat"])
def test_the_flags_reach_the_request(
    command: str, workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([Exchange.sse(chat_sse("answer"))]) as server:
        result = robota(
            _args(command, server, "--temperature", "0.25", "--max-output-tokens", "40"),
            env=env,
            cwd=workdir,
            input="hi\n",
        )
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    assert "answer" in result.stdout
    body = server.requests[0].json()
    assert body["temperature"] == 0.25
    assert body["max_tokens"] == 40  # the OpenAI-compatible default field


def test_without_the_flags_nothing_is_sent(workdir: pathlib.Path, env: dict[str, str]) -> None:
    with ReplayServer([Exchange.sse(chat_sse("answer"))]) as server:
        result = robota(_args("run", server), env=env, cwd=workdir)
    assert result.returncode == 0, result.stderr
    body = server.requests[0].json()
    assert "temperature" not in body
    assert "max_tokens" not in body


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--temperature", "3", "must be a number from 0 to 2"),
        ("--temperature", "warm", "not a number: 'warm'"),
        ("--temperature", "nan", "must be a number from 0 to 2"),
        ("--max-output-tokens", "0", "must be a positive number of tokens"),
        ("--max-output-tokens", "many", "not an integer: 'many'"),
    ],
)
@pytest.mark.parametrize("command", ["run", "chat"])
def test_bad_values_are_usage_errors(
    command: str, flag: str, value: str, message: str, workdir: pathlib.Path, env: dict[str, str]
) -> None:
    args = ["chat"] if command == "chat" else ["run", "hi"]
    result = robota(
        [*args, "--model", "openai-compatible:m", flag, value], env=env, cwd=workdir, input=""
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
