"""Catastrophic removals and writes: the calls that always reach a person (S21).

A recursive removal is *catastrophic* when a target, after the expansions the shell will
perform — quotes, ``~``, ``$HOME`` / ``${HOME}``, globs, trailing slashes, ``.`` and ``..`` — is
``/`` or a system directory (``/usr``, ``/etc``, ``/home`` …, and the direct children of the
system trees such as ``/lib/x86_64-linux-gnu``), the home directory or one of its ancestors, or
the workspace or one of its ancestors; a glob is judged by the directory its matches lie in
(``/*``, ``~/*`` and ``./*`` are catastrophic, ``build/*`` is not), and one whose last component
selects (:func:`glob_selects`, find's name tests' predicate: ``*.log``, ``build*``) by the
entries it may match (``/b*`` is ``/bin``). A target is judged as written
and where the host's resolver says it leads (``/lib`` is ``/usr/lib`` on a merged-/usr system).
A target whose value this module cannot know — any other expansion, a substitution, ``~user``,
arguments ``xargs`` adds at run time, a relative path after a ``cd`` — makes the removal
catastrophic too: when the target cannot be known, the removal asks.

``find`` removes what it selects when it runs ``-delete``, runs a program that removes (``rm``,
``unlink``, ``shred``, ``truncate``, ``mv``) or an unknown one through ``-exec``, ``-execdir``,
``-ok`` or ``-okdir``, or feeds such a program through ``xargs``: that is a recursive removal of
its starting points, unless a name test that selects (``-name '*.pyc'``, not ``-name '.*'``) in a
plain conjunction before the action chooses what is removed. ``rsync --delete`` removes what its
destination holds beyond the source. ``rm``'s options are read by its grammar
(:mod:`._programs`), the one reading deny rules use. Writes onto a disk are judged by
:mod:`._removal_writes`. A line the shell grammar cannot read may be any of these, so it asks
as well, and so does a program that may run one of them (:mod:`._look_through`).

This is an in-process reading of the command text, not a sandbox: a program that deletes files
itself (a script, an interpreter's ``-c``) is not seen here.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Final

from robota.core.permissions._command_patterns import end_of_options
from robota.core.permissions._globs import PathResolver
from robota.core.permissions._look_through import (
    Budget,
    Sought,
    Unreadable,
    consumed_words,
    look_through,
    may_run_arguments,
    program_name,
    sets_path,
)
from robota.core.permissions._options import may_be_option, parse_args
from robota.core.permissions._programs import program_grammar
from robota.core.permissions._removal_feeds import (
    feeding_find,
    find_parts,
    pipeline_before,
    top_index,
)
from robota.core.permissions._removal_writes import (
    WRITERS,
    device_path_reason,
    device_write_reason,
    redirect_write_reason,
)
from robota.core.permissions._shell import CommandLine, SimpleCommand, analyze_command
from robota.core.permissions._shell_words import (
    Word,
    glob_fixed_prefix,
    glob_has_magic,
    glob_match,
    glob_unescape,
)

__all__ = ["catastrophic_reason", "glob_selects"]

_SLASHES: Final = re.compile(r"/{2,}")
_FIND_NAME_TESTS: Final = frozenset({"-name", "-iname"})
_FIND_PATH_TESTS: Final = frozenset({"-path", "-ipath", "-wholename", "-iwholename"})
_FIND_REGEX_TESTS: Final = frozenset({"-regex", "-iregex"})
_FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_FOLLOWS: Final = frozenset({"-L", "-follow"})
# Primaries that take one argument (GNU find 4.9, BSD find): the argument is no primary.
_FIND_ONE_ARGUMENT: Final = frozenset(
    {"-amin", "-anewer", "-atime", "-cmin", "-cnewer", "-context", "-ctime", "-files0-from",
     "-fls", "-fprint", "-fprint0", "-fstype", "-gid", "-group", "-ilname", "-inum", "-links",
     "-lname", "-maxdepth", "-mindepth", "-mmin", "-mtime", "-newer", "-perm", "-printf",
     "-regextype", "-samefile", "-size", "-type", "-uid", "-used", "-user", "-xtype",
     "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex"}
)  # fmt: skip
_CWD_CHANGERS: Final = frozenset({"cd", "pushd", "popd"})
# Data programs that destroy or move away the files they are given.
_DESTROYERS: Final = frozenset({"rm", "unlink", "shred", "truncate", "mv"})
_JUDGED: Final = frozenset({"rm", "find", "rsync", *WRITERS})
_SOUGHT: Final = Sought(tuple(sorted(_JUDGED)))
_PROCESS_VIEWS: Final = ("/proc/", "/dev/fd/")
# Trees whose every direct child is the machine's own (`/lib/x86_64-linux-gnu`, `/boot/efi`,
# `/usr/lib/x86_64-linux-gnu`, `/etc/ssl`): removing one breaks it.
_SYSTEM_TREES: Final = frozenset(
    {"/bin", "/boot", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/sbin", "/usr", "/var",
     "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32",
     "/usr/libexec", "/System", "/Library", "/private"}
)  # fmt: skip
_FIND_OPERATORS: Final = frozenset({"-o", "-or", "!", "-not", ",", "(", ")"})
# The file-system hierarchy's top level (Linux FHS, and macOS's own), and the system trees
# below it whose loss breaks the machine.
_SYSTEM_DIRECTORIES: Final = frozenset(
    {
        *("/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32"),
        *("/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys"),
        "/tmp",  # noqa: S108 - a directory to protect, not one we write to
        *("/usr", "/var", "/snap", "/nix", "/Applications", "/Library", "/System", "/Users"),
        *("/Volumes", "/private", "/cores", "/usr/bin", "/usr/lib", "/usr/lib64", "/usr/local"),
        *("/usr/sbin", "/usr/share", "/var/lib", "/var/log", "/etc/ssh", "/private/etc"),
        "/private/var",
    }
)
_RECURSIVE: Final = "--recursive"
_NO_PRESERVE_ROOT: Final = "--no-preserve-root"


def catastrophic_reason(
    command: str,
    *,
    workspace: str,
    home: str | None,
    resolve: PathResolver | None = None,
) -> str | None:
    """Why ``command`` is a catastrophic removal or write, or ``None`` when it is not one.

    Args:
        command: The command line.
        workspace: The absolute directory the command runs in.
        home: The user's home directory, when known (``~`` and ``$HOME`` are unknown without).
        resolve: The host's canonical-path resolver, used for targets that end in ``/`` (the
            shell follows a symlink there), for each target's parent directory and for device
            targets.
    """
    line = analyze_command(command)
    if not line.parsed:
        return (
            f"catastrophic removal cannot be ruled out: the command cannot be read ({line.error})"
        )
    if line.hidden:
        # S21: what the shell will read here is not what this analysis can read; a removal in
        # it could not be seen, so it cannot be ruled out.
        return "catastrophic removal cannot be ruled out: the command hides what it runs"
    judge = _Judge(workspace=workspace, home=home, resolve=resolve)
    return judge.line(line, Budget())


class _Judge:
    __slots__ = ("_home", "_protected", "_resolve", "_workspace")

    def __init__(self, *, workspace: str, home: str | None, resolve: PathResolver | None) -> None:
        self._resolve = resolve
        self._workspace = self._canonical(workspace) if workspace.startswith("/") else "/"
        self._home = self._canonical(home) if home and home.startswith("/") else None
        protected = {"/", *_SYSTEM_DIRECTORIES, *_ancestors(self._workspace)}
        if self._home is not None:
            protected.update(_ancestors(self._home))
        self._protected = frozenset(protected)

    def _canonical(self, path: str) -> str:
        # S05: a home or workspace reached through a symlink (`/home` is a link on some systems)
        # is protected where the system calls will find it, not only where its name is written.
        if self._resolve is not None:
            try:
                return _normalize(self._resolve(path))
            except (OSError, ValueError):
                pass
        return _normalize(path)

    def line(self, line: CommandLine, budget: Budget) -> str | None:
        """The first catastrophic removal or write ``line`` performs (or may perform)."""
        moves = any(_runs(c, _CWD_CHANGERS) for c in line.commands)
        reason = redirect_write_reason(
            line, lambda word, simple, strict: self._device(word, simple, strict, moves)
        )
        if reason is not None:
            return reason
        consumed = consumed_words(line)
        path_set = sets_path(line)
        for index, simple in enumerate(line.commands):
            reason = self.command(simple, line, moves, budget, consumed[index], path_set=path_set)
            if reason is not None:
                return reason
        return None

    def command(
        self,
        simple: SimpleCommand,
        line: CommandLine,
        moves: bool,
        budget: Budget,
        consumed: frozenset[int] = frozenset(),
        *,
        path_set: bool = False,
    ) -> str | None:
        name = program_name(simple.words[0]) if simple.words else None
        words = " ".join(simple.words)
        if name not in _JUDGED and may_run_arguments(simple, path_set=path_set):
            reason = self._looked_through(simple, line, moves, budget, consumed, path_set)
            if reason is not None:
                return reason
        if name == "rm":
            return self._rm(simple, line, words, moves)
        if name == "find":
            return self._find(simple, line, words, moves, path_set=path_set)
        if name == "rsync":
            return self._rsync(simple, words, moves)
        if name is not None and name in WRITERS:
            return device_write_reason(
                simple,
                name,
                words,
                lambda word, command, strict: self._device(word, command, strict, moves),
            )
        return None

    def _looked_through(
        self,
        simple: SimpleCommand,
        line: CommandLine,
        moves: bool,
        budget: Budget,
        consumed: frozenset[int],
        path_set: bool,
    ) -> str | None:
        """S21: a program not known to leave its arguments alone may run one of them.

        ``mywrapper rm -rf ~``, ``tool --run='rm -rf ~'`` and ``tool 'r"m" -rf ~'`` are judged
        as the removal they may run (issue 24: runs unless known not to), read by
        :mod:`._look_through` as deny rules read them.
        """
        unreadable: Unreadable | None = None
        items = look_through(simple, _SOUGHT, budget=budget, consumed=consumed, path_set=path_set)
        for item in items:
            if isinstance(item, Unreadable):
                if item.kind != "opaque" and unreadable is None:
                    unreadable = item  # a script file it runs is not read here, as in a line
                continue
            # A command found in a script the program may run is judged in that script (its
            # own `cd`, its own pipes); one made of the program's words, in this line.
            context = item.line or line
            inner_moves = moves or any(_runs(c, _CWD_CHANGERS) for c in context.commands)
            inner_path = path_set or (item.line is not None and sets_path(item.line))
            reason = self.command(item.command, context, inner_moves, budget, path_set=inner_path)
            if reason is not None:
                return reason
        if unreadable is None:
            return None
        why = "cannot be read" if unreadable.kind != "limit" else "is past what is read"
        return (
            f"catastrophic removal cannot be ruled out: {simple.name!r} may run "
            f"{unreadable.text!r}, which {why}"
        )

    def _rm(self, simple: SimpleCommand, line: CommandLine, words: str, moves: bool) -> str | None:
        argv = [
            # POSIX sh's reading: the braces are characters. (bash's reading is listed as a
            # command of its own and judged there.)
            Word(w.source, w.parts) if w.unsupported == "brace expansion" else w
            for w in simple.argv[1:]
        ]
        wanted = frozenset({_RECURSIVE, _NO_PRESERVE_ROOT})
        parsed = parse_args(program_grammar("rm"), argv, wanted=wanted)
        names = {o.name for o in parsed.options} | parsed.maybe
        if _NO_PRESERVE_ROOT in names:
            return f"catastrophic removal: {words!r} disables rm's protection of '/'"
        end = end_of_options(argv, parsed)
        # A word only known at run time before any `--` may be options (`$FLAGS`) or targets,
        # or both. (A word that starts with `~` is a path whatever the home is: a target.)
        recursive = _RECURSIVE in names or any(
            may_be_option(w) and w.pattern() is None and (end is None or position < end)
            for w, position in zip(parsed.operands, parsed.positions, strict=True)
        )
        if not recursive:
            return None
        fed = simple.via == "xargs" and feeding_find(line, simple) is not None
        if simple.opaque_arguments and simple.via == "xargs" and not fed:
            return f"catastrophic removal: {words!r} removes targets only known at run time"
        for target in parsed.operands:
            if simple.via == "find -exec" and _found_file(target):
                continue  # a file find finds: judged with find's starting points (`_find`)
            reason = self._target(target, simple, moves)
            if reason is not None:
                return f"catastrophic removal: {words!r} ({reason})"
        return None

    def _find(
        self,
        simple: SimpleCommand,
        line: CommandLine,
        words: str,
        moves: bool,
        *,
        path_set: bool = False,
    ) -> str | None:
        parts = find_parts(simple)
        starts, expression = parts.starts, parts.expression
        follows = any(w.literal and w.value == "-L" for w in parts.options)
        follows = follows or any(w.literal and w.value in _FIND_FOLLOWS for w in expression)
        action = _removing_action(expression, path_set=path_set)
        feeds = _feeds_removal(line, simple, path_set=path_set)
        if action is None and feeds is None:
            return None
        selected = (action is None or _selected_by_name(expression, action)) and (
            feeds is None or feeds
        )
        if selected:
            return None  # a name test selects what is removed (`find . -name '*.pyc' -delete`)
        reasons = [self._target(start, simple, moves) for start in starts] or [
            self._target_path(".", False, moved=simple.moved or moves)
        ]
        for reason in reasons:
            if reason is not None:
                return f"catastrophic removal: {words!r} ({reason})"
        if follows:
            return (
                f"catastrophic removal: {words!r} follows symbolic links, so what it removes "
                "may lie anywhere"
            )
        return None

    def _rsync(self, simple: SimpleCommand, words: str, moves: bool) -> str | None:
        """``rsync --delete``: what the destination holds beyond the source is removed."""
        argv = simple.argv[1:]
        if not any(
            (w.literal and w.value.startswith("--del"))
            or (not w.literal and may_be_option(w) and w.pattern() is None)
            for w in argv
        ):
            return None  # `--del`, `--delete`, `--delete-after` …; `$OPTS` may be one
        operands = [w for w in argv if not (w.literal and w.value.startswith("-"))]
        if not operands:
            return None
        # The destination is the last word, unless that may be an option's value.
        last = argv[-1]
        before = argv[-2] if len(argv) > 1 else None
        if last is operands[-1] and not (before is not None and may_be_option(before)):
            destinations = [last]
        else:
            destinations = operands
        for destination in destinations:
            if destination.literal and _remote(destination.value):
                continue
            reason = self._target(destination, simple, moves, follow=True)
            if reason is not None:
                return (
                    f"catastrophic removal: {words!r} deletes what the destination holds "
                    f"beyond the source ({reason})"
                )
        return None

    def _device(
        self, word: Word, simple: SimpleCommand | None, strict: bool, moves: bool
    ) -> str | None:
        pattern = word.pattern(
            variables={"HOME": self._home} if self._home is not None else {}, home=self._home
        )
        if pattern is None:
            return None
        path = glob_fixed_prefix(pattern) if glob_has_magic(pattern) else glob_unescape(pattern)
        return device_path_reason(
            path,
            word.source,
            relative_unknown=moves or (simple is not None and simple.moved),
            strict=strict,
            workspace=self._workspace,
            resolve=self._resolve,
        )

    def _target(
        self, word: Word, simple: SimpleCommand, moves: bool, *, follow: bool = False
    ) -> str | None:
        pattern = word.pattern(
            variables={"HOME": self._home} if self._home is not None else {}, home=self._home
        )
        if pattern is None:
            return f"the target {word.source!r} is only known at run time"
        glob = glob_has_magic(pattern)
        moved = simple.moved or moves
        if glob:
            return self._glob_target(pattern, source=word.source, moved=moved)
        path = glob_unescape(pattern)
        if follow:
            path = path.rstrip("/") + "/"
        return self._target_path(path, False, source=word.source, moved=moved)

    def _glob_target(self, pattern: str, *, source: str, moved: bool) -> str | None:
        """A glob target, judged by what it may match.

        S21: a glob whose last component selects (:func:`glob_selects`, the predicate find's
        name tests are judged by) matches some entries of one directory: it is catastrophic
        when that directory is a system tree (each entry is the machine's own) or one of the
        entries it may match is protected (``/b*`` is ``/bin``, ``../proj*`` the workspace).
        Any other glob (``*``, ``.*``, a glob in a directory) may match everything in the
        directory before its first glob character, and is judged as that directory.
        """
        stripped = pattern.rstrip("/") or "/"
        directory, _, last = stripped.rpartition("/")
        if glob_has_magic(directory) or not glob_selects(last):
            return self._target_path(glob_fixed_prefix(pattern), True, source=source, moved=moved)
        if stripped.startswith("/") and not directory:
            directory = "/"
        path = glob_unescape(directory)
        if path.startswith(_PROCESS_VIEWS):
            return f"{source!r} names a process's own view of the file system"
        if not path.startswith("/"):
            if moved:
                return f"{source!r} is relative to a directory the line changes to"
            path = posixpath.join(self._workspace, path) if path else self._workspace
        forms = [_normalize(path)]
        if self._resolve is not None:
            try:
                forms.append(_normalize(self._resolve(path)))
            except (OSError, ValueError):
                return f"where {source!r} leads cannot be resolved"
        for form in forms:
            if form in _SYSTEM_TREES:
                return f"{source!r} matches in the system directory {form}"
            for protected in sorted(self._protected):
                parent, name = posixpath.split(protected)
                if name and parent == form and glob_match(last, name):
                    where = _describe(protected, self._home, self._workspace)
                    return f"{source!r} may match {where}"
        return None

    def _target_path(
        self, path: str, glob: bool, *, source: str = ".", moved: bool = False
    ) -> str | None:
        if path.startswith(_PROCESS_VIEWS):
            # `/proc/self/cwd` means the shell's directory there, not this process's here.
            return f"{source!r} names a process's own view of the file system"
        if not path.startswith("/"):
            if moved:
                return f"{source!r} is relative to a directory the line changes to"
            path = posixpath.join(self._workspace, path) if path else self._workspace
        follows = path.endswith(("/", "/."))
        forms = [_normalize(path)]  # as written: `/lib/x` is a system directory on any system
        if self._resolve is not None:
            # S05: never lexical alone — `link/../x` climbs out of the link's *target*, as the
            # system call will. What rm unlinks is the last name of the path as written, in the
            # directory its parent resolves to; a trailing `/`, `.` or `..` is followed.
            stripped = _SLASHES.sub("/", path).rstrip("/") or "/"
            parent, leaf = posixpath.split(stripped)
            try:
                if follows or glob or leaf in ("", ".", ".."):
                    forms.append(_normalize(self._resolve(stripped)))
                else:
                    forms.append(_normalize(posixpath.join(self._resolve(parent or "/"), leaf)))
            except (OSError, ValueError):
                return f"where {source!r} leads cannot be resolved"
        for normalized in reversed(forms):
            if normalized in self._protected or posixpath.dirname(normalized) in _SYSTEM_TREES:
                where = _describe(normalized, self._home, self._workspace)
                if glob:
                    return f"{source!r} matches everything in {where}"
                return f"{source!r} is {where}"
        return None


def _runs(command: SimpleCommand, names: frozenset[str]) -> bool:
    """``command`` runs one of the programs ``names`` (its name folded, as deny rules read it)."""
    return bool(command.words) and program_name(command.words[0]) in names


def _remote(destination: str) -> bool:
    """An rsync destination on another host (``host:path``, ``rsync://…``)."""
    if destination.startswith("rsync://"):
        return True
    colon, slash = destination.find(":"), destination.find("/")
    return colon > 0 and (slash < 0 or colon < slash)


def _exec_removes(words: Sequence[Word], *, path_set: bool = False) -> bool:
    """Whether the command of a ``find -exec`` (its words up to ``;`` or ``+``) may remove.

    ``path_set``: the line changes ``PATH``, so a data program named without a directory is
    whatever file is found (:func:`~._look_through.sets_path`).
    """
    if not words:
        return False
    head = words[0]
    if not head.literal:
        return True
    name = program_name(head.value)
    if name is None:
        return False  # no program is installed there
    probe = SimpleCommand((head.value,), argv=(head,))
    return name in _DESTROYERS or may_run_arguments(probe, path_set=path_set)


def _removing_action(expression: Sequence[Word], *, path_set: bool = False) -> int | None:
    """The index in ``expression`` of the first action that removes what find selects."""
    index = 0
    while index < len(expression):
        word = expression[index]
        if not word.literal:
            return index  # only known at run time: it may be `-delete`
        if word.value in _FIND_ONE_ARGUMENT and index + 1 < len(expression):
            following = expression[index + 1]
            # One word, whatever its value, is that primary's argument (`-name "$PAT"`);
            # an unquoted expansion may be several, `-delete` among them.
            index += 2 if following.literal or _one_word(following) else 1
            continue
        if word.value == "-delete":
            return index
        if word.value in _FIND_EXEC:
            end = index + 1
            while end < len(expression) and not (
                expression[end].literal and expression[end].value in (";", "+")
            ):
                end += 1
            if _exec_removes(expression[index + 1 : end], path_set=path_set):
                return index
            index = end
        index += 1
    return None


def _found_file(word: Word) -> bool:
    """Whether ``word`` is find's ``{}`` (read as the starting point followed by a found name)."""
    return any(part.kind == "dynamic" and part.text == "{}" for part in word.parts)


def _selected_by_name(expression: Sequence[Word], action: int | None) -> bool:
    """A plain conjunction with a selecting name test before ``action`` (the end when ``None``).

    Anything else — an alternative (``-o``), a negation, parentheses, the action before the
    test, a word known only at run time, a pattern that matches nearly every name — may
    remove everything under the starting point.
    """
    named = False
    index = 0
    stop = len(expression) if action is None else action
    while index < stop:
        word = expression[index]
        if not word.literal or word.value in _FIND_OPERATORS:
            return False
        value = word.value
        if value in _FIND_NAME_TESTS | _FIND_PATH_TESTS | _FIND_REGEX_TESTS:
            following = expression[index + 1] if index + 1 < len(expression) else None
            if following is None or not following.literal:
                return False
            named = named or _selects(value, following.value)
            index += 2
            continue
        if value in _FIND_ONE_ARGUMENT and index + 1 < len(expression):
            following = expression[index + 1]
            if not (following.literal or _one_word(following)):
                return False
            index += 2
            continue
        index += 1
    return named


def _one_word(word: Word) -> bool:
    """``word`` reaches the program as exactly one word (quoted expansions, no glob)."""
    return word.unsupported is None and all(
        part.quoted or part.kind in ("literal", "tilde") for part in word.parts
    )


def glob_selects(pattern: str) -> bool:
    """Whether the glob ``pattern`` selects some names rather than nearly all (S21).

    The one predicate for it: find's name tests and rm's glob targets are judged by it. A glob
    selects when it fixes a character other than ``.`` and ``/`` at its start or its end
    (``*.pyc``, ``build*``, ``*.py[co]``, ``__pycache__``; not ``.*``, ``*.*``, ``?*`` or
    ``[a-z]*``); a pattern without ``*`` matches names of one length only.
    """
    atoms = _glob_atoms(pattern)
    wild = [i for i, (kind, _) in enumerate(atoms) if kind in ("star", "one")]
    if not any(kind == "star" for kind, _ in atoms):
        return True
    fixed = [*atoms[: wild[0]], *atoms[wild[-1] + 1 :]]
    return any(kind == "literal" and text not in "./" for kind, text in fixed)


def _selects(test: str, pattern: str) -> bool:
    """Whether the name test ``test pattern`` selects a part of a tree rather than nearly all.

    A name glob selects as :func:`glob_selects` says; a path test also when it fixes a whole
    component (``*/node_modules/*``). A regular expression selects when it ends in a literal
    character and has no alternative.
    """
    if test in _FIND_REGEX_TESTS:
        body = pattern.removesuffix("$")
        return "|" not in body and bool(body) and (body[-1].isalnum() or body[-1] in "_~")
    if glob_selects(pattern):
        return True
    atoms = _glob_atoms(pattern)
    if test in _FIND_PATH_TESTS:
        component: list[tuple[str, str]] = []
        opened = False
        for kind, text in atoms:
            if kind == "literal" and text == "/":
                literal = bool(component) and all(k == "literal" for k, _ in component)
                if opened and literal and any(t != "." for _, t in component):
                    return True
                opened, component = True, []
            else:
                component.append((kind, text))
    return False


def _glob_atoms(pattern: str) -> list[tuple[str, str]]:
    """``pattern`` as atoms: ``literal`` characters, ``star``, ``one`` (``?``), bracket ``set``."""
    atoms: list[tuple[str, str]] = []
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if ch == "\\" and index + 1 < len(pattern):
            atoms.append(("literal", pattern[index + 1]))
            index += 2
        elif ch == "[" and pattern.find("]", index + 2) >= 0:
            close = pattern.find("]", index + 2)
            atoms.append(("set", pattern[index : close + 1]))
            index = close + 1
        else:
            atoms.append(("star" if ch == "*" else "one" if ch == "?" else "literal", ch))
            index += 1
    return atoms


def _feeds_removal(
    line: CommandLine, find: SimpleCommand, *, path_set: bool = False
) -> bool | None:
    """Whether ``find`` feeds ``xargs`` running a program that may remove what it prints.

    ``None`` when it does not; otherwise whether find's own name test still selects what is
    removed (only when find's output reaches ``xargs`` directly, with no filter between that
    may rewrite it).
    """
    if find not in line.commands:
        return None
    top = top_index(line, line.commands.index(find))
    result: bool | None = None
    for command in line.commands:
        if command.via != "xargs" or command.parent is None:
            continue
        if not _exec_removes(command.argv, path_set=path_set):
            continue
        feeders = pipeline_before(line, command.parent)
        if feeders is not None and top not in feeders:
            continue
        direct = feeders is not None and feeders[:1] == [top]
        expression_selects = direct and _selected_by_name(find_parts(find).expression, None)
        result = expression_selects if result is None else result and expression_selects
    return result


def _normalize(path: str) -> str:
    collapsed = _SLASHES.sub("/", path)
    normalized = posixpath.normpath(collapsed)
    return "/" if normalized in ("", ".") else normalized


def _ancestors(path: str) -> Sequence[str]:
    out = [path]
    while path != "/":
        path = posixpath.dirname(path)
        out.append(path)
    return out


def _describe(path: str, home: str | None, workspace: str) -> str:
    if path == "/":
        return "the root directory"
    if path == home:
        return "the home directory"
    if path == workspace:
        return "the workspace"
    if home is not None and home.startswith(path + "/"):
        return f"{path}, which holds the home directory"
    if workspace.startswith(path + "/"):
        return f"{path}, which holds the workspace"
    return f"the system directory {path}"
