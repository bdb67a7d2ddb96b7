"""What a shell command line will run, as far as a parser can tell (S12).

:func:`analyze_command` parses a command line with a real shell grammar (bashlex) and lists every
simple command it can find — through pipes, lists (``;``, ``&&``, ``||``), subshells, command and
process substitutions, and the wrappers that run another command (``env``, ``sudo``, ``nice``,
``nohup``, ``time``, ``timeout``, ``command``, ``exec``, ``xargs``, ``find -exec``, ``bash -c
'<literal>'``). What it cannot see is marked *opaque*: a command built at run time (``eval``, a
variable as the command, ``bash -c "$x"``, ``source``), or arguments that arrive later (``xargs``,
``find -exec ... {}``). A line the parser refuses is reported as unparseable.

Callers judge conservatively from this (S12): a deny rule that cannot be ruled out is not "no
match", and an allow rule answers only a line whose every command it covers.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Final, final

__all__ = ["CommandLine", "SimpleCommand", "analyze_command"]

_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_EVAL_LIKE: Final = frozenset({"eval", "source", "."})
# Wrappers whose remaining words (after their own options) are the command they run.
_WRAPPERS: Final = frozenset(
    {
        "env",
        "sudo",
        "doas",
        "nice",
        "nohup",
        "time",
        "command",
        "exec",
        "builtin",
        "stdbuf",
        "ionice",
        "chrt",
        "setsid",
        "timeout",
    }
)
_WRAPPER_VALUE_OPTIONS: Final = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "env": frozenset({"-u", "-C", "-S"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
}
_FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_EXPANSION = re.compile(r"[$`]")


@final
@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command a line runs.

    Attributes:
        words: The command name (first) and its arguments, quotes removed.
        opaque_arguments: Some arguments are only known at run time (``xargs``, ``find -exec
            … {}``, expansions), so the words shown are not all the command will get.
    """

    words: tuple[str, ...]
    opaque_arguments: bool = False

    @property
    def name(self) -> str:
        """The command's name without its directory (``/bin/rm`` → ``rm``)."""
        return os.path.basename(self.words[0]) if self.words else ""


@final
@dataclass(frozen=True, slots=True)
class CommandLine:
    """The analysis of one command line.

    Attributes:
        commands: Every simple command found, in order.
        opaque: Something will run that the text does not show (``eval``, ``bash -c "$x"``, a
            variable as a command name …).
        redirections: Targets of output redirections (``> file``, ``>> file``).
        inputs: Files read by input redirections (``< file``).
        substitutions: The line contains command or process substitutions.
        error: Why the line could not be parsed, or ``None``.
    """

    commands: tuple[SimpleCommand, ...] = ()
    opaque: bool = False
    redirections: tuple[str, ...] = ()
    substitutions: bool = False
    error: str | None = None
    inputs: tuple[str, ...] = ()

    @property
    def parsed(self) -> bool:
        """Whether the line parsed."""
        return self.error is None


@dataclass
class _Collector:
    source: str = ""
    commands: list[SimpleCommand] = field(default_factory=list)
    opaque: bool = False
    redirections: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    substitutions: bool = False
    depth: int = 0


def analyze_command(text: str) -> CommandLine:
    """Parse ``text`` and list what it runs; see the module docstring."""
    candidate: object = text  # untyped callers (model output) can pass anything
    if not isinstance(candidate, str) or not text.strip():
        return CommandLine(error="empty command")
    if "\x00" in text:
        return CommandLine(error="the command contains a NUL byte")
    return _analyze(text)


@functools.lru_cache(maxsize=256)
def _analyze(text: str) -> CommandLine:
    # One permission check reads the same line several times (each command rule, the
    # catastrophic-removal check, the read-only classifier); CommandLine is immutable, so the
    # parse is shared. bashlex builds its grammar tables on import: loaded on first use, not
    # with `import robota`.
    import bashlex.errors  # type: ignore[import-untyped]  # noqa: PLC0415

    collector = _Collector()
    try:
        _parse_into(text, collector)
    except (
        bashlex.errors.ParsingError,
        NotImplementedError,
        IndexError,
        ValueError,
        TypeError,
        AttributeError,
        RecursionError,
    ) as exc:
        return CommandLine(error=f"the shell parser cannot read it ({type(exc).__name__}: {exc})")
    return CommandLine(
        tuple(collector.commands),
        collector.opaque,
        tuple(collector.redirections),
        collector.substitutions,
        inputs=tuple(collector.inputs),
    )


def _parse_into(text: str, collector: _Collector) -> None:
    if collector.depth > 8:
        collector.opaque = True
        return
    collector.depth += 1
    outer = collector.source
    collector.source = text
    import bashlex  # noqa: PLC0415 - loaded by _analyze already; see there

    try:
        for tree in bashlex.parse(text):
            _walk(tree, collector)
    finally:
        collector.depth -= 1
        collector.source = outer


def _walk(node: Any, collector: _Collector) -> None:
    kind = getattr(node, "kind", None)
    if kind == "command":
        _command(node, collector)
        return
    if kind in ("commandsubstitution", "processsubstitution"):
        collector.substitutions = True
    if kind == "function":
        collector.opaque = True  # a definition runs later, under another name
    for attr in ("parts", "list", "command", "output"):
        child = getattr(node, attr, None)
        if isinstance(child, list):
            for item in child:
                _walk(item, collector)
        elif child is not None and hasattr(child, "kind"):
            _walk(child, collector)


def _command(node: Any, collector: _Collector) -> None:
    words: list[str] = []
    opaque_args = False
    for part in node.parts:
        kind = part.kind
        if kind == "word":
            words.append(_unquoted(part, collector.source))
            for inner in getattr(part, "parts", []) or []:
                if inner.kind in ("commandsubstitution", "processsubstitution"):
                    collector.substitutions = True
                    opaque_args = True
                    _walk(inner, collector)
                elif inner.kind == "parameter":
                    opaque_args = True
        elif kind == "assignment":
            for inner in getattr(part, "parts", []) or []:
                _walk(inner, collector)
        elif kind == "redirect":
            target = getattr(part, "output", None)
            word = getattr(target, "word", None) if target is not None else None
            if isinstance(word, str):
                if part.type in (">", ">>", ">|", "&>", ">&"):
                    collector.redirections.append(word)
                elif part.type in ("<", "<>"):
                    collector.inputs.append(word)
                elif part.type in ("<<", "<<<"):
                    pass  # here-documents and here-strings read no file
                else:
                    collector.redirections.append(word)
            if target is not None and hasattr(target, "kind"):
                _walk(target, collector)
        else:
            _walk(part, collector)
    _unwrap(words, opaque_args, collector)


def _unquoted(part: Any, source: str) -> str:
    """The word with POSIX quote removal applied to its source text.

    bashlex's own ``word`` keeps some quoting when quoted pieces are concatenated
    (``'a'"'"'b'``); re-reading the word's exact source with POSIX rules gives the text the
    shell would pass on.
    """
    start, end = part.pos
    raw = source[start:end]
    try:
        tokens = shlex.split(raw, posix=True)
    except ValueError:
        return str(part.word)
    return tokens[0] if len(tokens) == 1 else str(part.word)


def _unwrap(words: list[str], opaque_args: bool, collector: _Collector) -> None:
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return
    name = os.path.basename(words[0])
    if _EXPANSION.search(words[0]):
        collector.opaque = True  # the command itself is computed at run time
        return
    collector.commands.append(SimpleCommand(tuple(words), opaque_args))
    if name in _EVAL_LIKE:
        collector.opaque = True
        return
    if name in _SHELLS:
        _shell_dash_c(words, collector)
        return
    if name in _WRAPPERS:
        inner = _after_wrapper(name, words[1:])
        if inner:
            _unwrap(inner, opaque_args, collector)
        return
    if name == "xargs":
        inner = _after_options(words[1:])
        if inner:
            collector.commands.append(SimpleCommand(tuple(inner), opaque_arguments=True))
        else:
            collector.commands.append(SimpleCommand(("echo",), opaque_arguments=True))
        return
    if name == "find":
        _find_exec(words, collector)


def _after_wrapper(name: str, rest: list[str]) -> list[str]:
    values = _WRAPPER_VALUE_OPTIONS.get(name, frozenset())
    index = 0
    while index < len(rest):
        word = rest[index]
        if name == "env" and _ASSIGNMENT.match(word):
            index += 1
        elif word == "--":
            return rest[index + 1 :]
        elif word.startswith("-") and word != "-":
            index += 2 if word in values else 1
        else:
            break
    if name == "timeout":
        index += 1  # the duration
    return rest[index:]


def _after_options(rest: list[str]) -> list[str]:
    index = 0
    while index < len(rest) and rest[index].startswith("-"):
        index += 1
    return rest[index:]


def _shell_dash_c(words: list[str], collector: _Collector) -> None:
    for index, word in enumerate(words[1:], start=1):
        if word == "-c" or (word.startswith("-") and "c" in word[1:] and not word.startswith("--")):
            script = words[index + 1] if index + 1 < len(words) else ""
            if not script or _EXPANSION.search(script):
                collector.opaque = True  # the script is computed at run time
            else:
                _parse_into(script, collector)
            return
    if len(words) > 1 and not words[1].startswith("-"):
        collector.opaque = True  # runs a script file we cannot see


def _find_exec(words: list[str], collector: _Collector) -> None:
    index = 0
    while index < len(words):
        if words[index] in _FIND_EXEC:
            end = index + 1
            while end < len(words) and words[end] not in (";", "+", "\\;"):
                end += 1
            inner = words[index + 1 : end]
            if inner:
                collector.commands.append(SimpleCommand(tuple(inner), opaque_arguments=True))
            index = end
        index += 1
