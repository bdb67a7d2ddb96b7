"""Issue 24, review 1: option grammars and what programs may run (S12, S21).

A deny rule reads a command through the program's own grammar (:mod:`._programs`, read by
:mod:`._options`). The review found spellings the grammars did not read as what they are: an
operand that forces a push only partly known (``+$BRANCH``), ``--mirror`` and ``--prune``, a
program's own aliases (``docker rmi``, ``terraform destroy``), the kinds of object kubectl names
in many ways, options read from a file (``curl -K``); and git was trusted as data for every
command, aliases and external ``git-<name>`` programs included.
"""

from __future__ import annotations

from typing import Any

import pytest

import robota
from robota import PermissionPolicy, evaluate_permission
from robota.core.permissions import analyze_command, match_command
from robota.core.permissions._options import parse_args
from robota.core.permissions._programs import program_grammar, runs_arguments
from robota.core.permissions._shell_words import literal_word


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


def refused(command: str, rule: str) -> bool:
    """The deny rule stops the command (denies, or asks every time) under ``Bash(*)``."""
    decision = evaluate_permission(
        BASH,
        {"command": command},
        PermissionPolicy(deny=[f"Bash({rule})"], allow=["Bash(*)"], mode="bypass"),
    )
    return decision.behavior == "deny" or (decision.behavior == "ask" and decision.always_ask)


def allowed(command: str, *deny: str) -> bool:
    decision = evaluate_permission(
        BASH,
        {"command": command},
        PermissionPolicy(deny=[f"Bash({r})" for r in deny], allow=["Bash(*)"]),
    )
    return decision.behavior == "allow"


# --------------------------------------------------------------------------- implied options


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("git push --force *", "git push origin +$BR", "match"),
        ("git push --force *", 'git push origin "+$BR"', "match"),
        ("git push --force *", "git push origin +refs/heads/*:refs/heads/*", "match"),
        ("git push --force *", "git push --mirror", "match"),
        ("git push --force *", "git push --mir origin", "match"),
        ("git push --delete *", "git push --prune origin", "match"),
        ("git push --delete *", "git push --mirror origin", "match"),
        ("git push --delete *", 'git push origin ":$BR"', "match"),
        ("git push --force *", 'git push origin "$BR"', "unevaluable"),
        ("git push --force *", "git push origin refs/heads/$BR", "no_match"),
        ("git push --delete *", "git push origin HEAD:$BR", "no_match"),
    ],
)
def test_s12_an_operand_that_implies_an_option_is_read_by_its_fixed_prefix(
    rule: str, command: str, expected: str
) -> None:
    assert match_command(rule, command, direction="deny") == expected, (rule, command)


# --------------------------------------------------------------------------- aliases and kinds


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("kubectl delete namespace *", "kubectl delete ns prod", "match"),
        ("kubectl delete namespace *", "kubectl delete namespaces prod", "match"),
        ("kubectl delete ns *", "kubectl delete namespace prod", "match"),
        ("kubectl delete pod *", "kubectl delete po x", "match"),
        ("kubectl delete pod *", "kubectl delete pods x", "match"),
        ("kubectl delete pod *", "kubectl delete Pod x", "match"),
        ("kubectl delete pod *", "kubectl delete pod/x", "match"),
        ("kubectl delete pod *", "kubectl -n prod delete pods/x", "match"),
        ("kubectl delete pod web", "kubectl delete pod/web", "match"),
        ("kubectl delete deployment *", "kubectl delete deploy x", "match"),
        ("kubectl delete deployment *", "kubectl delete deployments.apps x", "match"),
        ("kubectl delete deployment *", "kubectl delete deployment.v1.apps x", "match"),
        ("kubectl delete pod *", "kubectl delete po,svc x", "unevaluable"),
        ("kubectl delete pod *", "kubectl delete -f pod.yaml", "unevaluable"),
        ("kubectl delete service *", "kubectl delete pod/a svc/b", "unevaluable"),
        ("kubectl delete pod *", "kubectl delete svc x", "no_match"),
        ("kubectl delete pod *", "kubectl delete deploy/x", "no_match"),
        ("docker rm -f *", "docker container rm -f web", "match"),
        ("docker rm -f *", "docker container remove --force web", "match"),
        ("docker container rm *", "docker rm web", "match"),
        ("docker rmi *", "docker image rm x", "match"),
        ("docker image rm *", "docker rmi x", "match"),
        ("docker rm *", "docker image rm x", "no_match"),
        ("terraform destroy *", "terraform apply -destroy", "match"),
        ("terraform destroy *", "terraform -chdir=infra apply -auto-approve -destroy", "match"),
        ("terraform apply *", "terraform destroy", "match"),
        ("terraform destroy *", "terraform apply -auto-approve", "no_match"),
    ],
)
def test_s12_a_subcommand_or_object_kind_is_read_in_every_spelling(
    rule: str, command: str, expected: str
) -> None:
    assert match_command(rule, command, direction="deny") == expected, (rule, command)


def test_s12_an_alias_reads_as_the_words_it_stands_for() -> None:
    docker = program_grammar("docker")
    assert docker is not None
    parsed = parse_args(docker, [literal_word(w) for w in ("rmi", "-f", "img")])
    assert [w.value for w in parsed.operands] == ["image", "rm", "img"]
    assert [o.name for o in parsed.options] == ["--force"]


@pytest.mark.parametrize(
    "command",
    [
        "kubectl get pods",
        "docker container ls",
        "docker ps -a",
        "docker image ls",
        "terraform plan",
    ],
)
def test_s12_ordinary_commands_of_those_programs_stay_allowed(command: str) -> None:
    assert allowed(command, "kubectl delete *", "docker rm *", "terraform destroy *"), command
    assert match_command("kubectl delete pod *", command, direction="deny") == "no_match"
    assert match_command("docker rm *", command, direction="deny") == "no_match"


# --------------------------------------------------------------------------- option files


@pytest.mark.parametrize(
    "command",
    [
        "curl -K - https://h/x <<<'request = DELETE'",
        "curl --config cfg https://h/x",
        "curl -Kcfg https://h/x",
        "curl --conf=cfg https://h/x",
    ],
)
def test_s12_options_read_from_a_file_make_a_rule_on_that_program_unevaluable(
    command: str,
) -> None:
    assert match_command("curl -X DELETE *", command, direction="deny") == "unevaluable"
    assert refused(command, "curl -X DELETE *")


# --------------------------------------------------------------------------- data programs


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("git status", False),
        ("git -C repo log --oneline", False),
        ("git grep foo", False),
        ("git push --force origin main", False),
        ("git config user.email a@b", False),
        ("git", False),
        ("git lfs pull", True),  # an external git-lfs program
        ("git flow init", True),
        ("git st", True),  # an alias, or an external git-st
        ("git remote-ext origin 'sh -c x'", True),
        ("git merge-index rm -a", True),
        ("git shell -c x", True),
        ("git $SUB x", True),
        ("ls -la", False),
        ("grep -r x .", False),
        ("make test", True),
        ("mytool --run x", True),
    ],
)
def test_s21_which_programs_may_run_their_arguments(command: str, runs: bool) -> None:
    (simple, *_) = analyze_command(command).commands
    assert runs_arguments(simple) is runs, command
