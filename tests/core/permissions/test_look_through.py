"""S21: what a program may run of its own arguments, read one way (issue 24, review 1).

Deny and ask rules and the catastrophic-removal check look through the arguments of a program
not known to leave them alone. They share one reading (``_look_through``): arguments with
expansions are read as the analysis reads ``eval`` of computed words, heads are cut where a
program may cut them, text is read by the shell analysis (never as raw tokens), the program
counts only in command position, and nesting and work are bounded — past a bound, what may name
the program asks.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionContext, PermissionPolicy, evaluate_permission
from robota.core.permissions import match_command
from robota.core.permissions._removal import catastrophic_reason

HOME = "/home/user"
WORKSPACE = "/home/user/project"


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
CONTEXT = PermissionContext(workspace=WORKSPACE, home=HOME)


def decide(command: str, **policy: Any) -> robota.PermissionDecision:
    return evaluate_permission(BASH, {"command": command}, PermissionPolicy(**policy), CONTEXT)


def refused(command: str, rule: str) -> bool:
    """The rule stops the command (denies, or asks every time) in bypass mode under Bash(*)."""
    decision = decide(command, deny=[f"Bash({rule})"], allow=["Bash(*)"], mode="bypass")
    return decision.behavior == "deny" or (decision.behavior == "ask" and decision.always_ask)


def allowed(command: str, *deny: str) -> bool:
    decision = decide(command, deny=[f"Bash({r})" for r in deny], allow=["Bash(*)"])
    return decision.behavior == "allow"


def removal(command: str) -> str | None:
    return catastrophic_reason(command, workspace=WORKSPACE, home=HOME)


# --------------------------------------------------------------------------- expansions (3)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("rm -rf *", 'docker exec web sh -c "rm -rf /app/$DIR"'),
        ("rm -rf *", 'kubectl exec p -- sh -c "rm -rf /data/${X}"'),
        ("git push --force *", 'docker exec web sh -c "git push --force origin $BR"'),
        ("rm -rf *", 'tool "rm -$(echo rf) y"'),
        ("rm -rf *", 'tool "rm -rf ~/$SUB"'),
        ("rm -rf *", "tool \"$PREFIX\"' rm -rf x'"),
        ("rm -rf *", 'tool --run="rm -rf $DIR"'),
    ],
)
def test_s21_an_argument_with_expansions_is_read_as_eval_reads_computed_words(
    rule: str, command: str
) -> None:
    # Review 1, item 3: a word with an expansion was skipped by the look-through.
    assert match_command(rule, command, direction="deny") != "no_match", command
    assert refused(command, rule)


@pytest.mark.parametrize(
    "command",
    [
        'tool "$CMD"',
        "tool $CMD",
        'tool "$(make-command)"',
        "tool *",
        "tool ~bob",
        'x=rm; tool "$x -rf y"',
        "tool '$(printf \"\\162\\155\") -rf y'",
        "tool '* -rf y'",
    ],
)
def test_s21_an_argument_known_only_at_run_time_is_the_documented_residual(command: str) -> None:
    # SECURITY.md: a word whose value exists only at run time is not looked into.
    assert match_command("rm -rf *", command, direction="deny") == "no_match", command


def test_s21_a_removal_inside_an_argument_with_expansions_always_asks() -> None:
    assert removal('cgexec -g cpu:x bash -c "rm -rf $HOME"') is not None
    assert removal('tool --run="rm -rf $HOME/"') is not None


# --------------------------------------------------------------------------- nesting (4)


@pytest.mark.parametrize(
    "command",
    [
        "kubectl exec p -- sh -c \"kubectl exec q -- sh -c 'kubectl exec r -- sh -c "
        '\\"rm -rf /data\\"\'"',
        'mytool "mytool2 \'mytool3 \\"rm -rf x\\"\'"',
    ],
)
def test_s21_nesting_deeper_than_the_reading_goes_asks_when_the_program_is_named(
    command: str,
) -> None:
    # Review 1, item 4: past the depth limit the look-through answered "no match".
    assert match_command("rm -rf *", command, direction="deny") == "unevaluable", command
    assert refused(command, "rm -rf *")


def _nest(inner: str, levels: int) -> str:
    for level in range(levels):
        inner = f"tool{level} {shlex.quote(inner)}"
    return inner


@settings(max_examples=60, deadline=None)
@given(levels=st.integers(min_value=1, max_value=9))
def test_s21_no_depth_of_nesting_hides_a_named_program(levels: int) -> None:
    command = _nest("rm -rf x", levels)
    assert match_command("rm -rf *", command, direction="deny") != "no_match", command
    assert removal(_nest("rm -rf ~", levels)) is not None
    # The other direction: nesting that names no such program is no match at any depth.
    plain = _nest("echo hello world", levels)
    assert match_command("rm -rf *", plain, direction="deny") == "no_match", plain


# --------------------------------------------------------------------------- the shell's reading (5)

SPELLINGS = [
    "tool 'r\"m\" -rf y'",
    "tool '\\rm -rf y'",
    "tool 'r''m -rf y'",
    "tool '{rm,-rf,y}'",
    "tool -c'rm -rf x'",
    "tool -e'rm -rf x'",
    "tool -qc'rm -rf x'",
    "tool exec:rm -rf x",
    "tool --exec:'rm -rf x'",
    "tool --run='r\"\"m -rf x'",
    "tool 'x=rm; $x -rf y'",
    "tool '`printf rm` -rf y'",
]


@pytest.mark.parametrize("command", SPELLINGS)
def test_s21_an_argument_is_read_by_the_shell_analysis_not_as_raw_tokens(command: str) -> None:
    # Review 1, item 5: the pre-filter read raw tokens, so quoting, backslashes, braces, glued
    # option values and `:` values hid the program.
    assert match_command("rm -rf *", command, direction="deny") != "no_match", command
    assert refused(command, "rm -rf *")


@pytest.mark.parametrize(
    "command", ["mywrap 'r\"m\" -rf ~'", "mywrap '{rm,-rf,/}'", "mywrap -c'rm -rf ~'"]
)
def test_s21_the_removal_check_reads_an_argument_the_same_way(command: str) -> None:
    assert removal(command) is not None, command


def _spell(name: str, ways: list[int]) -> str:
    out = []
    for ch, way in zip(name, ways, strict=False):
        out.append([ch, f'"{ch}"', f"'{ch}'", f"\\{ch}"][way])
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(
    ways=st.lists(st.integers(min_value=0, max_value=3), min_size=2, max_size=2),
    head=st.sampled_from(["", "-c", "-qe", "--exec=", "exec:", "!", "--opt=key:"]),
    joined=st.booleans(),
)
def test_s21_no_spelling_of_a_head_hides_the_program_from_either_reader(
    ways: list[int], head: str, joined: bool
) -> None:
    name = _spell("rm", ways)
    text = f"{head}{name} -rf ~"
    command = "tool " + (shlex.quote(text) if joined else shlex.quote(f"{head}{name}") + " -rf ~")
    # One reading: the deny rule and the removal check see the same command.
    assert match_command("rm -rf *", command, direction="deny") != "no_match", command
    assert removal(command) is not None, command


@settings(max_examples=120, deadline=None)
@given(
    name=st.sampled_from(["rm", "git"]),
    cuts=st.sets(st.integers(min_value=0, max_value=3), min_size=1),
    form=st.sampled_from(["mytool '{}'", "mytool --run='{}'", "python3 <<'EOF'\n{}\nEOF"]),
)
def test_s21_a_line_continuation_inside_a_name_does_not_hide_it(
    name: str, cuts: set[int], form: str
) -> None:
    # Review 3, item 5: `mytool 'g\<newline>it push --force'` passed the pre-filter: a shell
    # the program hands the text to joins the lines first.
    spelled = "".join(("\\\n" if i in cuts else "") + ch for i, ch in enumerate(name)) + (
        "\\\n" if len(name) in cuts else ""
    )
    rule, tail = ("git push *", " push --force") if name == "git" else ("rm -rf *", " -rf ~")
    command = form.format(spelled + tail)
    assert match_command(rule, command, direction="deny") != "no_match", command
    assert refused(command, rule)
    if name == "rm":
        assert removal(command) is not None, command


# --------------------------------------------------------------------------- data programs (20)


@pytest.mark.parametrize(
    "command", ["./cat rm -rf x", "/tmp/cat rm -rf x", "bin/echo 'rm -rf x'", "../grep -e rm -rf x"]
)
def test_s21_a_data_program_named_by_a_path_is_whatever_file_is_there(command: str) -> None:
    # Review 1, item 20: `./cat` was trusted as the system's cat and not looked through.
    assert match_command("rm -rf *", command, direction="deny") == "unevaluable", command
    assert removal(command.replace(" x", " ~")) is not None


@pytest.mark.parametrize(
    "command", ["cat rm -rf x", "/bin/cat rm -rf x", "/usr/bin/echo rm -rf x", "grep -e rm -rf x"]
)
def test_s21_a_data_program_called_by_name_or_from_a_system_directory_is_trusted(
    command: str,
) -> None:
    assert match_command("rm -rf *", command, direction="deny") == "no_match", command


# --------------------------------------------------------------------------- review 3, item 7


@pytest.mark.parametrize(
    "form",
    [
        "{name}='{text}' make",  # in front of the command
        'export {name}="{text}"; make',
        "env {name}='{text}' make",
        "make {name}='{text}'",
        "{name}='{text}' mytool --verbose",
        '{name}="{text}" sudo make',
    ],
)
@pytest.mark.parametrize("name", ["CC", "MAKE", "TOOL_CMD"])
def test_s21_a_value_assigned_in_front_of_a_command_is_looked_through_as_env_hands_it(
    form: str, name: str
) -> None:
    # Review 3, item 7: `CC='git push --force' make` was allowed while `env CC=… make`, `export
    # CC=…; make` and `make CC=…` asked: one reading for a value wherever the line assigns it.
    git = form.format(name=name, text="git push --force")
    assert match_command("git push *", git, direction="deny") != "no_match", git
    assert refused(git, "git push *")
    rm = form.format(name=name, text="rm -rf ~")
    assert removal(rm) is not None, rm


@pytest.mark.parametrize(
    "command",
    [
        "CC=clang make",
        "CC=git make",
        "CFLAGS='-O2 -g' make -j4",
        "LANG=C sort notes.txt",
        "FOO='git push --force' cat README.md",  # cat never runs what it is given
        "PATH=/opt/bin:$PATH cat README.md",
    ],
)
def test_s21_ordinary_assignments_in_front_of_a_command_stay_allowed(command: str) -> None:
    assert match_command("git push *", command, direction="deny") == "no_match", command
    assert allowed(command, "git push *", "rm -rf *")


@pytest.mark.parametrize(
    "command",
    [
        "PATH=.:$PATH cat 'git push --force'",
        "PATH=/tmp cat 'git push --force'",
        "env PATH=. cat 'git push --force'",
        "PATH=.:$PATH; cat 'git push --force'",
        "export PATH=.:$PATH; cat 'git push --force'",
        "hash -p ./evil cat; cat 'git push --force'",
        "PATH=. mytool 'cat \"git push --force\"'",
        "mytool 'PATH=. cat \"git push --force\"'",
    ],
)
def test_s21_a_line_that_changes_path_makes_a_data_program_whatever_file_is_found(
    command: str,
) -> None:
    # Review 3, item 7: `PATH=.:$PATH cat …` finds `./cat` as `./cat …` does.
    assert match_command("git push *", command, direction="deny") == "unevaluable", command
    assert refused(command, "git push *")
    rm = command.replace("git push --force", "rm -rf ~")
    assert removal(rm) is not None, rm


# --------------------------------------------------------------------------- command position (15)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("git push *", "sed -n '/git push/p' notes.md"),
        ("rm -rf *", "awk '/rm -rf/ {print}' log.txt"),
        ("rm -rf *", 'find . -exec grep -l "rm -rf" {} \\;'),
        ("git push *", "find . -name '*.sh' -exec grep -n 'git push' {} +"),
        ("rm -rf *", "mytool 'echo rm -rf x'"),
        ("git push *", "gh pr create --title 'Fix the CI badge' --body 'Docs only'"),
        ("rm -rf *", "docker run --rm -it img make test"),
        ("rm -rf *", "kubectl get pods -o jsonpath='{.items[*].metadata.name}'"),
        ("rm -rf *", "mytool --include '*.py' src"),
        ("rm -rf *", "ruff check --exclude '*.pyi' --format=grouped src"),
        ("git push *", "xargs -n1 grep -l 'git push' < files.txt"),
    ],
)
def test_s21_the_program_counts_only_in_command_position(rule: str, command: str) -> None:
    # Review 1, item 15: text that mentions the program was taken for the program, and find's
    # -exec words were read again as text after the analysis had listed them as a command.
    assert match_command(rule, command, direction="deny") == "no_match", command
    assert allowed(command, rule)


def test_s21_a_program_named_in_text_is_one_more_program_that_may_run_its_words() -> None:
    # The documented reading (SECURITY.md): text a program may run is a command line, and an
    # unknown program in it may run its own words in turn, so `Explain` may run `git push`.
    command = "gh pr create --title 'Explain the git push flow'"
    assert match_command("git push *", command, direction="deny") == "unevaluable"
    assert match_command("rm -rf *", command, direction="deny") == "no_match"


# --------------------------------------------------------------------------- work (18)


def _calls(action: Callable[[], object]) -> int:
    """Python function calls made by ``action``: a count of work, not of time."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("word", ["rm", "--x=rm", "-crm"])
def test_s21_looking_through_grows_linearly_with_the_line(word: str) -> None:
    # Review 1, item 18: each occurrence re-read the whole rest of the line (quadratic time).
    def line(n: int) -> str:
        return "tool " + " ".join([word] * n)

    def deny(n: int) -> Callable[[], object]:
        return lambda: match_command("rm -rf *", line(n), direction="deny")

    def check(n: int) -> Callable[[], object]:
        return lambda: catastrophic_reason(line(n) + " ~", workspace=WORKSPACE, home=HOME)

    for work in (deny, check):
        small, large = _calls(work(300)), _calls(work(600))
        assert large < 2.6 * small, (word, work, small, large)
    # Past what is read, a line that names the program that often asks.
    assert match_command("rm -rf *", line(600), direction="deny") == "unevaluable"


@pytest.mark.parametrize(
    ("rule", "command"),
    [("rm -rf *", "/rm -rf /tmp/x"), ("git push *", "/git push origin main")],
)
def test_s21_a_command_the_line_runs_from_the_root_directory_is_read_by_its_name(
    rule: str, command: str
) -> None:
    # Whatever file is at /rm runs: a command the line itself runs is never dismissed because of
    # where it lives (only a pattern in free text, `sed -n '/git push/p'`, is).
    assert match_command(rule, command, direction="deny") == "match"
