"""The typed, versioned payloads a Temporal run carries between workflow and activities.

Internal. Everything crossing Temporal is a JSON object of our own shape (never pickle), with
``"v"``: the payload version. A reader refuses a version it does not know with a clear error, so
a worker that is older than the workflow history it replays says so instead of misreading it.
Messages use the execution journal's message encoding (S40), every field kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

import pydantic_core

from robota.core import (
    AgentUsage,
    AuthenticationError,
    ConfigurationError,
    EffortResolution,
    GuardrailPhase,
    GuardrailRecord,
    GuardrailResult,
    Message,
    MessagePart,
    NetworkError,
    ProviderError,
    RateLimitError,
    ToolCall,
    ToolCallCheck,
    ToolResult,
    Usage,
    UsageLimitExceeded,
    UsageLimits,
)
from robota.core.payloads import (
    decode_content,
    decode_message,
    decode_usage,
    encode_content,
    encode_message,
    encode_usage,
    settings_from_data,
    settings_to_data,
    tool_parts,
)
from robota.core.providers import ChatRequest, ChatResponse, ModelSettings, ResponseFormat, ToolSpec

__all__ = [
    "PAYLOAD_VERSION",
    "READABLE_VERSIONS",
    "GuardrailInput",
    "RunInput",
    "RunOutput",
    "StoredMedia",
    "ToolCallInput",
    "decode_request",
    "decode_response",
    "decode_result",
    "decode_verdict",
    "encode_request",
    "encode_response",
    "encode_result",
    "encode_verdict",
]

PAYLOAD_VERSION: Final = 3
"""The newest payload version; bumped when a shape changes incompatibly.

Version 2 (issue 26) adds a run's structured output (``output=``) and media stored aside in the
journal. Version 3 (issue 29) addresses a sub-agent's or a guardrail agent's model call and tool
body by its ``path`` below the registered agent (a worker that cannot follow a path refuses).
A payload that uses none of these is still written as version 1, so a worker of an earlier
release keeps serving plain runs during a rolling deploy, and refuses — rather than misreads —
a run that needs the newer reader. Every version up to this one is read.
"""

READABLE_VERSIONS: Final = (1, 2, 3)


class PayloadError(ConfigurationError):
    """A payload of an unknown version or shape (a worker older than the history, say)."""


def check_version(data: object, what: str) -> Mapping[str, Any]:
    """``data`` as a mapping of a known version, or :class:`PayloadError`."""
    if not isinstance(data, Mapping):
        raise PayloadError(f"a {what} payload must be an object, got {type(data).__name__}")
    version = data.get("v")
    if version not in READABLE_VERSIONS or type(version) is not int:
        raise PayloadError(
            f"a {what} payload of version {version!r}; this worker reads versions up to "
            f"{PAYLOAD_VERSION} — upgrade the worker that reads it"
        )
    return data


# ------------------------------------------------------------------ the run


@dataclass(frozen=True, slots=True)
class RunInput:
    """What :func:`~robota.temporal.start_agent_run` hands the workflow.

    Attributes:
        agent: The registered agent's name.
        input: The user's message.
        max_rounds: The run's round budget (``None``: the agent's).
        tool_choice: ``"auto"``, ``"none"`` or ``"required"`` (``None``: the agent's).
        model_timeout: Seconds one model-call activity may take, start to close.
        tool_timeout: Seconds one tool activity may take, start to close.
        heartbeat_timeout: Seconds without a heartbeat before Temporal counts an activity's
            worker as gone and retries it elsewhere.
        settings: The run's model settings (S28), laid over the agent's field by field.
        output_schema: The structured output's JSON schema (S18), or ``None`` for a plain run.
        output_retries: Retry turns after an invalid structured reply (``None``: the default).
        stored: The input's media parts kept aside in the journal (issue 26): each a
            :class:`StoredMedia` whose stand-in is in ``input``.
        limits: The run's usage limits (S31), laid over the agent's field by field.
    """

    agent: str
    input: str | tuple[MessagePart, ...]
    max_rounds: int | None = None
    tool_choice: Literal["auto", "none", "required"] | None = None
    model_timeout: float = 300.0
    tool_timeout: float = 600.0
    heartbeat_timeout: float = 10.0
    settings: ModelSettings | None = None
    output_schema: Mapping[str, Any] | None = None
    output_retries: int | None = None
    stored: tuple[StoredMedia, ...] = ()
    limits: UsageLimits | None = None

    def encode(self) -> dict[str, Any]:
        """The payload (version 1 unless it uses a version-2 field)."""
        data: dict[str, Any] = {
            "v": 1,
            "agent": self.agent,
            "input": encode_content(self.input),  # a string as is; parts with base64 bytes
            "max_rounds": self.max_rounds,
            "tool_choice": self.tool_choice,
            "model_timeout": self.model_timeout,
            "tool_timeout": self.tool_timeout,
            "heartbeat_timeout": self.heartbeat_timeout,
            "settings": None if self.settings is None else encode_settings(self.settings),
        }
        if self.output_schema is not None or self.stored or self.limits is not None:
            data.update(
                v=2,
                output_schema=None if self.output_schema is None else dict(self.output_schema),
                output_retries=self.output_retries,
                stored=[item.encode() for item in self.stored],
            )
            if self.limits is not None:
                data["limits"] = self.limits.to_data()
        return data

    @classmethod
    def decode(cls, data: object) -> RunInput:
        """The run input :meth:`encode` wrote."""
        body = check_version(data, "run input")
        choice = body.get("tool_choice")
        if choice not in (None, "auto", "none", "required"):
            raise PayloadError(f"tool_choice must be auto, none or required, got {choice!r}")
        return cls(
            agent=str(body["agent"]),
            input=decode_content(body["input"]),
            max_rounds=body.get("max_rounds"),
            tool_choice=cast("Literal['auto', 'none', 'required'] | None", choice),
            model_timeout=float(body.get("model_timeout", 300.0)),
            tool_timeout=float(body.get("tool_timeout", 600.0)),
            heartbeat_timeout=float(body.get("heartbeat_timeout", 10.0)),
            settings=None if body.get("settings") is None else decode_settings(body["settings"]),
            output_schema=body.get("output_schema"),
            output_retries=body.get("output_retries"),
            stored=tuple(StoredMedia.decode(item) for item in body.get("stored", ())),
            limits=UsageLimits.from_data(body.get("limits")),
        )


@dataclass(frozen=True, slots=True)
class StoredMedia:
    """One media part kept aside in the execution journal, and the stand-in that refers to it.

    Attributes:
        ref: The reference the stand-in's bytes carry (random, unguessable).
        key: The journal execution whose ``EffectSettled`` record holds the part.
        slot: The part's index among that record's parts.
        kind: ``"image"``, ``"document"`` or ``"audio"``.
        media_type: The part's media type.
        size: The part's byte count.
        tokens: Its context estimate (S31), which the stand-in reproduces.
    """

    ref: str
    key: str
    slot: int
    kind: str
    media_type: str | None
    size: int
    tokens: int

    def encode(self) -> dict[str, Any]:
        """The payload."""
        return {
            "ref": self.ref,
            "key": self.key,
            "slot": self.slot,
            "kind": self.kind,
            "media_type": self.media_type,
            "size": self.size,
            "tokens": self.tokens,
        }

    @classmethod
    def decode(cls, data: Mapping[str, Any]) -> StoredMedia:
        """The reference :meth:`encode` wrote."""
        return cls(
            ref=str(data["ref"]),
            key=str(data["key"]),
            slot=int(data["slot"]),
            kind=str(data["kind"]),
            media_type=data.get("media_type"),
            size=int(data["size"]),
            tokens=int(data["tokens"]),
        )


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What the workflow returns: the run's result in plain values.

    Attributes:
        text: The final assistant text (for an interrupted run, the text committed so far).
        status: ``"complete"`` or ``"interrupted"``.
        stop_reason: The run's stop reason (``"end_turn"``, ``"max_rounds"`` …).
        rounds: Provider calls made.
        tool_calls_executed: Tool bodies that ran.
        usage: Usage summed over the run's provider calls.
        messages: The messages the run added, in order. A tool result over
            ``INLINE_RESULT_BYTES`` appears as its marker (the journal holds the content).
        execution_id: The run's execution id (the workflow id).
            A tool result stored aside carries no media parts here either (the journal holds
            them); a media part of the input stored aside (``start_agent_run(...,
            journal=...)``) appears as a stand-in of the same kind (a PNG, PDF or WAV) whose bytes
            are a small reference, not the media.
        messages_omitted: The messages were left out to fit Temporal's 2 MiB result limit.
        output: A structured run (``start_agent_run(..., output=...)``, S18): the validated
            reply as a JSON value (``None`` for an interrupted run);
            ``get_result(handle, output=Type)`` gives it validated into ``Type``. A plain run:
            ``None`` (the reply is ``text``).
        structured: Whether the run asked for a structured output.
        agent: The name of the agent that finished the run (issue 29).
        usage_by_agent: Agent path → :class:`~robota.AgentUsage` (issue 29): the registered
            agent's own usage under its name, each sub-agent's under ``name/child``; ``usage``
            includes the sub-agents'. Empty only for an output of an older worker.
        guardrails: Every guardrail call of the run (issue 29), as ``RunResult.guardrails``.
    """

    text: str
    status: str
    stop_reason: str | None
    rounds: int
    tool_calls_executed: int
    usage: Usage
    messages: tuple[Message, ...] = ()
    execution_id: str = ""
    messages_omitted: bool = False
    output: Any = None
    structured: bool = False
    agent: str | None = None
    usage_by_agent: Mapping[str, AgentUsage] = field(default_factory=dict)
    guardrails: tuple[GuardrailRecord, ...] = ()

    def encode(self) -> dict[str, Any]:
        """The payload (version 2 for a structured run, else version 1)."""
        extra: dict[str, Any] = (
            {"v": 2, "structured": True, "output": self.output} if self.structured else {}
        )
        return {
            "v": 1,
            "text": self.text,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "rounds": self.rounds,
            "tool_calls_executed": self.tool_calls_executed,
            "usage": encode_usage(self.usage),
            "messages": [encode_message(m) for m in self.messages],
            "execution_id": self.execution_id,
            "messages_omitted": self.messages_omitted,
            # Issue 29: additions an older reader ignores (it loses only the breakdown).
            "agent": self.agent,
            "usage_by_agent": {
                path: {"usage": encode_usage(e.usage), "cost": e.cost, "runs": e.runs}
                for path, e in self.usage_by_agent.items()
            },
            "guardrails": [_encode_record(r) for r in self.guardrails],
            **extra,
        }

    @classmethod
    def decode(cls, data: object) -> RunOutput:
        """The output :meth:`encode` wrote."""
        body = check_version(data, "run output")
        usage = decode_usage(body["usage"])
        return cls(
            text=str(body["text"]),
            status=str(body["status"]),
            stop_reason=body.get("stop_reason"),
            rounds=int(body["rounds"]),
            tool_calls_executed=int(body["tool_calls_executed"]),
            usage=usage if usage is not None else Usage.from_counts(prompt=0, completion=0),
            messages=tuple(decode_message(m) for m in body.get("messages", ())),
            execution_id=str(body.get("execution_id", "")),
            messages_omitted=bool(body.get("messages_omitted", False)),
            output=body.get("output"),
            structured=bool(body.get("structured", False)),
            agent=body.get("agent"),
            usage_by_agent={
                str(path): AgentUsage(_usage(e.get("usage")), e.get("cost"), int(e.get("runs", 1)))
                for path, e in (body.get("usage_by_agent") or {}).items()
            },
            guardrails=tuple(_decode_record(r) for r in body.get("guardrails") or ()),
        )


def _usage(data: object) -> Usage:
    usage = decode_usage(data)
    return usage if usage is not None else Usage.from_counts(prompt=0, completion=0)


def _encode_record(record: GuardrailRecord) -> dict[str, Any]:
    return {
        "guardrail": record.guardrail,
        "phase": record.phase,
        "outcome": record.outcome,
        "reason": record.reason,
        "duration": record.duration,
        "usage": None if record.usage is None else encode_usage(record.usage),
        "cost": record.cost,
    }


def _decode_record(data: Mapping[str, Any]) -> GuardrailRecord:
    return GuardrailRecord(
        guardrail=str(data["guardrail"]),
        phase=data["phase"],
        outcome=data["outcome"],
        reason=str(data.get("reason", "")),
        duration=float(data.get("duration", 0.0)),
        usage=decode_usage(data["usage"]) if data.get("usage") is not None else None,
        cost=data.get("cost"),
    )


# ------------------------------------------------------------------ a guardrail check


@dataclass(frozen=True, slots=True)
class GuardrailInput:
    """One function guardrail check to run in the ``robota.guardrail`` activity (issue 29).

    Attributes:
        agent: The registered agent's name.
        path: The guarded agent's path below it (``()``: the agent itself).
        index: The guardrail's position in the guarded agent's guardrails.
        check: Which of its checks: ``"check"`` (input/output), ``"before"`` or ``"after"``.
        phase: Where it runs (the value's kind).
        value: The checked value: the input text, the final output (text or the structured
            JSON value) or a tool call (``tool_name``, ``arguments``, ``result``, ``is_error``).
        ref: The journal key of a tool result stored aside (its ``result`` is then the marker
            the workflow carries): the activity gives the check the stored content.
    """

    agent: str
    path: tuple[str, ...]
    index: int
    check: str
    phase: GuardrailPhase
    value: Any
    ref: str | None = None

    def encode(self) -> dict[str, Any]:
        """The payload (version 3).

        The value as JSON: a structured output's JSON value (a typed sub-agent's object, say,
        whose fields Temporal's own encoding could not carry: a ``Decimal``), a tool call's
        arguments as JSON.
        """
        value = self.value
        if isinstance(value, ToolCallCheck):
            value = {
                "tool_name": value.tool_name,
                "arguments": dict(value.arguments),
                "result": value.result,
                "is_error": value.is_error,
            }
        value = pydantic_core.to_jsonable_python(value, serialize_unknown=True)
        return {
            "v": 3,
            "agent": self.agent,
            "path": list(self.path),
            "index": self.index,
            "check": self.check,
            "phase": self.phase,
            "value": value,
            **({"ref": self.ref} if self.ref is not None else {}),
        }

    @classmethod
    def decode(cls, data: object) -> GuardrailInput:
        """The input :meth:`encode` wrote; a tool call's value as a :class:`ToolCallCheck`."""
        body = check_version(data, "guardrail")
        phase = body["phase"]
        if phase not in ("input", "output", "tool_before", "tool_after"):
            raise PayloadError(f"unknown guardrail phase {phase!r}")
        value: Any = body.get("value")
        if phase in ("tool_before", "tool_after"):
            call: Mapping[str, Any] = body["value"]
            value = ToolCallCheck(
                str(call["tool_name"]),
                dict(call["arguments"]),
                call.get("result"),
                bool(call.get("is_error", False)),
            )
        return cls(
            agent=str(body["agent"]),
            path=tuple(str(step) for step in body.get("path", ())),
            index=int(body["index"]),
            check=str(body["check"]),
            phase=phase,
            value=value,
            ref=None if body.get("ref") is None else str(body["ref"]),
        )


def encode_verdict(verdict: GuardrailResult) -> dict[str, Any]:
    """A guardrail's verdict as a payload."""
    return {
        "v": 1,
        "tripped": verdict.tripped,
        "reason": verdict.reason,
        "replacement": verdict.replacement,
    }


def decode_verdict(data: object) -> GuardrailResult:
    """The verdict :func:`encode_verdict` wrote."""
    body = check_version(data, "guardrail verdict")
    replacement = body.get("replacement")
    return GuardrailResult(
        bool(body["tripped"]),
        str(body.get("reason", "")),
        None if replacement is None else str(replacement),
    )


# ------------------------------------------------------------------ a model call


def encode_request(request: ChatRequest) -> dict[str, Any]:
    """A chat request as a payload (its trace context is never carried)."""
    fmt = request.response_format
    return {
        "v": 1,
        "model": request.model,
        "messages": [encode_message(m) for m in request.messages],
        "tools": [
            {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
            for t in request.tools
        ],
        "tool_choice": request.tool_choice,
        "native_tools": list(request.native_tools),
        "max_output_tokens": request.max_output_tokens,
        "temperature": request.temperature,
        "response_format": None
        if fmt is None
        else {"type": fmt.type, "schema": fmt.schema, "name": fmt.name},
        "effort": request.effort,
        "options": dict(request.options),
        "settings": encode_settings(request.settings),
    }


def encode_settings(settings: ModelSettings) -> dict[str, Any]:
    """The set fields of model settings as a payload (S28); unset fields are left out."""
    return settings_to_data(settings)


def decode_settings(data: object) -> ModelSettings:
    """The settings :func:`encode_settings` wrote (an absent payload: none set)."""
    return settings_from_data(data)


def decode_request(data: object) -> ChatRequest:
    """The request :func:`encode_request` wrote."""
    body = check_version(data, "model call")
    fmt = body.get("response_format")
    return ChatRequest(
        model=str(body["model"]),
        messages=tuple(decode_message(m) for m in body["messages"]),
        tools=tuple(ToolSpec(t["name"], t["description"], t["parameters"]) for t in body["tools"]),
        tool_choice=body["tool_choice"],
        native_tools=tuple(body.get("native_tools", ())),
        max_output_tokens=body.get("max_output_tokens"),
        temperature=body.get("temperature"),
        response_format=None
        if fmt is None
        else ResponseFormat(fmt["type"], fmt.get("schema"), fmt.get("name", "output")),
        effort=body.get("effort", "auto"),
        options=dict(body.get("options", {})),
        settings=decode_settings(body.get("settings")),
    )


def encode_response(response: ChatResponse) -> dict[str, Any]:
    """A provider's response as a payload."""
    effort = response.effort
    return {
        "v": 1,
        "content": response.content,
        "tool_calls": [[c.id, c.name, c.arguments] for c in response.tool_calls],
        "model": response.model,
        "usage": encode_usage(response.usage),
        "finish_reason": response.finish_reason,
        "continuation": response.continuation,
        "effort": None
        if effort is None
        else {
            "requested": effort.requested,
            "disposition": effort.disposition,
            "level": effort.level,
            "native_value": effort.native_value,
            "model": effort.model,
            "source": effort.source,
        },
    }


def decode_response(data: object) -> ChatResponse:
    """The response :func:`encode_response` wrote."""
    body = check_version(data, "model response")
    effort = body.get("effort")
    return ChatResponse(
        content=str(body["content"]),
        tool_calls=tuple(ToolCall(str(i), str(n), str(a)) for i, n, a in body["tool_calls"]),
        model=body.get("model"),
        usage=decode_usage(body.get("usage")),
        finish_reason=body.get("finish_reason"),
        continuation=body.get("continuation"),
        effort=None
        if effort is None
        else EffortResolution(
            effort["requested"],
            effort["disposition"],
            level=effort.get("level"),
            native_value=effort.get("native_value"),
            model=effort.get("model"),
            source=effort.get("source"),
        ),
    )


# ------------------------------------------------------------------ a tool call


@dataclass(frozen=True, slots=True)
class ToolCallInput:
    """One tool body to run in an activity.

    Attributes:
        agent: The registered agent's name.
        tool: The tool's registered name.
        arguments: The final arguments as JSON values (after the gate; validated again by the
            tool in the activity).
        call_id: The body's id (:attr:`~robota.ToolContext.call_id`), minted in the workflow
            and the same on every attempt: the journal's key for the effect.
        provider_call_id: The provider's opaque id of the call.
        round: The model round that asked for it.
        rerun: How many unsettled starts of the body the host chose to run it again after
            (S40): a later one is reconciled again. ``0``: none.
        responses: Outside responses the host supplied (S40), by request id: the body's
            ``ctx.request_outside_response`` returns them instead of suspending.
        path: The sub-agent whose tool it is, as its path below the registered agent (issue
            29); ``()``: the agent's own tool. A payload with a path is version 3.
    """

    agent: str
    tool: str
    arguments: Mapping[str, Any]
    call_id: str
    provider_call_id: str | None = None
    round: int | None = None
    rerun: int = 0
    responses: Mapping[str, Any] = field(default_factory=dict)
    path: tuple[str, ...] = ()

    def encode(self) -> dict[str, Any]:
        """The payload."""
        path: dict[str, Any] = {"v": 3, "path": list(self.path)} if self.path else {}
        return {
            "v": 1,
            "responses": dict(self.responses),
            "agent": self.agent,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "call_id": self.call_id,
            "provider_call_id": self.provider_call_id,
            "round": self.round,
            "rerun": self.rerun,
            **path,
        }

    @classmethod
    def decode(cls, data: object) -> ToolCallInput:
        """The input :meth:`encode` wrote."""
        body = check_version(data, "tool call")
        arguments = body["arguments"]
        if not isinstance(arguments, Mapping):
            raise PayloadError("a tool call's arguments must be an object")
        return cls(
            agent=str(body["agent"]),
            tool=str(body["tool"]),
            arguments=dict(arguments),
            call_id=str(body["call_id"]),
            provider_call_id=body.get("provider_call_id"),
            round=body.get("round"),
            rerun=int(body.get("rerun", 0)),
            responses=dict(body.get("responses", {})),
            path=tuple(str(step) for step in body.get("path", ())),
        )


def encode_result(result: ToolResult) -> dict[str, Any]:
    """A tool result as a payload (its display-only ``view`` stays in the activity).

    Media parts travel inline, base64 (issue 26), unless the whole result is over
    ``INLINE_RESULT_BYTES`` and a journal holds it: then the activity sends a marker with no
    parts, and the model call restores both from the journal.
    """
    data: dict[str, Any] = {
        "v": 1,
        "content": result.content,
        "is_error": result.is_error,
    }
    if result.parts:
        data["parts"] = encode_content(result.parts)
    return data


def decode_result(data: object) -> ToolResult:
    """The result :func:`encode_result` wrote."""
    body = check_version(data, "tool result")
    parts = body.get("parts")
    media = () if parts is None else tool_parts(decode_content(parts), "a tool result payload")
    return ToolResult(str(body["content"]), is_error=bool(body["is_error"]), parts=media)


def messages_of(items: Sequence[object]) -> tuple[Message, ...]:
    """Decode a list of encoded messages."""
    return tuple(decode_message(item) for item in items)


PROVIDER_ERRORS: Final[Mapping[str, type[ProviderError]]] = {
    "ProviderError": ProviderError,
    "AuthenticationError": AuthenticationError,
    "RateLimitError": RateLimitError,
    "NetworkError": NetworkError,
}
"""Provider failures by class name, as their application error types name them (S42)."""


def provider_error(
    kind: str, message: str, details: object, *, provider: str | None, model: str | None
) -> ProviderError:
    """The provider failure an application error of type ``robota.<kind>`` describes (S42)."""
    info: Mapping[str, Any] = details if isinstance(details, Mapping) else {}
    cls = PROVIDER_ERRORS.get(kind, ProviderError)
    facts: dict[str, Any] = {
        "code": info.get("code"),
        "vendor_type": info.get("vendor_type"),
        "provider": info.get("provider") or provider,
        "model": info.get("model") or model,
        "request_id": info.get("request_id"),
        "switchable": info.get("switchable"),
        "recoverable": info.get("recoverable"),
    }
    wait = info.get("retry_after")
    if isinstance(wait, bool) or not isinstance(wait, (int, float)):
        wait = None  # a wait the vendor gave, on any status (S42); anything else is dropped
    if cls is RateLimitError:
        return RateLimitError(message, retry_after=wait, **facts)
    return cls(message, status=info.get("status"), retry_after=wait, **facts)


def limit_details(error: UsageLimitExceeded) -> dict[str, Any]:
    """What a usage-limit stop carries across Temporal (S31), for :func:`limit_error`."""
    return {
        "limit": error.limit,
        "limits": error.limits.to_data(),
        "usage": encode_usage(error.usage),
        "requests": error.requests,
        "tool_calls": error.tool_calls,
        "cost_usd": error.cost_usd,
    }


def limit_error(message: str, details: Mapping[str, Any]) -> UsageLimitExceeded:
    """The :class:`~robota.UsageLimitExceeded` that :func:`limit_details` described."""
    return UsageLimitExceeded(
        message,
        limit=details["limit"],
        limits=UsageLimits.from_data(details.get("limits")) or UsageLimits(),
        usage=decode_usage(details.get("usage")) or Usage(),
        requests=int(details.get("requests") or 0),
        tool_calls=int(details.get("tool_calls") or 0),
        cost_usd=details.get("cost_usd"),
    )
