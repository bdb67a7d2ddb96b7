"""A served, journaled agent whose asks survive the server (issue 31, S40), for tests.

``durable_app(directory, turns)`` builds the app: a session store and an execution journal in
SQLite files under ``directory``, one agent ``a`` whose ``shout`` tool needs a person's approval
and records each effect as a line of ``effects.txt``. Run as a script (``python durable_app.py
DIRECTORY PHASE``) it serves the app on 127.0.0.1 at a free port and prints ``serving at URL``:
phase ``1`` scripts the model's tool call, phase ``2`` only what follows it (a restarted server
must repeat no model call).
"""

from __future__ import annotations

import pathlib
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette

import robota
from robota.host import SQLiteJournal
from robota.serve import HttpApprover, create_app, serve
from robota.sessions import SQLiteSessionStore
from robota.testing import ScriptedProvider

PHASES: dict[str, list[Any]] = {
    "1": [[("shout", {"text": "hey"})]],
    "2": ["done", "and again"],
}


def durable_app(
    directory: pathlib.Path,
    turns: list[Any],
    wrap: Callable[[robota.ExecutionJournal], robota.ExecutionJournal] | None = None,
    before_effect: Callable[[], Awaitable[None]] | None = None,
    **options: Any,
) -> Starlette:
    """The app; see the module docstring. ``wrap``: a test's wrapper of its journal;
    ``before_effect``: awaited by ``shout`` before its effect."""
    journal: robota.ExecutionJournal = SQLiteJournal(str(directory / "journal.db"))
    if wrap is not None:
        journal = wrap(journal)
    effects = directory / "effects.txt"

    @robota.tool
    async def shout(text: str) -> str:
        """Say it louder."""
        if before_effect is not None:
            await before_effect()
        with effects.open("a", encoding="utf-8") as out:
            out.write(text + "\n")
        return text.upper()

    provider = ScriptedProvider(turns)

    def factory(approver: HttpApprover) -> robota.Agent:
        gate = robota.PermissionGate(robota.PermissionPolicy(ask=["shout"]), approver=approver)
        return robota.Agent("m", provider=provider, tools=[shout], tool_gate=gate, journal=journal)

    store = SQLiteSessionStore(str(directory / "sessions.db"))
    return create_app({"a": factory}, sessions=store, **options)


def main() -> None:
    directory, phase = pathlib.Path(sys.argv[1]), sys.argv[2]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"serving at http://127.0.0.1:{sock.getsockname()[1]}", file=sys.stderr, flush=True)
    serve(durable_app(directory, PHASES[phase]), sockets=[sock], log_level="warning")


if __name__ == "__main__":
    main()
