"""S12 matching per argument kind, with unevaluable as its own outcome."""

from __future__ import annotations

import os
import pathlib

import pytest

from robota.core.permissions import (
    analyze_command,
    match_command,
    match_path,
    match_text,
    match_url,
)
from robota.host import canonical_path


def test_s12_path_patterns_use_segment_semantics() -> None:
    ws = "/work"
    assert match_path("src/*.py", "src/a.py", workspace=ws) == "match"
    assert match_path("src/*.py", "src/deep/a.py", workspace=ws) == "no_match"
    assert match_path("src/**/*.py", "src/deep/er/a.py", workspace=ws) == "match"
    assert match_path("src/**", "src", workspace=ws) == "match"
    assert match_path("/etc", "/etc/passwd", workspace=ws) == "match"  # a plain path covers beneath
    assert match_path("/etc", "/etcetera", workspace=ws) == "no_match"
    assert match_path("~/.ssh/**", "~/.ssh/id_rsa", workspace=ws, home="/home/u") == "match"


def test_s12_path_normalisation_defeats_dot_dot_tricks() -> None:
    assert match_path("/etc/**", "/work/../etc/shadow", workspace="/work") == "match"
    assert match_path("secrets/**", "./a/../secrets/key", workspace="/work") == "match"


def test_s12_path_argument_that_cannot_be_judged_is_unevaluable() -> None:
    for value in (None, 3, "", "a\x00b", "~other/x"):
        assert match_path("/etc/**", value, workspace="/w", home="/h") == "unevaluable"
    assert match_path("~/x", "/h/x", workspace="/w", home=None) == "unevaluable"


def test_s05_path_patterns_see_through_symlinks(tmp_path: pathlib.Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    secret = tmp_path / "secret"
    secret.mkdir()
    (workspace / "link").symlink_to(secret)
    pattern = f"{secret}/**"
    lexical = match_path(pattern, "link/key", workspace=str(workspace))
    canonical = match_path(pattern, "link/key", workspace=str(workspace), resolve=canonical_path)
    assert lexical == "no_match"  # what a lexical check would miss
    assert canonical == "match"
    assert os.path.realpath(workspace / "link") == str(secret)


def test_s12_url_patterns_understand_scheme_host_and_path() -> None:
    assert match_url("https://example.com/docs/**", "https://example.com/docs/a/b") == "match"
    assert match_url("https://example.com/docs/**", "http://example.com/docs/a") == "no_match"
    assert match_url("https://*.example.com", "https://api.example.com/x") == "match"
    assert match_url("https://*.example.com", "https://example.com/x") == "no_match"
    assert match_url("example.com", "http://EXAMPLE.com:21/file") == "match"
    # Issue 24: what the egress reading refuses (ftp, credentials) no rule can judge.
    assert match_url("example.com", "ftp://user@EXAMPLE.com:21/file") == "unevaluable"
    assert match_url("domain:example.com", "https://a.b.example.com/") == "match"
    assert match_url("domain:example.com", "https://notexample.com/") == "no_match"


def test_s12_a_plain_wildcard_never_spans_scheme_and_host() -> None:
    # "*.evil.com" as a glob over the whole URL would also match "https://x.com/?q=.evil.com".
    assert match_url("*.evil.com", "https://x.com/?q=a.evil.com") == "no_match"
    assert match_url("*.evil.com", "https://a.evil.com/") == "match"


def test_s12_url_that_cannot_be_parsed_is_unevaluable() -> None:
    for value in ("not a url", "https://", 5, "//no-scheme.com"):
        assert match_url("example.com", value) == "unevaluable"


def test_s12_text_globs() -> None:
    assert match_text("deploy *", "deploy prod") == "match"
    assert match_text("deploy *", "rollback") == "no_match"
    assert match_text("x", 3) == "unevaluable"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /tmp/x",
        "rm -fr /tmp/x",
        "rm -r -f /tmp/x",
        "/bin/rm -rf /tmp/x",
        "echo hi; rm -rf /tmp/x",
        "true && rm -rf /tmp/x",
        "false || rm -rf /tmp/x",
        "cat a | rm -rf /tmp/x",
        "(rm -rf /tmp/x)",
        "echo $(rm -rf /tmp/x)",
        "echo `rm -rf /tmp/x`",
        'bash -c "rm -rf /tmp/x"',
        "sh -c 'rm -rf /tmp/x'",
        "env FOO=1 rm -rf /tmp/x",
        "FOO=1 rm -rf /tmp/x",
        "sudo rm -rf /tmp/x",
        "timeout 5 rm -rf /tmp/x",
        "nohup rm -rf /tmp/x > /dev/null",
    ],
)
def test_s12_compound_commands_are_judged_conservatively(command: str) -> None:
    assert match_command("rm -rf *", command, direction="deny") == "match"


@pytest.mark.parametrize(
    "command",
    [
        'eval "$X"',
        'bash -c "$CMD"',
        "$TOOL -rf /",
        "source ./script.sh",
        "xargs rm",
        # find's `{}` is a path that begins with the starting point, never an option (issue
        # 24): what stays unknown is an option only known at run time.
        "find . -exec rm $FLAGS {} \\;",
    ],
)
def test_s12_what_the_parser_cannot_see_is_unevaluable_for_deny(command: str) -> None:
    assert match_command("rm -rf *", command, direction="deny") in ("unevaluable", "match")
    assert match_command("rm -rf *", command, direction="deny") != "no_match"


def test_s12_unparseable_command_is_unevaluable() -> None:
    assert match_command("rm *", "echo 'unterminated", direction="deny") == "unevaluable"
    assert match_command("rm *", "echo 'unterminated", direction="allow") == "unevaluable"


def test_s12_a_clear_non_match_is_no_match() -> None:
    assert match_command("rm -rf *", "ls -la", direction="deny") == "no_match"
    assert match_command("rm -rf *", "rm file.txt", direction="deny") == "no_match"


def test_s12_allow_direction_needs_every_command_covered_exactly() -> None:
    assert match_command("echo *", "echo hello", direction="allow") == "match"
    assert match_command("echo *", "echo hi && rm -rf /", direction="allow") == "no_match"
    assert match_command("echo *", "echo $(rm -rf /)", direction="allow") == "no_match"
    assert match_command("echo *", "bash -c 'rm -rf /'", direction="allow") == "no_match"
    assert match_command("echo *", "echo hi > /etc/passwd", direction="allow") == "no_match"
    assert match_command("git status", "git status", direction="allow") == "match"
    assert match_command("git status", "git status --porcelain", direction="allow") == "no_match"
    assert match_command("npm run test:*", "npm run test -- --watch", direction="allow") == "match"


def test_shell_analysis_lists_wrapped_and_nested_commands() -> None:
    line = analyze_command("sudo -u root env A=1 nice -n 5 git push && echo $(whoami) < in > out")
    names = [c.name for c in line.commands]
    assert names == ["sudo", "env", "nice", "git", "whoami", "echo"]  # substitutions run first
    assert line.substitutions
    assert line.redirections == ("out",)
    assert line.inputs == ("in",)
    assert analyze_command("").error == "empty command"
    assert analyze_command("f() { rm -rf /; }").opaque


def test_s12_concatenated_quoting_inside_bash_c_is_unquoted_like_a_shell_regression() -> None:
    # The old parser (bashlex) kept inner quote characters for 'a'"'"'b' words, hiding the rm from the matcher.
    command = """bash -c 'echo '"'"'hi'"'"'; rm -rf /tmp/x'"""
    assert match_command("rm -rf *", command, direction="deny") == "match"


def test_s05_a_path_rule_follows_dotdot_physically_when_a_resolver_is_given(
    tmp_path: pathlib.Path,
) -> None:
    # Regression (issue 10 review): `link/../x` was normalised lexically before the resolver saw
    # it, so it was judged as `<workspace>/x` while the system call reaches `<outside>/x`.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "x").write_text("secret")
    (workspace / "link").symlink_to(outside / "sub")
    pattern = f"{outside}/**"
    assert (
        match_path(pattern, "link/../x", workspace=str(workspace), resolve=canonical_path)
        == "match"
    )
    assert match_path(pattern, "link/../x", workspace=str(workspace)) == "no_match"  # lexical
