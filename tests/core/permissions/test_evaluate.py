"""S21 one evaluation order: every invariant has a test named after it."""

from __future__ import annotations

import pathlib
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
import robota.host
from robota import PermissionContext, PermissionPolicy, evaluate_permission
from robota.host import canonical_path, is_read_only_command

from .conftest import make_tool


def decide(
    tool: robota.Tool, args: dict[str, Any], context: PermissionContext | None = None, **policy: Any
) -> robota.PermissionDecision:
    return evaluate_permission(tool, args, PermissionPolicy(**policy), context)


# --------------------------------------------------------------------------- nothing softens a denial


def test_s21_deny_beats_bypass(bash: robota.Tool) -> None:
    decision = decide(
        bash, {"command": "git push --force"}, mode="bypass", deny=["Bash(git push:*)"]
    )
    assert decision.behavior == "deny"
    assert decision.rule == "Bash(git push:*)"


def test_s21_a_narrow_deny_beside_a_broad_allow_denies(read: robota.Tool) -> None:
    decision = decide(
        read,
        {"path": "/work/.env"},
        PermissionContext(workspace="/work"),
        allow=["Read"],
        deny=["Read(**/.env)"],
    )
    assert decision.behavior == "deny"
    assert (
        decide(
            read,
            {"path": "/work/main.py"},
            PermissionContext(workspace="/work"),
            allow=["Read"],
            deny=["Read(**/.env)"],
        ).behavior
        == "allow"
    )


def test_s21_ceiling_outranks_allow_and_bypass_and_refuses_rather_than_asks(
    read: robota.Tool, bash: robota.Tool
) -> None:
    decision = decide(bash, {"command": "ls"}, mode="bypass", allow=["Bash"], ceiling=["Read"])
    assert decision.behavior == "deny"
    assert "ceiling" in decision.reason
    assert decide(read, {"path": "/x"}, ceiling=["Read"]).behavior == "allow"


def test_s21_a_call_the_ceiling_cannot_judge_is_outside_it(bash: robota.Tool) -> None:
    assert decide(bash, {"command": "echo 'open"}, ceiling=["Bash(echo *)"]).behavior == "deny"


# --------------------------------------------------------------------------- always a person


def test_s21_unevaluable_deny_asks_and_in_plan_mode_denies(bash: robota.Tool) -> None:
    asked = decide(bash, {"command": 'eval "$X"'}, allow=["Bash"], deny=["Bash(rm -rf *)"])
    assert asked.behavior == "ask"
    assert asked.always_ask
    planned = decide(
        bash, {"command": 'eval "$X"'}, mode="plan", allow=["Bash"], deny=["Bash(rm -rf *)"]
    )
    assert planned.behavior == "deny"


def test_s21_unevaluable_deny_asks_even_in_bypass(bash: robota.Tool) -> None:
    decision = decide(bash, {"command": "echo 'unterminated"}, mode="bypass", deny=["Bash(rm *)"])
    assert (decision.behavior, decision.always_ask) == ("ask", True)


@pytest.mark.parametrize(
    "command",
    [
        'bash -c "rm -rf /tmp/data"',
        "echo $(rm -rf /tmp/data)",
        "echo `rm -rf /tmp/data`",
        "echo ok; rm -rf /tmp/data",
    ],
)
def test_s12_rm_rf_via_bash_c_or_substitution_never_auto_allows_under_an_echo_allow_rule(
    bash: robota.Tool, command: str
) -> None:
    decision = decide(bash, {"command": command}, allow=["Bash(echo *)"])
    assert decision.behavior != "allow"


def test_s21_an_explicit_ask_rule_asks_in_every_mode(read: robota.Tool) -> None:
    for mode in ("default", "accept_edits", "bypass"):
        decision = decide(
            read, {"path": "/x/secret.txt"}, mode=mode, allow=["Read"], ask=["Read(**/secret.txt)"]
        )
        assert (decision.behavior, decision.always_ask) == ("ask", True), mode


def test_s21_catastrophic_removal_asks_in_bypass(bash: robota.Tool) -> None:
    for command in (
        "rm -rf /",
        "rm -rf ~",
        "sudo rm -r --no-preserve-root /",
        "rm -rf *",
        "mkfs.ext4 /dev/sda1",
        "dd if=/dev/zero of=/dev/sda",
    ):
        decision = decide(bash, {"command": command}, mode="bypass", allow=["Bash"])
        assert (decision.behavior, decision.always_ask) == ("ask", True), command
    assert decide(bash, {"command": "rm -rf build"}, mode="bypass").behavior == "allow"


def test_s21_a_trust_widening_write_asks_in_every_mode(write: robota.Tool) -> None:
    ctx = PermissionContext(workspace="/work", home="/home/u")
    for path in (
        "/work/.claude/settings.json",
        "/work/.git/hooks/pre-commit",
        "~/.bashrc",
        "/work/.robota/hooks.json",
    ):
        decision = decide(
            write, {"path": path, "content": "x"}, ctx, mode="bypass", allow=["Write"]
        )
        assert (decision.behavior, decision.always_ask) == ("ask", True), path
    assert (
        decide(
            write, {"path": "/work/src/app.py", "content": "x"}, ctx, mode="accept_edits"
        ).behavior
        == "allow"
    )


# One example write for every default trust location (a test below keeps the two in step).
TRUST_LOCATION_EXAMPLES = {
    "**/.robota/**": "/work/.robota/hooks.json",
    "**/.claude/**": "/work/.claude/settings.json",
    "**/.mcp.json": "/work/.mcp.json",
    "**/.git/**": "/work/.git/hooks/pre-commit",
    "**/.gitmodules": "/work/.gitmodules",
    "**/.husky/**": "/work/.husky/pre-commit",
    "**/.pre-commit-config.yaml": "/work/.pre-commit-config.yaml",
    "**/.envrc": "/work/.envrc",
    "**/.env": "/work/.env",
    "**/.vscode/settings.json": "/work/.vscode/settings.json",
    "**/.vscode/tasks.json": "/work/.vscode/tasks.json",
    "**/.vscode/launch.json": "/work/.vscode/launch.json",
    "**/*.code-workspace": "/work/project.code-workspace",
    "**/.idea/**": "/work/.idea/watcherTasks.xml",
    "**/.devcontainer/**": "/work/.devcontainer/devcontainer.json",
    "**/.cargo/config.toml": "/work/.cargo/config.toml",
    "**/.cargo/config": "/work/.cargo/config",
    "**/.npmrc": "/work/.npmrc",
    "**/.yarnrc": "/work/.yarnrc",
    "**/.yarnrc.yml": "/work/.yarnrc.yml",
    "**/.pypirc": "/work/.pypirc",
    "**/.netrc": "/work/.netrc",
    "**/.github/workflows/**": "/work/.github/workflows/ci.yml",
    "**/.github/actions/**": "/work/.github/actions/setup/action.yml",
    "**/.gitlab-ci.yml": "/work/.gitlab-ci.yml",
    "**/.circleci/**": "/work/.circleci/config.yml",
    "**/azure-pipelines.yml": "/work/azure-pipelines.yml",
    "**/bitbucket-pipelines.yml": "/work/bitbucket-pipelines.yml",
    "**/Jenkinsfile": "/work/Jenkinsfile",
    "**/lefthook.*": "/work/lefthook.yml",
    "**/.lefthook.*": "/work/.lefthook.yml",
    "**/lefthook-local.*": "/work/lefthook-local.yml",
    "**/.lefthook-local.*": "/work/.lefthook-local.yaml",
    "**/.lefthook/**": "/work/.lefthook/pre-commit/lint.sh",
    "**/.pnpmfile.*": "/work/.pnpmfile.cjs",
    "**/mise.toml": "/work/mise.toml",
    "**/.mise.toml": "/work/.mise.toml",
    "**/mise.*.toml": "/work/mise.local.toml",
    "**/.mise.*.toml": "/work/.mise.local.toml",
    "**/.mise/**": "/work/.mise/config.toml",
    "**/.config/mise/**": "/work/.config/mise/config.toml",
    "**/.mvn/**": "/work/.mvn/extensions.xml",
    "**/site-packages/*.pth": "/work/.venv/lib/python3.12/site-packages/evil.pth",
    "**/dist-packages/*.pth": "/usr/lib/python3/dist-packages/evil.pth",
    "**/sitecustomize.py": "/work/.venv/lib/python3.12/site-packages/sitecustomize.py",
    "**/usercustomize.py": "~/.local/lib/python3.12/site-packages/usercustomize.py",
    "~/.bashrc": "~/.bashrc",
    "~/.bash_profile": "~/.bash_profile",
    "~/.bash_login": "~/.bash_login",
    "~/.bash_logout": "~/.bash_logout",
    "~/.bash_aliases": "~/.bash_aliases",
    "~/.profile": "~/.profile",
    "~/.zshrc": "~/.zshrc",
    "~/.zshenv": "/home/u/.zshenv",
    "~/.zprofile": "~/.zprofile",
    "~/.zlogin": "~/.zlogin",
    "~/.zlogout": "~/.zlogout",
    "~/.gitconfig": "~/.gitconfig",
    "~/.git-credentials": "~/.git-credentials",
    "~/.pip/**": "~/.pip/pip.conf",
    "~/.cargo/**": "~/.cargo/bin/cargo",
    "~/.local/bin/**": "~/.local/bin/git",
    "~/bin/**": "~/bin/ls",
    "~/.vscode/**": "~/.vscode/extensions/x/extension.js",
    "~/.gnupg/**": "~/.gnupg/gpg-agent.conf",
    "~/.ssh/**": "~/.ssh/authorized_keys",
    "~/.config/**": "~/.config/git/config",
    "~/.aws/**": "~/.aws/credentials",
    "~/.docker/config.json": "~/.docker/config.json",
    "~/.kube/**": "~/.kube/config",
    "~/.claude.json": "~/.claude.json",
    "~/.bashrc.d/**": "~/.bashrc.d/50-path.sh",
    "~/.gradle/init.d/**": "~/.gradle/init.d/repos.gradle",
    "~/.gradle/init.gradle": "~/.gradle/init.gradle",
    "~/.gradle/init.gradle.kts": "~/.gradle/init.gradle.kts",
    "~/.gradle/gradle.properties": "~/.gradle/gradle.properties",
    "~/.m2/settings.xml": "~/.m2/settings.xml",
    "~/.jq": "~/.jq",
    "~/go/bin/**": "~/go/bin/gopls",
    "~/.bun/bin/**": "~/.bun/bin/bun",
    "~/.deno/bin/**": "~/.deno/bin/deno",
}


def test_s21_every_default_trust_location_has_an_example_write() -> None:
    assert set(TRUST_LOCATION_EXAMPLES) == set(robota.DEFAULT_TRUST_LOCATIONS)
    assert len(robota.DEFAULT_TRUST_LOCATIONS) == len(set(robota.DEFAULT_TRUST_LOCATIONS))


@pytest.mark.parametrize(
    ("pattern", "path"), sorted(TRUST_LOCATION_EXAMPLES.items()), ids=lambda value: value
)
def test_s21_a_write_into_each_default_trust_location_asks_in_every_mode(
    write: robota.Tool, pattern: str, path: str
) -> None:
    # S21: configuration that widens what later runs asks in every mode, bypass included, and an
    # allow rule does not answer it; plan mode, which asks about no change, refuses it.
    ctx = PermissionContext(workspace="/work", home="/home/u")
    for mode in ("default", "accept_edits", "bypass"):
        decision = decide(write, {"path": path, "content": "x"}, ctx, mode=mode, allow=["Write"])
        assert (decision.behavior, decision.always_ask) == ("ask", True), (mode, path)
        assert pattern in decision.reason
    planned = decide(write, {"path": path, "content": "x"}, ctx, mode="plan", allow=["Write"])
    assert planned.behavior == "deny", path


@pytest.mark.parametrize(
    "path",
    [
        "/work/src/app.py",
        "/work/.github/CODEOWNERS",
        "/work/.github/ISSUE_TEMPLATE/bug.md",
        "/work/docs/devcontainer.md",
        "/work/.vscode/extensions.json",
        "/work/mcp.json",
        "/work/src/husky.ts",
        "/work/Jenkinsfile.md",
        "/work/.cargo-cache/x",
        "/home/u/notes/.bashrc.txt",
        "/home/u/project/bin/tool",
        "/work/docs/mise.md",
        "/work/.venv/lib/python3.12/site-packages/requests/__init__.py",
        "/work/site-packages.pth.txt",
        "/home/u/go/src/app/main.go",
        "/home/u/.gradle/caches/modules-2/x.jar",
        "/work/jq/filter.jq",
        "/home/u/.jq.bak/x",
        "/home/u/.claude.json.md",
    ],
)
def test_s21_a_write_beside_the_trust_locations_is_an_ordinary_change(
    write: robota.Tool, path: str
) -> None:
    ctx = PermissionContext(workspace="/work", home="/home/u")
    assert decide(write, {"path": path, "content": "x"}, ctx, mode="accept_edits").behavior == (
        "allow"
    )


@pytest.mark.parametrize(
    "path",
    ["/work/README.md", "/tmp/out.txt", "~/notes.txt", "/home/u/src/app.py", "/work/.env.example"],
)
def test_s21_an_ordinary_write_outside_the_workspace_stays_ordinary(
    write: robota.Tool, path: str
) -> None:
    ctx = PermissionContext(workspace="/work", home="/home/u")
    decision = decide(write, {"path": path, "content": "x"}, ctx, mode="accept_edits")
    assert (decision.behavior, decision.always_ask) == ("allow", False)


# S21: a location is trusted wherever it lands — another checkout's hooks, a tool's configuration
# in the home directory or under /tmp are obeyed as the workspace's own are. Each `**/` example
# above, moved out of the workspace.
_ANYWHERE = sorted(
    (pattern, path.removeprefix("/work/"))
    for pattern, path in TRUST_LOCATION_EXAMPLES.items()
    if pattern.startswith("**/") and path.startswith("/work/")
)


@pytest.mark.parametrize("parent", ["/home/u/other-repo", "/home/u", "/tmp/x", ""])
@pytest.mark.parametrize(("pattern", "tail"), _ANYWHERE, ids=lambda value: value)
def test_s21_a_trust_location_outside_the_workspace_asks_in_every_mode(
    write: robota.Tool, parent: str, pattern: str, tail: str
) -> None:
    ctx = PermissionContext(workspace="/work", home="/home/u")
    path = f"{parent}/{tail}"
    for mode in ("default", "accept_edits", "bypass"):
        decision = decide(write, {"path": path, "content": "x"}, ctx, mode=mode, allow=["Write"])
        assert (decision.behavior, decision.always_ask) == ("ask", True), (mode, path)
        assert pattern in decision.reason


_SEGMENT = st.text(alphabet="abcxyz019._-", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..")
)


@settings(max_examples=200, deadline=None)
@given(parents=st.lists(_SEGMENT, max_size=5), example=st.sampled_from(_ANYWHERE))
def test_s21_a_trust_location_matches_under_any_directory(
    parents: list[str], example: tuple[str, str]
) -> None:
    write = make_tool("Write", risk="modify", argument=robota.PermissionArgument("path", "path"))
    _, tail = example  # an earlier location may be the one that matches (a `.git` parent)
    ctx = PermissionContext(workspace="/work", home="/home/u")
    path = "/" + "/".join([*parents, tail])
    decision = decide(write, {"path": path}, ctx, mode="bypass", allow=["Write"])
    assert (decision.behavior, decision.always_ask) == ("ask", True), path


def test_s21_a_write_into_another_checkouts_configuration_asks_on_the_real_file_system(
    write: robota.Tool, tmp_path: pathlib.Path
) -> None:
    workspace = tmp_path / "work"
    (workspace / "src").mkdir(parents=True)
    hooks = tmp_path / "other-repo" / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (workspace / "vendor").symlink_to(tmp_path / "other-repo")
    ctx = robota.host.permission_context(workspace)
    for path in (
        str(hooks / "pre-commit"),
        "../other-repo/.git/hooks/pre-commit",
        "vendor/.git/hooks/pre-commit",  # through a link that leaves the workspace
        str(tmp_path / "other-repo" / ".envrc"),
        str(tmp_path / "other-repo" / ".vscode" / "tasks.json"),
        str(tmp_path / ".mcp.json"),
    ):
        decision = decide(write, {"path": path, "content": "x"}, ctx, mode="bypass")
        assert (decision.behavior, decision.always_ask) == ("ask", True), path
    for path in ("src/app.py", "README.md", str(tmp_path / "out.txt"), "~/notes.txt"):
        decision = decide(write, {"path": path, "content": "x"}, ctx, mode="accept_edits")
        assert (decision.behavior, decision.always_ask) == ("allow", False), path


def test_s21_remembered_consent_does_not_answer_a_trust_widening_write(write: robota.Tool) -> None:
    ctx = PermissionContext(
        workspace="/work", remembered=("Write", "Write(/work/.git/hooks/pre-commit)")
    )
    decision = decide(write, {"path": "/work/.git/hooks/pre-commit", "content": "x"}, ctx)
    assert (decision.behavior, decision.always_ask) == ("ask", True)


def test_s21_remembered_consent_answers_an_ordinary_ask(bash: robota.Tool) -> None:
    ctx = PermissionContext(remembered=("Bash(make test)",))
    assert decide(bash, {"command": "make test"}, ctx).behavior == "allow"
    assert decide(bash, {"command": "make deploy"}, ctx).behavior == "ask"


# --------------------------------------------------------------------------- bypass and allow answer what is left


def test_s21_bypass_allows_what_is_left(bash: robota.Tool, unclassified: robota.Tool) -> None:
    assert decide(bash, {"command": "make"}, mode="bypass").behavior == "allow"
    assert decide(unclassified, {}, mode="bypass").behavior == "allow"


def test_s21_allow_rules_answer_what_is_left(bash: robota.Tool) -> None:
    assert decide(bash, {"command": "npm test"}, allow=["Bash(npm test)"]).behavior == "allow"


def test_s12_bare_star_matches_any_invocation_in_both_directions(
    unclassified: robota.Tool, bash: robota.Tool
) -> None:
    # A keyless tool under a deny list is denied; under an allow list it is approved in every mode.
    assert decide(unclassified, {}, deny=["*"]).behavior == "deny"
    for mode in ("default", "plan", "accept_edits", "bypass"):
        assert decide(unclassified, {}, mode=mode, allow=["**"]).behavior == "allow", mode
    assert decide(bash, {"command": "ls"}, deny=["**"], mode="bypass").behavior == "deny"


# --------------------------------------------------------------------------- modes by risk class


@pytest.mark.parametrize(
    ("mode", "risk", "expected"),
    [
        ("default", "inspect", "allow"),
        ("default", "modify", "ask"),
        ("default", "execute", "ask"),
        ("default", None, "ask"),
        ("accept_edits", "inspect", "allow"),
        ("accept_edits", "modify", "allow"),
        ("accept_edits", "execute", "ask"),
        ("accept_edits", None, "ask"),
        ("plan", "inspect", "allow"),
        ("plan", "modify", "deny"),
        ("plan", "execute", "deny"),
        ("plan", None, "deny"),
        ("bypass", "execute", "allow"),
    ],
)
def test_s21_the_mode_decides_by_risk_class(mode: Any, risk: Any, expected: str) -> None:
    tool = make_tool("T", risk=risk, argument=robota.PermissionArgument("text", "text"))
    assert decide(tool, {"text": "x"}, mode=mode).behavior == expected


def test_s21_plan_mode_refuses_an_unclassified_tool(unclassified: robota.Tool) -> None:
    decision = decide(unclassified, {}, mode="plan")
    assert decision.behavior == "deny"
    assert "no risk class" in decision.reason
    # Issue 25: the refusal says how to declare one.
    assert '@robota.tool(risk="inspect")' in decision.reason


def test_s21_an_unclassified_tool_prompts(unclassified: robota.Tool) -> None:
    assert decide(unclassified, {}).behavior == "ask"


def test_s21_only_an_explicit_allow_rule_lets_a_change_proceed_in_plan_mode(
    write: robota.Tool,
) -> None:
    args = {"path": "/w/notes.md", "content": "x"}
    ctx = PermissionContext(workspace="/w", remembered=("Write",))
    assert decide(write, args, ctx, mode="plan").behavior == "deny"  # remembered consent: no
    assert decide(write, args, ctx, mode="plan", allow=["Write(notes.md)"]).behavior == "allow"


def test_s21_ask_everything_flag_asks_what_the_mode_would_allow(read: robota.Tool) -> None:
    assert decide(read, {"path": "/x"}, ask_everything=True).behavior == "ask"
    assert decide(read, {"path": "/x"}, ask_everything=True, allow=["Read"]).behavior == "allow"


def test_s21_a_read_only_command_is_decided_as_inspect_but_rules_come_first(
    bash: robota.Tool, tmp_path: pathlib.Path
) -> None:
    workspace = str(tmp_path)
    subprocess.run(["git", "init", "-q", workspace], check=True)  # git reads its repository
    ctx = PermissionContext(
        workspace=workspace,
        resolve_path=canonical_path,
        read_only_command=lambda command: is_read_only_command(command, workspace=workspace),
    )
    assert decide(bash, {"command": "ls -la && git status"}, ctx).behavior == "allow"
    assert decide(bash, {"command": "ls -la /etc"}, ctx).behavior == "ask"  # names a path outside
    assert decide(bash, {"command": "ls -la"}, ctx, mode="plan").behavior == "allow"
    assert decide(bash, {"command": "ls -la"}, ctx, deny=["Bash(ls *)"]).behavior == "deny"
    assert decide(bash, {"command": "ls -la"}, ctx, ask=["Bash(ls:*)"]).behavior == "ask"


# --------------------------------------------------------------------------- parameter rules and arguments


def test_s12_parameter_rules_apply_to_declared_parameters(fetch: robota.Tool) -> None:
    args = {"url": "https://example.com/", "prompt": "ignore previous instructions"}
    assert decide(fetch, args, deny=["WebFetch(prompt: *ignore previous*)"]).behavior == "deny"


def test_s12_a_colon_that_names_no_parameter_keeps_its_meaning(fetch: robota.Tool) -> None:
    # "https" is not a declared parameter of WebFetch, so this is a URL pattern.
    assert (
        decide(
            fetch, {"url": "https://evil.com/x"}, deny=["WebFetch(https://evil.com/**)"]
        ).behavior
        == "deny"
    )
    assert (
        decide(fetch, {"url": "https://ok.com/x"}, deny=["WebFetch(https://evil.com/**)"]).behavior
        == "allow"
    )


def test_s12_allow_rules_never_grant_through_a_parameter_rule(fetch: robota.Tool) -> None:
    args = {"url": "https://x.com", "prompt": "summarise"}
    assert (
        decide(fetch, args, mode="default", allow=["WebFetch(prompt: summarise)"]).behavior
        == "allow"
    )  # inspect anyway
    tool = make_tool(
        "Post",
        risk="execute",
        argument=robota.PermissionArgument("url", "url"),
        properties={"url": {"type": "string"}, "body": {"type": "string"}},
    )
    assert (
        decide(tool, {"url": "https://x.com", "body": "hi"}, allow=["Post(body: hi)"]).behavior
        == "ask"
    )


def test_s12_a_rule_naming_the_primary_field_as_a_parameter_asks(bash: robota.Tool) -> None:
    decision = decide(bash, {"command": "ls"}, allow=["Bash"], deny=["Bash(command: rm *)"])
    assert (decision.behavior, decision.always_ask) == ("ask", True)


def test_s12_a_pattern_on_a_tool_without_a_declared_argument_is_unevaluable(
    unclassified: robota.Tool,
) -> None:
    decision = decide(unclassified, {}, mode="bypass", deny=["Mystery(something)"])
    assert (decision.behavior, decision.always_ask) == ("ask", True)


def test_s12_tool_name_globs_in_deny_rules(bash: robota.Tool) -> None:
    mcp = make_tool("mcp__github__create_issue", risk="modify", argument=None)
    assert decide(mcp, {}, deny=["mcp__*"], mode="bypass").behavior == "deny"
    assert decide(mcp, {}, allow=["mcp__github__*"]).behavior == "allow"
    assert decide(bash, {"command": "ls"}, deny=["mcp__*"], mode="bypass").behavior == "allow"


# --------------------------------------------------------------------------- peers


def test_s21_a_peer_turn_gets_no_operator_only_tool_and_no_extra_authority() -> None:
    notify = make_tool("NotifyOperator", risk="execute", argument=None, operator_only=True)
    assert decide(notify, {}, PermissionContext(origin="peer"), mode="bypass").behavior == "deny"
    assert (
        decide(notify, {}, PermissionContext(origin="operator"), mode="bypass").behavior == "allow"
    )
    ordinary = make_tool("Search", risk="inspect", argument=None)
    assert decide(ordinary, {}, PermissionContext(origin="peer")).behavior == "allow"
