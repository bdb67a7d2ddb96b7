"""Catastrophic removals and writes: the calls that always reach a person (S21).

A recursive removal is *catastrophic* when a target, after the expansions the shell will
perform — quotes, ``~``, ``$HOME`` / ``${HOME}``, globs, trailing slashes, ``.`` and ``..`` — is
``/`` or a system directory (``/usr``, ``/etc``, ``/home`` …), the home directory or one of its
ancestors, or the workspace or one of its ancestors; a glob is judged by the directory its
matches lie in (``/*``, ``~/*`` and ``./*`` are catastrophic, ``build/*`` is not). A target
whose value this module cannot know — any other expansion, a substitution, ``~user``, arguments
``xargs`` or ``find -exec`` add at run time, a relative path after a ``cd`` — makes the removal
catastrophic too: when the target cannot be known, the removal asks. The same holds for ``find
… -delete`` over such a starting point without a name test, for ``rm --no-preserve-root``, for
``mkfs`` and for ``dd`` onto a device. A line the shell grammar cannot read may be any of these,
so it asks as well.

This is an in-process reading of the command text, not a sandbox: a program that deletes files
itself (a script, an interpreter's ``-c``) is not seen here.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Final

from robota.core.permissions._globs import PathResolver
from robota.core.permissions._options import may_be_option
from robota.core.permissions._programs import DATA_PROGRAMS
from robota.core.permissions._shell import CommandLine, SimpleCommand, analyze_command
from robota.core.permissions._shell_words import (
    Word,
    glob_fixed_prefix,
    glob_has_magic,
    glob_unescape,
    literal_word,
)

__all__ = ["catastrophic_reason"]

_SLASHES: Final = re.compile(r"/{2,}")
_FIND_PRIMARY_START: Final = ("-", "(", "!", ")", ",")
_FIND_NAME_TESTS: Final = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex"}
)
_CWD_CHANGERS: Final = frozenset({"cd", "pushd", "popd"})
_REMOVERS: Final = frozenset({"rm", "find", "dd"})
_MAX_LOOK_THROUGH: Final = 2
_SCRIPT_CHARS: Final = re.compile(r"[\s;&|()<>`]")
_PROCESS_VIEWS: Final = ("/proc/", "/dev/fd/")
# Trees whose every direct child is the machine's own (`/lib/x86_64-linux-gnu`, `/boot/efi`,
# `/usr/lib`, `/etc/ssl`): removing one breaks it.
_SYSTEM_TREES: Final = frozenset(
    {"/bin", "/boot", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/sbin", "/usr", "/var",
     "/System", "/Library", "/private"}
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
            shell follows a symlink there) and for each target's parent directory.
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
    judge = _Judge(line, workspace=workspace, home=home, resolve=resolve)
    for simple in line.commands:
        reason = judge.command(simple)
        if reason is not None:
            return reason
    return None


class _Judge:
    __slots__ = ("_changes_directory", "_home", "_protected", "_resolve", "_workspace")

    def __init__(
        self,
        line: CommandLine,
        *,
        workspace: str,
        home: str | None,
        resolve: PathResolver | None,
    ) -> None:
        self._resolve = resolve
        self._workspace = self._canonical(workspace) if workspace.startswith("/") else "/"
        self._home = self._canonical(home) if home and home.startswith("/") else None
        self._changes_directory = any(c.name in _CWD_CHANGERS for c in line.commands)
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

    def command(self, simple: SimpleCommand, depth: int = 0) -> str | None:
        name = simple.name
        words = " ".join(simple.words)
        if name not in _REMOVERS and name not in DATA_PROGRAMS and depth < _MAX_LOOK_THROUGH:
            reason = self._looked_through(simple, depth)
            if reason is not None:
                return reason
        if name == "rm":
            return self._rm(simple, words)
        if name == "find":
            return self._find(simple, words)
        if name.startswith("mkfs"):
            return f"catastrophic write: {words!r} makes a file system"
        if name == "dd" and any(
            not w.literal or w.value.startswith("of=/dev/") for w in simple.argv[1:]
        ):
            return f"catastrophic write: {words!r} writes onto a device"
        return None

    def _looked_through(self, simple: SimpleCommand, depth: int) -> str | None:
        """S21: a program not known to leave its arguments alone may run one of them.

        ``mywrapper rm -rf ~`` and ``tool --run='rm -rf ~'`` are judged as the removal they may
        run (issue 24: runs unless known not to).
        """
        argv = simple.argv
        for index in range(1, len(argv)):
            word = argv[index]
            if not word.literal:
                continue
            heads = [word.value]
            if "=" in word.value:
                heads.append(word.value.split("=", 1)[1])
            for raw in heads:
                head = raw.removeprefix("!")
                if posixpath.basename(head) in _REMOVERS or head.startswith("mkfs"):
                    inner = SimpleCommand(
                        (head, *(w.value for w in argv[index + 1 :])),
                        simple.opaque_arguments,
                        (literal_word(head), *argv[index + 1 :]),
                        via=simple.name,
                        moved=simple.moved,
                    )
                    reason = self.command(inner, depth + 1)
                    if reason is not None:
                        return reason
                if _SCRIPT_CHARS.search(head) and any(
                    r in head for r in ("rm", "find", "mkfs", "dd")
                ):
                    line = analyze_command(head)
                    if not line.parsed or line.hidden:
                        return (
                            f"catastrophic removal cannot be ruled out: {simple.name!r} may run "
                            f"{head!r}, which cannot be read"
                        )
                    for inner in line.commands:
                        reason = self.command(inner, depth + 1)
                        if reason is not None:
                            return reason
        return None

    def _rm(self, simple: SimpleCommand, words: str) -> str | None:
        recursive = no_preserve_root = False
        targets: list[Word] = []
        ended = False
        for word in simple.argv[1:]:
            if word.unsupported == "brace expansion":
                # POSIX sh's reading: the braces are characters. (bash's reading is listed as
                # a command of its own and judged there.)
                word = Word(word.source, word.parts)  # noqa: PLW2901
            value = word.value
            if not ended and word.literal and value == "--":
                ended = True
            elif not ended and may_be_option(word) and not word.pattern():
                # Only known at run time: it may be options (`$FLAGS`) or targets, or both. (A
                # word that starts with `~` is a path whatever the home is: a target.)
                recursive = True
                targets.append(word)
            elif not ended and value.startswith("-") and value != "-":
                if value.startswith("--"):
                    option = value.split("=", 1)[0]
                    # GNU getopt accepts any unambiguous prefix of a long option.
                    recursive |= len(option) >= 3 and "--recursive".startswith(option)
                    no_preserve_root |= len(option) >= 3 and "--no-preserve-root".startswith(option)
                else:
                    recursive |= "r" in value or "R" in value
            else:
                targets.append(word)
        if no_preserve_root:
            return f"catastrophic removal: {words!r} disables rm's protection of '/'"
        if not recursive:
            return None
        if simple.opaque_arguments and simple.via in ("xargs", "find -exec"):
            return f"catastrophic removal: {words!r} removes targets only known at run time"
        for target in targets:
            reason = self._target(target, simple)
            if reason is not None:
                return f"catastrophic removal: {words!r} ({reason})"
        return None

    def _find(self, simple: SimpleCommand, words: str) -> str | None:
        argv = simple.argv[1:]
        if not any(w.value == "-delete" or not w.literal for w in argv):
            return None
        starts: list[Word] = []
        for word in argv:
            if word.literal and word.value.startswith(_FIND_PRIMARY_START):
                break
            starts.append(word)
        if _selected_by_name(argv[len(starts) :]):
            return None  # a name test selects what is deleted (`find . -name '*.pyc' -delete`)
        reasons = [self._target(start, simple) for start in starts] or [
            self._target_path(".", False, moved=simple.moved)
        ]
        for reason in reasons:
            if reason is not None:
                return f"catastrophic removal: {words!r} ({reason})"
        return None

    def _target(self, word: Word, simple: SimpleCommand) -> str | None:
        pattern = word.pattern(
            variables={"HOME": self._home} if self._home is not None else {}, home=self._home
        )
        if pattern is None:
            return f"the target {word.source!r} is only known at run time"
        glob = glob_has_magic(pattern)
        path = glob_fixed_prefix(pattern) if glob else glob_unescape(pattern)
        return self._target_path(path, glob, source=word.source, moved=simple.moved)

    def _target_path(
        self, path: str, glob: bool, *, source: str = ".", moved: bool = False
    ) -> str | None:
        if path.startswith(_PROCESS_VIEWS):
            # `/proc/self/cwd` means the shell's directory there, not this process's here.
            return f"{source!r} names a process's own view of the file system"
        if not path.startswith("/"):
            if self._changes_directory or moved:
                return f"{source!r} is relative to a directory the line changes to"
            path = posixpath.join(self._workspace, path) if path else self._workspace
        follows = path.endswith(("/", "/."))
        normalized = _normalize(path)
        if self._resolve is not None:
            # S05: never lexical first — `link/../x` climbs out of the link's *target*, as the
            # system call will. What rm unlinks is the last name of the path as written, in the
            # directory its parent resolves to; a trailing `/`, `.` or `..` is followed.
            stripped = _SLASHES.sub("/", path).rstrip("/") or "/"
            parent, leaf = posixpath.split(stripped)
            try:
                if follows or glob or leaf in ("", ".", ".."):
                    normalized = _normalize(self._resolve(stripped))
                else:
                    normalized = _normalize(posixpath.join(self._resolve(parent or "/"), leaf))
            except (OSError, ValueError):
                return f"where {source!r} leads cannot be resolved"
        if normalized in self._protected or posixpath.dirname(normalized) in _SYSTEM_TREES:
            where = _describe(normalized, self._home, self._workspace)
            return f"{source!r} matches everything in {where}" if glob else f"{source!r} is {where}"
        return None


def _selected_by_name(expression: Sequence[Word]) -> bool:
    """A plain conjunction with a real name test before ``-delete``.

    Anything else — an alternative (``-o``), a negation, parentheses, ``-delete`` before the
    test, a word known only at run time — may delete everything under the starting point.
    """
    named = False
    index = 0
    while index < len(expression):
        word = expression[index]
        if not word.literal or word.value in _FIND_OPERATORS:
            return False
        value = word.value
        if value == "-delete":
            return named
        if value in _FIND_NAME_TESTS:
            following = expression[index + 1] if index + 1 < len(expression) else None
            if following is None or not following.literal:
                return False
            named = named or following.value not in ("*", "**")
            index += 2
            continue
        index += 1
    return named


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
