"""Starting, watching and steering agent runs on Temporal, from any process with a client.

Internal; re-exported by :mod:`robota.temporal`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Final, Literal, cast, get_args

import pydantic
from temporalio.client import (
    Client,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import (
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import ApplicationError, CancelledError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from robota.core import (
    ConfigurationError,
    ErrorCategory,
    ExecutionControlError,
    ExecutionJournal,
    ExecutionStateError,
    GuardrailPhase,
    GuardrailTripped,
    MessagePart,
    OutsideRequest,
    ReconciliationItem,
    ReconciliationRequired,
    RobotaError,
    StructuredOutputError,
    UsageLimits,
)
from robota.core.payloads import check_settings, user_content
from robota.core.providers import ModelSettings
from robota.core.schema import check_parameter_schema, schema_from_type
from robota.temporal._codec import (
    PROVIDER_ERRORS,
    RunInput,
    RunOutput,
    limit_error,
    provider_error,
)
from robota.temporal._media import store_input_media
from robota.temporal._workflow import (
    APPROVE_SIGNAL,
    APPROVE_UPDATE,
    RECONCILE_UPDATE,
    RESPOND_SIGNAL,
    RESPOND_UPDATE,
    STATE_QUERY,
    WORKFLOW_NAME,
)

__all__ = [
    "InputRequired",
    "PendingApproval",
    "RunState",
    "approve",
    "get_result",
    "reconcile",
    "respond",
    "run_state",
    "start_agent_run",
]


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A permission ``ask`` waiting for a person (S21).

    Attributes:
        id: Pass it to :func:`approve`.
        tool: The tool's name.
        arguments: The call's arguments.
        reason: Why approval is needed.
        agent: The sub-agent whose call it is, as its path (``"parent/child"``, issue 29);
            ``None`` for the registered agent's own calls.
    """

    id: str
    tool: str
    arguments: Mapping[str, Any]
    reason: str
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class RunState:
    """What :func:`run_state` reports about a running agent workflow.

    Attributes:
        status: ``"running"``, ``"awaiting_approval"``, ``"awaiting_reconciliation"`` or
            ``"done"``.
        text: The assistant text so far: every finished round's, then the live deltas of the
            round in flight (poll it to stream). The registered agent's own: a sub-agent's or
            a guardrail agent's text is not part of it (issue 29).
        approvals: Asks waiting for :func:`approve`.
        reconciliation: Effects waiting for :func:`reconcile` (S40).
        rounds: Model calls made so far.
        requests: Tool bodies waiting for an outside response (S40), for :func:`respond`.
    """

    status: str
    text: str
    approvals: tuple[PendingApproval, ...]
    reconciliation: tuple[ReconciliationItem, ...]
    rounds: int
    requests: tuple[OutsideRequest, ...] = ()


class InputRequired(ExecutionControlError):
    """The run waits for a person or another system: ``get_result(..., stop_for_input=True)``.

    Raised as :class:`~robota.ReconciliationRequired` is, so a host drives a run with one loop:
    answer each of :attr:`approvals` with :func:`approve` and each of :attr:`requests` with
    :func:`respond`, then call :func:`get_result` again. The run keeps waiting meanwhile;
    nothing was refused or re-run.

    Attributes:
        execution_id: The run's workflow id.
        approvals: Permission asks waiting for :func:`approve` (S21).
        requests: Outside-response requests waiting for :func:`respond` (S40).
    """

    default_code = "input_required"

    def __init__(
        self,
        message: str,
        *,
        execution_id: str,
        approvals: Sequence[PendingApproval] = (),
        requests: Sequence[OutsideRequest] = (),
        **kw: Any,
    ) -> None:
        super().__init__(message, **kw)
        self.execution_id = execution_id
        self.approvals: tuple[PendingApproval, ...] = tuple(approvals)
        self.requests: tuple[OutsideRequest, ...] = tuple(requests)


async def start_agent_run(
    client: Client,
    agent_name: str,
    input: str | Sequence[MessagePart],
    *,
    task_queue: str,
    id: str | None = None,
    max_rounds: int | None = None,
    tool_choice: Literal["auto", "none", "required"] | None = None,
    model_timeout: float = 300.0,
    tool_timeout: float = 600.0,
    heartbeat_timeout: float = 10.0,
    settings: ModelSettings | None = None,
    output: object = None,
    output_retries: int | None = None,
    journal: ExecutionJournal | None = None,
    limits: UsageLimits | None = None,
    execution_timeout: float | timedelta | None = None,
    run_timeout: float | timedelta | None = None,
    task_timeout: float | timedelta | None = None,
    id_reuse_policy: WorkflowIDReusePolicy | None = None,
    id_conflict_policy: WorkflowIDConflictPolicy | None = None,
    search_attributes: TypedSearchAttributes | None = None,
) -> WorkflowHandle[Any, Any]:
    """Start one turn of the registered agent ``agent_name`` as a Temporal workflow.

    Args:
        client: A connected ``temporalio.client.Client``.
        agent_name: The name the agent is registered under on the workers.
        input: The user's message: a string, or a sequence of parts. Without ``journal``
            their bytes travel in the workflow's input payload, base64, and an input whose
            media are over what a Temporal payload carries is refused before the run starts.
        task_queue: The task queue the workers poll.
        id: The workflow id (also the run's execution id); default: a fresh one.
        max_rounds: The run's round budget (default: the agent's).
        tool_choice: ``"none"`` offers no tools this run; ``"required"`` asks for a call.
        model_timeout: Seconds one model call may take.
        tool_timeout: Seconds one tool body may take.
        heartbeat_timeout: Seconds without a heartbeat before a worker counts as gone and its
            activity is retried on another.
        settings: The run's :class:`~robota.ModelSettings` (S28); its set fields override the
            registered agent's. They reach every model-call activity of the run.
        output: Ask for a structured result (S18), as ``Agent.run(output=...)`` does: a type (a
            pydantic model, a dataclass, a ``TypedDict`` …) or an object JSON schema. Its
            schema travels with the run; every retry turn is a model-call activity, so a
            replay never asks the model again. The validated JSON value is
            :attr:`RunOutput.output`; ``get_result(handle, output=Type)`` builds the type.
        output_retries: Retry turns after an invalid structured reply (default: 2).
        journal: The execution journal the workers share (``create_worker(journal=...)``).
            Each media part of ``input`` over 64 KiB (base64) is written to it before the run
            starts, and the run carries a small stand-in; every model call swaps the stored
            part back in, so large images, PDFs and audio never cross Temporal's payloads.
        limits: The run's :class:`~robota.UsageLimits` (S31), laid over the registered agent's
            field by field and checked in the workflow before each model-call activity (whose
            output cap is lowered to what remains); a run that would pass one fails with
            ``UsageLimitExceeded``.
        execution_timeout: Temporal's workflow execution timeout (seconds or a ``timedelta``):
            past it the run is terminated, wherever it is. Default: none.
        run_timeout: Temporal's workflow run timeout (one run of the execution). Default: none.
        task_timeout: Temporal's workflow task timeout (one step of the loop in workflow code;
            the server caps it at 120 s). Default: Temporal's 10 s.
        id_reuse_policy: Whether ``id`` may be reused after a run with that id closed
            (``temporalio.common.WorkflowIDReusePolicy``). Default: Temporal's (allowed).
        id_conflict_policy: What happens when a run with ``id`` is still running
            (``temporalio.common.WorkflowIDConflictPolicy``): ``FAIL`` (the default, raised as
            below), ``USE_EXISTING`` (the running run's handle is returned) or
            ``TERMINATE_EXISTING``.
        search_attributes: The run's ``temporalio.common.TypedSearchAttributes``, for listing
            runs (the attributes must be registered on the namespace).

    Returns:
        The workflow's handle: pass it to :func:`get_result`, :func:`run_state`,
        :func:`approve`, :func:`reconcile`; ``handle.cancel()`` interrupts the run (S23).

    Raises:
        ConfigurationError: for an empty agent name or task queue, a bad ``tool_choice``,
            ``max_rounds``, timeout or ``output``, or, without ``journal``, input media over
            what a Temporal payload carries, or a start option of the wrong type.
        ExecutionStateError: ``code="run_id_in_use"``: a run with ``id`` is running (or, under
            ``id_reuse_policy``, ran) and the policies refuse a new one.
        ConfigurationError: ``code="temporal_refused"``: the service refused the start
            options (a search attribute the namespace has not registered, say).
        RobotaError: ``code="temporal_service"``: the service failed otherwise.
    """
    start_options = _start_options(
        execution_timeout=execution_timeout,
        run_timeout=run_timeout,
        task_timeout=task_timeout,
        id_reuse_policy=id_reuse_policy,
        id_conflict_policy=id_conflict_policy,
        search_attributes=search_attributes,
    )
    _check_text("agent_name", agent_name)
    _check_text("task_queue", task_queue)
    content = user_content(input, "start_agent_run(input=...)")  # refuses anything else
    choice: object = tool_choice
    if choice not in (None, "auto", "none", "required"):
        raise ConfigurationError(f"tool_choice must be auto, none or required, got {choice!r}")
    rounds: object = max_rounds
    if rounds is not None and (
        isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1
    ):
        raise ConfigurationError(f"max_rounds must be a positive integer, got {max_rounds!r}")
    timeouts: tuple[tuple[str, object], ...] = (
        ("model_timeout", model_timeout),
        ("tool_timeout", tool_timeout),
        ("heartbeat_timeout", heartbeat_timeout),
    )
    for label, value in timeouts:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigurationError(f"{label} must be a positive number of seconds: {value!r}")
    schema = None if output is None else _output_schema(output)
    retries: object = output_retries
    if retries is not None and (
        isinstance(retries, bool) or not isinstance(retries, int) or retries < 0
    ):
        raise ConfigurationError(
            f"output_retries must be a non-negative integer, got {output_retries!r}"
        )
    if journal is not None and not isinstance(journal, ExecutionJournal):
        raise ConfigurationError(
            "journal must be the ExecutionJournal the workers share (robota.host.SQLiteJournal, "
            f"robota.host.PostgresJournal …), got {journal!r}"
        )
    workflow_id = id or f"robota-{agent_name}-{uuid.uuid4().hex}"
    content, stored = await store_input_media(content, workflow_id, journal)
    spec = RunInput(
        agent=agent_name,
        input=content,
        max_rounds=max_rounds,
        tool_choice=tool_choice,
        model_timeout=float(model_timeout),
        tool_timeout=float(tool_timeout),
        heartbeat_timeout=float(heartbeat_timeout),
        settings=check_settings(settings, "settings"),
        output_schema=schema,
        output_retries=output_retries,
        stored=stored,
        limits=_check_limits(limits),
    )
    try:
        return await client.start_workflow(
            WORKFLOW_NAME, spec.encode(), id=workflow_id, task_queue=task_queue, **start_options
        )
    except WorkflowAlreadyStartedError:
        raise ExecutionStateError(
            f"a run with id {workflow_id!r} is already running, or ran and its id may not be "
            "reused (id_reuse_policy / id_conflict_policy)",
            code="run_id_in_use",
        ) from None
    except RPCError as error:
        if error.status == RPCStatusCode.INVALID_ARGUMENT:  # e.g. an unregistered attribute
            raise ConfigurationError(
                f"Temporal refused to start the run: {error.message}", code="temporal_refused"
            ) from None
        raise _rpc_error(handle=None, error=error) from None


_TIMEOUTS: Final = ("execution_timeout", "run_timeout", "task_timeout")
_POLICIES: Final = (
    ("id_reuse_policy", WorkflowIDReusePolicy),
    ("id_conflict_policy", WorkflowIDConflictPolicy),
    ("search_attributes", TypedSearchAttributes),
)


def _start_options(**given: object) -> dict[str, Any]:
    """The Temporal start options that were given, checked: the keywords of ``start_workflow``."""
    options: dict[str, Any] = {}
    for label in _TIMEOUTS:
        value = given[label]
        if value is None:
            continue
        seconds = value.total_seconds() if isinstance(value, timedelta) else value
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
            raise ConfigurationError(
                f"{label} must be a positive number of seconds or a timedelta, got {value!r}"
            )
        options[label] = timedelta(seconds=seconds)
    for label, kind in _POLICIES:
        value = given[label]
        if value is None:
            continue
        if not isinstance(value, kind):
            raise ConfigurationError(
                f"{label} must be a temporalio.common.{kind.__name__}, got {value!r}"
            )
        options[label] = value
    return options


def _check_limits(value: object) -> UsageLimits | None:
    if value is None or isinstance(value, UsageLimits):
        return value
    raise ConfigurationError(
        f"limits must be a robota.UsageLimits (e.g. UsageLimits(requests=10)), got {value!r}"
    )


def _output_schema(output: object) -> Mapping[str, Any]:
    """The JSON schema of ``output=`` (a type, or an object schema), checked as S18 checks it."""
    if isinstance(output, Mapping):
        schema: Mapping[str, Any] = output
    else:
        schema = schema_from_type(output)
    issues = check_parameter_schema(schema)
    if issues:
        raise ConfigurationError(
            "the output schema is not in the parameter-schema subset (S16): " + "; ".join(issues)
        )
    try:
        return cast("Mapping[str, Any]", json.loads(json.dumps(schema)))
    except (TypeError, ValueError) as error:
        raise ConfigurationError(f"the output schema is not JSON: {error}") from None


def _check_text(label: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise ConfigurationError(f"{label} must be a non-empty string, got {value!r}")


async def run_state(handle: WorkflowHandle[Any, Any]) -> RunState:
    """The run's state, from the workflow's ``robota.state`` query.

    Raises:
        ExecutionStateError: ``code="unknown_run"``: no workflow with the handle's id exists.
    """
    try:
        data = await handle.query(STATE_QUERY)
    except RPCError as error:
        raise _rpc_error(handle, error) from None
    return RunState(
        status=str(data["status"]),
        text=str(data["text"]),
        approvals=tuple(
            PendingApproval(
                str(a["id"]), str(a["tool"]), dict(a["arguments"]), str(a["reason"]), a.get("agent")
            )
            for a in data["approvals"]
        ),
        reconciliation=tuple(_item(r) for r in data["reconciliation"]),
        rounds=int(data["rounds"]),
        requests=tuple(
            OutsideRequest(
                str(r["request_id"]),
                str(r["kind"]),
                r.get("payload"),
                call_id=r.get("call_id"),
                tool_name=r.get("tool_name"),
            )
            for r in data.get("requests", ())
        ),
    )


def _item(details: Mapping[str, Any]) -> ReconciliationItem:
    return ReconciliationItem(
        id=str(details["call_id"]),
        kind="effect",
        call_id=str(details["call_id"]),
        tool_name=details.get("tool_name"),
        arguments=details.get("arguments"),
        detail="the tool body started in an attempt that never recorded a result",
    )


async def get_result(
    handle: WorkflowHandle[Any, Any],
    *,
    poll_interval: float = 1.0,
    output: object = None,
    stop_for_input: bool = False,
) -> RunOutput:
    """Wait for the run's result.

    A run waiting for a person or another system — an ``ask`` (:func:`approve`) or a tool's
    outside-response request (:func:`respond`) — is still running: by default this keeps
    waiting, and :func:`run_state` shows what it waits for. With ``stop_for_input=True`` such a
    wait is raised as :class:`InputRequired`, as an unsettled effect is raised as
    :class:`~robota.ReconciliationRequired`, so one loop drives a run::

        while True:
            try:
                return await get_result(handle, stop_for_input=True)
            except InputRequired as wait:
                for ask in wait.approvals:
                    await approve(handle, ask.id, approved=decide(ask))
                for request in wait.requests:
                    await respond(handle, request.id, answer(request))
            except ReconciliationRequired as unsettled:
                for item in unsettled.items:
                    await reconcile(handle, item.call_id or "", outcome=settle(item))

    Args:
        handle: The run's workflow handle.
        poll_interval: Seconds between looks at the run's state (a query; on a run no worker
            has cached, each is a replay).
        output: For a run started with ``output=``: the type to validate
            :attr:`RunOutput.output` into (a pydantic model, a dataclass, a ``TypedDict`` …).
        stop_for_input: Raise :class:`InputRequired` when the run waits for an answer, instead
            of waiting for it.

    Returns:
        The :class:`~robota.temporal.RunOutput`; for a cancelled run, ``status="interrupted"``
        with the text committed so far (S23). With ``output``, its ``output`` is an instance of
        that type (``None`` for an interrupted run).

    Raises:
        ReconciliationRequired: the run waits for the host to settle an effect that started
            without a recorded result (S40); each item's ``call_id`` names the call. Settle it
            with :func:`reconcile`, then call :func:`get_result` again.
        InputRequired: with ``stop_for_input``, the run waits for :func:`approve` or
            :func:`respond`; answer, then call :func:`get_result` again.
        ExecutionStateError: ``code="unknown_run"``: no workflow with the handle's id exists.
        ProviderError: the run failed at the provider.
        StructuredOutputError: the structured run's reply never validated within its retries,
            or ``output`` was given and the run's value does not validate into it.
        ConfigurationError: ``output`` was given for a run not started with ``output=``.
        RobotaError: the run failed otherwise (the error's ``code`` says how).
    """
    waiting = asyncio.ensure_future(handle.result())
    try:
        while True:
            done, _ = await asyncio.wait({waiting}, timeout=poll_interval)
            if done:
                break
            state: RunState | None = None
            with contextlib.suppress(Exception):  # a query can race completion; poll again
                state = await run_state(handle)
            if state is not None and state.reconciliation:
                calls = ", ".join(f"call {i.call_id} ({i.tool_name})" for i in state.reconciliation)
                raise ReconciliationRequired(
                    f"the run waits for reconciliation of {calls}",
                    execution_id=handle.id,
                    items=state.reconciliation,
                )
            if stop_for_input and state is not None and (state.approvals or state.requests):
                raise _input_required(handle.id, state)
    finally:
        if not waiting.done():
            waiting.cancel()
            with contextlib.suppress(BaseException):
                await waiting
    try:
        data = waiting.result()
    except WorkflowFailureError as failure:
        raise _robota_error(failure) from None
    except RPCError as error:
        raise _rpc_error(handle, error) from None
    result = RunOutput.decode(data)
    if output is None:
        return result
    return replace(result, output=_typed(result, output))


def _input_required(execution_id: str, state: RunState) -> InputRequired:
    waits = [f"approval {a.id} ({a.tool})" for a in state.approvals]
    waits += [f"request {r.id} ({r.tool_name or r.kind})" for r in state.requests]
    return InputRequired(
        "the run waits for " + ", ".join(waits),
        execution_id=execution_id,
        approvals=state.approvals,
        requests=state.requests,
    )


def _rpc_error(handle: WorkflowHandle[Any, Any] | None, error: RPCError) -> RobotaError:
    """A failed call to the Temporal service, as a Robota error (S42)."""
    if handle is not None and error.status == RPCStatusCode.NOT_FOUND:
        return ExecutionStateError(
            f"no run with workflow id {handle.id!r} is there to answer ({error.message})",
            code="unknown_run",
        )
    return RobotaError(
        f"the Temporal service refused the call: {error.message}",
        code="temporal_service",
        category="system",
        recoverable=error.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED),
    )


async def _answer(
    handle: WorkflowHandle[Any, Any], update: str, earlier: str, answer: Mapping[str, Any]
) -> None:
    """Send an answer update; a refusal is raised as ``ExecutionStateError`` with its code.

    A run on a worker of a release before the update (a rolling deploy, hosts first) does not
    know it: the answer goes as that release's ``earlier`` signal, which it honours.
    """
    try:
        await handle.execute_update(update, answer)
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError) and (cause.type or "").startswith("robota."):
            code = (cause.type or "").removeprefix("robota.")
            raise ExecutionStateError(cause.message, code=code) from None
        if _unknown_update(cause, update):
            try:
                await handle.signal(earlier, answer)
            except RPCError as signal_error:
                raise _rpc_error(handle, signal_error) from None
            return
        raise ExecutionStateError(f"the run refused the answer: {cause}") from None
    except WorkflowUpdateRPCTimeoutOrCancelledError as error:
        if isinstance(error.__cause__, asyncio.CancelledError):
            raise error.__cause__ from None  # the caller was cancelled: asyncio's own (S23)
        raise RobotaError(
            "the Temporal service did not confirm the answer in time (no worker took it?); "
            "it may still reach the run: check run_state before answering again",
            code="temporal_timeout",
            category="system",
            recoverable=True,
        ) from None
    except RPCError as error:
        raise _rpc_error(handle, error) from None


def _unknown_update(cause: BaseException | None, update: str) -> bool:
    """The worker's workflow has no handler for ``update`` (the SDK's rejection, by its text)."""
    return (
        isinstance(cause, ApplicationError)
        and cause.type == "RuntimeError"
        and cause.message.startswith(f"Update handler for '{update}' expected but not found")
    )


def _typed(result: RunOutput, output: object) -> object:
    if not result.structured:
        raise ConfigurationError(
            "get_result(output=...) validates a structured run's output, and this run was not "
            "started with start_agent_run(..., output=...)"
        )
    if result.output is None:
        return None  # an interrupted run has no output (S23)
    try:
        return pydantic.TypeAdapter(output).validate_python(result.output)  # type: ignore[arg-type]
    except pydantic.ValidationError as error:
        issues = tuple(str(item["msg"]) for item in error.errors())
        raise StructuredOutputError(
            f"the run's output does not validate as {getattr(output, '__name__', output)}: "
            + "; ".join(issues),
            issues=issues,
            attempts=0,
        ) from None


_CATEGORIES: frozenset[object] = frozenset(get_args(ErrorCategory))
_PHASES: frozenset[object] = frozenset(get_args(GuardrailPhase))


def _robota_error(failure: WorkflowFailureError) -> RobotaError:
    cause = failure.cause
    if isinstance(cause, ApplicationError) and (cause.type or "").startswith("robota."):
        kind = (cause.type or "").removeprefix("robota.")
        first = cause.details[0] if cause.details else {}
        details: Mapping[str, Any] = first if isinstance(first, Mapping) else {}
        code = details.get("code")
        if kind in PROVIDER_ERRORS:
            # S42: the vendor's status and type, and whether another model could serve it.
            return provider_error(kind, cause.message, details, provider=None, model=None)
        if kind == "ConfigurationError":
            return ConfigurationError(cause.message, code=code)
        if kind == "UsageLimitExceeded" and "limit" in details:
            return limit_error(cause.message, details)
        if kind == "GuardrailTripped" and details.get("phase") in _PHASES:
            # Issue 29: the same named error as in-process, with the guardrail's reason.
            return GuardrailTripped(
                str(details.get("guardrail", "")), str(details.get("reason", "")), details["phase"]
            )
        if kind == "StructuredOutputError":
            issues = details.get("issues")
            return StructuredOutputError(
                cause.message,
                issues=[str(i) for i in issues] if isinstance(issues, list) else (),
                attempts=int(details.get("attempts") or 0),
            )
        category, recoverable = details.get("category"), details.get("recoverable")
        return RobotaError(
            cause.message,
            code=code,
            category=category if category in _CATEGORIES else None,
            recoverable=recoverable if isinstance(recoverable, bool) else None,
        )
    if isinstance(cause, CancelledError):
        return RobotaError("the run's workflow was cancelled before it started", code="cancelled")
    return RobotaError(f"the run's workflow failed: {cause}", code="workflow_failed")


async def approve(
    handle: WorkflowHandle[Any, Any],
    approval_id: str,
    *,
    approved: bool,
    reason: str = "",
    remember: bool = False,
) -> None:
    """Answer a pending ``ask`` (see :attr:`RunState.approvals`) from any process.

    Args:
        handle: The run's workflow handle.
        approval_id: The pending approval's id.
        approved: Whether the call may proceed.
        reason: Shown to the model when refused.
        remember: Allow calls like this one for the rest of the run.

    The answer is a Temporal update: when this returns, the run has it. A run on a worker of a
    release before the update gets it as that release's ``robota.approve`` signal (which ignores
    an unknown id) instead.

    Raises:
        ExecutionStateError: the run refused the answer, its ``code`` saying why:
            ``"unknown_approval"`` (no such ask is pending — a mistyped id),
            ``"already_answered"``, ``"unknown_run"`` (no such run, or it has ended).
        RobotaError: ``code="temporal_timeout"``: the service did not confirm the answer in
            time (no worker took it); it may still reach the run. A cancelled call raises
            ``asyncio.CancelledError``; the answer may reach the run all the same.
    """
    await _answer(
        handle,
        APPROVE_UPDATE,
        APPROVE_SIGNAL,
        {"id": approval_id, "approved": bool(approved), "reason": reason, "remember": remember},
    )


async def respond(handle: WorkflowHandle[Any, Any], request_id: str, response: object) -> None:
    """Answer a tool's outside-response request (see :attr:`RunState.requests`), S40.

    The waiting call then runs again, and its ``ctx.request_outside_response`` returns
    ``response`` (JSON values). The answer is a Temporal update: when this returns, the run
    has it. A run on a worker of a release before the update gets it as that release's
    ``robota.respond`` signal (which ignores an unknown id) instead.

    Raises:
        ExecutionStateError: the run refused the answer, its ``code`` saying why:
            ``"unknown_request"`` (no such request is pending — a mistyped id),
            ``"already_answered"``, ``"unknown_run"`` (no such run, or it has ended).
        RobotaError: ``code="temporal_timeout"``: the service did not confirm the answer in
            time (no worker took it); it may still reach the run. A cancelled call raises
            ``asyncio.CancelledError``; the answer may reach the run all the same.
    """
    await _answer(
        handle, RESPOND_UPDATE, RESPOND_SIGNAL, {"request_id": request_id, "response": response}
    )


async def reconcile(
    handle: WorkflowHandle[Any, Any],
    call_id: str,
    *,
    outcome: Literal["settled", "failed", "rerun"],
    content: str = "",
    is_error: bool = False,
) -> None:
    """Settle an effect that started without a recorded result (S40).

    Args:
        handle: The run's workflow handle.
        call_id: The call, as :class:`ReconciliationRequired` names it.
        outcome: ``"settled"`` — the effect happened; ``content`` is the result the model
            sees. ``"failed"`` — it did not; the model sees a failure (``content`` or a
            default text). ``"rerun"`` — run the body again (the host decided it is safe).
        content: The result text for ``"settled"`` and ``"failed"``.
        is_error: Whether a settled result reports a failure.

    Raises:
        ConfigurationError: for an unknown outcome.
        temporalio.client.WorkflowUpdateFailedError: no such call waits for reconciliation.
    """
    if outcome not in ("settled", "failed", "rerun"):
        raise ConfigurationError(f"outcome must be settled, failed or rerun, got {outcome!r}")
    await handle.execute_update(
        RECONCILE_UPDATE,
        {"call_id": call_id, "outcome": outcome, "content": content, "is_error": is_error},
    )
