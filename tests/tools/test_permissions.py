"""S12/S21: the tools' declared path argument lets rules like ``Read(src/**)`` decide a call
made through a real agent."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

import robota
import robota.host
import robota.tools
from robota.testing import ScriptedProvider


@pytest.fixture
def project(workspace: pathlib.Path) -> pathlib.Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("sk-live-123\n")
    (workspace / "notes.txt").write_text("notes\n")
    # A link inside `src` to the secrets: the rule judges where the path lands (S05, S12).
    (workspace / "src" / "key-link").symlink_to("../secrets/key.txt")
    return workspace


async def _results(
    project: pathlib.Path, policy: robota.PermissionPolicy, *paths: str
) -> list[str]:
    calls: list[Any] = [("Read", {"path": p}) for p in paths]
    agent = robota.Agent(
        provider=ScriptedProvider([calls, "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=project),
        tool_gate=robota.PermissionGate(policy, robota.host.permission_context(project)),
    )
    await agent.run("read")
    return [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]


async def test_s12_an_allow_rule_read_src_admits_only_reads_under_src(
    project: pathlib.Path,
) -> None:
    policy = robota.PermissionPolicy(allow=["Read(src/**)"], ask_everything=True)
    src, notes, link = await _results(project, policy, "src/app.py", "notes.txt", "src/key-link")
    assert src == "     1\tprint('app')"
    assert "no one is attached" in notes  # not covered by the rule: asks, and nobody answers
    assert "sk-live" not in link  # the link lands in secrets/, outside `src/**`


async def test_s12_a_deny_rule_refuses_the_read_it_names(project: pathlib.Path) -> None:
    policy = robota.PermissionPolicy(deny=["Read(secrets/**)"])
    direct, linked, fine = await _results(
        project, policy, "secrets/key.txt", "src/key-link", "notes.txt"
    )
    assert direct.startswith("Permission denied: denied by rule 'Read(secrets/**)'")
    assert linked.startswith("Permission denied")  # S12: judged on the canonical path
    assert fine == "     1\tnotes"


async def test_s21_read_only_tools_run_without_asking_in_default_mode(
    project: pathlib.Path,
) -> None:
    (only,) = await _results(project, robota.PermissionPolicy(), "notes.txt")
    assert only == "     1\tnotes"


async def test_s21_plan_mode_lets_the_inspect_tools_run(project: pathlib.Path) -> None:
    (only,) = await _results(project, robota.PermissionPolicy(mode="plan"), "src/app.py")
    assert only == "     1\tprint('app')"
