"""`robota run`: the real command against a local replay server."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import typing

import pytest

import robota as robota_lib
from cli._support import Child, chat_sse, closed_port, robota
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.cli._main import EFFORTS, PERMISSION_MODES
from robota.cli._output import format_arguments, shorten

CHAT_TOOL_CASSETTE = ("openai-chat", "test_run_stream_sync_streams_real_model")
RESPONSES_CASSETTE = ("openai-responses", "test_openai_responses_stream")


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_run_streams_the_answer_and_shows_tool_calls_usage_and_cost(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer(load_cassette(cassette_path(*CHAT_TOOL_CASSETTE))) as server:
        result = robota(
            [
                "run",
                "What is the capital of the UK? Use the tool, then answer.",
                "--model",
                "openai-compatible:gpt-4o-mini",
                "--base-url",
                server.base_url + "/v1",
                "--tools",
                "clitools:get_capital",
                "--system",
                "Be brief.",
            ],
            env=env,
            cwd=workdir,
        )
        server.assert_all_served()
        first, second = server.requests
    assert result.returncode == 0, result.stderr
    # stdout is the answer alone; everything about the run is on stderr.
    assert result.stdout == "The capital of the UK is London.\n"
    assert "-> get_capital(country='UK')" in result.stderr
    assert "<- London" in result.stderr
    assert "usage: 131 prompt + 24 completion = 155 total, 0 cached" in result.stderr
    # A compatible server's models are never priced by OpenAI's table: the cost is unknown.
    assert "cost: unknown" in result.stderr
    assert "model: gpt-4o-mini-2024-07-18" in result.stderr
    # The flags reached the wire: the system prompt, the tool, and the tool's real result.
    assert first.json()["messages"][0] == {"role": "system", "content": "Be brief."}
    assert [tool["function"]["name"] for tool in first.json()["tools"]] == ["get_capital"]
    assert second.json()["messages"][-1]["content"] == "London"


def test_run_prints_text_while_it_is_still_arriving(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    script = [Exchange.sse(chat_sse("first ", "second ", "third"), chunk_delay=0.4)]
    with ReplayServer(script) as server:
        child = Child(
            ["run", "go", "--model", "openai-compatible:m", "--base-url", server.base_url + "/v1"],
            env=env,
            cwd=workdir,
        )
        try:
            child.wait_for("first ")
            assert child.process.poll() is None  # the first words are out, the run goes on
            assert "third" not in child.stdout
            assert child.finish() == 0
        finally:
            child.kill()
    assert child.stdout == "first second third\n"
    assert "usage: 10 prompt + 5 completion = 15 total" in child.stderr


def test_run_json_over_the_openai_responses_api(workdir: pathlib.Path, env: dict[str, str]) -> None:
    with ReplayServer(load_cassette(cassette_path(*RESPONSES_CASSETTE))) as server:
        result = robota(
            [
                "run",
                "What is the capital of France?",
                "--model",
                "openai:gpt-4o",
                "--base-url",
                server.base_url + "/v1",
                "--tools",
                "clitools:get_capital",
                "--json",
            ],
            env={**env, "OPENAI_API_KEY": "test"},
            cwd=workdir,
        )
        server.assert_all_served()
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    body = json.loads(result.stdout)  # one JSON object and nothing else
    assert body["output"] == "The capital of France is Paris."
    assert body["status"] == "complete"
    assert body["stop_reason"] == "end_turn"
    assert body["model"] == "gpt-4o-2024-08-06"
    assert body["usage"] == {
        "prompt_tokens": 533,
        "completion_tokens": 25,
        "total_tokens": 558,
        "cached_tokens": 0,
        "partial": False,
    }
    assert body["cost"] == pytest.approx(0.0015825)
    assert body["rounds"] == 2
    assert body["tool_calls"] == [
        {
            "id": "call_kL0PCQV7M2WMoVX8V8OtYSAL",
            "name": "get_capital",
            "arguments": {"country": "France"},
            "status": "completed",
            "result": "Paris",
            "is_error": False,
        }
    ]
    assert [r.path for r in requests] == ["/v1/responses", "/v1/responses"]
    assert requests[0].headers["authorization"] == "Bearer test"


def test_run_passes_effort_and_the_chat_api_to_openai(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([Exchange.sse(chat_sse("ok", model="o3-mini"))]) as server:
        result = robota(
            [
                "run",
                "hi",
                "--model",
                "openai:o3-mini",
                "--api",
                "chat",
                "--effort",
                "high",
                "--base-url",
                server.base_url + "/v1",
                "--json",
            ],
            env={**env, "OPENAI_API_KEY": "test"},
            cwd=workdir,
        )
        [sent] = server.requests
    assert result.returncode == 0, result.stderr
    assert sent.path == "/v1/chat/completions"
    assert sent.json()["reasoning_effort"] == "high"
    effort = json.loads(result.stdout)["effort"]
    assert effort == {"requested": "high", "level": "high", "native_control_sent": True}


@pytest.mark.parametrize(
    ("model", "vendor", "variable"),
    [
        ("openai:gpt-5-mini", "openai", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "ANTHROPIC_API_KEY"),
        ("gemini:gemini-2.5-flash", "gemini", "GEMINI_API_KEY (or GOOGLE_API_KEY)"),
    ],
)
def test_a_missing_key_is_one_line_and_exit_code_2(
    workdir: pathlib.Path, env: dict[str, str], model: str, vendor: str, variable: str
) -> None:
    """All three ways are named: the variable, the store, and the explicit --api-key-env."""
    result = robota(["run", "hi", "--model", model], env=env, cwd=workdir)
    assert result.returncode == 2
    assert _one_line_error(result) == (
        f"error: no API key for {vendor}: set {variable}, run `robota auth set {vendor}`, "
        "or pass --api-key-env VAR"
    )
    assert result.stdout == ""


def test_an_unknown_prefix_lists_the_registered_ones(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(["run", "hi", "--model", "nosuch:model"], env=env, cwd=workdir)
    assert result.returncode == 2
    line = _one_line_error(result)
    assert "unknown model prefix 'nosuch'" in line
    assert "registered prefixes: anthropic, gemini, openai" in line
    assert "openai-compatible:MODEL --base-url URL" in line


def test_a_model_without_a_prefix_says_how_to_write_one(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(["run", "hi", "--model", "gpt-4o"], env=env, cwd=workdir)
    assert result.returncode == 2
    assert "names no provider: write PREFIX:MODEL" in _one_line_error(result)


def test_an_unreachable_server_is_one_line_and_exit_code_1(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = robota(
        ["run", "hi", "--model", "openai-compatible:m", "--base-url", url], env=env, cwd=workdir
    )
    assert result.returncode == 1
    assert _one_line_error(result).startswith(f"error: cannot reach {url}: ")


def test_a_provider_refusal_is_its_message_and_exit_code_1(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    refusal = Exchange.json(
        401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    )
    with ReplayServer([refusal]) as server:
        result = robota(
            ["run", "hi", "--model", "openai:gpt-4o", "--base-url", server.base_url + "/v1"],
            env={**env, "OPENAI_API_KEY": "wrong"},
            cwd=workdir,
        )
    assert result.returncode == 1
    assert "Incorrect API key provided" in _one_line_error(result)


def test_json_mode_reports_a_failure_as_an_object_too(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(["run", "hi", "--model", "openai:gpt-4o", "--json"], env=env, cwd=workdir)
    assert result.returncode == 2
    assert json.loads(result.stdout) == {
        "status": "error",
        "error": {
            "message": "no API key for openai: set OPENAI_API_KEY, run `robota auth set openai`, "
            "or pass --api-key-env VAR",
            "exit_code": 2,
        },
    }
    _one_line_error(result)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("clitools", "must be module:attribute"),
        ("no_such_module_here:f", "cannot import no_such_module_here: ModuleNotFoundError"),
        ("clitools:missing", "clitools has no attribute 'missing'"),
        ("clitools:NOT_A_TOOL", "int is not a tool, a function, or a list of them"),
    ],
)
def test_a_bad_tools_spec_is_one_line_and_exit_code_2(
    workdir: pathlib.Path, env: dict[str, str], spec: str, expected: str
) -> None:
    result = robota(
        [
            *("run", "hi", "--model", "openai-compatible:m"),
            *("--base-url", "http://127.0.0.1:1/v1", "--tools", spec),
        ],
        env=env,
        cwd=workdir,
    )
    assert result.returncode == 2
    line = _one_line_error(result)
    assert line.startswith(f"error: --tools {spec!r}")
    assert expected in line


def test_tools_accepts_a_list_and_a_decorated_tool(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([Exchange.sse(chat_sse("fine"))]) as server:
        result = robota(
            [
                *("run", "hi", "--model", "openai-compatible:m"),
                *("--base-url", server.base_url + "/v1", "--tools", "clitools:TOOLS"),
            ],
            env=env,
            cwd=workdir,
        )
        [sent] = server.requests
    assert result.returncode == 0, result.stderr
    assert [tool["function"]["name"] for tool in sent.json()["tools"]] == ["get_capital", "shout"]


def test_ask_refuses_a_tool_call_when_no_one_answers(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer(load_cassette(cassette_path(*CHAT_TOOL_CASSETTE))) as server:
        result = robota(
            [
                *("run", "capital?", "--model", "openai-compatible:gpt-4o-mini"),
                *("--base-url", server.base_url + "/v1", "--tools", "clitools:get_capital"),
                "--ask",
            ],
            env=env,
            cwd=workdir,
            input="",  # stdin closed: the question gets no answer
        )
        tool_message = server.requests[1].json()["messages"][-1]
    assert result.returncode == 0, result.stderr
    assert "allow get_capital(country='UK')?" in result.stderr
    assert "<- [refused]" in result.stderr
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == "The user declined this call: no one answered."


def test_help_lists_the_commands_and_loads_neither_rich_nor_a_provider() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "robota", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    for command in ("run", "chat", "auth", "demo", "openai-compatible:MODEL --base-url URL"):
        assert command in result.stdout
    probe = (
        "import sys; from robota.cli._main import _parser; _parser().format_help(); "
        "print(sorted(m for m in ('rich', 'openai', 'robota.providers') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert loaded.stdout.strip() == "[]"


def test_the_parser_choices_match_the_library() -> None:
    assert ("auto", *robota_lib.EFFORT_LEVELS) == EFFORTS
    assert typing.get_args(robota_lib.PermissionMode) == PERMISSION_MODES


def test_long_tool_results_and_arguments_are_shortened() -> None:
    assert shorten("short") == "short"
    assert shorten("a\nb\nc\nd\ne") == "a\nb\nc... (+4 chars)"
    assert shorten("x" * 1000) == "x" * 300 + "... (+700 chars)"
    assert format_arguments('{"country": "UK", "n": 2}') == "country='UK', n=2"
    assert format_arguments("not json") == "not json"
    assert len(format_arguments({"text": "y" * 500})) < 240


def test_ctrl_c_cancels_the_run_keeps_what_arrived_and_exits_130(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    words = [f"w{index} " for index in range(20)]
    with ReplayServer([Exchange.sse(chat_sse(*words), chunk_delay=0.5)]) as server:
        child = Child(
            ["run", "go", "--model", "openai-compatible:m", "--base-url", server.base_url + "/v1"],
            env=env,
            cwd=workdir,
        )
        try:
            child.wait_for("w1 ")
            os.kill(child.process.pid, signal.SIGINT)
            assert child.finish() == 130
        finally:
            child.kill()
    assert child.stdout.startswith("w0 w1 ")
    assert "w19" not in child.stdout
    assert "interrupted: the answer above is what arrived before Ctrl-C" in child.stderr
    assert "Traceback" not in child.stderr


@pytest.mark.parametrize(
    ("model", "cassette", "variable", "text", "answered", "suffix"),
    [
        (
            "anthropic:claude-sonnet-4-5",
            ("anthropic", "test_request_stream_fallback_for_high_max_tokens"),
            "ANTHROPIC_API_KEY",
            "2",
            "claude-sonnet-4-5-20250929",
            "",
        ),
        (
            "gemini:gemini-2.0-flash-exp",
            ("gemini", "test_google_model_stream"),
            "GEMINI_API_KEY",
            "The capital of France is Paris.\n",
            None,
            "/",
        ),
    ],
)
def test_run_works_with_the_anthropic_and_gemini_providers(
    workdir: pathlib.Path,
    env: dict[str, str],
    model: str,
    cassette: tuple[str, str],
    variable: str,
    text: str,
    answered: str | None,
    suffix: str,
) -> None:
    with ReplayServer(load_cassette(cassette_path(*cassette))) as server:
        result = robota(
            ["run", "x", "--model", model, "--base-url", server.base_url + suffix, "--json"],
            env={**env, variable: "test"},
            cwd=workdir,
        )
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["output"] == text
    assert body["status"] == "complete"
    if answered is not None:
        assert body["model"] == answered
    assert body["usage"]["prompt_tokens"] > 0
