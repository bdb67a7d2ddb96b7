"""S12 shell analysis: everything a command line will run, and what the parser cannot see."""

from __future__ import annotations

import shlex

import pytest

from robota.core.permissions import analyze_command


def names(text: str) -> list[str]:
    return [c.name for c in analyze_command(text).commands]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ls", ["ls"]),
        ("a | b | c", ["a", "b", "c"]),
        ("a; b && c || d", ["a", "b", "c", "d"]),
        ("(a; b)", ["a", "b"]),
        ("{ a; b; }", ["a", "b"]),
        ("if a; then b; else c; fi", ["a", "b", "c"]),
        ("while a; do b; done", ["a", "b"]),
        ("for x in 1 2; do b $x; done", ["b"]),
        ("x=$(a) b", ["a", "b"]),
        ("b > $(a)", ["a", "b"]),
        ("diff <(a) <(b)", ["a", "b", "diff"]),
        ("FOO=1 BAR=2 cmd", ["cmd"]),
    ],
)
def test_every_command_of_a_line_is_found(text: str, expected: list[str]) -> None:
    assert sorted(names(text)) == sorted(expected)


@pytest.mark.parametrize(
    ("text", "inner"),
    [
        ("env -u HOME FOO=1 rm x", "rm"),
        ("env -- rm x", "rm"),
        ("sudo -u root -g wheel rm x", "rm"),
        ("nice -n 10 rm x", "rm"),
        ("nohup rm x", "rm"),
        ("timeout -s KILL 5 rm x", "rm"),
        ("command rm x", "rm"),
        ("exec rm x", "rm"),
        ("stdbuf -o L rm x", "rm"),
        ("xargs -0 rm", "rm"),
        ("find . -execdir rm {} +", "rm"),
        ("find . -ok rm {} \\;", "rm"),
        ("bash -lc 'rm x'", "rm"),
        ("sh -c 'cd /; rm x'", "rm"),
        ("zsh -c 'echo; rm x'", "rm"),
    ],
)
def test_wrappers_expose_the_command_they_run(text: str, inner: str) -> None:
    assert inner in names(text)


def test_arguments_that_arrive_later_are_marked() -> None:
    (xargs,) = [c for c in analyze_command("xargs rm").commands if c.name == "rm"]
    assert xargs.opaque_arguments
    (found,) = [c for c in analyze_command("find . -exec rm {} \\;").commands if c.name == "rm"]
    assert found.opaque_arguments
    (expanded,) = analyze_command("rm $TARGET").commands
    assert expanded.opaque_arguments
    (substituted,) = [c for c in analyze_command("rm $(cat list)").commands if c.name == "rm"]
    assert substituted.opaque_arguments
    (plain,) = analyze_command("rm a b").commands
    assert not plain.opaque_arguments
    assert analyze_command("xargs").commands[-1].opaque_arguments


@pytest.mark.parametrize(
    "text",
    [
        "eval 'rm x'",
        "source env.sh",
        ". ./env.sh",
        "$CMD x",
        "${CMD} x",
        'bash -c "$SCRIPT"',
        "bash script.sh",
        "sh -c",
        "f() { rm x; }",
    ],
)
def test_what_runs_but_cannot_be_seen_is_opaque(text: str) -> None:
    assert analyze_command(text).opaque


def test_plain_lines_are_not_opaque() -> None:
    for text in ("ls -la", "bash -c 'ls'", "echo $HOME", "git log | head"):
        assert not analyze_command(text).opaque, text


@pytest.mark.parametrize(
    ("text", "outputs", "inputs"),
    [
        ("a > out", ("out",), ()),
        ("a >> out", ("out",), ()),
        ("a >| out", ("out",), ()),
        ("a &> out", ("out",), ()),
        ("a >& out", ("out",), ()),
        ("a < in", (), ("in",)),
        ("a <<< 'text'", (), ()),
        ("a 2> err 1> out < in", ("err", "out"), ("in",)),
    ],
)
def test_redirections_are_recorded_by_direction(
    text: str, outputs: tuple[str, ...], inputs: tuple[str, ...]
) -> None:
    line = analyze_command(text)
    assert line.redirections == outputs
    assert line.inputs == inputs


def test_substitutions_are_flagged() -> None:
    assert analyze_command("echo $(date)").substitutions
    assert analyze_command("echo `date`").substitutions
    assert analyze_command("diff <(a) <(b)").substitutions
    assert analyze_command("x=$(date)").substitutions
    assert not analyze_command("echo date").substitutions


def test_unparseable_and_hostile_input() -> None:
    for text in ("echo 'open", "(((", "", "   ", "a\x00b"):
        line = analyze_command(text)
        assert not line.parsed, text
        assert line.commands == ()
    assert analyze_command(None).error == "empty command"  # type: ignore[arg-type]


def test_time_is_a_wrapper_and_what_it_times_is_found() -> None:
    assert names("time rm x") == ["time", "rm"]
    assert names("time -p rm x") == ["time", "rm"]


def test_a_redirection_the_grammar_cannot_read_makes_the_line_unparseable() -> None:
    # tree-sitter-bash has no `<>`; an unreadable line is never read as "runs nothing".
    assert not analyze_command("a <> both").parsed


def test_nested_shells_have_a_depth_limit() -> None:
    text = "ls"
    for _ in range(12):
        text = f"sh -c {shlex.quote(text)}"
    line = analyze_command(text)
    assert line.parsed
    assert line.opaque  # past the limit, the innermost script is not read


def test_command_names_drop_their_directory() -> None:
    (command,) = analyze_command("/usr/bin/env").commands
    assert command.name == "env"
    assert command.words == ("/usr/bin/env",)
