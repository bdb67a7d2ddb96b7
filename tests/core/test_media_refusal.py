"""A refused media part never enters history (issue 26 review, S30).

A part the model's capability table says it cannot take is refused before any transport. The
refusal must leave the conversation as it was: if the refused message stayed in history, every
later run of the agent — plain text included — would be refused for the same part, and the
error's advice ("leave the part out") could not be followed.
"""

from __future__ import annotations

import pytest

import robota
from robota.core.providers import ModelCapabilities, ProviderCapabilities
from robota.testing import InMemoryJournal, ScriptedProvider

TEXT_ONLY = ProviderCapabilities(default_model=ModelCapabilities(vision=False, audio=False))
IMAGE = robota.ImagePart(data=b"\x89PNG\r\n\x1a\nxx", media_type="image/png")


async def test_s30_a_refused_part_leaves_history_untouched_and_the_agent_usable() -> None:
    provider = ScriptedProvider(["plain answer"], capabilities=TEXT_ONLY)
    agent = robota.Agent(provider=provider, model="m")
    with pytest.raises(robota.ConfigurationError) as caught:
        await agent.run([robota.TextPart("what is this?"), IMAGE])
    assert caught.value.code == "media_unsupported"
    assert "'m'" in str(caught.value)
    assert list(agent.history) == []
    assert provider.requests == []
    result = await agent.run("hello")
    assert result.output == "plain answer"
    assert [type(m).__name__ for m in agent.history] == ["UserMessage", "AssistantMessage"]


async def test_s30_a_refused_part_starts_no_journaled_execution() -> None:
    journal = InMemoryJournal()
    provider = ScriptedProvider([], capabilities=TEXT_ONLY)
    agent = robota.Agent(provider=provider, model="m", journal=journal)
    with pytest.raises(robota.ConfigurationError, match="audio=False"):
        await agent.run([robota.AudioPart(data=b"RIFF", media_type="audio/wav")], execution_id="e")
    assert await journal.read("e") == ()


async def test_s30_a_part_the_table_is_silent_about_is_sent() -> None:
    provider = ScriptedProvider(["seen"], capabilities=ProviderCapabilities())
    agent = robota.Agent(provider=provider, model="m")
    assert (await agent.run([IMAGE])).output == "seen"


@robota.tool
def screenshot() -> robota.ToolResult:
    """Take a screenshot."""
    return robota.ToolResult("the screen", parts=(IMAGE,))


async def test_s30_a_tools_image_the_model_cannot_take_goes_as_a_notice_and_history_keeps_it() -> (
    None
):
    provider = ScriptedProvider(
        [[("screenshot", {})], "described from text", "still fine"], capabilities=TEXT_ONLY
    )
    events = robota.RecordingEventService()
    agent = robota.Agent(provider=provider, model="m", tools=[screenshot], event_service=events)
    result = await agent.run("look")
    assert result.output == "described from text"
    sent = provider.requests[1].messages[-1]
    assert isinstance(sent, robota.ToolMessage)
    assert sent.parts == ()
    assert sent.content == "the screen\n[images omitted: model m does not take images]"
    kept = next(m for m in agent.history if isinstance(m, robota.ToolMessage))
    assert kept.parts == (IMAGE,)  # history is never changed
    omitted = [e for e in events.events if e.name == "execution.media_omitted"]
    assert [(e.data["media"], e.data["model"]) for e in omitted] == [("image", "m")]
    assert (await agent.run("and now?")).output == "still fine"  # the agent stays usable


async def test_s30_an_earlier_turns_image_goes_as_a_notice_after_the_model_changes() -> None:
    texts = robota.ModelTexts(media_omitted_notice="<no {media} for {model}>")
    seeing = ScriptedProvider(["a cat"], capabilities=ProviderCapabilities())
    agent = robota.Agent(provider=seeing, model="m", texts=texts)
    await agent.run([robota.TextPart("what is this?"), IMAGE])
    blind = ScriptedProvider(["ok"], capabilities=TEXT_ONLY)
    agent2 = robota.Agent(provider=blind, model="m", texts=texts, history=agent.history)
    await agent2.run("thanks")
    first = blind.requests[0].messages[0]
    assert isinstance(first, robota.UserMessage)
    assert first.content == (robota.TextPart("what is this?"), robota.TextPart("<no images for m>"))
