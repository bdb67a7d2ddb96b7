"""A session's pending turn: resumed after a crash, or suspended waiting for answers (S40).

A journaled turn is recorded as started before its run (``TurnStarted``), so a crash leaves it
pending; a run that suspends (a tool's or an approver's outside request) leaves it pending too,
until its requests are answered (:meth:`Session.respond`) and it is resumed. These helpers are
the resume itself, shared by :meth:`Session.resume`, :meth:`Session.resume_stream`, ``open`` and
``run``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from robota.core import Agent, OutsideRequest, RunResult, SystemMessage, Usage
from robota.sessions._errors import SessionStateError
from robota.sessions._records import SessionEntry, TurnSaved, TurnStarted
from robota.sessions._state import SessionState
from robota.sessions._turns import saved_turn

__all__ = ["Resumer", "resume_pending", "suspended_error"]

Resumer = Callable[[str], Awaitable[RunResult[Any]]]
"""Continues an execution by id: ``agent.resume``, or a streamed continuation."""


async def resume_pending(
    agent: Agent,
    state: SessionState,
    append: Callable[[SessionEntry], Awaitable[None]],
    resume: Resumer | None = None,
) -> RunResult[Any]:
    """Resume ``state``'s pending turn; its result — ``suspended`` included — saved unless so.

    The caller checked there is a pending turn and holds the session's lease.
    """
    pending = state.pending
    assert pending is not None  # the callers checked
    session_id = state.header.id
    if agent.journal is None:
        raise SessionStateError(
            f"session {session_id!r} has turn {pending.turn} interrupted mid-run as execution "
            f"{pending.execution_id!r}; open it with an agent built with the journal that "
            "ran it (Agent(journal=...)) to resume that turn",
            code="turn_pending",
        )
    if not await agent.journal.read(pending.execution_id):
        # The run never reached the journal: no model call or effect happened (S40).
        await append(
            TurnSaved(
                pending.turn, "abandoned", (), Usage(), None, pending.execution_id, time.time()
            )
        )
        return RunResult(
            "", "interrupted", Usage(), (), pending.execution_id, stop_reason="interrupted"
        )
    # S35: continuing an interrupted execution keeps the prompt it started with.
    head = (SystemMessage(pending.system_prompt),) if pending.system_prompt else ()
    await agent.replace_history(
        (*head, *state.history),
        reported_usage=state.reports_current,
        inject_system_prompt=False,  # an execution that began with no prompt keeps none
    )
    result: RunResult[Any] = await (resume or agent.resume)(pending.execution_id)
    if result.status != "suspended":
        await append(saved_turn(pending.turn, result, pending.execution_id))
    return result


def suspended_error(
    session_id: str, pending: TurnStarted, requests: tuple[OutsideRequest, ...]
) -> SessionStateError:
    """The refusal of a new turn (or a plain resume) while the pending one waits for answers."""
    return SessionStateError(
        f"turn {pending.turn} of session {session_id!r} is suspended, waiting for outside "
        f"responses to {[r.id for r in requests]}; answer each with "
        "session.respond(request_id, response), then call session.resume() (or "
        "session.resume_stream())",
        code="turn_suspended",
    )
