"""A run bound to its execution journal: the writes at each boundary, and recovery (S40).

:class:`JournalBinding` is what the loop and the tool executor call; every write is awaited
before the boundary it protects, and any failure of the journal becomes a
:class:`~robota.StorageError` that keeps its cause (S39: never a model-visible or retryable tool
failure). :func:`recover` reads an execution's records back into a :class:`Recovery`: the history
as far as it is proven, the settlements to reuse, the saved waits and their answers, and every
item the journal cannot prove (S40: refused for reconciliation, never guessed).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, final

from robota.core._errors import (
    ExecutionControlError,
    ExecutionSuspendedError,
    StorageError,
)
from robota.core._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    new_id,
)
from robota.core._parts import MediaPart
from robota.core.execution._journal import (
    Checkpoint,
    EffectSettled,
    EffectStarted,
    ExecutionJournal,
    ExecutionStarted,
    ExecutionStateError,
    JournalLease,
    JournalRecord,
    ModelCallOutcome,
    ModelCallSettled,
    ModelCallStarted,
    OutsideRequest,
    OutsideRequested,
    OutsideResponded,
    Reconciled,
    ReconciliationItem,
    RuntimeState,
)
from robota.core.execution._subagents import Spend
from robota.core.providers._contract import ToolSpec
from robota.core.tools._executor import ToolCallOutcome
from robota.core.tools._tool import ToolResult

__all__ = [
    "JournalBinding",
    "Recovery",
    "append_record",
    "catalog_digest",
    "recover",
    "restore_plan",
    "state_items",
]

_RESIDENT: Final = "resident"


def catalog_digest(specs: Sequence[ToolSpec]) -> str:
    """SHA-256 over the tools' names, descriptions and parameter schemas, in order."""
    canonical = json.dumps(
        [[s.name, s.description, s.parameters] for s in specs],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _stable_id(prefix: str, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:24]
    return f"{prefix}_{digest}"


def call_key_of(model_call_id: str, index: int) -> str:
    """The logical key of a response's ``index``-th tool call."""
    return f"{model_call_id}#{index}"


# ---------------------------------------------------------------------------------- recovery


@final
@dataclass(slots=True)
class _Effect:
    """What the journal proves about one logical call."""

    call_key: str
    state: str = "none"  # none | started | settled | waiting
    started: EffectStarted | None = None
    outcome: ToolCallOutcome | None = None


@final
@dataclass(slots=True)
class Recovery:
    """An execution as its journal proves it.

    Attributes:
        started: The execution's first record.
        history: The whole history as far as it is proven (the starting history first).
        own_from: Where the execution's own messages (its input first) begin in ``history``.
        complete: Whether the execution completed.
        stop_reason: The completed execution's stop reason.
        rounds: Model calls settled.
        last_call: The latest settled model call and its response, if any.
        last_started: The latest model-call record, settled or not.
        resume_calls: The latest response's tool calls that history does not answer yet.
        effects: Per logical call key, what is proven.
        requests: Saved waits, by request id; ``responses`` their answers.
        items: What the journal cannot prove.
        accepted: Runtime-state items the host accepted, with the accepted value.
        attempts: The structured-output attempt of the latest model call (S18).
        dispatched_calls: Settled model calls that reached a provider (a cache hit did not),
            discarded attempts included; what a usage limit on requests counts (S40: a
            continuation counts them).
        output: The completed execution's validated structured value as JSON text, if any.
        discarded: Failed attempts that were tried again (issue 28), with their provider: not
            in history, but charged.
        answered: Reply id -> the provider that answered it, where recorded (S30).
        children: What the sub-agent runs whose calls the execution settled before it stopped
            used (issue 29), read from their own journaled executions: charged once on resume;
            each with its call's key (``<model call id>#<index>``).
        replies: Model call id -> its settled reply (the one in history).
    """

    started: ExecutionStarted
    history: list[Message]
    own_from: int
    complete: bool = False
    stop_reason: str | None = None
    rounds: int = 0
    last_call: tuple[ModelCallStarted, ModelCallSettled] | None = None
    resume_calls: tuple[int, ...] = ()
    unanswered: tuple[int, ...] = ()
    effects: dict[str, _Effect] = field(default_factory=dict)
    requests: dict[str, OutsideRequested] = field(default_factory=dict)
    responses: dict[str, Any] = field(default_factory=dict)
    items: list[ReconciliationItem] = field(default_factory=list)
    accepted: dict[str, str | None] = field(default_factory=dict)
    executed_before: int = 0
    dispatched_calls: int = 0
    unattested: bool = False
    attempts: int = 1
    output: str | None = None
    discarded: list[tuple[AssistantMessage, str | None]] = field(default_factory=list)
    answered: dict[str, str] = field(default_factory=dict)
    children: list[tuple[str, Spend]] = field(default_factory=list)
    replies: dict[str, AssistantMessage] = field(default_factory=dict)

    @property
    def answered_by(self) -> tuple[str | None, int]:
        """The provider and model-chain entry of the latest settled call (issue 28, S40)."""
        if self.last_call is None:
            return None, 0
        settled = self.last_call[1]
        return settled.provider, settled.fallback

    @property
    def resumed_message(self) -> AssistantMessage | None:
        """The latest response a continuation picks up where it stopped, if it does.

        A successful, complete, ordinary response: its tool calls are answered (restored
        settlements first) or, with none, it ends the turn. An interrupted or failed response,
        or a forced call, is not picked up: the next model call follows, or the run stops.
        """
        if self.last_call is None:
            return None
        begun, settled = self.last_call
        if settled.outcome != "success" or settled.message.state == "interrupted" or begun.forced:
            return None
        return settled.message

    @property
    def execution_id(self) -> str:
        """The execution's id."""
        return self.started.execution_id

    @property
    def state(self) -> RuntimeState:
        """The runtime state the execution began with."""
        return self.started.state

    def pending_requests(self) -> tuple[OutsideRequest, ...]:
        """The saved waits no response answers yet."""
        pending: list[OutsideRequest] = []
        for request in self.requests.values():
            if request.request_id in self.responses:
                continue
            effect = self.effects.get(request.call_key)
            if effect is not None and effect.state == "settled":
                continue  # the body went on past its wait and settled
            call_id = effect.started.call_id if effect and effect.started else None
            tool = effect.started.tool_name if effect and effect.started else None
            pending.append(
                OutsideRequest(
                    request.request_id, request.request_kind, request.payload, call_id, tool
                )
            )
        return tuple(pending)


def recover(execution_id: str, records: Sequence[JournalRecord]) -> Recovery:
    """Read ``records`` into a :class:`Recovery`.

    Raises:
        ExecutionStateError: the execution is unknown, or its log does not begin properly.
    """
    if not records:
        raise ExecutionStateError(
            f"the journal holds no execution {execution_id!r}; start it with "
            "agent.run(..., execution_id=...)",
            code="execution_unknown",
        )
    first = records[0]
    if not isinstance(first, ExecutionStarted) or first.execution_id != execution_id:
        raise StorageError(
            f"the journal's log of execution {execution_id!r} does not begin with its "
            "execution_started record; it is damaged",
            code="journal_damaged",
        )
    history = list(first.history)
    recovery = Recovery(first, history, max(len(history) - 1, 0))
    open_calls: dict[str, ModelCallStarted] = {}
    settled_calls: list[tuple[ModelCallStarted, ModelCallSettled]] = []
    reconciled: dict[str, Reconciled] = {}
    for record in records[1:]:
        match record:
            case ModelCallStarted():
                history.extend(record.history)
                open_calls[record.call_id] = record
                recovery.attempts = record.attempt
            case ModelCallSettled():
                begun = open_calls.pop(record.call_id, None)
                if begun is None:
                    raise StorageError(
                        f"execution {execution_id!r}: model call {record.call_id!r} settled "
                        "without having started; the journal is damaged",
                        code="journal_damaged",
                    )
                usage = record.message.usage
                if record.dispatched and (usage is None or usage.partial):
                    recovery.unattested = True  # S29: a charge nobody can state
                if record.retried:
                    # Issue 28: a discarded attempt; only its charge survives it — a request
                    # included, when it reached the provider (the live run counted it, S40).
                    recovery.discarded.append((record.message, record.provider))
                    recovery.dispatched_calls += record.dispatched
                    continue
                history.append(record.message)
                settled_calls.append((begun, record))
                recovery.replies[record.call_id] = record.message
                if record.provider is not None:
                    recovery.answered[record.message.id] = record.provider
            case EffectStarted():
                effect = recovery.effects.setdefault(record.call_key, _Effect(record.call_key))
                effect.state = "started"
                effect.started = record
                effect.outcome = None
            case EffectSettled():
                effect = recovery.effects.setdefault(record.call_key, _Effect(record.call_key))
                effect.state = "settled"
                effect.outcome = _settled_outcome(
                    effect, record.status, record.content, record.is_error, record.parts
                )
            case OutsideRequested():
                recovery.requests[record.request_id] = record
                effect = recovery.effects.setdefault(record.call_key, _Effect(record.call_key))
                if effect.state == "started":
                    effect.state = "waiting"  # S40: saved before its effect started
            case OutsideResponded():
                recovery.responses[record.request_id] = record.response
            case Reconciled():
                reconciled[record.item_id] = record
                _apply_reconciled(recovery, record, open_calls, settled_calls, history)
            case Checkpoint():
                history.extend(record.history)
                if record.outcome == "complete":
                    recovery.complete = True
                    recovery.stop_reason = record.stop_reason
                    recovery.output = record.output
            case ExecutionStarted():
                raise StorageError(
                    f"execution {execution_id!r} was started twice in its journal; it is damaged",
                    code="journal_damaged",
                )
    recovery.rounds = len(settled_calls)
    recovery.dispatched_calls += sum(1 for _, settled in settled_calls if settled.dispatched)
    for begun in open_calls.values():
        recovery.items.append(
            ReconciliationItem(
                f"model:{begun.call_id}",
                "model_call",
                call_id=begun.call_id,
                detail=(
                    f"model call {begun.call_id} (round {begun.round}) was dispatched or about to "
                    "be, and no response was recorded: it may have been charged and answered"
                ),
            )
        )
    recovery.accepted = {
        item_id: r.result for item_id, r in reconciled.items() if item_id.startswith("state:")
    }
    if settled_calls:
        begun, settled = settled_calls[-1]
        recovery.last_call = (begun, settled)
        message = settled.message
        if message.tool_calls:
            answered = _answered(history, message)
            recovery.unanswered = tuple(
                i for i in range(len(message.tool_calls)) if i not in answered
            )
        if settled.outcome == "success" and message.state == "complete" and message.tool_calls:
            recovery.resume_calls = recovery.unanswered
            for index in recovery.resume_calls:
                uncertain = recovery.effects.get(call_key_of(begun.call_id, index))
                if uncertain is not None and uncertain.state == "started" and uncertain.started:
                    started = uncertain.started
                    recovery.items.append(
                        ReconciliationItem(
                            f"effect:{started.call_key}",
                            "effect",
                            call_id=started.call_id,
                            tool_name=started.tool_name,
                            arguments=started.arguments,
                            detail=(
                                f"tool {started.tool_name!r} (call {started.call_id}) started and "
                                "no result was recorded: its effect may or may not have happened"
                            ),
                        )
                    )
    resumed_keys = (
        {call_key_of(recovery.last_call[0].call_id, i) for i in recovery.resume_calls}
        if recovery.last_call is not None
        else set()
    )
    recovery.executed_before = sum(
        1
        for key, effect in recovery.effects.items()
        if effect.state == "settled" and key not in resumed_keys and effect.started is not None
    )
    return recovery


def _answered(history: Sequence[Message], message: AssistantMessage) -> set[int]:
    """Indices of ``message``'s tool calls that tool messages after it answer."""
    position = len(history) - 1
    while position >= 0 and history[position] is not message:
        position -= 1
    answered_ids = [m.tool_call_id for m in history[position + 1 :] if isinstance(m, ToolMessage)]
    answered: set[int] = set()
    for index, call in enumerate(message.tool_calls):
        if call.id in answered_ids:
            answered_ids.remove(call.id)  # S36: ids may repeat; answer each once
            answered.add(index)
    return answered


def _settled_outcome(
    effect: _Effect,
    status: str,
    content: str,
    is_error: bool,
    parts: tuple[MediaPart, ...] = (),
) -> ToolCallOutcome:
    started = effect.started
    return ToolCallOutcome(
        None,
        status,  # type: ignore[arg-type]
        ToolResult(content, is_error=is_error, parts=parts),
        started.call_id if started is not None else None,
        started=started is not None,
    )


def _apply_reconciled(
    recovery: Recovery,
    record: Reconciled,
    open_calls: dict[str, ModelCallStarted],
    settled_calls: list[tuple[ModelCallStarted, ModelCallSettled]],
    history: list[Message],
) -> None:
    kind, _, key = record.item_id.partition(":")
    if kind == "effect":
        effect = recovery.effects.setdefault(key, _Effect(key))
        if record.happened:
            effect.state = "settled"
            effect.outcome = _settled_outcome(effect, "completed", record.result or "", False)
        else:
            effect.state = "none"  # S40: the host says it did not happen; admission decides anew
            effect.started = None
            effect.outcome = None
    elif kind == "model":
        begun = open_calls.pop(key, None)
        if begun is not None and record.happened:
            message = AssistantMessage(record.result or "", model=recovery.started.state.model)
            history.append(message)
            settled_calls.append((begun, ModelCallSettled(key, message)))


def state_items(recovery: Recovery, current: RuntimeState) -> list[ReconciliationItem]:
    """Runtime-state differences the host has not accepted (S40)."""
    saved = recovery.state
    items: list[ReconciliationItem] = []
    for name, before, now in (
        ("provider", saved.provider, current.provider),
        ("model", saved.model, current.model),
        ("system_prompt", saved.system_prompt, current.system_prompt),
        ("tool_catalog", saved.tool_catalog_digest, current.tool_catalog_digest),
        ("tool_residency", _residency_text(saved), _residency_text(current)),
    ):
        if before == now:
            continue
        item_id = f"state:{name}"
        if item_id in recovery.accepted and recovery.accepted[item_id] == now:
            continue
        items.append(
            ReconciliationItem(
                item_id,
                "runtime_state",
                detail=(
                    f"the execution began with {name} {_show(before)}; this agent has "
                    f"{_show(now)}. Resume with a compatible agent, or accept the difference "
                    "with reconcile(..., happened=True)"
                ),
            )
        )
    return items


def state_value(current: RuntimeState, item_id: str) -> str | None:
    """The current value a runtime-state item is accepted for."""
    name = item_id.partition(":")[2]
    values: dict[str, str | None] = {
        "provider": current.provider,
        "model": current.model,
        "system_prompt": current.system_prompt,
        "tool_catalog": current.tool_catalog_digest,
        "tool_residency": _residency_text(current),
    }
    return values.get(name)


def _residency_text(state: RuntimeState) -> str:
    return ",".join(f"{name}={residency}" for name, residency in state.tool_residency)


def _show(value: str | None) -> str:
    # Never the text itself: a system prompt may hold what does not belong in logs (S14).
    if value is None:
        return "none"
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"a value of {len(value)} characters (sha256 {digest}…)"


# ---------------------------------------------------------------------------------- writing


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
        while True:
            self._count += 1
            request_id = _stable_id(self._prefix, binding.execution_id, self._key, str(self._count))
            requests, responses = binding._saved()
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
    try:
        same = json.dumps(saved.payload, sort_keys=True) == json.dumps(payload, sort_keys=True)
    except (TypeError, ValueError):
        same = bool(saved.payload == payload)
    return same and saved.request_kind == kind


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


def restore_plan(
    live: Sequence[Message], saved: Sequence[Message], *, keep_live_prompt: bool
) -> tuple[str | None, tuple[Message, ...]]:
    """Why the live history conflicts with the checkpoint (or ``None``), and what to append.

    Compatible (S40: live history is never overwritten): the live history is a prefix of the
    saved one. A live system head that repeats the saved one's text counts as the same head (a
    fresh agent built with the same prompt). With ``keep_live_prompt`` (the host accepted a
    system-prompt difference) the heads are not compared: the live head, or its absence, stays.
    """
    live_body = _without_head(live)
    saved_body = _without_head(saved)
    live_head = live[0] if len(live) != len(live_body) else None
    saved_head = saved[0] if len(saved) != len(saved_body) else None
    same_head = (live_head is None) == (saved_head is None) and not (
        isinstance(live_head, SystemMessage)
        and isinstance(saved_head, SystemMessage)
        and live_head.content != saved_head.content
    )
    if live and not keep_live_prompt and not same_head:
        return "its system prompt differs from the checkpoint's", ()
    if len(live_body) > len(saved_body):
        return (
            f"the agent's history has {len(live_body)} messages, more than the "
            f"{len(saved_body)} the execution's checkpoint holds",
            (),
        )
    for index, message in enumerate(live_body):
        if message != saved_body[index]:
            return f"message {index} of the agent's history differs from the checkpoint's", ()
    head: tuple[Message, ...] = ()
    if not live and saved_head is not None and not keep_live_prompt:
        head = (saved_head,)  # S35: a continuation keeps the prompt the execution used
    return None, (*head, *saved_body[len(live_body) :])


def _without_head(messages: Sequence[Message]) -> Sequence[Message]:
    if messages and isinstance(messages[0], SystemMessage):
        return messages[1:]
    return messages
