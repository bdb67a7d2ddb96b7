"""Where each command of a line runs: ``cd`` as bash and dash run it (S21).

The read-only classifier judges a relative path from the directory the command will run in, so
it must know where a ``cd`` leaves the shell. The shell's ``cd`` is *logical* unless told
otherwise, and this module models it so:

* **Logical by default** (``-L``). The shell joins the operand to ``$PWD`` — the directory as
  the shell spells it, symlinks and all — and removes ``name/..`` as text before the kernel sees
  the path. With ``deep`` a symlink, ``cd deep/../..`` climbs from ``$PWD``, not from where
  ``deep`` points. bash checks that each directory a ``..`` removes exists and, when that check
  or the ``chdir`` fails, falls back to the operand as the kernel resolves it (and ``$PWD``
  becomes that physical directory); dash has no fallback. Both readings are kept where they
  differ.
* **Physical with** ``-P`` (the last of ``-L``/``-P`` wins, ``--`` ends the options): the
  kernel resolves the operand from the directory it is in.
* **Relative paths of later commands** are resolved by the kernel from the physical directory
  (the canonical path of ``$PWD``), which is what the classifier's containment check does.
* **Control flow.** A command after ``&&`` runs only where the ``cd`` before it succeeded,
  after ``||`` only where it failed, after ``;`` in either. A ``cd`` may always fail (the
  directory can go, or not be searchable, by the time the line runs), and a ``cd`` into a
  directory that does not exist never succeeds. A command the model says never runs (after
  ``cd missing &&``) is still judged, from where the line was. Each element of a pipeline runs
  in a subshell (bash without ``lastpipe``, and dash), so a ``cd`` there changes nothing for the
  other elements or for what follows.
* **Groups and subshells** (``( … )``, ``{ …; }``, ``!``) have no straight-line shape: every
  directory any earlier ``cd`` may lead to stays possible for every later command — the shell
  may or may not have run the ``cd``, and may or may not still be in that subshell.

Every ``cd`` operand, read logically and physically, must lead inside the workspace. The shell
is assumed to start in the workspace with ``CDPATH`` unset. Its ``$PWD`` may spell the workspace
differently (through a symlink), so a ``..`` that climbs above the workspace's own spelling is
refused rather than guessed at.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias, final

from robota.core.permissions import CommandLine, SimpleCommand, Word
from robota.host.paths._paths import canonical_path, is_path_inside

__all__ = ["CdRefused", "Expand", "command_directories"]

Expand: TypeAlias = Callable[[Word, str], list[str]]
"""The words the shell makes of a word (globs, ``~``, quotes) when run in a physical directory."""

_MAX_PLACES: Final = 64


class CdRefused(Exception):
    """A ``cd`` the classifier cannot follow, or one leading outside the workspace."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@final
@dataclass(frozen=True, slots=True)
class _Place:
    """Where the shell may be: ``$PWD`` as it spells it, and the directory the kernel is in.

    The first ``floor`` components of ``logical`` are the workspace as this module spells it;
    the shell may spell them differently, so no ``..`` may climb into them.
    """

    logical: str
    floor: int
    physical: str


def command_directories(
    line: CommandLine, root: str, expand: Expand
) -> tuple[tuple[str, ...], ...]:
    """For each command of ``line`` (by index), the physical directories it may run in.

    Args:
        line: The analysed command line.
        root: The workspace's canonical path; the shell starts there.
        expand: How the classifier expands a word (it raises its own refusal).

    Raises:
        CdRefused: for a ``cd`` that goes home or to the previous directory, has an option
            this model does not know, is ambiguous, leads outside the workspace, or climbs
            above it; or for a line with too many possible directories to judge.
    """
    model = _Model(root, expand)
    if any(c.name == "cd" and c.via is not None for c in line.commands):
        raise CdRefused("a `cd` run through another command changes the directory unseen")
    if line.shape is not None:
        model.straight(line, line.shape)
    else:
        model.anywhere(line)
    return model.result(line)


@dataclass
class _Model:
    root: str
    expand: Expand
    runs: dict[int, set[_Place]] = field(default_factory=dict)
    seen: set[_Place] = field(default_factory=set)

    @property
    def start(self) -> _Place:
        return _Place(self.root, len(_parts(self.root)), self.root)

    def result(self, line: CommandLine) -> tuple[tuple[str, ...], ...]:
        everywhere = {self.start, *self.seen, *(p for run in self.runs.values() for p in run)}
        out: list[tuple[str, ...]] = []
        for index, simple in enumerate(line.commands):
            if simple.parent is not None and simple.parent < index:
                out.append(out[simple.parent])  # a wrapper runs it where the wrapper runs
                continue
            # A command outside the shape (in a substitution) may run anywhere the line goes.
            places = self.runs.get(index) or everywhere
            out.append(tuple(sorted({p.physical for p in places})))
        return tuple(out)

    # -- a straight line: `;`, `&&`, `||`, `|`, `|&`

    def straight(self, line: CommandLine, shape: Sequence[int | str]) -> None:
        states: set[tuple[_Place, bool]] = {(self.start, True)}
        for and_or in _split(shape, (";",)):
            states = self._and_or(line, and_or, {place for place, _ in states})
            if len(states) > _MAX_PLACES:
                raise CdRefused("the line may be in too many directories to judge")

    def _and_or(
        self, line: CommandLine, items: Sequence[int | str], places: set[_Place]
    ) -> set[tuple[_Place, bool]]:
        """Run one and-or list from ``places``: each place it may end in, with its status."""
        pipelines = _split(items, ("&&", "||"))
        operators = [item for item in items if item in ("&&", "||")]
        current = self._pipeline(line, pipelines[0], places)
        for operator, pipeline in zip(operators, pipelines[1:], strict=True):
            wanted = operator == "&&"
            going = {place for place, ok in current if ok is wanted}
            if not going:
                # S21: it never runs as far as the model sees (`cd missing && …`); it is still
                # judged, so nothing is read-only only because a `cd` is expected to fail.
                self._pipeline(line, pipeline, {place for place, _ in current})
                continue
            staying = {(place, ok) for place, ok in current if ok is not wanted}
            current = staying | self._pipeline(line, pipeline, going)
        return current

    def _pipeline(
        self, line: CommandLine, items: Sequence[int | str], places: set[_Place]
    ) -> set[tuple[_Place, bool]]:
        indices = [item for item in items if isinstance(item, int)]
        for index in indices:
            self.runs.setdefault(index, set()).update(places)
        if len(indices) == 1 and _is_cd(line.commands[indices[0]]):
            # A `cd` may fail wherever it is, whatever its target looks like now.
            out = {(place, False) for place in places}
            for place in places:
                out.update((moved, True) for moved in self._cd(line.commands[indices[0]], place))
            return out
        for index in indices:
            if _is_cd(line.commands[index]):
                for place in places:
                    self._cd(line.commands[index], place)  # judged; a subshell's, so no effect
        return {(place, ok) for place in places for ok in (True, False)}

    # -- anything else: every directory a `cd` before may lead to stays possible

    def anywhere(self, line: CommandLine) -> None:
        self.seen = {self.start}
        for index, simple in enumerate(line.commands):
            self.runs[index] = set(self.seen)
            if _is_cd(simple):
                for place in list(self.seen):
                    self.seen.update(self._cd(simple, place))
                if len(self.seen) > _MAX_PLACES:
                    raise CdRefused("the line may be in too many directories to judge")

    # -- one `cd`

    def _cd(self, simple: SimpleCommand, place: _Place) -> set[_Place]:
        """Where ``cd`` leaves the shell when it succeeds from ``place`` (possibly nowhere)."""
        words: list[str] = []
        for word in simple.argv[1:]:
            words.extend(self.expand(word, place.physical))
        physical_only, text = _operand(words)
        if not physical_only:
            logical, floor, checked = self._logical(place, text)
            self._must_be_inside(logical, text)
            if os.path.isdir(logical):
                # dash, and bash when its checks pass: `$PWD` is the text, which the kernel
                # resolves.
                moved = _Place(logical, floor, _canonical(logical))
                if checked and os.access(logical, os.X_OK):
                    return {moved}
                return {moved, *self._physical(place, text)}
        # `-P`; and bash, when a `..` removed a name that is not a directory or its `chdir`
        # failed: the operand as the kernel resolves it, and `$PWD` is that physical directory.
        return self._physical(place, text)

    def _physical(self, place: _Place, text: str) -> set[_Place]:
        kernel = text if text.startswith("/") else posixpath.join(place.physical, text)
        self._must_be_inside(kernel, text)
        if not os.path.isdir(kernel):
            return set()
        real = _canonical(kernel)
        return {_Place(real, 0, real)}

    def _must_be_inside(self, path: str, text: str) -> None:
        if not is_path_inside(self.root, path):
            raise CdRefused(f"the `cd` target {text!r} does not lead inside the workspace")

    def _logical(self, place: _Place, text: str) -> tuple[str, int, bool]:
        """``$PWD`` after a logical ``cd text``, its floor, and whether bash's checks pass."""
        if text.startswith("/"):
            parts: list[str] = []
            floor = 0
        else:
            parts = _parts(place.logical)
            floor = place.floor
        checked = True
        for name in text.split("/"):
            if name in ("", "."):
                continue
            if name != "..":
                parts.append(name)
                continue
            if len(parts) <= floor:
                if floor:
                    raise CdRefused(
                        f"`cd {text}` climbs above the workspace, which $PWD may spell otherwise"
                    )
                continue  # `/..` is `/`
            # bash makes sure each directory a `..` removes exists (its PATH_CHECKDOTDOT).
            checked = checked and os.path.isdir("/" + "/".join(parts))
            parts.pop()
        return "/" + "/".join(parts), floor, checked


def _operand(words: Sequence[str]) -> tuple[bool, str]:
    """``cd``'s options and operand, from the words after expansion: (physical, operand)."""
    physical = False
    index = 0
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        option = words[index]
        index += 1
        if option == "--":
            break
        for letter in option[1:]:
            if letter not in "LPe":
                raise CdRefused(f"the `cd` option {option!r} is not known to this classifier")
            if letter != "e":  # `-e` only changes the exit status of `-P`
                physical = letter == "P"
    operands = words[index:]
    if not operands:
        raise CdRefused("`cd` without a directory goes to the home directory")
    if len(operands) > 1:
        raise CdRefused("`cd` with more than one directory")
    if operands[0] == "-":
        raise CdRefused("`cd -` goes to the previous directory")
    return physical, operands[0]


def _is_cd(simple: SimpleCommand) -> bool:
    # Only `cd` written as itself changes the shell's directory (`/bin/cd` is a program, and
    # the classifier refuses it as one).
    return bool(simple.words) and simple.words[0] == "cd" and simple.via is None


def _canonical(path: str) -> str:
    try:
        return canonical_path(path)
    except (OSError, ValueError):
        raise CdRefused(f"the directory {path!r} cannot be resolved") from None


def _parts(path: str) -> list[str]:
    return [name for name in path.split("/") if name]


def _split(items: Sequence[int | str], operators: Iterable[str]) -> list[list[int | str]]:
    cut = set(operators)
    out: list[list[int | str]] = [[]]
    for item in items:
        if isinstance(item, str) and item in cut:
            out.append([])
        else:
            out[-1].append(item)
    return out
