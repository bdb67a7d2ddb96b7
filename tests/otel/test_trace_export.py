"""S27 on the host: child processes, command hooks, and the OpenTelemetry exporter's one tree.

Real subprocesses and a real OpenTelemetry SDK (its in-memory span exporter). A traced run's
spans form one tree under the host's span; each provider-call span id equals the span id in the
traceparent that provider received; a subprocess tool sees ``TRACEPARENT`` naming its body's span
while ``os.environ`` is unchanged; a command hook gets the run's span apart from its stdin JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracerProvider, SpanKind

import robota
from robota import HookRunner, PermissionGate, PermissionPolicy, TraceContext, derive_span_id
from robota.host import CommandHookExecutor, spawn
from robota.otel import OpenTelemetryExporter
from robota.testing import ScriptedProvider, ScriptedTurn

HOST = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TRACE_ID = int("4bf92f3577b34da6a3ce929d0e0e4736", 16)
HOST_SPAN = int("00f067aa0ba902b7", 16)
AMBIENT = "00-11111111111111111111111111111111-2222222222222222-01"


@robota.tool(risk="execute")
async def child_env_probe(ctx: robota.ToolContext) -> str:
    """Start a child process and report the trace variables it sees."""
    process = await spawn(
        "/bin/sh",
        "-c",
        'printf "%s|%s" "$TRACEPARENT" "${TRACESTATE-unset}"',
        env=ctx.child_env(os.environ),
    )
    out, _ = await process.communicate()
    return json.dumps({"seen": out.decode(), "body": ctx.traceparent, "call_id": ctx.call_id})


def otel() -> tuple[InMemorySpanExporter, OpenTelemetryExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory, OpenTelemetryExporter(tracer_provider=provider)


def span_hex(span: ReadableSpan) -> str:
    assert span.context is not None
    return f"{span.context.span_id:016x}"


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def by_operation(spans: tuple[ReadableSpan, ...], operation: str) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == operation]


async def test_s27_exported_spans_form_one_tree_matching_what_the_provider_and_child_saw(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRACEPARENT", AMBIENT)
    monkeypatch.setenv("TRACESTATE", "ambient=1")
    environ_before = dict(os.environ)
    memory, exporter = otel()
    provider = ScriptedProvider(
        [
            ScriptedTurn(tool_calls=[("child_env_probe", {})], finish_reason="tool_calls"),
            ScriptedTurn(text="done", finish_reason="stop"),
        ]
    )
    agent = robota.Agent(
        provider=provider, model="m-1", tools=[child_env_probe], event_service=exporter
    )
    trace = TraceContext.from_traceparent(
        HOST, origins=["https://api.example.com"], children=["tools"]
    )
    result = await agent.run("go", trace=trace, execution_id="exec-otel")
    assert result.text == "done"
    assert dict(os.environ) == environ_before  # never the process's own environment

    spans = memory.get_finished_spans()
    assert {s.context.trace_id for s in spans if s.context is not None} == {TRACE_ID}
    (run,) = by_operation(spans, "invoke_agent")
    assert parent_of(run) == HOST_SPAN
    assert span_hex(run) == derive_span_id("exec-otel")
    chats = sorted(by_operation(spans, "chat"), key=lambda s: s.start_time or 0)
    assert len(chats) == 2
    assert all(parent_of(c) == run.context.span_id for c in chats)  # type: ignore[union-attr]
    received = [r.trace.traceparent.split("-")[2] for r in provider.requests if r.trace]
    assert [span_hex(c) for c in chats] == received
    assert all(c.kind is SpanKind.CLIENT for c in chats)
    first = chats[0].attributes or {}
    assert first["gen_ai.request.model"] == "m-1"
    assert first["gen_ai.provider.name"] == "scripted"
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert isinstance(first["gen_ai.usage.input_tokens"], int)
    assert isinstance(first["gen_ai.usage.output_tokens"], int)

    (tool,) = by_operation(spans, "execute_tool")
    assert parent_of(tool) == run.context.span_id  # type: ignore[union-attr]
    assert (tool.attributes or {})["gen_ai.tool.name"] == "child_env_probe"
    report = json.loads(next(m for m in agent.history if isinstance(m, robota.ToolMessage)).content)
    seen_parent, seen_state = report["seen"].split("|")
    assert seen_parent == report["body"]
    assert seen_parent.split("-")[2] == span_hex(tool) == derive_span_id(report["call_id"])
    assert seen_state == "unset"  # the ambient TRACESTATE belongs to another parent


async def test_s27_exporter_without_host_context_exports_a_root_tree() -> None:
    memory, exporter = otel()
    provider = ScriptedProvider(["hi"])
    agent = robota.Agent(provider=provider, model="m", event_service=exporter)
    await agent.run("go", execution_id="exec-root")
    spans = memory.get_finished_spans()
    (run,) = by_operation(spans, "invoke_agent")
    (chat,) = by_operation(spans, "chat")
    assert run.parent is None
    assert span_hex(run) == derive_span_id("exec-root")
    assert parent_of(chat) == run.context.span_id  # type: ignore[union-attr]
    assert provider.requests[0].trace is None  # nothing handed out without host context


def test_s27_exporter_refuses_a_tracer_provider_that_cannot_take_derived_ids() -> None:
    with pytest.raises(robota.ConfigurationError, match="TracerProvider"):
        OpenTelemetryExporter(tracer_provider=NoOpTracerProvider())


def _hook_gate(tmp_path: Path, extra: dict[str, Any] | None = None) -> PermissionGate:
    command = f'printf "%s" "${{TRACEPARENT-none}}" > {tmp_path}/env; cat > {tmp_path}/stdin'
    hook: dict[str, Any] = {"type": "command", "command": command, **(extra or {})}
    runner = HookRunner(
        {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]},
        {"command": CommandHookExecutor()},
    )
    return PermissionGate(PermissionPolicy(mode="bypass"), hooks=runner)


@robota.tool
def noop() -> str:
    """Does nothing."""
    return "ok"


async def test_s27_a_command_hook_gets_the_run_span_apart_from_its_stdin_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEPARENT", AMBIENT)
    agent = robota.Agent(
        provider=ScriptedProvider([[("noop", {})], "done"]),
        model="m",
        tools=[noop],
        tool_gate=_hook_gate(tmp_path),
    )
    trace = TraceContext.from_traceparent(HOST, children=["hooks"])
    await agent.run("go", trace=trace, execution_id="exec-hook")
    expected = f"00-4bf92f3577b34da6a3ce929d0e0e4736-{derive_span_id('exec-hook')}-01"
    assert (tmp_path / "env").read_text() == expected  # the prompt root, never the ambient one
    stdin = (tmp_path / "stdin").read_text()
    assert json.loads(stdin)["tool_name"] == "noop"
    assert "traceparent" not in stdin.lower()
    assert derive_span_id("exec-hook") not in stdin


async def test_s27_a_traceparent_the_hooks_own_configuration_sets_wins(tmp_path: Path) -> None:
    own = "00-99999999999999999999999999999999-8888888888888888-01"
    agent = robota.Agent(
        provider=ScriptedProvider([[("noop", {})], "done"]),
        model="m",
        tools=[noop],
        tool_gate=_hook_gate(tmp_path, {"env": {"TRACEPARENT": own}}),
    )
    await agent.run("go", trace=TraceContext.from_traceparent(HOST, children=["hooks"]))
    assert (tmp_path / "env").read_text() == own


async def test_s27_hooks_get_nothing_without_their_grant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACEPARENT", raising=False)
    agent = robota.Agent(
        provider=ScriptedProvider([[("noop", {})], "done"]),
        model="m",
        tools=[noop],
        tool_gate=_hook_gate(tmp_path),
    )
    await agent.run("go", trace=TraceContext.from_traceparent(HOST, children=["tools"]))
    assert (tmp_path / "env").read_text() == "none"


async def test_s27_hooks_get_nothing_by_default_even_when_origins_are_granted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # S27: child processes are a grant of their own; listing origins grants them nothing.
    monkeypatch.delenv("TRACEPARENT", raising=False)
    agent = robota.Agent(
        provider=ScriptedProvider([[("noop", {})], "done"]),
        model="m",
        tools=[noop],
        tool_gate=_hook_gate(tmp_path),
    )
    trace = TraceContext.from_traceparent(HOST, origins=["https://api.example.com"])
    await agent.run("go", trace=trace)
    assert (tmp_path / "env").read_text() == "none"


# Regressions from the review of issue 24: the ambient trace never reaches an ungranted hook.


def _environment_of(path: Path) -> dict[str, str]:
    """What a hook's `env -0` wrote: its whole environment."""
    entries = path.read_bytes().split(b"\0")
    return dict(e.decode().split("=", 1) for e in entries if e)


def _dumping_gate(tmp_path: Path, executor: CommandHookExecutor | None = None) -> PermissionGate:
    hook = {"type": "command", "command": f"env -0 > {tmp_path}/hook-env"}
    runner = HookRunner(
        {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]},
        {"command": executor or CommandHookExecutor()},
    )
    return PermissionGate(PermissionPolicy(mode="bypass"), hooks=runner)


@pytest.mark.parametrize(
    "trace",
    [
        TraceContext.from_traceparent(HOST),
        TraceContext.from_traceparent(HOST, children=["tools"]),
        TraceContext.from_traceparent(HOST, origins=["https://api.example.com"]),
        TraceContext.from_traceparent(HOST, tracestate="host=2", children=["tools"]),
        None,  # S27: this package never adopts ambient trace state, traced run or not
    ],
    ids=["traced", "tools-granted", "origins-granted", "host-tracestate", "untraced"],
)
async def test_s27_a_command_hook_without_its_grant_never_sees_the_ambient_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace: TraceContext | None
) -> None:
    monkeypatch.setenv("TRACEPARENT", AMBIENT)
    monkeypatch.setenv("TRACESTATE", "ambient=1")
    monkeypatch.setenv("ROBOTA_TEST_MARK", "kept")
    agent = robota.Agent(
        provider=ScriptedProvider([[("child_env_probe", {})], "done"]),
        model="m",
        tools=[child_env_probe],
        tool_gate=_dumping_gate(tmp_path),
    )
    result = await agent.run("go", trace=trace)
    seen = _environment_of(tmp_path / "hook-env")
    assert "TRACEPARENT" not in seen
    assert "TRACESTATE" not in seen
    assert seen["ROBOTA_TEST_MARK"] == "kept"  # the rest of the environment is the process's
    assert seen["PATH"] == os.environ["PATH"]
    assert os.environ["TRACEPARENT"] == AMBIENT  # the process's own is never changed
    # The tool's child in the same run agrees: the ambient trace is nobody's parent here.
    answer = next(m.content for m in result.messages if isinstance(m, robota.ToolMessage))
    child_traceparent, child_tracestate = json.loads(answer)["seen"].split("|")
    assert AMBIENT not in child_traceparent
    assert child_tracestate != "ambient=1"


async def test_s27_an_executor_given_an_environment_with_a_traceparent_strips_it_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The executor's env= is usually a copy of the process's: ambient there too.
    monkeypatch.delenv("TRACEPARENT", raising=False)
    base = {"PATH": os.environ["PATH"], "TRACEPARENT": AMBIENT, "TRACESTATE": "a=1", "X": "y"}
    agent = robota.Agent(
        provider=ScriptedProvider([[("noop", {})], "done"]),
        model="m",
        tools=[noop],
        tool_gate=_dumping_gate(tmp_path, CommandHookExecutor(env=base)),
    )
    await agent.run("go", trace=TraceContext.from_traceparent(HOST))
    seen = _environment_of(tmp_path / "hook-env")
    assert "TRACEPARENT" not in seen
    assert "TRACESTATE" not in seen
    assert seen["X"] == "y"


async def test_s27_an_untraced_hooks_own_configuration_still_sets_its_traceparent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEPARENT", AMBIENT)
    own = "00-99999999999999999999999999999999-8888888888888888-01"
    agent = robota.Agent(
        provider=ScriptedProvider([[("noop", {})], "done"]),
        model="m",
        tools=[noop],
        tool_gate=_hook_gate(tmp_path, {"env": {"TRACEPARENT": own}}),
    )
    await agent.run("go")
    assert (tmp_path / "env").read_text() == own


# Regressions from the review of issue 14.
# Regressions from the review of issue 14.


async def test_s27_the_exporter_never_parents_a_run_under_the_ambient_otel_context() -> None:
    memory, exporter = otel()
    ambient = TracerProvider().get_tracer("host")
    agent = robota.Agent(provider=ScriptedProvider(["hi"]), model="m", event_service=exporter)
    with ambient.start_as_current_span("ambient-request"):
        await agent.run("go", execution_id="exec-ambient")
    (run,) = by_operation(memory.get_finished_spans(), "invoke_agent")
    assert run.parent is None  # a root: no host parent was given to the run


async def test_s27_a_resumed_body_is_a_new_span_and_no_span_is_left_open() -> None:
    from robota.testing import InMemoryJournal

    @robota.tool
    async def wait_for_go(ctx: robota.ToolContext) -> str:
        """Waits for the host."""
        return str(await ctx.request_outside_response("approval")) + f" {ctx.traceparent}"

    journal = InMemoryJournal()
    memory, exporter = otel()
    trace = TraceContext.from_traceparent(HOST)

    def agent(turns: list[Any]) -> robota.Agent:
        return robota.Agent(
            provider=ScriptedProvider(turns),
            model="m",
            tools=[wait_for_go],
            journal=journal,
            event_service=exporter,
        )

    first = await agent([[("wait_for_go", {})]]).run("go", execution_id="e-span", trace=trace)
    waiting = agent([])
    again = await waiting.resume("e-span", trace=trace)  # still waiting: nothing runs
    assert again.status == "suspended"
    await waiting.respond("e-span", first.pending_requests[0].id, "yes")
    done = await agent(["done"]).resume("e-span", trace=trace)
    assert done.text == "done"
    spans = memory.get_finished_spans()
    tools = by_operation(spans, "execute_tool")
    assert len(tools) == 2  # the body ran twice: before the suspension and after the answer
    assert len({span_hex(t) for t in tools}) == 2
    runs = by_operation(spans, "invoke_agent")
    assert len(runs) == 2  # the run and the continuation; the no-op resume opened nothing
    assert exporter._runs == {}  # nothing left open
    answers = [m.content for m in done.messages if isinstance(m, robota.ToolMessage)]
    answer = next(text for text in answers if text.startswith("yes"))
    assert answer.split()[-1].split("-")[2] in {span_hex(t) for t in tools}


async def test_s27_an_executor_env_copied_from_the_process_does_not_override_the_run_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEPARENT", AMBIENT)
    monkeypatch.setenv("TRACESTATE", "ambient=1")
    command = f'printf "%s|%s" "$TRACEPARENT" "${{TRACESTATE-unset}}" > {tmp_path}/env'
    runner = HookRunner(
        {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]},
        {"command": CommandHookExecutor(env=dict(os.environ))},
    )
    agent = robota.Agent(
        provider=ScriptedProvider([[("noop", {})], "done"]),
        model="m",
        tools=[noop],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass"), hooks=runner),
    )
    trace = TraceContext.from_traceparent(HOST, children=["hooks"])
    await agent.run("go", trace=trace, execution_id="exec-env")
    seen = (tmp_path / "env").read_text()
    assert seen == f"00-4bf92f3577b34da6a3ce929d0e0e4736-{derive_span_id('exec-env')}-01|unset"


def test_s27_exporter_refuses_an_object_that_is_no_tracer_provider() -> None:
    with pytest.raises(robota.ConfigurationError, match="TracerProvider"):
        OpenTelemetryExporter(tracer_provider=object())


async def test_S39_each_attempt_of_a_retried_call_is_a_span_of_its_own() -> None:
    memory, exporter = otel()
    provider = ScriptedProvider([robota.ProviderError("unavailable", status=503), "fine"])
    policy = robota.RetryPolicy(initial_delay=0.001, jitter=0.0)
    agent = robota.Agent(provider=provider, model="m", event_service=exporter, retry=policy)
    trace = TraceContext.from_traceparent(HOST, origins=["https://api.example.com"])
    assert (await agent.run("go", trace=trace, execution_id="exec-retry")).text == "fine"
    chats = sorted(
        by_operation(memory.get_finished_spans(), "chat"), key=lambda s: s.start_time or 0
    )
    assert [(c.attributes or {})["robota.attempt"] for c in chats] == [1, 2]
    assert not chats[0].status.is_ok
    assert chats[1].status.is_unset or chats[1].status.is_ok
    # S27: each attempt's span is the one the provider was handed for that attempt.
    received = [r.trace.traceparent.split("-")[2] for r in provider.requests if r.trace]
    assert [span_hex(c) for c in chats] == received
    assert len(set(received)) == 2


async def test_issue29_guardrail_calls_are_spans_under_the_run_span() -> None:
    memory, exporter = otel()

    @robota.tool
    def act() -> str:
        """Act."""
        return "done"

    agent = robota.Agent(
        provider=ScriptedProvider([[("act", {})], "ok"]),
        model="m",
        tools=[act],
        event_service=exporter,
        guardrails=[
            robota.InputGuardrail(lambda text: None, name="in"),
            robota.ToolGuardrail(lambda call: None, name="tool"),
            robota.OutputGuardrail(lambda output: None, name="out"),
        ],
    )
    await agent.run("go", execution_id="exec-guard")
    spans = memory.get_finished_spans()
    (run,) = by_operation(spans, "invoke_agent")
    guards = [s for s in spans if s.name.startswith("guardrail ")]
    assert sorted(s.name for s in guards) == ["guardrail in", "guardrail out", "guardrail tool"]
    for span in guards:
        assert parent_of(span) == run.context.span_id  # type: ignore[union-attr]
        assert span.attributes is not None
        assert span.attributes["robota.guardrail.outcome"] == "passed"
    phases = {s.name: s.attributes["robota.guardrail.phase"] for s in guards}  # type: ignore[index]
    assert phases == {
        "guardrail in": "input",
        "guardrail out": "output",
        "guardrail tool": "tool_before",
    }
