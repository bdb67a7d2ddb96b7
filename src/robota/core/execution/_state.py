"""The execution's own type, below the loop that drives it (issue 32 item 2).

:class:`~robota.core.execution._loop.Execution` hands itself to the machinery it drives — the
run's handoffs (:mod:`._handoffs`) read and advance its state when a transfer is taken.
:class:`ExecutionState` is the name that machinery uses, one layer down: ``Execution`` is its
one subclass (it is final, and nothing else derives from this class), and the state those
modules read is declared here with its types, so they name the execution without importing the
loop that imports them. It holds no behaviour; the slots stay on ``Execution``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robota.core._emit import EventEmitter
    from robota.core._history import ConversationStore
    from robota.core._messages import AssistantMessage, Message
    from robota.core._models import ContextWindow
    from robota.core._plugins import RunInfo
    from robota.core.execution._retry import ModelCalls
    from robota.core.execution._settings import ExecutionSettings
    from robota.core.execution._structured import OutputTransport
    from robota.core.execution._subagents import SubagentLedger
    from robota.core.tools._executor import ToolExecutionService, ToolGate

__all__ = ["ExecutionState"]


class ExecutionState:
    """One run's execution, as the machinery below the loop reads it: an ``Execution``."""

    if not TYPE_CHECKING:
        __slots__ = ()

    if TYPE_CHECKING:  # Execution's state, set in Execution.__init__
        settings: ExecutionSettings
        run_id: str
        emitter: EventEmitter
        ceiling: ToolGate | None
        siblings: asyncio.Lock | None
        subagents: SubagentLedger | None
        _added: list[Message]
        _answered: dict[str, str]
        _calls: ModelCalls | None
        _charges: tuple[tuple[AssistantMessage, str], ...]
        _info: RunInfo
        _settings_set: bool
        _store: ConversationStore
        _tools: ToolExecutionService
        _transport: OutputTransport
        _unattested: bool
        _unavailable_streak: int
        _window: ContextWindow | None

        async def _resolve_window(self) -> None: ...
