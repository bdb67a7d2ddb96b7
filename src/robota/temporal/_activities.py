"""The two activities every Robota workflow calls: a model call and a tool body.

Internal. Both run on a worker, outside workflow code, where time, ids and I/O are free. They
look the agent up by name in the worker's :class:`AgentRegistry` (a workflow cannot carry live
objects) and use the *real* provider and tool the agent's factory built.

Exactly-once effects on an at-least-once engine (S40): with a journal, a tool activity records
``EffectStarted`` before the body runs and ``EffectSettled`` when it returns, under the journal's
one-writer lease for that call. A retried attempt reads the record first: settled ⇒ the recorded
result is returned and the body is not run again; started but never settled ⇒ the earlier
attempt may have had its effect, so the activity raises ``robota.ReconciliationRequired`` (a
non-retryable application error) unless the tool is idempotent or the host chose to run it
again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import inspect
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import timedelta
from typing import Any, Final

from temporalio import activity
from temporalio.exceptions import ApplicationError

from robota.core import (
    TOOL_RESULT_BUDGET,
    AbortController,
    AbortSignal,
    Agent,
    AudioPart,
    ConfigurationError,
    DocumentPart,
    EffectSettled,
    EffectStarted,
    ExecutionJournal,
    ExecutionLockedError,
    ExecutionSuspendedError,
    GuardrailResult,
    ImagePart,
    Message,
    ModelTexts,
    OutsideRequested,
    Provider,
    ProviderError,
    StorageError,
    Tool,
    ToolCall,
    ToolCallCheck,
    ToolCallOutcome,
    ToolContext,
    ToolMessage,
    ToolResult,
    estimate_message_tokens,
    get_model_context_window,
    is_abort,
)
from robota.core.providers import ChatRequest, TextDelta, collect_stream
from robota.core.tools import to_tool_result
from robota.lowlevel import agent_parts, omitted_result_notice, tool_failure_text
from robota.temporal._codec import (
    GuardrailInput,
    ToolCallInput,
    decode_request,
    encode_response,
    encode_result,
    encode_verdict,
)
from robota.temporal._media import resolve_media

__all__ = [
    "GUARDRAIL",
    "MODEL_CALL",
    "RECONCILIATION_REQUIRED",
    "TEXT_SIGNAL",
    "TOOL_CALL",
    "AgentFactory",
    "AgentRegistry",
    "RobotaActivities",
]

MODEL_CALL: Final = "robota.model_call"
"""The model-call activity's name."""
TOOL_CALL: Final = "robota.tool_call"
"""The tool-body activity's name."""
GUARDRAIL: Final = "robota.guardrail"
"""The function-guardrail activity's name (issue 29)."""
GUARDRAIL_FAILED: Final = "robota.GuardrailFailed"
"""The application error type of a guardrail check that raised (the run fails, S42)."""
TEXT_SIGNAL: Final = "robota.text"
"""The signal a model-call activity sends its workflow text deltas with, for the caller's view."""
RECONCILIATION_REQUIRED: Final = "robota.ReconciliationRequired"
"""The application error type of an unsettled effect (S40)."""
OUTSIDE_RESPONSE_REQUIRED: Final = "robota.OutsideResponseRequired"
"""The application error type of a tool body waiting for an outside response (S40)."""
SETUP_FAILED: Final = "robota.ConfigurationError"
"""The application error type of an activity that could not start (its body never ran)."""

AgentFactory = Callable[[], Agent]
"""Builds one agent: called once per workflow run (the loop's agent) and once per worker
process (where the activities find the real provider and tools). It must build the same agent
every time, with no I/O of its own: workflow code replays it. Its sub-agents (``as_tool``) and
guardrail agents are built fresh by each call too (issue 29): a run routes them."""

INLINE_RESULT_BYTES: Final = 64 * 1024
"""A tool result larger than this (as Temporal's JSON encodes it) travels by reference when a
journal holds it."""
MAX_INLINE_BYTES: Final = 1024 * 1024
"""Without a journal, the largest result carried inline, encoded (Temporal refuses 2 MiB)."""

_FLUSH_SECONDS: Final = 0.5  # how often live text is signalled (each is a history event)
_MAX_ID: Final = 200  # the journal's execution-id bound


class AgentRegistry:
    """Agents by name, as a worker knows them.

    Args:
        agents: Name → :data:`AgentFactory`. Names are what ``start_agent_run`` passes.

    Raises:
        ConfigurationError: for an empty mapping, a non-string name or a non-callable factory.
    """

    def __init__(self, agents: Mapping[str, AgentFactory]) -> None:
        given: object = agents  # untyped callers can pass anything
        if not isinstance(given, Mapping) or not given:
            raise ConfigurationError(
                "agents must be a non-empty mapping of name → factory (a callable returning an "
                f"Agent), got {agents!r}"
            )
        for key, factory in given.items():
            name: object = key
            if not isinstance(name, str) or not name:
                raise ConfigurationError(f"an agent's name must be a non-empty string: {name!r}")
            if not callable(factory):
                raise ConfigurationError(
                    f"agent {name!r}: its factory must be a callable returning an Agent, got "
                    f"{factory!r}"
                )
        self._factories: dict[str, AgentFactory] = dict(agents)
        self._live: dict[str, Agent] = {}
        self._routed: set[Agent] = set()  # sub-agents whose SDK retries are off

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names."""
        return tuple(self._factories)

    def build(self, name: str) -> Agent:
        """A fresh agent from ``name``'s factory.

        Raises:
            ConfigurationError: for an unknown name or a factory that does not return an Agent.
        """
        factory = self._factories.get(name)
        if factory is None:
            known = ", ".join(sorted(self._factories))
            raise ConfigurationError(
                f"no agent is registered as {name!r} on this worker (registered: {known})"
            )
        agent = factory()
        if not isinstance(agent, Agent):
            raise ConfigurationError(
                f"agent {name!r}: its factory returned {type(agent).__name__}, not an Agent"
            )
        return agent

    def live(self, name: str) -> Agent:
        """The worker process's own instance of ``name``: where activities find the real parts."""
        agent = self._live.get(name)
        if agent is None:
            agent = self._live[name] = self.build(name)
            # One owner of retries (issue 28): Temporal's, the same rule an agent with a
            # RetryPolicy applies to the providers it built.
            for provider in agent_parts(agent).providers:
                provider.disable_sdk_retries()  # the public Provider method, no core internal
        return agent

    def agent_at(self, agent: str, path: Sequence[str] = ()) -> Agent:
        """The worker's instance of the agent at ``path`` below ``agent`` (issue 29).

        A step ``tool:<name>`` is the sub-agent the tool ``name`` runs (``Agent.as_tool``); a
        step ``guardrail:<index>:<check>`` is the guardrail agent of that check.
        """
        found = self.live(agent)
        for step in path:
            parts = agent_parts(found)
            kind, _, rest = step.partition(":")
            target: object = None
            if kind == "tool":
                target = getattr(parts.tools.get(rest), "agent", None)
            elif kind == "guardrail":
                index, _, check = rest.partition(":")
                guardrails = parts.guardrails
                if index.isdigit() and int(index) < len(guardrails):
                    target = getattr(guardrails[int(index)], check, None)
            if not isinstance(target, Agent):
                where = "/".join((agent, *path))
                raise ConfigurationError(f"no sub-agent {step!r} on the path {where!r}")
            if target not in self._routed:
                self._routed.add(target)
                for provider in agent_parts(target).providers:
                    provider.disable_sdk_retries()  # one owner of retries (issue 28)
            found = target
        return found

    def provider(self, agent: str, provider: str, path: Sequence[str] = ()) -> Provider:
        """The real provider ``provider`` of agent ``agent`` (or its sub-agent at ``path``)."""
        for item in agent_parts(self.agent_at(agent, path)).providers:
            if item.name == provider:
                return item
        raise ConfigurationError(f"agent {agent!r} has no provider named {provider!r}")

    def tool(self, agent: str, tool: str, path: Sequence[str] = ()) -> Tool:
        """The real tool ``tool`` of agent ``agent`` (or its sub-agent at ``path``)."""
        found = agent_parts(self.agent_at(agent, path)).tools.get(tool)
        if found is None:
            raise ConfigurationError(f"agent {agent!r} has no tool named {tool!r}")
        return found

    async def aclose(self) -> None:
        """Close the worker's own agents (their providers' connections)."""
        live, self._live = list(self._live.values()), {}
        self._routed = set()
        for agent in live:
            with contextlib.suppress(Exception):
                await agent.aclose()


def _effect_key(workflow_id: str, call_id: str) -> str:
    key = f"temporal:{workflow_id}:{call_id}"
    if len(key) <= _MAX_ID:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"temporal:sha256:{digest}"


def _provider_failure(error: ProviderError, max_retry_after: object = None) -> ApplicationError:
    # Temporal owns retries: a failure worth retrying (5xx, 408, 429) is retried on Temporal's
    # schedule, honouring the vendor's retry-after; a refused request (400, 401, 403 …) is not.
    delay = None
    if error.retry_after:
        wait = error.retry_after
        if isinstance(max_retry_after, (int, float)) and not isinstance(max_retry_after, bool):
            wait = min(wait, float(max_retry_after))  # the agent's RetryPolicy caps it (issue 28)
        delay = timedelta(seconds=wait)
    return ApplicationError(
        error.message,
        {
            "status": error.status,
            "vendor_type": error.vendor_type,
            "provider": error.provider,
            "model": error.model,
            "request_id": error.request_id,
            "code": error.code,
            "switchable": error.switchable,
            "recoverable": error.recoverable,
            "retry_after": error.retry_after,
        },
        type=f"robota.{type(error).__name__}",
        non_retryable=not error.recoverable,
        next_retry_delay=delay,
    )


_CHECKS: Final = frozenset({"check", "before", "after"})  # a guardrail's check attributes


class _Heartbeat:
    """Heartbeats while the activity works, so a dead worker is noticed and a cancel arrives."""

    def __init__(self) -> None:
        timeout = activity.info().heartbeat_timeout
        self._every = max(0.2, timeout.total_seconds() / 3) if timeout else 1.0
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(self._every)

    async def __aenter__(self) -> _Heartbeat:
        self._task = asyncio.create_task(self._beat())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class RobotaActivities:
    """The activities a worker runs for Robota workflows.

    Args:
        registry: The worker's agents.
        journal: Where tool effects are recorded (S40). Without one, a retried tool activity
            runs its body again — Temporal's own at-least-once semantics.
    """

    def __init__(self, registry: AgentRegistry, journal: ExecutionJournal | None = None) -> None:
        self._registry = registry
        self._journal = journal

    def all(self) -> list[Callable[..., Any]]:
        """The activity callables to register with a worker."""
        return [self.model_call, self.tool_call, self.guardrail]

    @activity.defn(name=MODEL_CALL)
    async def model_call(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Send one request with the agent's real provider; return its response."""
        with _setup():
            agent, provider_name = str(payload["agent"]), str(payload["provider"])
            request = decode_request(payload["request"])
            path = [str(step) for step in payload.get("path", ())]
            provider = self._registry.provider(agent, provider_name, path)
            texts = agent_parts(self._registry.agent_at(agent, path)).texts  # S35: factory's
        request = await self._resolved(request, payload.get("refs"), provider.name, texts)
        try:
            messages = await resolve_media(request.messages, payload.get("media"), self._journal)
        except StorageError as error:
            raise ApplicationError(
                f"the execution journal failed reading the input's media: {error.message}",
                type="robota.StorageError",
            ) from None
        request = dataclasses.replace(request, messages=messages)
        info = activity.info()
        controller = AbortController()
        live = _LiveText(info.workflow_id or "", str(payload.get("stream", "")), info.attempt)
        try:
            async with _Heartbeat():
                response = await collect_stream(
                    live.relay(provider.chat_stream(request, signal=controller.signal))
                )
        except asyncio.CancelledError:
            controller.abort("the Temporal activity was cancelled")
            raise
        except ProviderError as error:
            raise _provider_failure(error, payload.get("max_retry_after")) from None
        finally:
            await live.flush()
        return encode_response(response)

    @activity.defn(name=GUARDRAIL)
    async def guardrail(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Run one function guardrail check (issue 29): outside workflow code, recorded once."""
        with _setup():
            check = GuardrailInput.decode(payload)
            guarded = self._registry.agent_at(check.agent, check.path)
            guardrails = agent_parts(guarded).guardrails
            entry = guardrails[check.index] if 0 <= check.index < len(guardrails) else None
            function = getattr(entry, check.check, None) if check.check in _CHECKS else None
            if not callable(function) or isinstance(function, Agent):
                raise ConfigurationError(f"guardrail {check.index} has no function {check.check}")
        value = check.value
        if check.ref is not None and isinstance(value, ToolCallCheck):
            value = dataclasses.replace(value, result=await self._stored(check.ref))
        try:
            async with _Heartbeat():
                if inspect.iscoroutinefunction(function):
                    verdict = await function(value)
                else:
                    # A sync check runs in a thread, like a sync tool body: one that blocks (a
                    # moderation call through a blocking client) would stop the heartbeats —
                    # the attempt would time out and the check run again — and stall the
                    # worker's other activities.
                    verdict = await asyncio.to_thread(function, value)
                if inspect.isawaitable(verdict):
                    verdict = await verdict
        except Exception as error:  # noqa: BLE001 - the check's own failure fails the run
            raise ApplicationError(
                f"{type(error).__name__}: {error}", type=GUARDRAIL_FAILED, non_retryable=True
            ) from None
        if verdict is not None and not isinstance(verdict, GuardrailResult):
            raise ApplicationError(
                f"the guardrail returned {verdict!r}; a check returns "
                "robota.GuardrailResult(tripped=..., reason=...) or None (pass)",
                type=GUARDRAIL_FAILED,
                non_retryable=True,
            )
        return encode_verdict(verdict or GuardrailResult())

    async def _stored(self, key: str) -> str:
        """The content of a tool result stored aside in the journal (issue 29: a check's)."""
        journal = self._journal
        if journal is None:
            raise ApplicationError(
                "this check refers to a tool result stored in the execution journal, and this "
                "worker has none: give every worker the same journal",
                type=SETUP_FAILED,
                non_retryable=True,
            )
        try:
            settled = [r for r in await journal.read(key) if isinstance(r, EffectSettled)]
        except StorageError as error:
            raise ApplicationError(
                f"the execution journal failed reading a stored tool result: {error.message}",
                type="robota.StorageError",
            ) from None
        if not settled:
            raise ApplicationError(
                f"the stored tool result {key!r} is missing from the journal",
                type="robota.StorageError",
                non_retryable=True,
            )
        return settled[-1].content

    @activity.defn(name=TOOL_CALL)
    async def tool_call(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Run one tool body, at most once per call where a journal is configured (S40)."""
        with _setup():
            call = ToolCallInput.decode(payload)
            tool = self._registry.tool(call.agent, call.tool, call.path)
        workflow_id = activity.info().workflow_id or ""
        journal = self._journal
        if journal is None:
            try:
                texts = self._registry.agent_at(call.agent, call.path).texts
                return _inline(tool, await self._body(tool, call, workflow_id), texts)
            except _Waiting as waiting:
                raise waiting.failure() from None
        key = _effect_key(workflow_id, call.call_id)
        try:
            return await self._journaled(journal, key, tool, call, workflow_id)
        except StorageError as error:
            # The journal could not be reached or written: Temporal retries the attempt; if it
            # never can, the workflow fails the run rather than guess (S40).
            raise ApplicationError(
                f"the execution journal failed for call {call.call_id}: {error.message}",
                type="robota.StorageError",
            ) from None

    async def _journaled(
        self, journal: ExecutionJournal, key: str, tool: Tool, call: ToolCallInput, workflow_id: str
    ) -> dict[str, Any]:
        try:
            lease = await journal.acquire(key)
        except ExecutionLockedError as error:
            # An earlier attempt's worker still holds the call (alive but cut off): retry later.
            raise ApplicationError(
                f"the call {call.call_id} is held by another attempt: {error.message}",
                type="robota.ExecutionLocked",
            ) from None
        async with lease:
            started: EffectStarted | None = None
            unsettled = 0  # starts since the body last waited (S40) — each may have had effect
            for record in await journal.read(key):
                if isinstance(record, EffectSettled):
                    # Settled by an earlier attempt whose completion never reached Temporal.
                    return _by_reference(
                        key,
                        ToolResult(record.content, is_error=record.is_error, parts=record.parts),
                    )
                if isinstance(record, EffectStarted):
                    started, unsettled = record, unsettled + 1
                elif isinstance(record, OutsideRequested):
                    started, unsettled = None, 0  # it waited before its effect: safe to run
            # A host's "rerun" covers the unsettled starts it was shown, never a later one: an
            # attempt of the rerun that dies mid-body is reconciled again.
            if started is not None and not tool.idempotent and unsettled > call.rerun:
                raise ApplicationError(
                    f"tool {tool.name!r} (call {call.call_id}) started in an earlier attempt "
                    "that never recorded a result; its effect may have happened, so it is not "
                    "run again — settle it with robota.temporal.reconcile",
                    {
                        "call_id": call.call_id,
                        "tool_name": tool.name,
                        "arguments": dict(started.arguments),
                        "provider_call_id": call.provider_call_id,
                        "starts": unsettled,
                    },
                    type=RECONCILIATION_REQUIRED,
                    non_retryable=True,
                )
            await lease.append(
                EffectStarted(
                    call_key=call.call_id,
                    call_id=call.call_id,
                    provider_call_id=call.provider_call_id,
                    tool_name=tool.name,
                    arguments=dict(call.arguments),
                )
            )
            try:
                result = await self._body(tool, call, workflow_id)
            except _Waiting as waiting:
                # S40: durable before the workflow waits; the next attempt knows the body waited.
                await lease.append(
                    OutsideRequested(
                        waiting.request["request_id"],
                        call.call_id,
                        waiting.request["kind"],
                        waiting.request["payload"],
                    )
                )
                raise waiting.failure() from None
            status = "failed" if result.is_error else "succeeded"
            await lease.append(
                EffectSettled(call.call_id, status, result.content, result.is_error, result.parts)
            )
        return _by_reference(key, result)

    async def _resolved(
        self, request: ChatRequest, refs: object, provider: str, texts: ModelTexts
    ) -> ChatRequest:
        # Large tool results travel by reference (the workflow issued each marker); the vendor
        # is sent the stored content and media parts.
        if not isinstance(refs, Mapping) or not refs:
            return request
        journal = self._journal
        if journal is None:
            raise ApplicationError(
                "this request refers to tool results stored in the execution journal, and this "
                "worker has none: give every worker the same journal",
                type=SETUP_FAILED,
                non_retryable=True,
            )
        # S39's tool-result budget, which the loop applied to the markers: a stored result that
        # would fill the context past it is sent as the bounded notice instead. Earlier results
        # are resolved first, so a result sent once is sent in every later round too.
        window = get_model_context_window(request.model, provider=provider)
        budget = float("inf") if window is None else TOOL_RESULT_BUDGET * window  # S13: unknown
        used = 0  # the context before this message, as the model will be sent it
        messages: list[Message] = []
        for message in request.messages:
            key = refs.get(message.content) if isinstance(message, ToolMessage) else None
            if key is None or not isinstance(message, ToolMessage):
                used += estimate_message_tokens(message)
                messages.append(message)
                continue
            settled = [r for r in await journal.read(str(key)) if isinstance(r, EffectSettled)]
            if not settled:
                raise ApplicationError(
                    f"the stored tool result {key!r} is missing from the journal",
                    type="robota.StorageError",
                    non_retryable=True,
                )
            stored = settled[-1]
            resolved = dataclasses.replace(message, content=stored.content, parts=stored.parts)
            if used + estimate_message_tokens(resolved) > budget:
                call = ToolCall(message.tool_call_id, message.tool_name, "{}")
                outcome = ToolCallOutcome(
                    call,
                    "failed" if message.is_error else "completed",
                    ToolResult(stored.content),
                    started=True,
                )
                notice = omitted_result_notice(outcome, texts)
                resolved = dataclasses.replace(message, content=notice, parts=())
            used += estimate_message_tokens(resolved)
            messages.append(resolved)
        return dataclasses.replace(request, messages=tuple(messages))

    async def _body(self, tool: Tool, call: ToolCallInput, workflow_id: str) -> ToolResult:
        controller = AbortController()
        outside = _Outside(call, tool.name)
        ctx = ToolContext(
            signal=controller.signal,
            call_id=call.call_id,
            tool_name=tool.name,
            provider_call_id=call.provider_call_id,
            execution_id=workflow_id,
            round=call.round,
            outside=outside,
        )
        # The body runs in a task of its own: a cancel of the activity (the run was aborted,
        # S23) aborts the body's signal instead of cutting it off, and a running body finishes
        # as in-process (S38) — its result is recorded like any other.
        texts = agent_parts(self._registry.agent_at(call.agent, call.path)).texts
        body = asyncio.ensure_future(self._call(tool, call, ctx, controller.signal, texts))
        async with _Heartbeat():
            try:
                result = await asyncio.shield(body)
            except asyncio.CancelledError:
                details = activity.cancellation_details()
                if details is None or not details.cancel_requested:
                    # Not the run's abort: the worker is shutting down, or the attempt timed
                    # out. The body is cut off with no result recorded, so the next attempt
                    # (another worker) reconciles it, or reruns it if it is idempotent.
                    body.cancel()
                    with contextlib.suppress(BaseException):
                        await body
                    raise
                controller.abort("the run was interrupted")
                result = await body
        if outside.waiting is not None:
            raise _Waiting(outside.waiting)  # S40: the wait wins even when the body caught it
        return result

    @staticmethod
    async def _call(
        tool: Tool, call: ToolCallInput, ctx: ToolContext, signal: AbortSignal, texts: ModelTexts
    ) -> ToolResult:
        try:
            arguments = tool.validate_arguments(call.arguments)
            output = await tool.execute(arguments, ctx)
        except Exception as exc:  # noqa: BLE001 - a body's failure is its result (S39)
            if is_abort(exc, signal):
                return ToolResult(texts.interrupted_while_running, is_error=True)
            # The body failed (or its arguments did): the model sees it, as in-process (S39).
            return ToolResult(tool_failure_text(tool, exc, texts), is_error=True)
        return to_tool_result(output)


@contextlib.contextmanager
def _setup() -> Iterator[None]:
    """A bad payload or an unknown agent, tool or provider: retrying cannot help."""
    try:
        yield
    except (ConfigurationError, KeyError, TypeError, ValueError) as error:
        message = error.message if isinstance(error, ConfigurationError) else repr(error)
        raise ApplicationError(
            f"this worker cannot run the activity: {message}",
            type=SETUP_FAILED,
            non_retryable=True,
        ) from None


class _Outside:
    """A body's outside-response requests (S40): the n-th request of a call has a stable id."""

    def __init__(self, call: ToolCallInput, tool: str) -> None:
        self._call = call
        self._tool = tool
        self._count = 0
        self.waiting: dict[str, Any] | None = None

    async def __call__(self, kind: str, payload: object) -> Any:
        self._count += 1
        request_id = f"req_{self._call.call_id}_{self._count}"
        if request_id in self._call.responses:
            return self._call.responses[request_id]  # answered: the call runs on
        self.waiting = {
            "request_id": request_id,
            "kind": kind,
            "payload": payload,
            "call_id": self._call.call_id,
            "tool_name": self._tool,
        }
        raise ExecutionSuspendedError(
            f"tool {self._tool!r} is waiting for an outside response ({kind}); the run waits "
            f"for robota.temporal.respond (request {request_id})"
        )


class _Waiting(Exception):
    def __init__(self, request: dict[str, Any]) -> None:
        super().__init__(request["request_id"])
        self.request = request

    def failure(self) -> ApplicationError:
        return ApplicationError(
            f"tool {self.request['tool_name']!r} waits for an outside response "
            f"({self.request['kind']})",
            self.request,
            type=OUTSIDE_RESPONSE_REQUIRED,
            non_retryable=True,
        )


def _size(result: ToolResult) -> int:
    # As Temporal's JSON converter writes it: non-ASCII is escaped (an emoji is 12 bytes).
    return len(json.dumps(encode_result(result), separators=(",", ":")))


def _inline(tool: Tool, result: ToolResult, texts: ModelTexts) -> dict[str, Any]:
    size = _size(result)
    if size <= MAX_INLINE_BYTES:
        return encode_result(result)
    text = texts.render(
        "oversized_result", tool=repr(tool.name), size=str(size), limit=str(MAX_INLINE_BYTES)
    )
    return encode_result(ToolResult(text, is_error=True))


def _by_reference(key: str, result: ToolResult) -> dict[str, Any]:
    size = _size(result)  # the text and the media parts, base64, as the payload carries them
    if size <= INLINE_RESULT_BYTES:
        return encode_result(result)
    # The journal holds the content and the media parts (EffectSettled); the workflow carries a
    # marker with a nonce no tool output can guess and no parts, and each model call resolves
    # the markers it was issued (content and parts).
    length = len(result.content.encode("utf-8", "surrogatepass"))
    media = f" with {_count(result.parts)}" if result.parts else ""
    marker = f"[robota: a {length}-byte tool result{media} stored aside, ref {os.urandom(8).hex()}]"
    payload = encode_result(ToolResult(marker, is_error=result.is_error))
    payload["ref"] = {"marker": marker, "key": key}
    return payload


def _count(parts: tuple[ImagePart | DocumentPart | AudioPart, ...]) -> str:
    kinds: dict[str, int] = {}
    for part in parts:
        kinds[part.kind] = kinds.get(part.kind, 0) + 1
    return " and ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in kinds.items())


class _LiveText:
    """Relays a stream's text to the workflow in batches (signals), for the caller's live view.

    Best effort: the round's response, returned by the activity, is what the run keeps.
    """

    def __init__(self, workflow_id: str, key: str, attempt: int) -> None:
        self._workflow_id = workflow_id
        self._key = key
        self._attempt = attempt
        self._pending: list[str] = []
        self._last = 0.0

    async def relay(self, events: Any) -> Any:
        loop = asyncio.get_running_loop()
        async for event in events:
            if isinstance(event, TextDelta) and event.text:
                self._pending.append(event.text)
                if loop.time() - self._last >= _FLUSH_SECONDS:
                    await self.flush()
                    self._last = loop.time()
            yield event

    async def flush(self) -> None:
        if not self._pending:
            return
        text, self._pending = "".join(self._pending), []
        with contextlib.suppress(Exception):
            handle = activity.client().get_workflow_handle(self._workflow_id)
            await handle.signal(
                TEXT_SIGNAL, {"key": self._key, "attempt": self._attempt, "text": text}
            )
