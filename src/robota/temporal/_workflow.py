"""The Robota agent workflow: the loop in workflow code, its calls as activities.

Internal. The workflow builds the registered agent from its factory and routes every provider
call and every tool body to an activity (:func:`robota.lowlevel.route_dispatch`); the loop itself —
its guards, the permission gate, ``tool_search``, structured output — runs here, unchanged.
So do its sub-agents' loops and guardrail agents' (issue 29, :mod:`robota.temporal._routing`);
a function guardrail's check is the ``robota.guardrail`` activity.
Everything the loop mints (ids, timestamps) comes from Temporal's replayable sources
(:func:`robota.core._messages.deterministic`), so a replay on another worker mints the same.

Control, from :mod:`robota.temporal._client`:

* a Temporal cancel becomes the run's abort signal (S23): the loop stops, the activity in flight
  is cancelled, and the workflow *returns* the interrupted result with the text so far;
* an ``ask`` of the permission gate waits for the ``robota.answer_approval`` update, and a
  tool's outside-response request (S40) for ``robota.answer_request``; each refuses an unknown
  or already answered id at the caller (the ``robota.approve`` and ``robota.respond`` signals of
  earlier clients are still honoured, and ignore such ids);
* an effect that started without a recorded result (S40) waits for the ``robota.reconcile``
  update, which settles it, fails it or runs it again;
* the ``robota.state`` query reports status, pending approvals and reconciliations, and the text
  so far (committed rounds and the live deltas of the round in flight).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any, Final

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, FailureError
from temporalio.workflow import ActivityCancellationType

from robota.core import (
    AbortSignal,
    EffortResolution,
    ExecutionControlError,
    GuardrailResult,
    GuardrailTripped,
    Provider,
    ProviderCapabilities,
    ProviderError,
    RobotaError,
    StructuredOutputError,
    Tool,
    ToolCallCheck,
    ToolContext,
    ToolMessage,
    ToolOutput,
    ToolResult,
    UsageLimitExceeded,
    abort_error_from_reason,
)
from robota.core import (
    RetryPolicy as ModelRetryPolicy,
)
from robota.core.providers import (
    ChatRequest,
    ChatResponse,
    StreamEvent,
    TextDelta,
    collect_stream,
    stream_response,
)
from robota.lowlevel import deterministic, new_id
from robota.temporal._activities import (
    GUARDRAIL,
    MODEL_CALL,
    OUTSIDE_RESPONSE_REQUIRED,
    RECONCILIATION_REQUIRED,
    SETUP_FAILED,
    TEXT_SIGNAL,
    TOOL_CALL,
    AgentRegistry,
)
from robota.temporal._codec import (
    GuardrailInput,
    RunInput,
    RunOutput,
    ToolCallInput,
    decode_response,
    decode_result,
    decode_verdict,
    encode_request,
    limit_details,
    provider_error,
)
from robota.temporal._routing import Router, check_runnable, own_gate
from robota.temporal._run import WorkflowRun, refusal

__all__ = [
    "APPROVE_SIGNAL",
    "APPROVE_UPDATE",
    "RECONCILE_UPDATE",
    "RESPOND_SIGNAL",
    "RESPOND_UPDATE",
    "STATE_QUERY",
    "WORKFLOW_NAME",
    "RobotaAgentWorkflow",
    "bind_registry",
]

WORKFLOW_NAME: Final = "robota.agent"
"""The workflow type every Robota run starts."""
APPROVE_SIGNAL: Final = "robota.approve"
"""The signal that answers a pending approval."""
APPROVE_UPDATE: Final = "robota.answer_approval"
"""The update that answers a pending approval; it refuses an unknown or answered id."""
RESPOND_UPDATE: Final = "robota.answer_request"
"""The update that answers an outside-response request; it refuses an unknown or answered id."""
RECONCILE_UPDATE: Final = "robota.reconcile"
"""The update that settles an unsettled effect."""
RESPOND_SIGNAL: Final = "robota.respond"
"""The signal that answers a tool's outside-response request (S40)."""
STATE_QUERY: Final = "robota.state"
"""The query that reports the run's state."""

_RECONCILE_OUTCOMES: Final = ("settled", "failed", "rerun")
_CONTROL: Final = (RECONCILIATION_REQUIRED, OUTSIDE_RESPONSE_REQUIRED)  # the workflow waits
_TOOL_ATTEMPTS: Final = 10  # a body's failure is a result; these retry the worker's failures


class _ActivityProvider(Provider):
    """The agent's provider as the loop sees it: its declarations, its calls an activity.

    ``path`` addresses a sub-agent's or guardrail agent's provider below the registered agent
    (issue 29); ``retry`` is that agent's own policy, applied by Temporal (issue 28).
    """

    robota_routed: Final = True  # a provider routed once is never routed again

    def __init__(
        self,
        real: Provider,
        agent: str,
        run: WorkflowRun,
        path: tuple[str, ...] = (),
        retry: ModelRetryPolicy | None = None,
    ) -> None:
        self._real = real
        self._agent = agent
        self._run = run
        self._path = path
        self._retry = retry

    @property
    def name(self) -> str:
        return self._real.name

    def capabilities(self) -> ProviderCapabilities | None:
        return self._real.capabilities()

    def resolve_effort(self, request: ChatRequest) -> EffortResolution | None:
        return self._real.resolve_effort(request)

    def endpoint_provenance(self) -> Any:
        return self._real.endpoint_provenance()

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        run = self._run
        stream = new_id("stream")
        if self._path:
            run.aside.add(stream)  # a sub-agent's text is not the run's (issue 29)
        payload: dict[str, Any] = {
            "agent": self._agent,
            "provider": self._real.name,
            "request": encode_request(request),
            "stream": stream,
            "refs": {
                m.content: run.refs[m.content]
                for m in request.messages
                if isinstance(m, ToolMessage) and m.content in run.refs
            },
        }
        stored = run.spec.stored if run.spec is not None else ()
        if self._retry is not None:
            payload["max_retry_after"] = self._retry.max_retry_after  # caps a vendor's wait
        if stored:
            # The input's media kept aside (issue 26): the activity swaps each stand-in for the
            # journal's part. Version 2, so an older worker refuses instead of sending stand-ins.
            payload["request"]["v"] = 2
            payload["media"] = {item.ref: {"key": item.key, "slot": item.slot} for item in stored}
        if self._path:
            # Issue 29: a sub-agent's call. Version 3, so an older worker refuses it instead of
            # sending it with the registered agent's provider of the same name.
            payload["request"]["v"] = 3
            payload["path"] = list(self._path)
        size = len(json.dumps(payload))
        if size > _MAX_OUTPUT_BYTES:
            # Scheduling it would fail the workflow task over and over (Temporal refuses
            # payloads over 2 MiB): fail the round instead, readably.
            media = _inline_media_bytes(request)
            advice = (
                f"; {media} of them are media parts carried inline — keep the input's media "
                "aside with start_agent_run(..., journal=...) and give the workers a journal"
                if media
                else ""
            )
            raise ProviderError(
                f"the request is {size} bytes, over the {_MAX_OUTPUT_BYTES} a Temporal payload "
                "carries; shorten the conversation (max_history_messages) or return smaller "
                f"tool results{advice}",
                provider=self._real.name,
                model=request.model,
                code="payload_too_large",
                recoverable=False,
            )
        run.rounds += 1
        run_signal = signal if isinstance(signal, AbortSignal) else None
        handle = workflow.start_activity(
            MODEL_CALL,
            payload,
            retry_policy=_model_call_retry(self._retry),
            **run.activity_options(tool=False),
        )
        try:
            data = await handle
        except (asyncio.CancelledError, ActivityError) as error:
            if run_signal is None or not run_signal.aborted:
                if isinstance(error, ActivityError):
                    raise _provider_error(error, self._real.name, request.model) from None
                raise
            # S23: the run was aborted while the call was in flight. The activity is cancelled;
            # the reply so far is what reached this workflow live, and it ends the stream (the
            # loop then commits it as interrupted).
            handle.cancel()
            partial = run.text_of(stream)
            run.commit(stream, partial)
            if partial:
                yield TextDelta(partial)
            return
        response = decode_response(data)
        run.commit(stream, response.content)
        async for event in stream_response(response):
            yield event


def _inline_media_bytes(request: ChatRequest) -> int:
    """The bytes of media parts a request carries inline, base64 as the payload holds them."""
    total = 0
    for message in request.messages:
        parts: tuple[Any, ...] = message.parts if isinstance(message, ToolMessage) else ()
        if not isinstance(message.content, str):
            parts += message.content
        total += sum((len(part.data) + 2) // 3 * 4 for part in parts if getattr(part, "data", None))
    return total


def _provider_error(error: ActivityError, provider: str, model: str) -> ProviderError:
    cause = error.cause
    if isinstance(cause, ApplicationError) and (cause.type or "").startswith("robota."):
        return provider_error(
            (cause.type or "").removeprefix("robota."),
            cause.message,
            cause.details[0] if cause.details else None,
            provider=provider,
            model=model,
        )
    message = str(cause) if cause is not None else str(error)
    return ProviderError(
        f"the model-call activity failed: {message}", provider=provider, model=model
    )


class _ActivityTool(Tool):
    """A registered tool as the loop sees it: its schema and declarations, its body an activity.

    Arguments are judged here by the real tool (S16), so a refusal reads the same as in-process;
    the body receives them converted in the activity, where the real tool validates them again.
    """

    def __init__(
        self, real: Tool, agent: str, run: WorkflowRun, path: tuple[str, ...] = ()
    ) -> None:
        super().__init__(
            real.name,
            real.description,
            real.parameters,
            risk=real.risk,
            permission_argument=real.permission_argument,
            source=real.source,
            defer=real.residency == "deferred",
            idempotent=real.idempotent,
        )
        self.operator_only = real.operator_only
        self._real = real
        self._agent = agent
        self._run = run
        self._path = path  # issue 29: a sub-agent's tool, by the sub-agent's path

    def validate_arguments(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        self._real.validate_arguments(arguments)  # the verdict (raises), not the conversion
        return arguments

    async def _run_activity(self, call: ToolCallInput, ctx: ToolContext) -> Any:
        # S23/S38: an abort cancels the activity, which aborts the body's own signal; the body
        # finishes (a running tool is never cut off) and its result is what the call returns.
        payload = call.encode()
        size = len(json.dumps(payload))
        if size > _MAX_OUTPUT_BYTES:
            # Scheduling it would fail the workflow task for ever; the body has not run.
            raise RuntimeError(
                f"the call's input (arguments and outside responses) is {size} bytes, over the "
                f"{_MAX_OUTPUT_BYTES} a Temporal payload carries"
            )
        handle = workflow.start_activity(
            TOOL_CALL,
            payload,
            retry_policy=RetryPolicy(
                maximum_attempts=_TOOL_ATTEMPTS, non_retryable_error_types=list(_CONTROL)
            ),
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            **self._run.activity_options(tool=True),
        )
        await workflow.wait_condition(lambda: handle.done() or ctx.signal.aborted)
        if not handle.done():
            handle.cancel()
        try:
            return await handle
        except ActivityError as error:
            if ctx.signal.aborted and isinstance(error.cause, CancelledError):
                raise abort_error_from_reason(ctx.signal.reason) from None
            raise

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        run = self._run
        call = ToolCallInput(
            agent=self._agent,
            tool=self.name,
            arguments=dict(args),
            call_id=ctx.call_id,
            provider_call_id=ctx.provider_call_id,
            round=ctx.round,
            path=self._path,
        )
        while True:
            try:
                data = await self._run_activity(call, ctx)
                ref = data.get("ref")
                if isinstance(ref, Mapping):
                    run.refs[str(ref["marker"])] = str(ref["key"])  # stored aside (large)
                return decode_result(data)
            except ActivityError as error:
                cause = error.cause
                if not (isinstance(cause, ApplicationError) and cause.type in _CONTROL):
                    message = cause.message if isinstance(cause, ApplicationError) else str(cause)
                    if isinstance(cause, ApplicationError) and cause.type == SETUP_FAILED:
                        # The worker could not start the body (an unknown tool, a newer
                        # payload): it never ran, and the model sees the failure.
                        failed = run.texts.render("setup_failed_error", error=message)
                        raise RuntimeError(failed) from None
                    # Out of attempts on the worker's side (journal unreachable, a held lock,
                    # timeouts): the body may have run. Never a result the model could retry
                    # (S40): the run fails, naming the call, so nothing runs twice.
                    raise ExecutionControlError(
                        f"the tool activity of call {call.call_id} ({self.name}) failed and its "
                        f"effect is uncertain: {message}",
                        code="effect_uncertain",
                    ) from None
                details = cause.details[0] if cause.details else {"call_id": call.call_id}
                if cause.type == OUTSIDE_RESPONSE_REQUIRED:
                    # S40: the body waits for an outside response: so does the run, until the
                    # robota.respond signal brings it; then the same call runs again.
                    answer = await run.outside(details)
                    # The wait is recorded before the effect: no start before it is unsettled
                    # any more, so no earlier "rerun" carries over.
                    call = replace(call, responses={**call.responses, **answer}, rerun=0)
                    continue
                decision = await run.reconcile(details)
                outcome = decision["outcome"]
                if outcome == "rerun":
                    # The host saw these starts; a start after them is reconciled again.
                    call = replace(call, rerun=int(details.get("starts", 1)))
                    continue
                content = str(decision.get("content", ""))
                if outcome == "failed":
                    return ToolResult(content or run.texts.settled_failed_result, True)
                return ToolResult(content, is_error=bool(decision.get("is_error", False)))


_MAX_OUTPUT_BYTES: Final = 1536 * 1024  # under Temporal's 2 MiB, which would wedge the run


async def _check_in_activity(run: WorkflowRun, check: GuardrailInput, name: str) -> GuardrailResult:
    """A function guardrail's check, as the ``robota.guardrail`` activity (issue 29).

    Outside workflow code: the function may read the clock, call a service or fail like any
    code, and its verdict is recorded in the run's history, so a replay never runs it again.
    """
    value = check.value
    if isinstance(value, ToolCallCheck) and value.result is not None and value.result in run.refs:
        # A result stored aside: the check reviews the stored content, not the marker (which
        # a model call would resolve to that content, past the check).
        check = replace(check, ref=run.refs[value.result])
    payload = check.encode()
    size = len(json.dumps(payload, default=str))
    if size > _MAX_OUTPUT_BYTES:
        raise ExecutionControlError(
            f"the value guardrail {name!r} checks is {size} bytes, over the {_MAX_OUTPUT_BYTES} "
            "a Temporal payload carries",
            code="payload_too_large",
        )
    try:
        data = await workflow.execute_activity(
            GUARDRAIL,
            payload,
            retry_policy=RetryPolicy(maximum_attempts=_TOOL_ATTEMPTS),
            **run.activity_options(tool=True),
        )
    except ActivityError as error:
        cause = error.cause
        message = cause.message if isinstance(cause, ApplicationError) else str(cause)
        # A guardrail fails closed (issue 29): its failure fails the run; nothing is guessed.
        raise ExecutionControlError(
            f"the guardrail {name!r} failed: {message}", code="guardrail_failed"
        ) from None
    return decode_verdict(data)


def _bounded(output: RunOutput) -> dict[str, Any]:
    """The output's payload, within Temporal's limit: the messages are left out if they must be."""
    payload = output.encode()
    if len(json.dumps(payload)) <= _MAX_OUTPUT_BYTES:
        return payload
    payload = replace(output, messages=(), messages_omitted=True).encode()
    if len(json.dumps(payload)) <= _MAX_OUTPUT_BYTES:
        return payload
    raise ApplicationError(
        f"the run's final text is over {_MAX_OUTPUT_BYTES} bytes, more than a Temporal result "
        "carries",
        type="robota.PayloadTooLarge",
        non_retryable=True,
    )


def _failure(error: Exception) -> ApplicationError:
    """The run's failure as Temporal records it: non-retryable, typed, with what S42 keeps."""
    if isinstance(error, RobotaError):
        details: dict[str, Any] = {
            "code": error.code,
            "category": error.category,
            "recoverable": error.recoverable,
        }
        if isinstance(error, ProviderError):
            details.update(
                status=error.status,
                vendor_type=error.vendor_type,
                provider=error.provider,
                model=error.model,
                request_id=error.request_id,
                switchable=error.switchable,
                retry_after=error.retry_after,
            )
        if isinstance(error, StructuredOutputError):
            details.update(issues=list(error.issues), attempts=error.attempts)
        if isinstance(error, UsageLimitExceeded):
            details.update(limit_details(error))
        if isinstance(error, GuardrailTripped):
            details.update(guardrail=error.guardrail, phase=error.phase, reason=error.reason)
        message = error.message
    else:
        details, message = {"code": "internal"}, f"{type(error).__name__}: {error}"
    return ApplicationError(
        message, details, type=f"robota.{type(error).__name__}", non_retryable=True
    )


_REGISTRIES: dict[tuple[str, str], AgentRegistry] = {}


def bind_registry(namespace: str, task_queue: str, registry: AgentRegistry) -> None:
    """Make ``registry`` the agents this process's workflows on ``task_queue`` build.

    A workflow class cannot be made per worker (Temporal refuses local classes), so workers find
    their agents by namespace and task queue; the latest worker created for a queue wins.
    """
    _REGISTRIES[(namespace, task_queue)] = registry


def _registry() -> AgentRegistry:
    info = workflow.info()
    registry = _REGISTRIES.get((info.namespace, info.task_queue))
    if registry is None:
        raise RobotaError(
            f"no robota.temporal worker in this process serves task queue {info.task_queue!r}; "
            "create workers with robota.temporal.create_worker"
        )
    return registry


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class RobotaAgentWorkflow:
    """Runs one turn of a registered agent (see the module docstring)."""

    def __init__(self) -> None:
        self._run = WorkflowRun()

    @workflow.run
    async def run(self, payload: Any) -> dict[str, Any]:
        state = self._run
        rng = workflow.random()
        try:
            spec = state.spec = RunInput.decode(payload)
            with deterministic(lambda: f"{rng.getrandbits(96):024x}", workflow.time):
                return _bounded(await self._turn(spec))
        except FailureError:
            raise  # already a failure Temporal records (an ApplicationError of ours, say)
        except Exception as error:  # noqa: BLE001 - every failure must end the run, not wedge it
            # Anything else would fail the workflow *task*, which Temporal retries for ever: a
            # bad payload, a factory that raises, a run that failed. End the run; say why.
            raise _failure(error) from None
        finally:
            state.finished = True

    async def _turn(self, spec: RunInput) -> RunOutput:
        state = self._run
        registry = _registry()
        agent = registry.build(spec.agent)
        check_runnable(agent, spec.agent, lambda: registry.build(spec.agent))
        state.texts = agent.texts
        # The whole tree (issue 29): the agent, its sub-agents and guardrail agents. Issue 28:
        # one owner of retries — each agent's RetryPolicy becomes its model-call activities'
        # Temporal retry policy, and no loop in the workflow retries as well (its jittered
        # sleeps would not replay). A fallback chain still switches models. Each agent's
        # permission gate is this run's own: an ask waits for the robota.answer_approval update to
        # *this* run, even when the factory hands every agent the same gate object.
        Router(
            lambda real, path, retry: _ActivityProvider(real, spec.agent, state, path, retry),
            lambda real, path: _ActivityTool(real, spec.agent, state, path),
            lambda check, name: _check_in_activity(state, replace(check, agent=spec.agent), name),
            own_gate(state.approve),
        ).route(agent)
        controller = state.controller
        options: dict[str, Any] = {"signal": controller.signal, "retry": None}
        if spec.max_rounds is not None:
            options["max_rounds"] = spec.max_rounds
        if spec.tool_choice is not None:
            options["tool_choice"] = spec.tool_choice
        if spec.settings is not None:
            options["settings"] = spec.settings
        if spec.limits is not None:
            options["limits"] = spec.limits  # S31: checked by the loop, here in the workflow
        if spec.output_schema is not None:
            # S18: each retry turn is one more model-call activity, so a replay reads every
            # attempt's reply from history and never asks the model again (S40).
            options["output"] = dict(spec.output_schema)
            if spec.output_retries is not None:
                options["output_retries"] = spec.output_retries
        task = asyncio.ensure_future(agent.run(spec.input, **options))
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            # S23: Temporal's cancel is the run's abort; the run returns interrupted.
            controller.abort("the Temporal workflow was cancelled")
            result = await task
        return RunOutput(
            agent=result.agent,
            usage_by_agent=result.usage_by_agent,
            guardrails=result.guardrails,
            text=result.text,
            status=result.status,
            stop_reason=result.stop_reason,
            rounds=result.rounds,
            tool_calls_executed=result.tool_calls_executed,
            usage=result.usage,
            messages=result.messages,
            execution_id=workflow.info().workflow_id,
            # A schema's output is the validated JSON value itself (no type to build).
            output=result.output if spec.output_schema is not None else None,
            structured=spec.output_schema is not None,
        )

    # Signal handlers never raise: a signal is in history, so one that fails would fail every
    # replay of the run. A malformed one is ignored.

    @workflow.signal(name=APPROVE_SIGNAL)
    def approve(self, answer: Any) -> None:
        if not isinstance(answer, dict):
            return
        approval_id, approved = answer.get("id"), answer.get("approved")
        if not isinstance(approval_id, str) or not isinstance(approved, bool):
            return
        if approval_id in self._run.approvals:
            self._run.record_approval(approval_id, answer)

    @workflow.signal(name=RESPOND_SIGNAL)
    def respond(self, answer: Any) -> None:
        if not isinstance(answer, dict):
            return
        request_id = answer.get("request_id")
        if isinstance(request_id, str) and request_id in self._run.requests:
            self._run.record_response(request_id, answer)

    # Updates (issue 32): the validator refuses a bad answer at the caller, and a refused update
    # is never in history. An accepted one takes the item off the pending list at once.

    @workflow.update(name=APPROVE_UPDATE)
    def answer_approval(self, answer: Any) -> str:
        approval_id = str(answer["id"])
        self._run.approvals.pop(approval_id, None)
        self._run.record_approval(approval_id, answer)
        return approval_id

    @answer_approval.validator
    def _check_approval(self, answer: Any) -> None:
        if not isinstance(answer, dict) or not isinstance(answer.get("approved"), bool):
            raise refusal("bad_answer", "an approval's answer is an object with approved: bool")
        self._check_pending(answer.get("id"), self._run.approvals, "approval", "unknown_approval")

    @workflow.update(name=RESPOND_UPDATE)
    def answer_request(self, answer: Any) -> str:
        request_id = str(answer["request_id"])
        self._run.requests.pop(request_id, None)
        self._run.record_response(request_id, answer)
        return request_id

    @answer_request.validator
    def _check_request(self, answer: Any) -> None:
        if not isinstance(answer, dict):
            raise refusal("bad_answer", "an outside response is an object with a request_id")
        self._check_pending(
            answer.get("request_id"), self._run.requests, "outside request", "unknown_request"
        )

    def _check_pending(
        self, item_id: object, pending: Mapping[str, Any], what: str, code: str
    ) -> None:
        if not isinstance(item_id, str):
            raise refusal("bad_answer", f"the {what}'s id must be a string, got {item_id!r}")
        if item_id in self._run.answered:
            raise refusal("already_answered", f"the {what} {item_id!r} was already answered")
        if item_id not in pending:
            waiting = ", ".join(sorted(pending)) or "none"
            raise refusal(
                code, f"no {what} {item_id!r} is pending in this run (pending: {waiting})"
            )

    @workflow.signal(name=TEXT_SIGNAL)
    def text(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            return
        key, attempt, text = chunk.get("key"), chunk.get("attempt"), chunk.get("text")
        if not isinstance(key, str) or not isinstance(text, str) or type(attempt) is not int:
            return
        if not key or key in self._run.done:
            return
        current = self._run.live.get(key)
        if current is None or current[0] < attempt:
            current = self._run.live[key] = (attempt, [])
        if current[0] == attempt:
            current[1].append(text)

    @workflow.update(name=RECONCILE_UPDATE)
    def reconcile(self, decision: Any) -> str:
        call_id = str(decision["call_id"])
        self._run.decisions[call_id] = decision
        return call_id

    @reconcile.validator
    def _check_reconcile(self, decision: Any) -> None:
        if not isinstance(decision, dict):
            raise ValueError("a reconciliation decision is an object")
        call_id = decision.get("call_id")
        if not isinstance(call_id, str):
            raise ValueError(f"call_id must be a string, got {call_id!r}")
        if call_id in self._run.decisions:
            raise ValueError(f"call {call_id!r} was already settled")
        if call_id not in self._run.pending:
            pending = ", ".join(sorted(self._run.pending)) or "none"
            raise ValueError(
                f"no effect of call {call_id!r} waits for reconciliation (pending: {pending})"
            )
        if decision.get("outcome") not in _RECONCILE_OUTCOMES:
            raise ValueError(
                f"outcome must be one of {', '.join(_RECONCILE_OUTCOMES)}, got "
                f"{decision.get('outcome')!r}"
            )

    @workflow.query(name=STATE_QUERY)
    def state(self) -> dict[str, Any]:
        run = self._run
        return {
            "status": run.status,
            "approvals": list(run.approvals.values()),
            "reconciliation": list(run.pending.values()),
            "requests": list(run.requests.values()),
            "text": run.text(),
            "rounds": run.rounds,
        }


_DEFAULT_MODEL_ATTEMPTS: Final = 5


def _model_call_retry(policy: ModelRetryPolicy | None) -> RetryPolicy:
    """Temporal's retry policy for a model-call activity: the agent's :class:`RetryPolicy`.

    Issue 28, one rule for both hosts: only a recoverable failure is retried (the activity
    raises the others non-retryable), on the policy's exponential schedule, honouring the
    vendor's ``Retry-After`` up to ``max_retry_after``. Temporal adds no jitter of its own, so
    the policy's ``jitter`` does not apply here. Without a policy: five attempts on Temporal's
    default schedule, as before.
    """
    if policy is None:
        return RetryPolicy(maximum_attempts=_DEFAULT_MODEL_ATTEMPTS)
    return RetryPolicy(
        initial_interval=timedelta(seconds=max(policy.initial_delay, 0.001)),
        backoff_coefficient=max(policy.multiplier, 1.0),
        maximum_interval=timedelta(seconds=max(policy.max_delay, policy.initial_delay, 0.001)),
        maximum_attempts=policy.attempts,
    )
