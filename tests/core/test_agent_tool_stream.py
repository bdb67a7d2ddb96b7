"""A streamed parent shows its sub-agents' progress (issue 29): robota.SubagentEvent.

A sub-agent's own stream events (text deltas, rounds, tool calls, committed messages) reach the
stream of the run that called it, each wrapped in a :class:`robota.SubagentEvent` naming the
agent's path and the caller's tool call — never as the parent's own events, so a consumer that
joins the parent's ``TextDelta`` text never mixes a child's text into it.
"""

from __future__ import annotations

from typing import Any

import robota
from robota import Agent, SubagentEvent, TextDelta, ToolCallFinished, ToolCallStarted
from robota.testing import ScriptedProvider


@robota.tool
async def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"notes on {topic}"


def _agents(child_turns: list[Any], **child: Any) -> tuple[Agent, Agent]:
    researcher = Agent(
        "child-model",
        provider=ScriptedProvider(child_turns, name="child-vendor"),
        name="researcher",
        **child,
    )
    lead = Agent(
        "parent-model",
        provider=ScriptedProvider(
            [[("researcher", {"input": "go"})], "the lead's answer"], name="parent-vendor"
        ),
        name="lead",
        tools=[researcher],
    )
    return lead, researcher


async def test_a_streamed_parent_yields_the_childs_events_marked_with_its_path() -> None:
    lead, _ = _agents([[("lookup", {"topic": "bees"})], "bees dance"], tools=[lookup])
    stream = lead.run_stream("start")
    events = [event async for event in stream]
    result = await stream.result()

    # The parent's own text is its own: the child's text never joins it.
    own_text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert own_text == result.text == "the lead's answer"

    (started,) = [e for e in events if isinstance(e, ToolCallStarted)]
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert started.call.name == "researcher"
    sub = [e for e in events if isinstance(e, SubagentEvent)]
    assert sub
    assert {e.agent for e in sub} == {"lead/researcher"}
    assert {e.call_id for e in sub} == {started.call_id}  # the caller's tool call (S36 id)
    # All of them arrive while the parent's tool call runs, in the child's own order.
    first, last = events.index(started), events.index(finished)
    assert all(first < events.index(e) < last for e in sub)
    inner = [e.event for e in sub]
    assert "".join(e.text for e in inner if isinstance(e, TextDelta)) == "bees dance"
    child_tools = [e for e in inner if isinstance(e, ToolCallFinished)]
    assert [(e.call.name, e.content) for e in child_tools] == [("lookup", "notes on bees")]
    assert any(isinstance(e, ToolCallStarted) for e in inner)
    assert any(isinstance(e, robota.RoundStarted) for e in inner)
    assert any(isinstance(e, robota.MessageCommitted) for e in inner)
    assert finished.content == "bees dance"


async def test_a_grandchilds_events_are_flat_under_its_full_path_and_its_callers_call() -> None:
    helper = Agent(
        "helper-model", provider=ScriptedProvider(["helped"], name="vendor-c"), name="helper"
    )
    lead, _ = _agents([[("helper", {"input": "x"})], "bees dance"], tools=[helper])
    events = [event async for event in lead.run_stream("start")]
    sub = [e for e in events if isinstance(e, SubagentEvent)]
    assert all(not isinstance(e.event, SubagentEvent) for e in sub)  # never nested
    (child_call,) = [
        e.event
        for e in sub
        if e.agent == "lead/researcher" and isinstance(e.event, ToolCallStarted)
    ]
    grand = [e for e in sub if e.agent == "lead/researcher/helper"]
    assert "".join(e.event.text for e in grand if isinstance(e.event, TextDelta)) == "helped"
    # The grandchild's events name the child's tool call that ran it.
    assert {e.call_id for e in grand} == {child_call.call_id}


async def test_a_plain_run_of_a_parent_is_unchanged_and_the_child_streams_to_nobody() -> None:
    lead, researcher = _agents(["bees dance", "direct answer"])
    result = await lead.run("start")
    assert result.text == "the lead's answer"
    direct = [event async for event in researcher.run_stream("direct")]
    assert not any(isinstance(e, SubagentEvent) for e in direct)


async def test_s23_leaving_the_parents_stream_mid_child_records_the_childs_partial_text() -> None:
    child_provider = ScriptedProvider(
        ["one two three four five six seven eight nine ten"], chunk_delay=0.02
    )
    researcher = Agent("child-model", provider=child_provider, name="researcher")
    lead = Agent(
        "parent-model",
        provider=ScriptedProvider([[("researcher", {"input": "go"})], "unused"]),
        name="lead",
        tools=[researcher],
    )
    stream = lead.run_stream("start")
    seen = ""
    async for event in stream:
        if isinstance(event, SubagentEvent) and isinstance(event.event, TextDelta):
            seen += event.event.text
            if "three" in seen:
                break  # the consumer leaves while the child is still streaming
    await stream.aclose()
    assert child_provider.aborted_calls == 1
    # S23: the parent's history records the child's partial text as the tool's result.
    (message,) = [m for m in lead.history if isinstance(m, robota.ToolMessage)]
    partial = str(message.content)
    assert partial.startswith("one two three")
    assert "ten" not in partial
    assert message is lead.history[-1]  # the turn ended there: no model call after the abort
    result = await stream.result()
    assert result.status == "interrupted"
