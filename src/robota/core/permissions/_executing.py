"""Options, configuration values and variables whose value is a command line (S12, S21).

A program that is otherwise data — ``git``, ``tar``, ``rsync``, ``zip``, ``sort``, ``split`` —
can be told on its own command line to run another command: ``git -c core.fsmonitor='…'``, a
``git -c alias.x='!…'`` alias, ``git rebase --exec …``, ``tar --to-command=…``, ``rsync -e …``,
``sort --compress-program=…``. So can a variable in front of a command: ``GIT_SSH_COMMAND='…'
git fetch``, ``PAGER='…' man x``. :func:`commands_in_options` and :func:`commands_in_assignment`
find these values so that the analysis reads them as the commands they are (deny rules and the
catastrophic-removal check see them; the read-only classifier refuses them), and report as
*opaque* what runs but cannot be read: a script file, a value known only at run time, a
configuration key this table does not know to be data (S21: runs unless known not to).

Sources: git-config(1) (every key whose value git runs or loads, git 2.39–2.47), GNU tar 1.35,
rsync 3.2, Info-ZIP zip 3.0, GNU coreutils 9 ``sort`` and ``split``, ssh_config(5) and scp(1)
(OpenSSH 9), and the variables git(1),
ssh(1), man(1), less(1) and ld.so(8) document.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from robota.core.permissions._options import Grammar, grammar, parse_args
from robota.core.permissions._programs import program_grammar
from robota.core.permissions._shell_words import Word

__all__ = ["Found", "commands_in_assignment", "commands_in_options"]


@final
@dataclass(frozen=True, slots=True)
class Found:
    """Commands one command's options or environment make it run.

    Attributes:
        scripts: Shell lines it runs (read as commands of the same line).
        argvs: Argument vectors it runs as a command (``git bisect run make test``).
        opaque: It runs something this reading cannot show.
    """

    scripts: tuple[str, ...] = ()
    argvs: tuple[tuple[Word, ...], ...] = ()
    opaque: bool = False


_NOTHING: Final = Found()


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _keys(text: str) -> tuple[str, ...]:
    # git configuration keys, lower-case; `*` stands for a subsection name (fnmatch syntax).
    return tuple(text.split())


# --------------------------------------------------------------------------- git configuration

# Keys (lower-case; `*` is one subsection) whose value is a command line git runs. An alias or a
# credential helper runs a shell line only when its value starts with `!`.
_GIT_COMMAND_KEYS: Final = _keys(
    """
        core.fsmonitor core.pager core.editor core.sshcommand core.askpass core.gitproxy
        core.alternaterefscommand diff.external diff.*.command diff.*.textconv filter.*.clean
        filter.*.smudge filter.*.process merge.*.driver gpg.program gpg.*.program
        sequence.editor pager.* interactive.difffilter uploadpack.packobjectshook
        remote.*.uploadpack remote.*.receivepack sendemail.smtpserver sendemail.tocmd
        sendemail.cccmd sendemail.headercmd difftool.*.cmd difftool.*.path mergetool.*.cmd
        mergetool.*.path browser.*.cmd browser.*.path man.*.cmd man.*.path web.browser
        credential.helper credential.*.helper alias.*
    """
)
# Keys that load or enable something else to run (another configuration file, hooks from a
# directory, a transport that runs a command, signature checks through gpg.program).
_GIT_LOADING_KEYS: Final = _keys(
    """
        include.path includeif.*.path core.hookspath protocol.* protocol.*.allow
        log.showsignature commit.gpgsign tag.gpgsign tag.forcesignannotated push.gpgsign
    """
)
# Sections and keys known to be data: names, colours, behaviour switches that run nothing.
_GIT_DATA_KEYS: Final = _keys(
    """
        user.* author.* committer.* color.* color.*.* column.* advice.* init.* core.quotepath
        core.autocrlf core.eol core.filemode core.ignorecase core.longpaths core.safecrlf
        core.symlinks core.abbrev core.compression core.bigfilethreshold core.precomposeunicode
        core.excludesfile core.attributesfile core.commentchar core.commentstring
        core.untrackedcache core.preloadindex core.checkstat core.trustctime core.whitespace
        pull.rebase pull.ff pull.twohead pull.octopus push.default push.autosetupremote
        push.followtags fetch.prune fetch.prunetags fetch.parallel fetch.writecommitgraph
        merge.conflictstyle merge.ff merge.log merge.renames merge.stat merge.tool diff.tool
        rebase.autosquash rebase.autostash rebase.updaterefs rebase.stat diff.renames
        diff.algorithm diff.noprefix diff.mnemonicprefix diff.context diff.colormoved
        diff.submodule diff.relative diff.indentheuristic status.* branch.* branch.*.* tag.sort
        versionsort.* grep.* format.pretty format.numbered log.date log.decorate log.abbrevcommit
        log.follow log.mailmap log.graphcolors safe.directory http.* http.*.* https.* gc.*
        maintenance.* feature.* index.* pack.* transfer.fsckobjects fetch.fsckobjects
        receive.fsckobjects submodule.recurse submodule.fetchjobs checkout.defaultremote
        checkout.workers help.format blame.* am.* apply.* commit.verbose commit.cleanup
        commit.status rerere.enabled rerere.autoupdate remote.*.url remote.*.pushurl
        remote.*.fetch remote.*.push remote.*.tagopt remote.*.prune remote.*.mirror
        url.*.insteadof url.*.pushinsteadof init.defaultbranch
    """
)

_GIT_SUBCOMMAND_EXEC: Final = {
    # subcommand -> canonical options whose value is a shell line
    "rebase": frozenset({"--exec"}),
    "push": frozenset({"--receive-pack"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "clone": frozenset({"--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack"}),
    "archive": frozenset({"--exec"}),
    "difftool": frozenset({"--extcmd"}),
    "filter-branch": frozenset(
        {
            "--env-filter",
            "--tree-filter",
            "--index-filter",
            "--parent-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
        }
    ),
    "send-email": frozenset({"--to-cmd", "--cc-cmd", "--header-cmd", "--smtp-server"}),
}
# Subcommands without a table of their own in _programs: enough of one to find those options.
_GIT_EXTRA: Final = {
    "ls-remote": grammar(
        "--upload-pack|--exec= -h|--heads -b|--branches -t|--tags --refs -q|--quiet"
        " --get-url --sort= --symref -o|--server-option="
    ),
    "archive": grammar(
        "--exec= --remote= --format= -l|--list -v|--verbose --prefix= -o|--output= --add-file="
        " --add-virtual-file= --worktree-attributes --mtime="
    ),
    "difftool": grammar(
        "-x|--extcmd= -t|--tool= -y|--no-prompt --prompt -d|--dir-diff -g|--gui --no-gui"
        " --tool-help --symlinks --no-symlinks --trust-exit-code --no-trust-exit-code"
    ),
    "filter-branch": grammar(
        "--env-filter= --tree-filter= --index-filter= --parent-filter= --msg-filter="
        " --commit-filter= --tag-name-filter= --subdirectory-filter= --prune-empty --original="
        " -d= -f|--force --state-branch= --setup=",
        abbreviations=False,
    ),
    "send-email": grammar("--to-cmd= --cc-cmd= --header-cmd= --smtp-server="),
}


def _git_key(assignment: str) -> tuple[str, str | None]:
    key, equals, value = assignment.partition("=")
    return key.strip().lower(), (value if equals else None)


def _any(patterns: Sequence[str], key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, p) for p in patterns)


def git_config_found(assignment: Word) -> Found:
    """What a ``-c key=value`` (or ``clone --config``) makes git run."""
    if not assignment.literal:
        return Found(opaque=True)  # a key or value known only at run time
    key, value = _git_key(assignment.value)
    if _any(_GIT_COMMAND_KEYS, key):
        if value is None:
            return _NOTHING  # `-c key` alone sets it to true: no command
        if key.startswith(("alias.", "credential.")):
            # S21: only a `!` value is a shell line; otherwise an alias names git commands (the
            # subcommand then stands for something else, which the matcher treats as uncertain).
            return Found(scripts=(value[1:],)) if value.startswith("!") else _NOTHING
        if key == "core.fsmonitor" and value.lower() in ("true", "false", "yes", "no", "1", "0"):
            return _NOTHING
        return Found(scripts=(value,))
    if _any(_GIT_LOADING_KEYS, key):
        return Found(opaque=True)
    if _any(_GIT_DATA_KEYS, key):
        return _NOTHING
    return Found(opaque=True)  # S21: a key not known to be data may run something


def _git(argv: Sequence[Word]) -> Found:
    git = program_grammar("git")
    assert git is not None
    parsed = parse_args(git, argv[1:])
    scripts: list[str] = []
    argvs: list[tuple[Word, ...]] = []
    opaque = False

    def add(found: Found) -> None:
        nonlocal opaque
        scripts.extend(found.scripts)
        argvs.extend(found.argvs)
        opaque = opaque or found.opaque

    for option in parsed.options:
        if option.name == "-c" and option.value is not None:
            add(git_config_found(option.value))
        elif option.name == "--config-env":
            value = option.value
            key = _git_key(value.value)[0] if value is not None and value.literal else ""
            if not key or not _any(_GIT_DATA_KEYS, key):
                opaque = True  # the value comes from the environment
        elif option.name == "--exec-path" and option.value is not None:
            opaque = True  # git's own commands are run from there
    if not parsed.operands or not parsed.operands[0].literal:
        return Found(tuple(scripts), tuple(argvs), opaque)
    subcommand = parsed.operands[0].value
    rest = argv[parsed.positions[0] + 2 :]  # the words after the subcommand
    if subcommand == "bisect":
        if rest and rest[0].literal and rest[0].value == "run" and len(rest) > 1:
            argvs.append(tuple(rest[1:]))
    elif subcommand == "submodule":
        words = list(rest)
        while words and words[0].literal and words[0].value.startswith("-"):
            words = words[1:]
        if words and words[0].literal and words[0].value == "foreach":
            tail = [w for w in words[1:] if not (w.literal and w.value.startswith("-"))]
            if tail:
                text = _joined(tail)
                if text is None:
                    opaque = True
                else:
                    scripts.append(text)
    wanted = _GIT_SUBCOMMAND_EXEC.get(subcommand)
    if wanted:
        table: Grammar | None = _GIT_EXTRA.get(subcommand) or git.subcommands.get(subcommand)
        sub = parse_args(table, rest, wanted=wanted)
        if sub.maybe & wanted:
            opaque = True  # a spelling that may abbreviate one of them
        for option in sub.options:
            if option.name in wanted:
                if option.value is None or not option.value.literal:
                    opaque = True
                else:
                    scripts.append(option.value.value)
            elif subcommand == "clone" and option.name == "--config" and option.value is not None:
                add(git_config_found(option.value))
    return Found(tuple(scripts), tuple(argvs), opaque)


def _joined(words: Sequence[Word]) -> str | None:
    if not all(w.literal for w in words):
        return None
    return " ".join(w.value for w in words)


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
_SORT_SPLIT_EXEC: Final = {
    "sort": (grammar("--compress-program= --check=? --key|-k= -t= -o="), "--compress-program"),
    "split": (grammar("--filter= -a= -b= -C= -d -l= -n= -t= -x -e -u"), "--filter"),
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
        return _git(argv)
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
        for index, word in enumerate(argv[1:], start=1):
            text = word.value if word.literal else ""
            if text == "-TT" or text.startswith("--unzip-command"):
                if "=" in text:
                    return Found(scripts=(text.split("=", 1)[1],))
                following = argv[index + 1] if index + 1 < len(argv) else None
                if following is None or not following.literal:
                    return Found(opaque=True)
                return Found(scripts=(following.value,))
        return _NOTHING
    spec = _SORT_SPLIT_EXEC.get(name)
    if spec is not None:
        return _by_options(spec[0], argv, frozenset({spec[1]}))
    return _NOTHING


# --------------------------------------------------------------------------- the environment

_COMMAND_VARIABLES: Final = _names(
    """
    GIT_SSH_COMMAND GIT_SSH GIT_PAGER GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_EXTERNAL_DIFF
    GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS GIT_PROXY_COMMAND PAGER MANPAGER EDITOR VISUAL
    LESSOPEN LESSCLOSE BROWSER RSYNC_RSH SYSTEMD_PAGER PSQL_PAGER TAR_OPTIONS
    """
)
# Variables that make a program load code or configuration that is not in the line.
_LOADER_VARIABLES: Final = re.compile(
    r"^(?:LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_\w+|GIT_CONFIG\w*|GIT_EXEC_PATH|GIT_DIR"
    r"|GIT_WORK_TREE|GIT_TEMPLATE_DIR|GIT_ALTERNATE_OBJECT_DIRECTORIES|NODE_OPTIONS|PERL5OPT"
    r"|PERL5LIB|RUBYOPT|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS"
    r"|BASH_ENV|ENV)$"
)


def commands_in_assignment(assignment: str) -> Found:
    """What a ``NAME=value`` written in front of a command makes that command run.

    The value is as written (quotes included); only a plain value is read as a shell line.
    """
    name, _, raw = assignment.partition("=")
    name = name.rstrip("+")
    if name in _COMMAND_VARIABLES:
        value = _plain_value(raw)
        if value is None:
            return Found(opaque=True)
        if name == "TAR_OPTIONS":
            return Found(opaque=True) if value.strip() else _NOTHING
        return Found(scripts=(value,)) if value.strip() else _NOTHING
    if _LOADER_VARIABLES.match(name):
        return Found(opaque=True)
    return _NOTHING


def _plain_value(raw: str) -> str | None:
    """``raw`` after quote removal, when it holds no expansion; else ``None``."""
    if len(raw) >= 2 and raw[0] == raw[-1] == "'" and "'" not in raw[1:-1]:
        return raw[1:-1]
    if len(raw) >= 2 and raw[0] == raw[-1] == '"' and not any(c in raw[1:-1] for c in '"$`\\'):
        return raw[1:-1]
    if not any(c in raw for c in "'\"$`\\"):
        return raw
    return None
