"""Issue 24: path rules compare a pattern and a value in one canonical form (S12, S05).

A rule written through a symlink (``conf`` → ``real/conf``) must match what it names whichever
spelling reaches it, and a home directory reached through a symlink must not switch off the
``~`` rules or the always-ask protection of files such as ``~/.bashrc``. Real directories and
symlinks in ``tmp_path``; the host's resolver (``canonical_path``).
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionContext, PermissionPolicy, evaluate_permission
from robota.core.permissions import match_path
from robota.host import canonical_path, permission_context


class _File(robota.Tool):
    async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
        return "ran"


READ = _File(
    "Read",
    "Reads a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}},
    risk="inspect",
    permission_argument=robota.PermissionArgument("path", "path"),
)
WRITE = _File(
    "Write",
    "Writes a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}},
    risk="modify",
    permission_argument=robota.PermissionArgument("path", "path"),
)


@pytest.fixture
def linked(tmp_path: pathlib.Path) -> pathlib.Path:
    """A workspace with ``real/conf`` and a link ``conf`` → ``real/conf``."""
    ws = tmp_path / "ws"
    (ws / "real" / "conf").mkdir(parents=True)
    (ws / "real" / "conf" / "key.pem").write_text("secret")
    (ws / "conf").symlink_to("real/conf")
    (ws / "src").mkdir()
    return ws


def test_s12_a_deny_rule_written_through_a_symlink_denies_both_spellings(
    linked: pathlib.Path,
) -> None:
    ctx = permission_context(linked)
    policy = PermissionPolicy(deny=["Read(conf/**)"])
    for value in ("conf/key.pem", "real/conf/key.pem", str(linked / "real/conf/key.pem")):
        assert evaluate_permission(READ, {"path": value}, policy, ctx).behavior == "deny", value
    assert evaluate_permission(READ, {"path": "src/a.py"}, policy, ctx).behavior == "allow"


def test_s12_an_allow_rule_written_through_a_symlink_allows_what_it_names(
    linked: pathlib.Path,
) -> None:
    ctx = permission_context(linked)
    policy = PermissionPolicy(allow=["Write(conf/**)"])
    for value in ("conf/new.txt", "real/conf/new.txt", "conf/key.pem"):
        assert evaluate_permission(WRITE, {"path": value}, policy, ctx).behavior == "allow", value
    # Not what it names: elsewhere in the workspace, or out through `..` of the link's target.
    assert evaluate_permission(WRITE, {"path": "src/x"}, policy, ctx).behavior == "ask"
    assert evaluate_permission(WRITE, {"path": "conf/../x"}, policy, ctx).behavior == "ask"


def test_s12_an_allow_rule_matches_only_the_canonical_reading(linked: pathlib.Path) -> None:
    # `conf/escape` lies under `conf/` as written, but the system call reaches /etc.
    (linked / "real" / "conf" / "escape").symlink_to("/etc")
    ctx = permission_context(linked)
    policy = PermissionPolicy(allow=["Write(conf/**)"])
    assert evaluate_permission(WRITE, {"path": "conf/escape/x"}, policy, ctx).behavior == "ask"


def test_s12_a_deny_rule_also_applies_to_the_path_as_written(linked: pathlib.Path) -> None:
    # A glob segment in the middle cannot be resolved: the rule still applies to the name used.
    (linked / "src" / "secrets").symlink_to(linked / "real")
    ctx = permission_context(linked)
    policy = PermissionPolicy(deny=["Read(**/secrets/**)"])
    assert evaluate_permission(READ, {"path": "src/secrets/x"}, policy, ctx).behavior == "deny"


def test_s12_a_home_reached_through_a_symlink_keeps_home_rules(tmp_path: pathlib.Path) -> None:
    real_home = tmp_path / "usr" / "home" / "me"
    real_home.mkdir(parents=True)
    (tmp_path / "home").symlink_to(tmp_path / "usr" / "home")
    home = str(tmp_path / "home" / "me")  # how $HOME spells it
    ws = real_home / "project"
    ws.mkdir()
    ctx = PermissionContext(workspace=str(ws), home=home, resolve_path=canonical_path)
    deny = PermissionPolicy(deny=["Read(~/.ssh/**)"])
    for value in ("~/.ssh/id_ed25519", f"{home}/.ssh/id_ed25519", f"{real_home}/.ssh/id_ed25519"):
        assert evaluate_permission(READ, {"path": value}, deny, ctx).behavior == "deny", value
    # S21: writing ~/.bashrc always asks, bypass included, whatever spelling reaches it.
    for value in ("~/.bashrc", f"{home}/.bashrc", f"{real_home}/.bashrc", "../.bashrc"):
        decision = evaluate_permission(WRITE, {"path": value}, PermissionPolicy(mode="bypass"), ctx)
        assert (decision.behavior, decision.always_ask) == ("ask", True), value


def test_s12_permission_context_records_the_canonical_home(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "real-home").mkdir()
    (tmp_path / "home").symlink_to(tmp_path / "real-home")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ctx = permission_context(tmp_path / "real-home")
    assert ctx.home == str(tmp_path / "real-home")
    decision = evaluate_permission(
        WRITE, {"path": str(tmp_path / "home" / ".bashrc")}, PermissionPolicy(mode="bypass"), ctx
    )
    assert decision.always_ask


def test_s21_a_catastrophic_removal_of_a_home_reached_through_a_link_asks(
    tmp_path: pathlib.Path,
) -> None:
    real_home = tmp_path / "usr" / "home" / "me"
    real_home.mkdir(parents=True)
    (tmp_path / "home").symlink_to(tmp_path / "usr" / "home")
    ws = real_home / "project"
    ws.mkdir()
    ctx = PermissionContext(
        workspace=str(ws), home=str(tmp_path / "home" / "me"), resolve_path=canonical_path
    )
    bash = _File(
        "Bash",
        "Runs a command.",
        {"type": "object", "properties": {"command": {"type": "string"}}},
        risk="execute",
        permission_argument=robota.PermissionArgument("command", "command"),
    )
    for command in (f"rm -rf {real_home}", f"rm -rf {tmp_path}/home/me", "rm -rf ~"):
        decision = evaluate_permission(
            bash, {"command": command}, PermissionPolicy(mode="bypass"), ctx
        )
        assert (decision.behavior, decision.always_ask) == ("ask", True), command


_STEPS = st.lists(st.sampled_from(["conf", "real", "conf2", "src", "..", "."]), max_size=5)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_STEPS, leaf=st.sampled_from(["key.pem", "new.txt"]))
def test_s12_a_deny_rule_follows_every_path_to_what_it_names(
    linked: pathlib.Path, steps: list[str], leaf: str
) -> None:
    """Generated paths through links and dot segments: denied exactly when the kernel lands in
    the denied directory (the allow direction must never admit more than the canonical path)."""
    if not (linked / "conf2").exists():
        (linked / "conf2").symlink_to("conf")  # a chain of links
    value = "/".join([*steps, "conf", leaf])
    result = match_path(
        "conf/**", value, workspace=str(linked), resolve=canonical_path, direction="allow"
    )
    deny = match_path("conf/**", value, workspace=str(linked), resolve=canonical_path)
    walked = str(linked)
    for part in value.split("/"):
        if part == ".." and not os.path.lexists(walked):
            # The kernel cannot walk this path (a `..` after a missing name): it lands nowhere,
            # and the rule cannot be ruled out either way.
            assert deny != "no_match", value
            assert result != "match", value
            return
        walked = os.path.join(walked, part)
    lands = os.path.realpath(linked / value)  # a missing tail is where creating it lands
    inside = lands.startswith(str(linked / "real" / "conf") + os.sep)
    if inside:
        assert deny == "match", value
        assert result == "match", value
    else:
        assert result != "match", value


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf link/../../me",
        "rm -rf link/../..",
        "rm -rf link/../../me/",
        "find link/../../me -delete",
        "rm -rf link/../../../home/me",
    ],
)
def test_s21_a_removal_through_a_link_and_dot_dot_is_judged_where_the_kernel_lands(
    tmp_path: pathlib.Path, command: str
) -> None:
    # Review finding (issue 24): the target was normalised as text before the resolver saw it,
    # so `link/../../me` read as a harmless sibling of the workspace while the kernel climbs out
    # of the link's target into the home directory.
    home = tmp_path / "home" / "me"
    (home / "a").mkdir(parents=True)
    ws = tmp_path / "work" / "project"
    ws.mkdir(parents=True)
    (ws / "link").symlink_to(home / "a")
    ctx = PermissionContext(workspace=str(ws), home=str(home), resolve_path=canonical_path)
    bash = _File(
        "Bash",
        "Runs a command.",
        {"type": "object", "properties": {"command": {"type": "string"}}},
        risk="execute",
        permission_argument=robota.PermissionArgument("command", "command"),
    )
    decision = evaluate_permission(bash, {"command": command}, PermissionPolicy(mode="bypass"), ctx)
    assert (decision.behavior, decision.always_ask) == ("ask", True), (command, decision)


def test_s12_a_rule_path_with_dot_dot_is_read_the_way_the_kernel_reads_it(
    tmp_path: pathlib.Path,
) -> None:
    # Review finding (issue 24): the pattern was normalised as text, so `a/l/../secret` named
    # `a/secret`; with `l` a link to `other/deep` the kernel reads it as `other/secret`.
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "other" / "deep").mkdir(parents=True)
    (ws / "other" / "secret").write_text("s")
    (ws / "a" / "secret").write_text("not the one")
    (ws / "a" / "l").symlink_to(ws / "other" / "deep")
    ctx = permission_context(ws)
    deny = PermissionPolicy(deny=["Read(a/l/../secret)"])
    assert evaluate_permission(READ, {"path": "other/secret"}, deny, ctx).behavior == "deny"
    allow = PermissionPolicy(allow=["Write(a/l/../secret)"])
    # The allow names what the kernel reaches (other/secret), not the text's a/secret.
    assert evaluate_permission(WRITE, {"path": "other/secret"}, allow, ctx).behavior == "allow"
    assert evaluate_permission(WRITE, {"path": "a/secret"}, allow, ctx).behavior == "ask"


def test_s12_a_rule_that_climbs_after_a_glob_is_unevaluable(linked: pathlib.Path) -> None:
    ctx = permission_context(linked)
    decision = evaluate_permission(
        READ, {"path": "src/a.py"}, PermissionPolicy(deny=["Read(*/../conf/**)"]), ctx
    )
    assert (decision.behavior, decision.always_ask) == ("ask", True)
