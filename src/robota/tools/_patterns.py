"""Path globs and ``.gitignore`` rules, read the way git reads them.

One translation serves both: :func:`glob_regex` turns a path glob (``src/**/*.py``) into a regular
expression over ``/``-separated relative paths, where ``*`` and ``?`` never cross a ``/`` and
``**`` spans directories; :class:`IgnoreRules` holds the rules of the ``.gitignore`` files met on
a walk, the deepest file and the last rule winning, ``!`` re-including, a trailing ``/`` meaning
"directories only", and a pattern with an inner ``/`` anchored to its file's directory.

Not covered: ``$GIT_DIR/info/exclude`` and the user's global excludes file (a workspace may not
be a repository, and what lies outside the root is not read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["Glob", "IgnoreRules", "glob_regex", "parse_gitignore"]

_CLASS: Final = re.compile(r"\[(?:\\.|[^\]\\])+\]")


def glob_regex(pattern: str, *, anchored: bool = True) -> str:
    r"""A regular expression (unanchored at the end: the caller adds ``\Z``) for a path glob.

    ``anchored=False`` lets the pattern match at any depth (a ``.gitignore`` name without an
    inner ``/``).
    """
    out: list[str] = [] if anchored else ["(?:.*/)?"]
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**", i):
            before = i == 0 or pattern[i - 1] == "/"
            after = i + 2 == n or pattern[i + 2] == "/"
            if before and after:
                if i + 2 == n:
                    out.append(".*")  # `dir/**`: everything below
                    i += 2
                else:
                    out.append("(?:.*/)?")  # `**/` or `/**/`: zero or more directories
                    i += 3
                continue
            out.append("[^/]*")  # `a**b` is two stars
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            found = _CLASS.match(pattern, i)
            if found is None:
                out.append(re.escape(char))
            else:
                out.append("(?!/)[" + _class_body(found.group(0)[1:-1]) + "]")
                i = found.end()
                continue
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _class_body(body: str) -> str:
    negate = body[0] in "!^"
    parts: list[str] = ["^"] if negate else []
    i = 1 if negate else 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            parts.append(re.escape(body[i + 1]))
            i += 2
            continue
        parts.append(char if char == "-" else re.escape(char))
        i += 1
    return "".join(parts)


# A glob is matched without backtracking when it has more wildcards than this: a regular
# expression with k stars backtracks O(n**k) on a name it does not match (`*a*a*a*a*b` against
# 200 `a`s runs for hours), and globs come from the model and from `.gitignore` files in the
# workspace. Up to two, the compiled expression is quicker and its worst case is small.
_REGEX_WILDCARDS: Final = 2
_STAR: Final = object()  # `*`: any run of characters within a component
_GLOBSTAR: Final = object()  # `**`: any run of whole components


class Glob:
    """A compiled path glob (see :func:`glob_regex` for what it means): ``match(path)``.

    Matched by a compiled regular expression when it has at most two wildcards, otherwise by the
    classic greedy wildcard match — per component, and over components for ``**`` — which takes
    time linear in the pattern times the path.

    Raises:
        re.error: a ``[...]`` set cannot be read (``[z-a]``).
    """

    __slots__ = ("_regex", "_segments")

    def __init__(self, pattern: str, *, anchored: bool = True) -> None:
        self._regex: re.Pattern[str] | None = None
        self._segments: list[Any] = []
        tokens = _tokens(pattern, anchored=anchored)
        if sum(1 for token in tokens if token is _STAR or token is _GLOBSTAR) <= _REGEX_WILDCARDS:
            self._regex = re.compile(glob_regex(pattern, anchored=anchored) + r"\Z", re.DOTALL)
            return
        segment: list[Any] = []
        for part in tokens:
            if part == "/":
                self._segments.append(segment)
                segment = []
            elif part is _GLOBSTAR:
                self._segments.append(_GLOBSTAR)
            else:
                segment.append(part)
        if segment or not tokens or tokens[-1] == "/":
            self._segments.append(segment)
        elif pattern.endswith("/"):
            self._segments.append([])  # `a/**/`: as the expression, a path ending in `/`

    def match(self, path: str) -> bool:
        """Whether ``path`` (relative, ``/``-separated) matches the whole glob."""
        if self._regex is not None:
            return self._regex.match(path) is not None
        return _greedy(self._segments, path.split("/"), _segment_match)


def _tokens(pattern: str, *, anchored: bool) -> list[Any]:
    """The glob as tokens: a character, ``?`` (a compiled set), ``*``, ``**``, ``/``, a set.

    ``**`` stands for any number of whole components (at the end: at least one), exactly where
    :func:`glob_regex` writes ``(?:.*/)?`` or ``.*``.
    """
    out: list[Any] = [] if anchored else [_GLOBSTAR]
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**", i):
            before = i == 0 or pattern[i - 1] == "/"
            after = i + 2 == n or pattern[i + 2] == "/"
            if before and after:
                if i + 2 == n:
                    out.extend([_STAR, "/", _GLOBSTAR])  # `dir/**`: one or more below
                    i += 2
                else:
                    out.append(_GLOBSTAR)  # `**/`: zero or more directories
                    i += 3
                continue
            out.extend([_STAR, _STAR])
            i += 2
            continue
        if char == "*":
            out.append(_STAR)
        elif char == "?":
            out.append(_ONE)
        elif char == "[":
            found = _CLASS.match(pattern, i)
            if found is None:
                out.append(char)
            else:
                out.append(re.compile("(?!/)[" + _class_body(found.group(0)[1:-1]) + "]", re.S))
                i = found.end()
                continue
        elif char == "\\" and i + 1 < n:
            out.append(pattern[i + 1])
            i += 2
            continue
        else:
            out.append(char)
        i += 1
    return out


_ONE: Final = re.compile("[^/]", re.S)


def _char_match(token: Any, char: str) -> bool:
    return token == char if isinstance(token, str) else token.match(char) is not None


def _segment_match(token: Any, name: str) -> bool:
    return _greedy(token, name, _char_match)


def _greedy(tokens: Any, items: Any, one: Any) -> bool:
    """The greedy wildcard match: ``*``/``**`` tokens take any run of items, others exactly one.

    Only the last star is ever retried, which is enough when every other token takes one item;
    so the time is at most ``len(tokens) * len(items)`` calls of ``one``.
    """
    star = _GLOBSTAR if one is _segment_match else _STAR
    t = i = 0
    last_star, resume = -1, 0
    while i < len(items):
        if t < len(tokens) and tokens[t] is not star and one(tokens[t], items[i]):
            t += 1
            i += 1
        elif t < len(tokens) and tokens[t] is star:
            last_star, resume = t, i
            t += 1
        elif last_star >= 0:
            t, resume = last_star + 1, resume + 1
            i = resume
        else:
            return False
    while t < len(tokens) and tokens[t] is star:
        t += 1
    return t == len(tokens)


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: Glob
    negated: bool
    directory_only: bool


def parse_gitignore(text: str) -> tuple[_Rule, ...]:
    """The rules of one ``.gitignore`` file's text, in order."""
    rules: list[_Rule] = []
    for raw in text.splitlines():
        line = raw
        if not line or line.startswith("#"):
            continue
        # Trailing spaces are dropped unless escaped with a backslash.
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        negated = line.startswith("!")
        if negated or line.startswith(("\\!", "\\#")):
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.removeprefix("/")
        try:
            regex = Glob(line, anchored=anchored)
        except re.error:
            continue  # git ignores a rule it cannot read; so do we
        rules.append(_Rule(regex, negated, directory_only))
    return tuple(rules)


class IgnoreRules:
    """The ``.gitignore`` rules in force at one point of a walk (immutable; extend to descend).

    Each level is ``(base, lead, rules)``: ``base`` is the directory of the ``.gitignore`` file,
    relative to the walk's root and ending in ``/`` (``""`` at the root); ``lead`` is what a
    file above the walk's root sees before a path (``"a/b/"``), else ``""``.
    """

    __slots__ = ("_levels",)

    def __init__(self, levels: tuple[tuple[str, str, tuple[_Rule, ...]], ...] = ()) -> None:
        self._levels = levels

    def extended(self, base: str, rules: tuple[_Rule, ...], *, lead: str = "") -> IgnoreRules:
        """These rules and then ``rules`` from a ``.gitignore`` in ``base`` (they win)."""
        if not rules:
            return self
        return IgnoreRules((*self._levels, (base, lead, rules)))

    @property
    def active(self) -> bool:
        """Whether any rule is in force (no ``.gitignore`` met: nothing can be ignored)."""
        return bool(self._levels)

    def ignored(self, path: str, *, is_dir: bool) -> bool:
        """Whether ``path`` (relative, ``/``-separated) is ignored; its parents are not judged.

        The walk never descends into an ignored directory, which is how git treats a file
        whose directory is excluded (it cannot be re-included).
        """
        verdict = False
        for base, lead, rules in self._levels:
            if not path.startswith(base):
                continue
            relative = lead + path[len(base) :]
            for rule in rules:
                if rule.directory_only and not is_dir:
                    continue
                if rule.negated == verdict and rule.regex.match(relative):
                    verdict = not rule.negated
        return verdict
