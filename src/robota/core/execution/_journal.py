"""The execution journal port and its typed records (S40, S41).

A host makes a run recoverable by giving the agent a journal it owns exclusively. The runtime
writes a record before it crosses each boundary whose loss would make a model call or a tool effect
ambiguous, and awaits the write:

* :class:`ExecutionStarted` — the execution's identity, the runtime state it depends on and the
  history it starts from (its input included);
* :class:`ModelCallStarted` before a model call is dispatched (with the history committed since
  the previous record), :class:`ModelCallSettled` with the committed response before it is used;
* :class:`EffectStarted` with the arguments a tool body actually runs with, before the body
  starts, and :class:`EffectSettled` after it returned;
* :class:`OutsideRequested` / :class:`OutsideResponded` — a tool's saved wait and its answer;
* :class:`Reconciled` — the host's explicit settlement of something the journal could not prove;
* :class:`Checkpoint` — the history committed since the previous record, where a run stops.

A journal is an append-only log per execution: :meth:`ExecutionJournal.acquire` takes the one
writer's :class:`JournalLease` (S10: one writer per execution — a second writer is refused at once
with :class:`~robota.ExecutionLockedError`, never made to wait), :meth:`JournalLease.append` makes
a record durable before it returns, :meth:`ExecutionJournal.read` returns an execution's records in
append order. :func:`encode_journal_record` / :func:`decode_journal_record` give a back-end one
versioned JSON text per record, so it stores text and never pickles objects.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Final, Literal, Self, TypeAlias, final

from robota.core._errors import ExecutionControlError, RobotaError, StorageError
from robota.core._limits import UsageLimits
from robota.core._messages import AssistantMessage, Message
from robota.core._parts import MediaPart, decode_media, encode_content
from robota.core.execution._journal_messages import decode_history as _history
from robota.core.execution._journal_messages import decode_message, encode_message
from robota.core.execution._journal_messages import opt_int as _opt_int
from robota.core.execution._journal_messages import opt_str as _opt_str
from robota.core.execution._journal_messages import read_bool as _bool
from robota.core.execution._journal_messages import read_int as _int
from robota.core.execution._journal_messages import read_str as _str
from robota.core.providers._settings import settings_from_data, settings_to_data

__all__ = [
    "JOURNAL_FORMAT_VERSION",
    "Checkpoint",
    "EffectSettled",
    "EffectStarted",
    "ExecutionJournal",
    "ExecutionStarted",
    "JournalLease",
    "JournalRecord",
    "ModelCallSettled",
    "ModelCallStarted",
    "OutsideRequested",
    "OutsideResponded",
    "Reconciled",
    "RuntimeState",
    "decode_journal_record",
    "encode_journal_record",
]

JOURNAL_FORMAT_VERSION: Final = 1
"""The version stamped on every encoded record; a reader refuses versions it does not know."""

ModelCallOutcome: TypeAlias = Literal["success", "failure", "interrupted"]
CheckpointOutcome: TypeAlias = Literal["complete", "interrupted", "suspended"]
ToolResidency: TypeAlias = Literal["resident", "deferred"]


@final
@dataclass(frozen=True, slots=True)
class RuntimeState:
    """The runtime state an execution depends on, saved when it begins (S40).

    A continuation keeps the limits recorded here; the identity fields (provider, model, system
    prompt, tool catalog and residency) must match the resuming agent or be reconciled.

    Attributes:
        agent_name: The agent's name.
        provider: The provider's name.
        model: The model the run addressed.
        system_prompt: The system prompt the execution used (S35: a continuation keeps it).
        tool_catalog_digest: SHA-256 over the registered tools' names, descriptions and schemas.
        tool_residency: Each registered tool's name and residency (S19), in registration order.
        max_rounds: The round budget (S39).
        max_same_tool_inputs: The identical-input limit (S39).
        allow_tool_only_completion: Whether a turn may end on tool results.
        tool_choice: The run's tool choice.
        native_tools: Provider-hosted tools the run asked for (S30).
        effort: The reasoning-effort selection (S24).
        context_floor: The caller's context-token floor (S31).
        output_schema: The structured output's JSON Schema as canonical JSON text (S18), or
            ``None`` for a plain run; a continuation must ask for the same schema.
        output_retries: The structured output's retry budget (S18).
        model_settings: The run's merged model settings as plain data (S28); kept on resume.
        limits: The run's merged usage limits (S31), or ``None``; kept on resume (S40).
    """

    agent_name: str
    provider: str
    model: str
    system_prompt: str | None
    tool_catalog_digest: str
    tool_residency: tuple[tuple[str, ToolResidency], ...]
    max_rounds: int
    max_same_tool_inputs: int | None
    allow_tool_only_completion: bool
    tool_choice: Literal["auto", "none", "required"]
    native_tools: tuple[str, ...] = ()
    effort: str = "auto"
    context_floor: int = 0
    output_schema: str | None = None
    output_retries: int = 0
    model_settings: Mapping[str, Any] = field(default_factory=dict)
    limits: UsageLimits | None = None


@final
@dataclass(frozen=True, slots=True)
class ExecutionStarted:
    """An execution began: its identity, runtime state and starting history (input included)."""

    kind: ClassVar[Literal["execution_started"]] = "execution_started"

    execution_id: str
    state: RuntimeState
    history: tuple[Message, ...]


@final
@dataclass(frozen=True, slots=True)
class ModelCallStarted:
    """A model call is about to be dispatched (written before it is).

    Attributes:
        call_id: The call's own minted id.
        round: The round number within the execution (1-based).
        forced: Whether this is a forced call without tools (S37, S39).
        reason: For a forced call, why it was forced (a :data:`~robota.StopReason`).
        history: The user and tool messages committed since the previous record.
        attempt: The structured-output attempt the call belongs to (S18; 1 for a plain run).
    """

    kind: ClassVar[Literal["model_call_started"]] = "model_call_started"

    call_id: str
    round: int
    forced: bool = False
    reason: str | None = None
    history: tuple[Message, ...] = ()
    attempt: int = 1


@final
@dataclass(frozen=True, slots=True)
class ModelCallSettled:
    """A model call's committed response (usage, answering model, continuation included).

    Attributes:
        provider: The provider the call went to (S30, S40), when recorded.
        fallback: Its place in the run's model chain (0: the agent's own model), so a resumed
            run continues on the model it was using.
        retried: The call failed and another attempt followed (issue 28): its reply was
            discarded, so ``message`` is not in history; only its usage counts.
    """

    kind: ClassVar[Literal["model_call_settled"]] = "model_call_settled"

    call_id: str
    message: AssistantMessage
    outcome: ModelCallOutcome = "success"
    dispatched: bool = True
    provider: str | None = None
    fallback: int = 0
    retried: bool = False


@final
@dataclass(frozen=True, slots=True)
class EffectStarted:
    """A tool body is about to start, with the arguments it actually runs with (S40).

    Attributes:
        call_key: The logical call: ``<model call id>#<index of the call in the response>``.
        call_id: The body's id (:attr:`~robota.ToolContext.call_id`), stable for the call.
        provider_call_id: The provider's opaque id of the call (S36).
        tool_name: The tool's registered name.
        arguments: The final, validated arguments (after any hook or wrapper rewrite).
    """

    kind: ClassVar[Literal["effect_started"]] = "effect_started"

    call_key: str
    call_id: str
    provider_call_id: str | None
    tool_name: str
    arguments: Mapping[str, Any]


@final
@dataclass(frozen=True, slots=True)
class EffectSettled:
    """A tool body returned; its full settled receipt (S39)."""

    kind: ClassVar[Literal["effect_settled"]] = "effect_settled"

    call_key: str
    status: str
    content: str
    is_error: bool = False
    parts: tuple[MediaPart, ...] = ()


@final
@dataclass(frozen=True, slots=True)
class OutsideRequested:
    """A tool saved a request for an outside response before its effect (S40)."""

    kind: ClassVar[Literal["outside_requested"]] = "outside_requested"

    request_id: str
    call_key: str
    request_kind: str
    payload: Any


@final
@dataclass(frozen=True, slots=True)
class OutsideResponded:
    """The answer to one saved request, written before it is used."""

    kind: ClassVar[Literal["outside_responded"]] = "outside_responded"

    request_id: str
    response: Any


@final
@dataclass(frozen=True, slots=True)
class Reconciled:
    """The host settled an item the journal could not prove (S40).

    Attributes:
        item_id: The :class:`~robota.ReconciliationItem` id.
        happened: ``True``: it happened (``result`` is its result, or the accepted value of a
            runtime-state difference); ``False``: it did not, so it may be dispatched again.
        result: See ``happened``.
    """

    kind: ClassVar[Literal["reconciled"]] = "reconciled"

    item_id: str
    happened: bool
    result: str | None = None


@final
@dataclass(frozen=True, slots=True)
class Checkpoint:
    """History committed since the previous record, written where a run stops.

    Attributes:
        history: The user and tool messages committed since the previous record.
        outcome: How the run stopped (``complete`` ends the execution).
        stop_reason: The run's :data:`~robota.StopReason` when it completed.
        output: A structured run's validated value as JSON text (S18), when it has one.
    """

    kind: ClassVar[Literal["checkpoint"]] = "checkpoint"

    history: tuple[Message, ...] = ()
    outcome: CheckpointOutcome = "interrupted"
    stop_reason: str | None = None
    output: str | None = None


JournalRecord: TypeAlias = (
    ExecutionStarted
    | ModelCallStarted
    | ModelCallSettled
    | EffectStarted
    | EffectSettled
    | OutsideRequested
    | OutsideResponded
    | Reconciled
    | Checkpoint
)
"""Any record of the journal; discriminate on ``kind`` or with ``match``."""


# ---------------------------------------------------------------------------------- the port


class JournalLease(ABC):
    """The one writer's hold on an execution (S10), from :meth:`ExecutionJournal.acquire`.

    Release it when done (``async with`` does); a holder that crashes must lose it without
    anyone waiting for a timeout, and elapsed time never takes it away from a live holder.
    """

    @property
    @abstractmethod
    def execution_id(self) -> str:
        """The execution this lease writes."""

    @abstractmethod
    async def append(self, record: JournalRecord) -> None:
        """Append ``record`` to the execution's log; durable when this returns.

        A write that failed or was cancelled may still have been stored ("maybe written"):
        the runtime then fails the run without crossing the boundary, and a later recovery
        treats whatever was stored conservatively (an unsettled call is reconciled, never
        guessed).

        Raises:
            StorageError: when the write failed or the lease is no longer held (the runtime then
                fails the run rather than cross the boundary).
        """

    @abstractmethod
    async def release(self) -> None:
        """Give the execution up; idempotent. Appending afterwards raises StorageError."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.release()


class ExecutionJournal(ABC):
    """A durable, append-only log of executions (S40) — the port a host implements (S41).

    Implementations in this package: :class:`~robota.testing.InMemoryJournal`,
    :class:`~robota.host.SQLiteJournal`, :class:`~robota.host.PostgresJournal`. A custom one
    passes :func:`~robota.testing.run_journal_conformance`.
    """

    @abstractmethod
    async def acquire(self, execution_id: str) -> JournalLease:
        """Take the one writer's lease on ``execution_id`` (known or new).

        Execution ids are non-empty, printable, valid Unicode strings (no NUL, no lone
        surrogates) of at most 200 characters — what every back-end can store; the agent
        refuses others before a journal sees them.

        Raises:
            ExecutionLockedError: at once, when another holder has it (never waits).
            StorageError: when the journal cannot be reached.
        """

    @abstractmethod
    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        """Every record of ``execution_id`` in append order; ``()`` for an unknown execution.

        Raises:
            StorageError: when the journal cannot be read or a record cannot be decoded.
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release what the journal holds (connections, files). Default: nothing."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


# ---------------------------------------------------------------------------------- the codec


def encode_journal_record(record: JournalRecord) -> str:
    """One versioned JSON text for ``record`` (what a back-end stores).

    Raises:
        StorageError: when a value in the record is not JSON (a tool's payload, say).
    """
    kind = getattr(record, "kind", type(record).__name__)
    try:
        return json.dumps(
            {"v": JOURNAL_FORMAT_VERSION, "kind": kind, "body": _encode(record)},
            ensure_ascii=True,  # lone surrogates survive every UTF-8 store as escapes
            separators=(",", ":"),
            allow_nan=False,
        )
    except StorageError:
        raise
    except (TypeError, ValueError, RecursionError) as exc:
        raise StorageError(
            f"a {kind} record cannot be saved: a value in it is not JSON ({exc!r})",
            cause=exc,
        ) from exc


def decode_journal_record(text: str) -> JournalRecord:
    """The record encoded by :func:`encode_journal_record`.

    Raises:
        StorageError: for a damaged record or one of an unknown format version.
    """
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("not an object")
        version = data.get("v")
        if version != JOURNAL_FORMAT_VERSION:
            raise StorageError(
                f"a journal record has format version {version!r}; this robota reads version "
                f"{JOURNAL_FORMAT_VERSION}",
                code="journal_version",
            )
        return _decode(str(data["kind"]), data["body"])
    except StorageError:
        raise
    except (KeyError, TypeError, ValueError, RecursionError) as exc:
        raise StorageError(f"a journal record is damaged: {exc!r}", cause=exc) from exc


def _encode(record: JournalRecord) -> dict[str, Any]:
    match record:
        case ExecutionStarted():
            state = record.state
            return {
                "execution_id": record.execution_id,
                "state": {
                    "agent_name": state.agent_name,
                    "provider": state.provider,
                    "model": state.model,
                    "system_prompt": state.system_prompt,
                    "tool_catalog_digest": state.tool_catalog_digest,
                    "tool_residency": [list(item) for item in state.tool_residency],
                    "max_rounds": state.max_rounds,
                    "max_same_tool_inputs": state.max_same_tool_inputs,
                    "allow_tool_only_completion": state.allow_tool_only_completion,
                    "tool_choice": state.tool_choice,
                    "native_tools": list(state.native_tools),
                    "effort": state.effort,
                    "context_floor": state.context_floor,
                    "output_schema": state.output_schema,
                    "output_retries": state.output_retries,
                    "model_settings": dict(state.model_settings),
                    # Only when set: records of runs without limits stay as they were.
                    **({"limits": state.limits.to_data()} if state.limits is not None else {}),
                },
                "history": [encode_message(m) for m in record.history],
            }
        case ModelCallStarted():
            return {
                "call_id": record.call_id,
                "round": record.round,
                "forced": record.forced,
                "reason": record.reason,
                "history": [encode_message(m) for m in record.history],
                "attempt": record.attempt,
            }
        case ModelCallSettled():
            return {
                "call_id": record.call_id,
                "message": encode_message(record.message),
                "outcome": record.outcome,
                "dispatched": record.dispatched,
                # Only when set: records of runs without a chain keep their shape.
                **({"provider": record.provider} if record.provider is not None else {}),
                **({"fallback": record.fallback} if record.fallback else {}),
                **({"retried": True} if record.retried else {}),
            }
        case EffectStarted():
            return {
                "call_key": record.call_key,
                "call_id": record.call_id,
                "provider_call_id": record.provider_call_id,
                "tool_name": record.tool_name,
                "arguments": dict(record.arguments),
            }
        case EffectSettled():
            return {
                "call_key": record.call_key,
                "status": record.status,
                "content": record.content,
                "is_error": record.is_error,
                **({"parts": encode_content(record.parts)} if record.parts else {}),
            }
        case OutsideRequested():
            return {
                "request_id": record.request_id,
                "call_key": record.call_key,
                "request_kind": record.request_kind,
                "payload": record.payload,
            }
        case OutsideResponded():
            return {"request_id": record.request_id, "response": record.response}
        case Reconciled():
            return {"item_id": record.item_id, "happened": record.happened, "result": record.result}
        case Checkpoint():
            return {
                "history": [encode_message(m) for m in record.history],
                "outcome": record.outcome,
                "stop_reason": record.stop_reason,
                "output": record.output,
            }
    raise StorageError(f"not a journal record: {record!r}")  # pragma: no cover - typed callers


def _decode(kind: str, body: Any) -> JournalRecord:
    if not isinstance(body, dict):
        raise TypeError("a record body must be an object")
    b: dict[str, Any] = body
    if kind == "execution_started":
        s = b["state"]
        state = RuntimeState(
            agent_name=_str(s["agent_name"]),
            provider=_str(s["provider"]),
            model=_str(s["model"]),
            system_prompt=_opt_str(s["system_prompt"]),
            tool_catalog_digest=_str(s["tool_catalog_digest"]),
            tool_residency=tuple((_str(n), _residency(r)) for n, r in s["tool_residency"]),
            max_rounds=_int(s["max_rounds"]),
            max_same_tool_inputs=_opt_int(s["max_same_tool_inputs"]),
            allow_tool_only_completion=_bool(s["allow_tool_only_completion"]),
            tool_choice=_tool_choice(s["tool_choice"]),
            native_tools=tuple(_str(n) for n in s["native_tools"]),
            effort=_str(s["effort"]),
            context_floor=_int(s["context_floor"]),
            # Absent from records written before structured runs could be journaled.
            output_schema=_opt_str(s.get("output_schema")),
            output_retries=_int(s.get("output_retries", 0)),
            model_settings=settings_to_data(settings_from_data(s.get("model_settings"))),
            limits=UsageLimits.from_data(s.get("limits")),
        )
        return ExecutionStarted(_str(b["execution_id"]), state, _history(b["history"]))
    if kind == "model_call_started":
        return ModelCallStarted(
            _str(b["call_id"]),
            _int(b["round"]),
            forced=_bool(b["forced"]),
            reason=_opt_str(b["reason"]),
            history=_history(b["history"]),
            attempt=_int(b.get("attempt", 1)),
        )
    if kind == "model_call_settled":
        message = decode_message(b["message"])
        if not isinstance(message, AssistantMessage):
            raise TypeError("a settled model call must hold an assistant message")
        outcome = b["outcome"]
        if outcome not in ("success", "failure", "interrupted"):
            raise ValueError(f"unknown model call outcome {outcome!r}")
        return ModelCallSettled(
            _str(b["call_id"]),
            message,
            outcome=outcome,
            dispatched=_bool(b["dispatched"]),
            provider=_opt_str(b.get("provider")),
            fallback=_int(b.get("fallback", 0)),
            retried=_bool(b.get("retried", False)),
        )
    if kind == "effect_started":
        arguments = b["arguments"]
        if not isinstance(arguments, dict):
            raise TypeError("effect arguments must be an object")
        return EffectStarted(
            _str(b["call_key"]),
            _str(b["call_id"]),
            _opt_str(b["provider_call_id"]),
            _str(b["tool_name"]),
            arguments,
        )
    if kind == "effect_settled":
        key, status, content = _str(b["call_key"]), _str(b["status"]), _str(b["content"])
        return EffectSettled(key, status, content, _bool(b["is_error"]), decode_media(b))
    if kind == "outside_requested":
        return OutsideRequested(
            _str(b["request_id"]), _str(b["call_key"]), _str(b["request_kind"]), b["payload"]
        )
    if kind == "outside_responded":
        return OutsideResponded(_str(b["request_id"]), b["response"])
    if kind == "reconciled":
        return Reconciled(_str(b["item_id"]), _bool(b["happened"]), _opt_str(b["result"]))
    if kind == "checkpoint":
        outcome = b["outcome"]
        if outcome not in ("complete", "interrupted", "suspended"):
            raise ValueError(f"unknown checkpoint outcome {outcome!r}")
        return Checkpoint(
            _history(b["history"]), outcome, _opt_str(b["stop_reason"]), _opt_str(b.get("output"))
        )
    raise ValueError(f"unknown record kind {kind!r}")


def _residency(value: Any) -> ToolResidency:
    if value not in ("resident", "deferred"):
        raise ValueError(f"unknown tool residency {value!r}")
    return value  # type: ignore[no-any-return]


def _tool_choice(value: Any) -> Literal["auto", "none", "required"]:
    if value not in ("auto", "none", "required"):
        raise ValueError(f"unknown tool choice {value!r}")
    return value  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------- errors


@final
@dataclass(frozen=True, slots=True)
class ReconciliationItem:
    """One thing the journal cannot prove, for the host to settle (S40).

    Attributes:
        id: Pass it to :meth:`~robota.Agent.reconcile`.
        kind: ``"effect"`` (a tool body started without a recorded result), ``"model_call"`` (a
            model call without a recorded response) or ``"runtime_state"`` (the resuming agent
            differs from the saved state).
        call_id: The tool body's id (:attr:`~robota.ToolContext.call_id`) or the model call's
            id; ``None`` for a runtime-state item.
        tool_name: The tool, for an effect.
        arguments: The arguments the body started with, for an effect.
        detail: What is uncertain, in words.
    """

    id: str
    kind: Literal["effect", "model_call", "runtime_state"]
    call_id: str | None = None
    tool_name: str | None = None
    arguments: Mapping[str, Any] | None = None
    detail: str = ""


class ReconciliationRequired(ExecutionControlError):
    """The journal cannot prove what happened; the host must settle each item (S39, S40).

    Settle every item with :meth:`~robota.Agent.reconcile`, then call
    :meth:`~robota.Agent.resume` again. Nothing is guessed and nothing was re-run.

    Attributes:
        execution_id: The execution.
        items: What needs settling.
    """

    default_code = "reconciliation_required"
    default_category = "system"

    def __init__(
        self, message: str, *, execution_id: str, items: Sequence[ReconciliationItem], **kw: Any
    ) -> None:
        super().__init__(message, **kw)
        self.execution_id = execution_id
        self.items: tuple[ReconciliationItem, ...] = tuple(items)


class ExecutionLockedError(ExecutionControlError):
    """Another writer holds this execution (S10); raised at once, never after a wait.

    Recoverable: once the holder releases it (or its process dies), a later attempt succeeds.
    """

    default_code = "execution_locked"
    default_category = "system"
    default_recoverable = True

    def __init__(self, message: str, *, execution_id: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.execution_id = execution_id


class ExecutionStateError(RobotaError):
    """The execution is not in a state that allows the request.

    For example: resuming an unknown or completed execution, running with an id already used,
    answering a request that is not pending, live history that conflicts with the checkpoint.
    """

    default_code = "execution_state"
    default_category = "user"


@final
@dataclass(frozen=True, slots=True)
class OutsideRequest:
    """A saved request for an outside response, pending in a suspended execution (S40).

    Attributes:
        id: Pass it to :meth:`~robota.Agent.respond`.
        kind: What kind of response the tool asked for (its own vocabulary).
        payload: What the tool sent with it.
        call_id: The waiting tool body's id (:attr:`~robota.ToolContext.call_id`).
        tool_name: The waiting tool.
    """

    id: str
    kind: str
    payload: Any = None
    call_id: str | None = None
    tool_name: str | None = None
