"""The execution's retries and model fallback (issue 28; S23, S29, S30, S34, S39, S40).

:class:`AttemptsMixin` holds what :class:`~robota.core.execution._loop.Execution` does between
two attempts of one round's model call — the decisions themselves are :class:`._retry.ModelCalls`'s:

* a failed attempt that is tried again is discarded, not committed (S34), its usage counted
  (S29) and, in a journaled run, settled as a failure before the next attempt starts (S40);
* the retry or switch is announced, and its backoff ends at the run's signal (S23);
* a switch re-projects the run for the new model (S18, S13) and later rounds stay on it (S30);
* a resumed run continues on the chain entry its latest settled call used (S40).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from robota.core._abort import is_abort
from robota.core._cancel import AbortGuard
from robota.core._emit import EventEmitter
from robota.core._errors import ProviderError, RobotaError
from robota.core._events import EventNames
from robota.core._history import PendingAssistant
from robota.core._messages import AssistantMessage
from robota.core._plugins import RunInfo
from robota.core._pricing import estimate_cost
from robota.core._usage import Usage
from robota.core.execution._fallback import candidate_refusal
from robota.core.execution._loop_state import LoopState
from robota.core.execution._recovery import Recovery
from robota.core.execution._retry import (
    ModelCandidate,
    Retry,
    Retrying,
    Switch,
    announce,
    resume_mismatch,
)
from robota.core.execution._structured import choose_output_transport
from robota.core.providers._contract import ChatRequest

__all__ = ["NO_USAGE", "AttemptsMixin", "add_usage", "charged_cost"]

NO_USAGE: Final = Usage()  # a run's usage before its first response
_NOTHING_USED: Final = Usage()  # a refused request's: attested, nothing generated
_UNREPORTED: Final = Usage(partial=True)
"""Added for a message without usage: the run's total is then partial (S29)."""


def add_usage(total: Usage, usage: Usage | None) -> Usage:
    """``total`` plus ``usage``; a missing one makes the total partial (S29)."""
    # The first response's usage is the run's so far as it is: no second object per run.
    usage = usage or _UNREPORTED
    return usage if total is NO_USAGE else total + usage


def charged_cost(
    charges: Iterable[tuple[AssistantMessage, str]], model: str, unattested: bool
) -> float | None:
    """The USD cost of a run's model calls, each priced where it ran (S30); ``None`` if unknown.

    ``charges``: each reply (discarded attempts' too) with the provider that answered it;
    ``model``: for a reply that names none. Any unpriced model, or ``unattested`` (a dispatched
    call whose usage was not reported or not attestable), makes the cost unknown: never a guess.
    """
    if unattested:
        return None
    total = 0.0
    for message, by in charges:
        if message.usage is None:
            continue  # never dispatched (a diagnostic): nothing was charged
        cost = estimate_cost(message.usage, message.model or model, provider=by)
        if cost is None:
            return None
        total += cost
    return total


class AttemptsMixin(LoopState):
    """Execution's work between two attempts of a model call (see the module docstring)."""

    if not TYPE_CHECKING:
        # No __dict__ at run time (Execution keeps slots); the checker reads the names below as
        # the instance attributes Execution's slots hold.
        __slots__ = ()

    def _refusal(self, request: ChatRequest) -> Callable[[ModelCandidate], str | None]:
        settings = self.settings
        return functools.partial(
            candidate_refusal,
            tools_offered=bool(request.tools),
            native_tools=settings.native_tools,
            media_messages=self._store.media_messages,
        )

    async def _discard(
        self,
        pending: PendingAssistant,
        call_id: str,
        dispatched: bool,
        step: Retry | Switch,
        failure: RobotaError,
    ) -> None:
        """Drop a failed attempt that is tried again; count and record what it cost (issue 28).

        S34: its partial reply never enters history — the retried one replaces it through the
        single commit path. Its usage still counts (S29), and a journaled run settles it as a
        failure before the next attempt starts (S40), marked ``retried`` so a resume knows it is
        not in history.
        """
        message = pending.discard()
        if (
            message.usage is None
            and isinstance(failure, ProviderError)
            and failure.status is not None
            and failure.status >= 400
            and not message.content
            and not message.tool_calls
        ):
            # S29: the vendor refused the request with an error status (a 429, a 503) before
            # producing anything; such a response generated nothing and carries no charge, so
            # it is recorded as used nothing — not as an unknown charge that would make the
            # run's usage partial and its cost unknown. Journaled so, a resume counts it alike.
            message = replace(message, usage=_NOTHING_USED)
        self._usage = add_usage(self._usage, message.usage)
        if self._budget is not None:
            # S31: a discarded attempt was a model call; what it used counts. A limit it passed
            # stops the next attempt before it is sent (Budget.admit_call).
            self._budget.settled(message, dispatched, provider=self.settings.provider.name)
        if dispatched and (message.usage is None or message.usage.partial):
            self._unattested = True  # S29: a charge nobody can state: the run's cost is unknown
        self._charges = (*self._charges, (message, self.settings.provider.name))
        if self._journal is not None:
            by = self._answered_by()
            if isinstance(step, Switch):
                by["fallback"] = step.origin  # the entry this attempt went to
            await self._journal.model_call_settled(
                call_id, message, "failure", dispatched, retried=True, **by
            )
        self._record_effort(dispatched)

    async def _next_attempt(self, guard: AbortGuard, again: Retrying) -> AssistantMessage | None:
        """Report the retry or switch, wait its backoff; an abort meanwhile ends the round (S23).

        Returns the interrupted (empty) reply committed when the run's signal aborted the wait,
        else ``None``: the next attempt follows. A cancelled task commits that reply too, then
        the cancellation propagates.
        """
        calls = self._calls
        assert calls is not None
        emitter = self.emitter.child("round", str(again.round))
        announce(emitter, self._notify, calls, again)
        step = again.step
        delay = step.delay if isinstance(step, Retry) else 0.0
        try:
            await guard.call(lambda: calls.wait(delay))
        except asyncio.CancelledError:
            # The run's task was cancelled: as mid-call, the round's reply is committed
            # interrupted before the cancellation propagates (S34: always committed).
            self._interrupted_round(emitter)
            raise
        except Exception as aborted:
            if not is_abort(aborted, self._signal):
                raise
            return self._interrupted_round(emitter)
        return None

    def _interrupted_round(self, emitter: EventEmitter) -> AssistantMessage:
        # S34: the discarded attempt left the round without a reply; an empty interrupted one is
        # committed through the single commit path.
        cut = self._store.begin_assistant(model=None).commit(interrupted=True)
        if self._journal is not None:
            self._journal.keep(cut)  # saved with the checkpoint, like a diagnostic
        if emitter.enabled:
            emitter.emit(EventNames.ASSISTANT_COMMITTED, {"message": cut})
        return cut

    async def _switch(self, to: ModelCandidate) -> None:
        # S30: later rounds stay on the model that answered; the run is re-projected for it —
        # its output transport (S18) and context window (S13) are asked of the new model.
        settings = self.settings = replace(
            self.settings, provider=to.provider, model=to.model, context_window=to.context_window
        )
        self._info = RunInfo(self.run_id, settings.agent_name, to.provider.name, to.model)
        if settings.structured is not None:
            self._transport = choose_output_transport(to.provider, to.model)
        self._window = None
        await self._resolve_window()

    def _resume_model(self, recovery: Recovery, *, handed_on: bool = False) -> None:
        """S40: continue on the chain entry the latest settled call used; never guess another.

        ``handed_on``: that call was made by an agent the run handed off from (issue 29); the
        active agent's own chain starts at its first entry, as after a live handoff.
        """
        if recovery.answered:
            self._answered = {**self._answered, **recovery.answered}
        for message, by in recovery.discarded:
            self._usage = add_usage(self._usage, message.usage)
            self._charges = (*self._charges, (message, by or self.settings.provider.name))
        provider, index = recovery.answered_by
        if not index or handed_on:
            return
        calls = self._calls
        if calls is None:
            raise resume_mismatch(self.run_id, index, provider)
        to = calls.resume_at(index, provider, self.run_id)
        self.settings = replace(
            self.settings, provider=to.provider, model=to.model, context_window=to.context_window
        )
        self._info = RunInfo(self.run_id, self.settings.agent_name, to.provider.name, to.model)

    def _answered_by(self) -> dict[str, Any]:
        # S40: which chain entry a settled call used, so a resume continues on it.
        calls = self._calls
        return {
            "provider": self.settings.provider.name,
            "fallback": calls.index if calls is not None else 0,
        }
