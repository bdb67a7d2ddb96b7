"""S27, issue 29: a parent and its sub-agents export ONE OpenTelemetry tree.

A real OpenTelemetry SDK (its in-memory span exporter) behind ``robota.host``'s exporter, set on
the parent only: the sub-agents' events reach it through the parent (S33). Every span has the
host's trace id, and every sub-agent span's parent chain reaches the parent's run span through
the tool-call span that ran it.
"""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import robota
from robota import TraceContext, derive_span_id
from robota.otel import OpenTelemetryExporter
from robota.testing import ScriptedProvider

HOST = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TRACE_ID = int("4bf92f3577b34da6a3ce929d0e0e4736", 16)
HOST_SPAN = int("00f067aa0ba902b7", 16)


@robota.tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"notes on {topic}"


def _operation(span: ReadableSpan) -> object:
    return (span.attributes or {}).get("gen_ai.operation.name")


def _tool_name(span: ReadableSpan) -> object:
    return (span.attributes or {}).get("gen_ai.tool.name")


def _id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def _parent(span: ReadableSpan) -> int | None:
    return None if span.parent is None else span.parent.span_id


async def test_s27_a_parent_child_and_grandchild_export_one_tree() -> None:
    memory = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    exporter = OpenTelemetryExporter(tracer_provider=tracer_provider)

    helper = robota.Agent(
        "helper-model",
        provider=ScriptedProvider([[("lookup", {"topic": "bees"})], "helped"], name="vendor-c"),
        name="helper",
        tools=[lookup],
    )
    researcher = robota.Agent(
        "child-model",
        provider=ScriptedProvider([[("helper", {"input": "x"})], "found"], name="vendor-b"),
        name="researcher",
        tools=[helper],
    )
    lead = robota.Agent(
        "parent-model",
        provider=ScriptedProvider([[("researcher", {"input": "go"})], "ok"], name="vendor-a"),
        name="lead",
        tools=[researcher],
        event_service=exporter,
    )
    result = await lead.run(
        "start", trace=TraceContext.from_traceparent(HOST), execution_id="exec-lead"
    )
    assert result.text == "ok"

    spans = memory.get_finished_spans()
    assert spans
    assert {s.context.trace_id for s in spans if s.context is not None} == {TRACE_ID}
    by_id = {_id(s): s for s in spans}
    assert len(by_id) == len(spans)  # no span id exported twice

    runs = [s for s in spans if _operation(s) == "invoke_agent"]
    assert len(runs) == 3  # the parent's run, the child's, the grandchild's
    (top,) = [s for s in runs if _parent(s) == HOST_SPAN]
    assert f"{_id(top):016x}" == derive_span_id("exec-lead")

    def chain(span: ReadableSpan) -> list[ReadableSpan]:
        """The span's ancestors in the export, nearest first, up to the host's span."""
        found: list[ReadableSpan] = []
        while span.parent is not None and span.parent.span_id != HOST_SPAN:
            span = by_id[span.parent.span_id]  # a parent missing from the export fails here
            found.append(span)
        return found

    # One tree: every exported span reaches the parent's run span (the root under the host's).
    for span in spans:
        assert span is top or top in chain(span), span.name

    # Each sub-agent's run span is a child of the tool-call span that ran it, in its caller's
    # run: researcher under lead's "researcher" call, helper under researcher's "helper" call.
    tools = {_tool_name(s): s for s in spans if _operation(s) == "execute_tool"}
    assert set(tools) == {"researcher", "helper", "lookup"}
    child_runs = [s for s in runs if s is not top]
    assert {_parent(s) for s in child_runs} == {_id(tools["researcher"]), _id(tools["helper"])}
    assert chain(tools["researcher"])[0] is top
    (child_run,) = [s for s in child_runs if _parent(s) == _id(tools["researcher"])]
    assert chain(tools["helper"])[0] is child_run
    (grand_run,) = [s for s in child_runs if s is not child_run]
    assert chain(tools["lookup"])[0] is grand_run
    assert chain(grand_run)[:4] == [tools["helper"], child_run, tools["researcher"], top]

    # Every model call sits under its own agent's run span.
    chats = [s for s in spans if _operation(s) == "chat"]
    assert len(chats) == 6
    under = sorted(
        (str((c.attributes or {}).get("gen_ai.request.model")), _parent(c)) for c in chats
    )
    assert under == [
        ("child-model", _id(child_run)),
        ("child-model", _id(child_run)),
        ("helper-model", _id(grand_run)),
        ("helper-model", _id(grand_run)),
        ("parent-model", _id(top)),
        ("parent-model", _id(top)),
    ]
