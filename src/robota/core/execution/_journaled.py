"""A run bound to its execution journal: the writes at each boundary (S40).

:class:`JournalBinding` is what the loop and the tool executor call; every write is awaited
before the boundary it protects, and any failure of the journal becomes a
:class:`~robota.StorageError` that keeps its cause (S39: never a model-visible or retryable tool
failure). Reading an execution back — :func:`recover` and its :class:`Recovery` — is in
:mod:`robota.core.execution._recovery`; its names are re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, final

from robota.core._errors import ExecutionControlError, ExecutionSuspendedError, StorageError
from robota.core._messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    new_id,
)
from robota.core.execution._journal import (
    Checkpoint,
    EffectSettled,
    EffectStarted,
    ExecutionJournal,
    ExecutionStarted,
    JournalLease,
    JournalRecord,
    ModelCallOutcome,
    ModelCallSettled,
    ModelCallStarted,
    OutsideRequest,
    OutsideRequested,
    Reconciled,
    RuntimeState,
)
from robota.core.execution._recovery import (
    Recovery,
    _stable_id,
    call_key_of,
    catalog_digest,
    recover,
    restore_plan,
    state_items,
)
from robota.core.tools._executor import ToolCallOutcome

__all__ = [
    "JournalBinding",
    "Recovery",
    "append_record",
    "catalog_digest",
    "recover",
    "restore_plan",
    "state_items",
]


@final
class JournalBinding:
    """One run's writes to its execution's journal (the loop's and executor's view).

    Args:
        lease: The execution's writer lease (held for the run).
        recovery: What a resumed execution restored, or ``None`` for a new one.
        store: The journal the lease is of: a sub-agent this run calls is journaled there too
            (issue 29).
    """

    __slots__ = (
        "_failure",
        "_lease",
        "_model_call",
        "_recovery",
        "_unsaved",
        "_waits",
        "asks_suspend",
        "execution_id",
        "store",
        "suspended",
    )

    def __init__(
        self,
        lease: JournalLease,
        recovery: Recovery | None = None,
        store: ExecutionJournal | None = None,
        *,
        asks_suspend: bool = True,
    ) -> None:
        self._lease = lease
        #: Whether an ask may be saved and suspend this execution: not a sub-agent's, which
        #: cannot pass a suspension to its caller yet (issue 29) — its asks stay in memory.
        self.asks_suspend = asks_suspend
        self.store = store
        self.execution_id = lease.execution_id
        self._recovery = recovery
        self._unsaved: list[Message] = []
        self._model_call = ""
        self.suspended: list[OutsideRequest] = []
        self._failure: ExecutionControlError | None = None
        self._waits: dict[str, ExecutionControlError] = {}

    async def write(self, record: JournalRecord) -> None:
        """Append ``record``; any failure is a :class:`~robota.StorageError` (cause kept).

        Once a write failed, every later one fails too without reaching the journal — a
        rejected write fails the run, even when a tool caught the error — except the
        settlement of an effect already running, or the note that a saved start never ran:
        further dispatch stops while effects already running settle (S40).
        """
        if self._failure is not None and not isinstance(record, (EffectSettled, Reconciled)):
            raise StorageError(
                f"a {record.kind} record was not written: an earlier write of execution "
                f"{self.execution_id!r} failed ({self._failure.message})",
                cause=self._failure,
            ) from self._failure
        try:
            await append_record(self._lease, record)
        except ExecutionControlError as rejected:  # a StorageError, or the journal's own outcome
            self._failure = rejected
            raise

    # history -----------------------------------------------------------------------

    def note(self, message: Message) -> None:
        """A user or tool message was committed; it goes into the next record's history."""
        if isinstance(message, (UserMessage, ToolMessage)):
            self._unsaved.append(message)

    def _take(self) -> tuple[Message, ...]:
        taken = tuple(self._unsaved)
        self._unsaved.clear()
        return taken

    async def begin(self, state: RuntimeState, history: Sequence[Message]) -> None:
        """The execution's first record: state and starting history (input last)."""
        self._unsaved.clear()
        await self.write(ExecutionStarted(self.execution_id, state, tuple(history)))

    async def checkpoint(
        self, outcome: str, stop_reason: str | None, output: str | None = None
    ) -> None:
        """The history since the previous record, where the run stops (with its S18 value)."""
        await self.write(
            Checkpoint(self._take(), outcome, stop_reason, output)  # type: ignore[arg-type]
        )

    # model calls ---------------------------------------------------------------------

    async def model_call_started(
        self, round_no: int, *, forced: bool, reason: str | None, attempt: int = 1
    ) -> str:
        """Mint the call's id and record it before dispatch; returns the id.

        ``attempt`` is the structured-output attempt the call belongs to (S18): a retry turn is
        an ordinary journaled call, and a continuation keeps counting from it.
        """
        call_id = new_id("mcall")
        await self.write(ModelCallStarted(call_id, round_no, forced, reason, self._take(), attempt))
        self._model_call = call_id
        return call_id

    async def model_call_settled(
        self,
        call_id: str,
        message: AssistantMessage,
        outcome: ModelCallOutcome,
        dispatched: bool,
        *,
        provider: str | None = None,
        fallback: int = 0,
        retried: bool = False,
    ) -> None:
        """Record the committed response before it is used.

        ``retried``: a failed attempt another attempt follows (issue 28); it is settled before
        that attempt starts, and its reply is not in history.
        """
        await self.write(
            ModelCallSettled(call_id, message, outcome, dispatched, provider, fallback, retried)
        )

    def resume_from(self, model_call_id: str) -> None:
        """A resumed execution continues the tool round of ``model_call_id``."""
        self._model_call = model_call_id

    # effects (the executor's EffectJournal) ------------------------------------------

    def call_identity(self, index: int) -> tuple[str, str]:
        """The logical call key and the body's stable id for the current response's call."""
        key = call_key_of(self._model_call, index)
        return key, _stable_id("tool", self.execution_id, key)

    def restored(self, index: int, call: ToolCall) -> ToolCallOutcome | None:
        """The durable settlement of the current response's call ``index``, if any (S40)."""
        recovery = self._recovery
        if recovery is None:
            return None
        effect = recovery.effects.get(call_key_of(self._model_call, index))
        if effect is None or effect.state != "settled" or effect.outcome is None:
            return None
        outcome = effect.outcome
        return ToolCallOutcome(
            call, outcome.status, outcome.result, outcome.call_id, started=outcome.started
        )

    async def effect_started(
        self,
        call_key: str,
        call_id: str,
        call: ToolCall | None,
        tool_name: str,
        arguments: Mapping[str, Any],
    ) -> None:
        """Durable before the body starts (S40)."""
        await self.write(
            EffectStarted(
                call_key, call_id, call.id if call is not None else None, tool_name, dict(arguments)
            )
        )

    async def effect_settled(self, call_key: str, outcome: ToolCallOutcome) -> None:
        """Durable before the result is used (S40)."""
        result = outcome.result
        await self.write(
            EffectSettled(call_key, outcome.status, result.content, result.is_error, result.parts)
        )

    async def effect_abandoned(self, call_key: str) -> None:
        """The start of ``call_key`` was saved but its body never ran (the batch stopped)."""
        await self.write(Reconciled(f"effect:{call_key}", happened=False))

    def swallowed(self, call_key: str) -> BaseException | None:
        """What the body of ``call_key`` was raised and must not hide (S39, S40).

        Its own saved wait, or a persistence failure raised inside it (its request could not be
        saved).
        """
        return self._waits.get(call_key)

    def keep(self, message: Message) -> None:
        """Save ``message`` with the next record (a diagnostic the loop committed, S39)."""
        self._unsaved.append(message)

    def outside(
        self, call_key: str, call_id: str, tool_name: str, *, asks: bool = False
    ) -> _OutsideChannel | None:
        """The body's ``request_outside_response`` for this logical call.

        ``asks=True``: the channel its approver saves asks through
        (``ApprovalRequest.request_outside_response``) — ids of their own, so whether admission
        asked does not shift the ids of the body's requests (S40: stable identities); ``None``
        for a sub-agent's execution (:attr:`asks_suspend`), whose asks are answered in memory.
        """
        if asks and not self.asks_suspend:
            return None
        return _OutsideChannel(self, call_key, call_id, tool_name, "ask" if asks else "req")

    def _saved(self) -> tuple[dict[str, OutsideRequested], dict[str, Any]]:
        recovery = self._recovery
        if recovery is None:
            return {}, {}
        return recovery.requests, recovery.responses


@final
class _OutsideChannel:
    """One logical call's waits: the n-th request of a call has a stable id (S40)."""

    __slots__ = ("_binding", "_call_id", "_count", "_key", "_prefix", "_tool")

    def __init__(
        self, binding: JournalBinding, key: str, call_id: str, tool: str, prefix: str = "req"
    ) -> None:
        self._binding = binding
        self._prefix = prefix
        self._key = key
        self._call_id = call_id
        self._tool = tool
        self._count = 0

    async def __call__(self, kind: str, payload: object) -> Any:
        binding = self._binding
        asks = self._prefix == "ask"
        requests, responses = binding._saved()
        while True:
            self._count += 1
            request_id = _stable_id(self._prefix, binding.execution_id, self._key, str(self._count))
            earlier = requests.get(request_id)
            # S40: a response answers only its own request. An ask whose question changed
            # since it was saved (a hook's replacement input, another rule asking) is not
            # answered by the saved answer: it is asked anew under the next stable id.
            if not asks or earlier is None or _same_question(earlier, kind, payload):
                break
        if request_id in responses:
            return responses[request_id]  # S40: a resumed wait returns its saved answer
        saved = requests.get(request_id)
        if saved is None:
            saved = OutsideRequested(request_id, self._key, kind, payload)
            try:
                await binding.write(saved)  # durable before the execution suspends
            except ExecutionControlError as failure:
                binding._waits[self._key] = failure  # it wins even if the body catches it
                raise
        binding.suspended.append(
            OutsideRequest(request_id, saved.request_kind, saved.payload, self._call_id, self._tool)
        )
        wait = ExecutionSuspendedError(
            f"tool {self._tool!r} is waiting for an outside response ({saved.request_kind}); "
            f"the execution suspends (request {request_id})"
        )
        binding._waits[self._key] = wait  # it wins even if the body catches it
        raise wait


def _same_question(saved: OutsideRequested, kind: str, payload: object) -> bool:
    """Whether ``saved`` asks what ``kind``/``payload`` ask (compared as saved: JSON)."""
    if saved.request_kind != kind:
        return False
    try:
        return json.dumps(saved.payload, sort_keys=True) == json.dumps(payload, sort_keys=True)
    except (TypeError, ValueError):
        return bool(saved.payload == payload)


async def append_record(lease: JournalLease, record: JournalRecord) -> None:
    """Append through ``lease``; a journal's own failure becomes a StorageError (cause kept)."""
    try:
        await lease.append(record)
    except ExecutionControlError:
        raise  # a StorageError, or the journal's own control outcome, as it is
    except Exception as exc:
        raise StorageError(
            f"the execution journal rejected a {record.kind} record of execution "
            f"{lease.execution_id!r}: {exc!r}",
            cause=exc,
        ) from exc
