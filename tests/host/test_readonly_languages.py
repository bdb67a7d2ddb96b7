"""S21: option values and operands that are small languages (jq filters, git formats, dates).

Both directions for each: what a user writes every day stays read-only, and a value that makes
the program read the environment, run gpg or open a file its operands do not name is refused.
The jq and git findings are also checked against the real programs: jq run with a marked
environment, and git with a ``gpg.program`` that records that it ran.
"""

from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import stat
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robota.host import read_only_reason
from robota.host.paths._readonly_languages import jq_filter_refusal


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("languages") / "ws"
    root.mkdir()
    (root / "a.json").write_text('{"name": "x", "env": "prod"}\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def reason(command: str, root: pathlib.Path) -> str | None:
    return read_only_reason(command, workspace=str(root))


# --------------------------------------------------------------------------- jq and the environment

JQ_READING_THE_ENVIRONMENT = [
    "jq -n env",
    "jq -n 'env.HOME'",
    "jq -n 'env|keys'",
    "jq -n '$ENV'",
    "jq -n '$ENV.OPENAI_API_KEY'",
    "jq -n '$ ENV.PATH'",  # jq 1.6 reads `$` and the name as two tokens
    "jq -n '$\n# a comment\nENV.PATH'",
    "jq -n '\"\\(env.HOME)\"'",  # interpolation is code
    "jq -n '@base64 \"key: \\($ENV.KEY)\"'",
    'jq -n \'"a\\("b\\(env)")"\'',  # nested interpolation
    "jq '.[] | select(.x == env.USER)' a.json",
    "jq -n '{a: env}'",
    "jq -n '{(env.HOME): 1}'",
    "jq -n '{$ENV}'",
    "jq -n '1.env'",  # the number `1.` and then env, as jq's lexer reads it
    "jq -n '..env'",
    "jq -n 'def f: env; f'",
    "jq --arg x y -n env",
    "jq -r -- env a.json",
]


@pytest.mark.parametrize("command", JQ_READING_THE_ENVIRONMENT)
def test_s21_a_jq_filter_that_reads_the_environment_is_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    why = reason(command, workspace)
    assert why is not None
    assert "environment" in why


JQ_ORDINARY = [
    "jq .name a.json",
    "jq -r '.name' a.json",
    "jq '.env' a.json",  # a field named env is data
    "jq '.env.prod' a.json",
    "jq '.[\"env\"]' a.json",
    "jq '.\"env\"' a.json",
    "jq '.[] | select(.env == \"x\")' a.json",
    "jq -n '\"env\"'",
    "jq -n '\"$ENV\"'",
    "jq -n '\"\\\\(env)\"'",  # an escaped backslash: no interpolation
    "jq '{name, kind: .env}' a.json",
    "jq -n '$__loc__'",
    "jq --arg env prod '.name == $env' a.json",  # a variable named env is the user's own
    "jq -n '[1,2] | map(. * 2)'",
    "jq -c 'to_entries | map(select(.key != \"env\"))' a.json",
    "jq -n '# env in a comment\n1'",
    "jq '.import' a.json",
    "jq -n 'input_filename'",
    "jq -r '@sh \"echo \\(.name)\"' a.json",
    "jq -n '...'",
]


@pytest.mark.parametrize("command", JQ_ORDINARY)
def test_s21_ordinary_jq_filters_stay_read_only(workspace: pathlib.Path, command: str) -> None:
    assert reason(command, workspace) is None


@pytest.mark.parametrize(
    "command",
    [
        "jq -n 'import \"../outside/x\" as $x; $x'",
        "jq -n 'include \"x\"; .'",
        "jq -n 'modulemeta'",
        "jq -n 'get_search_list'",
        "jq -n '\"\\(get_search_list)\"'",
    ],
)
def test_s21_a_jq_filter_that_reads_a_module_is_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert reason(command, workspace) is not None


@pytest.mark.parametrize(
    "program",
    [
        "# a comment \\\nenv",  # jq 1.7.1 continues the comment; jq 1.6 runs `env`
        '"unterminated',
        '"\\(env"',
        "$",
        "$ 1",
    ],
)
def test_s21_a_jq_filter_that_cannot_be_read_exactly_is_refused(program: str) -> None:
    assert jq_filter_refusal(program) is not None


def test_s21_an_object_key_named_env_is_refused_as_a_documented_choice() -> None:
    # Which words are keys depends on jq's grammar version; refusing costs one prompt.
    assert jq_filter_refusal("{env: 1}") is not None
    assert jq_filter_refusal('{"env": 1}') is None


_JQ_FRAGMENTS = [
    "env",
    "$ENV",
    "$ ENV",
    ".env",
    ".ENV",
    '"env"',
    '"\\(env)"',
    '"\\(.a)"',
    '"\\\\(env)"',
    "{env: 1}",
    "{env}",
    "{a: 1}",
    "1.",
    "..",
    ".",
    ".a",
    "|",
    ",",
    " ",
    "\n",
    "# c\n",
    "(",
    ")",
    "[",
    "]",
    "$__loc__",
    "$x",
    "as $x",
    "def f: 1;",
    "f",
    "keys",
    '"',
    "\\",
    "@text",
    "1",
    "?",
    "//",
]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(_JQ_FRAGMENTS), min_size=1, max_size=8).map("".join))
def test_s21_a_jq_filter_called_read_only_never_prints_the_environment(
    workspace: pathlib.Path, program: str
) -> None:
    # The real jq, with a secret in its environment: a filter the classifier lets through
    # never shows it, whatever jq makes of the filter (most generated ones are syntax errors).
    jq = shutil.which("jq")
    assert jq is not None, "the differential test needs jq installed"
    if reason(f"jq -n {shlex.quote(program)}", workspace) is not None:
        return
    secret = "robota-jq-secret-4f1b2c"  # noqa: S105 - a marker to look for in the output
    run = subprocess.run(
        [jq, "-n", program],
        env={"PATH": os.environ.get("PATH", ""), "ROBOTA_SECRET": secret},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert secret not in run.stdout + run.stderr, program


# --------------------------------------------------------------------------- jq's start file


def _jq_with_home(home: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    jq = shutil.which("jq")
    assert jq is not None, "this test needs jq installed"
    secret = "robota-jq-secret-4f1b2c"  # noqa: S105 - a marker to look for in the output
    return subprocess.run(
        [jq, *args],
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ROBOTA_SECRET": secret},
        input="[1, 2]",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_s21_jq_is_not_read_only_when_the_home_has_a_jq_start_file(
    workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    # jq reads $HOME/.jq at every start and its definitions replace the builtins: the real jq
    # shows it, then the classifier, given that home, refuses even the plainest filter.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".jq").write_text("def length: env;\n")
    assert "robota-jq-secret-4f1b2c" in _jq_with_home(home, "-c", "length").stdout
    for command in ("jq length a.json", "jq . a.json", "jq -n 1"):
        why = read_only_reason(command, workspace=str(workspace), home=str(home))
        assert why is not None
        assert "~/.jq" in why


@pytest.mark.parametrize("kind", ["directory", "symlink", "dangling symlink", "fifo"])
def test_s21_anything_at_the_jq_start_path_makes_jq_not_read_only(
    workspace: pathlib.Path, tmp_path: pathlib.Path, kind: str
) -> None:
    # A directory is jq's module search path (and jq versions differ in what else they load
    # from it); a link may name any file. Whatever is there, jq is not judged read-only.
    home = tmp_path / "home"
    home.mkdir()
    start = home / ".jq"
    if kind == "directory":
        start.mkdir()
        (start / "jq.jq").write_text("def length: env;\n")
    elif kind == "symlink":
        (tmp_path / "defs.jq").write_text("def length: env;\n")
        start.symlink_to(tmp_path / "defs.jq")
    elif kind == "dangling symlink":
        start.symlink_to(tmp_path / "missing.jq")
    else:
        os.mkfifo(start)
    assert read_only_reason("jq .name a.json", workspace=str(workspace), home=str(home))


def test_s21_jq_stays_read_only_under_a_home_without_a_jq_start_file(
    workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".jqrc").write_text("def length: env;\n")  # not a name jq reads
    run = _jq_with_home(home, "-c", "length")
    assert run.stdout.strip() == "2"
    for command in JQ_ORDINARY:
        assert read_only_reason(command, workspace=str(workspace), home=str(home)) is None, command
    assert read_only_reason("cat a.json", workspace=str(workspace), home=str(home)) is None


def test_s21_jq_is_not_read_only_when_the_home_is_not_known(workspace: pathlib.Path) -> None:
    # jq reads $HOME/.jq; with no absolute home to look in, nobody can tell what it loads.
    assert read_only_reason("jq . a.json", workspace=str(workspace), home="")
    assert read_only_reason("jq . a.json", workspace=str(workspace), home="relative/home")


# --------------------------------------------------------------------------- git formats and gpg

GIT_FORMATS_RUNNING_GPG = [
    "git log --format=%G?",
    "git log --format='%h %G? %s'",
    "git log --format=%GS",
    "git log --format=%GK",
    "git log --format=%GF",
    "git log --format=%GP",
    "git log --format=%GT",
    "git log --format=%GG",
    "git log --format %G?",
    "git log --pretty=format:%G?",
    "git log --pretty=tformat:%GS",
    "git log --pretty='%+GG'",
    "git show --format=%G? HEAD",
    "git rev-list --format=%G? HEAD",
    "git shortlog --format=%GS HEAD",
    "git shortlog --group=format:%GK HEAD",
    "git for-each-ref --format='%(signature)'",
    "git for-each-ref --format='%(signature:grade)'",
    "git for-each-ref --format='%(*signature:signer)'",
    "git for-each-ref --sort=signature",
    "git branch --format='%(refname) %(signature:key)'",
    "git tag -l --format='%(signature:trustlevel)'",
    "git tag -l --sort=-signature:fingerprint",
]


@pytest.mark.parametrize("command", GIT_FORMATS_RUNNING_GPG)
def test_s21_a_git_format_that_verifies_signatures_is_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    why = reason(command, workspace)
    assert why is not None
    assert "gpg" in why


@pytest.mark.parametrize(
    "command",
    [
        "git log --format=%Z",  # unknown: not known to only read
        "git log --pretty=myalias",  # an alias from git's configuration
        "git for-each-ref --format='%(futureatom)'",
        "git ls-files --format='%(objectname) %(nosuch)'",
        "git ls-tree --format='%(stage)' HEAD",  # an ls-files atom, not an ls-tree one
        "git cat-file --batch-check='%(refname)'",
    ],
)
def test_s21_an_unknown_format_placeholder_or_atom_is_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert reason(command, workspace) is not None


GIT_FORMATS_ORDINARY = [
    "git log --oneline --format='%h %s'",
    "git log --pretty=format:%an",
    "git log --pretty=oneline",
    "git log --pretty=fuller",
    "git log --pretty",
    "git log --format=%H",
    "git log --format='%h%x09%an%x09%ad%n%b' --date=short",
    "git log --format='%C(yellow)%h%Creset %<(20,trunc)%s %Cgreen(%cr)%Creset'",
    "git log --format='%(trailers:key=Signed-off-by,valueonly) %(describe) %d %D'",
    "git log --format='%%G? is how gpg is asked' -1",  # %% is a literal percent sign
    "git log --format='%aN <%aE> %gD %gs %m %w(72,4,4)%B'",
    "git log --date=format:'%Y-%m-%d %H:%M' --format='%ad %s'",
    "git show --stat --format=fuller HEAD",
    "git shortlog -sn --group=author HEAD",
    "git rev-list --format='%H %P' HEAD",
    "git for-each-ref --format='%(refname:short) %(objectname:short) %(committerdate:relative)'",
    "git for-each-ref --sort=-committerdate --format='%(if)%(HEAD)%(then)* %(end)%(refname)'",
    "git for-each-ref --format='%(contents:signature)' refs/tags",  # the text, not a check
    "git branch --format='%(refname:short)%00%(upstream:track)' --sort=version:refname",
    "git tag -l --sort=-v:refname --format='%(refname:strip=2) %(*objectname)'",
    "git ls-files --format='%(objectmode) %(objectname) %(stage)%09%(path)'",
    "git ls-tree --format='%(objectsize:padded) %(path)' HEAD",
    "git cat-file --batch-check='%(objectname) %(objecttype) %(objectsize)'",
    "git cat-file --batch",
]


@pytest.mark.parametrize("command", GIT_FORMATS_ORDINARY)
def test_s21_ordinary_git_formats_stay_read_only(workspace: pathlib.Path, command: str) -> None:
    assert reason(command, workspace) is None


@pytest.fixture(scope="module")
def signed_repository(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[pathlib.Path, pathlib.Path]:
    """A repository whose one commit carries a (fake) signature, and whose gpg is a recorder."""
    base = tmp_path_factory.mktemp("signed")
    root = base / "repo"
    root.mkdir()
    record = base / "gpg-ran"
    gpg = base / "gpg"
    gpg.write_text(f"#!/bin/sh\necho ran >> {record}\nexit 1\n")
    gpg.chmod(gpg.stat().st_mode | stat.S_IXUSR)

    def git(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    git("init", "-q")
    git("config", "gpg.program", str(gpg))
    tree = git("write-tree")
    body = (
        f"tree {tree}\n"
        "author A <a@example.com> 1700000000 +0000\n"
        "committer A <a@example.com> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n"
        " \n"
        " iQEzBAABCAAdFiEEfakefakefakefakefake=\n"
        " -----END PGP SIGNATURE-----\n"
        "\n"
        "signed\n"
    )
    commit = git("hash-object", "-t", "commit", "-w", "--stdin", stdin=body)
    git("update-ref", "refs/heads/main", commit)
    git("symbolic-ref", "HEAD", "refs/heads/main")
    return root, record


def _runs_gpg(root: pathlib.Path, record: pathlib.Path, fmt: str) -> bool:
    record.unlink(missing_ok=True)
    subprocess.run(
        ["git", "-C", str(root), "log", f"--format={fmt}"], capture_output=True, check=True
    )
    return record.exists()


_PLACEHOLDERS = [
    "%H", "%h", "%an", "%ae", "%ad", "%s", "%b", "%B", "%d", "%N", "%n", "%%", "%x09",
    "%Cred", "%C(auto)", "%<(10)", "%w(40)", "%(describe)", "%(trailers)", "%G?", "%GS",
    "%GK", "%GF", "%GP", "%GT", "%GG", "%+GG", "% GS", "text ", "%", "%%G?",
]  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.lists(st.sampled_from(_PLACEHOLDERS), min_size=1, max_size=4).map("".join))
def test_s21_a_git_format_called_read_only_never_runs_gpg(
    signed_repository: tuple[pathlib.Path, pathlib.Path], fmt: str
) -> None:
    # The real git on a signed commit, its gpg a recorder: a format the classifier lets through
    # never makes git run it, and every format that does run it is refused.
    root, record = signed_repository
    allowed = read_only_reason(f"git log --format='{fmt}'", workspace=str(root)) is None
    if allowed:
        assert not _runs_gpg(root, record, fmt), fmt


def test_s21_the_gpg_recorder_sees_a_signature_check(
    signed_repository: tuple[pathlib.Path, pathlib.Path],
) -> None:
    # The differential test above could not fail if git never called the recorder.
    root, record = signed_repository
    assert _runs_gpg(root, record, "%G?")
    assert not _runs_gpg(root, record, "%h %s")


# --------------------------------------------------------------------------- date strings


@pytest.mark.parametrize(
    "command",
    [
        "date -d 'TZ=\"/etc/shadow\" now'",
        "date --date='TZ=\"../../dev/tty\" 2024-01-01'",
        "date -d'TZ=\":/some/fifo\" now'",
        "date -ud 'tz=\"x\"'",
        "date -f a.json",  # each line a date string the command line does not show
        "date --file=a.json",
        "find . -newermt 'TZ=\"/dev/tty\" now'",
    ],
)
def test_s21_a_date_string_naming_a_time_zone_file_is_not_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert reason(command, workspace) is not None


@pytest.mark.parametrize(
    "command",
    [
        "date -d yesterday +%F",
        "date --date='2024-01-01 12:00' +%s",
        "date -u -d @1700000000",
        "find . -newermt '2024-01-01 00:00'",
        "find . -newer a.json",
        "date +'%Y-%m-%d %H:%M:%S %Z'",
        "find . -name '*.json' -printf '%p %s %TY-%Tm-%Td\\n'",
        "stat -c '%n %s %y %N' a.json",
        "stat --printf='%s\\n' a.json",
        "ls -l --time-style=+%Y-%m-%d",
        "ls -l --time-style=long-iso",
    ],
)
def test_s21_ordinary_date_and_metadata_formats_stay_read_only(
    workspace: pathlib.Path, command: str
) -> None:
    assert reason(command, workspace) is None
