"""Signalling a child that leads its own process group (S09), shared by ``Grep`` and ``Bash``.

Both tools start their child through :func:`robota.host.spawn` with ``process_group=0`` (or in
its own session once children are isolated), so the child's pid is its group id and one
``killpg`` reaches everything it started that stayed in the group.
"""

from __future__ import annotations

import contextlib
import os
import signal as signals
from typing import Protocol

__all__ = ["GroupLeader", "kill_group"]


class GroupLeader(Protocol):
    """What :func:`kill_group` reads of a started child (an asyncio ``Process``)."""

    @property
    def pid(self) -> int:
        """The child's pid, which is its group id."""
        ...

    @property
    def returncode(self) -> int | None:
        """``None`` until the child has been reaped."""
        ...


def kill_group(process: GroupLeader, sig: int = signals.SIGKILL) -> bool:
    """Send ``sig`` to the group ``process`` leads; ``False`` if nothing was signalled.

    Nothing is sent once the leader has been reaped: its pid, and so the group id, may then
    belong to an unrelated process (the same rule as :func:`robota.host.signal_group`). Callers
    keep the leader alive until the group has been killed.
    """
    if process.returncode is not None:
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)
        return True
    return False
