"""Adversarial review of the read-only tools (issue 30): each test names a defect it pins.

S05: the path a tool opens is the path containment judged; S12: the path a permission rule
judges is the same canonical path the tool opens.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

import robota
import robota.host
import robota.tools
from robota.testing import ScriptedProvider
from robota.tools import _workspace


@pytest.fixture
def project(workspace: pathlib.Path) -> pathlib.Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("sk-live-123\n")
    return workspace


async def _reads(project: pathlib.Path, policy: robota.PermissionPolicy, *paths: str) -> list[str]:
    calls: list[Any] = [("Read", {"path": p}) for p in paths]
    agent = robota.Agent(
        provider=ScriptedProvider([calls, "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=project),
        tool_gate=robota.PermissionGate(policy, robota.host.permission_context(project)),
    )
    await agent.run("read")
    return [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]


# S12: a `\xNN` (or octal, or `\n`) spelling the gate judges literally must not be decoded by
# the tool into another path: `\x73ecrets` is `secrets`, `\x2e\x2e` is `..`.
ESCAPED = [
    "\\x73ecrets/key.txt",
    "src/\\x2e\\x2e/secrets/key.txt",
    "src\\x2f..\\x2fsecrets/key.txt",
    "src/\\056\\056/secrets/key\\x2etxt",
]


@pytest.mark.parametrize("path", ESCAPED)
async def test_s12_an_escaped_spelling_does_not_slip_past_a_deny_rule(
    project: pathlib.Path, path: str
) -> None:
    (result,) = await _reads(project, robota.PermissionPolicy(deny=["Read(secrets/**)"]), path)
    assert "sk-live" not in result


@pytest.mark.parametrize("path", ESCAPED[1:])
async def test_s12_an_escaped_spelling_does_not_widen_an_allow_rule(
    project: pathlib.Path, path: str
) -> None:
    policy = robota.PermissionPolicy(allow=["Read(src/**)"], ask_everything=True)
    (result,) = await _reads(project, policy, path)
    assert "sk-live" not in result


def test_s12_an_escaped_name_is_not_read_through_a_link(project: pathlib.Path, call: Any) -> None:
    # A non-UTF-8 name that is a link: the gate judges `lnk\xff/key.txt` as written (missing),
    # so decoding it would open secrets/ behind the rule's back.
    os.symlink(b"secrets", os.fsencode(str(project)) + b"/lnk\xff")
    result = call(robota.tools.read_file(workspace=project), path="lnk\\xff/key.txt")
    assert result.is_error
    assert "sk-live" not in result.content


def test_a_non_utf8_name_in_a_subdirectory_is_still_read_back(
    project: pathlib.Path, call: Any
) -> None:
    with open(os.fsencode(str(project)) + b"/src/caf\xe9.txt", "wb") as handle:
        handle.write(b"bonjour\n")
    result = call(robota.tools.read_file(workspace=project), path="src/caf\\xe9.txt")
    assert result.content == "     1\tbonjour"


# Information outside the workspace: a refusal names neither host paths nor what exists there.


def test_a_refusal_does_not_reveal_what_exists_outside_the_workspace(
    workspace: pathlib.Path, call: Any
) -> None:
    read = robota.tools.read_file(workspace=workspace)
    deep = "../" * 40
    file_there = call(read, path=deep + "etc/passwd/x")
    nothing_there = call(read, path=deep + "etc/no-such-file/x")
    assert file_there.is_error
    assert nothing_there.is_error
    assert file_there.content.replace("passwd", "no-such-file") == nothing_there.content
    assert "/etc" not in file_there.content.replace(deep + "etc", "")


def test_a_refusal_does_not_reveal_the_host_path_of_the_workspace(
    workspace: pathlib.Path, call: Any
) -> None:
    for path in ("a\x00b", "f/x"):
        (workspace / "f").write_text("x\n")
        result = call(robota.tools.read_file(workspace=workspace), path=path)
        assert result.is_error
        assert str(workspace) not in result.content, result.content


# S12: `~` is the home directory to the gate; the tool must not read `<root>/~` instead.


def test_s12_a_tilde_path_is_not_read_as_a_directory_named_tilde(
    workspace: pathlib.Path, call: Any
) -> None:
    (workspace / "~").mkdir()
    (workspace / "~" / "x.txt").write_text("tilde\n")
    read = robota.tools.read_file(workspace=workspace)
    result = call(read, path="~/x.txt")
    assert result.is_error
    assert "tilde" not in result.content
    assert call(read, path="./~/x.txt").content == "     1\ttilde"


# S05 (time of check to time of use): a directory swapped for a link after the check is not
# followed when the file is opened.


def test_s05_a_directory_swapped_for_a_link_after_the_check_is_not_followed(
    workspace: pathlib.Path, call: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = workspace.parent / "outside"
    (workspace / "sub").mkdir()
    (workspace / "sub" / "secret.txt").write_text("harmless\n")
    (outside / "only-outside.txt").write_text("TOP SECRET\n")
    checked = robota.host.is_path_inside

    def check_then_swap(root: Any, candidate: Any) -> bool:
        verdict = checked(root, candidate)
        # The swap an attacker with write access inside the root races in.
        if (workspace / "sub").is_dir() and not (workspace / "sub").is_symlink():
            (workspace / "sub").rename(workspace / "sub-old")
            (workspace / "sub").symlink_to(outside)
        return verdict

    monkeypatch.setattr(robota.host, "is_path_inside", check_then_swap)
    assert _workspace.robota.host.is_path_inside is check_then_swap
    for tool, args in (
        (robota.tools.read_file(workspace=workspace), {"path": "sub/secret.txt"}),
        (robota.tools.grep(workspace=workspace), {"pattern": "SECRET", "path": "sub/secret.txt"}),
        (robota.tools.grep(workspace=workspace), {"pattern": "SECRET", "path": "sub"}),
        (robota.tools.glob(workspace=workspace), {"pattern": "*", "path": "sub"}),
        (robota.tools.list_dir(workspace=workspace), {"path": "sub"}),
    ):
        result = call(tool, **args)
        assert "TOP SECRET" not in result.content, (tool, result.content)
        assert "only-outside" not in result.content, (tool, result.content)
        # Restore the directory for the next tool.
        (workspace / "sub").unlink()
        (workspace / "sub-old").rename(workspace / "sub")


# Time: a glob is matched without backtracking, so a pattern with many stars (the model's, or a
# `.gitignore` rule in a cloned repository) does not hang the walk on a long file name.

MANY_STARS = "*a*a*a*a*a*a*a*b"


def _within(seconds: float, workspace: pathlib.Path, factory: str, args: dict[str, Any]) -> str:
    # A child process: a regular expression that backtracks holds the GIL, so a thread in this
    # process could not even time it out.
    script = (
        "import asyncio, json, sys, robota, robota.tools\n"
        f"tool = robota.tools.{factory}(workspace=sys.argv[1])\n"
        "ctx = robota.ToolContext(signal=robota.AbortController().signal, call_id='c', "
        "tool_name=tool.name)\n"
        "print(asyncio.run(tool.execute(json.loads(sys.argv[2]), ctx)).content)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, str(workspace), json.dumps(args)],
            capture_output=True,
            text=True,
            timeout=seconds,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {seconds} s")
    return done.stdout


@pytest.mark.parametrize("where", ["glob", "grep-glob", "gitignore"])
def test_a_glob_with_many_stars_does_not_hang_on_a_long_name(
    workspace: pathlib.Path, where: str
) -> None:
    (workspace / ("a" * 200)).write_text("needle\n")
    (workspace / "ab").write_text("needle\n")
    factory, args = "grep", {"pattern": "needle", "path": "."}
    if where == "glob":
        factory, args = "glob", {"pattern": MANY_STARS, "path": "."}
        expected = "No files match"
    elif where == "grep-glob":
        args["glob"] = MANY_STARS
        expected = "No matches"
    else:
        (workspace / ".gitignore").write_text(MANY_STARS + "\n")
        expected = "a" * 200 + ":1:needle"
    assert expected in _within(20, workspace, factory, args)


# Size: one Grep answer is capped in characters, as Read's is, whatever max_results and context.


def test_a_grep_answer_is_capped_in_characters(workspace: pathlib.Path, call: Any) -> None:
    long_name = "d" * 200
    (workspace / long_name).mkdir()
    line = "x" * 480 + "\n"
    (workspace / long_name / ("f" * 200)).write_text(line * 30_000)
    grep = robota.tools.grep(workspace=workspace)
    result = call(grep, pattern="x", path=".", max_results=1000, context=10)
    assert len(result.content) < 110_000
    assert result.content.splitlines()[-1].startswith("[output capped at 100000 characters")
