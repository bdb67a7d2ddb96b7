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
