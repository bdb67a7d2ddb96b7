"""`robota run`/`chat` take ``--retries``, ``--fallback``, ``--max-cost`` and ``--max-tokens``
(issue 28: RetryPolicy, model fallback, UsageLimits).

The real command runs as a child process against replay servers on 127.0.0.1 answering in the
OpenAI-compatible wire format; what reached the wire is read from the requests they received.
"""

from __future__ import annotations

import pathlib

import pytest

from cli._support import chat_sse, robota
from providers.replay import Exchange, ReplayServer

_UNAVAILABLE = {"error": {"message": "the service is unavailable", "type": "server_error"}}


def _args(command: str, server: ReplayServer, *extra: str) -> list[str]:
    args = [command] if command == "chat" else [command, "hi"]
    return [*args, "--model", "openai-compatible:m", "--base-url", server.base_url + "/v1", *extra]


@pytest.mark.parametrize("command", ["run", "chat"])
def test_S42_retries_try_a_503_again_and_only_the_policy_retries(
    command: str, workdir: pathlib.Path, env: dict[str, str]
) -> None:
    script = [Exchange.json(503, _UNAVAILABLE), Exchange.sse(chat_sse("answer"))]
    with ReplayServer(script) as server:
        result = robota(
            _args(command, server, "--retries", "1"), env=env, cwd=workdir, input="hi\n"
        )
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    assert "answer" in result.stdout
    # One owner of retries: the policy's 2 attempts are the requests (the SDK's own are off).
    assert len(server.requests) == 2
    assert "retrying (attempt 2" in result.stderr


def test_S42_retries_0_makes_one_request_and_fails(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    script = [Exchange.json(503, _UNAVAILABLE)]
    with ReplayServer(script) as server:
        result = robota(_args("run", server, "--retries", "0"), env=env, cwd=workdir)
    assert result.returncode != 0
    assert len(server.requests) == 1
    assert "Traceback" not in result.stderr


def test_S30_fallback_moves_an_unavailable_model_to_the_next(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    # A fallback on the same provider prefix goes to the same endpoint with another model.
    script = [Exchange.json(503, _UNAVAILABLE), Exchange.sse(chat_sse("from the fallback"))]
    with ReplayServer(script) as server:
        result = robota(
            _args("run", server, "--retries", "0", "--fallback", "openai-compatible:backup"),
            env=env,
            cwd=workdir,
        )
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    assert "from the fallback" in result.stdout
    assert [r.json()["model"] for r in server.requests] == ["m", "backup"]
    assert "moving to openai-compatible:backup" in result.stderr


def test_S31_max_tokens_lowers_the_reply_cap_to_what_is_left(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([Exchange.sse(chat_sse("answer"))]) as server:
        result = robota(_args("run", server, "--max-tokens", "300"), env=env, cwd=workdir)
    assert result.returncode == 0, result.stderr
    cap = server.requests[0].json()["max_tokens"]
    assert 0 < cap < 300  # the budget less the request's estimated input


def test_S31_max_cost_on_a_model_without_a_price_is_refused_before_any_call(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([]) as server:
        result = robota(_args("run", server, "--max-cost", "0.5"), env=env, cwd=workdir)
    assert result.returncode != 0
    assert server.requests == []
    assert "no registered price" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--max-cost", "-1", "must be a non-negative amount of US dollars"),
        ("--max-cost", "nan", "must be a non-negative amount of US dollars"),
        ("--max-cost", "cheap", "not a number: 'cheap'"),
        ("--max-tokens", "0", "must be a positive number"),
        ("--retries", "-1", ""),
        ("--retries", "lots", ""),
    ],
)
def test_bad_values_are_usage_errors(
    flag: str, value: str, message: str, workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(
        ["run", "hi", "--model", "openai-compatible:m", flag, value], env=env, cwd=workdir
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
