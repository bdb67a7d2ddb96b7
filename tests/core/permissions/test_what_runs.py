"""Issue 24, review 1: what a command line runs, read one way wherever it is written (S12, S21).

The analysis (:func:`robota.core.permissions.analyze_command`) lists every command a line runs,
and marks as opaque what runs but cannot be read. The review found places where it read the same
thing two ways — a variable set in front of a command but not by ``export``, a command run by a
wrapper but not by ``xargs``, a here-document given to ``sh`` — and where a data program (``git``,
``zip``, ``curl``) runs or loads more than the tables knew. Each class is proved here by name,
with a generated test where the class is generated, and the ordinary direction is held too.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionPolicy, evaluate_permission
from robota.core.permissions import CommandLine, analyze_command, match_command
from robota.core.permissions._removal import catastrophic_reason
from robota.core.permissions._shell_wrappers import WRAPPERS


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
ORDINARY_DENY = (
    "rm -rf *",
    "git push --force *",
    "git reset --hard *",
    "curl -X DELETE *",
    "kubectl delete *",
)


def refused(command: str, rule: str) -> bool:
    """The deny rule stops the command (denies, or asks every time) under ``Bash(*)``."""
    decision = evaluate_permission(
        BASH,
        {"command": command},
        PermissionPolicy(deny=[f"Bash({rule})"], allow=["Bash(*)"], mode="bypass"),
    )
    return decision.behavior == "deny" or (decision.behavior == "ask" and decision.always_ask)


def allowed(command: str) -> bool:
    decision = evaluate_permission(
        BASH,
        {"command": command},
        PermissionPolicy(deny=[f"Bash({r})" for r in ORDINARY_DENY], allow=["Bash(*)"]),
    )
    return decision.behavior == "allow"


def names(line: CommandLine) -> list[str]:
    return [c.name for c in line.commands]


def lists_removal(line: CommandLine) -> bool:
    return any(c.name == "rm" and c.words[1:3] == ("-rf", "x") for c in line.commands)


# --------------------------------------------------------------------------- 1: assignments


@pytest.mark.parametrize(
    "command",
    [
        "GIT_SSH_COMMAND='rm -rf x' git fetch",
        "export GIT_SSH_COMMAND='rm -rf x'; git fetch",
        "export GIT_SSH_COMMAND='rm -rf x' && git fetch",
        "declare -x GIT_SSH_COMMAND='rm -rf x'; git fetch",
        "typeset -x PAGER='rm -rf x'; man ls",
        "set -a; GIT_SSH_COMMAND='rm -rf x'; git fetch",
        "EDITOR='rm -rf x'; git commit",
        "GIT_PAGER='rm -rf x' GIT_DIR=.git; git log",
        "readonly VISUAL='rm -rf x'; crontab -e",
        "local GIT_EDITOR='rm -rf x'",
        "env GIT_SSH_COMMAND='rm -rf x' git fetch",
        "env -i PAGER='rm -rf x' man ls",
        "sudo SUDO_EDITOR='rm -rf x' sudoedit f",
        "CVS_RSH='rm -rf x' cvs update",
        "RSYNC_CONNECT_PROG='rm -rf x' rsync rsync://h/m .",
        "npm_config_script_shell='rm -rf x' npm run build",
        "NPM_CONFIG_SCRIPT_SHELL='rm -rf x' npm test",
        "PIP_EDITOR='rm -rf x' pip config edit",
    ],
)
def test_s21_a_command_variable_is_read_wherever_it_is_set(command: str) -> None:
    line = analyze_command(command)
    assert lists_removal(line), (command, line.commands)
    assert match_command("rm -rf *", command, direction="deny") == "match", command
    assert refused(command, "rm -rf *")


@pytest.mark.parametrize(
    "command",
    [
        "export LD_PRELOAD=./x.so; ls",
        "LD_PRELOAD=./x.so; ls",
        "export GIT_CONFIG_GLOBAL=/tmp/h; git status",
        "declare -x GIT_CONFIG_GLOBAL=/tmp/h; git status",
        "HOME=/tmp/h git status",
        "export HOME=/tmp/h; git status",
        "XDG_CONFIG_HOME=/tmp/x git status",
        "CURL_HOME=/tmp/x curl https://h/x",
        "ZDOTDIR=/tmp/z zsh -c true",
        "GCONV_PATH=/tmp/g iconv -f x",
        "OPENSSL_CONF=/tmp/o curl https://h/x",
        'export GIT_SSH_COMMAND="$CMD"; git fetch',  # a command known only at run time
        "for PAGER in 'rm -rf x'; do man ls; done",  # a loop variable is assigned too
        "read -r GIT_SSH_COMMAND < cmd.txt; git fetch",
        ': "${GIT_SSH_COMMAND:=rm -rf x}"; git fetch',
    ],
)
def test_s21_a_variable_that_loads_or_runs_hidden_code_makes_the_line_opaque(
    command: str,
) -> None:
    line = analyze_command(command)
    assert line.opaque, command
    assert match_command("rm -rf *", command, direction="deny") != "no_match", command
    assert refused(command, "rm -rf *")


_FORMS = st.sampled_from(
    [
        "{a} git fetch",
        "export {a}; git fetch",
        "export {a} && git fetch",
        "declare -x {a}; git fetch",
        "typeset -x {a}; git fetch",
        "local {a}",
        "readonly {a}; git fetch",
        "{a}; git fetch",
        "set -a; {a}; git fetch",
        "env {a} git fetch",
        "env -i {a} git fetch",
        "sudo {a} git fetch",
    ]
)
_VARIABLES = st.sampled_from(
    ["GIT_SSH_COMMAND", "GIT_PAGER", "PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "LESSOPEN",
     "LD_PRELOAD", "GIT_CONFIG_GLOBAL", "HOME", "NODE_OPTIONS", "TAR_OPTIONS", "PS4",
     "PROMPT_COMMAND", "BASH_ENV", "LANG", "CI", "PATH"]
)  # fmt: skip
_VALUES = st.sampled_from(["'rm -rf x'", '"rm -rf x"', "rm", "''", "/tmp/x", '"$X"'])


@settings(max_examples=300, deadline=None)
@given(form=_FORMS, variable=_VARIABLES, value=_VALUES)
def test_s21_every_way_of_setting_a_variable_is_read_like_the_prefix_form(
    form: str, variable: str, value: str
) -> None:
    # Two readings of one assignment that can disagree are a defect: written anywhere, a
    # variable's value is read as the prefix form `NAME=value git fetch` reads it.
    reference = analyze_command(f"{variable}={value} git fetch")
    line = analyze_command(form.format(a=f"{variable}={value}"))
    nested = {tuple(c.words) for c in reference.commands[1:]}  # [0] is `git fetch` itself
    assert nested <= {tuple(c.words) for c in line.commands}, (form, variable, value)
    assert line.opaque >= reference.opaque, (form, variable, value)
    assert line.hidden >= reference.hidden, (form, variable, value)


@pytest.mark.parametrize(
    "command",
    [
        "export PATH=/opt/tool/bin:$PATH && pytest",
        "export FOO=bar; make",
        "export NODE_ENV=production && npm run build",
        "export EDITOR=vim",
        "export EDITOR=vim; git commit",
        "export GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy_key' && git pull",
        "GIT_SSH_COMMAND='ssh -o StrictHostKeyChecking=no' git clone git@github.com:a/b.git",
        "export PYTHONPATH=src && pytest",
        "PYTHONPATH=. python -m pytest tests",  # a search path of a program that runs files
        "RUBYLIB=lib ruby x.rb",
        "x=1; echo $x",
        "declare -x FOO=1",
        "readonly X=1",
        "local y=2",
        "GIT_DIR=.git git log --oneline",
        "CI=true npm test",
        "LANG=C sort names.txt",
    ],
)
def test_s21_ordinary_assignments_stay_allowed_beside_deny_rules(command: str) -> None:
    assert allowed(command), (command, analyze_command(command))


# --------------------------------------------------------------------------- 2: xargs, find


@pytest.mark.parametrize(
    "command",
    [
        "echo rm -rf x | xargs env",
        "echo 'rm -rf x' | xargs -I{} sh -c '{}'",
        "echo 'rm -rf x' | xargs -i sh -c '{}'",
        "echo 'rm -rf x' | xargs --replace=@ bash -c @",
        "echo x | xargs sudo",
        "echo x | xargs nice",
        "echo x | xargs nice -n",
        "echo x | xargs timeout 5",
        "echo x | xargs command",
        "echo x | xargs sh -c",
        "echo x | xargs eval",
        "echo x | xargs sg staff",
        "echo x | xargs ssh host",
        "find . -exec env {} +",
        "find . -exec sh {} \\;",
        "find . -exec sh -c 'echo {}' \\;",
        "find . -execdir sudo {} \\;",
    ],
)
def test_s21_run_time_words_in_a_command_slot_make_the_line_opaque(command: str) -> None:
    line = analyze_command(command)
    assert line.opaque, command
    assert match_command("rm -rf *", command, direction="deny") != "no_match", command
    assert refused(command, "rm -rf *")


@pytest.mark.parametrize(
    "command",
    [
        "echo x | xargs env rm -rf x",
        "echo x | xargs sudo -u me rm -rf x",
        "echo x | xargs -0 nice -n 5 rm -rf x",
        "echo x | xargs timeout 5 rm -rf x",
        "echo x | xargs sh -c 'rm -rf x \"$@\"' _",
        "echo x | xargs bash -c 'rm -rf x'",
        "echo x | xargs git -c core.fsmonitor='rm -rf x' status",
        "find . -exec env rm -rf x {} +",
        "find . -exec sudo rm -rf x {} \\;",
        "find . -name '*.o' -exec sh -c 'rm -rf x' \\;",
    ],
)
def test_s21_a_command_xargs_or_find_runs_is_read_like_any_other(command: str) -> None:
    line = analyze_command(command)
    assert lists_removal(line), (command, line.commands)
    assert match_command("rm -rf *", command, direction="deny") == "match", command


def test_s21_a_command_that_gets_run_time_arguments_is_marked_through_its_wrappers() -> None:
    # xargs appends its input to the last command of the chain it runs (`xargs env rm -f`
    # runs `rm -f <input>`): that command's arguments are only known at run time.
    line = analyze_command("find . | xargs env rm -f")
    (rm,) = [c for c in line.commands if c.name == "rm"]
    assert rm.opaque_arguments
    assert rm.via == "xargs"
    assert match_command("rm -rf *", "find . | xargs env rm -f", direction="deny") != "no_match"


_NO_VALUE_WRAPPERS = sorted(WRAPPERS)


@settings(max_examples=200, deadline=None)
@given(
    wrapper=st.sampled_from(_NO_VALUE_WRAPPERS),
    runner=st.sampled_from(["xargs", "xargs -0", "xargs -n 1", "find . -exec", "find / -execdir"]),
)
def test_s21_no_wrapper_under_xargs_or_find_hides_the_command_it_runs(
    wrapper: str, runner: str
) -> None:
    options = WRAPPERS[wrapper]
    positional = " p" * options.positional
    tail = " {} +" if runner.startswith("find") else ""
    if wrapper == "jobs":
        return  # `jobs` runs a command only after -x (tested on its own)
    # The wrapper with nothing after it: the command comes from the input at run time.
    hidden = analyze_command(f"{runner} {wrapper}{positional}{tail}")
    assert hidden.opaque, (runner, wrapper)
    # With a command after it, the command is listed and a deny rule sees it.
    shown = f"{runner} {wrapper}{positional} rm -rf x{tail}"
    assert lists_removal(analyze_command(shown)) or analyze_command(shown).opaque, shown
    assert refused(shown, "rm -rf *"), shown


def test_s21_a_run_time_command_under_xargs_is_a_catastrophic_removal_that_cannot_be_ruled_out() -> (
    None
):
    reason = catastrophic_reason(
        'echo "rm -rf ~" | xargs -I{} sh -c "{}"', workspace="/work/p", home="/home/u"
    )
    assert reason is not None


@pytest.mark.parametrize(
    "command",
    [
        "git ls-files '*.py' | xargs grep -n TODO",
        "find . -name '*.py' | xargs black",
        "find . -name '*.py' -print0 | xargs -0 sed -i 's/a/b/'",
        "find . -type f -exec grep -l foo {} +",
        "find . -exec chmod 644 {} \\;",
        "find src -name '*.ts' | xargs -n 10 npx prettier --write",
        "echo a b | xargs -n1 echo",
        "ls | xargs -I{} mv {} {}.bak",
    ],
)
def test_s21_ordinary_xargs_and_find_lines_stay_allowed(command: str) -> None:
    assert allowed(command), (command, analyze_command(command))


# --------------------------------------------------------------------------- 6: stdin


@pytest.mark.parametrize(
    "command",
    [
        "sh <<'EOF'\nrm -rf x\nEOF",
        "bash <<EOF\nrm -rf x\nEOF",
        "bash -s arg <<'EOF'\nrm -rf x\nEOF",
        "bash <<< 'rm -rf x'",
        "sudo bash <<'EOF'\nrm -rf x\nEOF",
        "ssh host <<'EOF'\nrm -rf x\nEOF",
        "ssh -T user@host <<'EOF'\ncd /srv\nrm -rf x\nEOF",
        "at now <<'EOF'\nrm -rf x\nEOF",
        "batch <<< 'rm -rf x'",
        "su <<'EOF'\nrm -rf x\nEOF",  # su without a command starts the user's shell
        "bash -c 'cd /srv && bash' <<'EOF'\nrm -rf x\nEOF",  # the script's shell inherits it
    ],
)
def test_s21_a_here_document_a_shell_reads_is_read_as_its_script(command: str) -> None:
    line = analyze_command(command)
    assert lists_removal(line), (command, line.commands)
    assert match_command("rm -rf *", command, direction="deny") == "match", command


_STDIN_WRAPPERS = st.sampled_from(
    ["", "sudo ", "env A=1 ", "nice -n 5 ", "timeout 5 ", "nohup ", "command ", "sudo -u me env "]
)
_STDIN_SCRIPT_READERS = st.sampled_from(
    ["sh", "bash", "dash", "bash -s", "sh -s -- a b", "zsh", "ssh host", "ssh -T me@host",
     "at now", "batch", "su", "chroot /srv", "fakeroot", "bash -c 'sh'", "sh -c 'cd /srv && sh'"]
)  # fmt: skip
_FEEDS = st.sampled_from(
    ["<<'EOF'\n{s}\nEOF", "<<EOF\n{s}\nEOF", "<<-'EOF'\n\t{s}\n\tEOF", "<<< '{s}'"]
)


@settings(max_examples=300, deadline=None)
@given(wrapper=_STDIN_WRAPPERS, reader=_STDIN_SCRIPT_READERS, feed=_FEEDS, group=st.booleans())
def test_s21_a_script_a_program_reads_on_stdin_is_read_however_the_program_is_reached(
    wrapper: str, reader: str, feed: str, group: bool
) -> None:
    command = f"{wrapper}{reader}"
    command = f"{{ {command}; }}" if group else command
    given_here = f"{command} {feed.format(s='rm -rf x')}"
    assert refused(given_here, "rm -rf *"), given_here
    if analyze_command(given_here).parsed:  # the grammar reads no here-string after a group
        assert lists_removal(analyze_command(given_here)), given_here
        assert match_command("rm -rf *", given_here, direction="deny") == "match", given_here
    # The same program given its input any other way runs what the line does not show.
    for elsewhere in (f"echo 'rm -rf x' | {command}", f"{command} < script.txt"):
        assert analyze_command(elsewhere).opaque, elsewhere
        assert refused(elsewhere, "rm -rf *"), elsewhere


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf x' | at now",
        "echo 'rm -rf x' | ssh host",
        "crontab <<EOF\n* * * * * rm -rf x\nEOF",
        "crontab - <<EOF\n* * * * * rm -rf x\nEOF",
        "crontab jobs.txt",
        "bash <<EOF\n$CMD\nEOF",  # the script is computed when the shell expands the body
        "bash < script.sh",
        "cat script.sh | bash -s",
    ],
)
def test_s21_a_program_that_runs_what_it_reads_on_stdin_is_opaque_when_that_is_unknown(
    command: str,
) -> None:
    line = analyze_command(command)
    assert line.opaque, command
    assert refused(command, "rm -rf *")


@pytest.mark.parametrize(
    ("command", "text"),
    [
        (
            "python3 <<EOF\nimport os\nos.system('rm -rf x')\nEOF",
            "import os\nos.system('rm -rf x')\n",
        ),
        ("python3 <<'EOF'\nprint('$HOME')\nEOF", "print('$HOME')\n"),
        ("docker exec -i c sh <<'EOF'\nrm -rf x\nEOF", "rm -rf x\n"),
        ("node <<< 'run()'", "run()\n"),
        ("cat <<EOF\na \\$b \\\\ c\nEOF", "a $b \\ c\n"),
        ("cat <<-EOF\n\tindented\n\tEOF", "indented\n"),
    ],
)
def test_s21_the_text_a_command_gets_on_stdin_is_exposed(command: str, text: str) -> None:
    line = analyze_command(command)
    reader = line.commands[0]
    assert reader.stdin is not None, command
    assert reader.stdin.literal
    assert reader.stdin.value == text


def test_s21_an_expanding_here_document_is_exposed_with_its_parameters() -> None:
    reader = analyze_command("python3 <<EOF\nprint('$HOME', \"$(date)\")\nEOF").commands[0]
    assert reader.stdin is not None
    kinds = [p.kind for p in reader.stdin.parts]
    assert "parameter" in kinds
    assert "dynamic" in kinds
    assert not reader.stdin.literal
    # The last redirection of standard input wins; another descriptor is not stdin.
    assert analyze_command("cat <<< a < f").commands[0].stdin is None
    assert analyze_command("cat 3<<EOF\na\nEOF").commands[0].stdin is None


@pytest.mark.parametrize(
    "command",
    [
        "cat <<'EOF' > notes.txt\nrm -rf x is dangerous\nEOF",
        "bash <<'EOF'\necho hello\nEOF",
        "sh <<< 'ls -la'",
        "python3 <<EOF\nprint(1)\nEOF",
        "git commit -F - <<'EOF'\nRemove the rm -rf helper\nEOF",
        "ssh host uptime",
        "ssh host 'cat > f' <<'EOF'\nrm -rf x\nEOF",
        "at -l",
        "crontab -l",
    ],
)
def test_s21_ordinary_here_documents_stay_allowed(command: str) -> None:
    assert allowed(command), (command, analyze_command(command))


# --------------------------------------------------------------------------- 7: git


@pytest.mark.parametrize(
    "command",
    [
        "git grep -O'rm -rf x' foo",
        "git grep --open-files-in-pager='rm -rf x' foo",
        "git grep --open-files='rm -rf x' foo",
        "git fetch-pack --exec='rm -rf x' h",
        "git send-pack --receive-pack='rm -rf x' h",
        "git send-pack --exec='rm -rf x' h",
        "git send-email --sendmail-cmd='rm -rf x' a.patch",
        "git daemon --access-hook='rm -rf x'",
        "git instaweb --httpd='rm -rf x'",
        "git filter-branch --setup='rm -rf x' HEAD",
        "git -c credential.helper='/bin/sh -c \"rm -rf x\"' fetch",
        "git -c credential.helper='store; rm -rf x' fetch",
        "git -c credential.https://h.helper='!rm -rf x' fetch",
        "git fetch 'ext::sh -c rm% -rf% x'",
        "GIT_ALLOW_PROTOCOL=ext git clone 'ext::sh -c rm% -rf% x' d",
        "git -c remote.origin.url='ext::sh -c rm% -rf% x' fetch origin",
        "git push --repo='ext::sh -c rm% -rf% x'",
        "git remote add evil 'ext::sh -c rm% -rf% x'",
        "git config core.fsmonitor 'rm -rf x' && git status",
        "git config --global core.pager 'rm -rf x'",
        "git config set core.sshCommand 'rm -rf x'",
        "git config --local --add alias.x '!rm -rf x'",
        "git config --file .gitmodules submodule.s.update '!rm -rf x'",
        "git -c alias.x='-c core.fsmonitor=\"rm -rf x\" status' x",
        "git for-each-repo --config=maintenance.repo -- -c core.pager='rm -rf x' log",
    ],
)
def test_s21_what_git_runs_through_its_options_and_configuration_is_read(command: str) -> None:
    line = analyze_command(command)
    assert lists_removal(line), (command, line.commands)
    assert match_command("rm -rf *", command, direction="deny") == "match", command


def test_s21_for_each_repo_runs_git_with_its_arguments_in_other_repositories() -> None:
    command = "git for-each-repo --config=maintenance.repo push --force origin main"
    line = analyze_command(command)
    pushes = [c for c in line.commands if c.words[:2] == ("git", "push")]
    assert pushes, line.commands
    assert all(c.moved for c in pushes), line.commands
    assert match_command("git push --force *", command, direction="deny") == "match"


@pytest.mark.parametrize(
    "command",
    [
        "git -c init.templateDir=/t clone https://h/r",
        "git clone --template=/t https://h/r",
        "git init --template /t",
        "git -c maintenance.auto=false commit -m x",
        "git config core.hooksPath /tmp/hooks",
        "git config include.path /tmp/x",
        "git config --global foo.bar baz",
        'git config "$KEY" "$VALUE"',
        "git -c remote.origin.push=+HEAD:refs/heads/main push origin",
        "git -c remote.origin.mirror=true push origin",
    ],
)
def test_s21_git_configuration_that_loads_or_runs_something_unread_is_opaque(
    command: str,
) -> None:
    assert analyze_command(command).opaque, command
    assert refused(command, "rm -rf *")


@pytest.mark.parametrize(
    "command",
    [
        "git clone https://github.com/a/b.git",
        "git config user.email dev@example.com",
        "git config --global user.name 'A B'",
        "git config --get remote.origin.url",
        "git config --global init.defaultBranch main",
        "git config pull.rebase false",
        "git config --global core.editor 'code --wait'",
        "git config credential.helper store",
        "git grep -n foo -- '*.py'",
        "git grep -O foo",
        "git lfs pull",
        "git remote add upstream https://github.com/a/b.git",
        "git -C repo status",
        "git fetch --prune",
        "git submodule update --init --recursive",
        "git push origin main",
        "git push -u origin feature/x",
    ],
)
def test_s21_ordinary_git_lines_stay_allowed(command: str) -> None:
    assert allowed(command), (command, analyze_command(command))


# --------------------------------------------------------------------------- 10: zip


@pytest.mark.parametrize(
    "command",
    [
        "zip -T -TT='rm -rf x' z.zip f",
        "zip -T -TT'rm -rf x' z.zip f",
        "zip -qTT 'rm -rf x' z.zip f",
        "zip --unzip-c 'rm -rf x' z.zip f",
        "zip --unzip-c='rm -rf x' z.zip f",
        "zip --unzip-command 'rm -rf x' z.zip f",
        "zip -r -TT 'rm -rf x' z.zip dir",
    ],
)
def test_s21_every_spelling_of_zips_unzip_command_is_read(command: str) -> None:
    line = analyze_command(command)
    assert lists_removal(line), (command, line.commands)
    assert match_command("rm -rf *", command, direction="deny") == "match"


def test_s21_zip_options_that_only_look_like_its_unzip_command_are_data() -> None:
    for command in ("zip -r a.zip dir", "zip -q -T a.zip f", "zip -b /tmp -T a.zip f"):
        line = analyze_command(command)
        assert not line.opaque, command
        assert names(line) == ["zip"], command
        assert allowed(command)


# --------------------------------------------------------------------------- 11: builtins


def test_s21_jobs_x_runs_its_command() -> None:
    line = analyze_command("jobs -x rm -rf x")
    assert lists_removal(line)
    assert match_command("rm -rf *", "jobs -x rm -rf x", direction="deny") == "match"
    assert names(analyze_command("jobs -l")) == ["jobs"]


@pytest.mark.parametrize("command", ["wait -p 'a[$(rm -rf x)]' -n", "wait -n -p 'a[0]'"])
def test_s21_wait_p_names_a_variable_whose_subscript_is_evaluated(command: str) -> None:
    line = analyze_command(command)
    assert line.hidden, command
    assert refused(command, "rm -rf *")
    assert not analyze_command("wait -n -p pid").hidden


@pytest.mark.parametrize(
    "command",
    [
        "ZIPOPT='-T -TT \"rm -rf build\"' zip out.zip a",
        "export ZIPOPT='-T -TT sh'; zip out.zip a",
        "LESS='+!rm -rf build' less notes.txt",
        "MANOPT='-P \"rm -rf build\"' man ls",
        "PARALLEL='--shebang-wrap rm' parallel echo ::: a",
        "RIPGREP_CONFIG_PATH=/tmp/rg.conf rg foo",
        "LESSKEY=/tmp/keys less notes.txt",
        "LESSKEYIN=/tmp/keys less notes.txt",
        "PS4='$(rm -rf build)' bash -x run.sh",
    ],
)
def test_s21_variables_that_carry_a_programs_options_or_configuration_are_opaque(
    command: str,
) -> None:
    # S21: a variable a program reads as if its options (or a configuration file) were written on
    # the line can make it run a command the line does not show: a deny/ask rule applies.
    assert analyze_command(command).opaque, command
    assert refused(command, "rm *")


@pytest.mark.parametrize(
    "command", ["LESS=-R less notes.txt", "zip -r out.zip src", "man ls", "rg -n foo src"]
)
def test_s21_ordinary_pager_and_archive_lines_stay_allowed(command: str) -> None:
    assert allowed(command), command
