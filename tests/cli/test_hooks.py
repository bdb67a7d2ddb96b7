"""`robota run`/`chat --hooks FILE`: hooks from a Claude-Code-style settings file (S22, issue 27).

The real command runs as a child process against the replay server on 127.0.0.1; the hooks are
real shell scripts the test writes.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from cli._support import chat_sse, robota
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette

CHAT_TOOL_CASSETTE = ("openai-chat", "test_run_stream_sync_streams_real_model")


def _settings(workdir: pathlib.Path, hooks: dict[str, Any]) -> str:
    path = workdir / "settings.json"
    path.write_text(json.dumps({"hooks": hooks, "permissions": {"allow": []}}))
    return str(path)


def _command_hook(workdir: pathlib.Path, name: str, body: str) -> list[dict[str, Any]]:
    script = workdir / f"{name}.sh"
    script.write_text(f'cat > "{workdir / (name + ".json")}"\n{body}\n')
    return [{"hooks": [{"type": "command", "command": f"sh {script}"}]}]


def _args(command: str, server: ReplayServer, settings: str, *extra: str) -> list[str]:
    args = [command] if command == "chat" else [command, "paste the key"]
    return [
        *args,
        *("--model", "openai-compatible:m", "--base-url", server.base_url + "/v1"),
        *("--hooks", settings, *extra),
    ]


def test_a_user_prompt_submit_deny_ends_the_run_with_one_line_and_exit_1(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    settings = _settings(
        workdir,
        {"UserPromptSubmit": _command_hook(workdir, "p", 'echo "no secrets here" >&2; exit 2')},
    )
    with ReplayServer([]) as server:
        result = robota(_args("run", server, settings), env=env, cwd=workdir)
        assert server.requests == []  # no model call
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "error: a UserPromptSubmit hook blocked the prompt: no secrets here"
    )
    assert "Traceback" not in result.stderr
    payload = json.loads((workdir / "p.json").read_text())
    assert payload == payload | {"hook_event_name": "UserPromptSubmit", "prompt": "paste the key"}


def test_a_blocked_chat_turn_prints_the_error_and_the_session_goes_on(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    marker = workdir / "seen"
    # Blocks the first prompt only.
    body = f'if [ -e "{marker}" ]; then exit 0; fi\ntouch "{marker}"\necho "not that" >&2; exit 2'
    settings = _settings(workdir, {"UserPromptSubmit": _command_hook(workdir, "c", body)})
    with ReplayServer([Exchange.sse(chat_sse("second answer"))]) as server:
        result = robota(
            _args("chat", server, settings), env=env, cwd=workdir, input="first\nsecond\n/exit\n"
        )
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    assert "a UserPromptSubmit hook blocked the prompt: not that" in result.stderr
    assert "second answer" in result.stdout


def test_user_prompt_submit_context_reaches_the_model(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    settings = _settings(
        workdir, {"UserPromptSubmit": _command_hook(workdir, "x", "echo branch: main")}
    )
    with ReplayServer([Exchange.sse(chat_sse("ok"))]) as server:
        result = robota(_args("run", server, settings), env=env, cwd=workdir)
    assert result.returncode == 0, result.stderr
    sent = json.dumps(server.requests[0].json()["messages"])
    assert "branch: main" in sent


def test_a_pre_tool_use_hook_runs_without_a_permission_flag(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    # PreToolUse needs the gate: --hooks alone gates in bypass mode, so the hook's deny holds.
    settings = _settings(
        workdir,
        {"PreToolUse": _command_hook(workdir, "t", 'echo "not today" >&2; exit 2')},
    )
    with ReplayServer(load_cassette(cassette_path(*CHAT_TOOL_CASSETTE))) as server:
        result = robota(
            [
                *("run", "capital?", "--model", "openai-compatible:gpt-4o-mini"),
                *("--base-url", server.base_url + "/v1", "--tools", "clitools:get_capital"),
                *("--hooks", settings),
            ],
            env=env,
            cwd=workdir,
        )
        tool_message = server.requests[1].json()["messages"][-1]
    assert result.returncode == 0, result.stderr
    assert tool_message["role"] == "tool"
    assert "not today" in tool_message["content"]
    payload = json.loads((workdir / "t.json").read_text())
    assert payload["tool_name"] == "get_capital"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not JSON"),
        ('{"permissions": {}}', 'expected a settings object with a "hooks" object'),
        ('{"hooks": {"BeforeEverything": []}}', "unknown hook event 'BeforeEverything'"),
        (
            '{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/"}]}]}}',
            'the command line runs only "type": "command" hooks',
        ),
    ],
)
def test_a_bad_settings_file_is_one_line_and_exit_2(
    content: str, message: str, workdir: pathlib.Path, env: dict[str, str]
) -> None:
    path = workdir / "settings.json"
    path.write_text(content)
    result = robota(
        [
            "run",
            "hi",
            "--model",
            "openai-compatible:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--hooks",
            str(path),
        ],
        env=env,
        cwd=workdir,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: --hooks {path}: ")
    assert message in line


def test_a_missing_settings_file_is_one_line_and_exit_2(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(
        [
            "run",
            "hi",
            "--model",
            "openai-compatible:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--hooks",
            "nowhere.json",
        ],
        env=env,
        cwd=workdir,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: --hooks nowhere.json: cannot read it")


def test_disable_all_hooks_in_the_settings_file_runs_none(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    # Claude Code's settings format: "disableAllHooks": true turns every configured hook off.
    path = workdir / "settings.json"
    hooks = {"UserPromptSubmit": _command_hook(workdir, "d", "exit 2")}
    path.write_text(json.dumps({"hooks": hooks, "disableAllHooks": True}))
    with ReplayServer([Exchange.sse(chat_sse("ok"))]) as server:
        result = robota(_args("run", server, str(path)), env=env, cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert not (workdir / "d.json").exists()  # the hook never ran
    path.write_text(json.dumps({"disableAllHooks": True}))  # no "hooks" object at all
    with ReplayServer([Exchange.sse(chat_sse("ok"))]) as server:
        result = robota(_args("run", server, str(path)), env=env, cwd=workdir)
    assert result.returncode == 0, result.stderr
    path.write_text(json.dumps({"hooks": hooks, "disableAllHooks": "yes"}))
    with ReplayServer([]) as server:
        result = robota(_args("run", server, str(path)), env=env, cwd=workdir)
    assert result.returncode == 2
    assert "disableAllHooks must be true or false" in result.stderr
