"""Settings files of `robota run`/`chat` in the Claude Code format (issue 30, item 2).

`~/.robota/settings.json` (user), `WORKSPACE/.robota/settings.json` (project) and
`WORKSPACE/.robota/settings.local.json` (local): rules and hooks merge, a deny anywhere wins, the
highest file sets `defaultMode`, flags win over files; a bad file is one `error:` line naming it
(exit code 2). The loader is tested on real files; the precedence also through the real command
against the replay server.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from cli._support import chat_sse, robota, tool_call_sse
from providers.replay import Exchange, ReplayServer
from robota.cli._errors import CliError
from robota.cli._settings import load_settings


def _write(path: pathlib.Path, settings: Any) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(settings if isinstance(settings, str) else json.dumps(settings))
    return path


@pytest.fixture
def dirs(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """(workspace, home), both empty."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    return workspace, home


def _user(home: pathlib.Path) -> pathlib.Path:
    return home / ".robota" / "settings.json"


def _project(workspace: pathlib.Path) -> pathlib.Path:
    return workspace / ".robota" / "settings.json"


def _local(workspace: pathlib.Path) -> pathlib.Path:
    return workspace / ".robota" / "settings.local.json"


# --- the loader ------------------------------------------------------------------------------


def test_no_files_means_no_settings(dirs: tuple[pathlib.Path, pathlib.Path]) -> None:
    workspace, home = dirs
    settings = load_settings(workspace, home=str(home))
    assert settings.files == ()
    assert not settings.has_permissions
    assert settings.hooks == {}


def test_rules_from_every_level_merge_user_first(dirs: tuple[pathlib.Path, pathlib.Path]) -> None:
    workspace, home = dirs
    _write(_user(home), {"permissions": {"allow": ["Read(docs/**)"], "deny": ["Read(.env)"]}})
    _write(_project(workspace), {"permissions": {"allow": ["Read(src/**)"], "ask": ["LS"]}})
    _write(_local(workspace), {"permissions": {"deny": ["Grep"]}})
    settings = load_settings(workspace, home=str(home))
    assert settings.allow == ("Read(docs/**)", "Read(src/**)")
    assert settings.deny == ("Read(.env)", "Grep")
    assert settings.ask == ("LS",)
    assert settings.files == tuple(
        str(path) for path in (_user(home), _project(workspace), _local(workspace))
    )


@pytest.mark.parametrize(
    ("user", "project", "local", "expected"),
    [
        ("plan", None, None, "plan"),
        ("plan", "acceptEdits", None, "accept_edits"),
        ("plan", "acceptEdits", "bypassPermissions", "bypass"),
        (None, "default", "plan", "plan"),
        ("accept_edits", None, None, "accept_edits"),
    ],
)
def test_default_mode_local_over_project_over_user(
    dirs: tuple[pathlib.Path, pathlib.Path],
    user: str | None,
    project: str | None,
    local: str | None,
    expected: str,
) -> None:
    workspace, home = dirs
    for path, mode in ((_user(home), user), (_project(workspace), project),
                       (_local(workspace), local)):  # fmt: skip
        if mode is not None:
            _write(path, {"permissions": {"defaultMode": mode}})
    assert load_settings(workspace, home=str(home)).default_mode == expected


def test_hooks_from_every_file_merge_and_the_highest_disable_all_hooks_wins(
    dirs: tuple[pathlib.Path, pathlib.Path],
) -> None:
    workspace, home = dirs
    user_hook = {"hooks": [{"type": "command", "command": "echo user"}]}
    project_hook = {"hooks": [{"type": "command", "command": "echo project"}]}
    _write(_user(home), {"hooks": {"UserPromptSubmit": [user_hook]}})
    _write(_project(workspace), {"hooks": {"UserPromptSubmit": [project_hook]}})
    assert load_settings(workspace, home=str(home)).hooks == {
        "UserPromptSubmit": [user_hook, project_hook]
    }
    _write(_local(workspace), {"disableAllHooks": True})
    assert load_settings(workspace, home=str(home)).hooks == {}


def test_the_home_directory_as_workspace_reads_its_file_once(tmp_path: pathlib.Path) -> None:
    _write(_user(tmp_path), {"permissions": {"allow": ["LS"]}})
    settings = load_settings(tmp_path, home=str(tmp_path))
    assert settings.allow == ("LS",)


def test_home_defaults_to_the_home_variable(
    dirs: tuple[pathlib.Path, pathlib.Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, home = dirs
    monkeypatch.setenv("HOME", str(home))
    _write(_user(home), {"permissions": {"deny": ["Grep"]}})
    assert load_settings(workspace).deny == ("Grep",)


def test_other_claude_code_keys_are_ignored(dirs: tuple[pathlib.Path, pathlib.Path]) -> None:
    workspace, home = dirs
    _write(_project(workspace), {"model": "x", "env": {"A": "1"}, "permissions": {
        "additionalDirectories": ["../x"], "allow": ["LS"]}})  # fmt: skip
    assert load_settings(workspace, home=str(home)).allow == ("LS",)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON: "),
        ("[1, 2]", "expected a JSON object, got list"),
        ({"permissions": []}, '"permissions" must be an object'),
        ({"permissions": {"allow": "Read"}}, '"permissions.allow" must be a list of rule strings'),
        ({"permissions": {"deny": [1]}}, '"permissions.deny" must be a list of rule strings'),
        ({"permissions": {"defaultMode": "dontAsk"}}, "permissions.defaultMode must be one of"),
        ({"permissions": {"ask": ["Read(unclosed"]}}, ""),
        ({"hooks": []}, '"hooks" must be an object'),
        ({"hooks": {"NoSuchEvent": []}}, "NoSuchEvent"),
        ({"disableAllHooks": "yes"}, "disableAllHooks must be true or false"),
    ],
)
def test_a_bad_file_is_one_error_naming_it(
    dirs: tuple[pathlib.Path, pathlib.Path], content: Any, message: str
) -> None:
    workspace, home = dirs
    path = _write(_local(workspace), content)
    with pytest.raises(CliError) as caught:
        load_settings(workspace, home=str(home))
    assert caught.value.exit_code == 2
    assert caught.value.message.startswith(f"{path}: ")
    assert message in caught.value.message
    assert "\n" not in caught.value.message


# --- through the command ---------------------------------------------------------------------

TOUCH_TOOL = '''
import robota


@robota.tool(risk="modify", argument=robota.PermissionArgument("path", "path"))
def touch(path: str) -> str:
    """Create an empty file.

    Args:
        path: Where.
    """
    open(path, "w").close()
    return f"touched {path}"
'''


def _chat(server: ReplayServer, *extra: str) -> list[str]:
    return ["chat", "--model", "openai-compatible:m", "--base-url", server.base_url + "/v1",
            *extra]  # fmt: skip


def test_a_deny_in_the_user_file_wins_over_an_allow_in_the_local_file(
    workdir: pathlib.Path, env: dict[str, str], home: pathlib.Path
) -> None:
    # S21: nothing later softens a denial — a deny at any level beats an allow at any level.
    (workdir / ".env").write_text("KEY=secret\n")
    _write(_user(home), {"permissions": {"deny": ["Read(.env)"]}})
    _write(_local(workdir), {"permissions": {"allow": ["Read(.env)"],
                                             "defaultMode": "bypassPermissions"}})  # fmt: skip
    script = [
        Exchange.sse(tool_call_sse("Read", json.dumps({"path": ".env"}))),
        Exchange.sse(chat_sse("Refused.")),
    ]
    with ReplayServer(script) as server:
        result = robota(
            _chat(server, "--tools", "builtin"), env=env, cwd=workdir, input="read .env\n/exit\n"
        )
        tool_message = server.requests[1].json()["messages"][-1]
    assert result.returncode == 0, result.stderr
    assert "<- [refused]" in result.stderr
    assert "secret" not in tool_message["content"]


def test_the_project_default_mode_gates_tools_and_the_flag_overrides_it(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    (workdir / "sectools.py").write_text(TOUCH_TOOL)
    _write(_project(workdir), {"permissions": {"defaultMode": "plan"}})
    turn = [
        Exchange.sse(tool_call_sse("touch", json.dumps({"path": "made.txt"}))),
        Exchange.sse(chat_sse("Done.")),
    ]
    with ReplayServer(list(turn)) as server:
        planned = robota(
            _chat(server, "--tools", "sectools:touch"), env=env, cwd=workdir, input="go\n/exit\n"
        )
    assert planned.returncode == 0, planned.stderr
    assert "<- [refused]" in planned.stderr  # plan mode refuses a modify call, without asking
    assert "allow touch" not in planned.stderr
    assert not (workdir / "made.txt").exists()
    with ReplayServer(list(turn)) as server:
        flagged = robota(
            _chat(server, "--tools", "sectools:touch", "--permission-mode", "accept_edits"),
            env=env,
            cwd=workdir,
            input="go\n/exit\n",
        )
    assert flagged.returncode == 0, flagged.stderr
    assert "<- touched made.txt" in flagged.stderr
    assert (workdir / "made.txt").exists()


def test_hooks_of_the_settings_files_and_of_the_hooks_flag_all_run(
    workdir: pathlib.Path, env: dict[str, str], home: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()

    def hook(name: str) -> dict[str, Any]:
        command = f"touch {marks / name}"
        return {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}

    _write(_user(home), {"hooks": hook("user")})
    _write(_project(workdir), {"hooks": hook("project")})
    flag_file = _write(tmp_path / "flag-hooks.json", {"hooks": hook("flag")})
    with ReplayServer([Exchange.sse(chat_sse("hi"))]) as server:
        result = robota(
            _chat(server, "--hooks", str(flag_file)), env=env, cwd=workdir, input="hi\n/exit\n"
        )
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in marks.iterdir()) == ["flag", "project", "user"]


def test_a_bad_settings_file_stops_the_command_with_one_line(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    path = _write(_project(workdir), '{"permissions": {"allow": "Read"}}')
    result = robota(
        ["run", "hi", "--model", "openai-compatible:m", "--base-url", "http://127.0.0.1:9/v1"],
        env=env,
        cwd=workdir,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f'error: {path}: "permissions.allow" must be a list of rule strings, e.g. ["Read(src/**)"]'
    ]
