"""Issue 29: a parent and a sub-agent on different providers, one a real llama.cpp server.

The deterministic tiny model (``_tiny_model``) on a real ``llama-server`` is, in turn, the
sub-agent (its own full loop: tool call, tool result, text) under a scripted parent, and the
parent (calling the sub-agent as its one tool, its argument written under the server's grammar)
over a scripted sub-agent. Usage rolls up per agent across both providers.
"""

from __future__ import annotations

import robota
from providers.llama._server import LlamaServer
from providers.llama._tiny_model import REPLY_AFTER_TOOL, STRING_FILL
from robota.core import ModelMetadata
from robota.providers.openai_compatible import OpenAICompatibleProvider
from robota.testing import ScriptedProvider


def _llama(server: LlamaServer) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        base_url=server.base_url, name="llama", models=[ModelMetadata("tiny", 4096, 512)]
    )


async def test_a_scripted_parent_calls_a_child_running_its_own_loop_on_llama_server(
    llama_server: LlamaServer,
) -> None:
    looked_up: list[str] = []

    @robota.tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        looked_up.append(topic)
        return "bees dance"

    child = robota.Agent(
        provider=_llama(llama_server),
        model="tiny",
        name="researcher",
        tools=[lookup],
        owns_providers=True,
    )
    parent_provider = ScriptedProvider(
        [[("researcher", {"input": "How do bees talk?"})], "Bees dance."], name="parent-vendor"
    )
    parent = robota.Agent("parent-model", provider=parent_provider, name="lead", tools=[child])
    async with child, parent:
        result = await parent.run("Ask the researcher.")
    assert result.text == "Bees dance."
    assert looked_up == [STRING_FILL]  # the child's model called its own tool
    # The child's final text, from the real server, is the parent's tool result.
    assert parent_provider.requests[1].messages[-1].content == REPLY_AFTER_TOOL
    assert set(result.usage_by_agent) == {"lead", "lead/researcher"}
    child_usage = result.usage_by_agent["lead/researcher"]
    assert child_usage.runs == 1
    assert child_usage.usage.prompt_tokens > 0  # what the server reported, rolled up
    assert result.usage == result.usage_by_agent["lead"].usage + child_usage.usage
    assert len(child.history) == 0  # a fresh call leaves the child's own conversation alone


async def test_a_parent_on_llama_server_calls_a_scripted_child(llama_server: LlamaServer) -> None:
    child_provider = ScriptedProvider(["Bees dance to show the way."], name="child-vendor")
    child = robota.Agent(
        "child-model", provider=child_provider, name="researcher", system_prompt="Research."
    )
    parent = robota.Agent(
        provider=_llama(llama_server),
        model="tiny",
        name="lead",
        tools=[child],
        owns_providers=True,
    )
    async with child, parent:
        stream = parent.run_stream("How do bees talk?")
        events = [event async for event in stream]
        result = await stream.result()
    # The real model called the sub-agent (its argument written under the server's grammar),
    # then answered from its result.
    assert result.text == REPLY_AFTER_TOOL
    request = child_provider.requests[0]
    assert [m.content for m in request.messages] == ["Research.", STRING_FILL]
    tool_message = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool_message.content == "Bees dance to show the way."
    # The child's progress reached the parent's stream, marked as the child's.
    own = "".join(e.text for e in events if isinstance(e, robota.TextDelta))
    assert own == REPLY_AFTER_TOOL
    sub = [e for e in events if isinstance(e, robota.SubagentEvent)]
    assert {e.agent for e in sub} == {"lead/researcher"}
    child_text = "".join(e.event.text for e in sub if isinstance(e.event, robota.TextDelta))
    assert child_text == "Bees dance to show the way."
    assert set(result.usage_by_agent) == {"lead", "lead/researcher"}
    assert result.usage_by_agent["lead"].usage.prompt_tokens > 0
