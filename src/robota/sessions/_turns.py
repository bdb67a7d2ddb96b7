"""A turn's record from how its run ended: returned, raised, or refused before it began.

The one place a run's outcome becomes a :class:`~robota.sessions.TurnSaved`: its status
(:data:`~robota.sessions.TurnStatus`), the messages it keeps, and the usage and cost it adds to
the session's totals. Also the run options a turn refuses, since the session decides them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, Literal

from robota.core import (
    AbortError,
    AssistantMessage,
    ConfigurationError,
    HookBlockedError,
    Message,
    RunResult,
    Usage,
    estimate_cost,
)
from robota.sessions._records import TurnSaved

__all__ = ["ended_turn", "refuse_session_owned", "saved_turn", "spent"]


def saved_turn(number: int, result: RunResult[Any], execution_id: str | None) -> TurnSaved:
    """The record of a turn whose run returned ``result`` (complete or interrupted)."""
    status: Literal["complete", "interrupted"] = (
        "complete" if result.status == "complete" else "interrupted"
    )
    return TurnSaved(
        number, status, result.messages, result.usage, result.cost, execution_id, time.time()
    )


def ended_turn(
    number: int, exc: BaseException, added: tuple[Message, ...], execution_id: str | None
) -> TurnSaved:
    """The record of a turn whose run raised ``exc`` after adding ``added`` to history."""
    if isinstance(exc, HookBlockedError) and exc.event == "UserPromptSubmit" and not added:
        # S22: the prompt was refused before it entered history and before any model call.
        return TurnSaved(number, "abandoned", (), Usage(), None, execution_id, time.time())
    interrupted = isinstance(exc, (asyncio.CancelledError, AbortError))
    usage, cost = spent(added)
    return TurnSaved(
        number,
        "interrupted" if interrupted else "failed",
        added,
        usage,
        cost,
        execution_id,
        time.time(),
        error="" if interrupted else f"{type(exc).__name__}: {exc}",
    )


def spent(added: tuple[Message, ...]) -> tuple[Usage, float | None]:
    """The usage and cost of the model calls a run that raised had made (the totals count them).

    Read from the responses it committed, as the run's own result would have summed them: a
    call that was answered but reported no or partial usage makes the cost unknown, and so
    does a model without a price (never a guess).
    """
    usage, cost = Usage(), 0.0
    known = True
    for message in added:
        if not isinstance(message, AssistantMessage) or message.model is None:
            continue  # not a response; or a diagnostic no call produced (S39)
        if message.usage is None or message.usage.partial:
            known = False
        if message.usage is None:
            continue
        usage = usage + message.usage
        price = estimate_cost(message.usage, message.model)
        if price is None:
            known = False
        else:
            cost += price
    return usage, cost if known else None


def refuse_session_owned(options: Mapping[str, Any], method: str) -> None:
    """Refuse the run options a session decides itself (each turn's id and conversation)."""
    if "execution_id" in options:
        raise ConfigurationError(
            f"{method} chooses each turn's execution id (<session id>/<turn>); do not pass "
            "execution_id="
        )
    if "fresh_conversation" in options:
        raise ConfigurationError(
            f"{method} runs each turn in the session's conversation (S34); do not pass "
            "fresh_conversation= (run the agent itself for a run apart from the session)"
        )
