"""What the run loop's mixins read of each other, declared once (issue 32 item 3).

:class:`~robota.core.execution._loop.Execution` is assembled from mixins by concern (the round,
the provider call, the tool batch, the context guard, the attempts); each reads state
``Execution.__init__`` sets and methods another mixin defines. :class:`LoopState` declares
them for type checkers, with the defining method's own signature, on top of what the machinery
below the loop reads (:class:`~robota.core.execution._state.ExecutionState`); every mixin
derives from it, so a signature is written once and mypy holds each definition to it
(``handoffs`` excepted: ``RoundMixin`` declares it, as ``._handoffs`` sits below the attempts
mixin). At run time it is an empty slotted base.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from robota.core._abort import AbortSignal
    from robota.core._cancel import AbortGuard
    from robota.core._context import ContextUsage
    from robota.core._errors import RobotaError
    from robota.core._history import PendingAssistant
    from robota.core._messages import AssistantMessage, ToolCall
    from robota.core._plugins import ExtensionHook, Plugin
    from robota.core._run_events import RunEvent
    from robota.core._tracing import RunTrace
    from robota.core._usage import Usage
    from robota.core.execution._guardrails import RunGuardrails
    from robota.core.execution._guards import SameInputCounter
    from robota.core.execution._journaled import JournalBinding
    from robota.core.execution._limits import Budget
    from robota.core.execution._recovery import Recovery
    from robota.core.execution._result import RunStatus, StopReason
    from robota.core.execution._retry import ModelCandidate, Retry, Retrying, Switch
    from robota.core.execution._state import ExecutionState as _Execution
    from robota.core.providers._contract import ChatRequest, ToolSpec
    from robota.core.providers._effort import EffortOutcome, EffortResolution

__all__ = ["LoopState"]

if not TYPE_CHECKING:
    # To type checkers the mixins are ExecutionStates; at run time ExecutionState keeps its one
    # subclass, Execution, so `isinstance(x, ExecutionState)` still means "is an Execution".
    _Execution = object


class LoopState(_Execution):
    """The state and the cross-mixin methods of ``Execution``, for type checkers."""

    if not TYPE_CHECKING:
        __slots__ = ()

    if TYPE_CHECKING:  # set in Execution.__init__; defined by the mixins
        _attempt: str | None
        _attempts: int
        _budget: Budget | None
        _effort: EffortOutcome
        _executed: int
        _finish_reason: str | None
        _guards: RunGuardrails | None
        _journal: JournalBinding | None
        _notify: Callable[[RunEvent], None] | None
        _output_json: str | None
        _output_override: str | None
        _output_value: object
        _plugins: Sequence[Plugin]
        _round_effort: EffortResolution | None
        _rounds: int
        _same_inputs: SameInputCounter
        _signal: AbortSignal
        _stop: StopReason
        _stop_continuations: int
        _tools_tokens: tuple[tuple[ToolSpec, ...], int]
        _trace: RunTrace | None
        _unpropagated: set[str]
        _unsupported_reported: set[tuple[str, str]]
        _usage: Usage

        def _aborted(self) -> bool: ...
        def _answered_by(self) -> dict[str, Any]: ...
        def _check_limit(self, message: AssistantMessage, error: RobotaError | None) -> None: ...
        def _check_same_inputs(self, calls: tuple[ToolCall, ...]) -> None: ...
        def _context_guard(self, request: ChatRequest, extra: str) -> ContextUsage | None: ...
        def _context_window(self) -> int | None: ...
        async def _continue(self, guard: AbortGuard, recovery: Recovery) -> RunStatus: ...
        async def _discard(
            self,
            pending: PendingAssistant,
            call_id: str,
            dispatched: bool,
            step: Retry | Switch,
            failure: RobotaError,
        ) -> None: ...
        async def _each_plugin(self, hook: ExtensionHook, *args: object) -> None: ...
        def _final_text(self) -> str: ...
        def _hook_traceparent(self) -> str | None: ...
        def _input_estimate(self, request: ChatRequest, extra: str) -> int: ...
        async def _next_attempt(
            self, guard: AbortGuard, again: Retrying
        ) -> AssistantMessage | None: ...
        async def _provider_call(
            self,
            guard: AbortGuard,
            request: ChatRequest,
            *,
            forced: bool,
            extra: str = "",
            reason: StopReason | None = None,
            again: Retrying | None = None,
        ) -> AssistantMessage | Retrying | None: ...
        async def _provider_round(
            self,
            guard: AbortGuard,
            request: ChatRequest,
            *,
            forced: bool,
            extra: str = "",
            reason: StopReason | None = None,
            rebuild: Callable[[], tuple[ChatRequest, str]] | None = None,
        ) -> AssistantMessage | None: ...
        def _record_effort(self, dispatched: bool) -> None: ...
        def _refusal(self, request: ChatRequest) -> Callable[[ModelCandidate], str | None]: ...
        def _refuse_batch(self, calls: tuple[ToolCall, ...], reason: str) -> None: ...
        def _report_omitted(self, kinds: tuple[str, ...]) -> None: ...
        def _stopped(self, reason: StopReason) -> RunStatus: ...
        async def _switch(self, to: ModelCandidate) -> None: ...
        async def _tool_round(
            self, calls: tuple[ToolCall, ...], pending: tuple[int, ...] | None = None
        ) -> list[ToolCall]: ...
