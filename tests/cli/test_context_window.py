"""`robota run` and the context window (issue 25): a run stopped by the pre-send guard never
exits 0 with empty output, and an unknown window is said out loud.

The real command runs as a child process against a real HTTP server on 127.0.0.1 (the replay
server) that reports a 4096-token window the way llama.cpp's server does.
"""

from __future__ import annotations

import json
import pathlib
import subprocess

from cli._support import chat_sse, robota
from providers.replay import Exchange, ReplayServer

BIG_PROMPT = "word " * 20_000  # about 25,000 estimated tokens
LLAMA_MODELS = {
    "object": "list",
    "data": [
        {"id": "tiny", "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx_train": 4096}}
    ],
}
ROUTES = {("GET", "/v1/models"): Exchange.json(200, LLAMA_MODELS)}


def _run(
    server: ReplayServer, env: dict[str, str], cwd: pathlib.Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    args = ["run", "-", "--model", "openai-compatible:tiny", "--base-url", server.base_url + "/v1"]
    return robota([*args, *extra], env=env, cwd=cwd, input=BIG_PROMPT)


def test_a_prompt_past_the_reported_window_exits_3_with_the_reason_on_one_line(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([], routes=ROUTES) as server:
        result = _run(server, env, workdir)
    assert result.returncode == 3, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: The request was not sent: it needs about ")
    assert "4,096-token context window" in lines[0]
    assert server.requests == []  # refused before sending
    server.assert_all_served()


def test_json_mode_records_the_stop_and_still_exits_3(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([], routes=ROUTES) as server:
        result = _run(server, env, workdir, "--json")
    assert result.returncode == 3
    body = json.loads(result.stdout)
    assert body["stop_reason"] == "context_limit"
    assert body["context_window"] == {"tokens": 4096, "source": "server"}
    assert result.stderr.startswith("error: The request was not sent")


def test_the_context_window_flag_wins_over_the_server(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([Exchange.sse(chat_sse("fits", model="tiny"))], routes=ROUTES) as server:
        result = _run(server, env, workdir, "--context-window", "1000000")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fits\n"
    assert server.questions == []  # nothing to ask: the caller said


def test_an_unknown_window_is_stated_on_stderr(workdir: pathlib.Path, env: dict[str, str]) -> None:
    # /v1/models and /props answer 404: the window is unknown, nothing is assumed.
    with ReplayServer([Exchange.sse(chat_sse("answer", model="tiny"))]) as server:
        result = _run(server, env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "answer\n"
    assert "context window of tiny is unknown" in result.stderr
    assert "--context-window N" in result.stderr


def test_a_non_positive_context_window_is_a_usage_error(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(
        ["run", "hi", "--model", "openai-compatible:tiny", "--context-window", "0"],
        env=env,
        cwd=workdir,
    )
    assert result.returncode == 2
    assert "must be a positive number of tokens" in result.stderr
