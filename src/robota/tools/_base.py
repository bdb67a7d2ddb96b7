"""What the read-only workspace tools share.

The binding to a root, the S12/S21 declarations, and how a refusal reaches the model.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import robota.core
from robota.tools._workspace import Refused, Workspace

__all__ = ["PATH_ARGUMENT", "WALK_ARGUMENT", "WorkspaceTool", "judge_spelled"]

#: S12: every read-only tool's permission patterns are scoped to its ``path`` argument, read as a
#: path (``Read(src/**)``, ``Grep(**/.env)``), judged from the same workspace root.
PATH_ARGUMENT = robota.core.PermissionArgument("path", "path")
#: The tools that read or list files they walk to (``Grep``, ``Glob``, ``LS``) answer to ``Read``
#: deny and ask rules too, as in Claude Code: ``Read(secrets/**)`` denied keeps them out.
WALK_ARGUMENT = robota.core.PermissionArgument("path", "path", also_judged_as=("Read",))


def judge_spelled(
    workspace: Workspace, args: Mapping[str, Any], ctx: robota.core.ToolContext
) -> None:
    r"""Refuse a ``path`` read back from its ``\xNN`` spelling that the rules keep out (S12).

    The gate judged the path as written; :meth:`Workspace.resolve` may read a name shown as
    ``\xNN`` back as its bytes. A rule that names the real name (``Read(key?.txt)`` for
    ``key\x01.txt``) did not match the escaped text, so the name reached is judged here by the
    call's :class:`robota.PathScreen` — as a walk judges it — before anything is opened.

    Raises:
        Refused: a deny or ask rule covers the name the spelling reaches.
    """
    path = args.get("path")
    if not isinstance(path, str) or workspace.spelling(path) == path:
        return
    screen = ctx.path_screen(args)
    if not screen.active:
        return
    canonical = workspace.resolve(path)
    verdict = screen.verdict(canonical)
    given = workspace.given(canonical)
    if verdict != "deny" and given is not None and screen.verdict(given) != "allow":
        verdict = screen.verdict(given)
    if verdict == "deny":
        raise Refused(f"{path!r}: a permission rule denies the file this name spells")
    if verdict == "ask":
        raise Refused(
            f"{path!r}: a permission rule asks before the file this name spells is used, and a "
            "name in escapes cannot be put to a person; ask the user to rename it"
        )


class WorkspaceTool(robota.core.Tool):
    """A tool bound to one :class:`Workspace`; inspect-class (S21), scoped to ``path`` (S12).

    The body runs in a worker thread (file I/O must not stall the event loop) and is asked to
    stop between files once the run is aborted (S23). A :class:`Refused` becomes an error
    result the model reads; any other failure propagates as the executor reports it.
    """

    tool_name: ClassVar[str]
    tool_description: ClassVar[str]
    tool_parameters: ClassVar[Mapping[str, Any]]
    tool_argument: ClassVar[robota.core.PermissionArgument] = PATH_ARGUMENT
    #: The tool reads or lists paths its call did not name, so it asks for the call's screen.
    walks: ClassVar[bool] = False

    def __init__(self, workspace: Workspace, *, name: str | None = None) -> None:
        super().__init__(
            name or self.tool_name,
            self.tool_description,
            self.tool_parameters,
            risk="inspect",
            permission_argument=self.tool_argument,
            source="robota.tools",
            idempotent=True,
        )
        self.workspace = workspace

    async def execute(
        self, args: Mapping[str, Any], ctx: robota.core.ToolContext
    ) -> robota.core.ToolResult:
        signal = ctx.signal
        # S12: what the rules withhold from a walk (compiled only for a tool that walks).
        screen = ctx.path_screen(args) if self.walks else robota.core.PathScreen()
        try:
            judge_spelled(self.workspace, args, ctx)
            text = await asyncio.to_thread(self.run_screened, args, lambda: signal.aborted, screen)
        except Refused as exc:
            return robota.core.ToolResult(str(exc), is_error=True)
        signal.throw_if_aborted()  # S23: an aborted walk's partial answer is not a result
        return robota.core.ToolResult(text)

    @abstractmethod
    def run(self, args: Mapping[str, Any], stop: Callable[[], bool]) -> str:
        """The tool's answer for validated ``args``; raise :class:`Refused` to refuse."""

    def run_screened(
        self,
        args: Mapping[str, Any],
        stop: Callable[[], bool],
        screen: robota.core.PathScreen,
    ) -> str:
        """:meth:`run` under the call's :class:`robota.PathScreen` (S12).

        A tool that reads or lists paths its call did not name overrides this and withholds
        what ``screen`` withholds; the default ignores it (the gate judged the one path).
        """
        return self.run(args, stop)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} in {self.workspace.root!r}>"
