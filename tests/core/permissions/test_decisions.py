"""S21 decisions carry the reason and the deciding rule; the details each path depends on."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

import robota
from robota import PermissionContext, PermissionPolicy, evaluate_permission
from robota.core.permissions import match_command, match_url, split_url
from robota.host import canonical_path

from .conftest import make_tool


def decide(
    tool: robota.Tool, args: dict[str, Any], context: PermissionContext | None = None, **policy: Any
) -> robota.PermissionDecision:
    return evaluate_permission(tool, args, PermissionPolicy(**policy), context)


def test_reasons_and_rules_name_what_decided(bash: robota.Tool, read: robota.Tool) -> None:
    denied = decide(bash, {"command": "rm x"}, deny=["Bash(rm *)"])
    assert (denied.reason, denied.rule, denied.always_ask) == (
        "denied by rule 'Bash(rm *)'",
        "Bash(rm *)",
        False,
    )
    unevaluable = decide(bash, {"command": "echo 'x"}, deny=["Bash(rm *)"])
    assert (
        unevaluable.reason
        == "deny rule 'Bash(rm *)' cannot be evaluated for this call; a person must decide"
    )
    assert unevaluable.rule == "Bash(rm *)"
    asked = decide(read, {"path": "/a"}, ask=["Read"])
    assert (asked.reason, asked.rule) == ("ask rule 'Read'", "Read")
    unevaluable_ask = decide(bash, {"command": "echo 'x"}, ask=["Bash(ls *)"])
    assert unevaluable_ask.reason.startswith("ask rule 'Bash(ls *)' cannot be evaluated")
    assert (unevaluable_ask.behavior, unevaluable_ask.always_ask, unevaluable_ask.rule) == (
        "ask",
        True,
        "Bash(ls *)",
    )
    allowed = decide(bash, {"command": "make"}, allow=["Bash(make)"])
    assert (allowed.reason, allowed.rule) == ("allowed by rule 'Bash(make)'", "Bash(make)")
    remembered = decide(bash, {"command": "make"}, PermissionContext(remembered=("Bash(make)",)))
    assert (remembered.reason, remembered.rule) == (
        "allowed by earlier consent 'Bash(make)'",
        "Bash(make)",
    )
    assert decide(bash, {"command": "make"}, mode="bypass").reason == "bypass mode"
    assert (
        decide(bash, {"command": "make"}, ask_everything=True).reason
        == "this caller asks about every call"
    )
    assert decide(bash, {"command": "make"}, mode="plan", ask_everything=True).behavior == "deny"


def test_mode_reasons(unclassified: robota.Tool) -> None:
    tool = make_tool("T", risk="execute", argument=None)
    assert decide(tool, {}).reason == "a execute call needs approval in default mode"
    assert (
        decide(tool, {}, mode="accept_edits").reason
        == "a execute call needs approval in accept-edits mode"
    )
    assert decide(unclassified, {}).reason == "a unclassified call needs approval in default mode"
    assert decide(tool, {}, mode="plan").reason == "plan mode does not make changes (execute call)"
    modify = make_tool("M", risk="modify", argument=None)
    assert decide(modify, {}, mode="accept_edits").reason == "accept-edits mode allows changes"
    inspect = make_tool("I", risk="inspect", argument=None)
    assert decide(inspect, {}).reason == "inspection is allowed"
    assert decide(inspect, {}, mode="plan").reason == "plan mode allows inspection"


def test_plan_mode_denial_keeps_the_always_ask_reason(bash: robota.Tool) -> None:
    decision = decide(bash, {"command": "echo 'x"}, mode="plan", deny=["Bash(rm *)"])
    assert decision.reason.startswith(
        "plan mode does not ask about changes: deny rule 'Bash(rm *)'"
    )
    assert decision.rule == "Bash(rm *)"


def test_an_inspect_call_with_an_always_ask_still_asks_in_plan_mode(read: robota.Tool) -> None:
    assert decide(read, {"path": "/x"}, mode="plan", ask=["Read"]).behavior == "ask"


def test_rules_see_home_and_resolved_paths(read: robota.Tool, tmp_path: pathlib.Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    context = PermissionContext(
        workspace=str(tmp_path), home=str(home), resolve_path=canonical_path
    )
    assert (
        decide(
            read, {"path": str(home / ".ssh" / "id_rsa")}, context, deny=["Read(~/.ssh/**)"]
        ).behavior
        == "deny"
    )
    (tmp_path / "alias").symlink_to(home / ".ssh")
    assert (
        decide(read, {"path": "alias/id_rsa"}, context, deny=["Read(~/.ssh/**)"]).behavior == "deny"
    )
    no_resolve = PermissionContext(workspace=str(tmp_path), home=str(home))
    assert (
        decide(read, {"path": "alias/id_rsa"}, no_resolve, deny=["Read(~/.ssh/**)"]).behavior
        == "allow"
    )


def test_the_first_unevaluable_deny_rule_is_the_one_reported(bash: robota.Tool) -> None:
    decision = decide(bash, {"command": "echo 'x"}, deny=["Bash(rm *)", "Bash(dd *)"])
    assert decision.rule == "Bash(rm *)"
    # A later matching deny still denies outright.
    assert decide(bash, {"command": "echo 'x"}, deny=["Bash(rm *)", "Bash"]).behavior == "deny"


@pytest.mark.parametrize(
    "target",
    [
        "/",
        "/*",
        "~",
        "~/",
        "~/*",
        "$HOME",
        "${HOME}",
        "*",
        ".",
        "./",
        "..",
        "/etc",
        "/usr/",
        "/home",
        "/root",
    ],
)
def test_catastrophic_removal_targets(bash: robota.Tool, target: str) -> None:
    decision = decide(bash, {"command": f"rm -r {target}"}, mode="bypass")
    assert (decision.behavior, decision.always_ask) == ("ask", True)
    assert decision.reason.startswith("catastrophic removal")


@pytest.mark.parametrize(
    "command", ["rm -r build", "rm /", "rmdir /tmp/x", "rm --recursive ./build", "ls -r /"]
)
def test_ordinary_removals_are_not_catastrophic(bash: robota.Tool, command: str) -> None:
    assert decide(bash, {"command": command}, mode="bypass").behavior == "allow"


def test_catastrophic_flags_and_writes(bash: robota.Tool) -> None:
    for command in (
        "rm -R /",
        "rm --recursive /",
        "rm --no-preserve-root -rf /tmp",
        "mkfs /dev/sdb",
        "dd of=/dev/nvme0n1 if=x",
    ):
        decision = decide(bash, {"command": command}, mode="bypass")
        assert decision.behavior == "ask", command
    assert (
        decide(bash, {"command": "dd if=/dev/zero of=out.img"}, mode="bypass").behavior == "allow"
    )


def test_trust_widening_is_about_writes_with_a_path_argument(
    read: robota.Tool, write: robota.Tool, bash: robota.Tool
) -> None:
    ctx = PermissionContext(workspace="/w", home="/h")
    assert (
        decide(read, {"path": "/w/.claude/settings.json"}, ctx).behavior == "allow"
    )  # reading is fine
    assert (
        decide(bash, {"command": "echo x > .bashrc"}, ctx, mode="bypass").behavior == "allow"
    )  # a shell write is containment's concern
    unclassified_writer = make_tool(
        "Save", risk=None, argument=robota.PermissionArgument("path", "path")
    )
    assert decide(unclassified_writer, {"path": "/w/.env"}, ctx, mode="bypass").always_ask
    reason = decide(write, {"path": "/h/.zshrc", "content": ""}, ctx).reason
    assert reason == "writing '/h/.zshrc' widens what later sessions trust (~/.zshrc)"
    unjudgeable = decide(write, {"path": "", "content": ""}, ctx, mode="bypass")
    assert unjudgeable.always_ask
    assert "cannot tell" in unjudgeable.reason
    custom = PermissionContext(workspace="/w", trust_locations=("**/deploy.yaml",))
    assert decide(
        write, {"path": "/w/deploy.yaml", "content": ""}, custom, mode="bypass"
    ).always_ask
    assert (
        decide(write, {"path": "/w/.env", "content": ""}, custom, mode="bypass").behavior == "allow"
    )


def test_home_relative_locations_need_a_home(write: robota.Tool) -> None:
    no_home = PermissionContext(workspace="/w")
    assert (
        decide(write, {"path": "/h/.bashrc", "content": ""}, no_home, mode="bypass").behavior
        == "allow"
    )
    assert decide(
        write,
        {"path": "/h/.bashrc", "content": ""},
        PermissionContext(workspace="/w", home="/h"),
        mode="bypass",
    ).always_ask


def test_a_failing_read_only_classifier_keeps_the_declared_class(bash: robota.Tool) -> None:
    def broken(command: str) -> bool:
        raise RuntimeError("classifier bug")

    assert (
        decide(bash, {"command": "ls"}, PermissionContext(read_only_command=broken)).behavior
        == "ask"
    )
    assert (
        decide(
            bash, {"command": "ls"}, PermissionContext(read_only_command=lambda c: True)
        ).behavior
        == "allow"
    )
    assert (
        decide(bash, {"command": 5}, PermissionContext(read_only_command=lambda c: True)).behavior
        == "ask"
    )


def test_policy_rule_lists() -> None:
    policy = PermissionPolicy(allow=["A"], deny=["B"], ask=["C"], ceiling=["D"])
    assert [r.text for r in policy.rules("allow")] == ["A"]
    assert [r.text for r in policy.rules("deny")] == ["B"]
    assert [r.text for r in policy.rules("ask")] == ["C"]
    assert [r.direction for r in policy.rules("ceiling")] == ["allow"]
    assert PermissionPolicy().rules("ceiling") == ()
    with pytest.raises(robota.ConfigurationError, match="server prefix"):
        PermissionPolicy(ceiling=["Bash*"])
    for field in ("deny", "ask"):
        with pytest.raises(robota.ConfigurationError, match=field):
            PermissionPolicy(**{field: "Bash"})


def test_url_splitting_details() -> None:
    assert split_url("HTTPS://Example.COM.:8443/a/b?q=1#f") == ("https", "example.com", "/a/b")
    # Issue 24: the egress reading refuses credentials, so the rules' reading does too.
    assert split_url("HTTPS://User:Pw@Example.COM.:8443/a/b?q=1#f") is None
    assert split_url("http://[::1]:8080/x") == ("http", "[::1]", "/x")
    assert split_url("http://[::1/x") is None
    assert split_url("http://host") == ("http", "host", "/")
    assert split_url("mailto:x@y") is None
    assert match_url("domain:*.example.com", "https://a.example.com") == "unevaluable"
    assert match_url("domain:", "https://a.example.com") == "unevaluable"
    assert match_url("https:///path", "https://a.com/path") == "unevaluable"
    assert match_url("ftp://example.com", "https://example.com") == "no_match"
    assert match_url("https://example.com/a", "https://example.com/a/b") == "match"
    assert match_url("https://example.com/a", "https://example.com/ab") == "no_match"
    assert match_url("https://example.com/a/*", "https://example.com/a/b/c") == "no_match"
    assert match_url("https://**.example.com", "https://a.b.example.com/") == "match"


def test_command_matching_details() -> None:
    # The extra operand stands after options, any of which might take it as its value: the
    # rule may apply, so it cannot be "no match" (S12).
    assert match_command("rm -rf", "rm -r -f -v x", direction="deny") == "unevaluable"
    # Review 3: an exact rule matches the same operands only; more may still be it (S12).
    assert match_command("rm -rf", "rm x -rf", direction="deny") == "unevaluable"
    assert match_command("rm -rf *", "rm -f x", direction="deny") == "no_match"  # -r missing
    # `--force` is `-f` spelled long: rm's own option grammar says so, so the rule applies
    # (issue 24); for a program without a table it might, so it cannot be "no match" (S12).
    assert match_command("rm -rf *", "rm --force -r x", direction="deny") == "match"
    assert match_command("frob -rf *", "frob --force -r x", direction="deny") == "unevaluable"
    # `origin` may be the value of the option before it, so the exact rule may apply: ask.
    assert (
        match_command("git push --force", "git push --force origin", direction="deny")
        == "unevaluable"
    )
    assert match_command("git push --force", "git push origin", direction="deny") == "no_match"
    assert (
        match_command("git push --force:*", "git push origin --force", direction="deny") == "match"
    )
    assert match_command("rm *", "xargs rm", direction="deny") == "match"
    assert match_command("rm -rf *", "xargs rm", direction="deny") == "unevaluable"  # flags unknown
    assert match_command("rm x", "xargs rm", direction="deny") == "unevaluable"
    assert match_command("ls", "xargs rm", direction="deny") == "no_match"
    # A lone `*` is every command, as `Bash(*)` is in the rule grammar (issue 24: a rule is read
    # as a pattern, never as a command line that computes its program's name).
    assert match_command("*", "anything at all", direction="deny") == "match"
    assert match_command("rm 'unterminated", "rm x", direction="deny") == "unevaluable"
    # A compound deny rule applies when every command it names runs.
    assert match_command("a; b", "a", direction="deny") == "no_match"
    assert match_command("a; b", "b && a", direction="deny") == "match"
    assert match_command("rm *", 7, direction="deny") == "unevaluable"
    assert match_command("ls *", "", direction="allow") == "unevaluable"
    assert match_command("ls *", "xargs ls", direction="allow") == "no_match"
    assert match_command("ls *", "ls a b", direction="allow") == "match"
    assert match_command("ls a", "ls a b", direction="allow") == "no_match"
    assert match_command("ls a b", "ls a", direction="allow") == "no_match"
    assert match_command("ls a*", "ls ab", direction="allow") == "match"
    # Allow is exact: `ls` found on PATH is not necessarily /bin/ls (S12).
    assert match_command("/bin/ls", "ls", direction="allow") == "no_match"
    assert match_command("/bin/ls", "/bin/ls", direction="allow") == "match"
    assert match_command("ls", "cat", direction="allow") == "no_match"
    assert match_command("ls", "$X", direction="allow") == "no_match"
