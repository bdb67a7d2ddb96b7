"""S27 trusted trace context: host-supplied only, derived span ids, disclosure by grant.

Every call actually handed to a provider (the forced summary included; cache hits and refused
preflights excluded) carries a traceparent whose span id is ``derive_span_id`` of that call's id,
resolved at invocation so no event contains it; a provider that declares no propagation gets
nothing and the host is told which; each tool body gets its own minted id and traceparent; headers
go only to an exactly listed origin; child environments are fresh copies.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

import robota
from robota import (
    ConfigurationError,
    EventNames,
    InMemoryResponseCache,
    TraceContext,
    derive_span_id,
    origin_of,
)
from robota.testing import InMemoryJournal, ScriptedProvider

HOST = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def span_of(traceparent: str) -> str:
    return traceparent.split("-")[2]


def provider_call_ids(events: list[robota.AgentEvent]) -> list[str]:
    return [
        str(e.data["call_id"])
        for e in events
        if e.name == EventNames.ROUND_COMPLETED and e.data["call_id"] is not None
    ]


@robota.tool
def echo(text: str, ctx: robota.ToolContext) -> str:
    """Echo the text with what the body was given."""
    return json.dumps({"call_id": ctx.call_id, "traceparent": ctx.traceparent, "text": text})


async def test_s27_a_run_without_host_context_carries_none_even_with_ambient_traceparent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRACEPARENT", HOST)  # ambient: never adopted
    provider = ScriptedProvider([[("echo", {"text": "a"})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[echo])
    await agent.run("go")
    assert all(request.trace is None for request in provider.requests)
    body = json.loads(next(m for m in agent.history if isinstance(m, robota.ToolMessage)).content)
    assert body["traceparent"] is None


async def test_s27_every_provider_call_carries_a_traceparent_derived_from_its_own_call_id() -> None:
    events: list[robota.AgentEvent] = []
    provider = ScriptedProvider([[("echo", {"text": "a"})], [("echo", {"text": "b"})], "summary"])
    agent = robota.Agent(provider=provider, model="m", tools=[echo], max_rounds=2)
    trace = TraceContext.from_traceparent(HOST, origins=["https://api.example.com"])
    result = await agent.run("go", trace=trace, on_event=events.append)
    assert result.stop_reason == "max_rounds"  # the third call is the forced summary
    received = [request.trace for request in provider.requests]
    assert len(received) == 3
    assert all(t is not None for t in received)
    parents = [t.traceparent for t in received if t is not None]
    assert all(p.startswith(f"00-{TRACE_ID}-") and p.endswith("-01") for p in parents)
    assert [span_of(p) for p in parents] == [derive_span_id(c) for c in provider_call_ids(events)]
    assert len(set(parents)) == 3
    assert all(t.origins == ("https://api.example.com",) for t in received if t is not None)


async def test_s27_no_event_contains_a_provider_calls_traceparent() -> None:
    events: list[robota.AgentEvent] = []
    provider = ScriptedProvider([[("echo", {"text": "a"})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[echo])
    await agent.run("go", trace=TraceContext.from_traceparent(HOST), on_event=events.append)
    sent = [r.trace.traceparent for r in provider.requests if r.trace is not None]
    assert len(sent) == 2
    announced = [e.data["request"] for e in events if e.name == EventNames.PROVIDER_REQUEST]
    assert all(request.trace is None for request in announced)
    dump = repr([(e.name, dict(e.data)) for e in events])
    for traceparent in sent:
        assert traceparent not in dump
        assert span_of(traceparent) not in dump


async def test_s27_cache_hits_and_refused_preflights_are_not_calls_and_carry_nothing() -> None:
    cache = InMemoryResponseCache()
    first = ScriptedProvider(["cached answer"])
    agent = robota.Agent(provider=first, model="m", response_cache=cache)
    await agent.run("same", trace=TraceContext.from_traceparent(HOST))
    second = ScriptedProvider([])
    events: list[robota.AgentEvent] = []
    again = robota.Agent(provider=second, model="m", response_cache=cache)
    result = await again.run(
        "same", trace=TraceContext.from_traceparent(HOST), on_event=events.append
    )
    assert result.text == "cached answer"
    assert second.requests == []
    assert provider_call_ids(events) == []  # a cache hit is no call: no span, no traceparent

    robota.register_model_metadata("tiny-trace", context_window=10)
    try:
        blocked = ScriptedProvider(["never"])
        events.clear()
        tiny = robota.Agent(provider=blocked, model="tiny-trace")
        result = await tiny.run(
            "x" * 400, trace=TraceContext.from_traceparent(HOST), on_event=events.append
        )
        assert result.stop_reason == "context_limit"
        assert blocked.requests == []
        assert provider_call_ids(events) == []
    finally:
        robota.unregister_model_metadata("tiny-trace")


async def test_s27_a_provider_that_does_not_declare_propagation_receives_nothing_and_is_named() -> (
    None
):
    events: list[robota.AgentEvent] = []
    provider = ScriptedProvider(["a", "b"], name="quiet-gateway", propagates_trace=False)
    agent = robota.Agent(provider=provider, model="m")
    trace = TraceContext.from_traceparent(HOST, origins=["https://gw.example"])
    await agent.run("one", trace=trace, on_event=events.append)
    assert provider.requests[0].trace is None
    told = [e for e in events if e.name == EventNames.TRACE_NOT_PROPAGATED]
    assert [e.data for e in told] == [{"provider": "quiet-gateway"}]
    # A run that hands its trace only to subprocesses (no origins) has no provider to report.
    events.clear()
    await agent.run("two", trace=TraceContext.from_traceparent(HOST), on_event=events.append)
    assert not [e for e in events if e.name == EventNames.TRACE_NOT_PROPAGATED]


async def test_s27_each_tool_body_gets_its_own_minted_id_and_the_traceparent_derived_from_it() -> (
    None
):
    provider = ScriptedProvider([[("echo", {"text": "a"}), ("echo", {"text": "b"})], "ok"])
    agent = robota.Agent(provider=provider, model="m", tools=[echo])
    await agent.run("go", trace=TraceContext.from_traceparent(HOST))
    bodies = [json.loads(m.content) for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert len({b["call_id"] for b in bodies}) == 2  # minted by the runtime, not the vendor's
    vendor_ids = {c.id for c in provider_calls(agent)}
    assert not vendor_ids & {b["call_id"] for b in bodies}
    for body in bodies:
        assert body["traceparent"] == f"00-{TRACE_ID}-{derive_span_id(body['call_id'])}-01"


def provider_calls(agent: robota.Agent) -> list[robota.ToolCall]:
    return [
        c for m in agent.history if isinstance(m, robota.AssistantMessage) for c in m.tool_calls
    ]


def _context(trace: TraceContext | None) -> robota.ToolContext:
    from robota.core._tracing import RunTrace

    return robota.ToolContext(
        signal=robota.AbortSignal(),
        call_id="tool_1",
        tool_name="t",
        trace=RunTrace(trace, "exec") if trace is not None else None,
    )


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("https://api.example.com/v1/x?q=1", True),
        ("HTTPS://API.EXAMPLE.COM:443/", True),
        ("http://api.example.com/", False),  # another scheme is another origin
        ("https://api.example.com:8443/", False),
        ("https://api.example.com.evil.test/", False),
        ("https://evil.test/?u=https://api.example.com", False),
        ("https://user@api.example.com/", False),
        ("not a url", False),
    ],
)
def test_s27_headers_go_only_to_an_origin_exactly_equal_to_a_listed_one(
    url: str, sent: bool
) -> None:
    trace = TraceContext.from_traceparent(
        HOST, origins=["https://api.example.com"], tracestate="vendor=1"
    )
    headers = _context(trace).trace_headers(url)
    if sent:
        assert headers == {
            "traceparent": f"00-{TRACE_ID}-{derive_span_id('tool_1')}-01",
            "tracestate": "vendor=1",
        }
    else:
        assert headers == {}
    assert _context(None).trace_headers(url) == {}


def test_s27_a_child_environment_is_a_fresh_copy_and_drops_the_ambient_tracestate() -> None:
    base = {
        "PATH": "/bin",
        "TRACEPARENT": "00-" + "1" * 32 + "-" + "2" * 16 + "-01",
        "TRACESTATE": "ambient=1",
    }
    before = dict(base)
    environ_before = dict(os.environ)
    granted = TraceContext.from_traceparent(HOST, children=["tools"])
    env = _context(granted).child_env(base)
    assert env is not base
    assert base == before
    assert dict(os.environ) == environ_before
    assert env["TRACEPARENT"] == f"00-{TRACE_ID}-{derive_span_id('tool_1')}-01"
    assert "TRACESTATE" not in env
    assert env["PATH"] == "/bin"
    host_state = TraceContext.from_traceparent(HOST, tracestate="host=2", children=["tools"])
    assert _context(host_state).child_env(base)["TRACESTATE"] == "host=2"
    own = _context(granted).child_env(base, configured={"TRACEPARENT": "mine"})
    assert own["TRACEPARENT"] == "mine"
    # Child processes are a grant of their own: without "tools" the body's children get none.
    # In a traced run the ungranted child gets no trace context at all, not the ambient one.
    no_grant = TraceContext.from_traceparent(HOST, children=["hooks"])
    assert _context(no_grant).child_env(base) == {"PATH": "/bin"}


def test_s27_an_untraced_runs_child_environment_carries_no_ambient_trace() -> None:
    # S27: "this package never adopts ambient trace state" — a run without trace context hands
    # its children none either, so adding a trace context never discloses *less* to a child
    # than leaving it out, and a hook and a tool's child of one run always agree.
    base = {
        "PATH": "/bin",
        "TRACEPARENT": "00-" + "1" * 32 + "-" + "2" * 16 + "-01",
        "TRACESTATE": "ambient=1",
    }
    before = dict(base)
    env = _context(None).child_env(base)
    assert env == {"PATH": "/bin"}
    assert base == before
    assert _context(None).child_env(base, configured={"TRACEPARENT": "mine"}) == {
        "PATH": "/bin",
        "TRACEPARENT": "mine",
    }


def test_s27_child_processes_are_a_separate_grant_given_to_none_by_default() -> None:
    # S27: "Child processes are a separate grant". Listing origins for a provider used to hand
    # TRACEPARENT to every command hook and tool subprocess too (`children` defaulted to both).
    base = {"PATH": "/bin", "TRACEPARENT": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}
    from robota.core._tracing import RunTrace

    for trace in (
        TraceContext.from_traceparent(HOST, origins=["https://api.example.com"]),
        TraceContext.from_traceparent(HOST),
        TraceContext(trace_id=TRACE_ID, parent_span_id="b7ad6b7169203331"),
    ):
        assert trace.children == frozenset()
        assert _context(trace).child_env(base) == {"PATH": "/bin"}  # none, not the ambient one
        assert RunTrace(trace, "exec").hook_traceparent is None
    both = TraceContext.from_traceparent(HOST, children=["tools", "hooks"])
    assert both.children == frozenset({"tools", "hooks"})
    assert _context(both).child_env(base)["TRACEPARENT"] == (
        f"00-{TRACE_ID}-{derive_span_id('tool_1')}-01"
    )
    assert RunTrace(both, "exec").hook_traceparent == f"00-{TRACE_ID}-{derive_span_id('exec')}-01"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
        "00-0af7651916cd43dd8448eb211c80319z-b7ad6b7169203331-01",
    ],
)
def test_s27_a_malformed_traceparent_is_refused(bad: str) -> None:
    with pytest.raises(ConfigurationError, match="traceparent"):
        TraceContext.from_traceparent(bad)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"origins": ["https://api.example.com/v1"]}, "origin"),
        ({"origins": ["ftp://files.example.com"]}, "origin"),
        ({"origins": "https://api.example.com"}, "list"),
        ({"children": ["everything"]}, "children"),
        ({"tracestate": "bad\nstate"}, "tracestate"),
        # Regressions (review of issue 14): these raised TypeError or misreported the value.
        ({"origins": None}, "origins"),
        ({"children": None}, "children"),
        ({"children": "tools"}, "children"),
    ],
)
def test_s27_bad_grants_are_refused(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        TraceContext.from_traceparent(HOST, **options)


async def test_s27_run_refuses_a_trace_that_is_not_a_trace_context() -> None:
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m")
    with pytest.raises(ConfigurationError, match="TraceContext"):
        await agent.run("go", trace=HOST)  # type: ignore[typeddict-item]


def test_s27_span_ids_derive_deterministically_and_never_zero() -> None:
    assert derive_span_id("call_1") == derive_span_id("call_1")
    assert derive_span_id("call_1") != derive_span_id("call_2")
    assert len(derive_span_id("x")) == 16
    assert int(derive_span_id("x"), 16) != 0
    assert origin_of("https://Api.Example.com:443/path") == "https://api.example.com"


async def test_s27_a_resumed_execution_is_a_new_span_under_the_host_parent() -> None:
    journal = InMemoryJournal()

    @robota.tool
    async def wait(ctx: robota.ToolContext) -> str:
        """Waits for the host."""
        return str(await ctx.request_outside_response("approval"))

    events: list[robota.AgentEvent] = []
    first = ScriptedProvider([[("wait", {})]])
    agent = robota.Agent(provider=first, model="m", tools=[wait], journal=journal)
    trace = TraceContext.from_traceparent(HOST)
    result = await agent.run("go", execution_id="e-trace", trace=trace, on_event=events.append)
    await agent.respond("e-trace", result.pending_requests[0].id, "yes")
    later = ScriptedProvider(["done"])
    fresh = robota.Agent(provider=later, model="m", tools=[wait], journal=journal)
    await fresh.resume("e-trace", trace=trace, on_event=events.append)
    starts = [e for e in events if e.name in (EventNames.RUN_STARTED, EventNames.RUN_RESUMED)]
    keys = [e.data["span_key"] for e in starts]
    assert keys[0] == "e-trace"
    assert keys[1] != "e-trace"
    assert all(e.data["trace"]["trace_id"] == TRACE_ID for e in starts)  # type: ignore[index]
    # The journaled call id is the provider call's own id: its span derives from it.
    assert later.requests[0].trace is not None
    assert span_of(later.requests[0].trace.traceparent) == derive_span_id(
        provider_call_ids(events)[-1]
    )


@pytest.mark.parametrize(
    "fields",
    [
        {"trace_id": "zz\nX", "parent_span_id": "b7ad6b7169203331"},
        {"trace_id": "0" * 32, "parent_span_id": "b7ad6b7169203331"},
        {"trace_id": TRACE_ID, "parent_span_id": "short"},
        {"trace_id": TRACE_ID, "parent_span_id": "b7ad6b7169203331", "trace_flags": 256},
        {"trace_id": TRACE_ID, "parent_span_id": "b7ad6b7169203331", "origins": ("ftp://x",)},
        {"trace_id": TRACE_ID, "parent_span_id": "b7ad6b7169203331", "tracestate": "a\nb"},
    ],
)
def test_s27_a_trace_context_built_directly_is_validated_too(fields: dict[str, Any]) -> None:
    # Regression (review of issue 14): the dataclass skipped every check from_traceparent made.
    with pytest.raises(ConfigurationError):
        TraceContext(**fields)
