"""What a simple command runs besides itself: wrappers, options, nested scripts (S12, S21).

:class:`SimpleCommandReader` is the part of the walker (:mod:`._shell`) that lists one simple
command and then follows what it runs: a wrapper's command (``env``, ``sudo``, ``timeout`` …,
from :mod:`._shell_wrappers`), ``xargs``, ``find -exec``, GNU ``parallel``, the script of
``eval`` and ``bash -c``, and the commands a program runs through its options or environment
(:mod:`._executing`, S21). Builtins and assignments that run text as code make the line opaque
or unsupported here.
"""

from __future__ import annotations

import re
from typing import Final

from robota.core.permissions._executing import commands_in_assignment, commands_in_options
from robota.core.permissions._shell_model import Redirect, SimpleCommand
from robota.core.permissions._shell_syntax import Unparseable, script_text
from robota.core.permissions._shell_walk_state import WalkerState
from robota.core.permissions._shell_words import Word, literal_word
from robota.core.permissions._shell_wrappers import WRAPPERS, XARGS, scan_wrapper

__all__ = ["SimpleCommandReader"]

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
    r"^(?:PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_FUNC_\w*|BASH_XTRACEFD)"
    r"(?:\[.*\])?\+?="
)
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_EVAL_LIKE: Final = frozenset({"eval", "source", "."})
_FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


class SimpleCommandReader(WalkerState):
    """The walker's reading of simple commands and the commands they run (S12, S21)."""

    def _assignment_hazards(self, text: str) -> None:
        if _CODE_VARIABLES.match(text):
            self.unsupported.append(
                f"an assignment to {text.split('=', 1)[0]!r}, which the shell runs"
            )
        name = text.split("=", 1)[0]
        if "[" in name:
            self.unsupported.append("an array subscript")

    def _simple(
        self,
        argv: list[Word],
        assignments: tuple[str, ...],
        redirects: tuple[Redirect, ...],
        via: str | None,
        parent: int | None = None,
    ) -> None:
        for assignment in assignments:
            self._assignment_hazards(assignment)
        if not argv:
            if assignments:
                self.assignments.extend(assignments)
            return
        head = argv[0]
        if head.dynamic or head.has_glob or head.has_tilde:
            self.opaque = True  # the command itself is computed at run time
            if head.unsupported != "brace expansion":  # bash's reading is listed apart
                self.computed_name = True
            return
        opaque_args = any(w.dynamic or w.has_tilde for w in argv[1:])
        index = len(self.commands)
        command = SimpleCommand(
            tuple(w.value for w in argv),
            opaque_args,
            tuple(argv),
            assignments,
            via,
            redirects,
            self.parent if parent is None else parent,
            self.moved,
        )
        self.commands.append(command)
        name = command.name
        values = [w.value for w in argv]
        if name == "eval" and len(argv) > 1:
            # eval joins its words with spaces and runs the result as a script.
            script = script_text(argv[1:])
            if script is None:
                self.opaque = True
            else:
                self._nested(script, "eval", index, computed=not all(w.literal for w in argv[1:]))
            return
        if name in _EVAL_LIKE:
            self.opaque = True
            return
        if name in _CODE_BUILTINS:
            self.opaque = True
            self.unsupported.append(f"the builtin {name!r}, which runs text as code")
            return
        self._option_hazards(name, argv)
        self._executes(name, argv, assignments, index)
        if name in _SHELLS:
            self._shell_dash_c(argv, index)
            return
        wrapper = WRAPPERS.get(name)
        if wrapper is not None:
            scan = scan_wrapper(name, wrapper, values[1:])
            if scan.unknown:
                self.opaque = True
            for script in scan.scripts:
                self._nested(script, f"{name} -c", index, computed=False)
            inner = argv[1 + scan.start :] if scan.start >= 0 else []
            if inner and wrapper.script_operands:
                # The wrapper hands its words to `sh -c` as one line (`sg group 'git push'`).
                script = script_text(inner)
                if script is None:
                    self.opaque = True
                else:
                    self._nested(script, name, index, computed=not all(w.literal for w in inner))
                return
            if inner:
                outer, self.moved = self.moved, self.moved or scan.moved
                try:
                    self._simple(list(inner), (*assignments, *scan.assignments), (), name, index)
                finally:
                    self.moved = outer
            return
        if name == "xargs":
            scan = scan_wrapper(name, XARGS, values[1:])
            if scan.unknown:
                self.opaque = True
            start = scan.start
            inner_words = values[1 + start :] if start >= 0 else []
            self.commands.append(
                SimpleCommand(
                    tuple(inner_words or ["echo"]),
                    True,
                    tuple(argv[1 + start :]) if inner_words else (literal_word("echo"),),
                    via="xargs",
                    parent=index,
                    moved=self.moved,
                )
            )
            return
        if name == "find":
            self._find_exec(argv, index)
        elif name == "parallel":
            self._parallel(argv, index)

    def _executes(
        self, name: str, argv: list[Word], assignments: tuple[str, ...], index: int
    ) -> None:
        """Commands this command runs through its options or environment (S21, issue 24)."""
        found = [commands_in_options(name, argv), *map(commands_in_assignment, assignments)]
        for item in found:
            if item.opaque:
                self.opaque = True
            for script in item.scripts:
                self._nested(script, f"{name} option", index, computed=False)
            for words in item.argvs:
                self._simple(list(words), (), (), f"{name} option", index)

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
            any("[" in v for v in values) or any("n" in f[1:] for f in flags if f[1:2] != "-")
        ):
            self.unsupported.append("an array subscript or name reference, evaluated as code")
        elif name in _DECLARATIONS:
            for value in values:
                self._assignment_hazards(value)
        elif name == "read" and any("[" in v for v in values):
            self.unsupported.append("an array subscript, evaluated as code")
        elif name == "printf" and "-v" in flags:
            self.unsupported.append("'printf -v', which assigns (and evaluates a subscript)")
        elif name in ("test", "[") and "-v" in values:
            self.unsupported.append("'test -v', which evaluates a subscript")

    def _shell_dash_c(self, argv: list[Word], index: int) -> None:
        # bash and dash: options come first; with `-c`, the first operand is the script and
        # the rest are its $0, $1 …; without it, the first operand is a script file.
        values = [w.value for w in argv]
        dash_c = False
        position = 1
        while position < len(values):
            word = values[position]
            if word in ("--", "-"):
                position += 1
                break
            if word[:1] not in ("-", "+") or word in ("-", "+"):
                break
            if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                position += 2  # the option's value
                continue
            if not word.startswith("--") and "c" in word[1:]:
                dash_c = True
            position += 1
        if not dash_c or position >= len(argv):
            # No `-c`: the shell runs a script file, or reads commands from its standard input.
            self.opaque = True
            return
        script = script_text(argv[position : position + 1])
        if script is None:
            self.opaque = True  # the script is computed at run time
            return
        self._nested(script, "bash -c", index, computed=not argv[position].literal)

    def _nested(self, script: str, via: str, parent: int, *, computed: bool) -> None:
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
        values = [w.value for w in argv]
        index = 0
        while index < len(values):
            if values[index] in _FIND_EXEC:
                end = index + 1
                while end < len(values) and values[end] not in (";", "+"):
                    end += 1
                inner = argv[index + 1 : end]
                if inner:
                    self.commands.append(
                        SimpleCommand(
                            tuple(w.value for w in inner),
                            True,
                            tuple(inner),
                            via="find -exec",
                            parent=parent,
                        )
                    )
                    if inner[0].dynamic:
                        self.opaque = True
                index = end
            index += 1
