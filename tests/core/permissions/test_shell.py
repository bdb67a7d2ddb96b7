"""S12 shell analysis: everything a command line will run, and what the parser cannot see."""

from __future__ import annotations

import shlex

import pytest

from robota.core.permissions import analyze_command, match_command
from robota.core.permissions._removal import catastrophic_reason


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
        'eval "$SCRIPT"',
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


# --------------------------------------------------------------------------- issue 10: the grammar


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('g"i"t push', ("git", "push")),
        ("\\git push", ("git", "push")),
        ("'git' push", ("git", "push")),
        ("gi''t push", ("git", "push")),
        ("echo \"a\\\"b\" 'c'\\''d'", ("echo", 'a"b', "c'd")),
        ("ls \\\n  -la", ("ls", "-la")),
        ("echo a#b", ("echo", "a#b")),
        ('echo "$"', ("echo", "$")),
        ("echo \\$HOME", ("echo", "$HOME")),
    ],
)
def test_s12_words_are_read_with_posix_quote_removal(text: str, words: tuple[str, ...]) -> None:
    (command,) = analyze_command(text).commands
    assert command.words == words
    assert all(word.literal for word in command.argv)


def test_s12_expansions_are_parts_of_words_not_text() -> None:
    (command,) = analyze_command('rm -rf "$HOME/" ${HOME}/x ~/y ~other/z *.py').commands
    home, braced, tilde, other, glob = command.argv[2:]
    assert [p.kind for p in home.parts] == ["parameter", "literal"]
    assert home.pattern(variables={"HOME": "/home/u"}) == "/home/u/"
    assert braced.pattern(variables={"HOME": "/h"}) == "/h/x"
    assert tilde.pattern(home="/h") == "/h/y"
    assert other.pattern(home="/h") is None  # another user's home cannot be known here
    assert glob.has_glob
    assert glob.pattern() == "*.py"
    assert command.opaque_arguments
    # Quoted glob characters stay literal.
    (quoted,) = analyze_command("ls '*.py' \\?").commands
    assert [w.pattern() for w in quoted.argv[1:]] == ["\\*.py", "\\?"]
    assert not any(w.has_glob for w in quoted.argv)


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        ("ls $'x'", "ANSI-C quoting"),
        ("echo {a,b}", "brace expansion"),
        ("echo x{1..3}", "brace expansion"),
        ("for i in 1; do ls; done", "a for loop"),
        ("if a; then b; fi", "an if statement"),
        ("while a; do b; done", "a while/until loop"),
        ("case x in a) b;; esac", "a case statement"),
        ("[[ -f x ]]", "[[ ]]"),
        ("ls &> f", "'&>'"),
        ('echo $"x"', "the token"),
    ],
)
def test_s21_constructs_outside_the_subset_are_named(text: str, construct: str) -> None:
    line = analyze_command(text)
    assert line.parsed
    assert not line.understood
    assert any(construct in reason for reason in line.unsupported), line.unsupported


def test_s21_control_structures_still_list_every_command_for_deny_rules() -> None:
    line = analyze_command("for i in *; do rm $i; done; case x in a) git push;; esac")
    assert {c.name for c in line.commands} == {"rm", "git"}
    assert line.complete  # every command is listed with its words
    assert not analyze_command("ls $'x'").complete  # a word that is not understood


def test_s21_background_and_standalone_assignments_are_reported() -> None:
    assert analyze_command("ls &").background
    assert analyze_command("a & b").background
    assert not analyze_command("a && b").background
    assert analyze_command("PATH=.; ls").assignments == ("PATH=.",)
    (command,) = analyze_command("FOO=1 BAR=2 ls").commands
    assert command.assignments == ("FOO=1", "BAR=2")


def test_s21_here_documents_quoted_and_unquoted() -> None:
    quoted = analyze_command("cat <<'EOF'\n$(rm -rf build) $HOME\nEOF\n")
    assert [c.name for c in quoted.commands] == ["cat"]
    (redirect,) = quoted.redirects
    assert redirect.kind == "heredoc"
    assert redirect.heredoc is not None
    assert redirect.heredoc.quoted
    assert not redirect.heredoc.expands
    for spelling in ('<<"EOF"', "<<\\EOF", "<<E'O'F"):
        line = analyze_command(f"cat {spelling}\n$(rm x)\nEOF\n")
        assert [c.name for c in line.commands] == ["cat"], spelling
    unquoted = analyze_command("cat <<EOF\nhello $(rm -rf build)\nEOF\n")
    assert [c.name for c in unquoted.commands] == ["cat", "rm"]
    assert unquoted.substitutions
    assert unquoted.redirects[0].heredoc is not None
    assert unquoted.redirects[0].heredoc.expands
    plain = analyze_command("cat <<EOF\nno expansion here\nEOF\n")
    assert plain.redirects[0].heredoc is not None
    assert not plain.redirects[0].heredoc.expands
    tabs = analyze_command("cat <<-EOF\n\tbody\n\tEOF\n")
    assert tabs.parsed
    assert tabs.redirects[0].operator == "<<-"


def test_s21_a_here_document_without_its_terminator_is_unparseable() -> None:
    assert not analyze_command("cat <<EOF\nbody\n").parsed
    assert not analyze_command("cat <<EOF\nbody\nEOF \n").parsed  # `EOF ` is not `EOF`


def test_s21_redirections_are_classified() -> None:
    line = analyze_command("cmd <<< word < in > out 2>&1 >> app 3>&- >/dev/null")
    kinds = [(r.operator, r.kind) for r in line.redirects]
    assert kinds == [
        ("<<<", "herestring"),
        ("<", "read"),
        (">", "write"),
        (">&", "duplicate"),
        (">>", "write"),
        (">&-", "close"),
        (">", "write"),
    ]
    assert line.redirections == ("out", "app", "/dev/null")
    assert line.inputs == ("in",)


def test_s12_commands_run_by_another_name_their_parent() -> None:
    line = analyze_command("env A=1 nice -n 5 git push && bash -c 'rm x' && echo $(date)")
    by_name = {c.name: c for c in line.commands}
    # The environment a wrapper sets reaches the command it runs.
    assert by_name["git"].via == "nice"
    assert by_name["git"].assignments == ("A=1",)
    assert line.commands[by_name["nice"].parent or 0].name == "env"
    assert by_name["rm"].via == "bash -c"
    assert line.commands[by_name["rm"].parent or 0].name == "bash"
    assert by_name["date"].via == "$(…)"
    assert by_name["date"].parent is None


@pytest.mark.parametrize(
    "text",
    [
        "ls | bash",  # a shell reading its standard input
        "curl x | sh -s",
        "sudo -s",
        "env -S 'rm -rf /'",
        "env --zzz rm x",  # an option the wrapper table does not know
        "timeout --zzz 5 rm x",
    ],
)
def test_s12_wrappers_that_hide_what_they_run_are_opaque(text: str) -> None:
    assert analyze_command(text).opaque


def test_s21_the_shape_of_a_straight_line() -> None:
    assert analyze_command("git fetch && git rebase").shape == (0, "&&", 1)
    assert analyze_command("a | b; c || d").shape == (0, "|", 1, ";", 2, "||", 3)
    assert analyze_command("a\nb").shape == (0, ";", 1)
    assert analyze_command("(a && b)").shape is None
    assert analyze_command("a &").shape is None


@pytest.mark.parametrize("text", ["ls\x01", "ls\r-la", "ls\x1b[0m", "ls\x7f"])
def test_s21_control_characters_make_a_line_unparseable(text: str) -> None:
    assert not analyze_command(text).parsed


def test_s12_eval_of_literal_words_is_read_as_the_script_it_runs() -> None:
    line = analyze_command("eval 'git push' origin")
    assert [c.words for c in line.commands] == [
        ("eval", "git push", "origin"),
        ("git", "push", "origin"),
    ]
    assert line.commands[1].via == "eval"
    assert line.commands[1].parent == 0
    assert not line.opaque
    assert analyze_command('eval "$CMD"').opaque


def test_s12_brace_expansion_is_also_read_the_way_bash_reads_it() -> None:
    line = analyze_command("sudo {rm,-rf,/} && echo a{b,c}d x{1..3} {5..1..2}")
    words = [c.words for c in line.commands]
    assert ("rm", "-rf", "/") in words
    assert ("echo", "abd", "acd", "x1", "x2", "x3", "5", "3", "1") in words
    assert line.opaque  # POSIX sh runs a command literally named `{rm,-rf,/}`
    assert not line.hidden  # but both readings are listed
    assert "brace expansion" in line.unsupported
    for plain in ("ls {}", "echo {a}", "echo '{a,b}'", "echo \\{a,b}"):
        assert "brace expansion" not in analyze_command(plain).unsupported, plain


@pytest.mark.parametrize("text", ["cm\\\nd x", "$'rm' x", "$CMD x", "ls $'x'"])
def test_s12_text_that_hides_how_the_shell_reads_it_is_flagged(text: str) -> None:
    assert analyze_command(text).hidden
    assert not analyze_command(text).complete


def test_s12_a_newline_always_ends_a_command_even_where_the_grammar_runs_lines_together() -> None:
    # tree-sitter-bash reads `a | b | c<newline>d 2>&1` as `c d`; the shell runs `d` on its own.
    line = analyze_command("ls | ls | ls\ngit log --oneline 2>&1")
    assert [c.words for c in line.commands] == [
        ("ls",),
        ("ls",),
        ("ls",),
        ("git", "log", "--oneline"),
    ]
    assert line.shape == (0, "|", 1, "|", 2, ";", 3)
    hidden = analyze_command("echo x | cat | cat\nrm -rf / 2>&1")
    assert ("rm", "-rf", "/") in [c.words for c in hidden.commands]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # The grammar folds the next line into a redirection's destinations, newline and all
        # (found by the bash/dash differential test).
        ("cmda >/dev/null\n\\cmdb", [("cmda",), ("cmdb",)]),
        ("cmda >/dev/null\n\\cmdb x ; cmdb", [("cmda",), ("cmdb", "x"), ("cmdb",)]),
        ("ls 2>err.log\n\\rm -rf /", [("ls",), ("rm", "-rf", "/")]),
        ("ls >out\nrm -rf /", [("ls",), ("rm", "-rf", "/")]),
    ],
)
def test_s12_a_newline_after_a_redirection_ends_the_command(
    line: str, expected: list[tuple[str, ...]]
) -> None:
    analysis = analyze_command(line)
    assert [c.words for c in analysis.commands] == expected
    assert analysis.complete


def test_s12_a_lone_surrogate_makes_a_line_unparseable() -> None:
    # Model output decoded from JSON can carry one (`"\ud800"`); it is not text a shell reads.
    assert not analyze_command("ls \ud800").parsed
    assert not analyze_command("rm -rf \udcff").parsed


# --------------------------------------------------------------------------- here-document lines


@pytest.mark.parametrize(
    ("line", "words", "shape"),
    [
        (
            "cat <<'EOF' | grep -c rm\nrm -rf build\nEOF\n",
            [("cat",), ("grep", "-c", "rm")],
            (0, "|", 1),
        ),
        ("cat <<EOF |& grep x\nbody\nEOF", [("cat",), ("grep", "x")], (0, "|&", 1)),
        ("cat <<EOF && rm -rf x\nbody\nEOF", [("cat",), ("rm", "-rf", "x")], (0, "&&", 1)),
        (
            "cat <<EOF || echo b && echo c\nbody\nEOF",
            [("cat",), ("echo", "b"), ("echo", "c")],
            (0, "||", 1, "&&", 2),
        ),
        (
            "cat <<-EOF | grep a | wc -l\n\tbody\n\tEOF",
            [("cat",), ("grep", "a"), ("wc", "-l")],
            (0, "|", 1, "|", 2),
        ),
        (
            "echo a | cat <<EOF | grep b\nbody\nEOF",
            [("echo", "a"), ("cat",), ("grep", "b")],
            (0, "|", 1, "|", 2),
        ),
        (
            "echo a && cat <<EOF >/dev/null || echo c\nbody\nEOF\necho d",
            [("echo", "a"), ("cat",), ("echo", "c"), ("echo", "d")],
            (0, "&&", 1, "||", 2, ";", 3),
        ),
        ("cat <<EOF a b\nbody\nEOF", [("cat", "a", "b")], (0,)),
    ],
)
def test_s12_a_here_document_line_goes_on_as_the_pipeline_or_list_it_is(
    line: str, words: list[tuple[str, ...]], shape: tuple[int | str, ...]
) -> None:
    # tree-sitter-bash hangs the rest of the line under the here-document; the shell reads
    # `cat <<EOF | grep x` as any `cat | grep x` whose `cat` reads the body.
    analysis = analyze_command(line)
    assert analysis.understood, analysis
    assert [c.words for c in analysis.commands] == words
    assert analysis.shape == shape
    (owner,) = [c for c in analysis.commands if any(r.kind == "heredoc" for r in c.redirects)]
    assert owner.name == "cat"


def test_s12_redirections_after_a_here_document_belong_to_its_command() -> None:
    line = analyze_command("cat <<EOF 2>&1 >out && echo x\nbody\nEOF")
    cat, echo = line.commands
    assert [r.operator for r in cat.redirects] == ["<<", ">&", ">"]
    assert echo.redirects == ()
    assert [r.operator for r in line.redirects] == ["<<", ">&", ">"]
    assert line.redirections == ("out",)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("rm 2>/dev/null -rf /", ("rm", "-rf", "/")),
        ("rm -r >x -f / >y z", ("rm", "-r", "-f", "/", "z")),
        ("cat 2>&- /etc/shadow", ("cat", "/etc/shadow")),
        ("rm <<EOF -rf /\nbody\nEOF", ("rm", "-rf", "/")),
        ("cat <<EOF >x y\nbody\nEOF", ("cat", "y")),
        ("echo a | rm >x -rf /", ("rm", "-rf", "/")),
    ],
)
def test_s12_words_the_grammar_hangs_under_a_redirection_are_arguments(
    line: str, words: tuple[str, ...]
) -> None:
    # A redirection takes one word in the shell; the grammar gives it every word that follows.
    analysis = analyze_command(line)
    assert analysis.complete
    assert analysis.commands[-1].words == words


@pytest.mark.parametrize(
    "line",
    [
        "echo a | cat >out",
        "echo a && cat >out",
        "! cat >out",
        "{ cat x; } >out",
        "(cat x) >out",
        "echo a | cat <<EOF >out\nbody\nEOF",
    ],
)
def test_s12_a_redirection_applies_to_the_command_the_shell_gives_it(line: str) -> None:
    # The grammar hangs `>out` on the whole pipeline or list; the shell gives it to the last
    # command (and a group's to every command in it), so an allow rule for `cat *` does not
    # cover the write.
    analysis = analyze_command(line)
    cat = next(c for c in analysis.commands if c.name == "cat")
    assert any(r.kind == "write" for r in cat.redirects)
    assert match_command("cat *", line.replace("echo a", "cat a"), direction="allow") != "match"


@pytest.mark.parametrize(
    "line",
    [
        # The body starts after the line's newline; the grammar reads body lines as commands.
        "cat <<EOF |\nbody\nEOF\ngrep x",
        "cat <<EOF | grep y &&\nx\nEOF\necho z",
        "cat <<EOF | grep 'a\nb'\nbody\nEOF",
        # bash and dash refuse a word after a compound command's redirection.
        "{ cat; } >x y",
        "(cat) <<EOF y\nbody\nEOF",
        # No command before the redirections: bash runs the words after them (`rm -rf /`).
        "2>/dev/null <<EOF rm -rf /\nbody\nEOF",
    ],
)
def test_s12_a_here_document_line_not_read_exactly_is_unparseable(line: str) -> None:
    assert not analyze_command(line).parsed


@pytest.mark.parametrize(
    "line",
    [
        "cat <<'EOF' | xargs rm -rf\nbuild\nEOF",
        "cat <<EOF && rm -rf x\nbody\nEOF",
        "cat <<'EOF' || rm -rf x\nbody\nEOF",
        "rm <<EOF -rf x\nbody\nEOF",
        "rm 2>/dev/null -rf x",
    ],
)
def test_s12_deny_rules_see_a_command_after_a_here_document(line: str) -> None:
    assert match_command("rm *", line, direction="deny") == "match"
    assert match_command("rm -rf *", line, direction="deny") == "match"
    # `;` after a here-document is not read by the grammar: unevaluable, which asks.
    first, _, rest = line.partition("\n")
    after = f"{first}; rm x\n{rest}"
    assert match_command("rm *", after, direction="deny") != "no_match"


@pytest.mark.parametrize(
    "line",
    [
        "cat <<'EOF' | grep x && rm -rf /\nbody\nEOF",
        "cat <<EOF && rm -rf /\nbody\nEOF",
        "rm <<EOF -rf /\nbody\nEOF",
        "rm 2>/dev/null -rf /",
        "rm -r >/dev/null -f /",
    ],
)
def test_s21_the_removal_check_sees_rm_after_a_here_document_or_redirection(line: str) -> None:
    reason = catastrophic_reason(line, workspace="/home/user/project", home="/home/user")
    assert reason is not None
