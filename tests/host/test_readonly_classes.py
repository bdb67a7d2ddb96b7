"""S21 read-only classification, class by class (issue 10), on the real filesystem.

Each class the security review found has its examples and a table or generated test that goes
beyond them; and every construct the classifier understands is shown to stay read-only, because
refusing more is not the fix where a construct can be understood.
"""

from __future__ import annotations

import os
import pathlib
import shlex
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robota.host import is_read_only_command, read_only_reason
from robota.host.paths._readonly_programs import GIT_SUBCOMMANDS, PROGRAMS


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    base = tmp_path_factory.mktemp("readonly")
    root = base / "ws"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "sub" / "b.txt").write_text("beta\n")
    (root / ".hidden").write_text("h\n")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s\n")
    (root / "escape").symlink_to(outside)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def read_only(command: str, root: pathlib.Path) -> bool:
    return is_read_only_command(command, workspace=str(root))


# --------------------------------------------------------------------------- both directions

GENUINELY_READ_ONLY = [
    # The acceptance list of the issue.
    "cat <<'EOF'\nhello $(rm -rf build) $HOME\nEOF",
    "ls 2>&1",
    "cat < a.txt",
    "git --no-pager log",
    "git log --format=%H",
    "git branch",
    "git remote -v",
    "cd sub && ls",
    # More of the same classes.
    'cat <<"EOF"\n`rm x`\nEOF',
    "cat <<EOF\nplain text\nEOF",
    "wc -l <<< 'some text'",
    "ls -la 2>/dev/null | head -n 3",
    "git -P log --oneline -5",
    "git log -n5 --stat -- sub",
    "git status --porcelain=v2 -uno",
    "git diff --cached --name-only",
    "git show HEAD~1:a.txt",
    "git branch -a -vv",
    "git branch --list 'feat*'",
    "git tag",
    "git tag -l 'v1.*'",
    "git remote",
    "git rev-parse --show-toplevel",
    "git grep -n alpha -- sub",
    "cd sub; cat b.txt",
    "cd sub && cd deeper && ls",
    "(cd sub && ls) && ls",
    "ls *.txt sub/*",
    "cat .hidden",
    "ls .[a-z]*",
    "grep -rn alpha .",
    "grep -e alpha -e beta -r sub",
    "rg -n --hidden alpha",
    "find . -name '*.txt' -type f -print",
    "find sub -maxdepth 1 -newer a.txt",
    "head -n 5 a.txt",
    "head -5 a.txt",
    "tail -n +2 a.txt",
    "sort -k2 -t, a.txt | uniq -c",
    "cut -d: -f1 a.txt",
    "diff -u a.txt sub/b.txt",
    "jq -r --arg name x . a.txt",
    "stat -c %s a.txt",
    "du -sh .",
    "tree -L 2 -a",
    "echo hello; printf '%s\\n' x",
    "test -f a.txt && [ -d sub ]",
    "true",
    "date +%Y-%m-%d",
    "uname -a",
    "whoami",
    "pwd",
    "realpath --relative-to=sub a.txt",
    "ls -- -",
]


@pytest.mark.parametrize("command", GENUINELY_READ_ONLY)
def test_s21_genuinely_read_only_commands_stay_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert read_only_reason(command, workspace=str(workspace)) is None


# --------------------------------------------------------------------------- assignments


@pytest.mark.parametrize(
    "command",
    [
        "FOO=bar ls",
        "PATH=.:$PATH ls",
        "LD_PRELOAD=./evil.so ls",
        "GIT_PAGER='rm -rf ~' git log",
        "GIT_EXTERNAL_DIFF=x git diff",
        "LESSOPEN='|x %s' cat a.txt",
        "PATH=.; ls",
        "export PATH=.; ls",
        "x=1",
    ],
)
def test_s21_any_assignment_before_a_command_makes_it_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert not read_only(command, workspace)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
    value=st.text(alphabet="abc./:-$", max_size=8),
    program=st.sampled_from(["ls", "cat a.txt", "git log", "grep x a.txt", "echo hi"]),
)
def test_s21_generated_assignment_prefixes_are_never_read_only(
    workspace: pathlib.Path, name: str, value: str, program: str
) -> None:
    command = f"{name}={shlex.quote(value)} {program}"
    assert not read_only(command, workspace), command


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    "command",
    [
        "git diff --ext-diff",
        "git log --textconv",
        "git log --output=x",
        "git -c core.pager=evil log",
        "git -ccore.pager=evil log",
        "git --config-env=core.pager=X log",
        "git --exec-path=. log",
        "git -C .. log",
        "git --git-dir=/tmp/x log",
        "git --work-tree=/ status",
        "git -p log",
        "git --paginate log",
        "git grep --open-files-in-pager=vim x",
        "git grep -Ovim x",
        "git log --show-signature",
        "git branch new-branch",
        "git branch -D main",
        "git tag v1.0",
        "git remote add origin x",
        "git remote show origin",
        "git push",
        "git config --get user.name",
        "sort -o out.txt a.txt",
        "sort -oout.txt a.txt",
        "sort --output=out.txt a.txt",
        "sort --out=out.txt a.txt",  # GNU abbreviations are not recognised, so refused
        "sort -T /tmp a.txt",
        "sort --compress-program=sh a.txt",
        "tree -o out.txt",
        "uniq a.txt out.txt",
        "rg --pre cat alpha",
        "rg -z alpha",
        "rg -L alpha",
        "file -C -m magic",
        "file -f names.txt",
        "diff -l a.txt sub/b.txt",
        "jq -f prog.jq a.txt",
        "jq --rawfile x /etc/passwd . a.txt",
        "tail -f a.txt",
        "date -s 2020-01-01",
        "date 0101000020",
        "hostname evil",
        "find . -delete",
        "find . -exec cat {} +",
        "find . -fprint out",
        "find . -ok rm {} ;",
        "ls --zzz",
        "cat -Z a.txt",
    ],
)
def test_s21_writing_or_program_running_options_are_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert not read_only(command, workspace), command


def test_s21_every_program_is_decided_by_an_allow_list_of_its_options(
    workspace: pathlib.Path,
) -> None:
    # Each table entry is an allow-list: an option nobody listed is refused, for every program.
    for name, program in PROGRAMS.items():
        if not program.parses_options or name in ("test", "["):
            continue
        assert not read_only(f"{name} --robota-unknown-option", workspace), name
        assert not read_only(f"{name} -%", workspace), name
    for name in GIT_SUBCOMMANDS:
        assert not read_only(f"git {name} --robota-unknown-option", workspace), name


def test_s21_an_option_glued_to_an_outside_value_is_judged_by_that_value(
    workspace: pathlib.Path,
) -> None:
    assert not read_only("grep -f/etc/passwd x a.txt", workspace)
    assert not read_only("grep --file=/etc/passwd x", workspace)
    assert not read_only("grep -f /etc/passwd x", workspace)
    assert not read_only("diff --from-file=/etc/passwd a.txt", workspace)
    assert not read_only("realpath --relative-to=/etc a.txt", workspace)
    assert not read_only("find . -newer /etc/passwd", workspace)
    assert not read_only("find . -newermm /etc/passwd", workspace)
    assert read_only("find . -newermt 2024-01-01", workspace)  # a date, not a file
    assert read_only("grep -fa.txt x sub/b.txt", workspace)


@pytest.mark.parametrize(
    "command",
    [
        "wc --files0-from=names",
        "du --files0-from=names",
        "sort --files0-from=names",
        "sha256sum -c sums",
        "md5sum --check sums",
    ],
)
def test_s21_options_that_read_file_names_from_a_file_are_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert not read_only(command, workspace)


@pytest.mark.parametrize(
    "command",
    ["grep -R x .", "grep --dereference-recursive x .", "find -L .", "find . -follow", "ls -L",
     "ls --dereference sub", "du -L .", "diff -r a.txt sub", "tree -l"],
)  # fmt: skip
def test_s21_options_that_follow_symlinks_through_a_tree_are_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert not read_only(command, workspace)


def test_s21_a_program_named_by_a_path_is_not_the_system_program(
    workspace: pathlib.Path,
) -> None:
    for command in ("./ls", "/bin/ls", "sub/cat a.txt", "~/bin/ls", "../ls"):
        assert not read_only(command, workspace), command
    assert read_only("ls", workspace)


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    "command",
    [
        "cat .?/x",  # `.?` matches `..` in sh
        "ls .*",  # so does `.*`
        "cat .*/secret",
        "cat *",  # a match is a symlink leading out
        "cat escape/secret",
        "cat esc*/secret",
        "ls es?ape/",
        "cat -- -/../../outside/secret",  # operands after -- that look like options
        "cat -- ../outside/secret",
        "cat ../outside/secret",
        "cat /etc/passwd",
        "cat < /etc/passwd",
        "cat < escape/secret",
        "ls ~",
        "cat ~/.ssh/id_rsa",
        "ls ~root",
        "cd .. && ls",
        "cd escape && ls",
        "cd sub && cat ../../outside/secret",
        "cd sub; cat ../escape/secret",
        "cd / && ls",
        "cd",
        "cd -",
        "git log -- ../",
        "git diff --no-index /etc/passwd a.txt",
        "test -f /etc/passwd",
        "[ -e ../outside/secret ]",
        "head -n1 /etc/hostname",
        "stat /",
    ],
)
def test_s21_a_path_is_judged_by_where_it_resolves(workspace: pathlib.Path, command: str) -> None:
    assert not read_only(command, workspace), command


def test_s21_a_glob_is_expanded_before_options_are_read(workspace: pathlib.Path) -> None:
    # A file named like an option becomes that option when `*` expands: the classic wildcard
    # injection. The classifier reads the options from the expanded words, as the program does.
    root = workspace.parent / "injection"
    root.mkdir()
    (root / "data.txt").write_text("x\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert read_only("sort *", root)
    (root / "-o").write_text("")
    assert not read_only("sort *", root)
    (root / "-o").unlink()
    (root / "--output=owned").write_text("")
    assert not read_only("sort *", root)
    assert read_only("sort -- *", root)  # after `--` they are operands again


# --------------------------------------------------------------------------- shell constructs


@pytest.mark.parametrize(
    "command",
    [
        "ls &",
        "ls & cat a.txt",
        "ls &>/dev/null",  # `&>` backgrounds in POSIX sh
        "cat <<EOF\n$(rm -rf build)\nEOF",
        "cat <<EOF\n`rm -rf build`\nEOF",
        "cat <<EOF\n$HOME\nEOF",
        "cat <<EOF | sh\nrm -rf build\nEOF",
        "echo $(whoami)",
        "echo `whoami`",
        "diff <(ls) a.txt",
        "cat $FILE",
        "cat ${FILE}",
        "echo $((1+2))",
        "ls $'a.txt'",
        "ls {a,b}.txt",
        "if true; then ls; fi",
        "for f in *; do cat $f; done",
        "[[ -f a.txt ]]",
        "f() { ls; }; f",
        "ls > listing.txt",
        "ls >> listing.txt",
        "ls 2> errors.txt",
        "ls <> a.txt",
        "ls >| x",
        "eval ls",
        "bash -c ls",
        "sh -c 'cat a.txt'",
        "timeout 5 ls",
        "env ls",
        "command ls",
        "xargs cat < a.txt",
        "echo 'unterminated",
    ],
)
def test_s21_shell_constructs_outside_the_subset_are_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert not read_only(command, workspace), command


def test_s21_git_reads_only_a_repository_inside_the_workspace(
    tmp_path: pathlib.Path,
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not read_only("git status", plain)  # git would search the parents
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text("gitdir: /elsewhere/.git\n")
    assert not read_only("git log", linked)  # a .git file points outside
    repo = tmp_path / "repo"
    (repo / "inner").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert read_only("git status", repo)
    assert not read_only("git status", repo / "inner")  # its repository is outside it


# --------------------------------------------------------------------------- property test

_SAFE_COMMANDS = [
    "ls",
    "ls -la",
    "cat a.txt",
    "grep alpha a.txt",
    "wc -l a.txt",
    "head -n 1 a.txt",
    "git status",
    "git log --oneline",
    "echo hello",
    "sort a.txt",
    "find . -name x",
]
_OPERATORS = [" | ", " && ", " || ", "; ", "\n"]
_SAFE_SUFFIXES = ["", " 2>&1", " 2>/dev/null", " >/dev/null", " < a.txt"]
_QUOTED_HEREDOC = "cat <<'EOF'\n$(rm -rf x) `y` $HOME\nEOF"

# Constructs outside the understood subset, each placed into an otherwise safe line.
_CONSTRUCTS = {
    "assignment prefix": lambda cmd: f"X=1 {cmd}",
    "standalone assignment": lambda cmd: f"X=1; {cmd}",
    "command substitution": lambda cmd: f"{cmd} $(ls)",
    "backquote substitution": lambda cmd: f"{cmd} `ls`",
    "process substitution": lambda cmd: f"{cmd} <(ls)",
    "parameter expansion": lambda cmd: f"{cmd} $X",
    "braced expansion": lambda cmd: f"{cmd} ${{X}}",
    "default expansion": lambda cmd: f"{cmd} ${{X:-a.txt}}",
    "arithmetic": lambda cmd: f"{cmd} $((1))",
    "background": lambda cmd: f"{cmd} &",
    "output redirection": lambda cmd: f"{cmd} > out.txt",
    "append redirection": lambda cmd: f"{cmd} >> out.txt",
    "read-write redirection": lambda cmd: f"{cmd} <> a.txt",
    "unquoted expanding here-doc": lambda cmd: f"{cmd} <<EOF\n$(id)\nEOF",
    "here-doc with a variable": lambda cmd: f"{cmd} <<EOF\n$HOME\nEOF",
    "ANSI-C string": lambda cmd: f"{cmd} $'x'",
    "brace expansion": lambda cmd: f"{cmd} {{a,b}}",
    "eval": lambda cmd: f"eval {shlex.quote(cmd)}",
    "shell -c": lambda cmd: f"sh -c {shlex.quote(cmd)}",
    "function": lambda cmd: f"f() {{ {cmd}; }}; f",
    "if": lambda cmd: f"if true; then {cmd}; fi",
    "for": lambda cmd: f"for i in 1; do {cmd}; done",
    "[[": lambda cmd: f"[[ -n x ]] && {cmd}",
    "wrapper": lambda cmd: f"env {cmd}",
    "program by path": lambda cmd: f"./{cmd}",
    # (`echo` prints these words and reads nothing, so they go to a program that reads them.)
    "unknown option": lambda cmd: f"{cmd} | ls --robota-zzz",
    "outside path": lambda cmd: f"{cmd} | cat /etc/passwd",
    "parent path": lambda cmd: f"{cmd} | cat ../outside/secret",
    "dot glob": lambda cmd: f"{cmd} && echo .?/secret",  # the shell itself reads `..`
    "tilde": lambda cmd: f"{cmd} | cat ~/x",
    "symlink out": lambda cmd: f"{cmd} | cat escape/secret",
    "not read-only program": lambda cmd: f"{cmd} && touch x",
}


def _safe_line(parts: list[tuple[str, str, str]], heredoc: bool) -> str:
    text = ""
    for index, (command, suffix, operator) in enumerate(parts):
        text += (operator if index else "") + command + suffix
    if heredoc:
        text = f"{_QUOTED_HEREDOC}\n{text}" if text else _QUOTED_HEREDOC
    return text


_PARTS = st.lists(
    st.tuples(
        st.sampled_from(_SAFE_COMMANDS),
        st.sampled_from(_SAFE_SUFFIXES),
        st.sampled_from(_OPERATORS),
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=_PARTS, heredoc=st.booleans())
def test_s21_generated_lines_of_the_understood_subset_are_read_only(
    workspace: pathlib.Path, parts: list[tuple[str, str, str]], heredoc: bool
) -> None:
    line = _safe_line(parts, heredoc)
    assert read_only_reason(line, workspace=str(workspace)) is None, line


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=_PARTS,
    heredoc=st.booleans(),
    construct=st.sampled_from(sorted(_CONSTRUCTS)),
    where=st.integers(min_value=0, max_value=3),
)
def test_s21_a_line_with_any_construct_outside_the_subset_is_never_read_only(
    workspace: pathlib.Path,
    parts: list[tuple[str, str, str]],
    heredoc: bool,
    construct: str,
    where: int,
) -> None:
    index = where % len(parts)
    command, suffix, operator = parts[index]
    parts = [*parts]
    parts[index] = (_CONSTRUCTS[construct](command), suffix, operator)
    line = _safe_line(parts, heredoc)
    assert not read_only(line, workspace), (construct, line)


def test_s21_the_workspace_must_be_an_existing_absolute_directory(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match="workspace"):
        read_only_reason("ls", workspace="relative")
    with pytest.raises(ValueError, match="workspace"):
        read_only_reason("ls", workspace=os.fspath(tmp_path / "missing"))
    assert read_only_reason(7, workspace=os.fspath(tmp_path)) is not None  # type: ignore[arg-type]


# --------------------------------------------------------------------------- review findings


@pytest.mark.parametrize(
    "command",
    [
        # Builtins that evaluate a word as code (an array subscript's substitutions run).
        "printf -v 'a[$(touch pwned)]' x",
        "test -v 'a[$(touch pwned)]'",
        "[ -v 'a[$(touch pwned)]' ]",
        # Line continuations the grammar reads differently from bash and dash.
        "echo ok\\\n#; touch pwned",
        'echo "$\\\n(touch pwned)"',
        "cat <<EOF\nEO\\\nF\ntouch pwned\nEOF",
        "cat a.txt\\\n  > out",
    ],
)
def test_s21_text_the_shell_runs_as_code_is_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert not read_only(command, workspace), command


def test_s21_bracket_globs_are_globs(workspace: pathlib.Path) -> None:
    # The grammar splits `escap[e]` into pieces; read as one word it is a glob that matches the
    # symlink leading out.
    assert not read_only("cat escap[e]/secret", workspace)
    assert not read_only("cd [e]scape && cat secret", workspace)
    assert not read_only("grep -r s [e]scape/", workspace)
    assert read_only("cat [a].txt", workspace)
    assert read_only("ls *.[tx]xt", workspace)


def test_s21_diff_of_directories_is_not_read_only(workspace: pathlib.Path) -> None:
    # Without -r, diff still compares the files one level down, following their symlinks.
    assert not read_only("diff sub escape", workspace)
    assert not read_only("diff . sub", workspace)
    assert read_only("diff a.txt sub/b.txt", workspace)


@pytest.mark.parametrize(
    "command",
    [
        "diff --from-file=dir key",
        "diff --to-file=dir key",
        "diff --from-file dir key",
        "diff dir key",
        "diff key dir",
    ],
)
def test_s21_diff_of_a_directory_beside_a_file_is_not_read_only(
    tmp_path: pathlib.Path, command: str
) -> None:
    # Review finding (issue 24): diff reads DIR/basename(FILE), a path no argument names; the
    # operands alone were checked, so `--from-file=dir key` read a link out of the workspace.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "key").write_text("PRIVATE\n")
    ws = tmp_path / "ws"
    (ws / "dir").mkdir(parents=True)
    (ws / "dir" / "key").symlink_to(outside / "key")
    (ws / "key").write_text("public\n")
    (ws / "other").write_text("public too\n")
    assert not read_only(command, ws)
    assert read_only("diff key other", ws)  # two files: what they name is what is read


def test_s21_a_jq_program_that_imports_a_module_is_not_read_only(workspace: pathlib.Path) -> None:
    assert not read_only("jq -n 'import \"../outside/x\" as $x; $x'", workspace)
    assert not read_only("jq -n 'include \"../outside/x\"; .'", workspace)
    assert read_only("jq '.import' a.txt", workspace)  # a key named import is data


def test_s21_git_order_files_are_paths(workspace: pathlib.Path) -> None:
    assert not read_only("git log -p -O/etc/hostname", workspace)
    assert not read_only("git diff --orderfile=/etc/hostname", workspace)
    assert read_only("git diff -Oa.txt", workspace)
    assert not read_only("git grep -O x", workspace)  # there it opens files in a pager


def test_s21_git_finds_only_the_repository_the_classifier_checked(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    bare = root / "evil"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs").mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    # In `evil` git would take the directory itself for a (bare) repository and obey its
    # config (core.fsmonitor runs a program).
    assert not read_only("cd evil && git status", root)
    assert read_only("git status", root)
    (root / ".git" / "commondir").write_text("../evil\n")
    assert not read_only("git status", root)


def test_s21_cd_accepts_its_end_of_options_marker(workspace: pathlib.Path) -> None:
    assert read_only("cd -- sub && ls", workspace)


def test_s21_a_quoted_here_document_piped_to_a_reader_is_read_only(workspace: pathlib.Path) -> None:
    # The grammar hangs `| grep -c rm` under the here-document; the shell pipes `cat` into it.
    assert (
        read_only_reason("cat <<'EOF' | grep -c rm\nrm -rf build\nEOF", workspace=str(workspace))
        is None
    )
    assert read_only("cat <<'EOF' | sort | uniq -c && echo done\nb\na\nEOF\n", workspace)
    assert read_only("cat <<-'EOF' | wc -l\n\tx\n\tEOF", workspace)
    assert read_only("cat 2>/dev/null <<EOF | head -n 1\nplain\nEOF", workspace)
    # What follows it is judged like anything else.
    assert not read_only("cat <<'EOF' | sh\nrm -rf build\nEOF", workspace)
    assert not read_only("cat <<'EOF' | xargs rm\nbuild\nEOF", workspace)
    assert not read_only("cat <<'EOF' && cat ../outside/secret\nx\nEOF", workspace)
    assert not read_only("cat <<'EOF' /etc/passwd\nx\nEOF", workspace)
    assert not read_only("cat <<'EOF' >out.txt\nx\nEOF", workspace)
    assert not read_only("cat 2>/dev/null /etc/passwd", workspace)
