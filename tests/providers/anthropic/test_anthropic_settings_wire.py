"""ModelSettings on the Anthropic Messages wire (S28, S30), under the real ``anthropic`` SDK.

Field names as Anthropic's Messages API reference states them: ``max_tokens``, ``temperature``
(0 to 1), ``top_p``, ``stop_sequences``, ``tool_choice.disable_parallel_tool_use``; there is no
seed and no presence or frequency penalty.
"""

from __future__ import annotations

from typing import Any

import pytest

import robota
from providers.anthropic._helpers import provider, recorded, request
from providers.replay import Exchange, ReplayServer
from robota.core.providers import model_capability
from robota.providers.anthropic import AnthropicProvider

MODEL = "claude-3-opus-latest"


def lookup(city: str) -> str:
    """Look a city up."""
    return city


async def test_s28_messages_sends_its_fields_and_reports_the_rest() -> None:
    settings = robota.ModelSettings(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=64,
        stop=("END",),
        seed=5,
        presence_penalty=0.5,
        frequency_penalty=0.5,
        parallel_tool_calls=False,
        timeout=30.0,
        extra={"anthropic": {"top_k": 5, "not_in_the_sdk": True}, "openai": {"x": 1}},
    )
    events = robota.RecordingEventService()
    async with ReplayServer(recorded("test_anthropic_model_instructions")) as server:
        adapter = provider(server)
        agent = robota.Agent(provider=adapter, model=MODEL, tools=[lookup], event_service=events)
        result = await agent.run("capital?", settings=settings)
        await adapter.aclose()
        server.assert_all_served()
    assert result.text == "The capital of France is Paris."
    body: dict[str, Any] = server.requests[0].json()
    assert body["max_tokens"] == 64
    assert body["temperature"] == 0.2
    assert body["top_p"] == 0.9
    assert body["stop_sequences"] == ["END"]
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert body["top_k"] == 5
    assert body["not_in_the_sdk"] is True
    for absent in ("seed", "presence_penalty", "frequency_penalty", "x"):
        assert absent not in body
    reported = [
        (e.data["setting"], e.data["model"])
        for e in events.events
        if e.name == robota.EventNames.SETTING_UNSUPPORTED
    ]
    assert reported == [
        ("seed", MODEL),
        ("presence_penalty", MODEL),
        ("frequency_penalty", MODEL),
    ]


def test_s30_the_capability_query_states_the_messages_settings() -> None:
    adapter = AnthropicProvider(api_key="test")
    supported = model_capability(adapter, MODEL, "settings")
    assert isinstance(supported, frozenset)
    assert {"temperature", "top_p", "max_output_tokens", "stop", "parallel_tool_calls"} <= supported
    assert not {"seed", "presence_penalty", "frequency_penalty"} & supported


async def test_a_temperature_above_one_is_refused_before_transport() -> None:
    async with ReplayServer([]) as server:
        adapter = provider(server, streaming=False)
        with pytest.raises(robota.ConfigurationError, match="temperature from 0 to 1"):
            await adapter.chat(request(MODEL, settings=robota.ModelSettings(temperature=1.5)))
        await adapter.aclose()
    assert server.requests == []


async def test_s28_timeout_is_the_sdks_per_request_timeout() -> None:
    async with ReplayServer([Exchange.hang(30)]) as server:
        adapter = provider(server, streaming=False)
        with pytest.raises(robota.NetworkError, match=r"(?i)timed? ?out"):
            await adapter.chat(request(MODEL, settings=robota.ModelSettings(timeout=0.3)))
        await adapter.aclose()


async def test_a_run_with_a_temperature_above_one_fails_with_the_fix() -> None:
    async with ReplayServer([]) as server:
        adapter = provider(server, streaming=True)
        agent = robota.Agent(provider=adapter, model=MODEL)
        with pytest.raises(robota.ConfigurationError, match="temperature from 0 to 1"):
            await agent.run("hi", settings=robota.ModelSettings(temperature=1.5))
        await adapter.aclose()
    assert server.requests == []


async def test_s28_anthropic_states_no_stop_sequence_limit() -> None:
    stops = tuple(f"S{n}" for n in range(8))
    async with ReplayServer(recorded("test_anthropic_model_instructions")) as server:
        adapter = provider(server)
        agent = robota.Agent(provider=adapter, model=MODEL)
        await agent.run("capital?", settings=robota.ModelSettings(stop=stops))
        await adapter.aclose()
    assert server.requests[0].json()["stop_sequences"] == list(stops)
