"""Sampling settings under extended thinking (S28, S30), on the wire under the real SDK.

Anthropic's extended-thinking docs: with thinking on, ``temperature`` (and ``top_k``) cannot be
set, and ``top_p`` is accepted only from 0.95 to 1. Whether a request thinks depends on its
effort, not only its model, so the adapter states it per request
(:meth:`~robota.Provider.unsupported_request_settings`): the field is not sent, and the run
reports it (``execution.setting_unsupported``, naming the field and the model) — never a silent
drop, never a vendor 400.
"""

from __future__ import annotations

from typing import Any

import pytest

import robota
from providers.anthropic._helpers import message_body, provider, recorded, request, stream_of
from providers.replay import Exchange, ReplayServer
from robota.core import EffortSelection
from robota.core.providers import unsupported_settings, without_unsupported_settings
from robota.providers.anthropic import AnthropicProvider

THINKING_MODEL = "claude-sonnet-4-0"


def _reported(events: robota.RecordingEventService) -> list[tuple[str, str]]:
    return [
        (e.data["setting"], e.data["model"])
        for e in events.events
        if e.name == robota.EventNames.SETTING_UNSUPPORTED
    ]


async def _run(
    settings: robota.ModelSettings, *, effort: EffortSelection, model: str = THINKING_MODEL
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    events = robota.RecordingEventService()
    async with ReplayServer(recorded("test_anthropic_model_thinking_part_stream")) as server:
        adapter = provider(server)
        agent = robota.Agent(provider=adapter, model=model, event_service=events)
        await agent.run("cross the street?", settings=settings, effort=effort)
        await adapter.aclose()
        server.assert_all_served()
    return server.requests[0].json(), _reported(events)


async def test_s28_a_temperature_under_extended_thinking_is_reported_and_not_sent() -> None:
    body, reported = await _run(robota.ModelSettings(temperature=0.2), effort="medium")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert "temperature" not in body
    assert reported == [("temperature", THINKING_MODEL)]


async def test_s28_a_top_p_below_095_under_thinking_is_reported_and_not_sent() -> None:
    body, reported = await _run(robota.ModelSettings(top_p=0.5), effort="medium")
    assert "thinking" in body
    assert "top_p" not in body
    assert reported == [("top_p", THINKING_MODEL)]


async def test_s28_a_top_p_from_095_to_1_is_sent_with_thinking() -> None:
    body, reported = await _run(robota.ModelSettings(top_p=0.95), effort="medium")
    assert "thinking" in body
    assert body["top_p"] == 0.95
    assert reported == []


async def test_s28_without_thinking_temperature_and_any_top_p_are_sent() -> None:
    answer = message_body([{"type": "text", "text": "x"}], model=THINKING_MODEL)
    events = robota.RecordingEventService()
    async with ReplayServer([stream_of(answer)]) as server:
        adapter = provider(server)
        agent = robota.Agent(provider=adapter, model=THINKING_MODEL, event_service=events)
        settings = robota.ModelSettings(temperature=0.2, top_p=0.5)
        await agent.run("hi", settings=settings, effort="auto")
        await adapter.aclose()
    body = server.requests[0].json()
    assert "thinking" not in body
    assert (body["temperature"], body["top_p"]) == (0.2, 0.5)
    assert _reported(events) == []


@pytest.mark.parametrize("streaming", [True, False])
def test_s30_the_capability_query_answers_per_request(streaming: bool) -> None:
    adapter = AnthropicProvider(api_key="k", streaming=streaming)
    settings = robota.ModelSettings(temperature=0.2, top_p=0.5, max_output_tokens=30_000)
    thinking = request(THINKING_MODEL, effort="high", settings=settings)
    plain = request(THINKING_MODEL, effort="none", settings=settings)
    assert unsupported_settings(adapter, thinking) == ("temperature", "top_p")
    assert unsupported_settings(adapter, plain) == ()
    sent = without_unsupported_settings(adapter, thinking)
    assert (sent.temperature, sent.settings.top_p, sent.max_output_tokens) == (None, None, 30_000)


async def test_s28_a_direct_non_streamed_call_sends_no_temperature_with_thinking() -> None:
    answer = message_body([{"type": "text", "text": "x"}], model=THINKING_MODEL)
    async with ReplayServer([Exchange.json(200, answer)]) as server:
        adapter = provider(server, streaming=False)
        await adapter.chat(
            request(THINKING_MODEL, effort="low", settings=robota.ModelSettings(temperature=0.3))
        )
        await adapter.aclose()
    body = server.requests[0].json()
    assert body["thinking"]["type"] == "enabled"
    assert "temperature" not in body


def test_s30_opus_4_7_and_later_honour_no_sampling_settings() -> None:
    adapter = AnthropicProvider(api_key="k")
    settings = robota.ModelSettings(temperature=0.2, top_p=0.9, stop=("X",))
    for model in ("claude-opus-4-7", "claude-opus-4-10", "claude-opus-4-12-20270101"):
        found = unsupported_settings(adapter, request(model, settings=settings))
        assert found == ("temperature", "top_p"), model
