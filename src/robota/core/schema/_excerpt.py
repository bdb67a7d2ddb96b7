"""Values as a message shows them: a bounded excerpt, never the whole value (S16).

A validation message names the value it is about; a model can send any value, so what is shown
is cut short — long strings, long and deep containers, integers of thousands of digits
(described, not converted: ``str()`` of such an integer raises past Python's limit).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from typing import Final

__all__ = ["EXCERPT_CHARS", "excerpt"]

EXCERPT_CHARS: Final = 40
_EXCERPT_ITEMS: Final = 5
_EXCERPT_DEPTH: Final = 2


def excerpt(value: object, depth: int = 0) -> str:
    """``value`` as a message shows it: bounded in length and depth, whatever the value (S16).

    Model-supplied values reach messages: a 5,000-deep list, a megabyte string or an integer
    past Python's int-to-str limit must not make the message huge or the rendering raise.
    """
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return _integer(value)
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, str):
        if len(value) <= EXCERPT_CHARS:
            return str.__repr__(value)
        return str.__repr__(value[:EXCERPT_CHARS]) + f"… ({len(value)} characters)"
    if isinstance(value, Mapping):
        return _members_excerpt(
            (f"{excerpt(k, depth + 1)}: {excerpt(v, depth + 1)}" for k, v in value.items()),
            len(value),
            "{}",
            depth,
        )
    if isinstance(value, (list, tuple)):
        return _members_excerpt((excerpt(v, depth + 1) for v in value), len(value), "[]", depth)
    return f"<{type(value).__name__}>"


def _members_excerpt(members: Iterator[str], count: int, brackets: str, depth: int) -> str:
    if count and depth >= _EXCERPT_DEPTH:
        return brackets[0] + "…" + brackets[1]
    shown = list(itertools.islice(members, _EXCERPT_ITEMS))  # rendered lazily: only these
    if count > _EXCERPT_ITEMS:
        shown.append(f"… ({count} items)")
    return brackets[0] + ", ".join(shown) + brackets[1]


def _integer(value: int) -> str:
    if value.bit_length() <= 128:
        return int.__repr__(value)
    # Counted without str(), which refuses integers past 4,300 digits (and is quadratic).
    magnitude = abs(value)
    digits = math.floor((magnitude.bit_length() - 1) * math.log10(2)) + 1
    while magnitude >= 10**digits:
        digits += 1
    while digits > 1 and magnitude < 10 ** (digits - 1):
        digits -= 1
    return f"a {'negative ' if value < 0 else ''}{digits}-digit integer"
