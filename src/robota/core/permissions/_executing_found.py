"""What one command runs through its options, configuration or environment (S12, S21).

The value the readers in :mod:`._executing` and :mod:`._executing_git` return, and that the
analysis (:mod:`._shell_simple`) reads as commands of the line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, final

from robota.core.permissions._shell_words import Word

__all__ = ["NOTHING", "Found", "joined"]


@final
@dataclass(frozen=True, slots=True)
class Found:
    """Commands one command's options or environment make it run.

    Attributes:
        scripts: Shell lines it runs (read as commands of the same line).
        argvs: Argument vectors it runs as a command (``git bisect run make test``).
        opaque: It runs something this reading cannot show.
        moved_argvs: Argument vectors it runs in other directories (``git for-each-repo``
            runs its command in each repository it lists).
    """

    scripts: tuple[str, ...] = ()
    argvs: tuple[tuple[Word, ...], ...] = ()
    opaque: bool = False
    moved_argvs: tuple[tuple[Word, ...], ...] = ()


NOTHING: Final = Found()


def joined(found: Iterable[Found]) -> Found:
    """Everything several readings found, as one."""
    items = list(found)
    return Found(
        tuple(s for f in items for s in f.scripts),
        tuple(a for f in items for a in f.argvs),
        any(f.opaque for f in items),
        tuple(a for f in items for a in f.moved_argvs),
    )
