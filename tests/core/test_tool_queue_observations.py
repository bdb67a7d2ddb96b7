"""S39 ¶1: tool queue observations — submission until selection for admission or refusal.

Each submitted call gets one observation of its wait in the queue. It ends when the call is
selected for pre-dispatch admission or refused there, so it excludes admission, permission and
body work; it certifies no effect; and an observer that fails changes nothing.
"""

from __future__ import annotations

import asyncio
import time

import robota
from robota import EventNames
from robota.testing import ScriptedProvider


def _observations(events: list[robota.AgentEvent]) -> list[robota.AgentEvent]:
    return [e for e in events if e.name == EventNames.TOOL_QUEUE_OBSERVED]


async def test_s39_each_submitted_call_gets_one_queue_observation_with_its_selection() -> None:
    @robota.tool
    def ok() -> str:
        """Works."""
        return "fine"

    turn = [("ok", {}), ("missing", {}), ("ok", "{not json")]
    events: list[robota.AgentEvent] = []
    agent = robota.Agent(provider=ScriptedProvider([turn, "done"]), model="m", tools=[ok])
    await agent.run("go", on_event=events.append)
    seen = [
        (e.data["tool_name"], e.data["selection"], e.data["reason"]) for e in _observations(events)
    ]
    assert sorted(seen) == sorted(
        [
            ("ok", "admission", ""),
            ("missing", "refusal", "unavailable"),
            ("ok", "refusal", "invalid_arguments"),
        ]
    )
    for event in _observations(events):
        assert event.data["submitted_at"] <= event.data["selected_at"]
        assert event.data["waited"] >= 0.0
        assert event.owner_id("execution") is not None


async def test_s39_queue_observation_ends_at_selection_before_admission_and_body_work() -> None:
    times: dict[str, tuple[float, float]] = {}
    admitted_at: dict[str, float] = {}

    def tool_named(name: str) -> robota.Tool:
        @robota.tool(name=name)
        async def body() -> str:
            """Records when its body ran."""
            start = time.time()
            await asyncio.sleep(0.02)
            times[name] = (start, time.time())
            return name

        return body

    class RecordingGate:
        async def admit(self, invocation: robota.ToolInvocation) -> robota.Admission:
            admitted_at[invocation.tool.name] = time.time()
            return robota.Admission(allowed=True)

        async def settled(
            self, invocation: robota.ToolInvocation, result: robota.ToolResult
        ) -> None:
            return None

    provider = ScriptedProvider([[("a", {}), ("b", {}), ("c", {})], "done"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[tool_named("a"), tool_named("b"), tool_named("c")],
        tool_concurrency=1,
        tool_gate=RecordingGate(),
    )
    events: list[robota.AgentEvent] = []
    await agent.run("go", on_event=events.append)
    selected = {e.data["tool_name"]: e.data["selected_at"] for e in _observations(events)}
    for name in "abc":
        # The observation ends before the call's admission and body begin.
        assert selected[name] <= admitted_at[name] <= times[name][0]
    # With one slot, b waits in the queue for a's body, and c for b's.
    assert selected["b"] >= times["a"][1]
    assert selected["c"] >= times["b"][1]
    # Each call's observation is emitted before its body's span starts.
    for event in _observations(events):
        started = next(
            i
            for i, e in enumerate(events)
            if e.name == EventNames.TOOL_STARTED and e.data["tool_name"] == event.data["tool_name"]
        )
        assert events.index(event) < started


async def test_s39_a_failing_queue_observer_cannot_change_execution() -> None:
    @robota.tool
    def ok() -> str:
        """Works."""
        return "fine"

    def build() -> robota.Agent:
        return robota.Agent(
            provider=ScriptedProvider([[("ok", {}), ("ok", {})], "done"]), model="m", tools=[ok]
        )

    raised: list[str] = []

    def explode(event: robota.AgentEvent) -> None:
        if event.name == EventNames.TOOL_QUEUE_OBSERVED:
            raised.append(str(event.data["provider_call_id"]))
            raise RuntimeError("observer broke")

    quiet, loud = build(), build()
    plain = await quiet.run("go")
    observed = await loud.run("go", on_event=explode)
    assert observed.status == plain.status == "complete"
    assert observed.output == plain.output
    assert [(m.kind, m.content) for m in loud.history] == [
        (m.kind, m.content) for m in quiet.history
    ]
    assert observed.tool_calls_executed == plain.tool_calls_executed == 2
    assert len(raised) == 2  # the observer was reached, once per call, and failed each time
