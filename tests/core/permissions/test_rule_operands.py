"""Review 3, item 2: a deny rule's operands are read the way the program reads its operands (S12).

Most programs take a list of targets (``rm a b``, ``docker rm web db``, ``kubectl delete ns a
b``), so an operand the rule names may stand anywhere among them, and a path may be spelled many
ways (``./build``, ``build/``, ``//srv/data``). Only a place the grammar reads by its position —
a subcommand's name, the kind of object — rules a command out by what stands there. Objects
chosen by something other than their names (``kubectl delete ns --all``, ``-l app=web``, ``-f
objects.yaml``) cannot be ruled out by names. The ordinary direction is held too: a command
whose operands cannot be the rule's stays allowed.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionPolicy, evaluate_permission
from robota.core.permissions import match_command


class _Shell(robota.Tool):
    async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
        return "ran"


BASH = _Shell(
    "Bash",
    "Runs a shell command.",
    {"type": "object", "properties": {"command": {"type": "string"}}},
    risk="execute",
    permission_argument=robota.PermissionArgument("command", "command"),
)


def _refused(command: str, rule: str) -> bool:
    """The deny rule stops the command (denies, or asks every time) in bypass mode."""
    decision = evaluate_permission(
        BASH,
        {"command": command},
        PermissionPolicy(deny=[f"Bash({rule})"], allow=["Bash(*)"], mode="bypass"),
    )
    return decision.behavior == "deny" or (decision.behavior == "ask" and decision.always_ask)


def _allowed(command: str, rule: str) -> bool:
    decision = evaluate_permission(
        BASH, {"command": command}, PermissionPolicy(deny=[f"Bash({rule})"], allow=["Bash(*)"])
    )
    return decision.behavior == "allow"


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("rm -rf build", "rm -rf dist build"),
        ("rm -rf build", "rm -rf build dist"),
        ("rm -rf build *", "rm -rf dist build"),
        ("rm -rf /srv/data/*", "rm -rf /tmp/x /srv/data/y"),
        ("git branch -D main", "git branch -D x main"),
        ("docker rm -f db", "docker rm -f web db"),
        ("docker rm -f db", "docker container rm -f web db"),
        ("kubectl delete ns prod", "kubectl delete ns staging prod"),
        ("kubectl delete ns prod", "kubectl delete ns/staging ns/prod"),
        ("cargo publish *", "cargo +nightly publish"),
        ("git push origin main *", "git push origin dev main"),
        ("cat /etc/shadow", "cat /tmp/x /etc/shadow"),
        ("cat /etc/shadow", "cat /etc/shadow /etc/passwd"),
        ("git push", "git push origin"),  # an exact rule: more operands may still be it
        ("rm -rf build", "echo build | xargs rm -rf"),  # xargs adds operands the line hides
    ],
)
def test_s12_an_exact_deny_rule_is_not_passed_by_decoy_operands(rule: str, command: str) -> None:
    assert match_command(rule, command, direction="deny") != "no_match", (rule, command)
    assert _refused(command, rule)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("rm -rf build", "rm -rf ./build"),
        ("rm -rf build", "rm -rf build/"),
        ("rm -rf build", "rm -rf .//build//"),
        ("rm -rf build", "rm -rf build/."),
        ("rm -rf ./build", "rm -rf build"),
        ("rm -rf /srv/data/*", "rm -rf //srv/data/x"),
        ("rm -rf /srv/data/*", "rm -rf /srv//data/x"),
        ("rm -rf /srv/data/*", "rm -rf /srv/./data/x"),
        ("rm -rf /srv/data/*", "rm -rf /tmp/../srv/data/x"),  # `..` may be anywhere: maybe
        ("rm -rf build", "rm -rf src/../build"),
        ("rm -rf build", "rm -rf build/.."),
        ("cat /etc/shadow", "cat //etc/shadow"),
        ("cat /etc/shadow", "cat /etc/./shadow"),
        ("rm -rf ~/data", "rm -rf ~//data/"),
    ],
)
def test_s12_a_deny_rule_compares_path_spellings_in_one_normal_form(
    rule: str, command: str
) -> None:
    assert match_command(rule, command, direction="deny", home="/home/u") != "no_match"
    assert _refused(command, rule)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("kubectl delete ns prod", "kubectl delete ns --all"),
        ("kubectl delete ns prod", "kubectl delete ns -l env=prod"),
        ("kubectl delete ns prod", "kubectl delete ns --selector=env=prod"),
        ("kubectl delete ns prod", "kubectl delete ns --field-selector metadata.name=prod"),
        ("kubectl delete ns prod", "kubectl delete -f objects.yaml"),
        ("kubectl delete ns prod", "kubectl delete -k overlays/prod"),
        ("kubectl delete pod web -n prod", "kubectl delete pod web -A"),
        ("kubectl delete pod web -n prod", "kubectl delete pod web --all-namespaces"),
    ],
)
def test_s12_objects_chosen_other_than_by_name_cannot_be_ruled_out_by_names(
    rule: str, command: str
) -> None:
    assert match_command(rule, command, direction="deny") != "no_match", (rule, command)
    assert _refused(command, rule)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("rm -rf build", "rm -rf dist"),  # the base asked here; the target is not the rule's
        ("rm -rf build", "rm -rf dist node_modules"),
        ("rm -rf build", "rm -rf ../other"),  # `..` climbs, but names another entry
        ("rm -rf build *", "rm -rf dist"),
        ("rm -rf /srv/data/*", "rm -rf /tmp/x"),
        ("git push --force *", "git push origin main"),
        ("git push *", "git status"),
        ("git push *", "git -C repo status"),
        ("git push origin main *", "git push origin dev"),
        ("git branch -D main", "git branch -D topic"),
        ("npm publish *", "npm test"),
        ("npm publish *", "npm install left-pad"),
        ("docker rm -f db", "docker rm -f web"),
        ("kubectl delete ns prod", "kubectl delete ns staging"),
        ("kubectl delete ns prod", "kubectl delete pod prod"),  # the kind stands by its place
        ("kubectl delete pod web -n prod", "kubectl delete pod web -n staging"),
        ("cat /etc/shadow", "cat README.md"),
        ("gh pr merge *", "gh pr create --title x"),
    ],
)
def test_s12_operands_that_cannot_be_the_rules_stay_allowed(rule: str, command: str) -> None:
    assert match_command(rule, command, direction="deny") == "no_match", (rule, command)
    assert _allowed(command, rule)


# --------------------------------------------------------------------------- generated

_NAMES = st.sampled_from(["build", "dist", "out", "cache", "tmp.d", "node_modules", "x1"])
# A rule and the operands its program takes a list of.
_PROGRAMS = st.sampled_from(
    ["rm -rf", "rm -r -f", "docker rm -f", "kubectl delete ns", "git branch -D", "cat", "mytool"]
)


def _spell(name: str, how: int) -> str:
    """One of the spellings of the relative path ``name`` (the same file)."""
    return [name, f"./{name}", f"{name}/", f".//{name}", f"{name}/.", f"./{name}//"][how]


@settings(max_examples=150, deadline=None)
@given(
    program=_PROGRAMS,
    target=_NAMES,
    decoys=st.lists(_NAMES, max_size=3),
    spelling=st.integers(0, 5),
    at=st.integers(0, 3),
)
def test_s12_property_a_rules_target_among_decoys_in_any_spelling_is_never_ruled_out(
    program: str, target: str, decoys: list[str], spelling: int, at: int
) -> None:
    operands = [d for d in decoys if d != target]
    spelled = _spell(target, spelling) if program != "kubectl delete ns" else target
    operands.insert(min(at, len(operands)), spelled)
    command = f"{program} {' '.join(operands)}"
    for rule in (f"{program} {target}", f"{program} {target} *"):
        assert match_command(rule, command, direction="deny") != "no_match", (rule, command)


@settings(max_examples=150, deadline=None)
@given(
    program=_PROGRAMS,
    target=_NAMES,
    decoys=st.lists(_NAMES, min_size=1, max_size=3),
    spelling=st.integers(0, 5),
)
def test_s12_property_operands_that_are_all_other_names_do_not_match(
    program: str, target: str, decoys: list[str], spelling: int
) -> None:
    how = spelling if program != "kubectl delete ns" else 0  # object names are no paths
    operands = [_spell(d, how) for d in decoys if d != target]
    if not operands:
        return
    command = f"{program} {' '.join(operands)}"
    for rule in (f"{program} {target}", f"{program} {target} *"):
        assert match_command(rule, command, direction="deny") == "no_match", (rule, command)
