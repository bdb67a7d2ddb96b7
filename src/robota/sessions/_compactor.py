"""Compacting one session under its lease (S39): the trigger, the hook, the summary call.

:class:`Compactor` runs inside a turn (``Session.run`` → ``_before_turn``) or ``compact()``,
with the session's lease and its agent held. It appends through the session (``append``) and
reads the session's folded state (``state``) after each append.

The summary call on the agent (S39, S40): a run of its own with the policy's instruction as the
system head, the transcript as its input, ``tool_choice="none"`` and ``lifecycle_hooks=False``
(no ``UserPromptSubmit``/``Stop`` hook fires: it is not a user's turn). Its usage and cost are
the compaction record's. With a journaled agent the run is the execution
``"<session id>/compact-<n>"``, recorded as pending (:class:`CompactionStarted`) before it runs;
after a crash the next turn resumes that execution — a summary already answered is returned
from the journal, no model call repeated — or, when the journal holds nothing of it, runs it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, final

from robota.core import (
    AbortSignal,
    Agent,
    HookResult,
    RunResult,
    SystemMessage,
    Usage,
    UsageLimits,
    UserMessage,
    abort_error_from_reason,
    estimate_message_tokens,
    estimate_tools_tokens,
    get_logger,
)
from robota.sessions._compaction import (
    CompactionPolicy,
    CompactionRequest,
    plan_summary,
    replaced_messages,
)
from robota.sessions._errors import SessionStateError
from robota.sessions._limits import ceiling
from robota.sessions._records import (
    Compacted,
    CompactionStarted,
    CompactionTrigger,
    SessionEntry,
)
from robota.sessions._state import SessionState, summary_message

__all__ = ["Compactor"]

_log = get_logger("robota.sessions")
_EVENT: Final = "PreCompact"


@final
class Compactor:
    """One session's compaction steps; built per turn (cheap), used under the lease."""

    __slots__ = ("_agent", "_append", "_limits", "_session_id", "_signal", "_state")

    def __init__(
        self,
        agent: Agent,
        session_id: str,
        append: Callable[[SessionEntry], Awaitable[None]],
        state: Callable[[], SessionState],
        signal: AbortSignal | None,
        limits: UsageLimits | None = None,
    ) -> None:
        self._limits = limits  # the session's (S31): a summary call spends from them too
        self._agent = agent
        self._session_id = session_id
        self._append = append
        self._state = state
        self._signal = signal

    async def before_turn(self, policy: CompactionPolicy | None, content: Any) -> None:
        """Finish a compaction a crash left pending, then compact while above the mark."""
        pending = self._state().compacting
        if pending is not None and self._agent.journal is not None:
            await self.finish(pending, policy or CompactionPolicy())
        if policy is None:
            return
        # Each compaction replaces at least one more turn, so this ends.
        for _ in range(len(self._state().active) + 1):
            if not await self._over(policy, content):
                return
            if await self.compact(policy, "auto", "", policy.keep_recent_turns) is None:
                return

    async def _over(self, policy: CompactionPolicy, content: Any) -> bool:
        state = self._state()
        agent = self._agent
        await agent.replace_history(state.history, reported_usage=state.reports_current)
        usage = agent.context_usage()
        window = usage.window
        if window is None:
            window = (await agent.resolve_context_window()).tokens
        limit = policy.limit(window)
        if limit is None:
            return False  # S13: an unknown window has no share to pass
        # S39: the request as the model would be sent it next — history (S31 rule), the tool
        # schemas (all of them: a deferred schema counts too, an overestimate) and the input.
        tokens = (
            usage.tokens
            + estimate_tools_tokens(tool.spec() for tool in agent.tools)
            + estimate_message_tokens(UserMessage(content))
        )
        return tokens > limit

    async def compact(
        self,
        policy: CompactionPolicy,
        trigger: CompactionTrigger,
        custom: str,
        keep: int,
    ) -> Compacted | None:
        """One compaction of the oldest turns, leaving ``keep``; ``None`` when none happened."""
        state = self._state()
        last = len(state.active) - keep
        start = state.compacted
        if last <= start:
            return None  # nothing older than the kept turns is left to replace
        verdict = await self._hook(trigger, custom)
        if verdict.blocked:
            _log.info(
                "a PreCompact hook vetoed the compaction",
                session_id=self._session_id,
                reason=verdict.reason,
            )
            return None
        number = state.next_compaction
        previous = state.compactions[-1] if state.compactions else None
        candidates = state.active[start:last]
        header = policy.summary_header
        if verdict.summary:
            return await self._save(number, last, verdict.summary, header, "hook", trigger, None)
        if policy.summarizer is not None:
            request = CompactionRequest(
                self._session_id,
                replaced_messages(
                    candidates, None if previous is None else summary_message(previous)
                ),
                policy.instruction,
                custom,
                trigger,
            )
            text: object = await policy.summarizer(request)  # a caller's: anything may come
            if not isinstance(text, str) or not text.strip():
                raise SessionStateError(
                    f"the compaction summarizer of session {self._session_id!r} returned "
                    f"{text!r}; it must return the summary text",
                    code="compaction_failed",
                )
            return await self._save(number, last, text.strip(), header, "summarizer", trigger, None)
        window = self._agent.context_usage().window
        count, transcript = plan_summary(
            candidates,
            previous=None if previous is None else previous.summary,
            upto=None,
            budget=policy.request_budget(window),
            instruction=policy.instruction,
            custom_instructions=custom,
        )
        execution_id = None
        if self._agent.journal is not None:
            execution_id = f"{self._session_id}/compact-{number}"
            # S40: recorded before the call, so a crash leaves it pending, to be resumed.
            await self._append(
                CompactionStarted(
                    number,
                    execution_id,
                    start + count,
                    policy.instruction,
                    custom,
                    trigger,
                    time.time(),
                )
            )
        result = await self._call(policy.instruction, transcript, execution_id)
        return await self._save(
            number, start + count, _summary_of(result), header, "model", trigger, result
        )

    async def finish(self, pending: CompactionStarted, policy: CompactionPolicy) -> None:
        """Resume (or, when the journal holds nothing of it, run) a pending compaction."""
        journal = self._agent.journal
        assert journal is not None  # the caller checked
        state = self._state()
        if await journal.read(pending.execution_id):
            # S40: a continuation keeps its own head; an answered call is not made again.
            await self._agent.replace_history((SystemMessage(pending.instruction),))
            result: RunResult[Any] = await self._agent.resume(
                pending.execution_id, signal=self._signal, lifecycle_hooks=False
            )
        else:
            previous = state.compactions[-1] if state.compactions else None
            start = state.compacted
            _, transcript = plan_summary(
                state.active[start:],
                previous=None if previous is None else previous.summary,
                upto=pending.upto - start,
                budget=policy.request_budget(self._agent.context_usage().window),
                instruction=pending.instruction,
                custom_instructions=pending.custom_instructions,
            )
            result = await self._call(pending.instruction, transcript, pending.execution_id)
        await self._save(
            pending.number,
            pending.upto,
            _summary_of(result),
            policy.summary_header,
            "model",
            pending.trigger,
            result,
        )

    async def _call(
        self, instruction: str, transcript: str, execution_id: str | None
    ) -> RunResult[Any]:
        agent = self._agent
        state = self._state()
        limits = self._limits
        if limits is not None:  # S31: what the session's totals leave, under the agent's own
            limits = ceiling(limits, state.limit_usage, state.cost, agent.limits)
        await agent.replace_history((SystemMessage(instruction),))
        if execution_id is None:
            return await agent.run(
                transcript,
                tool_choice="none",
                lifecycle_hooks=False,
                signal=self._signal,
                limits=limits,
            )
        return await agent.run(
            transcript,
            tool_choice="none",
            lifecycle_hooks=False,
            signal=self._signal,
            execution_id=execution_id,
            limits=limits,
        )

    async def _save(
        self,
        number: int,
        upto: int,
        summary: str,
        header: str,
        source: Any,
        trigger: CompactionTrigger,
        result: RunResult[Any] | None,
    ) -> Compacted:
        entry = Compacted(
            number,
            upto,
            len(self._state().active),
            summary,
            header,
            source,
            trigger,
            Usage() if result is None else result.usage,
            # A hook's or summariser's summary made no model call of the session's.
            0.0 if result is None else result.cost,
            None if result is None else result.execution_id,
            time.time(),
        )
        await self._append(entry)
        return entry

    async def _hook(self, trigger: CompactionTrigger, custom: str) -> HookResult:
        runner = self._agent.hooks
        if runner is None or not runner.configured(_EVENT):
            return HookResult()
        # S22: awaited and inspected — a deny vetoes this compaction, a supplied summary
        # (hookSpecificOutput.summary) replaces the model's; a failed hook is advisory.
        return await runner.run(
            _EVENT,
            {
                "hook_event_name": _EVENT,
                "session_id": self._session_id,
                "trigger": trigger,
                "custom_instructions": custom,
            },
            signal=self._signal,
        )


def _summary_of(result: RunResult[Any]) -> str:
    if result.status == "interrupted":
        raise abort_error_from_reason("the compaction's summary call was interrupted")
    text = result.text.strip()
    if result.status != "complete" or result.stop_reason != "end_turn" or not text:
        raise SessionStateError(
            f"the compaction's summary call ended with status {result.status!r}, stop reason "
            f"{result.stop_reason!r} and {'no text' if not text else 'its text'}; the turns "
            "were not compacted. Check the model (or give CompactionPolicy(summarizer=...)), "
            "or open the session with compaction=None",
            code="compaction_failed",
        )
    return text
