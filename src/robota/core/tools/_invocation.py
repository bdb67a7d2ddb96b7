"""The executor's shared types: what the admission seam sees, and what one batch shares.

:class:`ToolInvocation` (a call on its way to a body), :class:`Admission` (the seam's answer),
:class:`ToolGate` (the seam itself: permissions, hooks, guardrails — S21/S22), the
:class:`EffectJournal` a journaled run hands over (S40), and the per-batch ``_Scope`` and
``_Batch``. They sit below the tool execution service (:mod:`robota.core.tools._executor`) and its
per-call path (:mod:`robota.core.tools._call`), which both name them; ``_executor`` re-exports
them, so ``robota.core.tools._executor.ToolInvocation`` keeps working.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, final

from robota.core._abort import AbortSignal
from robota.core._emit import EventEmitter
from robota.core._errors import ExecutionSuspendedError, StorageError
from robota.core._messages import ToolCall
from robota.core._run_events import RunEvent, ToolCallFinished
from robota.core._texts import ModelTexts
from robota.core._tracing import RunTrace
from robota.core.tools._outcomes import ToolCallOutcome
from robota.core.tools._tool import Approver, OutsideResponder, Tool, ToolContext, ToolResult

__all__ = ["Admission", "EffectJournal", "ToolGate", "ToolInvocation"]

_DEFAULT_TEXTS: Final = ModelTexts()


@final
@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """A call on its way to a body, as the admission seam sees it.

    Attributes:
        tool: The registered tool.
        call: The model's call; ``None`` for a direct invocation (S43).
        arguments: The validated arguments.
        context: The context the body will receive.
        approver: For a direct invocation (S43), the approver its caller passed, if any; a
            model-driven call carries none (the gate's own approver answers it).
        texts: The agent's model-facing texts; a gate words its refusals with them (S35).
        outside_ask: For a call of a journaled run (S40), the channel an ask about this call is
            saved through as an outside request (a gate hands it to its approver as
            :attr:`ApprovalRequest.request_outside_response`); ``None`` otherwise.
    """

    tool: Tool
    call: ToolCall | None
    arguments: Mapping[str, Any]
    context: ToolContext
    approver: Approver | None = None
    texts: ModelTexts = _DEFAULT_TEXTS
    outside_ask: OutsideResponder | None = None


@final
@dataclass(frozen=True, slots=True)
class Admission:
    """The admission seam's answer.

    Attributes:
        allowed: Whether the body may run.
        reason: Why not (shown to the model), or a note.
        arguments: Replacement arguments (e.g. a hook's updated input); they are validated again
            before the body sees them.
    """

    allowed: bool
    reason: str = ""
    arguments: Mapping[str, Any] | None = None


class EffectJournal(Protocol):
    """What a journaled run gives the executor for one batch (S40)."""

    def call_identity(self, index: int) -> tuple[str, str]:
        """The logical call key and the body's stable id of the batch's call ``index``."""
        ...

    def outside(
        self, call_key: str, call_id: str, tool_name: str, *, asks: bool = False
    ) -> OutsideResponder | None:
        """The channel the body's ``ctx.request_outside_response`` goes through.

        ``asks=True``: the one its approver saves asks through, with ids of their own;
        ``None`` when an ask cannot suspend this execution (a sub-agent's, issue 29).
        """
        ...

    async def effect_started(
        self,
        call_key: str,
        call_id: str,
        call: ToolCall | None,
        tool_name: str,
        arguments: Mapping[str, Any],
    ) -> None:
        """Record the start with the final arguments; durable before the body starts."""
        ...

    async def effect_settled(self, call_key: str, outcome: ToolCallOutcome) -> None:
        """Record the body's settlement; durable before the result is used."""
        ...

    async def effect_abandoned(self, call_key: str) -> None:
        """Record that a call whose start was saved never ran its body (the batch stopped)."""
        ...

    def swallowed(self, call_key: str) -> BaseException | None:
        """A control outcome raised inside the body that the body did not let through.

        A persistence failure of the run, or this call's own saved wait: it still wins over
        whatever the body returned (S39, S40).
        """
        ...


@final
class _Batch:
    """One batch's stop flag: once set, no further body starts (S40)."""

    __slots__ = ("errors", "halted")

    def __init__(self) -> None:
        self.halted = False
        self.errors: list[BaseException] = []

    def halt(self, error: BaseException) -> None:
        self.halted = True
        self.errors.append(error)

    def raise_first(self) -> None:
        """Raise the outcome that wins: a persistence failure, any other error, then a wait."""
        if not self.errors:
            return
        errors = self.errors
        for error in errors:
            if isinstance(error, StorageError):
                raise error
        for error in errors:
            if not isinstance(error, ExecutionSuspendedError):
                raise error
        raise errors[0]


@final
@dataclass(frozen=True, slots=True)
class _Scope:
    """What every call of one batch (or one direct invocation) shares."""

    signal: AbortSignal
    emitter: EventEmitter
    execution_id: str | None = None
    round: int | None = None
    notify: Callable[[RunEvent], None] | None = None
    approver: Approver | None = None
    journal: EffectJournal | None = None
    batch: _Batch | None = None
    submitted_at: float = 0.0
    trace: RunTrace | None = None
    attempt: str | None = None
    run: object = None  # issue 29: the calling execution, for a sub-agent's body
    # Issue 29: a sub-agent's run passes its ceiling gate here, for its own calls only, rather
    # than swapping the service's gate (a direct call made meanwhile would see another's gate).
    ceiling: ToolGate | None = None

    def finish(self, outcome: ToolCallOutcome) -> ToolCallOutcome:
        """Report the call's end to the run's listener (S33), then hand the outcome back."""
        if self.notify is not None and outcome.call is not None:
            result = outcome.result
            self.notify(
                ToolCallFinished(
                    outcome.call, outcome.status, result.content, result.is_error, result.view
                )
            )
        return outcome


class ToolGate(Protocol):
    """Decides whether an invocation may run and observes its result (permissions, hooks)."""

    async def admit(self, invocation: ToolInvocation) -> Admission:
        """Allow, refuse, or allow with replaced arguments."""
        ...

    async def settled(self, invocation: ToolInvocation, result: ToolResult) -> None:
        """Observe the result of an admitted body (post-execution hooks)."""
        ...
