"""Brace expansion: bash's reading of ``{a,b}`` and ``{1..3}`` in a word (S12, S21).

POSIX ``sh`` (dash) does not expand braces, so a word with them means two different things;
:func:`expand_braces` gives bash's, for the callers that must assume the more dangerous reading
(deny rules, catastrophic removals). :mod:`._shell_words` marks such a word ``"brace
expansion"``; the walker (:mod:`._shell`) lists the command in both readings.
"""

from __future__ import annotations

import itertools
import re
from typing import Final, TypeAlias

from robota.core.permissions._shell_words import Word, WordPart, append_literal

__all__ = ["expand_braces"]

_MAX_BRACE_WORDS: Final = 256
_Atom: TypeAlias = "tuple[str, bool] | WordPart"  # a literal character (and quoted?) or a part


def expand_braces(word: Word) -> list[Word] | None:
    """The bash reading of a word with brace expansion (``{a,b}``, ``{1..3}``, ``x{a,{b,c}}y``).

    POSIX ``sh`` (dash) does not expand braces, so a word with them means two different things;
    this gives bash's, for the callers that must assume the more dangerous reading (deny rules,
    catastrophic removals). ``None`` when the word has no brace expansion, another construct
    that is not understood, or more than 256 results.
    """
    if word.unsupported != "brace expansion":
        return None
    atoms: list[_Atom] = []
    for part in word.parts:
        if part.kind == "literal":
            atoms.extend((ch, part.quoted) for ch in part.text)
        else:
            atoms.append(part)
    results = _expand_atoms(atoms)
    if results is None or len(results) > _MAX_BRACE_WORDS:
        return None
    return [_word_from_atoms(word.source, expanded) for expanded in results]


def _char(atom: _Atom, wanted: str) -> bool:
    return isinstance(atom, tuple) and atom == (wanted, False)


def _expand_atoms(atoms: list[_Atom]) -> list[list[_Atom]] | None:
    for start, atom in enumerate(atoms):
        if not _char(atom, "{"):
            continue
        depth = 0
        commas: list[int] = []
        close = None
        for index in range(start + 1, len(atoms)):
            current = atoms[index]
            if _char(current, "{"):
                depth += 1
            elif _char(current, "}"):
                if depth == 0:
                    close = index
                    break
                depth -= 1
            elif _char(current, ",") and depth == 0:
                commas.append(index)
        if close is None:
            continue
        inner = atoms[start + 1 : close]
        if commas:
            bounds = [start, *commas, close]
            alternatives = [atoms[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        else:
            sequence = _sequence(inner)
            if sequence is None:
                continue
            alternatives = [[(ch, True) for ch in item] for item in sequence]
        out: list[list[_Atom]] = []
        for alternative in alternatives:
            rest = _expand_atoms([*alternative, *atoms[close + 1 :]])
            if rest is None:
                return None
            out.extend([*atoms[:start], *tail] for tail in rest)
            if len(out) > _MAX_BRACE_WORDS:
                return None
        return out
    return [atoms]


def _sequence(inner: list[_Atom]) -> list[str] | None:
    if not all(isinstance(a, tuple) and not a[1] for a in inner):
        return None
    text = "".join(a[0] for a in inner if isinstance(a, tuple))
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", text)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        low, high = int(first), int(last)
        values = range(low, high + (1 if high >= low else -1), step if high >= low else -step)
        if len(values) > _MAX_BRACE_WORDS:
            return None
        return [str(v) for v in values]
    if first.isalpha() and last.isalpha():
        low, high = ord(first), ord(last)
        codes = range(low, high + (1 if high >= low else -1), step if high >= low else -step)
        return [chr(c) for c in codes]
    return None


def _word_from_atoms(source: str, atoms: list[_Atom]) -> Word:
    parts: list[WordPart] = []
    for atom in atoms:
        if isinstance(atom, WordPart):
            parts.append(atom)
            continue
        append_literal(parts, *atom)
    return Word(source, tuple(parts))
