"""The OpenTelemetry exporter (S27, S33): runs, provider calls and tool bodies as spans.

:class:`OpenTelemetryExporter` is an event service (``Agent(event_service=...)`` or
``run(..., event_service=...)``). From the run's events it exports, through an OpenTelemetry SDK
``TracerProvider``:

- one ``invoke_agent`` span per run (or continuation), the child of the host's span when the run
  was given a :class:`~robota.TraceContext` — otherwise a root;
- one ``chat`` span per provider call actually dispatched (cache hits and refused preflights are
  not calls), with the GenAI semantic-convention attributes: operation, provider, requested and
  answering model, input and output tokens, finish reason;
- one ``execute_tool`` span per tool body.

Every span id comes from :func:`robota.derive_span_id` over the id the runtime minted for that
run, call or body — the same function that built the traceparent the vendor or child process
received — so the parent a vendor records is a span this trace contains. Nothing ambient is
read: the parent is only ever the one the host passed to the run.

It needs the ``otel`` extra (``opentelemetry-api`` and ``-sdk``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Final, final

from robota.core import (
    AgentEvent,
    ConfigurationError,
    EventNames,
    Usage,
    derive_span_id,
    install_command,
)

__all__ = ["OpenTelemetryExporter"]

_SCOPE: Final = "robota"
_NS: Final = 1_000_000_000


def _ns(seconds: object) -> int | None:
    return int(float(seconds) * _NS) if isinstance(seconds, (int, float)) else None


@final
class OpenTelemetryExporter:
    """Exports a run's spans to OpenTelemetry, with span ids derived as S27 states.

    Args:
        tracer_provider: An ``opentelemetry.sdk.trace.TracerProvider`` (default: the global
            one, which must be an SDK provider).

    Raises:
        ConfigurationError: ``opentelemetry-sdk`` is not installed (the message says
            how to install the ``otel`` extra), or the tracer provider is not an SDK one (its
            span ids could not follow the derivation).
    """

    __slots__ = ("_empty", "_ids", "_lock", "_open", "_otel", "_runs", "_tracer")

    def __init__(self, tracer_provider: Any = None) -> None:
        try:
            from opentelemetry import trace  # noqa: PLC0415 - the optional extra, loaded on use
            from opentelemetry.context import Context  # noqa: PLC0415
            from opentelemetry.sdk.trace.id_generator import (  # noqa: PLC0415
                IdGenerator,
                RandomIdGenerator,
            )
        except ImportError as exc:
            raise ConfigurationError(
                f"OpenTelemetryExporter needs the OpenTelemetry SDK: {install_command('otel')}"
            ) from exc
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        get_tracer = getattr(provider, "get_tracer", None)
        if not callable(get_tracer):
            raise ConfigurationError(
                "OpenTelemetryExporter needs an opentelemetry.sdk.trace.TracerProvider, got "
                f"{type(provider).__name__}"
            )
        tracer: Any = get_tracer(_SCOPE)
        inner = getattr(tracer, "id_generator", None)
        if not isinstance(inner, IdGenerator):
            raise ConfigurationError(
                "OpenTelemetryExporter needs an opentelemetry.sdk.trace.TracerProvider (pass "
                f"tracer_provider=...); got {type(provider).__name__}"
            )
        ids = _derived_ids(IdGenerator, RandomIdGenerator, inner)
        tracer.id_generator = ids  # this tracer only: the provider's other tracers are untouched
        self._otel = trace
        self._empty = Context
        self._tracer = tracer
        self._ids = ids
        self._lock = threading.Lock()
        self._runs: dict[str, Any] = {}
        self._open: dict[tuple[str, str], Any] = {}

    @property
    def enabled(self) -> bool:
        """Always ``True``."""
        return True

    def emit(self, event: AgentEvent) -> None:
        """Turn one runtime event into span starts and ends."""
        execution = event.owner_id("execution")
        if execution is None:
            return  # a direct invocation (S43) belongs to no run's trace
        name = event.name
        with self._lock:
            if name in (EventNames.RUN_STARTED, EventNames.RUN_RESUMED):
                self._start_run(execution, event)
            elif name == EventNames.ROUND_COMPLETED:
                self._provider_call(execution, event)
            elif name == EventNames.TOOL_STARTED:
                self._start_tool(execution, event)
            elif name in (EventNames.TOOL_COMPLETED, EventNames.TOOL_FAILED):
                self._end_tool(execution, event)
            elif name in (EventNames.RUN_COMPLETED, EventNames.RUN_FAILED):
                self._end_run(execution, event)
            elif name == EventNames.GUARDRAIL:
                self._guardrail(execution, event)

    # ------------------------------------------------------------------ spans

    def _start(
        self,
        name: str,
        key: str,
        parent: Any,
        start: int | None,
        attributes: Mapping[str, Any],
        kind: Any,
    ) -> Any:
        self._ids.pending = int(derive_span_id(key), 16)
        # S27: never the ambient context — a run the host gave no parent is a root.
        context = (
            self._otel.set_span_in_context(parent, self._empty())
            if parent is not None
            else self._empty()
        )
        try:
            return self._tracer.start_span(
                name,
                context=context,
                kind=kind,
                attributes=dict(attributes),
                start_time=start,
            )
        finally:
            self._ids.pending = None

    def _start_run(self, execution: str, event: AgentEvent) -> None:
        data = event.data
        key = data.get("span_key")
        if not isinstance(key, str):
            return
        parent = None
        trace = data.get("trace")
        if isinstance(trace, Mapping):
            parent = self._otel.NonRecordingSpan(
                self._otel.SpanContext(
                    trace_id=int(str(trace["trace_id"]), 16),
                    span_id=int(str(trace["parent_span_id"]), 16),
                    is_remote=True,
                    trace_flags=self._otel.TraceFlags(int(str(trace["trace_flags"]))),
                )
            )
        agent = str(data.get("agent_name") or "agent")
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": execution,
            "gen_ai.provider.name": str(data.get("provider") or ""),
            "gen_ai.request.model": str(data.get("model") or ""),
        }
        previous = self._runs.pop(execution, None)
        if previous is not None:
            previous.end()
        self._runs[execution] = self._start(
            f"invoke_agent {agent}",
            key,
            parent,
            _ns(event.timestamp),
            attributes,
            self._otel.SpanKind.INTERNAL,
        )

    def _provider_call(self, execution: str, event: AgentEvent) -> None:
        data = event.data
        call_id = data.get("call_id")
        run = self._runs.get(execution)
        if not isinstance(call_id, str) or not call_id or run is None:
            return  # not dispatched: a cache hit is no call (S27)
        model = str(data.get("requested_model") or "")
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": str(data.get("provider") or ""),
            "gen_ai.request.model": model,
        }
        answered = data.get("model")
        if isinstance(answered, str) and answered:
            attributes["gen_ai.response.model"] = answered
        finish = data.get("finish_reason")
        if isinstance(finish, str) and finish:
            attributes["gen_ai.response.finish_reasons"] = (finish,)
        usage = data.get("usage")
        if isinstance(usage, Usage):
            attributes["gen_ai.usage.input_tokens"] = usage.prompt_tokens
            attributes["gen_ai.usage.output_tokens"] = usage.completion_tokens
        if data.get("forced"):
            attributes["robota.forced_call"] = True
        attempt = data.get("attempt")
        if isinstance(attempt, int):
            attributes["robota.attempt"] = attempt  # issue 28: a retried call, one span a try
        span = self._start(
            f"chat {model}",
            call_id,
            run,
            _ns(data.get("started_at")),
            attributes,
            self._otel.SpanKind.CLIENT,
        )
        outcome = data.get("outcome")
        if outcome == "failure":
            span.set_status(self._otel.Status(self._otel.StatusCode.ERROR, "provider call failed"))
        elif outcome == "interrupted":
            span.set_attribute("robota.outcome", "interrupted")
        span.end(end_time=_ns(data.get("ended_at")))

    def _guardrail(self, execution: str, event: AgentEvent) -> None:
        # Issue 29: one span per guardrail call, a child of the run's span.
        data = event.data
        key = data.get("span_key")
        run = self._runs.get(execution)
        if not isinstance(key, str) or run is None:
            return
        name = str(data.get("guardrail") or "")
        attributes: dict[str, Any] = {
            "robota.guardrail.name": name,
            "robota.guardrail.phase": str(data.get("phase")),
            "robota.guardrail.outcome": str(data.get("outcome")),
        }
        usage = data.get("usage")
        if isinstance(usage, Usage):
            attributes["gen_ai.usage.input_tokens"] = usage.prompt_tokens
            attributes["gen_ai.usage.output_tokens"] = usage.completion_tokens
        span = self._start(
            f"guardrail {name}",
            key,
            run,
            _ns(data.get("started_at")),
            attributes,
            self._otel.SpanKind.INTERNAL,
        )
        span.end(end_time=_ns(data.get("ended_at")))

    def _start_tool(self, execution: str, event: AgentEvent) -> None:
        data = event.data
        call_id = data.get("call_id")
        key = data.get("span_key")
        run = self._runs.get(execution)
        if not isinstance(call_id, str) or not isinstance(key, str) or run is None:
            return
        tool = str(data.get("tool_name") or "")
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
        }
        provider_call = data.get("provider_call_id")
        if isinstance(provider_call, str):
            attributes["gen_ai.tool.call.id"] = provider_call
        self._open[(execution, call_id)] = self._start(
            f"execute_tool {tool}",
            key,
            run,
            _ns(event.timestamp),
            attributes,
            self._otel.SpanKind.INTERNAL,
        )

    def _end_tool(self, execution: str, event: AgentEvent) -> None:
        call_id = event.data.get("call_id")
        span = self._open.pop((execution, str(call_id)), None)
        if span is None:
            return
        status = event.data.get("status")
        span.set_attribute("robota.tool.status", str(status))
        if event.name == EventNames.TOOL_FAILED:
            span.set_status(self._otel.Status(self._otel.StatusCode.ERROR, str(status)))
        span.end(end_time=_ns(event.timestamp))

    def _end_run(self, execution: str, event: AgentEvent) -> None:
        end = _ns(event.timestamp)
        for key in [key for key in self._open if key[0] == execution]:
            self._open.pop(key).end(end_time=end)  # a body the run left unfinished
        span = self._runs.pop(execution, None)
        if span is None:
            return
        data = event.data
        if event.name == EventNames.RUN_FAILED:
            span.set_status(self._otel.Status(self._otel.StatusCode.ERROR, str(data.get("error"))))
        else:
            span.set_attribute("robota.status", str(data.get("status")))
            span.set_attribute("robota.stop_reason", str(data.get("stop_reason")))
            usage = data.get("usage")
            if isinstance(usage, Usage):
                span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
        span.end(end_time=end)


def _derived_ids(base: type[Any], fallback: type[Any], inner: Any) -> Any:
    """An id generator that hands out the derived span id the exporter set (S27)."""

    class DerivedIds(base):  # type: ignore[misc]
        """Span ids as derived by the runtime; trace ids (for roots) from the provider's own."""

        def __init__(self) -> None:
            self._inner = inner if inner is not None else fallback()
            self._local = threading.local()

        @property
        def pending(self) -> int | None:
            value: int | None = getattr(self._local, "pending", None)
            return value

        @pending.setter
        def pending(self, value: int | None) -> None:
            self._local.pending = value

        def generate_span_id(self) -> int:
            pending = self.pending
            if pending is not None:
                return pending
            value: int = self._inner.generate_span_id()
            return value

        def generate_trace_id(self) -> int:
            value: int = self._inner.generate_trace_id()
            return value

        def is_trace_id_random(self) -> bool:
            return bool(getattr(self._inner, "is_trace_id_random", lambda: True)())

    return DerivedIds()
