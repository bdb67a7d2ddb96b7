"""The gate's :class:`~robota.PathScreen`: its rules, compiled once for one call's walk (S12, S21).

A walking tool (a recursive search, a listing) reads paths its call never named; the gate judged
only the call's own argument. This carries the stop direction of the rules into the walk: each
path the walk meets is judged as the gate would judge a call of this tool naming that path —
the same rules (the tool's own and those of the names its argument answers to, ``Read`` for a
search), the same workspace root, home and resolver — and withheld when a deny rule covers it
(silently) or an ask rule covers it (a walk cannot ask about each file; the tool says how many it
left out, and the model can name one to be asked about it).

What the call itself raised is not raised again: an ask rule covering the call's own argument,
or a rule that could not be evaluated for it, was put to a person when the call was admitted,
and an approved call is not emptied file by file. Allow rules, the mode and remembered consent
do not enter: they answer whether a call may run, and the call already runs.

Cost: each rule's pattern is placed (``~`` expanded, its literal part resolved) once per call,
not once per path. A path the walk meets has no link on the way — the walk does not follow one
— so its canonical form is itself, and the four readings a deny rule is matched against (the
path and the pattern, each as written and canonical) reduce to the pattern's two forms against
the path. Every form of one verdict is compiled into one regular expression, so a path costs
one match per verdict (a trailing ``**`` is a segment boundary, not a repetition, so the usual
``**/node_modules/**`` stays one expression). A form with more than one other ``**`` is left to
the wildcard scan of
:mod:`._globs` instead: a regular expression with several unbounded repetitions can backtrack
for long, and a walk's paths come from whoever wrote the tree.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from robota.core.permissions._evaluate import PermissionContext, PermissionPolicy
from robota.core.permissions._globs import GLOB_CHARS, segments_cover
from robota.core.permissions._path_patterns import _absolute, _resolved_pattern
from robota.core.permissions._rules import _PARAMETER, PermissionRule
from robota.core.tools._screen import PathScreen, PathVerdict
from robota.core.tools._tool import Tool

__all__ = ["path_screen"]


@dataclass(frozen=True, slots=True)
class _Form:
    """One placed form of a path pattern (absolute, ``/``-separated), as a matcher."""

    parts: tuple[str, ...]
    regex: str | None  # the same test as one regular expression, when it stays linear

    @staticmethod
    def of(pattern: str) -> _Form:
        parts = tuple(part for part in pattern.split("/") if part)
        if GLOB_CHARS.search(pattern) is None:
            # A pattern without a glob covers the path and everything beneath (segments_cover).
            regex = "".join("/" + re.escape(part) for part in parts) + r"(?:/|\Z)"
            return _Form(parts, regex if parts else "")
        # A trailing `**` takes whatever is left, however long: `P/**` covers a path when the
        # path's leading segments match `P`, so it is read as a segment boundary, not a
        # repetition (`**/node_modules/**`, the usual shape, then stays one regular expression).
        head = parts
        while head and head[-1] == "**":
            head = head[:-1]
        if head.count("**") > 1:
            return _Form(parts, None)  # S12: several `**` backtrack; the wildcard scan does not
        pieces = [_STARS if part == "**" else "/" + _segment(part) for part in head]
        end = r"(?:/|\Z)" if len(head) < len(parts) else r"\Z"
        return _Form(parts, "".join(pieces) + end)

    def covers(self, path: str) -> bool:
        """The wildcard scan itself (for a form with no linear regular expression)."""
        return segments_cover("/" + "/".join(self.parts), path) == "match"


# `**` as a segment: zero or more whole segments (segments_match's star item). A path the screen
# is given has no empty segment and no trailing `/`, so "nothing, or `/` and anything" takes
# exactly whole segments before the next `/` or the end — and backtracks a character at a time
# in C rather than a group a segment (newlines in names included: `(?s:...)`).
_STARS: Final = "(?:/(?s:.*))?"


def _segment(pattern: str) -> str:
    """One path segment's ``fnmatch`` glob as a regular expression that never crosses ``/``.

    ``*`` and ``?`` stay within the segment; a bracket set is read by ``fnmatch.translate``
    itself, scanned exactly as ``fnmatch`` scans it, so the two cannot disagree about a set.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        i += 1
        if char == "*":
            if not out or out[-1] != "[^/]*":
                out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            j = i
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append("\\[")
                continue
            translated = fnmatch.translate(pattern[i - 1 : j + 1])  # "(?s:<set>)\Z"
            out.append("(?=[^/])(?s:" + translated[len("(?s:") : -len(")\\Z")] + ")")
            i = j + 1
        else:
            out.append(re.escape(char))
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Level:
    """The rules of one verdict (deny, or ask), compiled together."""

    everything: bool
    regex: re.Pattern[str] | None
    slow: tuple[_Form, ...]

    @staticmethod
    def of(forms: list[_Form], everything: bool) -> _Level:
        fast = [form.regex for form in forms if form.regex is not None]
        slow = tuple(form for form in forms if form.regex is None)
        regex = re.compile("|".join(f"(?:{r})" for r in fast)) if fast else None
        return _Level(everything, regex, slow)

    @property
    def empty(self) -> bool:
        return not self.everything and self.regex is None and not self.slow

    @property
    def simple(self) -> bool:
        return not self.everything and not self.slow

    def hits(self, path: str) -> bool:
        if self.everything:
            return True
        regex = self.regex
        if regex is not None and regex.match(path) is not None:
            return True
        return any(form.covers(path) for form in self.slow)


def path_screen(
    tool: Tool,
    arguments: Mapping[str, Any],
    policy: PermissionPolicy,
    context: PermissionContext,
) -> PathScreen:
    """The screen of one call of ``tool`` with ``arguments`` (see the module docstring)."""
    argument = tool.permission_argument
    if argument is None or argument.kind != "path":
        return PathScreen()
    properties = tool.parameters.get("properties", {})
    forms: dict[str, list[_Form]] = {"deny": [], "ask": []}
    everything = {"deny": False, "ask": False}
    for direction in ("deny", "ask"):
        for rule in policy.rules(direction):
            if not rule.names(tool):
                continue
            on_call = rule.applies(
                tool,
                arguments,
                workspace=context.workspace,
                home=context.home,
                resolve=context.resolve_path,
            )
            if on_call == "unevaluable" or (direction == "ask" and on_call == "match"):
                continue  # S21: put to a person when the call was admitted
            placed = _place(rule, properties, context)
            if placed is None:
                continue
            if placed == "everything":
                everything[direction] = True
            elif placed == "unevaluable":
                everything["ask"] = True  # S12: unevaluable is read in the stop direction
            else:
                forms[direction].extend(placed)
    deny = _Level.of(forms["deny"], everything["deny"])
    ask = _Level.of(forms["ask"], everything["ask"])
    if deny.empty and ask.empty:
        return PathScreen()
    if deny.simple and ask.simple:
        return PathScreen(
            functools.partial(
                _judge_fast,
                deny.regex.match if deny.regex is not None else _never,
                ask.regex.match if ask.regex is not None else _never,
            )
        )
    return PathScreen(functools.partial(_judge, deny, ask))


def _place(
    rule: PermissionRule, properties: Mapping[str, Any], context: PermissionContext
) -> list[_Form] | Literal["everything", "unevaluable"] | None:
    """The rule's pattern placed as the gate places it, once; ``None``: not a path rule."""
    pattern = rule.pattern
    if rule.everything or pattern is None or pattern.strip() in ("*", "**"):
        return "everything"
    parameter = _PARAMETER.match(pattern)
    if parameter is not None and parameter.group(1) in properties:
        return None  # a parameter rule judges the call's other arguments, judged at admission
    expanded = _absolute(pattern, context.workspace, context.home)
    if expanded is None:
        return "unevaluable"
    forms = [_Form.of(expanded)]
    resolve = context.resolve_path
    if resolve is not None:
        raw = _absolute(pattern, context.workspace, context.home, normalize=False)
        try:
            canonical = _resolved_pattern(raw if raw is not None else expanded, resolve)
        except (OSError, ValueError):
            return "unevaluable"
        if canonical != expanded:
            forms.append(_Form.of(canonical))
    return forms


def _judge(deny: _Level, ask: _Level, path: str) -> PathVerdict:
    if deny.hits(path):
        return "deny"
    return "ask" if ask.hits(path) else "allow"


def _judge_fast(
    deny: Callable[[str], re.Match[str] | None],
    ask: Callable[[str], re.Match[str] | None],
    path: str,
) -> PathVerdict:
    # The usual case, one regular expression a verdict (no rule for everything, no slow form).
    if deny(path) is not None:
        return "deny"
    return "ask" if ask(path) is not None else "allow"


def _never(path: str) -> None:
    return None
