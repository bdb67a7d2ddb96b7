"""S21 catastrophic removal always asks, in every mode (issue 10).

The target is judged after the expansions the shell will perform (variables, ``~``, quotes,
globs, trailing slashes), and a target that cannot be known asks.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionContext, PermissionPolicy, evaluate_permission
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


CATASTROPHIC = [
    # The home directory, however it is spelled (the review's examples first).
    "rm -rf $HOME/",
    'rm -rf "$HOME/"',
    "rm -rf ${HOME}/",
    'rm -rf "${HOME}"',
    "rm -rf ~/",
    "rm -rf ~",
    "rm -rf '/home/user'",
    "rm -rf /home/user//",
    "rm -rf /home/user/.",
    "rm -rf $HOME/project/..",
    # The root and system directories.
    "rm -rf /",
    "rm -rf //",
    "rm -rf /./",
    "rm -rf /usr/",
    "rm -rf /etc",
    "rm -rf /home",
    "rm -r -f /var/lib",
    "rm --recursive --force /",
    "rm --rec /",  # an unambiguous prefix of --recursive
    "rm -rf -- /",
    "sudo rm -rf /",
    "env rm -rf /",
    "\\rm -rf /",
    "r'm' -rf /",
    # Globs over them.
    "rm -rf /*",
    "rm -rf /u*",
    "rm -rf ~/*",
    "rm -rf $HOME/*",
    "rm -rf ./*",
    "rm -rf *",
    "rm -rf .*",
    # The workspace and its ancestors.
    "rm -rf .",
    "rm -rf ..",
    "rm -rf ../..",
    "rm -rf /home/user/project",
    # Targets that cannot be known.
    "rm -rf $TARGET",
    'rm -rf "$DIR/"',
    "rm -rf $(cat list)",
    "rm -rf ~other",
    "rm -rf ${HOME:-/}",
    "cd / && rm -rf *",
    "xargs rm -rf < list",
    "find . -exec rm -rf {} +",
    "rm $FLAGS /",
    # Other catastrophic forms.
    "rm --no-preserve-root -rf /tmp/x",
    "rm --no-pres -r x",
    "find / -delete",
    "find ~ -type f -delete",
    "mkfs.ext4 /dev/sda1",
    "dd if=/dev/zero of=/dev/sda",
    "rm 'unterminated",  # a line that cannot be read may be any of these
    # Text that hides what runs from the reading (bash and the analysis would disagree).
    "r\\\nm -rf /",  # a line continuation inside a word joins it: `rm`
    "$'rm' -rf /",
    "$CMD -rf /",
    "sudo {rm,-rf,/}",  # bash's brace expansion of the words
    "rm -rf {/,x}",
    "eval 'rm -rf /'",  # eval of literal words is read as the script it runs
    "eval rm -rf $HOME",
    'bash -c "rm -rf $HOME"',  # the parameter stands in the script where bash will put it
    "sh -c 'rm -rf ~'",
    # Review findings (issue 10): builtins and expansions that run text as code.
    "trap 'rm -rf ~' EXIT",
    "mapfile -C 'rm -rf /' -c 1 < f",
    "shopt -s expand_aliases; alias ls='rm -rf'\nls /",
    "alias q='rm -rf /'\nq",
    "hash -p /bin/rm ls; ls -rf ~",
    "PS4='$(rm -rf ~)'; set -x; true",
    "x='$(rm -rf ~)'; echo ${x@P}",
    "x='a[$(rm -rf /)]'; echo $((x))",
    "let 'x=a[$(rm -rf /)]'",
    "[[ 'a[$(rm -rf ~)]' -eq 0 ]]",
    "[[ -v 'a[$(rm -rf ~)]' ]]",
    "declare 'a[$(rm -rf ~)]=1'",
    "declare -n r='a[$(rm -rf ~)]'; echo $r",
    "read 'a[$(rm -rf /)]' <<< x",
    "echo ${a['$(rm -rf ~)']}",
    "printf -v 'a[$(rm -rf ~)]' x",
    "test -v 'a[$(rm -rf ~)]'",
    # Substitutions the grammar leaves as text.
    "echo ${x:-`rm -rf ~`}",
    'echo "${x:-`rm -rf ~`}"',
    "echo ${x:=`rm -rf ~`}",
    "echo ${x:-<(rm -rf ~)}",
    "echo `echo \\`rm -rf /\\``",
    "cat <<EOF\n$(true)\n`rm -rf ~`\nEOF",
    # Line continuations the grammar reads differently from the shell.
    "echo x\\\n#y; rm -rf /",
    'rm -rf "$\\\n{HOME}"',
    # Wrapper options that move where the command starts, or where it runs.
    "env - rm -rf /",
    "timeout -- 5 rm -rf /",
    "chrt -o -- 0 rm -rf /",
    "bash -c -- 'rm -rf /'",
    "bash -c -x 'rm -rf /'",
    "sudo FOO=1 rm -rf /",
    "echo x | xargs -i rm -r /home/user",
    "taskset 1 rm -rf /",
    "flock /tmp/lock rm -rf /",
    "flock /tmp/lock -c 'rm -rf /'",
    "setpriv --reuid 1 rm -rf /",
    "unshare -r rm -rf /",
    "chroot / rm -rf home",
    "script -qc 'rm -rf /'",
    "su - root -c 'rm -rf /'",
    "busybox rm -rf /",
    "coproc X { rm -rf /; }",
    "env -C / rm -rf home",
    "sudo -D / rm -rf home",
    # Other spellings of a protected target.
    "rm -rf ~+",
    "rm -rf ~+/*",
    "rm -rf ~+0",
    "rm -rf /hom[e]",
    "rm -rf /[t]mp",
    "/bin/r[m] -rf ~",
    "rm -rf /lib/x86_64-linux-gnu",
    "rm -rf /boot/efi",
    "rm -rf /proc/self/cwd/",
    # A name test that does not select what -delete deletes.
    "find / -name '*.pyc' -o -delete",
    "find / ! -name x -delete",
    "find / -delete -name x",
    "find / -name x -prune -o -delete",
    # Review 1, item 12a: find running a program that removes (or may) is a recursive removal.
    "find / -type f -exec rm {} +",
    "find . -type f -exec rm {} +",
    "find /home -exec shred -u {} +",
    "find ~ -type f -execdir unlink {} \\;",
    "find ~ -exec mytool {} +",
    "find /etc | xargs rm -f",
    "find ~ -type f -print0 | xargs -0 rm",
    "find ~ -name '*.bak' | sed s/.bak// | xargs rm -f",  # a filter may rewrite the names
    # Item 12b: a name test that selects nearly every name.
    "find ~ -name '?*' -delete",
    "find ~ -name '[a-z]*' -delete",
    "find ~ -regex '.*' -delete",
    "find ~ -name '.*' -delete",
    "find ~ -name '*.*' -delete",
    "find ~ -path '*' -delete",
    # Item 12c: the system trees' children, also below /usr.
    "rm -rf /usr/lib/x86_64-linux-gnu",
    "rm -rf /usr/bin/python3",
    # Item 12d: dd onto a device, however the path is spelled.
    "dd of=//dev/sda if=/dev/zero",
    "dd if=/dev/zero of=/./dev/sda",
    "cd /dev && dd of=sda",
    # Item 12e: other writes that destroy a disk, and rsync --delete into a protected tree.
    "> /dev/sda",
    "cat img >/dev/nvme0n1",
    "shred /dev/sda",
    "wipefs -a /dev/sda",
    "wipefs --all /dev/sda",
    "mke2fs /dev/sda1",
    "mkswap /dev/sda2",
    "blkdiscard /dev/sda",
    "rsync -a --delete empty/ ~/",
    "rsync -a --delete-after ./empty/ /",
    "rsync -a --delete empty/ . --exclude x",
    # A removal a program may run, read as deny rules read it (items 3, 5, 20).
    'cgexec -g cpu:x bash -c "rm -rf $HOME"',
    "mywrap 'r\"m\" -rf ~'",
    "mywrap '{rm,-rf,/}'",
    "./cat rm -rf ~",
    "mytool 'cd /etc && rm -rf ssl'",
    "mytool 'find ~ | xargs rm -f'",
]


@pytest.mark.parametrize("command", CATASTROPHIC)
@pytest.mark.parametrize("mode", ["default", "bypass", "accept_edits"])
def test_s21_a_catastrophic_removal_asks_in_every_mode_even_under_allow_everything(
    command: str, mode: str
) -> None:
    decision = decide(command, allow=["Bash(*)"], mode=mode)
    assert (decision.behavior, decision.always_ask) == ("ask", True), (command, decision)
    assert decision.reason.startswith("catastrophic")


def test_s21_remembered_consent_never_answers_a_catastrophic_removal() -> None:
    context = PermissionContext(workspace=WORKSPACE, home=HOME, remembered=("Bash(rm *)",))
    decision = evaluate_permission(
        BASH, {"command": "rm -rf $HOME/"}, PermissionPolicy(mode="bypass"), context
    )
    assert (decision.behavior, decision.always_ask) == ("ask", True)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "rm -rf build/",
        "rm -rf ./build/*",
        "rm -rf $HOME/project/build",
        "rm -rf ~/project/node_modules",
        "rm -r /tmp/scratch",
        "rm x",
        "rm /",  # not recursive: rm refuses a directory
        "rmdir /tmp/x",
        "ls -r /",
        "find . -name '*.pyc' -delete",
        "echo rm -rf /",
        "rm -rf '$HOME'",  # single quotes: a directory literally named $HOME
        "eval echo hi",
        "rm -rf build/{a,b}",
        "find . -name '*.pyc' -exec rm {} +",
        "find . -name __pycache__ -exec rm -rf {} +",
        "find . -name '*.o' -delete",
        "find . -name '*.py[co]' -delete",
        "find . -path '*/node_modules/*' -delete",
        "find ~/.cache -name '*.tmp' -delete",
        "find . -type f -name '*.log' -mtime +7 -delete",
        "find build -type f -exec rm {} +",
        "find . -type f -exec wc -l {} +",
        "find . -name '*.py' -exec grep -l TODO {} +",
        'find . -name "$PAT"',
        "find ~ -type f",
        "find . -newer \"$F\" -name '*.pyc' -delete",
        "find . -name '*.pyc' | xargs rm -f",
        "find . -name '*.tmp' -print0 | xargs -0 rm -f",
        "find . -name __pycache__ | xargs rm -rf",
        "dd if=/dev/zero of=/dev/null bs=1M count=1",
        "dd if=disk.img of=copy.img",
        "echo hi > /dev/null",
        "make 2>/dev/null",
        "echo x > /dev/stderr",
        'echo x > "$LOG"',
        "cd /tmp && echo x > out.txt",
        "rsync -avz --delete src/ dest/",
        "rsync -a --delete ~/project/src/ /mnt/backup/src/",
        "rsync -a --delete build/ host:/srv/site/",
        "shred -u secret.txt",
        "rm -rf /usr/local/go",
        "mytool --include '*.py' src",
        "ruff check --exclude '*.pyi' src",
        "kubectl get pods -o jsonpath='{.items[*].metadata.name}'",
        'docker run --rm -v "$PWD":/app img make test',
        "mytool 'echo rm -rf ~'",
    ],
)
def test_s21_ordinary_removals_are_not_catastrophic(command: str) -> None:
    assert catastrophic_reason(command, workspace=WORKSPACE, home=HOME) is None, command
    assert decide(command, mode="bypass").behavior == "allow"


def test_s21_without_a_home_directory_a_home_target_cannot_be_known() -> None:
    reason = catastrophic_reason("rm -rf ~/build", workspace=WORKSPACE, home=None)
    assert reason is not None
    assert "only known at run time" in reason


def test_s21_a_symlink_a_trailing_slash_follows_is_judged_by_where_it_leads(
    tmp_path: Any,
) -> None:
    home = tmp_path / "home"
    work = home / "work"
    work.mkdir(parents=True)
    (work / "link").symlink_to(home)

    def resolve(path: str) -> str:
        return os.path.realpath(path)

    assert catastrophic_reason("rm -rf link/", workspace=str(work), home=str(home), resolve=resolve)
    # Without the slash rm removes the link itself.
    assert (
        catastrophic_reason("rm -rf link", workspace=str(work), home=str(home), resolve=resolve)
        is None
    )


_HOME_SPELLINGS = st.sampled_from(["$HOME", "${HOME}", "~", "/home/user", "$HOME/project/.."])
_QUOTES = st.sampled_from(["", "'", '"'])
_TAILS = st.sampled_from(["", "/", "//", "/.", "/./", "/*", "/.*"])
_FLAGS = st.sampled_from(
    ["-rf", "-fr", "-Rf", "-r -f", "-r", "--recursive", "--recursive --force", "-rfv", "-rf --"]
)


@settings(max_examples=500, deadline=None)
@given(home=_HOME_SPELLINGS, quote=_QUOTES, tail=_TAILS, flags=_FLAGS)
def test_s21_every_spelling_of_the_home_directory_is_caught(
    home: str, quote: str, tail: str, flags: str
) -> None:
    if quote == "'" and home.startswith(("$", "~")):
        quote = ""  # single quotes stop the expansion: not a spelling of home
    if quote == '"' and home.startswith("~"):
        quote = ""  # so do double quotes for a tilde
    if tail.endswith("*") and quote:
        target = f"{quote}{home}{tail[:-1]}{quote}*"  # a quoted glob character is no glob
    else:
        target = f"{quote}{home}{tail}{quote}"
    command = f"rm {flags} {target}"
    decision = decide(command, allow=["Bash(*)"], mode="bypass")
    assert (decision.behavior, decision.always_ask) == ("ask", True), command


def test_s21_a_system_tree_is_protected_as_written_and_where_it_leads() -> None:
    # Review 1, item 12c: on a merged-/usr system (`/lib` a link to `usr/lib`, as on this
    # machine's Debian) only the resolved form was checked, against trees without `/usr/lib`.
    for target in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/bin/ls", "/lib64"):
        reason = catastrophic_reason(
            f"rm -rf {target}", workspace=WORKSPACE, home=HOME, resolve=os.path.realpath
        )
        assert reason is not None, target
        assert "system directory" in reason


def test_s21_find_following_links_says_why_it_asks() -> None:
    # Review 1, item 20: `find -L build -delete` asked, but named '.' as the target.
    reason = catastrophic_reason("find -L build -delete", workspace=WORKSPACE, home=HOME)
    assert reason is not None
    assert "follows symbolic links" in reason
    assert (
        catastrophic_reason("find -L build -name '*.o' -delete", workspace=WORKSPACE, home=HOME)
        is None
    )
    assert catastrophic_reason("find -P build -delete", workspace=WORKSPACE, home=HOME) is None
    assert catastrophic_reason("find -L ~ -delete", workspace=WORKSPACE, home=HOME) is not None


def test_s21_rm_options_are_read_by_rms_grammar() -> None:
    # Review 1, item 20: the check had its own option reader beside the grammar deny rules use.
    for command in ("rm --rec /", "rm -Rf /", "rm -fr -- ~", "rm -vr /"):
        assert catastrophic_reason(command, workspace=WORKSPACE, home=HOME) is not None, command
    for command in ("rm -f /", "rm -- -r", "rm -i ~/x", "rm ./-r"):
        assert catastrophic_reason(command, workspace=WORKSPACE, home=HOME) is None, command


_EVERY_NAME = st.sampled_from(["*", "?*", ".*", "*.*", "[a-z]*", "[!.]*", "**", "*?", "*[a-z]"])
_SELECTIVE = st.sampled_from(["*.pyc", "*.o", "__pycache__", "*.py[co]", "build*", "*~", "x"])
_ACTIONS = st.sampled_from(["-delete", "-exec rm {} +", "-exec rm -rf {} \\;", "-execdir rm {} +"])


@settings(max_examples=200, deadline=None)
@given(
    every=_EVERY_NAME,
    selective=_SELECTIVE,
    action=_ACTIONS,
    test=st.sampled_from(["-name", "-iname"]),
)
def test_s21_a_name_test_protects_only_when_it_selects(
    every: str, selective: str, action: str, test: str
) -> None:
    asks = f"find ~ {test} '{every}' {action}"
    assert catastrophic_reason(asks, workspace=WORKSPACE, home=HOME) is not None, asks
    passes = f"find ~ {test} '{selective}' {action}"
    assert catastrophic_reason(passes, workspace=WORKSPACE, home=HOME) is None, passes


# --------------------------------------------------------------------------- review 3: rm globs


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf *.log",
        "rm -rf build*",
        "rm -rf build dist *.egg-info",
        "rm -rf ./*.pyc",
        "rm -f src/*.o",
        "rm -rf ~/.cache/pip*",
        "rm -rf /tmp/pytest-*",
    ],
)
def test_s21_an_rm_glob_that_selects_is_judged_by_what_it_may_match(command: str) -> None:
    # Review 3: `rm -rf *.log` asked ("matches everything in the workspace") while `find . -name
    # '*.log' -delete` passed: one predicate decides which glob selects.
    assert catastrophic_reason(command, workspace=WORKSPACE, home=HOME) is None, command
    assert decide(command, mode="bypass").behavior == "allow"


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("rm -rf *", "everything in the workspace"),
        ("rm -rf ./.*", "everything in the workspace"),
        ("rm -rf ?*", "everything in the workspace"),
        ("rm -rf ~/*", "everything in the home directory"),
        ("rm -rf /b*", "/bin"),  # a selecting glob that matches a protected directory
        ("rm -rf /usr/lib/*.so", "/usr/lib"),  # every entry of a system tree is protected
        ("rm -rf ~/proj*", "the workspace"),
        ("rm -rf ../proj*", "the workspace"),
        ("rm -rf /home/us*", "home"),
        ("cd build && rm -rf *.o", "a directory the line changes to"),
    ],
)
def test_s21_an_rm_glob_that_may_match_a_protected_directory_still_asks(
    command: str, why: str
) -> None:
    reason = catastrophic_reason(command, workspace=WORKSPACE, home=HOME)
    assert reason is not None, command
    assert why in reason, reason


@settings(max_examples=200, deadline=None)
@given(glob=st.one_of(_EVERY_NAME, _SELECTIVE))
def test_s21_rm_and_find_agree_which_glob_selects(glob: str) -> None:
    # One predicate: `rm -rf GLOB` in the workspace and `find . -name GLOB -delete` ask alike.
    rm = catastrophic_reason(f"rm -rf {glob}", workspace=WORKSPACE, home=HOME)
    find = catastrophic_reason(f"find . -name '{glob}' -delete", workspace=WORKSPACE, home=HOME)
    assert (rm is None) == (find is None), (glob, rm, find)
