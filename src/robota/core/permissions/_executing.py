"""Options, configuration values and variables whose value is a command line (S12, S21).

A program that is otherwise data — ``git``, ``tar``, ``rsync``, ``zip``, ``sort``, ``split`` —
can be told on its own command line to run another command: ``git -c core.fsmonitor='…'``, a
``git -c alias.x='!…'`` alias, ``git rebase --exec …``, ``tar --to-command=…``, ``rsync -e …``,
``sort --compress-program=…``, ``zip -TT …``. So can a variable, wherever the line sets it:
``GIT_SSH_COMMAND='…' git fetch``, ``export PAGER='…'; man x``. :func:`commands_in_options` and
:func:`commands_in_variable` find these values so that the analysis reads them as the commands
they are (deny rules and the catastrophic-removal check see them; the read-only classifier
refuses them), and report as *opaque* what runs but cannot be read: a script file, a value known
only at run time, a configuration key this table does not know to be data (S21: runs unless
known not to), a variable that makes a trusted program load code or configuration the line
does not show. git's own reading is in :mod:`._executing_git`.

Sources: GNU tar 1.35, rsync 3.2, Info-ZIP zip 3.0 (its option table, ``zip -so``), GNU
coreutils 9 ``sort`` and ``split``, ssh_config(5) and scp(1) (OpenSSH 9), and the variables
git(1), ssh(1), man(1), less(1), sudo(8), npm-config(7), rsync(1), curl(1), zsh(1),
iconv_open(3), config(5ssl) and ld.so(8) document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from robota.core.permissions._executing_found import NOTHING, Found
from robota.core.permissions._executing_git import git_config_found, git_found
from robota.core.permissions._options import Grammar, grammar, parse_args
from robota.core.permissions._shell_words import Word, literal_word

__all__ = [
    "Found",
    "commands_in_assignment",
    "commands_in_options",
    "commands_in_variable",
    "git_config_found",
]

_NOTHING: Final = NOTHING


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --------------------------------------------------------------------------- other programs

_TAR: Final = grammar(
    "-A|--catenate|--concatenate -c|--create -d|--diff|--compare --delete -r|--append -t|--list"
    " --test-label -u|--update -x|--extract|--get -C|--directory= -f|--file= -j|--bzip2"
    " -J|--xz -z|--gzip|--gunzip|--ungzip -Z|--compress|--uncompress --zstd --lzip --lzma --lzop"
    " -a|--auto-compress -v|--verbose -k|--keep-old-files --overwrite --skip-old-files"
    " -O|--to-stdout -p|--preserve-permissions|--same-permissions -P|--absolute-names"
    " -h|--dereference -T|--files-from= -X|--exclude-from= --exclude= --strip-components="
    " --to-command= -I|--use-compress-program= --checkpoint=? --checkpoint-action="
    " -F|--info-script|--new-volume-script= --rsh-command= --rmt-command= -b|--blocking-factor="
    " -L|--tape-length= -M|--multi-volume -N|--newer|--after-date= -g|--listed-incremental="
    " -G|--incremental -K|--starting-file= -V|--label= -W|--verify -w|--interactive"
    " -U|--unlink-first -m|--touch -o -s|--preserve-order|--same-order -S|--sparse"
    " -H|--format= -R|--block-number -B|--read-full-records -i|--ignore-zeros --owner= --group="
    " --mode= --mtime= --numeric-owner --totals=? --wildcards --no-wildcards --anchored"
    " --transform|--xform= --remove-files --one-file-system --no-recursion --recursion"
    " --null --xattrs --no-xattrs --acls --selinux --sort= --warning= -l|--check-links"
)
_TAR_EXEC: Final = frozenset(
    {"--to-command", "--use-compress-program", "--rsh-command", "--rmt-command"}
)
_TAR_FILES: Final = frozenset({"--info-script"})  # a script file: runs, unreadable here
_RSYNC: Final = grammar(
    "-e|--rsh= --rsync-path= -v|--verbose -q|--quiet -a|--archive -r|--recursive -R|--relative"
    " -b|--backup -u|--update -l|--links -L|--copy-links -H|--hard-links -p|--perms"
    " -E|--executability -A|--acls -X|--xattrs -o|--owner -g|--group -D -t|--times"
    " -O|--omit-dir-times -J|--omit-link-times -S|--sparse -n|--dry-run -W|--whole-file"
    " -x|--one-file-system -B|--block-size= -y|--fuzzy -c|--checksum -C|--cvs-exclude"
    " -f|--filter= -F -z|--compress -P -h|--human-readable -i|--itemize-changes"
    " -T|--temp-dir= -M|--remote-option= -s|--secluded-args -4|--ipv4 -6|--ipv6 -0|--from0"
    " -m|--prune-empty-dirs -k|--copy-dirlinks -K|--keep-dirlinks -d|--dirs -I|--ignore-times"
    " -U|--atimes -N|--crtimes -8|--8-bit-output --delete --exclude= --include="
    " --exclude-from= --include-from= --files-from= --port= --address= --password-file="
    " --bwlimit= --partial --progress --stats --info= --debug= --log-file= --chmod= --chown=",
    abbreviations=False,
)
_RSYNC_EXEC: Final = frozenset({"--rsh", "--rsync-path"})
# zip 3.0: short options may be several letters (`-TT`, `-db`), the longest fits; a value may be
# glued, after `=`, or the next word; long options may be abbreviated. (`-i` and `-x` take a
# list of the words that follow, which are read here as operands.)
_ZIP: Final = grammar(
    "-0 -1 -2 -3 -4 -5 -6 -7 -8 -9 -A|--adjust-sfx -AC|--archive-clear -AS|--archive-set"
    " -b|--temp-path= -c|--entry-comments -d|--delete -db|--display-bytes"
    " -dc|--display-counts -dd|--display-dots -dg|--display-globaldots -ds|--dot-size="
    " -du|--display-usize -dv|--display-volume -D|--no-dir-entries -DF|--difference-archive"
    " -e|--encrypt -F|--fix -FF|--fixfix -FI|--fifo -FS|--filesync -f|--freshen -g|--grow"
    " -h|--help -h2|--more-help -i|--include -ic|--ignore-case -j|--junk-paths -J|--junk-sfx"
    " -k|--DOS-names -l|--to-crlf -L|--license -la|--log-append -lf|--logfile-path="
    " -li|--log-info -ll|--from-crlf -m|--move -MM|--must-match -n|--suffixes= -nw|--no-wild"
    " -o|--latest-time -O|--output-file= -p|--paths -P|--password= -q|--quiet"
    " -r|--recurse-paths -R|--recurse-patterns -RE|--regex -s|--split-size= -sb|--split-bell"
    " -sc|--show-command -sd|--show-debug -sf|--show-files -so|--show-options"
    " -sp|--split-pause -su|--show-unicode -sU|--show-just-unicode -sv|--split-verbose"
    " -S|--system-hidden -t|--from-date= -tt|--before-date= -T|--test -TT|--unzip-command="
    " -u|--update -U|--copy-entries -UN|--unicode= -v|--verbose -V|--VMS-portable"
    " -w|--VMS-versions -ws|--wild-stop-dirs -x|--exclude -X|--no-extra -y|--symlinks"
    " -z|--archive-comment -Z|--compression-method= -@|--names-stdin",
    multi_letter=True,
    short_equals=True,
)
_SORT_SPLIT_EXEC: Final = {
    "sort": (grammar("--compress-program= --check=? --key|-k= -t= -o="), "--compress-program"),
    "split": (grammar("--filter= -a= -b= -C= -d -l= -n= -t= -x -e -u"), "--filter"),
    # ripgrep 14: `--pre COMMAND` runs COMMAND on every file searched (`--pre-glob` only
    # narrows which); its long options are exact, its short ones cluster.
    "rg": (
        grammar(
            "--pre= --pre-glob= -e|--regexp= -f|--file= -g|--glob= --iglob= -t|--type="
            " -T|--type-not= -m|--max-count= -A|--after-context= -B|--before-context="
            " -C|--context= -M|--max-columns= -d|--max-depth= -j|--threads= -r|--replace="
            " -E|--encoding= --ignore-file= --sort= --sortr= --color= --colors= --engine="
            " --path-separator= --context-separator= --field-match-separator= --max-filesize=",
            abbreviations=False,
        ),
        "--pre",
    ),
}


def _by_options(table: Grammar, argv: Sequence[Word], wanted: frozenset[str]) -> Found:
    parsed = parse_args(table, argv[1:], wanted=wanted)
    scripts: list[str] = []
    opaque = bool(parsed.maybe & wanted)
    for option in parsed.options:
        if option.name not in wanted:
            continue
        if option.value is None or not option.value.literal:
            opaque = True
            continue
        value = option.value.value
        if option.name == "--checkpoint-action":
            if value.startswith("exec="):
                scripts.append(value[len("exec=") :])
            continue
        scripts.append(value)
    return Found(tuple(scripts), (), opaque)


_SSH_COMMAND_OPTIONS: Final = frozenset(
    {"proxycommand", "localcommand", "knownhostscommand", "remotecommand", "permitlocalcommand"}
)


def _ssh(name: str, argv: Sequence[Word]) -> Found:
    # ssh_config(5): `-o Key=Value` (or `Key Value`); keys are case-insensitive. A named
    # configuration file (`-F`) may set the same keys: what it runs is not in the line.
    scripts: list[str] = []
    opaque = False
    words = list(argv[1:])
    for index, word in enumerate(words):
        text = word.value if word.literal else ""
        if not word.literal and index > 0 and words[index - 1].value in ("-o", "-F", "-S"):
            opaque = True
            continue
        value: str | None = None
        if text.startswith("-o") and len(text) > 2:
            value = text[2:]
        elif index > 0 and words[index - 1].literal and words[index - 1].value == "-o":
            value = text
        elif text.startswith("-F") or (index > 0 and words[index - 1].value == "-F"):
            opaque = opaque or text != "-F"
            continue
        elif name in ("scp", "sftp") and (text.startswith("-S") and len(text) > 2):
            scripts.append(text[2:])
        elif name in ("scp", "sftp") and index > 0 and words[index - 1].value == "-S":
            scripts.append(text)
        if value is None:
            continue
        key, _, setting = value.replace("=", " ", 1).partition(" ")
        if key.strip().lower() in _SSH_COMMAND_OPTIONS and setting.strip():
            if key.strip().lower() == "permitlocalcommand":
                continue  # a switch; LocalCommand itself is read above
            scripts.append(setting.strip())
    return Found(tuple(scripts), (), opaque)


def commands_in_options(name: str, argv: Sequence[Word]) -> Found:
    """The commands ``argv`` (a command named ``name``) runs through its options."""
    if name == "git":
        return git_found(argv)
    if name in ("ssh", "scp", "sftp"):
        return _ssh(name, argv)
    if name == "tar":
        first = argv[1] if len(argv) > 1 else None
        bundled = first is not None and first.literal and not first.value.startswith("-")
        if bundled and first is not None and any(letter in first.value for letter in "IF"):
            return Found(opaque=True)  # old-style bundled options take their values later
        found = _by_options(_TAR, argv, _TAR_EXEC | {"--checkpoint-action"})
        files = parse_args(_TAR, argv[1:], wanted=_TAR_FILES)
        if files.maybe or any(o.name in _TAR_FILES for o in files.options):
            return Found(found.scripts, (), True)
        return found
    if name == "rsync":
        return _by_options(_RSYNC, argv, _RSYNC_EXEC)
    if name == "zip":
        return _by_options(_ZIP, argv, frozenset({"--unzip-command"}))
    spec = _SORT_SPLIT_EXEC.get(name)
    if spec is not None:
        return _by_options(spec[0], argv, frozenset({spec[1]}))
    return _NOTHING


# --------------------------------------------------------------------------- the environment

# Variables whose value is a command line a program runs (through the shell, or as a program
# with arguments). npm reads its `npm_config_*` variables in any case.
_COMMAND_VARIABLES: Final = _names(
    """
    GIT_SSH_COMMAND GIT_SSH GIT_PAGER GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_EXTERNAL_DIFF
    GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS SUDO_EDITOR GIT_PROXY_COMMAND PAGER MANPAGER EDITOR
    VISUAL LESSOPEN LESSCLOSE BROWSER RSYNC_RSH RSYNC_CONNECT_PROG CVS_RSH SVN_SSH SVN_EDITOR
    HGEDITOR PIP_EDITOR SYSTEMD_PAGER SYSTEMD_EDITOR PSQL_PAGER PSQL_EDITOR GH_EDITOR GH_PAGER
    GH_BROWSER
    """
)
# Variables a program reads as options written on its line (`ZIPOPT='-T -TT cmd'`, `LESS='+!cmd'`,
# `MANOPT='-P cmd'`): those options can run a command, and are not read here.
_OPTION_VARIABLES: Final = _names("TAR_OPTIONS ZIPOPT LESS MANOPT PARALLEL")
_NPM_COMMAND_VARIABLES: Final = _names(
    "npm_config_script_shell npm_config_shell npm_config_editor npm_config_browser"
    " npm_config_git npm_config_viewer"
)
# Variables that make a program the analysis trusts — a data program (`git`, `curl`), a wrapper
# (`ssh`), the shell, or every program (the dynamic loader) — load code or configuration the
# line does not show: another home or configuration directory, another configuration file, a
# preloaded library, options that may carry code. (An interpreter's search path — PYTHONPATH,
# PERL5LIB, RUBYLIB — is not one: the interpreter already runs files the line does not show.)
_LOADER_VARIABLES: Final = re.compile(
    r"(?:LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_\w+|GCONV_PATH|OPENSSL_CONF|OPENSSL_ENGINES"
    r"|HOME|XDG_CONFIG_HOME|XDG_CONFIG_DIRS|CURL_HOME|ZDOTDIR|GIT_CONFIG\w*|GIT_EXEC_PATH"
    r"|GIT_TEMPLATE_DIR|GIT_ALTERNATE_OBJECT_DIRECTORIES|NODE_OPTIONS|PERL5OPT|RUBYOPT"
    r"|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|BASH_ENV|ENV|RIPGREP_CONFIG_PATH"
    r"|LESSKEY|LESSKEYIN|LESSKEY_SRC"
    r"|(?i:npm_config_(?:userconfig|globalconfig|node_options|onload_script)))"
)


def commands_in_variable(name: str, value: Word | None) -> Found:
    """What setting the variable ``name`` to ``value`` makes the commands of the line run.

    The same reading wherever the line sets it: in front of a command, alone (``x=1;``), as an
    argument of ``export``, ``declare``, ``local``, ``readonly``, ``env`` or ``sudo``, as a loop
    variable or by ``read``. Every such assignment counts, exported or not (``set -a`` exports
    them all, and the variable may already be exported). ``value`` is ``None`` when the line
    does not show it (``read NAME``, ``for NAME in …``): a command variable or a loader is then
    opaque.
    """
    name = name.rstrip("+")
    if name in _COMMAND_VARIABLES or name.lower() in _NPM_COMMAND_VARIABLES:
        if value is None or not value.literal:
            return Found(opaque=True)  # a command known only at run time
        if not value.value.strip():
            return _NOTHING
        return Found(scripts=(value.value,))
    if name in _OPTION_VARIABLES:
        if value is not None and value.literal and _harmless_options(name, value.value):
            return _NOTHING
        return Found(opaque=True)  # options read as if written: not read here
    if _LOADER_VARIABLES.fullmatch(name):
        return Found(opaque=True)
    return _NOTHING


def _harmless_options(name: str, value: str) -> bool:
    """Whether ``value`` is an option string that cannot run anything (only ``LESS``'s flags)."""
    # `LESS=-R`, `LESS=FRX`: letters only (no `+` command, no `-k`/`-o` file, no valued option).
    return name == "LESS" and re.fullmatch(r"-?[FRXSMNnimJWqQeEKcaBgGrsux~-]*", value) is not None


def commands_in_assignment(assignment: str) -> Found:
    """What a ``NAME=value`` written in front of a command makes that command run.

    The value is as written (quotes included); only a plain value is known. Prefer
    :func:`commands_in_variable` with the value as a :class:`Word`.
    """
    name, _, raw = assignment.partition("=")
    value = _plain_value(raw)
    return commands_in_variable(name, literal_word(value) if value is not None else None)


def _plain_value(raw: str) -> str | None:
    """``raw`` after quote removal, when it holds no expansion; else ``None``."""
    if len(raw) >= 2 and raw[0] == raw[-1] == "'" and "'" not in raw[1:-1]:
        return raw[1:-1]
    if len(raw) >= 2 and raw[0] == raw[-1] == '"' and not any(c in raw[1:-1] for c in '"$`\\'):
        return raw[1:-1]
    if not any(c in raw for c in "'\"$`\\"):
        return raw
    return None
