"""What git runs through its options, its configuration and the URLs it is given (S12, S21).

``git`` is in :data:`~._programs.DATA_PROGRAMS`, so a deny rule does not look through its
arguments; what it runs must therefore be read here, every way it can be told to on its own
command line:

* a ``-c key=value`` (or ``clone --config``), or a key written by ``git config <key> <value>``
  (and ``git config set …``) that a later command of the line — or of a later line — will
  honour: a key whose value is a command line is read as that line (``core.fsmonitor``,
  ``core.pager``, a ``credential.helper`` in each of its three forms, an alias: a ``!`` alias is
  a shell line, another is git's own words, options included); a key that loads something else
  (``include.path``, ``core.hooksPath``, ``init.templateDir``, ``protocol.*``) or is not known
  to be data makes the line opaque;
* a subcommand's options whose value is a command line (``rebase --exec``, ``grep -O``,
  ``fetch-pack --exec``, ``send-pack --receive-pack``, ``send-email --sendmail-cmd``, ``daemon
  --access-hook``, ``instaweb --httpd``, ``filter-branch`` filters …) or a directory of hooks
  (``clone`` / ``init --template``, opaque);
* ``git bisect run``, ``git submodule foreach`` and ``git for-each-repo``, which run their words;
* an ``ext::`` URL — as an operand, an option's value, a configured URL or an ``insteadOf``
  rewrite — which git-remote-ext(1) runs as a command with its arguments.

Which repository git runs in (``-C``, ``--git-dir``, ``GIT_DIR``, ``cd``) is the line's choice
like any path; that repository's own configuration is configuration placed outside the line
(SECURITY.md). Sources: git-config(1), gitcredentials(7), git-remote-ext(1) and the manual of each
subcommand named here (git 2.39–2.47).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from typing import Final

from robota.core.permissions._executing_found import NOTHING, Found, joined
from robota.core.permissions._options import Grammar, grammar, parse_args
from robota.core.permissions._programs import program_grammar
from robota.core.permissions._shell_words import Word, WordPart, literal_word

__all__ = ["config_found", "git_config_found", "git_found"]


def _keys(text: str) -> tuple[str, ...]:
    # git configuration keys, lower-case; `*` stands for a subsection name (fnmatch syntax).
    return tuple(text.split())


# Keys (lower-case; `*` is one subsection) whose value is a command line git runs. An alias and a
# credential helper have forms of their own (see config_found).
_GIT_COMMAND_KEYS: Final = _keys(
    """
        core.fsmonitor core.pager core.editor core.sshcommand core.askpass core.gitproxy
        core.alternaterefscommand diff.external diff.*.command diff.*.textconv filter.*.clean
        filter.*.smudge filter.*.process merge.*.driver gpg.program gpg.*.program
        gpg.ssh.defaultkeycommand sequence.editor pager.* interactive.difffilter
        uploadpack.packobjectshook remote.*.uploadpack remote.*.receivepack sendemail.smtpserver
        sendemail.tocmd sendemail.cccmd sendemail.headercmd sendemail.sendmailcmd
        sendemail.*.smtpserver sendemail.*.tocmd sendemail.*.cccmd sendemail.*.headercmd
        sendemail.*.sendmailcmd difftool.*.cmd difftool.*.path mergetool.*.cmd mergetool.*.path
        browser.*.cmd browser.*.path man.*.cmd man.*.path web.browser instaweb.httpd imap.tunnel
        hook.*.command trailer.*.command trailer.*.cmd credential.helper credential.*.helper
        alias.*
    """
)
# Keys whose value runs as a shell line only when it starts with `!` (git-config(1)).
_GIT_BANG_KEYS: Final = _keys("submodule.*.update")
# Keys that load or enable something else to run (another configuration file, hooks from a
# directory, a transport that runs a command, signature checks through gpg.program), or that
# change what a push does beyond its words (a configured refspec may force, a mirror deletes).
_GIT_LOADING_KEYS: Final = _keys(
    """
        include.path includeif.*.path core.hookspath init.templatedir protocol.*
        protocol.*.allow log.showsignature commit.gpgsign tag.gpgsign tag.forcesignannotated
        push.gpgsign remote.*.push remote.*.mirror
    """
)
# Sections and keys known to be data: names, colours, behaviour switches that run nothing.
_GIT_DATA_KEYS: Final = _keys(
    """
        user.* author.* committer.* color.* color.*.* column.* advice.* init.defaultbranch
        core.quotepath core.autocrlf core.eol core.filemode core.ignorecase core.longpaths
        core.safecrlf core.symlinks core.abbrev core.compression core.bigfilethreshold
        core.precomposeunicode core.excludesfile core.attributesfile core.commentchar
        core.commentstring core.untrackedcache core.preloadindex core.checkstat core.trustctime
        core.whitespace pull.rebase pull.ff pull.twohead pull.octopus push.default
        push.autosetupremote push.followtags fetch.prune fetch.prunetags fetch.parallel
        fetch.writecommitgraph merge.conflictstyle merge.ff merge.log merge.renames merge.stat
        merge.tool diff.tool rebase.autosquash rebase.autostash rebase.updaterefs rebase.stat
        diff.renames diff.algorithm diff.noprefix diff.mnemonicprefix diff.context
        diff.colormoved diff.submodule diff.relative diff.indentheuristic status.* branch.*
        branch.*.* tag.sort versionsort.* grep.* format.pretty format.numbered log.date
        log.decorate log.abbrevcommit log.follow log.mailmap log.graphcolors safe.directory
        http.* http.*.* https.* gc.* feature.* index.* pack.* transfer.fsckobjects
        fetch.fsckobjects receive.fsckobjects submodule.recurse submodule.fetchjobs
        checkout.defaultremote checkout.workers help.format blame.* am.* apply.* commit.verbose
        commit.cleanup commit.status rerere.enabled rerere.autoupdate remote.*.url
        remote.*.pushurl remote.*.fetch remote.*.tagopt remote.*.prune url.*.insteadof
        url.*.pushinsteadof
    """
)

# subcommand -> canonical options whose value is a shell line
_GIT_SUBCOMMAND_EXEC: Final = {
    "rebase": frozenset({"--exec"}),
    "push": frozenset({"--receive-pack"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "clone": frozenset({"--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack"}),
    "fetch-pack": frozenset({"--upload-pack"}),
    "send-pack": frozenset({"--receive-pack"}),
    "archive": frozenset({"--exec"}),
    "difftool": frozenset({"--extcmd"}),
    "grep": frozenset({"--open-files-in-pager"}),
    "daemon": frozenset({"--access-hook"}),
    "instaweb": frozenset({"--httpd"}),
    "filter-branch": frozenset(
        {
            "--setup",
            "--env-filter",
            "--tree-filter",
            "--index-filter",
            "--parent-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
        }
    ),
    "send-email": frozenset(
        {"--to-cmd", "--cc-cmd", "--header-cmd", "--smtp-server", "--sendmail-cmd"}
    ),
}
# subcommand -> canonical options that load hooks from a directory (opaque)
_GIT_SUBCOMMAND_LOADS: Final = {
    "clone": frozenset({"--template"}),
    "init": frozenset({"--template"}),
    "init-db": frozenset({"--template"}),
}
_INIT: Final = grammar(
    "--template= -q|--quiet --bare --object-format= --ref-format= -b|--initial-branch="
    " --separate-git-dir= --shared=?"
)
# Subcommands without a table of their own in _programs: enough of one to find those options
# (an option a table does not list is read as unknown, never as one of these).
_GIT_EXTRA: Final = {
    "ls-remote": grammar(
        "--upload-pack|--exec= -h|--heads -b|--branches -t|--tags --refs -q|--quiet"
        " --get-url --sort= --symref -o|--server-option="
    ),
    "fetch-pack": grammar(  # read with skip_prefix(): exact spellings only
        "--upload-pack|--exec= --all --stdin -q|--quiet -k|--keep --thin --include-tag"
        " --depth= --shallow-since= --shallow-exclude= --deepen-relative --no-progress -v"
        " --check-self-contained-and-connected --refetch --filter= --diag-url",
        abbreviations=False,
    ),
    "send-pack": grammar(
        "--receive-pack|--exec= --all --dry-run --force --mirror --verbose --thin --atomic"
        " --signed=? --no-signed --push-option= --stateless-rpc --stdin --helper-status"
        " --force-with-lease=? --quiet --progress"
    ),
    "archive": grammar(
        "--exec= --remote= --format= -l|--list -v|--verbose --prefix= -o|--output= --add-file="
        " --add-virtual-file= --worktree-attributes --mtime="
    ),
    "difftool": grammar(
        "-x|--extcmd= -t|--tool= -y|--no-prompt --prompt -d|--dir-diff -g|--gui --no-gui"
        " --tool-help --symlinks --no-symlinks --trust-exit-code --no-trust-exit-code"
    ),
    "grep": grammar(
        "-O|--open-files-in-pager=? -e= -f= -A|--after-context= -B|--before-context="
        " -C|--context= -m|--max-count= --max-depth= --threads= --color=? --no-color"
        " -i|--ignore-case -I -w|--word-regexp -v|--invert-match -h -H --full-name"
        " -E|--extended-regexp -G|--basic-regexp -F|--fixed-strings -P|--perl-regexp"
        " -n|--line-number --column -l|--files-with-matches --name-only"
        " -L|--files-without-match -z|--null -o|--only-matching -c|--count -p|--show-function"
        " -W|--function-context -q|--quiet --and --or --not --all-match --cached --untracked"
        " --no-index --recurse-submodules --exclude-standard --no-exclude-standard -a|--text"
        " --textconv --no-textconv -r|--recursive --no-recursive --break --heading",
        numeric=True,
    ),
    "daemon": grammar(  # read with skip_prefix(): exact spellings only
        "--access-hook= --base-path= --base-path-relaxed --strict-paths --interpolated-path="
        " --export-all --timeout= --init-timeout= --max-connections= --syslog"
        " --log-destination= --user-path=? --verbose --reuseaddr --detach --pid-file= --user="
        " --group= --enable= --disable= --allow-override= --forbid-override="
        " --informative-errors --no-informative-errors --inetd --listen= --port=",
        abbreviations=False,
    ),
    "instaweb": grammar(
        "-l|--local -d|--httpd= -m|--module-path= -p|--port= -b|--browser= --start --stop --restart"
    ),
    "filter-branch": grammar(
        "--setup= --env-filter= --tree-filter= --index-filter= --parent-filter= --msg-filter="
        " --commit-filter= --tag-name-filter= --subdirectory-filter= --prune-empty --original="
        " -d= -f|--force --state-branch=",
        abbreviations=False,
    ),
    "send-email": grammar(
        "--to-cmd= --cc-cmd= --header-cmd= --smtp-server= --sendmail-cmd= --to= --cc= --bcc="
        " --from= --subject= --in-reply-to= --identity= --smtp-server-port= --smtp-user="
        " --smtp-pass=? --smtp-encryption= --annotate --compose --dry-run --confirm="
    ),
    "init": _INIT,
    "init-db": _INIT,
}
_FOR_EACH_REPO: Final = grammar("--config= --keep-going --no-keep-going", permute=False)
_CONFIG: Final = grammar(
    "--global --system --local --worktree -f|--file= --blob= --add --replace-all --append"
    " --get --get-all --get-regexp --get-urlmatch --unset --unset-all --rename-section"
    " --remove-section -l|--list -e|--edit -t|--type= --no-type --bool --int --bool-or-int"
    " --path --expiry-date -z|--null --name-only --show-origin --show-scope --get-color"
    " --get-colorbool --default= --includes --no-includes --fixed-value --comment= --value="
    " --all --regexp --url="
)
# `git config` spellings that read, remove or rename, and write no value.
_CONFIG_READS: Final = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--unset", "--unset-all",
     "--rename-section", "--remove-section", "--list", "--edit", "--get-color",
     "--get-colorbool"}
)  # fmt: skip
_CONFIG_VERBS: Final = frozenset({"get", "list", "unset", "rename-section", "remove-section"})
_EXT_IN_URL_KEY: Final = re.compile(r"url\.ext::(.*)\.(?:push)?insteadof(?:=.*)?", re.I | re.S)


def _any(patterns: Sequence[str], key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, p) for p in patterns)


def config_found(key_text: str, value: Word | None) -> Found:
    """What setting the configuration key ``key_text`` to ``value`` makes git run.

    ``value`` is ``None`` for ``-c key`` alone (true). S21: a key not known to be data may run
    something, so it is opaque.
    """
    key = key_text.strip().lower()
    if _any(_GIT_COMMAND_KEYS, key):
        if value is None:
            return NOTHING  # `-c key` alone sets it to true: no command
        if not value.literal:
            return Found(opaque=True)  # a command known only at run time
        text = value.value
        if key.startswith("alias."):
            # A `!` alias is a shell line; any other is git's own words, options included
            # (`alias.x='-c core.pager=… log'`).
            return Found(scripts=(text[1:] if text.startswith("!") else "git " + text,))
        if key.startswith("credential."):
            # gitcredentials(7): `!…` is a shell snippet; an absolute path runs as written;
            # any other name runs as `git credential-<name> …`; each through the shell.
            if not text.strip():
                return NOTHING  # an empty helper clears the list
            if text.startswith("!"):
                return Found(scripts=(text[1:],))
            return Found(scripts=(text if text.startswith("/") else "git credential-" + text,))
        if key == "core.fsmonitor" and text.lower() in ("true", "false", "yes", "no", "1", "0"):
            return NOTHING
        return Found(scripts=(text,)) if text.strip() else NOTHING
    if _any(_GIT_BANG_KEYS, key):
        if value is None:
            return NOTHING
        if not value.literal:
            return Found(opaque=True)
        return Found(scripts=(value.value[1:],)) if value.value.startswith("!") else NOTHING
    if _any(_GIT_LOADING_KEYS, key):
        return Found(opaque=True)
    if _any(_GIT_DATA_KEYS, key):
        return NOTHING
    return Found(opaque=True)


def git_config_found(assignment: Word) -> Found:
    """What a ``-c key=value`` (or ``clone --config``) makes git run."""
    if assignment.unsupported is not None:
        return Found(opaque=True)
    key: list[str] = []
    for index, part in enumerate(assignment.parts):
        if part.kind != "literal":
            return Found(opaque=True)  # the key is known only at run time
        name, equals, rest = part.text.partition("=")
        key.append(name)
        if equals:
            tail = ((WordPart("literal", rest, part.quoted),) if rest else ()) + tuple(
                assignment.parts[index + 1 :]
            )
            return config_found("".join(key), Word(assignment.source, tail))
    return config_found("".join(key), None)


def _git_key(assignment: str) -> str:
    return assignment.partition("=")[0].strip().lower()


def git_found(argv: Sequence[Word]) -> Found:
    """What ``argv`` (a ``git`` command) runs through its options and configuration."""
    git = program_grammar("git")
    assert git is not None
    parsed = parse_args(git, argv[1:])
    found: list[Found] = [_ext_urls(argv[1:])]
    for option in parsed.options:
        if option.name == "-c" and option.value is not None:
            found.append(git_config_found(option.value))
        elif option.name == "--config-env":
            value = option.value
            key = _git_key(value.value) if value is not None and value.literal else ""
            if not key or not _any(_GIT_DATA_KEYS, key):
                found.append(Found(opaque=True))  # the value comes from the environment
        elif option.name == "--exec-path" and option.value is not None:
            found.append(Found(opaque=True))  # git's own commands are run from there
    if not parsed.operands or not parsed.operands[0].literal:
        return joined(found)
    subcommand = parsed.operands[0].value
    rest = argv[parsed.positions[0] + 2 :]  # the words after the subcommand
    found.append(_subcommand(git, subcommand, rest))
    return joined(found)


def _subcommand(git: Grammar, subcommand: str, rest: Sequence[Word]) -> Found:
    if subcommand == "bisect":
        if rest and rest[0].literal and rest[0].value == "run" and len(rest) > 1:
            return Found(argvs=(tuple(rest[1:]),))
        return NOTHING
    if subcommand == "submodule":
        return _submodule(rest)
    if subcommand == "config":
        return _config(rest)
    if subcommand == "for-each-repo":
        # `git for-each-repo --config=<key> [--] <arguments>` runs `git <arguments>` in each
        # repository the key lists: another directory than the line's.
        each = parse_args(_FOR_EACH_REPO, rest)
        if not each.operands:
            return NOTHING
        return Found(moved_argvs=((literal_word("git"), *rest[each.positions[0] :]),))
    runs = _GIT_SUBCOMMAND_EXEC.get(subcommand, frozenset())
    loads = _GIT_SUBCOMMAND_LOADS.get(subcommand, frozenset())
    wanted = runs | loads
    if not wanted:
        return NOTHING
    table = _GIT_EXTRA.get(subcommand) or git.subcommands.get(subcommand)
    sub = parse_args(table, rest, wanted=wanted)
    found: list[Found] = []
    if sub.maybe & wanted:
        found.append(Found(opaque=True))  # a spelling that may abbreviate one of them
    for option in sub.options:
        if option.name in loads:
            found.append(Found(opaque=True))  # hooks from a directory the line names
        elif option.name in runs:
            if option.value is None:
                # `grep -O` alone opens the configured pager; a value was expected otherwise.
                found.append(Found(opaque=_arity(table, option.name) != "optional"))
            elif not option.value.literal:
                found.append(Found(opaque=True))
            else:
                found.append(Found(scripts=(option.value.value,)))
        elif subcommand == "clone" and option.name == "--config" and option.value is not None:
            found.append(git_config_found(option.value))
    return joined(found)


def _arity(table: Grammar | None, canonical: str) -> str | None:
    if table is None:
        return None
    entries = [*table.long.values(), *table.short.values()]
    return next((arity for name, arity in entries if name == canonical), None)


def _submodule(rest: Sequence[Word]) -> Found:
    words = list(rest)
    while words and words[0].literal and words[0].value.startswith("-"):
        words = words[1:]
    if not (words and words[0].literal and words[0].value == "foreach"):
        return NOTHING
    tail = [w for w in words[1:] if not (w.literal and w.value.startswith("-"))]
    if not tail:
        return NOTHING
    if not all(w.literal for w in tail):
        return Found(opaque=True)
    return Found(scripts=(" ".join(w.value for w in tail),))


def _config(rest: Sequence[Word]) -> Found:
    """S21: what ``git config <key> <value>`` writes, read as ``-c key=value`` is.

    Later git commands honour it: a command written to the configuration is seen when it is
    written, not only when it runs in a later line (whose configuration is trusted).
    """
    parsed = parse_args(_CONFIG, rest)
    operands = list(parsed.operands)
    if operands and operands[0].literal and operands[0].value == "set":
        operands = operands[1:]
    elif operands and operands[0].literal and operands[0].value in _CONFIG_VERBS:
        return NOTHING  # `git config get …`, `list`, `unset` …
    elif any(o.name in _CONFIG_READS for o in parsed.options):
        return NOTHING  # `--get`, `--list`, `--unset` …
    if len(operands) < 2:
        return NOTHING  # `git config <key>` reads the key
    if parsed.unsure or not operands[0].literal:
        return Found(opaque=True)  # which word is the key, or the key itself, is not known
    return config_found(operands[0].value, operands[1])


def _ext_urls(words: Sequence[Word]) -> Found:
    """S21: git-remote-ext(1) runs an ``ext::<command> <arguments>`` URL as a command.

    Read wherever one is written: an operand, an option's value (glued after ``=`` too), a
    configured URL (``remote.x.url=ext::…``) or an ``url.ext::….insteadOf`` rewrite.
    """
    argvs: list[tuple[Word, ...]] = []
    opaque = False
    for word in words:
        if not word.literal:
            opaque = opaque or any(p.kind == "literal" and "ext::" in p.text for p in word.parts)
            continue
        text = word.value
        rewrite = _EXT_IN_URL_KEY.fullmatch(text)
        commands = [rewrite.group(1)] if rewrite is not None else []
        value = text.partition("=")[2]
        for candidate in (text, value):
            if not commands and candidate.startswith("ext::"):
                commands.append(candidate[len("ext::") :])
        argvs.extend(argv for argv in map(_ext_argv, commands) if argv)
    return Found(argvs=tuple(argvs), opaque=opaque)


def _ext_argv(command: str) -> tuple[Word, ...]:
    """The words of an ``ext::`` command.

    Split at unescaped spaces, with ``% `` a space and ``%%`` a percent sign; ``%s``, ``%S``,
    ``%G``, ``%V`` are filled in by git at run time.
    """
    words: list[Word] = []
    parts: list[WordPart] = []
    text: list[str] = []

    def flush_text() -> None:
        if text:
            parts.append(WordPart("literal", "".join(text), True))
            text.clear()

    def end_word() -> None:
        flush_text()
        if parts:
            words.append(Word("".join(p.text for p in parts), tuple(parts)))
            parts.clear()

    index = 0
    while index < len(command):
        ch = command[index]
        if ch == "%" and index + 1 < len(command):
            following = command[index + 1]
            if following in " %":
                text.append(following)
            else:
                flush_text()
                parts.append(WordPart("dynamic", "%" + following, True))
            index += 2
            continue
        if ch == " ":
            end_word()
        else:
            text.append(ch)
        index += 1
    end_word()
    return tuple(words)
