"""Read-only command classification (S21): the host side of core's classifier port.

A command tool's call is decided as *inspect* — looking around never prompts — when the whole
line runs only built-in read-only programs, with options each program's manual says only read,
and every path the line will read — operand, option value, input redirection, glob match, ``cd``
target — resolves (symlinks followed) inside the workspace. The line is read the way the shell
will read it (:func:`robota.core.permissions.analyze_command`), and judged in that reading:

* **Only the understood subset.** Pipes, ``&&``, ``||``, ``;``, subshells and groups, ``!``,
  quoting, globs, ``~``, ``cd``, ``2>&1``-style duplications, ``>/dev/null``, input
  redirections, here-strings and here-documents (a quoted one always; an unquoted one when
  nothing in it expands). Anything else — an expansion or substitution, an assignment, ``&``, a
  control structure, a function, a construct the parser does not fully read — makes the line
  not read-only.
* **Programs by name only.** ``ls`` is the system's ``ls``; ``./ls`` or ``/tmp/ls`` is not.
* **Options from an allow-list** (:mod:`._readonly_programs`): an option that writes
  (``sort -o``), runs a program (``git --ext-diff``, ``rg --pre``), follows symlinks through a
  tree (``grep -R``, ``find -L``, ``ls -L``, ``diff -r``) or reads file names from a file
  (``wc --files0-from``) is simply not listed. Options glued to their values are split the way
  the program's parser splits them, so ``grep -f/etc/passwd`` is judged as reading
  ``/etc/passwd``.
* **Globs are expanded first**, against the real directory, with ``sh``'s rules (``.*`` and
  ``.?`` match ``..``), and the program's options are read from the expanded words — so a file
  named ``--output=x`` that a ``*`` expands to is read as the option it becomes.
* **``cd`` is followed as the shell runs it** (:mod:`._readonly_cwd`): logically from ``$PWD``
  unless ``-P``, with ``&&``, ``||``, ``;`` and pipelines deciding where each later command runs.
  Every directory a command may run in counts, and a path must be inside the workspace from
  each, as the kernel resolves it from there.
* **git** reads the repository it finds: that repository must be inside the workspace.
* **Values that are languages** (:mod:`._readonly_languages`): a jq filter that reads the
  environment or a module, a git format that runs gpg (``%G?``, ``%(signature)``), a ``date``
  string naming a time-zone file are refused — and jq altogether while ``~/.jq`` (which jq
  loads at every start) exists under the home the classifier was given.

A user's ask or deny rule is checked before this classification and still applies. The
classifier assumes the command runs non-interactively with the workspace as its working
directory and an ordinary environment (no ``CDPATH``, no ``GIT_DIR``, ``PATH`` naming the system
programs); SECURITY.md lists what it does not protect against.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence
from typing import Final

from robota.core.permissions import (
    CommandLine,
    Redirect,
    SimpleCommand,
    Word,
    analyze_command,
    glob_has_magic,
    glob_match,
    glob_unescape,
)
from robota.host.paths._paths import canonical_path, is_path_inside
from robota.host.paths._readonly_cwd import CdRefused, command_directories
from robota.host.paths._readonly_languages import (
    date_string_refusal,
    jq_start_file_refusal,
    value_refusal,
)
from robota.host.paths._readonly_programs import (
    FIND,
    GIT_GLOBAL,
    GIT_SUBCOMMANDS,
    PROGRAMS,
    Program,
)

__all__ = ["READ_ONLY_COMMANDS", "is_read_only_command", "read_only_reason"]

READ_ONLY_COMMANDS: Final = frozenset({*PROGRAMS, "git", "find", "cd"})
"""Programs that only read, given the option checks of :mod:`._readonly_programs`."""

_MAX_GLOB_MATCHES: Final = 10_000
_TEST_OPERATORS: Final = frozenset(
    {
        *("-b", "-c", "-d", "-e", "-f", "-g", "-G", "-h", "-k", "-L", "-N", "-O", "-p", "-r"),
        *("-s", "-S", "-t", "-u", "-w", "-x", "-z", "-n", "-a", "-o", "!", "(", ")", "="),
        *("!=", "==", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "<", ">"),
    }
)


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_only_reason(
    command: str, *, workspace: str | os.PathLike[str], home: str | None = None
) -> str | None:
    """Why ``command`` is not read-only inside ``workspace``; ``None`` when it is.

    Args:
        command: The command line.
        workspace: An absolute path to an existing directory; relative paths in the command are
            taken from it.
        home: The home directory ``~`` stands for, and where jq's start file ``~/.jq`` is
            looked for (default: this user's). Give the ``HOME`` the command will run with.

    Raises:
        ValueError: when ``workspace`` is not an absolute path to an existing directory.
    """
    root_text = os.fspath(workspace)
    if not os.path.isabs(root_text) or not os.path.isdir(root_text):
        raise ValueError(
            f"workspace must be an absolute path to an existing directory: {root_text!r}"
        )
    candidate: object = command  # model output can be anything
    if not isinstance(candidate, str):
        return "the command is not a string"
    line = analyze_command(command)
    if not line.parsed:
        return f"the command cannot be read: {line.error}"
    if line.opaque:
        return "it runs something the command text does not show"
    if line.unsupported:
        return f"it uses {line.unsupported[0]} (outside what the classifier reads)"
    if line.background:
        return "it starts a command in the background"
    if line.assignments:
        return f"it assigns a shell variable ({line.assignments[0]}), which changes what runs"
    if line.substitutions:
        return "it runs a command substitution"
    if not line.commands:
        return "it runs no command"
    judge = _Judge(canonical_path(root_text), os.path.expanduser("~") if home is None else home)
    try:
        judge.directories(line)
        judge.redirects(line)
        for index, simple in enumerate(line.commands):
            judge.at(index)
            judge.command(simple)
    except _Refused as refused:
        return refused.reason
    return None


def is_read_only_command(
    command: str, *, workspace: str | os.PathLike[str], home: str | None = None
) -> bool:
    """Whether ``command`` only reads, and only inside ``workspace`` (S21).

    See the module docstring for what is judged; :func:`read_only_reason` says why a command
    is not read-only. Bind it to a workspace and pass it as the permission context's
    classifier (:func:`robota.host.permission_context` does)::

        PermissionContext(
            workspace=root,
            read_only_command=lambda command: is_read_only_command(command, workspace=root),
        )

    Raises:
        ValueError: when ``workspace`` is not an absolute path to an existing directory.
    """
    return read_only_reason(command, workspace=workspace, home=home) is None


class _Judge:
    __slots__ = ("_cwds", "_home", "_root", "_where")

    def __init__(self, root: str, home: str | None) -> None:
        self._root = root
        self._home = home
        self._cwds: Sequence[str] = (root,)
        self._where: tuple[tuple[str, ...], ...] = ()

    # -- where the commands run

    def directories(self, line: CommandLine) -> None:
        """Where each command of the line may run (S21: ``cd sub && ls``; see ._readonly_cwd)."""
        try:
            self._where = command_directories(line, self._root, self._expand)
        except CdRefused as refused:
            raise _Refused(refused.reason) from None

    def at(self, index: int | None) -> None:
        """Judge what follows from where command ``index`` runs (``None``: anywhere at all)."""
        if index is not None:
            self._cwds = self._where[index]
        else:
            self._cwds = sorted({cwd for where in self._where for cwd in where} | {self._root})

    def redirects(self, line: CommandLine) -> None:
        """Judge each redirection from where it is opened."""
        judged: set[int] = set()  # by identity: `< x` on two commands opens two places
        if line.shape is not None:
            # A straight line's redirections are each its command's, opened where it runs.
            for index, simple in enumerate(line.commands):
                self.at(index)
                for redirect in simple.redirects:
                    self.redirect(redirect)
                    judged.add(id(redirect))
        self.at(None)
        for redirect in line.redirects:
            if id(redirect) not in judged:
                self.redirect(redirect)

    # -- paths

    def _inside(self, text: str, cwd: str, what: str) -> str:
        path = text if text.startswith("/") else posixpath.join(cwd, text)
        if not is_path_inside(self._root, path):
            raise _Refused(f"the {what} {text!r} is outside the workspace")
        return path

    def _read(self, texts: Sequence[str], what: str = "path") -> None:
        for text in texts:
            if text in ("", "-"):
                continue  # nothing, or standard input
            for cwd in self._cwds:
                self._inside(text, cwd, what)

    def _expand(self, word: Word, cwd: str) -> list[str]:
        """The words the shell turns ``word`` into, run in ``cwd``."""
        if word.literal:
            return [word.value]
        if word.dynamic:
            raise _Refused(f"the word {word.source!r} is only known at run time")
        pattern = word.pattern(home=self._home)
        if pattern is None:
            raise _Refused(f"the word {word.source!r} names another user's home directory")
        if not glob_has_magic(pattern):
            return [glob_unescape(pattern)]
        matches = _glob(pattern, cwd, lambda path: is_path_inside(self._root, path))
        if matches is None:
            raise _Refused(f"expanding {word.source!r} reads a directory outside the workspace")
        if len(matches) > _MAX_GLOB_MATCHES:
            raise _Refused(f"the glob {word.source!r} matches too many names to judge")
        # No match: the shell passes the word on as written (quotes removed).
        return sorted(matches) if matches else [glob_unescape(pattern)]

    # -- redirections

    def redirect(self, redirect: Redirect) -> None:
        kind = redirect.kind
        target = redirect.target
        if kind in ("duplicate", "close"):
            return
        if kind == "heredoc":
            if redirect.heredoc is not None and redirect.heredoc.expands:
                raise _Refused("an unquoted here-document expands what is in it")
            return
        if kind == "herestring":
            if target is None or not target.literal:
                raise _Refused("the here-string is only known at run time")
            return
        if kind == "write":
            if target is not None and target.literal and target.value == "/dev/null":
                return
            raise _Refused("it redirects output into a file")
        if kind == "readwrite" or target is None:
            raise _Refused("it opens a file for writing")
        for cwd in self._cwds:
            for text in self._expand(target, cwd):
                self._inside(text, cwd, "input file")

    # -- commands

    def command(self, simple: SimpleCommand) -> None:
        head = simple.argv[0]
        name = head.value
        if simple.via is not None:
            raise _Refused(f"{name!r} runs through {simple.via}")
        if simple.assignments:
            raise _Refused(
                f"the assignment {simple.assignments[0]!r} before {name!r} can change what runs"
            )
        if "/" in name:
            raise _Refused(f"{name!r} is named by a path, so it is not the system program")
        if name not in READ_ONLY_COMMANDS:
            raise _Refused(f"{name!r} is not a read-only program")
        for cwd in self._cwds:
            args: list[str] = []
            for word in simple.argv[1:]:
                args.extend(self._expand(word, cwd))
            self._program(name, args, cwd)

    def _program(self, name: str, args: list[str], cwd: str) -> None:
        if name == "cd":
            return  # judged by directories()
        if name == "git":
            self._git(args, cwd)
            return
        if name == "find":
            self._find(args)
            return
        if name in ("test", "["):
            if name == "[":
                if not args or args[-1] != "]":
                    raise _Refused("`[` without its closing `]`")
                args = args[:-1]
            self._read([a for a in args if a not in _TEST_OPERATORS], "path tested")
            return
        if name == "jq" and (refusal := jq_start_file_refusal(self._home)):
            raise _Refused(refusal)  # S21: ~/.jq is part of every jq program
        program = PROGRAMS[name]
        operands, _ = self._options(name, program, args, cwd)
        if name == "date" and any(not o.startswith("+") for o in operands):
            raise _Refused("`date` with an operand sets the clock")

    def _options(
        self, name: str, program: Program, args: list[str], cwd: str
    ) -> tuple[list[str], set[str]]:
        """Judge ``args`` by ``program``'s table; the operands and the options seen."""
        operands, paths, seen, values = _parse_options(name, program, args)
        if name == "diff" and any(
            os.path.isdir(o if o.startswith("/") else posixpath.join(cwd, o))
            for o in (*operands, *paths)
        ):
            # Comparing directories reads the files in them, following their symlinks; a
            # directory beside a file (an operand, `--from-file`, `--to-file`) reads
            # DIR/basename(FILE), a path no argument names (review finding, issue 24).
            raise _Refused("`diff` of a directory reads files in it, links followed")
        # S21: a value that is a small language (a jq filter, a git format) only reads when
        # every construct in it does.
        refusal = value_refusal(name, values, operands)
        if refusal is not None:
            raise _Refused(refusal)
        if program.max_operands is not None and len(operands) > program.max_operands:
            raise _Refused(f"{name!r} with {len(operands)} operand(s) does more than read")
        self._read(paths, f"file {name!r} reads")
        kind = program.operands
        if kind == "paths":
            self._read(operands, f"file {name!r} reads")
        elif kind == "pattern_then_paths":
            given = bool(seen & program.pattern_options)
            self._read(operands if given else operands[1:], f"file {name!r} reads")
        elif kind == "filter_then_paths":
            self._read(operands[1:], f"file {name!r} reads")
        return operands, seen

    def _git(self, args: list[str], cwd: str) -> None:
        self._repository(cwd)
        index = 0
        while index < len(args) and args[index].startswith("-"):
            if args[index] not in GIT_GLOBAL:
                raise _Refused(f"git option {args[index]!r} is not known to be read-only")
            index += 1
        if index >= len(args):
            raise _Refused("git without a subcommand")
        subcommand = args[index]
        program = GIT_SUBCOMMANDS.get(subcommand)
        if program is None:
            raise _Refused(f"`git {subcommand}` is not a read-only git command")
        operands, seen = self._options(f"git {subcommand}", program, args[index + 1 :], cwd)
        if subcommand in ("branch", "tag") and operands and not seen & {"-l", "--list"}:
            raise _Refused(f"`git {subcommand}` with a name creates one")

    def _repository(self, cwd: str) -> None:
        # git's discovery, level by level from the working directory up: `<dir>/.git` (a
        # directory, or a file naming one elsewhere), else `<dir>` itself when it looks like a
        # repository (a bare one, whose config — core.fsmonitor, core.pager … — git obeys).
        directory = cwd
        while True:
            marker = os.path.join(directory, ".git")
            if os.path.lexists(marker):
                if os.path.islink(marker) or not os.path.isdir(marker):
                    raise _Refused("git would read a repository that .git points to elsewhere")
                if not is_path_inside(self._root, marker):
                    raise _Refused("git would read a repository outside the workspace")
                if os.path.lexists(os.path.join(marker, "commondir")):
                    raise _Refused("git would read a repository its commondir points to")
                return
            if _looks_like_git_dir(directory):
                raise _Refused(f"git would read {directory!r} as a bare repository")
            parent = os.path.dirname(directory)
            if parent == directory:
                raise _Refused("git would look for a repository outside the workspace")
            directory = parent

    def _find(self, args: list[str]) -> None:
        index = 0
        while (
            index < len(args)
            and args[index].startswith("-")
            and args[index] not in (FIND["flags"] | FIND["text"] | FIND["path"])
        ):
            option = args[index]
            if option in FIND["global"]:
                index += 1
            elif option[:2] in FIND["global_values"]:
                index += 1 if len(option) > 2 else 2
            else:
                raise _Refused(f"find option {option!r} is not known to be read-only")
        starts: list[str] = []
        while index < len(args) and not (
            args[index].startswith("-") or args[index] in ("(", ")", "!", ",")
        ):
            starts.append(args[index])
            index += 1
        self._read(starts or ["."], "directory find searches")
        while index < len(args):
            token = args[index]
            if token in FIND["flags"]:
                index += 1
            elif token in FIND["text"]:
                index += 2
            elif token in FIND["path"]:
                self._read(args[index + 1 : index + 2], "file find compares with")
                index += 2
            elif token.startswith("-newer") and len(token) == 8:
                if token[-1] != "t":
                    self._read(args[index + 1 : index + 2], "file find compares with")
                elif refusal := date_string_refusal("".join(args[index + 1 : index + 2])):
                    raise _Refused(refusal)
                index += 2
            else:
                raise _Refused(f"find expression {token!r} is not known to be read-only")


def _parse_options(
    name: str, program: Program, args: list[str]
) -> tuple[list[str], list[str], set[str], list[tuple[str, str]]]:
    """Split ``args`` into operands, path values, the options seen and each (option, value).

    Options may follow operands (GNU argument permutation); ``--`` ends them.

    Raises:
        _Refused: for an option the program's table does not list.
    """
    operands: list[str] = []
    paths: list[str] = []
    seen: set[str] = set()
    given: list[tuple[str, str]] = []
    index = 0
    ended = not program.parses_options
    while index < len(args):
        arg = args[index]
        if ended or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
            index += 1
            continue
        if arg == "--":
            ended = True
            index += 1
            continue
        if arg.startswith("--"):
            option, equals, value = arg.partition("=")
            kind = program.values.get(option)
            if option in program.pairs and not equals and index + 2 < len(args):
                index += 3
            elif kind is not None:
                if not equals:
                    if index + 1 >= len(args):
                        raise _Refused(f"{name} option {option!r} lacks its value")
                    value = args[index + 1]
                    index += 1
                if kind == "path":
                    paths.append(value)
                given.append((option, value))
                index += 1
            elif option in program.optional or (option in program.flags and not equals):
                if equals:
                    given.append((option, value))
                index += 1
            else:
                raise _Refused(f"{name} option {option!r} is not known to be read-only")
            seen.add(option)
            continue
        if program.numeric and arg[1:].isdigit():
            index += 1
            continue
        letters = arg[1:]
        consumed = 1
        for position, letter in enumerate(letters):
            option = "-" + letter
            kind = program.values.get(option)
            seen.add(option)
            if kind is not None:
                value = letters[position + 1 :]
                if not value:
                    if index + 1 >= len(args):
                        raise _Refused(f"{name} option {option!r} lacks its value")
                    value = args[index + 1]
                    consumed = 2
                if kind == "path":
                    paths.append(value)
                given.append((option, value))
                break  # the rest of the cluster was the value
            if option in program.optional:
                if letters[position + 1 :]:
                    given.append((option, letters[position + 1 :]))
                break  # its value, if any, is the rest of the cluster (`-uno`, `-M50`)
            if option not in program.flags:
                raise _Refused(f"{name} option {option!r} is not known to be read-only")
        index += consumed
    return operands, paths, seen, given


def _glob(pattern: str, cwd: str, inside: Callable[[str], bool]) -> list[str] | None:
    """What ``sh`` expands ``pattern`` (the syntax of ``Word.pattern``) to, run in ``cwd``.

    A leading ``.`` in a component is matched only explicitly, and then ``.`` and ``..`` are
    candidates too (as in ``sh``; a ``..`` match is how ``.?`` and ``.*`` leave a directory).
    ``None`` when the expansion would read a directory ``inside`` refuses: the shell lists each
    directory a glob component is matched in, and looks up every component after the first
    glob, so those reads are judged like any other.
    """
    globbed = False
    absolute = pattern.startswith("/")
    components = pattern.split("/")
    bases = ["/"] if absolute else [""]
    if absolute:
        components = components[1:]
    for position, component in enumerate(components):
        last = position == len(components) - 1
        if component == "":
            bases = [b if b.endswith("/") else b + "/" for b in bases]
            continue
        if not glob_has_magic(component):
            literal = glob_unescape(component)
            if globbed and any(not inside(_full(b, cwd, absolute)) for b in bases):
                return None
            bases = [_join(b, literal) for b in bases]
            continue
        globbed = True
        explicit_dot = component.startswith(("\\.", "."))
        found: list[str] = []
        for base in bases:
            directory = _full(base, cwd, absolute)
            if not inside(directory):
                return None
            try:
                names = os.listdir(directory)
            except OSError:
                continue
            if explicit_dot:
                names = [*names, ".", ".."]
            for entry in names:
                if entry.startswith(".") and not explicit_dot:
                    continue
                if not glob_match(component, entry):
                    continue
                joined = _join(base, entry)
                full = joined if absolute else posixpath.join(cwd, joined)
                if last or os.path.isdir(full):
                    found.append(joined)
            if len(found) > _MAX_GLOB_MATCHES:
                return found
        bases = found
        if not bases:
            return []
    return bases


def _looks_like_git_dir(directory: str) -> bool:
    """Whether git would take ``directory`` for a repository (``HEAD``, ``objects``, ``refs``)."""
    return all(
        os.path.lexists(os.path.join(directory, name)) for name in ("HEAD", "objects", "refs")
    )


def _full(base: str, cwd: str, absolute: bool) -> str:
    if absolute:
        return base
    return posixpath.join(cwd, base) if base else cwd


def _join(base: str, name: str) -> str:
    if not base:
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"
