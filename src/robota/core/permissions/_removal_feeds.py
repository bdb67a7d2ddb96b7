"""What ``find`` hands ``xargs`` (S12, S21): one reading for the removal check and deny rules.

``find … | xargs cmd`` gives ``cmd`` the names ``find`` prints, words only known at run time.
The catastrophic-removal check (:mod:`._removal`) judges ``find``'s starting points and name
tests in their place; deny and ask rules (:mod:`._command_patterns`) need to know whether such a
name may reach ``cmd`` as an option. Both follow the line's pipes here, the same way: a
straight line of commands joined by ``|``, read from the shape the analysis reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from robota.core.permissions._look_through import program_name
from robota.core.permissions._options import may_be_option
from robota.core.permissions._shell import CommandLine, SimpleCommand
from robota.core.permissions._shell_words import Word
from robota.core.permissions._shell_wrappers import XARGS, scan_wrapper

__all__ = [
    "FeedingFind",
    "FindParts",
    "appends_paths_only",
    "feeding_find",
    "find_parts",
    "pipeline_before",
    "top_index",
]

FIND_PRIMARY_START: Final = ("-", "(", "!", ")", ",")
# xargs reads NUL-separated items from its standard input: no quote or blank splits a name.
_NUL_ITEMS: Final = frozenset({"-0", "--null"})
# Options after which xargs reads its items elsewhere, splits them otherwise, or places them.
_OTHER_ITEMS: Final = frozenset({"-a", "--arg-file", "-d", "--delimiter", "-I", "-i", "--replace"})
# Primaries that write to the standard output something other than a found path (or run a
# program that may), or that read the starting points from a file.
_FIND_OTHER_OUTPUT: Final = frozenset(
    {"-printf", "-fprint", "-fprint0", "-fprintf", "-ls", "-fls", "-exec", "-execdir", "-ok"}
    | {"-okdir", "-files0-from", "--"}
)


def top_index(line: CommandLine, index: int) -> int:
    """The top-level command of ``line`` that runs command ``index`` (itself, if it is one)."""
    seen = 0
    while line.commands[index].parent is not None and seen < len(line.commands):
        index = line.commands[index].parent or 0
        seen += 1
    return index


def pipeline_before(line: CommandLine, index: int) -> list[int] | None:
    """The commands (top-level indices) whose output reaches ``index``'s, nearest first.

    ``None`` when the line is not a straight line the reading can follow.
    """
    shape = line.shape
    top = top_index(line, index)
    if shape is None or top not in shape:
        return None
    position = shape.index(top)
    before: list[int] = []
    while position >= 2 and shape[position - 1] in ("|", "|&"):
        previous = shape[position - 2]
        if not isinstance(previous, int):
            break
        before.append(previous)
        position -= 2
    return before


@dataclass(frozen=True, slots=True)
class FeedingFind:
    """A ``find`` whose output reaches ``xargs``.

    Attributes:
        find: The ``find`` command.
        direct: Its output reaches ``xargs`` with no filter between that may rewrite it.
    """

    find: SimpleCommand
    direct: bool


def feeding_find(line: CommandLine, simple: SimpleCommand) -> FeedingFind | None:
    """The ``find`` earlier in its pipeline whose output the ``xargs`` running ``simple`` reads.

    ``None`` when no ``find`` does, or the line is not one whose pipes can be followed (its
    input may then be anything).
    """
    parent = simple.parent
    if parent is None:
        return None
    feeders = pipeline_before(line, parent)
    if feeders is None:
        return None
    for index, command in enumerate(line.commands):
        if not command.words or program_name(command.words[0]) != "find":
            continue
        top = top_index(line, index)
        if top in feeders:
            return FeedingFind(command, feeders[:1] == [top])
    return None


@dataclass(frozen=True, slots=True)
class FindParts:
    """A ``find`` command's words: its own options, starting points and expression."""

    options: Sequence[Word]
    starts: Sequence[Word]
    expression: Sequence[Word]


def find_parts(find: SimpleCommand) -> FindParts:
    """Split ``find``'s words after its name (GNU find 4.9, BSD find)."""
    argv = find.argv[1:]
    position = _find_options_end(argv)
    end = position
    while end < len(argv):
        word = argv[end]
        if word.literal and word.value.startswith(FIND_PRIMARY_START):
            break
        end += 1
    return FindParts(argv[:position], argv[position:end], argv[end:])


def _find_options_end(argv: Sequence[Word]) -> int:
    """Where find's own options (``-H``, ``-L``, ``-P``, ``-D list``, ``-O3``) end."""
    index = 0
    while index < len(argv):
        word = argv[index]
        if not word.literal:
            break
        value = word.value
        if value in ("-H", "-L", "-P") or (value.startswith("-O") and value[2:].isdigit()):
            index += 1
        elif value == "-D":
            index += 2
        else:
            break
    return index


def appends_paths_only(line: CommandLine, simple: SimpleCommand) -> bool:
    """Whether what ``xargs`` appends to ``simple`` can only be paths ``find`` found (S12).

    True for ``find … -print0 | xargs -0 cmd``: ``find`` prints only paths, each beginning with
    a starting point that is no option, straight into an ``xargs`` that splits its input at
    NUL bytes alone; so no appended word is an option. Not for plain ``| xargs`` (a name with
    a blank is split, and one part may be ``-rf``), a filter between them, ``-printf`` or an
    ``-exec`` writing to the pipe, a starting point known only at run time, ``xargs -a``.
    """
    if simple.via != "xargs":
        return False
    xargs = _xargs_of(line, simple)
    fed = feeding_find(line, simple)
    if xargs is None or fed is None or not fed.direct:
        return False
    scan = scan_wrapper("xargs", XARGS, [w.value for w in xargs.argv[1:]])
    options = xargs.argv[1 : 1 + scan.start] if scan.start >= 0 else xargs.argv[1:]
    names = {name for name, _ in scan.options}
    if scan.unknown or not all(w.literal for w in options):
        return False
    if not names & _NUL_ITEMS or names & _OTHER_ITEMS:
        return False
    parts = find_parts(fed.find)
    if any(may_be_option(word) for word in parts.starts):
        return False
    if not all(word.literal for word in (*parts.options, *parts.expression)):
        return False
    values = {word.value for word in parts.expression}
    return "-print0" in values and not values & _FIND_OTHER_OUTPUT


def _xargs_of(line: CommandLine, simple: SimpleCommand) -> SimpleCommand | None:
    """The ``xargs`` that runs ``simple`` (through any wrappers between them)."""
    index = simple.parent
    seen = 0
    while index is not None and 0 <= index < len(line.commands) and seen < len(line.commands):
        command = line.commands[index]
        if command.words and program_name(command.words[0]) == "xargs":
            return command
        index = command.parent
        seen += 1
    return None
