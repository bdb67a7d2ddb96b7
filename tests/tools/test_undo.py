"""S08: ``robota.tools.undo`` takes back ``Edit``/``Write`` changes from process-scoped scratch;
and the two tools through a real agent, decided by permission rules (S12, S21)."""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import stat
from collections.abc import Callable
from typing import Any

import pytest

import robota
import robota.host
import robota.tools
from robota.testing import ScriptedProvider

Call = Callable[..., robota.ToolResult]


@pytest.fixture
def tools(workspace: pathlib.Path) -> tuple[robota.Tool, robota.Tool]:
    return robota.tools.edit_file(workspace=workspace), robota.tools.write_file(workspace=workspace)


def test_undo_restores_the_bytes_and_the_mode(
    workspace: pathlib.Path, tools: tuple[robota.Tool, robota.Tool], call: Call
) -> None:
    edit, _ = tools
    target = workspace / "a.sh"
    target.write_bytes(b"echo caf\xe9\r\n")
    target.chmod(0o750)
    call(edit, path="a.sh", old_string="echo", new_string="printf")
    target.chmod(0o750)
    undone = robota.tools.undo(workspace=workspace)
    assert undone == robota.tools.Undone("a.sh", "restored a.sh (before Edit)")
    assert target.read_bytes() == b"echo caf\xe9\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert robota.tools.undo(workspace=workspace) is None


def test_undo_of_a_created_file_removes_it(
    workspace: pathlib.Path, tools: tuple[robota.Tool, robota.Tool], call: Call
) -> None:
    _, write = tools
    call(write, path="new/file.txt", content="hi\n")
    undone = robota.tools.undo(workspace=workspace)
    assert undone is not None
    assert undone.description == "removed new/file.txt (created by Write)"
    assert not (workspace / "new" / "file.txt").exists()


def test_undo_twice_walks_back_across_both_tools(
    workspace: pathlib.Path, tools: tuple[robota.Tool, robota.Tool], call: Call
) -> None:
    edit, write = tools
    target = workspace / "a.txt"
    target.write_text("v1\n")
    call(write, path="a.txt", content="v2\n")
    call(edit, path="a.txt", old_string="v2", new_string="v3")
    assert target.read_text() == "v3\n"
    first = robota.tools.undo(workspace=workspace)
    assert first is not None
    assert first.description == "restored a.txt (before Edit)"
    assert target.read_text() == "v2\n"
    second = robota.tools.undo(workspace=workspace)
    assert second is not None
    assert second.description == "restored a.txt (before Write)"
    assert target.read_text() == "v1\n"
    assert robota.tools.undo(workspace=workspace) is None


def test_undo_refuses_when_the_file_changed_since_and_keeps_the_later_change(
    workspace: pathlib.Path, tools: tuple[robota.Tool, robota.Tool], call: Call
) -> None:
    edit, _ = tools
    target = workspace / "a.txt"
    target.write_text("one\n")
    call(edit, path="a.txt", old_string="one", new_string="two")
    target.write_text("someone else's\n")
    with pytest.raises(robota.tools.UndoError, match="changed since the Edit"):
        robota.tools.undo(workspace=workspace)
    assert target.read_text() == "someone else's\n"
    target.write_text("two\n")  # put back what the tool wrote: the change is still undoable
    assert robota.tools.undo(workspace=workspace) is not None
    assert target.read_text() == "one\n"


def test_undo_refuses_when_the_file_became_a_link(
    workspace: pathlib.Path, tools: tuple[robota.Tool, robota.Tool], call: Call
) -> None:
    _, write = tools
    call(write, path="a.txt", content="mine\n")
    (workspace / "a.txt").unlink()
    (workspace / "a.txt").symlink_to(workspace.parent / "outside" / "secret.txt")
    with pytest.raises(robota.tools.UndoError):
        robota.tools.undo(workspace=workspace)
    assert (workspace.parent / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


def test_undo_with_nothing_to_undo_returns_none(workspace: pathlib.Path) -> None:
    assert robota.tools.undo(workspace=workspace) is None


def test_the_history_is_per_canonical_root(
    workspace: pathlib.Path, tmp_path: pathlib.Path, call: Call
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    call(robota.tools.write_file(workspace=workspace), path="a.txt", content="x")
    assert robota.tools.undo(workspace=other) is None
    undone = robota.tools.undo(workspace=alias)  # another spelling of the same root
    assert undone is not None
    assert undone.path == "a.txt"


def test_s08_the_pre_image_is_kept_in_an_owner_only_process_scoped_directory(
    workspace: pathlib.Path,
    tools: tuple[robota.Tool, robota.Tool],
    call: Call,
    undo_state: pathlib.Path,
) -> None:
    edit, _ = tools
    (workspace / "a.txt").write_bytes(b"pre-image \xfa\n")
    call(edit, path="a.txt", old_string="pre", new_string="post")
    (scratch,) = (undo_state / "robota").glob(f"undo-{os.getpid()}-*")
    assert stat.S_IMODE(scratch.stat().st_mode) == 0o700
    assert (scratch / robota.host.OWNER_RECORD_NAME).exists()
    kept = [p for p in scratch.iterdir() if p.read_bytes() == b"pre-image \xfa\n"]
    assert len(kept) == 1
    assert stat.S_IMODE(kept[0].stat().st_mode) == 0o600
    robota.tools.undo(workspace=workspace)
    assert not kept[0].exists()  # taken back: its pre-image is dropped


# --- through a real agent -------------------------------------------------------------------


@pytest.fixture
def project(workspace: pathlib.Path) -> pathlib.Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "notes.txt").write_text("notes\n")
    return workspace


async def _run(
    project: pathlib.Path, policy: robota.PermissionPolicy, calls: list[Any]
) -> list[robota.ToolMessage]:
    agent = robota.Agent(
        provider=ScriptedProvider([calls, "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=project),
        tool_gate=robota.PermissionGate(policy, robota.host.permission_context(project)),
    )
    await agent.run("edit")
    return [m for m in agent.history if isinstance(m, robota.ToolMessage)]


def _edit(path: str) -> tuple[str, dict[str, str]]:
    return ("Edit", {"path": path, "old_string": "'", "new_string": '"', "replace_all": "x"})


async def test_s12_an_allow_rule_edit_src_admits_edits_under_src_only(
    project: pathlib.Path,
) -> None:
    policy = robota.PermissionPolicy(allow=["Edit(src/**)"])
    calls = [
        ("Edit", {"path": "src/app.py", "old_string": "app", "new_string": "APP"}),
        ("Edit", {"path": "notes.txt", "old_string": "notes", "new_string": "NOTES"}),
        ("Write", {"path": "src/new.py", "content": "x = 1\n"}),
    ]
    edited, notes, written = await _run(project, policy, calls)
    assert edited.content.startswith("Edited src/app.py: 1 replacement")
    assert "---" not in edited.content  # S39: the diff is the view's, never the model's
    assert (project / "src" / "app.py").read_text() == "print('APP')\n"
    assert "no one is attached" in notes.content  # S21: a write asks in default mode
    assert (project / "notes.txt").read_text() == "notes\n"
    assert "no one is attached" in written.content  # the rule names Edit, not Write
    assert not (project / "src" / "new.py").exists()
    undone = robota.tools.undo(workspace=project)
    assert undone is not None
    assert undone.path == "src/app.py"
    assert (project / "src" / "app.py").read_text() == "print('app')\n"


async def test_s12_a_deny_rule_refuses_the_edit_it_names(project: pathlib.Path) -> None:
    policy = robota.PermissionPolicy(deny=["Edit(src/**)"], mode="accept_edits")
    calls = [
        ("Edit", {"path": "src/app.py", "old_string": "app", "new_string": "APP"}),
        ("Edit", {"path": "notes.txt", "old_string": "notes", "new_string": "NOTES"}),
    ]
    denied, allowed = await _run(project, policy, calls)
    assert denied.content.startswith("Permission denied: denied by rule 'Edit(src/**)'")
    assert (project / "src" / "app.py").read_text() == "print('app')\n"
    assert allowed.content.startswith("Edited notes.txt")  # S21: accept_edits runs modify
    assert (project / "notes.txt").read_text() == "NOTES\n"


async def test_s21_plan_mode_refuses_edits(project: pathlib.Path) -> None:
    policy = robota.PermissionPolicy(mode="plan")
    calls = [("Write", {"path": "x.txt", "content": "x"})]
    (refused,) = await _run(project, policy, calls)
    assert refused.content.startswith("Permission denied")
    assert not (project / "x.txt").exists()


async def test_a_bad_model_argument_reaches_the_model_as_an_error(
    project: pathlib.Path,
) -> None:
    policy = robota.PermissionPolicy(allow=["Edit"])
    (bad,) = await _run(project, policy, [_edit("src/app.py")])
    assert "replace_all" in bad.content  # a string for a boolean: the schema refuses it
    assert (project / "src" / "app.py").read_text() == "print('app')\n"


async def test_s21_a_write_into_a_trusted_location_asks_even_in_accept_edits(
    project: pathlib.Path,
) -> None:
    policy = robota.PermissionPolicy(mode="accept_edits")
    calls = [
        ("Write", {"path": ".robota/settings.json", "content": "{}"}),
        ("Write", {"path": "src/ok.py", "content": "ok = 1\n"}),
    ]
    trusted, ordinary = await _run(project, policy, calls)
    assert "no one is attached" in trusted.content
    assert not (project / ".robota").exists()
    assert ordinary.content.startswith("Created src/ok.py")


def test_changes_from_many_threads_are_all_undone(
    workspace: pathlib.Path, tools: tuple[robota.Tool, robota.Tool], call: Call
) -> None:
    edit, _ = tools
    for n in range(8):
        (workspace / f"f{n}.txt").write_text(f"before {n}\n")
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(
                lambda n: call(edit, path=f"f{n}.txt", old_string="before", new_string="after"),
                range(8),
            )
        )
    assert not any(result.is_error for result in results)
    undone = [robota.tools.undo(workspace=workspace) for _ in range(8)]
    assert sorted(u.path for u in undone if u is not None) == [f"f{n}.txt" for n in range(8)]
    assert robota.tools.undo(workspace=workspace) is None
    for n in range(8):
        assert (workspace / f"f{n}.txt").read_text() == f"before {n}\n"


def test_undo_without_its_pre_image_is_refused_not_a_crash(
    workspace: pathlib.Path,
    tools: tuple[robota.Tool, robota.Tool],
    call: Call,
    undo_state: pathlib.Path,
) -> None:
    edit, _ = tools
    (workspace / "a.txt").write_text("unique pre-image 7f3a\n")
    call(edit, path="a.txt", old_string="7f3a", new_string="7f3b")
    (scratch,) = (undo_state / "robota").glob(f"undo-{os.getpid()}-*")
    (kept,) = [p for p in scratch.iterdir() if p.read_bytes() == b"unique pre-image 7f3a\n"]
    kept.unlink()
    with pytest.raises(robota.tools.UndoError, match=r"cannot undo the Edit of a\.txt"):
        robota.tools.undo(workspace=workspace)
    assert (workspace / "a.txt").read_text() == "unique pre-image 7f3b\n"


def test_a_hard_link_to_a_file_outside_is_not_written_through(
    workspace: pathlib.Path, tools: tuple[robota.Tool, robota.Tool], call: Call
) -> None:
    edit, _ = tools
    secret = workspace.parent / "outside" / "secret.txt"
    os.link(secret, workspace / "hard.txt")
    result = call(edit, path="hard.txt", old_string="TOP", new_string="NOT")
    assert not result.is_error, result.content
    assert secret.read_text() == "TOP SECRET\n"
    assert (workspace / "hard.txt").read_text() == "NOT SECRET\n"


def test_only_the_last_hundred_changes_are_kept(
    workspace: pathlib.Path, tools: tuple[robota.Tool, robota.Tool], call: Call
) -> None:
    _, write = tools
    for n in range(102):
        call(write, path="a.txt", content=f"{n}\n")
    undone = 0
    while robota.tools.undo(workspace=workspace) is not None:
        undone += 1
    assert undone == 100
    assert (workspace / "a.txt").read_text() == "1\n"  # back to the oldest change kept


async def _agent_results(
    workspace: pathlib.Path, policy: robota.PermissionPolicy, calls: list[Any]
) -> list[str]:
    agent = robota.Agent(
        provider=ScriptedProvider([calls, "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=workspace),
        tool_gate=robota.PermissionGate(policy, robota.host.permission_context(workspace)),
    )
    await agent.run("go")
    return [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]


async def test_s12_an_edit_deny_rule_reaches_write_as_claude_code_reads_it(
    workspace: pathlib.Path,
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    policy = robota.PermissionPolicy(deny=["Edit(**/*.py)"], mode="accept_edits")
    (written, other) = await _agent_results(
        workspace,
        policy,
        [
            ("Write", {"path": "a.py", "content": "x = 2\n"}),
            ("Write", {"path": "b.txt", "content": "ok\n"}),
        ],
    )
    assert written.startswith("Permission denied: denied by rule 'Edit(**/*.py)'")
    assert (workspace / "a.py").read_text() == "x = 1\n"
    assert (workspace / "b.txt").read_text() == "ok\n", other


async def test_s12_a_read_deny_rule_reaches_edit_which_shows_what_it_changed(
    workspace: pathlib.Path,
) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "k.txt").write_text("key = abc\n")
    policy = robota.PermissionPolicy(deny=["Read(secrets/**)"], mode="accept_edits")
    (edited,) = await _agent_results(
        workspace,
        policy,
        [("Edit", {"path": "secrets/k.txt", "old_string": "abc", "new_string": "def"})],
    )
    assert edited.startswith("Permission denied: denied by rule 'Read(secrets/**)'")
    assert (workspace / "secrets" / "k.txt").read_text() == "key = abc\n"
