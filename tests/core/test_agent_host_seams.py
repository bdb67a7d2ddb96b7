"""Core seams a host layer plans with: S31 reports, S13 windows, S34 fresh conversations."""

from __future__ import annotations

import pytest

import robota
from robota import AssistantMessage, Usage, UserMessage, estimate_message_tokens
from robota.testing import ScriptedProvider


def _conversation() -> tuple[robota.Message, ...]:
    report = Usage.from_counts(prompt=5_000, completion=5)
    return (UserMessage("question"), AssistantMessage("answer", usage=report))


async def test_s31_replace_history_anchors_on_a_restored_report_unless_told_not_to() -> None:
    agent = robota.Agent("m", provider=ScriptedProvider([]), context_window=10_000)
    messages = _conversation()
    await agent.replace_history(messages)
    anchored = agent.context_usage()
    assert anchored.reported
    assert anchored.tokens == 5_005
    # A compacted conversation: the report saw turns that are gone, so only the estimate counts.
    await agent.replace_history(messages, reported_usage=False)
    estimated = agent.context_usage()
    assert not estimated.reported
    assert estimated.tokens == sum(estimate_message_tokens(m) for m in messages)


async def test_s13_resolve_context_window_asks_the_server_once_and_keeps_the_answer() -> None:
    class Reporting(ScriptedProvider):
        asked = 0

        async def reported_context_window(self, model: str) -> int | None:
            Reporting.asked += 1
            return 3_000

    agent = robota.Agent("unregistered-model", provider=Reporting([]))
    assert agent.context_usage().window is None
    window = await agent.resolve_context_window()
    assert window == robota.ContextWindow(3_000, "server")
    assert agent.context_usage().window == 3_000
    assert Reporting.asked == 1
    given = robota.Agent("m", provider=Reporting([]), context_window=100)
    assert await given.resolve_context_window() == robota.ContextWindow(100, "caller")
    assert Reporting.asked == 1  # the caller's window wins without a question


async def test_s35_replace_history_can_keep_a_headless_conversation_headless() -> None:
    agent = robota.Agent("m", provider=ScriptedProvider([]), system_prompt="live")
    messages = _conversation()
    # A continuation of an execution that began with no prompt keeps none (S35, S40).
    await agent.replace_history(messages, inject_system_prompt=False)
    assert list(agent.history) == list(messages)
    assert agent.system_prompt == "live"  # the configuration is left unchanged
    await agent.replace_history(messages)  # a new turn: the live prompt heads it again
    assert [m.kind for m in agent.history] == ["system", "user", "assistant"]


async def test_s34_fresh_conversation_runs_apart_from_the_agents_own_history() -> None:
    # The seam robota.agents runs each flow step with: the run sees the system prompt and its
    # input only, and the agent's own conversation is neither read nor changed (append-only).
    provider = ScriptedProvider(["hi", "fresh answer", "continued"])
    agent = robota.Agent("m", provider=provider, system_prompt="be brief")
    await agent.run("hello")
    before = agent.history

    result = await agent.run("a task", fresh_conversation=True)

    assert [type(m).__name__ for m in provider.requests[1].messages] == [
        "SystemMessage",
        "UserMessage",
    ]
    assert result.text == "fresh answer"
    assert [type(m).__name__ for m in result.messages] == ["UserMessage", "AssistantMessage"]
    assert agent.history == before
    await agent.run("and then?")  # the agent's own conversation goes on where it was
    assert len(provider.requests[2].messages) == 4  # system, hello, hi, and then?


async def test_fresh_conversation_takes_a_bool_only() -> None:
    agent = robota.Agent("m", provider=ScriptedProvider(["x"]))
    with pytest.raises(robota.ConfigurationError, match="fresh_conversation"):
        await agent.run("go", fresh_conversation="yes")  # type: ignore[typeddict-item]
