"""An execution read back from its journal (S40): what it proves, and what a host must decide.

:func:`recover` reads an execution's records into a :class:`Recovery`: the history as far as it
is proven, the settlements to reuse, the saved waits and their answers, and every item the journal
cannot prove (S40: refused for reconciliation, never guessed). :func:`restore_plan` says whether a
live history can continue from a checkpoint; :func:`state_items` lists the runtime-state
differences a host must accept. The run's writes are in :mod:`robota.core.execution._journaled`,
which names the ids defined here (:func:`call_key_of`) and re-exports this module's names.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, final

from robota.core._errors import StorageError
from robota.core._messages import AssistantMessage, Message, SystemMessage, ToolMessage
from robota.core._parts import MediaPart
from robota.core.execution._journal import (
    Checkpoint,
    EffectSettled,
    EffectStarted,
    ExecutionStarted,
    ExecutionStateError,
    JournalRecord,
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
    "Recovery",
    "call_key_of",
    "catalog_digest",
    "recover",
    "restore_plan",
    "state_items",
    "state_value",
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
