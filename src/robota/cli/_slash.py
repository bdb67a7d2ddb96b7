"""The slash commands of ``robota chat``: ``/help``, ``/cost``, ``/undo``, ``/exit``.

A line starting with ``/`` is a command, never sent to the model; an unknown one prints a
one-line error and the session goes on. What the commands print goes to stderr (the
:class:`~robota.cli._output.Printer`), like every other remark about the session.

``/undo`` calls :func:`robota.tools.undo` for ``--tools builtin``'s workspace, in a worker
thread (it does blocking file I/O): it takes back the newest change the built-in ``Edit`` and
``Write`` tools made, or says "nothing to undo". A change it refuses to take back (the file was
changed since) is a one-line error, and the file is left as it is.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Final, final

import robota
from robota.cli._errors import one_line
from robota.cli._output import Printer

__all__ = ["LEAVE", "ChatCommands"]

LEAVE: Final = frozenset({"/exit", "/quit"})

_HELP: Final = (
    ("/help", "list these commands"),
    ("/cost", "tokens and cost of this chat so far"),
    ("/undo", "undo the last edit a built-in tool made (--tools builtin)"),
    ("/exit", "leave (also /quit, Ctrl-D, or Ctrl-C at the prompt)"),
)


def _dollars(cost: float) -> str:
    return f"${cost:.6f}"


@final
@dataclass(slots=True)
class ChatCommands:
    """The session's slash commands and the totals ``/cost`` reports.

    Args:
        printer: Where commands print.
        workspace: The root of ``--tools builtin`` (``/undo`` works in it), else ``None``.
    """

    printer: Printer
    workspace: str | None = None
    usage: robota.Usage = field(default_factory=robota.Usage)
    cost: float = 0.0
    unpriced_turns: int = 0
    turns: int = 0

    def record(self, result: robota.RunResult[Any]) -> None:
        """Add a finished turn's usage and cost to the chat's totals."""
        self.turns += 1
        self.usage = self.usage + result.usage
        if result.cost is None:
            self.unpriced_turns += 1
        else:
            self.cost += result.cost

    async def run(self, line: str) -> None:
        """Run the command ``line`` (it starts with ``/``; ``/exit`` is the caller's)."""
        name = line.split(maxsplit=1)[0].lower()
        if name == "/help":
            for command, what in _HELP:
                self.printer.info(f"{command:<7} {what}")
        elif name == "/cost":
            self.printer.info(self._cost_line())
        elif name == "/undo":
            await self._undo()
        else:
            self.printer.error(f"unknown command {name}: /help lists the commands")

    def _cost_line(self) -> str:
        usage = self.usage
        tokens = (
            f"{usage.prompt_tokens} in + {usage.completion_tokens} out = {usage.total_tokens} "
            f"tokens in {self.turns} turn{'' if self.turns == 1 else 's'}"
        )
        if self.turns == 0:
            cost = "$0.000000"
        elif self.unpriced_turns == self.turns:
            cost = "unknown (the model has no known price)"
        elif self.unpriced_turns:
            cost = f"at least {_dollars(self.cost)} ({self.unpriced_turns} turns unpriced)"
        else:
            cost = _dollars(self.cost)
        return f"this chat: {tokens}; cost {cost}"

    async def _undo(self) -> None:
        if self.workspace is None:
            self.printer.error("/undo works with --tools builtin: nothing to undo")
            return
        import robota.tools  # noqa: PLC0415 - only with builtin tools

        try:
            undone = await asyncio.to_thread(robota.tools.undo, workspace=self.workspace)
        except (robota.tools.UndoError, ValueError) as error:
            self.printer.error(f"/undo: {one_line(str(error))}")
            return
        if undone is None:
            self.printer.note("nothing to undo")
            return
        self.printer.note(f"undone: {undone.description}")
