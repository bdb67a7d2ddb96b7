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
path and the pattern, each as written and canonical) reduce to the two pattern forms against the
path: a prefix test and a test of the last segment reject nearly every path before the full
segment match runs.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from robota.core.permissions._evaluate import PermissionContext, PermissionPolicy
from robota.core.permissions._globs import GLOB_CHARS, segments_match
from robota.core.permissions._path_patterns import _absolute, _resolved_pattern
from robota.core.permissions._rules import _PARAMETER, PermissionRule
from robota.core.tools._screen import PathScreen, PathVerdict
from robota.core.tools._tool import Tool

__all__ = ["path_screen"]


@dataclass(frozen=True, slots=True)
class _Form:
    """One placed form of a path pattern (absolute, ``/``-separated)."""

    parts: tuple[str, ...]
    literal: str  # the leading segments without a glob, as an absolute path ("" for none)
    glob: bool
    last: str | None  # the last segment when it must match the path's last one

    @staticmethod
    def of(pattern: str) -> _Form:
        parts = tuple(part for part in pattern.split("/") if part)
        glob = GLOB_CHARS.search(pattern) is not None
        lead = next((i for i, part in enumerate(parts) if GLOB_CHARS.search(part)), len(parts))
        literal = "/" + "/".join(parts[:lead]) if lead else ""
        last = parts[-1] if glob and parts and parts[-1] != "**" else None
        return _Form(parts, literal, glob, last)

    def covers(self, path: str) -> bool:
        literal = self.literal
        if literal and path != literal and not path.startswith(literal + "/"):
            return False  # the literal segments must lead the path (segments_cover)
        if not self.glob:
            return True  # a pattern without a glob covers the path and everything beneath
        last = self.last
        if last is not None:
            name = path.rpartition("/")[2]
            if not (
                name == last if GLOB_CHARS.search(last) is None else fnmatch.fnmatchcase(name, last)
            ):
                return False
        return segments_match(self.parts, [part for part in path.split("/") if part])


@dataclass(frozen=True, slots=True)
class _Check:
    verdict: PathVerdict
    forms: tuple[_Form, ...]  # empty: the rule cannot be placed, so every path is "ask"
    everything: bool = False

    def hits(self, path: str) -> PathVerdict | None:
        if self.everything:
            return self.verdict
        if not self.forms:
            return "ask"  # S12: unevaluable is its own answer, read in the stop direction
        return self.verdict if any(form.covers(path) for form in self.forms) else None


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
    checks: list[_Check] = []
    for direction in ("deny", "ask"):
        verdict: PathVerdict = "deny" if direction == "deny" else "ask"
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
            check = _compile(rule, verdict, properties, context)
            if check is not None:
                checks.append(check)
    if not checks:
        return PathScreen()
    return PathScreen(functools.partial(_judge, tuple(checks)))


def _compile(
    rule: PermissionRule,
    verdict: PathVerdict,
    properties: Mapping[str, Any],
    context: PermissionContext,
) -> _Check | None:
    pattern = rule.pattern
    if rule.everything or pattern is None or pattern.strip() in ("*", "**"):
        return _Check(verdict, (), everything=True)
    parameter = _PARAMETER.match(pattern)
    if parameter is not None and parameter.group(1) in properties:
        return None  # a parameter rule judges the call's other arguments, judged at admission
    expanded = _absolute(pattern, context.workspace, context.home)
    if expanded is None:
        return _Check(verdict, ())
    forms = [_Form.of(expanded)]
    resolve = context.resolve_path
    if resolve is not None:
        raw = _absolute(pattern, context.workspace, context.home, normalize=False)
        try:
            canonical = _resolved_pattern(raw if raw is not None else expanded, resolve)
        except (OSError, ValueError):
            return _Check(verdict, ())
        if canonical != expanded:
            forms.append(_Form.of(canonical))
    return _Check(verdict, tuple(forms))


def _judge(checks: tuple[_Check, ...], path: str) -> PathVerdict:
    answer: PathVerdict = "allow"
    for check in checks:
        hit = check.hits(path)
        if hit == "deny":
            return "deny"
        if hit == "ask":
            answer = "ask"
    return answer
