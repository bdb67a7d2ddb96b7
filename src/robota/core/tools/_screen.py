"""``PathScreen``: which paths a walking tool may show, as the permission rules judge them (S12).

A tool that walks a directory (a search, a listing) reads files its call never named: the gate
judged the call's own argument, not each file below it. The screen carries the rest of that
judgement into the body — each path a walk meets is judged by the same rules, from the same
workspace root, with the same resolver — so a rule that keeps a file from ``Read`` keeps it out
of a search too. It is built by the run's gate (:meth:`robota.PermissionGate.path_screen`) and
reached through :meth:`robota.ToolContext.path_screen`; without a gate it withholds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal, TypeAlias, final

__all__ = ["PathScreen", "PathVerdict"]

PathVerdict: TypeAlias = Literal["allow", "deny", "ask"]
"""What a :class:`PathScreen` says of one path: show it, leave it out silently (a deny rule
covers it), or leave it out and say so (an ask rule covers it, or a rule cannot be judged for
it: a walk cannot ask a person about each file)."""

_SEVERITY = {"allow": 0, "ask": 1, "deny": 2}


@final
class PathScreen:
    """The rules' answer for each path a walk meets; ``PathScreen()`` withholds nothing.

    Args:
        judge: ``(absolute path) -> PathVerdict``, or ``None`` (everything is allowed). A gate
            builds it with its rules compiled once, so one call per file stays cheap.

    Misuse: the path must be absolute and canonical in its directories (as a walk that never
    follows a link meets it); a path through a link is judged as written, not where it leads.
    """

    __slots__ = ("_judge",)

    def __init__(self, judge: Callable[[str], PathVerdict] | None = None) -> None:
        self._judge = judge

    @property
    def active(self) -> bool:
        """Whether any rule can withhold a path (when not, a walk may skip the check)."""
        return self._judge is not None

    def verdict(self, path: str) -> PathVerdict:
        """The answer for the absolute ``path`` (a file or a directory)."""
        judge = self._judge
        return "allow" if judge is None else judge(path)

    @staticmethod
    def joined(screens: Iterable[PathScreen]) -> PathScreen:
        """One screen answering the most severe of ``screens`` (deny, then ask, then allow)."""
        active = tuple(screen for screen in screens if screen.active)
        if not active:
            return PathScreen()
        if len(active) == 1:
            return active[0]

        def judge(path: str) -> PathVerdict:
            worst: PathVerdict = "allow"
            for screen in active:
                answer = screen.verdict(path)
                if _SEVERITY[answer] > _SEVERITY[worst]:
                    worst = answer
                    if worst == "deny":
                        break
            return worst

        return PathScreen(judge)

    def __repr__(self) -> str:
        return f"<PathScreen {'active' if self.active else 'allowing everything'}>"
