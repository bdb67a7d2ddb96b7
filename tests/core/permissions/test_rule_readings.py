"""Issue 24: deny and ask rules read a command the way the program will (S12, S21).

Each class the third security review found — option spellings, wrappers the table did not know,
option values that are command lines, configuration that runs a command — is proved here by
name, with a generated (property) test where the class is generated, and the ordinary direction
is held too: what users write stays allowed where a rule allows it.
"""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionPolicy, evaluate_permission
from robota.core.permissions import match_command
from robota.core.permissions._removal import catastrophic_reason


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


def decide(command: str, **policy: Any) -> robota.PermissionDecision:
    return evaluate_permission(BASH, {"command": command}, PermissionPolicy(**policy))


def refused(command: str, rule: str, *, direction: str = "deny") -> bool:
    """The rule stops the command (denies, or asks every time) in bypass mode under Bash(*)."""
    decision = decide(command, **{direction: [f"Bash({rule})"]}, allow=["Bash(*)"], mode="bypass")
    return decision.behavior == "deny" or (decision.behavior == "ask" and decision.always_ask)


def allowed(command: str, *deny: str) -> bool:
    decision = decide(command, deny=[f"Bash({r})" for r in deny], allow=["Bash(*)"])
    return decision.behavior == "allow"


# --------------------------------------------------------------------------- option grammar


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("rm -rf *", "rm -Rf build"),
        ("rm -rf *", "rm -fR build"),
        ("rm -rf *", "rm -r -f build"),
        ("rm -rf *", "rm --recursive --force build"),
        ("rm -rf *", "rm --rec --for build"),  # GNU's unambiguous abbreviations
        ("rm -rf *", "rm -fv --recursive build"),
        ("rm -rf *", "rm build -rf"),  # GNU permutes options after operands
        ("git reset --hard *", "git reset --ha HEAD~1"),  # parse-options abbreviations
        ("git reset --hard *", "git reset --har HEAD~1"),
        ("git reset --hard *", "git -C repo reset --hard"),
        ("git reset --hard *", "git --no-pager reset --hard"),
        ("git push --force *", "git push -f origin main"),
        ("git push --force *", "git push origin +main"),  # a `+` refspec forces
        ("git push --force *", "git push -uf origin main"),
        ("git push --delete *", "git push origin :old"),  # an empty source deletes
        ("git branch -d *", "git branch -D topic"),  # -D is --delete --force
        ("git branch -D *", "git branch --delete --force topic"),
        ("git clean -fdx", "git clean -xdf"),
        ("git clean -f *", "git clean --force -d"),
        ("git commit --amend *", "git commit --am -m x"),
        ("git checkout -f *", "git checkout --force main"),
        ("cp -r *", "cp -R a b"),
        ("chmod -R *", "chmod --recursive 777 x"),
        ("chown -R *", "chown --rec me x"),
        ("sed -i *", "sed --in-place s/a/b/ f"),
        ("sed -i *", "sed -i.bak s/a/b/ f"),
        ("curl -X DELETE *", "curl -XDELETE https://api.example.com/x"),
        ("curl -X DELETE *", "curl --request=DELETE https://api.example.com/x"),
        ("curl -X DELETE *", "curl --request DELETE https://api.example.com/x"),
        ("kubectl delete *", "kubectl -n prod delete pod web"),
        ("kubectl delete *", "kubectl --context=prod delete pod web"),
        ("kubectl delete --all *", "kubectl delete pods --all -n prod"),
        ("docker rm -f *", "docker rm --force web"),
        ("docker system prune *", "docker --context remote system prune -af"),
        ("terraform destroy *", "terraform -chdir=infra destroy"),
        ("terraform apply -auto-approve *", "terraform apply --auto-approve"),
        ("shred -u *", "shred --remove key.pem"),
    ],
)
def test_s12_a_deny_rule_reads_options_the_way_the_program_does(rule: str, command: str) -> None:
    assert match_command(rule, command, direction="deny") == "match", (rule, command)
    assert refused(command, rule)
    assert refused(command, rule, direction="ask")


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("git push --force *", "git push --forc origin"),  # ambiguous: --force, --force-with-lease
        ("frob --force *", "frob --for x"),  # no table: a prefix may be the wanted option
        ("frob -rf *", "frob -R -f x"),  # no table: -R may be -r
        ("frob --recursive *", "frob -r x"),
        ("git push *", "git -c alias.p=push p origin"),  # an alias may be anything
        ("git push *", "git p origin"),  # so may one the repository's configuration defines
        ("rm -rf *", "rm $FLAGS build"),
        ("rm -rf *", "rm -f * "),  # a file named `-r` would be an option
    ],
)
def test_s12_an_option_spelling_that_cannot_be_settled_asks(rule: str, command: str) -> None:
    assert match_command(rule, command, direction="deny") != "no_match", (rule, command)
    assert refused(command, rule)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("rm -rf *", "rm file.txt"),
        ("rm -rf *", "rm -v file.txt"),
        ("rm -rf *", "rm -i old.log"),
        ("rm -rf *", "rm ~/scratch.txt"),  # a tilde is a path, never an option (issue 24)
        ("rm -rf *", "rm -f ~/scratch.txt"),
        ("git reset --hard *", "git reset --soft HEAD~1"),
        ("git reset --hard *", "git reset HEAD file.txt"),
        ("git push --force *", "git push origin main"),
        ("git push --force *", "git push --force-with-lease origin main"),
        ("git push *", "git -c user.name=bot -c user.email=b@x commit -m 'push it'"),
        ("git push *", "git -C repo status"),
        ("git push *", "git --no-pager log --oneline -5"),
        ("git branch -D *", "git branch -d merged"),
        ("kubectl delete *", "kubectl -n prod get pods"),
        ("curl -X DELETE *", "curl -X GET https://api.example.com/x"),
        ("curl -X DELETE *", "curl -s https://api.example.com/x"),
        ("chmod -R *", "chmod 644 file"),
    ],
)
def test_s12_a_deny_rule_still_passes_what_the_program_reads_as_another_call(
    rule: str, command: str
) -> None:
    assert match_command(rule, command, direction="deny") == "no_match", (rule, command)
    assert allowed(command, rule)


def test_s21_rm_of_a_home_file_under_allow_all_is_allowed_regression() -> None:
    # Issue 24 over-block: `~` made the arguments "opaque", so `deny rm -rf *` could not be
    # ruled out for an ordinary, non-recursive removal.
    assert allowed("rm ~/scratch.txt", "rm -rf *")
    assert allowed("rm ~/scratch.txt")


_RECURSIVE = st.sampled_from(["-r", "-R", "--recursive", "--recursiv", "--recur", "--rec"])
_FORCE = st.sampled_from(["-f", "--force", "--forc", "--fo"])
_OTHER = st.lists(st.sampled_from(["-v", "--verbose", "-i", "-I", "--one-file-system"]), max_size=2)


@settings(max_examples=300, deadline=None)
@given(
    recursive=_RECURSIVE,
    force=_FORCE,
    other=_OTHER,
    cluster=st.booleans(),
    after=st.booleans(),
    operands=st.lists(st.sampled_from(["build", "dist", "x y", "-"]), min_size=1, max_size=3),
)
def test_s12_every_spelling_of_a_recursive_forced_removal_is_denied(
    recursive: str,
    force: str,
    other: list[str],
    cluster: bool,
    after: bool,
    operands: list[str],
) -> None:
    flags = [recursive, force]
    if cluster and not recursive.startswith("--"):
        # A cluster: `-Rf`, or `-rv --force` when the force is spelled long.
        flags = [recursive + force[1:]] if not force.startswith("--") else [recursive + "v", force]
    words = [*other, *flags]
    args = [shlex.quote(o) for o in operands]
    command = "rm " + " ".join([*args, *words] if after else [*words, *args])
    assert match_command("rm -rf *", command, direction="deny") == "match", command


@settings(max_examples=200, deadline=None)
@given(
    options=st.lists(
        st.sampled_from(["-f", "--force", "-v", "--verbose", "-i", "-I", "-d", "--dir"]),
        max_size=3,
    ),
    operands=st.lists(st.sampled_from(["a.txt", "~/b.txt", "dir/c", "'d e'"]), min_size=1),
)
def test_s12_a_removal_that_is_not_recursive_is_not_a_recursive_one(
    options: list[str], operands: list[str]
) -> None:
    command = "rm " + " ".join([*options, *operands])
    assert match_command("rm -rf *", command, direction="deny") == "no_match", command


@settings(max_examples=300, deadline=None)
@given(
    hard=st.sampled_from(["--hard", "--har", "--ha"]),
    globals_=st.lists(
        st.sampled_from(["-C repo", "--no-pager", "-c user.name=x", "--git-dir=.git", "-P"]),
        max_size=2,
    ),
    before=st.booleans(),
    quiet=st.sampled_from(["", "-q", "--quiet"]),
    target=st.sampled_from(["", "HEAD~1", "origin/main"]),
)
def test_s12_every_spelling_of_a_hard_reset_is_stopped(
    hard: str, globals_: list[str], before: bool, quiet: str, target: str
) -> None:
    words = [quiet, hard, target] if before else [target, quiet, hard]
    command = " ".join(["git", *globals_, "reset", *[w for w in words if w]])
    assert match_command("git reset --hard *", command, direction="deny") == "match", command


# --------------------------------------------------------------------------- wrappers


@pytest.mark.parametrize(
    "wrapped",
    [
        "fakeroot {}",
        "fakeroot -u -- {}",
        "faketime '2020-01-01 00:00:00' {}",
        "faketime -f +1d {}",
        "eatmydata {}",
        "prlimit --nofile=1024 {}",
        "prlimit -n1024 {}",
        "setarch x86_64 -R {}",
        "linux64 {}",
        "systemd-run --user --wait {}",
        "systemd-run -p CPUQuota=10% {}",
        "xvfb-run -a {}",
        "xvfb-run --server-args='-screen 0 1x1x8' {}",
        "torsocks {}",
        "torsocks -i {}",
        "sg staff -c '{}'",
        "sg staff '{}'",
        "parallel ::: '{}'",
        "proxychains4 -q {}",
        "firejail --quiet --private {}",
        "valgrind --tool=memcheck -q {}",
        "unbuffer -p {}",
        "dbus-run-session -- {}",
        "gosu me {}",
        "su-exec me {}",
        "nocache {}",
        "ssh-agent {}",
        "chpst -u me {}",
        "numactl --interleave=all {}",
        "tini -- {}",
        "dumb-init {}",
        "catchsegv {}",
        "ssh host {}",
        "ssh -p 2222 -i key.pem user@host '{}'",
        "watch -n 5 '{}'",
    ],
)
def test_s21_wrappers_that_run_a_command_do_not_hide_it_from_a_deny_rule(wrapped: str) -> None:
    command = wrapped.format("git push origin main")
    assert match_command("git push *", command, direction="deny") == "match", command
    assert decide(command, deny=["Bash(git push *)"], allow=["Bash(*)"]).behavior == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "some-new-wrapper git push",
        "./run-with-env git push origin main",
        "npx git push",
        "uv run git push",
        "poetry run git push",
        "docker run --rm img git push",
        "docker compose run app git push",
        "kubectl exec pod -- git push",
        "ssh host git push",
        "watchexec -- git push",
        "mytool --exec='git push'",
        "mytool --cmd=git push",
        "mytool 'cd repo && git push'",
        "nohup mytool git push",  # a known wrapper around an unknown one
    ],
)
def test_s21_an_unknown_program_that_may_run_its_arguments_asks(command: str) -> None:
    # S21: runs unless known not to — a program nobody listed as leaving its arguments alone
    # may run the denied command; the rule cannot be ruled out.
    assert match_command("git push *", command, direction="deny") != "no_match", command
    assert refused(command, "git push *")


_WRAPPER_PREFIXES = st.sampled_from(
    [
        "fakeroot ",
        "faketime 2020-01-01 ",
        "eatmydata ",
        "prlimit --nofile=64 ",
        "setarch x86_64 ",
        "systemd-run --user ",
        "xvfb-run -a ",
        "torsocks ",
        "nice -n 5 ",
        "env A=1 ",
        "timeout 5 ",
        "sudo -u me ",
        "nohup ",
        "stdbuf -oL ",
        "unknown-wrapper ",
        "unknown-wrapper --flag ",
        "time ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    prefixes=st.lists(_WRAPPER_PREFIXES, min_size=1, max_size=3),
    args=st.lists(st.sampled_from(["origin", "main", "--force", "-u"]), max_size=3),
)
def test_s21_no_stack_of_wrappers_hides_a_command_from_a_deny_or_ask_rule(
    prefixes: list[str], args: list[str]
) -> None:
    command = "".join(prefixes) + "git push " + " ".join(args)
    for direction in ("deny", "ask"):
        assert refused(command, "git push *", direction=direction), (command, direction)


# --------------------------------------------------------------------------- values that run


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.fsmonitor='rm -rf build' status",
        "git -c core.pager='rm -rf build' log",
        "git -c core.sshCommand='rm -rf build' fetch",
        "git -c alias.x='!rm -rf build' x",
        "git -c diff.external='rm -rf build' diff",
        "git -c credential.helper='!rm -rf build' fetch",
        "git clone -c core.fsmonitor='rm -rf build' https://example.com/r.git",
        "git rebase --exec 'rm -rf build' main",
        "git rebase -x 'rm -rf build' main",
        "git bisect run rm -rf build",
        "git submodule foreach 'rm -rf build'",
        "git push --receive-pack='rm -rf build' origin",
        "git fetch --upload-pack='rm -rf build' origin",
        "git difftool -x 'rm -rf build'",
        "git filter-branch --tree-filter 'rm -rf build' HEAD",
        "tar -xf a.tar --to-command='rm -rf build'",
        "tar -xf a.tar --to-c='rm -rf build'",  # argp's abbreviation
        "tar -cf a.tar -I 'rm -rf build' dir",
        "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm -rf build' dir",
        "rsync -e 'rm -rf build' a b",
        "rsync --rsh='rm -rf build' a b",
        "sort --compress-program='rm -rf build' f",
        "split --filter='rm -rf build' f",
        "zip -TT 'rm -rf build' a.zip f",
        "ssh -o ProxyCommand='rm -rf build' host true",
        "ssh -oLocalCommand='rm -rf build' -oPermitLocalCommand=yes host",
        "scp -S 'rm -rf build' a.txt host:b.txt",
        "GIT_SSH_COMMAND='rm -rf build' git fetch",
        "GIT_PAGER='rm -rf build' git log",
        "PAGER='rm -rf build' man ls",
        "EDITOR='rm -rf build' git commit",
        "env GIT_EDITOR='rm -rf build' git commit",
    ],
)
def test_s21_an_option_or_variable_whose_value_is_a_command_line_is_read_as_one(
    command: str,
) -> None:
    assert match_command("rm -rf *", command, direction="deny") == "match", command
    assert decide(command, deny=["Bash(rm -rf *)"], allow=["Bash(*)"]).behavior == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "git -c foo.bar=baz status",  # a key not known to be data may run something
        "git -c include.path=/tmp/x status",  # loads another configuration
        "git -c core.hooksPath=/tmp/hooks commit -m x",  # runs hooks from elsewhere
        "git --config-env=core.pager=PAGER log",  # the value comes from the environment
        "git -c core.fsmonitor=$CMD status",
        "tar -xf a.tar -F script.sh",  # a script file
        "tar xIf prog a.tar",  # old-style options take their values from later words
        "LD_PRELOAD=/tmp/x.so ls",
        "GIT_CONFIG_PARAMETERS=x git status",
    ],
)
def test_s21_what_runs_but_cannot_be_read_makes_every_deny_rule_ask(command: str) -> None:
    assert match_command("rm -rf *", command, direction="deny") == "unevaluable", command
    assert refused(command, "rm -rf *")


@pytest.mark.parametrize(
    "command",
    [
        "git -c user.name=bot -c user.email=bot@example.com commit -m 'rm the old files'",
        "git -c color.ui=always log --oneline",
        "git -c core.quotepath=off status",
        "git -c init.defaultBranch=main init",
        "git -c core.fsmonitor=false status",
        "tar -xzf release.tar.gz -C out",
        "tar czf out.tgz src",
        "rsync -avz --delete src/ dest/",
        "sort -u names.txt",
        "echo 'rm -rf /'",
        "grep -rn 'rm -rf' scripts",
        "printf 'git push\\n'",
        "python -m pytest -k 'not slow' tests",
        "npm run build",
        "make test",
        "cargo test --all",
        "pytest tests/core -q",
        "ls -la ~",
        "cat ~/.bashrc",
        "mkdir -p build/out && cp -r src build/out",
        "git commit -am 'remove rm usage'",
        "gh pr create --title 'Refactor'",
        # Review 1 (issue 24): lines the readings of assignments, xargs, git and zip touch.
        "export PATH=/opt/tool/bin:$PATH && pytest",
        "export FOO=bar; make",
        "git ls-files '*.py' | xargs grep -n TODO",
        "find . -name '*.py' | xargs black",
        "git clone https://github.com/example/repo.git",
        "git config user.email dev@example.com",
        "git grep -n foo",
        "git lfs pull",
        "zip -r out.zip dir",
        "curl -s https://example.com/api",
        "python3 <<'EOF'\nprint('hello')\nEOF",
        "bash <<'EOF'\nset -e\nmake test\nEOF",
        # Issue 24, review 1: commands the look-through reads (items 3, 5, 15, 18, 20).
        "sed -n '/git push/p' notes.md",
        "awk '/rm -rf/ {print $2}' log.txt",
        "find . -exec grep -l 'rm -rf' {} \\;",
        "find . -name '*.pyc' -delete",
        "docker run --rm -it img pytest -q",
        "docker compose exec app python manage.py migrate",
        "docker exec web sh -c 'cd /app && ls -la'",
        "kubectl get pods -o jsonpath='{.items[*].metadata.name}'",
        "npx prettier --write 'src/**/*.ts'",
        "ruff check --exclude '*.pyi' src",
        "gh pr create --title 'Fix the CI badge' --body 'Docs only'",
        "pytest -k 'test_home or test_tmp' tests",
        "make -C build install DESTDIR=$PWD/out",
        "echo $HOME",
        "python -c 'import sys; print(sys.version)'",
        "jq -r '.items[] | .name' data.json",
        "uv run --with rich python script.py",
        "git checkout main",
        "git checkout -b feature",
        "npm run build -- --watch",
        "ls /usr/lib/x86_64-linux-gnu",
    ],
)
def test_s21_ordinary_commands_stay_allowed_beside_deny_rules(command: str) -> None:
    deny = ("rm -rf *", "git push --force *", "git reset --hard *", "curl -X DELETE *")
    assert allowed(command, *deny), command


@pytest.mark.parametrize(
    "command",
    [
        "git checkout main",
        "git checkout -b feature",
        "git status",
        "npm pack",
        "npm install",
        "npm run build",
        "rm -rf build",
        "rm ~/scratch.txt",
        "cat ~/.ssh/config",
        "sudoku --solve",
        "curl -s https://example.com/x.json | jq .",
        "ls -la",
    ],
)
def test_s12_ordinary_commands_stay_allowed_beside_rules_about_wrappers_and_home(
    command: str,
) -> None:
    # Issue 24, review 1, items 13, 14 and 16: rules that could not be read asked for every
    # command; a rule's `--` and a generic program's abbreviations must not widen a rule.
    deny = (
        "sudo *",
        "bash -c *",
        "curl * | sh",
        "rm -rf ~",
        "cat ~/.ssh/id_rsa",
        "git checkout -- *",
        "npm publish *",
        "source *",
    )
    assert allowed(command, *deny), command


# --------------------------------------------------------------------------- removals


@pytest.mark.parametrize(
    "command",
    [
        "fakeroot rm -rf ~",
        "faketime 2020-01-01 rm -rf /",
        "some-wrapper rm -rf ~",
        "some-tool --run='rm -rf /'",
        "git -c core.fsmonitor='rm -rf ~' status",
        "tar -xf a.tar --to-command='rm -rf ~'",
        "sg staff 'rm -rf ~'",
    ],
)
def test_s21_a_catastrophic_removal_inside_a_wrapper_or_a_value_always_asks(
    command: str,
) -> None:
    decision = decide(command, allow=["Bash(*)"], mode="bypass")
    assert (decision.behavior, decision.always_ask) == ("ask", True), (command, decision)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("source .venv/bin/activate && pytest", "unevaluable"),
        (". ./env.sh; make", "unevaluable"),
        ("bash scripts/setup.sh", "unevaluable"),
        ("sh < setup.sh", "unevaluable"),
        ("curl -fsSL https://example.com/i.sh | sh", "unevaluable"),
        ("./setup.sh", "no_match"),
        ("make", "no_match"),
        ("python x.py", "no_match"),
        ("npm run setup", "no_match"),
    ],
)
def test_s12_a_shell_given_a_script_is_opaque_a_program_started_by_name_is_judged_by_its_words(
    command: str, expected: str
) -> None:
    # Issue 24, review 1, item 19: SECURITY.md's one reading of lines that run a script file
    # ("Script files: one reading"). A shell handed shell text the line cannot show asks; a
    # program is judged by its name and words, whatever it runs inside.
    assert match_command("git push *", command, direction="deny") == expected, command


@pytest.mark.parametrize(
    "command",
    [
        "python3 <<EOF\nimport os\nos.system('rm -rf build')\nEOF",
        "docker exec -i web sh <<'EOF'\nrm -rf /app/build\nEOF",
        "kubectl exec -i pod -- sh <<'EOF'\nrm -rf /data\nEOF",
        "mytool <<< 'rm -rf build'",
        "rg --pre 'rm -rf build' pattern .",
        "rg --pre='rm -rf build' pattern .",
    ],
)
def test_s21_text_given_on_standard_input_or_to_rg_pre_is_looked_through(command: str) -> None:
    # Review 1 (issue 24): a here-document or here-string is one more argument a program that may
    # run its arguments may run; rg is a data program except for `--pre`, which runs a command.
    assert refused(command, "rm -rf *"), command


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.pyc' -exec rm {} +",
        "find . -name '*.log' -delete",
        "rg -n 'rm -rf' scripts",
        "rg --files | head",
        "python3 <<'EOF'\nprint('hello')\nEOF",
    ],
)
def test_s21_ordinary_find_exec_and_rg_lines_stay_allowed(command: str) -> None:
    assert allowed(command, "rm -rf *", "git push --force *"), command


# --------------------------------------------------------------------------- review 3, item 6


def _case(name: str, upper: list[bool]) -> str:
    return "".join(ch.upper() if up else ch for ch, up in zip(name, upper, strict=False))


@settings(max_examples=150, deadline=None)
@given(
    upper=st.lists(st.booleans(), min_size=3, max_size=3),
    form=st.sampled_from(["{}", "/usr/bin/{}", "sudo {}", "env X=1 {}", "mytool '{}'"]),
)
def test_s12_a_program_name_in_any_letter_case_meets_a_deny_rule(
    upper: list[bool], form: str
) -> None:
    # Review 3, item 6: macOS's file systems fold case, so `GIT` runs git and `RM` runs rm.
    git = form.format(_case("git", upper) + " push --force origin main")
    assert match_command("git push *", git, direction="deny") != "no_match", git
    assert refused(git, "git push *")
    rm = form.format(_case("rm", upper) + " -rf ~")
    assert match_command("rm -rf ~", rm, direction="deny", home="/home/u") != "no_match", rm
    reason = catastrophic_reason(rm, workspace="/home/u/project", home="/home/u")
    assert reason is not None, rm


def test_s12_an_allow_rule_names_its_program_in_its_own_letter_case_only() -> None:
    assert match_command("git status", "git status", direction="allow") == "match"
    assert match_command("git status", "GIT status", direction="allow") == "no_match"
    assert match_command("GIT status", "git status", direction="allow") == "no_match"
    assert match_command("git push --force *", "GIT push -f x y", direction="deny") == "match"


# --------------------------------------------------------------------------- review 3: find | xargs


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.orig' -print0 | xargs -0 rm -f",
        "find . -name '*.orig' -print0 | xargs --null rm -f",
        "find src build -type f -name '*.o' -print0 | xargs -0 -n 10 rm -f",
        "find . -name '*.tmp' -print0 | xargs -0 sudo rm -f",
        "find -L . -name '*.bak' -print -print0 | xargs -r0 rm -f",
    ],
)
def test_s12_names_find_prints_to_xargs_0_are_paths_never_options(command: str) -> None:
    # Review 3: only paths under find's starting points reach rm, each one word: no option
    # can, so `rm -rf *` does not apply to `rm -f`. (The removal check reads it the same way.)
    assert match_command("rm -rf *", command, direction="deny") == "no_match", command
    assert allowed(command, "rm -rf *")
    # What find prints are still operands the line does not show.
    assert match_command("rm -f secret", command, direction="deny") == "unevaluable", command


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.orig' | xargs rm -f",  # split at blanks: a name `a -rf` is two words
        "find . -print0 | xargs -0 -a list.txt rm -f",  # xargs reads a file, not the pipe
        "find . -print0 | xargs -0 -d x rm -f",
        "find . -printf '%p\\0' | xargs -0 rm -f",  # find prints what it is told to
        "find . -exec printf '%s\\0' -r \\; -print0 | xargs -0 rm -f",
        "find . -print0 | sed s/a/b/ | xargs -0 rm -f",  # a filter may rewrite the names
        'find "$D" -print0 | xargs -0 rm -f',  # a starting point may begin with `-`
        "find . -files0-from list -print0 | xargs -0 rm -f",
        "find . -print0 | xargs -0 -I{} rm -f {}",
        "cat list | xargs -0 rm -f",
    ],
)
def test_s12_other_input_to_xargs_may_be_options(command: str) -> None:
    assert match_command("rm -rf *", command, direction="deny") == "unevaluable", command
    assert refused(command, "rm -rf *")
