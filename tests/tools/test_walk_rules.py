"""S12/S21: ``Read`` rules reach ``Grep``, ``Glob`` and ``LS``, and a walk judges each path it meets.

Every call goes through a real agent with a real :class:`robota.PermissionGate` over a real
workspace on disk, judged from the host's permission context (its canonical resolver).
"""

from __future__ import annotations

import os
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
    (workspace / "src" / "app.py").write_text("token = 'public'\n")
    (workspace / "src" / ".env").write_text("token = 'env-secret'\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("token = 'sk-live-123'\n")
    (workspace / "secrets" / "deep").mkdir()
    (workspace / "secrets" / "deep" / "more.txt").write_text("token = 'sk-deep'\n")
    (workspace / "notes.txt").write_text("token = 'notes'\n")
    return workspace


async def _results(
    project: pathlib.Path,
    policy: robota.PermissionPolicy | None,
    *calls: tuple[str, dict[str, Any]],
) -> list[str]:
    gate = (
        robota.PermissionGate(policy, robota.host.permission_context(project))
        if policy is not None
        else None
    )
    agent = robota.Agent(
        provider=ScriptedProvider([list(calls), "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=project),
        tool_gate=gate,
    )
    await agent.run("look")
    return [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]


_GREP = ("Grep", {"pattern": "token", "path": "."})
_GLOB = ("Glob", {"pattern": "**/*", "path": "."})


async def test_s12_a_read_deny_withholds_secrets_from_grep_glob_and_ls(
    project: pathlib.Path,
) -> None:
    policy = robota.PermissionPolicy(deny=["Read(secrets/**)"])
    grep, glob, listing, root = await _results(
        project, policy, _GREP, _GLOB, ("LS", {"path": "secrets"}), ("LS", {"path": "."})
    )
    assert "sk-" not in grep
    assert "secrets/" not in grep
    assert "src/app.py:1:token = 'public'" in grep
    assert "notes.txt:1:" in grep
    assert "secrets" not in glob
    assert "src/app.py" in glob
    # LS naming the denied directory is refused at admission (Read answers for it)...
    assert listing.startswith("Permission denied: denied by rule 'Read(secrets/**)'")
    # ... and LS of its parent leaves the denied directory out, silently (S12).
    assert "secrets" not in root
    assert "src/" in root
    assert "withheld" not in root


async def test_s12_ls_withholds_each_denied_entry(project: pathlib.Path) -> None:
    policy = robota.PermissionPolicy(deny=["Read(secrets/*.txt)"])
    (listing,) = await _results(project, policy, ("LS", {"path": "secrets"}))
    assert listing == "deep/"  # key.txt left out; the directory itself is not denied


async def test_s12_a_grep_deny_on_env_files_reaches_a_walk_from_the_root(
    project: pathlib.Path,
) -> None:
    policy = robota.PermissionPolicy(deny=["Grep(**/.env)"])
    grep, glob = await _results(project, policy, _GREP, _GLOB)
    assert "env-secret" not in grep
    assert ".env" not in grep
    assert "src/app.py:1:" in grep
    assert "src/.env" in glob  # a Grep rule judges Grep only


async def test_s21_an_ask_rule_withholds_from_a_walk_and_says_how_many(
    project: pathlib.Path,
) -> None:
    policy = robota.PermissionPolicy(ask=["Read(secrets/**)"])
    grep, glob = await _results(project, policy, _GREP, _GLOB)
    assert "sk-" not in grep
    # One directory (secrets/) left out: a walk cannot ask a person about each path.
    assert grep.splitlines()[-1].startswith("[1 path was left out: a permission rule asks")
    assert "secrets" not in glob.replace("[1 path was left out", "")


async def test_s21_an_ask_rule_the_call_itself_raised_does_not_empty_the_walk(
    project: pathlib.Path,
) -> None:
    async def yes(request: robota.ApprovalRequest) -> robota.Approval:
        return robota.Approval(True)

    gate = robota.PermissionGate(
        robota.PermissionPolicy(ask=["Grep(secrets/**)"]),
        robota.host.permission_context(project),
        approver=yes,
    )
    agent = robota.Agent(
        provider=ScriptedProvider([[("Grep", {"pattern": "token", "path": "secrets"})], "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=project),
        tool_gate=gate,
    )
    await agent.run("look")
    (grep,) = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    # The person approved this very search; its files are not withheld one by one.
    assert "secrets/key.txt:1:token = 'sk-live-123'" in grep
    assert "secrets/deep/more.txt:1:" in grep


async def test_s12_allow_rules_are_unaffected(project: pathlib.Path) -> None:
    # A Read allow grants nothing to Grep; an allow rule for Grep itself still answers.
    asked = robota.PermissionPolicy(allow=["Read(**)"], ask_everything=True)
    allowed = robota.PermissionPolicy(allow=["Grep(**)"], ask_everything=True)
    (refused,) = await _results(project, asked, _GREP)
    (grep,) = await _results(project, allowed, _GREP)
    assert "no one is attached" in refused
    assert "secrets/key.txt:1:" in grep
    assert "src/.env:1:" in grep


async def test_s12_without_a_gate_nothing_is_withheld(project: pathlib.Path) -> None:
    grep, glob = await _results(project, None, _GREP, _GLOB)
    assert "secrets/deep/more.txt:1:" in grep
    assert "src/.env:1:" in grep
    assert "secrets/key.txt" in glob


async def test_s12_a_rule_written_through_a_link_reaches_the_walk(
    project: pathlib.Path,
) -> None:
    # S05/S12: the rule names `vault`, a link to `secrets`; the walk meets the real directory.
    (project / "vault").symlink_to("secrets")
    policy = robota.PermissionPolicy(deny=["Read(vault/**)"])
    (grep,) = await _results(project, policy, _GREP)
    assert "sk-" not in grep
    assert "src/app.py:1:" in grep


async def test_s12_a_denied_directory_is_not_entered(project: pathlib.Path) -> None:
    # `secrets/*` covers secrets/deep (a directory the gate would refuse to LS), so nothing
    # under it is searched — even secrets/deep/more.txt, which the pattern alone would not name.
    policy = robota.PermissionPolicy(deny=["Read(secrets/*)"])
    (grep,) = await _results(project, policy, _GREP)
    assert "sk-" not in grep
    assert "notes.txt:1:" in grep


async def test_s21_a_sub_agents_walk_answers_to_its_parents_rules_and_its_own(
    project: pathlib.Path,
) -> None:
    context = robota.host.permission_context(project)
    child_provider = ScriptedProvider([[_GREP], "found"])
    child = robota.Agent(
        provider=child_provider,
        model="m",
        name="researcher",
        tools=robota.tools.builtin(workspace=project),
        tool_gate=robota.PermissionGate(robota.PermissionPolicy(deny=["Grep(**/.env)"]), context),
    )
    parent = robota.Agent(
        provider=ScriptedProvider([[("researcher", {"input": "look"})], "ok"]),
        model="m",
        name="lead",
        tools=[child.as_tool()],
        tool_gate=robota.PermissionGate(
            robota.PermissionPolicy(deny=["Read(secrets/**)"]), context
        ),
    )
    await parent.run("start")
    grep = child_provider.requests[1].messages[-1].content
    assert "src/app.py:1:" in grep
    assert "sk-" not in grep  # the parent's rule: the ceiling reaches the child's walk
    assert "env-secret" not in grep  # the child's own rule


async def test_s12_a_name_read_back_from_its_escaped_spelling_is_judged_by_its_real_name(
    project: pathlib.Path,
) -> None:
    # A walk judges the real name (`key\x01.txt`) and withholds it; a call naming the file by
    # the `\xNN` spelling the tools show must not reach it past the same rule — even with a
    # person approving every ask (the gate judged the escaped text, which no rule matched).
    (project / "key\x01.txt").write_text("token = 'sk-ctl'\n")
    (project / "docs").mkdir()

    async def yes(request: robota.ApprovalRequest) -> robota.Approval:
        return robota.Approval(True)

    policy = robota.PermissionPolicy(deny=["Read(key?.txt)", "Edit(docs/new?.md)"])
    escaped = "key\\x01.txt"
    calls = [
        ("Read", {"path": escaped}),
        ("Grep", {"pattern": "token", "path": escaped}),
        ("Edit", {"path": escaped, "old_string": "token", "new_string": "gone"}),
        ("Write", {"path": "docs/new\\x02.md", "content": "x"}),
    ]
    agent = robota.Agent(
        provider=ScriptedProvider([calls, "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=project),
        tool_gate=robota.PermissionGate(
            policy, robota.host.permission_context(project), approver=yes
        ),
    )
    await agent.run("look")
    results = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert len(results) == 4
    for result in results:
        assert "a permission rule denies the file this name spells" in result
    assert (project / "key\x01.txt").read_text() == "token = 'sk-ctl'\n"
    assert os.listdir(project / "docs") == []


async def test_s12_a_lexical_gate_on_a_workspace_spelled_through_a_link_holds_in_a_walk(
    project: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    # A context without a resolver judges paths as written, from the workspace as its caller
    # spelled it (`/tmp/...` on macOS is a link); the walk meets canonical paths. A direct Read
    # is denied, so the walk must withhold the same file.
    spelled = tmp_path / "spelled"
    spelled.symlink_to(project, target_is_directory=True)
    policy = robota.PermissionPolicy(deny=["Read(secrets/**)"])
    gate = robota.PermissionGate(policy, robota.PermissionContext(workspace=str(spelled)))
    calls = [
        ("Read", {"path": "secrets/key.txt"}),
        _GREP,
        _GLOB,
        ("LS", {"path": "."}),
    ]
    agent = robota.Agent(
        provider=ScriptedProvider([calls, "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=spelled),
        tool_gate=gate,
    )
    await agent.run("look")
    read, grep, glob, listing = [
        m.content for m in agent.history if isinstance(m, robota.ToolMessage)
    ]
    assert read.startswith("Permission denied")
    assert "sk-" not in grep
    assert "src/app.py:1:" in grep
    assert "secrets" not in glob
    assert "src/app.py" in glob
    assert "secrets" not in listing
    assert "src/" in listing
