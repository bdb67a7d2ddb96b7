"""A round's tool batch (S34, S37, S39, S40) and the guards before it runs.

A mixin of :class:`~robota.core.execution._loop.Execution`. Before the batch: the identical-input
guard and the usage limits (a refused batch is answered in history as not dispatched unless a
journal keeps the recovery authority). The batch runs on the tool execution service; every
committed call gets its answer whatever ended the batch, and once results would pass the
tool-result context budget the rest become bounded notices.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from robota.core._context import estimate_message_tokens
from robota.core._emit import EventEmitter
from robota.core._errors import ExecutionControlError, RobotaError, SameToolInputLoopError
from robota.core._events import EventNames
from robota.core._messages import AssistantMessage, ToolCall
from robota.core.execution._guards import (
    TOOL_RESULT_BUDGET,
    omitted_result_notice,
)
from robota.core.execution._loop_state import LoopState
from robota.core.tools._outcomes import ToolCallOutcome, interrupted, not_dispatched

__all__ = ["ToolBatchMixin"]


class ToolBatchMixin(LoopState):
    """The tool batch of a round of :class:`Execution`, and its guards."""

    if not TYPE_CHECKING:
        __slots__ = ()

    def _check_same_inputs(self, calls: tuple[ToolCall, ...]) -> None:
        offending = self._same_inputs.admit(calls)
        if offending is None:
            return
        limit = self._same_inputs.limit
        if self._journal is None:
            # S39: without a journal the batch is answered in history; a journaled run keeps its
            # durable recovery authority instead of inventing transcript-only settlements.
            self._refuse_batch(
                calls,
                f"{offending.name!r} was called with identical input more than {limit} times",
            )
        raise SameToolInputLoopError(
            f"tool {offending.name!r} was called with byte-identical input more than {limit} "
            "times in this run; the batch was not dispatched",
            tool_name=offending.name,
            limit=limit or 0,
        )

    def _check_limit(self, message: AssistantMessage, error: RobotaError | None) -> None:
        """Raise a usage-limit stop (S31), answering the response's calls first.

        Without a journal each call is answered as not dispatched (S34, S39: as for the
        identical-input guard); a journaled run keeps its durable recovery authority.
        """
        if error is None or message.state == "interrupted":
            return  # an interrupted reply's calls are answered already, and its abort wins
        if self._journal is None and message.tool_calls:
            self._refuse_batch(message.tool_calls, error.message)
        raise error

    def _refuse_batch(self, calls: tuple[ToolCall, ...], reason: str) -> None:
        # The calls stay in history with explicit "not dispatched" answers, so a later turn never
        # sends a call without its result (S39).
        for call in calls:
            self._store.append(not_dispatched(call, reason, self.settings.texts).to_message())

    async def _tool_round(
        self, calls: tuple[ToolCall, ...], pending: tuple[int, ...] | None = None
    ) -> list[ToolCall]:
        """Run the batch; return the calls that named unavailable tools (S37).

        ``pending``: on a continuation (S40), the calls history does not answer yet; the others
        are already answered, and a durable settlement among the pending ones is reused.
        """
        journal = self._journal
        outcomes: list[ToolCallOutcome | None] = [None] * len(calls)
        answered: set[int] = set()
        if pending is not None:
            answered = set(range(len(calls))) - set(pending)
            assert journal is not None
            for index in pending:
                outcomes[index] = journal.restored(index, calls[index])
        round_emitter = self.emitter.child("round", str(self._rounds))
        for index in answered:
            # A placeholder: already in history.
            outcomes[index] = interrupted(calls[index], self.settings.texts)
        try:
            await self._tools.run_batch(
                calls,
                outcomes,
                signal=self._signal,
                emitter=round_emitter,
                execution_id=self.run_id,
                round=self._rounds,
                notify=self._notify,
                journal=journal,
                trace=self._trace,
                attempt=self._attempt,
                run=self,  # issue 29: what a sub-agent's tool body inherits
                ceiling=self.ceiling,
            )
        except BaseException as error:
            if journal is not None and isinstance(error, ExecutionControlError):
                # S40: the journal holds what settled; nothing transcript-only is invented, and
                # calls that did not start stay pending.
                raise
            self._record_results(self._answers(calls, outcomes, answered), round_emitter)
            raise
        settled = self._answers(calls, outcomes, answered)
        self._record_results(settled, round_emitter)
        return [o.call for o in settled if o.status == "unavailable" and o.call is not None]

    def _answers(
        self,
        calls: tuple[ToolCall, ...],
        outcomes: list[ToolCallOutcome | None],
        answered: set[int],
    ) -> list[ToolCallOutcome]:
        # Every committed call gets its answer, whatever ended the batch (S34, S38).
        return [
            o if o is not None else interrupted(calls[i], self.settings.texts)
            for i, o in enumerate(outcomes)
            if i not in answered
        ]

    def _record_results(self, outcomes: list[ToolCallOutcome], round_emitter: EventEmitter) -> None:
        # S39 tool-result context budget: once results would push the context past its budget,
        # the remaining ones become bounded notices; outcome and source stay on every record.
        window = self._context_window()
        # An unknown window sets no budget (S13): nothing is omitted against an assumed size.
        budget = float("inf") if window is None else TOOL_RESULT_BUDGET * window
        used = self._store.context.effective_tokens(self.settings.context_floor)
        over = False
        for outcome in outcomes:
            if outcome.executed:
                self._executed += 1
            message = outcome.to_message()
            size = estimate_message_tokens(message)
            if over or used + size > budget:
                over = True
                notice = omitted_result_notice(outcome, self.settings.texts)
                message = replace(message, content=notice, parts=())
                size = estimate_message_tokens(message)
                if round_emitter.enabled:
                    round_emitter.emit(
                        EventNames.TOOL_RESULT_OMITTED,
                        {
                            "provider_call_id": message.tool_call_id,
                            "tool_name": message.tool_name,
                            "status": outcome.status,
                            "source": outcome.source,
                            "content": outcome.result.content,
                        },
                    )
            self._store.append(message)
            used += size
