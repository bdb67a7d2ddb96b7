"""What a simple command runs besides itself: wrappers, options, nested scripts (S12, S21).

:class:`SimpleCommandReader` is the part of the walker (:mod:`._shell`) that lists one simple
command and then follows what it runs: a wrapper's command (``env``, ``sudo``, ``timeout`` …,
from :mod:`._shell_wrappers`), ``xargs``, ``find -exec``, GNU ``parallel``, the script of
``eval`` and ``bash -c``, a script a shell (or ``at``, or ``ssh`` without a remote command) reads
on its standard input, and the commands a program runs through its options or environment
(:mod:`._executing`, S21). Builtins and assignments that run text as code make the line opaque
or unsupported here.

One reading for each thing, wherever it is written (S12, S21):

* **A variable** is read the same way in front of a command, alone (``x=1;``), as an argument of
  ``export``/``declare``/``typeset``/``local``/``readonly``, handed on by ``env`` or ``sudo``, as
  a loop variable, by ``read`` or by ``${x:=…}``.
* **A command ``xargs`` or ``find -exec`` runs** is read like any command — wrappers, shells,
  ``eval``, executing options — with the words only known at run time in their places:
  ``find``'s ``{}`` and ``xargs -I``'s replacement are parts known only at run time, and what
  ``xargs`` appends is one more such word at the end. When such a word stands where a command,
  a shell's script or ``eval``'s text is read, the command is computed at run time: the line is
  opaque and hides what it runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from robota.core.permissions._executing import commands_in_options, commands_in_variable
from robota.core.permissions._executing_found import Found
from robota.core.permissions._shell_model import Redirect, SimpleCommand
from robota.core.permissions._shell_syntax import Unparseable, script_text
from robota.core.permissions._shell_walk_state import Assignment, StdinReader, WalkerState
from robota.core.permissions._shell_words import Word, WordPart, literal_word
from robota.core.permissions._shell_wrappers import WRAPPERS, XARGS, scan_wrapper

__all__ = ["SimpleCommandReader", "assignment_from_word"]

# Builtins that run text as code (or make later words run as code): their effect cannot be read
# from the line. `let` evaluates arithmetic, whose variables' values are evaluated in turn.
_CODE_BUILTINS: Final = frozenset(
    {"trap", "alias", "hash", "mapfile", "readarray", "enable", "let", "bind", "complete",
     "compgen", "fc", "coproc", "shopt"}
)  # fmt: skip
_DECLARATIONS: Final = frozenset({"declare", "typeset", "local", "export", "readonly"})
# Variables whose value the shell itself expands or runs later (prompts are expanded, with
# their substitutions, by `set -x` and interactive shells; BASH_ENV and ENV are sourced).
_CODE_VARIABLES: Final = re.compile(
    r"PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_FUNC_\w*|BASH_XTRACEFD"
)
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_EVAL_LIKE: Final = frozenset({"eval", "source", "."})
_FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_IN_DIRECTORY: Final = frozenset({"-execdir", "-okdir"})
# at(1): without -f, the job is the script read on standard input; these options run none.
_AT: Final = frozenset({"at", "batch"})
_AT_NO_JOB: Final = frozenset("lrdcV")
_AT_VALUED: Final = frozenset("qtfM")
# crontab(1): these options read, edit or remove the table; anything else installs one (from a
# file, or standard input) whose commands cron runs later.
_CRONTAB_NO_TABLE: Final = frozenset({"-l", "-r", "-e", "-i", "-V", "-h", "--help"})
_ASSIGNED_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?\+?", re.S)
_DEFAULT_ASSIGNMENT: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")
_READ_VALUED: Final = frozenset("adinNptu")  # `read -a NAME` names an array
# What `xargs` appends to its command: words only known at run time.
_APPENDED: Final = Word("{}", (WordPart("dynamic", "{}"),))


@dataclass(frozen=True, slots=True)
class _Runtime:
    """Words only known at run time reach a command this way (``xargs``, ``find -exec``)."""

    via: str
    appended: bool  # they are appended after the command's own words


def assignment_from_word(word: Word) -> Assignment | None:
    """The assignment a word given to ``env``, ``sudo`` or ``export`` stands for, if any."""
    text: list[str] = []
    for index, part in enumerate(word.parts):
        if part.kind != "literal":
            return None
        name, equals, rest = part.text.partition("=")
        text.append(name)
        if equals:
            full = "".join(text)
            if not _ASSIGNED_NAME.fullmatch(full):
                return None
            tail = ((WordPart("literal", rest, part.quoted),) if rest else ()) + tuple(
                word.parts[index + 1 :]
            )
            value = Word(word.value.partition("=")[2], tail, word.unsupported, word.substitution)
            return Assignment(word.value, full, value)
    return None


class SimpleCommandReader(WalkerState):
    """The walker's reading of simple commands and the commands they run (S12, S21)."""

    # -- variables

    def variable(self, assignment: Assignment, parent: int | None) -> None:
        """S21: one reading of a variable the line sets, wherever it sets it."""
        name = assignment.name.rstrip("+")
        base = name.split("[", 1)[0]
        if "[" in name:
            self.unsupported.append("an array subscript")
        if _CODE_VARIABLES.fullmatch(base):
            self.unsupported.append(f"an assignment to {base!r}, which the shell runs")
        self._found(commands_in_variable(base, assignment.value), f"${base}", parent)

    def _assigned_by_words(self, name: str, argv: Sequence[Word], index: int) -> None:
        """Variables a command's own words set.

        A declaration's assignments, ``read``'s names, ``${NAME:=value}`` anywhere in them.
        """
        for word in argv:
            for part in word.parts:
                match = _DEFAULT_ASSIGNMENT.match(part.text) if part.kind == "dynamic" else None
                if match is not None:
                    self.variable(Assignment(part.text, match.group(1), None), index)
        if name in _DECLARATIONS:
            for word in argv[1:]:
                assignment = assignment_from_word(word)
                if assignment is not None:
                    self.variable(assignment, index)
        elif name == "read":
            for target in _read_names(argv[1:]):
                self.variable(Assignment(target, target, None), index)

    # -- the command

    def _simple(
        self,
        argv: list[Word],
        assignments: Sequence[Assignment],
        redirects: tuple[Redirect, ...],
        via: str | None,
        parent: int | None = None,
        *,
        runtime: _Runtime | None = None,
    ) -> None:
        parent = self.parent if parent is None else parent
        if not argv:
            if runtime is not None and runtime.appended:
                self._computed()  # the command itself is the input xargs reads
            for assignment in assignments:
                self.variable(assignment, parent)
            self.assignments.extend(a.text for a in assignments)
            return
        head = argv[0]
        if head.dynamic or head.has_glob or head.has_tilde:
            for assignment in assignments:
                self.variable(assignment, parent)
            self.opaque = True  # the command itself is computed at run time
            if head.unsupported != "brace expansion":  # bash's reading is listed apart
                self.computed_name = True
            return
        appended = runtime is not None and runtime.appended
        index = len(self.commands)
        command = SimpleCommand(
            tuple(w.value for w in argv),
            appended or any(w.dynamic or w.has_tilde for w in argv[1:]),
            tuple(argv),
            tuple(a.text for a in assignments),
            runtime.via if runtime is not None else via,
            redirects,
            parent,
            self.moved,
        )
        self.commands.append(command)
        self.stdin_receivers.append(index)
        name = command.name
        # What the program will get: its words, and what xargs appends after them.
        full = [*argv, _APPENDED] if appended else argv
        for assignment in assignments:
            self.variable(assignment, index)
        self._assigned_by_words(name, argv, index)
        if name == "eval" and len(full) > 1:
            # eval joins its words with spaces and runs the result as a script.
            self._forwards_stdin(index)
            script = script_text(full[1:])
            if script is None:
                self._unreadable(runtime)
            else:
                self._nested(script, "eval", index, computed=not all(w.literal for w in full[1:]))
            return
        if name in _EVAL_LIKE:
            self.opaque = True
            return
        if name in _CODE_BUILTINS:
            self.opaque = True
            self.unsupported.append(f"the builtin {name!r}, which runs text as code")
            return
        self._option_hazards(name, full)
        self._found(commands_in_options(name, full), f"{name} option", index)
        if name in _SHELLS:
            self._shell(full, index, runtime)
        elif name in WRAPPERS:
            self._wrapper(argv, assignments, index, runtime)
        elif name in _AT:
            self._at(argv, index)
        elif name == "crontab":
            if not any(w.literal and w.value in _CRONTAB_NO_TABLE for w in argv[1:]):
                self.opaque = True  # S21: installs commands cron runs later (a file, or stdin)
        elif name == "xargs":
            self._xargs(argv, index)
        elif name == "find":
            self._find_exec(argv, index)
        elif name == "parallel":
            with self._apart_from_stdin():
                self._parallel(full, index)

    def _computed(self) -> None:
        """S21: words only known at run time stand where a command is read.

        ``xargs env``, ``xargs -I{} sh -c {}``: the command itself is computed at run time.
        """
        self.opaque = True
        self.computed_name = True

    def _unreadable(self, runtime: _Runtime | None) -> None:
        """A script computed at run time.

        From ``xargs``'s or ``find``'s input it is a command computed at run time; otherwise
        (``bash -c "$x"``) the line is opaque.
        """
        if runtime is not None:
            self._computed()
        else:
            self.opaque = True

    # -- what runs the command's standard input, and who gets it

    def _forwards_stdin(self, index: int) -> None:
        """The command passes its standard input on to what it runs, which is listed."""
        with contextlib.suppress(ValueError):
            self.stdin_receivers.remove(index)

    def _reads_script(self, index: int, via: str, *, moved: bool = False) -> None:
        """The command runs what it reads on its standard input as a script."""
        self._forwards_stdin(index)
        self.stdin_readers.append(StdinReader(index, via, moved or self.moved))

    @contextlib.contextmanager
    def _apart_from_stdin(self) -> Iterator[None]:
        """Commands read inside do not get the standard input of the command being read.

        ``xargs`` reads it itself; a value runs when its program chooses.
        """
        start = len(self.commands)
        try:
            yield
        finally:
            if any(r.index >= start for r in self.stdin_readers):
                self.opaque = True  # they read a standard input this line does not show
            self.stdin_readers = [r for r in self.stdin_readers if r.index < start]
            self.stdin_receivers = [i for i in self.stdin_receivers if i < start]

    def settle_stdin(self, low: int, high: int, redirects: Sequence[Redirect]) -> None:
        """Give commands ``low`` to ``high`` the standard input ``redirects`` give them.

        They are one command and what it runs. When ``redirects`` give descriptor 0 nothing,
        the input stays theirs to get from an enclosing command (a group's here-document,
        ``bash -c`` given one).
        """
        fed, text = _stdin_of(redirects)
        if not fed:
            return
        receivers = [i for i in self.stdin_receivers if low <= i < high]
        readers = [r for r in self.stdin_readers if low <= r.index < high]
        self.stdin_receivers = [i for i in self.stdin_receivers if not low <= i < high]
        self.stdin_readers = [r for r in self.stdin_readers if not low <= r.index < high]
        if text is not None:
            for index in receivers:
                self.commands[index] = dataclasses.replace(self.commands[index], stdin=text)
        for reader in readers:
            if text is None or text.unsupported is not None:
                self.opaque = True  # a file, or a text this analysis cannot read exactly
                continue
            script = text.value if text.literal else script_text([text])
            if script is None:
                self.opaque = True  # a script computed at run time
                continue
            outer, self.moved = self.moved, reader.moved
            try:
                self._nested(script, reader.via, reader.index, computed=not text.literal)
            finally:
                self.moved = outer

    # -- what a command runs

    def _found(self, found: Found, via: str, parent: int | None) -> None:
        """Read what an option, a configuration value or a variable runs."""
        if found.opaque:
            self.opaque = True
        if not (found.scripts or found.argvs or found.moved_argvs):
            return
        outer_follow, self.arguments_follow = self.arguments_follow, True
        try:
            with self._apart_from_stdin():
                for script in found.scripts:
                    self._nested(script, via, parent, computed=False)
                for words in found.argvs:
                    self._simple(list(words), (), (), via, parent)
                outer_moved, self.moved = self.moved, True
                try:
                    for words in found.moved_argvs:
                        self._simple(list(words), (), (), via, parent)
                finally:
                    self.moved = outer_moved
        finally:
            self.arguments_follow = outer_follow

    def _wrapper(
        self,
        argv: list[Word],
        assignments: Sequence[Assignment],
        index: int,
        runtime: _Runtime | None,
    ) -> None:
        name = argv[0].value.rsplit("/", 1)[-1]
        wrapper = WRAPPERS[name]
        scan = scan_wrapper(name, wrapper, [w.value for w in argv[1:]])
        if scan.unknown:
            self.opaque = True
        handed = [assignment_from_word(argv[1 + p]) for p in scan.assignment_positions]
        env = [a for a in handed if a is not None]
        if scan.scripts:
            self._forwards_stdin(index)
        for script in scan.scripts:
            self._nested(script, f"{name} -c", index, computed=False)
        inner = argv[1 + scan.start :] if scan.start >= 0 else []
        appended = runtime is not None and runtime.appended
        if wrapper.script_operands and (inner or appended):
            # The wrapper hands its words to `sh -c` as one line (`sg group 'git push'`).
            self._forwards_stdin(index)
            for assignment in env:
                self.variable(assignment, index)
            words = [*inner, _APPENDED] if appended else inner
            line = script_text(words)
            if line is None:
                self._unreadable(runtime)
            else:
                self._nested(line, name, index, computed=not all(w.literal for w in words))
            return
        if inner:
            self._forwards_stdin(index)
            outer, self.moved = self.moved, self.moved or scan.moved
            try:
                self._simple(list(inner), (*assignments, *env), (), name, index, runtime=runtime)
            finally:
                self.moved = outer
            return
        for assignment in env:
            self.variable(assignment, index)
        if appended:
            self._computed()  # `xargs env`: the input is the command
        elif self.arguments_follow:
            return  # a value run with arguments (`GIT_SSH_COMMAND='ssh -i key'`): one follows
        elif wrapper.shell_without_command and not scan.unknown and not scan.scripts:
            self._reads_script(index, f"{name} stdin", moved=scan.moved)

    def _shell(self, argv: list[Word], index: int, runtime: _Runtime | None) -> None:
        # bash and dash: options come first; with `-c`, the first operand is the script and
        # the rest are its $0, $1 …; with `-s`, or without an operand, the script is read from
        # the standard input; otherwise the first operand is a script file.
        name = argv[0].value.rsplit("/", 1)[-1]
        values = [w.value if w.literal else "" for w in argv]
        dash_c = dash_s = False
        position = 1
        while position < len(values):
            word = values[position]
            if not argv[position].literal:
                break  # an operand (or options) known only at run time
            if word in ("--", "-"):
                position += 1
                break
            if word[:1] not in ("-", "+") or word in ("-", "+"):
                break
            if word in ("--rcfile", "--init-file"):
                self.opaque = True  # a file it runs first
            if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                position += 2  # the option's value
                continue
            if not word.startswith("--"):
                dash_c = dash_c or "c" in word[1:]
                dash_s = dash_s or "s" in word[1:]
            position += 1
        if dash_c:
            self._forwards_stdin(index)
            if position >= len(argv):
                self.opaque = True  # no script
                return
            script = script_text(argv[position : position + 1])
            if script is None:
                self._unreadable(runtime)
                return
            self._nested(script, "bash -c", index, computed=not argv[position].literal)
            return
        if dash_s or position >= len(argv):
            self._reads_script(index, f"{name} stdin")
            return
        self.opaque = True  # a script file

    def _at(self, argv: list[Word], index: int) -> None:
        letters = ""
        for word in argv[1:]:
            if not word.literal:
                self.opaque = True
                return
            if word.value.startswith("-"):
                letters += word.value[1:]
        if _AT_NO_JOB & set(letters):
            return  # lists, removes or shows jobs
        if "f" in letters:
            self.opaque = True  # the job is a script file
            return
        self._reads_script(index, f"{argv[0].value} stdin")

    def _xargs(self, argv: list[Word], index: int) -> None:
        scan = scan_wrapper("xargs", XARGS, [w.value for w in argv[1:]])
        if scan.unknown:
            self.opaque = True
        replace: str | None = None
        for option, value in scan.options:
            if option == "-I":
                replace = value
            elif option in ("-i", "--replace"):
                replace = value or "{}"
        inner = list(argv[1 + scan.start :]) if scan.start >= 0 else [literal_word("echo")]
        if replace:
            inner = [_replaced(word, replace, "") for word in inner]
        with self._apart_from_stdin():
            self._simple(inner, (), (), "xargs", index, runtime=_Runtime("xargs", not replace))

    def _parallel(self, argv: list[Word], index: int) -> None:
        # GNU parallel: options, then a command template up to `:::`/`::::`; without a template
        # each input after `:::` is itself a command line. Either runs through a shell.
        values = [w.value for w in argv]
        separators = {":::", "::::", ":::+", "::::+"}
        end = next((i for i, v in enumerate(values) if v in separators), len(values))
        template = [w for w in argv[1:end] if not (w.literal and w.value.startswith("-"))]
        if any(w.literal and w.value.startswith("-") for w in argv[1:end]):
            self.opaque = True  # its options may take the template's first words as values
        lines = (
            [template] if template else [[w] for w in argv[end + 1 :] if w.value not in separators]
        )
        for words in lines:
            script = script_text(words)
            if script is None:
                self.opaque = True
            else:
                self._nested(script, "parallel", index, computed=False)
        if template:
            self.opaque = True  # the inputs are appended to the template at run time

    def _option_hazards(self, name: str, argv: list[Word]) -> None:
        """Options of ordinary builtins that evaluate a word as code (S12)."""
        values = [w.value for w in argv[1:]]
        flags = {v for v in values if v.startswith("-")}
        if name in _DECLARATIONS and (
            any("[" in v.split("=", 1)[0] for v in values)
            or any("n" in f[1:] for f in flags if f[1:2] != "-")
        ):
            self.unsupported.append("an array subscript or name reference, evaluated as code")
        elif name in ("read", "wait") and any("[" in v for v in values):
            # `read 'a[…]'`, `wait -p 'a[…]'`: the name's subscript is evaluated.
            self.unsupported.append("an array subscript, evaluated as code")
        elif name == "printf" and "-v" in flags:
            self.unsupported.append("'printf -v', which assigns (and evaluates a subscript)")
        elif name in ("test", "[") and "-v" in values:
            self.unsupported.append("'test -v', which evaluates a subscript")

    def _nested(self, script: str, via: str, parent: int | None, *, computed: bool) -> None:
        """Read the script a shell's ``-c`` or ``eval`` runs, as commands of this line."""
        if computed:
            # Parameters stand in the script as themselves (`${HOME}`), so deny rules and the
            # removal check see where they are; their values may still add commands, so the
            # line stays opaque.
            self.opaque = True
        outer, self.parent = self.parent, parent
        try:
            self.script(script, via=via)
        except Unparseable:
            self.opaque = True
        finally:
            self.parent = outer

    def _find_exec(self, argv: list[Word], parent: int) -> None:
        """Each command of ``find … -exec cmd … {} ;`` (or ``+``).

        ``{}`` is a name known only at run time: a path under a starting point for ``-exec``
        (so it begins as the starting points do), a bare name for ``-execdir`` (BSD), whose
        command runs in the file's own directory.
        """
        values = [w.value if w.literal else "" for w in argv]
        prefix = _starting_prefix(argv)
        index = 0
        while index < len(values):
            directive = values[index]
            if directive not in _FIND_EXEC:
                index += 1
                continue
            end = index + 1
            while end < len(values) and not (
                values[end] == ";" or (values[end] == "+" and values[end - 1] == "{}")
            ):
                end += 1
            in_directory = directive in _FIND_IN_DIRECTORY
            inner = [
                _replaced(w, "{}", "" if in_directory else prefix) for w in argv[index + 1 : end]
            ]
            if inner:
                outer, self.moved = self.moved, self.moved or in_directory
                try:
                    with self._apart_from_stdin():
                        self._simple(
                            inner,
                            (),
                            (),
                            "find -exec",
                            parent,
                            runtime=_Runtime("find -exec", False),
                        )
                finally:
                    self.moved = outer
            index = end + 1


def _stdin_of(redirects: Sequence[Redirect]) -> tuple[bool, Word | None]:
    """Whether ``redirects`` give descriptor 0 something, and its text when that is known."""
    fed = False
    text: Word | None = None
    for redirect in redirects:
        operator = redirect.operator
        if not (redirect.fd == 0 or (redirect.fd is None and operator.startswith("<"))):
            continue
        fed = True
        text = None
        if redirect.heredoc is not None:
            text = redirect.heredoc.content
        elif operator == "<<<" and redirect.target is not None:
            text = _here_string(redirect.target)
    return fed, text


def _here_string(word: Word) -> Word:
    """A here-string's text: the word, not split or globbed, and a newline."""
    parts = [WordPart("literal", p.text, True) if p.kind == "glob" else p for p in word.parts]
    parts.append(WordPart("literal", "\n", True))
    merged: list[WordPart] = []
    for part in parts:
        if merged and part.kind == "literal" and merged[-1].kind == "literal":
            merged[-1] = WordPart("literal", merged[-1].text + part.text, True)
        else:
            merged.append(part)
    return Word(word.source, tuple(merged), word.unsupported, word.substitution)


def _read_names(words: Sequence[Word]) -> list[str]:
    """The variables ``read`` assigns (its operands, and ``-a``'s array)."""
    names: list[str] = []
    expect_value = expect_array = False
    for word in words:
        text = word.value
        if expect_value:
            if expect_array:
                names.append(text)
            expect_value = expect_array = False
            continue
        if word.literal and text.startswith("-") and text != "-":
            letters = text[1:]
            for position, letter in enumerate(letters):
                if letter in _READ_VALUED:
                    if position == len(letters) - 1:
                        expect_value, expect_array = True, letter == "a"
                    elif letter == "a":
                        names.append(letters[position + 1 :])
                    break
            continue
        names.append(text)
    return names


def _starting_prefix(argv: Sequence[Word]) -> str:
    """What every path ``find`` visits begins with: the common start of its starting points."""
    words = list(argv[1:])
    while words and words[0].literal and words[0].value in ("-H", "-L", "-P", "-D"):
        words = words[2:] if words[0].value == "-D" else words[1:]  # -D takes a value
    while words and words[0].literal and words[0].value.startswith("-O"):
        words = words[1:]
    starts: list[str] = []
    for word in words:
        if not word.literal:
            return ""
        if word.value.startswith(("-", "(", "!")):
            break
        starts.append(word.value)
    starts = starts or ["."]
    common = starts[0]
    for start in starts[1:]:
        while not start.startswith(common):
            common = common[:-1]
    return common


def _replaced(word: Word, marker: str, prefix: str) -> Word:
    """``word`` with each ``marker`` (``{}``) in its literal text known only at run time.

    The part is put after ``prefix``, what it is known to begin with.
    """
    if not any(p.kind == "literal" and marker in p.text for p in word.parts):
        return word
    parts: list[WordPart] = []
    for part in word.parts:
        if part.kind != "literal" or marker not in part.text:
            parts.append(part)
            continue
        pieces = part.text.split(marker)
        for number, piece in enumerate(pieces):
            if number:
                if prefix:
                    parts.append(WordPart("literal", prefix, True))
                parts.append(WordPart("dynamic", marker, True))
            if piece:
                parts.append(WordPart("literal", piece, part.quoted))
    return Word(word.source, tuple(parts), word.unsupported, word.substitution)
