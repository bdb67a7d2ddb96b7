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
from typing import Final

__all__ = ["IgnoreRules", "glob_regex", "parse_gitignore"]

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


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
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
            regex = re.compile(glob_regex(line, anchored=anchored) + r"\Z", re.DOTALL)
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
