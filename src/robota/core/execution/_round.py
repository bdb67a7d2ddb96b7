"""The turns of a run (S18, S22, S37, S39): rounds until the model ends its turn.

A mixin of :class:`~robota.core.execution._loop.Execution`. A turn is a loop of rounds — a
provider call and, when the reply asks for tools, its batch — ended by a reply with text and no
tool call, by the run's signal, or by a guard: the round budget or an empty reply ask for exactly
one forced summary call without tools (S39), unavailable tools in consecutive rounds for one
forced final call (S37). Around the turns: the structured-output validation and its retry turns
(S18), and the ``Stop`` hooks that may continue a finished turn (S22). The requests themselves
are built here too, the structured-output instruction included.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, cast

from robota.core._cancel import AbortGuard
from robota.core._errors import (
    EmptyCompletionError,
    ProviderError,
    StructuredOutputError,
)
from robota.core._messages import AssistantMessage, Message, ToolMessage, UserMessage
from robota.core._texts import render
from robota.core.execution._guards import UNAVAILABLE_TOOL_ROUNDS, describe_calls
from robota.core.execution._lifecycle import stop_hooks
from robota.core.execution._loop_state import LoopState
from robota.core.execution._recovery import Recovery
from robota.core.execution._result import RunStatus, StopReason
from robota.core.execution._retry import Retrying
from robota.core.execution._structured import InstructedMessages
from robota.core.providers._capabilities import omit_unsupported_media
from robota.core.providers._contract import ChatRequest, ToolChoice, ToolSpec

if TYPE_CHECKING:
    from robota.core.execution._handoffs import RunHandoffs
    from robota.core.execution._state import ExecutionState

__all__ = ["RoundMixin"]


class RoundMixin(LoopState):
    """The turn loop, the forced calls and the requests of :class:`Execution`."""

    if not TYPE_CHECKING:
        __slots__ = ()

    if TYPE_CHECKING:  # not in LoopState: ._handoffs imports the attempts mixin, a LoopState
        handoffs: RunHandoffs | None

    async def _loop(self, recovery: Recovery | None = None) -> RunStatus:
        """The turns of a run; a continuation's first one picks up from ``recovery`` (S40)."""
        structured = self.settings.structured
        with AbortGuard(self._signal) as guard:
            while True:
                if recovery is not None:
                    status = await self._continue(guard, recovery)
                    recovery = None
                else:
                    status = await self._turn(guard)
                if structured is None or status != "complete" or self._stop == "context_limit":
                    if await self._stop_continues(status):
                        continue
                    return status
                # S18: validate the final text on every run; retry with the issues and schema.
                # A continuation validates the settled reply it resumed from the same way, so a
                # reply that settled before the process died is not asked for again (S40).
                saved, value, issues = structured.spec.validate(self._final_text())
                if not issues:
                    self._output_value = value
                    self._output_json = saved
                    if await self._stop_continues(status):
                        continue
                    return status
                if self._attempts > structured.retries:
                    raise StructuredOutputError(
                        f"the reply did not match the requested schema after {self._attempts} "
                        f"attempt(s): " + "; ".join(issues),
                        issues=issues,
                        attempts=self._attempts,
                    )
                self._attempts += 1
                feedback = structured.feedback.replace(
                    "{issues}", "\n".join(f"- {issue}" for issue in issues)
                ).replace("{schema}", structured.spec.schema_text)
                self._output_override = None
                self._store.append(UserMessage(feedback))

    async def _stop_continues(self, status: RunStatus) -> bool:
        """S22: whether a ``Stop`` hook blocked the end of a replied turn (bounded)."""
        hooks = self.settings.hooks
        if hooks is None or status != "complete" or self._stop != "end_turn":
            return False
        reason = await stop_hooks(
            hooks,
            self._final_text(),
            execution_id=self.run_id,
            continuations=self._stop_continuations,
            signal=self._signal,
            traceparent=self._hook_traceparent(),
        )
        if reason is None:
            return False
        self._stop_continuations += 1
        self._output_override = None
        self._store.append(
            UserMessage(render(self.settings.texts.stop_hook_feedback, reason=reason))
        )
        return True

    def _instruction(self) -> str:
        """The structured-output instruction this request carries, or ``""`` (S18)."""
        structured = self.settings.structured
        if (
            structured is None
            or self._attempts != 1
            or self._transport not in ("json_mode", "instruction")
        ):
            return ""
        return structured.instruction.replace("{schema}", structured.spec.schema_text)

    def _request(
        self,
        messages: Sequence[Message],
        tools: tuple[ToolSpec, ...],
        tool_choice: ToolChoice,
        instruction: str,
    ) -> ChatRequest:
        settings = self.settings
        structured = settings.structured
        # S30: media in history the model cannot take (a tool's image) go as a notice.
        # Only the messages the store knows carry media are read (issue 4: a round's cost
        # does not grow with the history).
        carriers = self._store.media_messages
        omitted: tuple[str, ...] = ()
        if carriers:
            messages, omitted = omit_unsupported_media(
                settings.provider,
                settings.model,
                messages,
                settings.texts.media_omitted_notice,
                carriers=carriers,
            )
        if omitted:
            self._report_omitted(omitted)
        return ChatRequest(
            model=settings.model,
            messages=InstructedMessages(messages, instruction) if instruction else messages,
            tools=tools,
            tool_choice=tool_choice,
            native_tools=settings.native_tools,
            response_format=structured.spec.response_format(self._transport)
            if structured is not None
            else None,
            effort=settings.effort,
            settings=settings.model_settings,
        )

    def _history(self) -> Sequence[Message]:
        # Issue 29: after a handoff with an input filter, the receiver sees the filtered history.
        snapshot = self._store.provider_snapshot()
        return snapshot if self.handoffs is None else self.handoffs.view(snapshot)

    def _ordinary_request(self, tools_offered: bool) -> tuple[ChatRequest, str]:
        """A round's request for the current model, and its structured-output instruction."""
        output_instruction = self._instruction()
        return self._request(
            self._history(),
            self._tools.offered_specs(self._context_window, self.ceiling) if tools_offered else (),
            self.settings.tool_choice,
            output_instruction,
        ), output_instruction

    async def _turn(
        self,
        guard: AbortGuard,
        resumed: tuple[AssistantMessage, tuple[int, ...]] | None = None,
    ) -> RunStatus:
        settings = self.settings
        tools_offered = settings.tool_choice != "none"
        while True:
            message: AssistantMessage | None
            pending_calls: tuple[int, ...] | None = None
            if resumed is not None:
                # S40: the latest settled response, answered where history does not yet.
                (message, pending_calls), resumed = resumed, None
            else:
                if self._aborted():
                    return self._stopped("interrupted")
                if settings.max_rounds and self._rounds >= settings.max_rounds:
                    return await self._finish_without_text(guard, "max_rounds")
                request, output_instruction = self._ordinary_request(tools_offered)
                if self._calls is None:  # one attempt, no policy or chain: no retry frame
                    called = await self._provider_call(
                        guard, request, forced=False, extra=output_instruction
                    )
                    assert not isinstance(called, Retrying)  # only a policy or chain retries
                    message = called
                else:
                    message = await self._provider_round(
                        guard,
                        request,
                        forced=False,
                        extra=output_instruction,
                        rebuild=functools.partial(self._ordinary_request, tools_offered),
                    )
            if message is None:
                return self._stopped("context_limit")
            if message.state == "interrupted":
                return self._stopped("interrupted")
            if not message.tool_calls:
                if message.content.strip():
                    return self._stopped("end_turn")
                return await self._finish_without_text(guard, "empty_reply")
            if not tools_offered:
                self._refuse_batch(message.tool_calls, "this run set tool_choice='none'")
                raise ProviderError(
                    f"the model returned {len(message.tool_calls)} tool call(s) although this "
                    "run set tool_choice='none'; none was dispatched",
                    code="tool_choice_violated",
                    provider=self.settings.provider.name,  # S30: a fallback's, after a switch
                    model=message.model,
                )
            self._check_same_inputs(message.tool_calls)
            if self._budget is not None:
                self._check_limit(message, self._budget.admit_tools(len(message.tool_calls)))
            if self._guards is not None:  # issue 29: no tool body before input guardrails pass
                await self._guards.passed(message.tool_calls, self._refuse_batch)
            unavailable = await self._tool_round(message.tool_calls, pending_calls)
            if self._aborted():
                return self._stopped("interrupted")
            if self.handoffs is not None and await self.handoffs.take(cast("ExecutionState", self)):
                continue  # issue 29: the batch settled; the receiver continues the run
            self._unavailable_streak = self._unavailable_streak + 1 if unavailable else 0
            if self._unavailable_streak >= UNAVAILABLE_TOOL_ROUNDS:
                instruction = self.settings.texts.unavailable_tools_instruction.replace(
                    "{calls}", describe_calls(unavailable)
                )
                return await self._forced_call(guard, instruction, "unavailable_tools")

    async def _finish_without_text(
        self, guard: AbortGuard, reason: Literal["max_rounds", "empty_reply"]
    ) -> RunStatus:
        if self.settings.allow_tool_only_completion:
            last = self._store.messages[-1] if len(self._store) else None
            if isinstance(last, ToolMessage):
                return self._stopped("tool_only")  # the tool results are the answer
            raise EmptyCompletionError(
                "the model's reply had neither text nor a tool call, and tool-only completion "
                "was allowed, so no summary was requested"
            )
        return await self._forced_call(guard, self.settings.texts.summary_instruction, reason)

    async def _forced_call(
        self, guard: AbortGuard, instruction: str, reason: StopReason
    ) -> RunStatus:
        # S39/S37: one call, no local tools, tool_choice none, the run's signal. The instruction
        # exists only in this request; it is never written into history.
        settings = self.settings
        build = functools.partial(self._forced_request, instruction)
        request, extra = build()
        message = await self._provider_round(
            guard, request, forced=True, extra=extra, reason=reason, rebuild=build
        )
        if message is None:
            return self._stopped("context_limit")
        if message.state == "interrupted":
            return self._stopped("interrupted")
        if not message.content.strip():
            self._output_override = settings.texts.summary_fallback
        return self._stopped(reason)

    def _forced_request(self, instruction: str) -> tuple[ChatRequest, str]:
        output_instruction = self._instruction()
        base = self._request(self._history(), (), "none", output_instruction)
        request = replace(base, messages=(*base.messages, UserMessage(instruction)))
        return request, f"{output_instruction}{instruction}"
