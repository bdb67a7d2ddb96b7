"""ModelSettings on the Gemini wire (S28, S30), under the real ``google-genai`` SDK.

google-genai's ``GenerateContentConfig`` carries ``temperature``, ``top_p``,
``max_output_tokens``, ``stop_sequences``, ``seed``, ``presence_penalty`` and
``frequency_penalty``; the REST body has them in ``generationConfig`` (camelCase). The request
timeout and extra REST fields go through the per-request ``HttpOptions``. Gemini has no control
over parallel function calls.
"""

from __future__ import annotations

import pytest

import robota
import robota.providers.gemini
from providers.gemini._replay import gemini, serve
from providers.replay import Exchange, ReplayServer
from robota.core import ChatRequest, UserMessage
from robota.core.providers import model_capability

MODEL = "gemini-2.5-flash"


def lookup(city: str) -> str:
    """Look a city up."""
    return city


async def test_s28_generation_config_carries_every_field_and_parallel_calls_are_reported() -> None:
    settings = robota.ModelSettings(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=5,
        stop=("END", "STOP"),
        seed=5,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        parallel_tool_calls=False,
        timeout=30.0,
        extra={"gemini": {"labels": {"team": "a"}}, "openai": {"x": 1}},
    )
    events = robota.RecordingEventService()
    with serve("test_google_model_max_tokens") as server:
        provider = gemini(server)
        agent = robota.Agent(provider=provider, model=MODEL, tools=[lookup], event_service=events)
        result = await agent.run("capital?", settings=settings)
        await provider.aclose()
        server.assert_all_served()
    assert result.text == "The capital of France is"
    body = server.requests[0].json()
    assert body["generationConfig"] == {
        "temperature": 0.2,
        "topP": 0.9,
        "maxOutputTokens": 5,
        "stopSequences": ["END", "STOP"],
        "seed": 5,
        "presencePenalty": 0.5,
        "frequencyPenalty": -0.5,
    }
    assert body["labels"] == {"team": "a"}  # extra["gemini"], through HttpOptions.extra_body
    assert "x" not in body
    reported = [
        (e.data["setting"], e.data["model"])
        for e in events.events
        if e.name == robota.EventNames.SETTING_UNSUPPORTED
    ]
    assert reported == [("parallel_tool_calls", MODEL)]


def test_s30_the_capability_query_states_the_gemini_settings() -> None:
    provider = robota.providers.gemini.GeminiProvider(api_key="test")
    supported = model_capability(provider, MODEL, "settings")
    assert isinstance(supported, frozenset)
    assert "seed" in supported
    assert "parallel_tool_calls" not in supported


async def test_s28_timeout_is_the_sdks_per_request_timeout() -> None:
    with ReplayServer([Exchange.hang(30)]) as server:
        provider = gemini(server, streaming=False)
        request = ChatRequest(
            model=MODEL,
            messages=(UserMessage("hi"),),
            settings=robota.ModelSettings(timeout=0.3),
        )
        with pytest.raises(robota.NetworkError, match=r"(?i)timed? ?out"):
            await provider.chat(request)
        await provider.aclose()


async def test_s28_more_than_five_gemini_stop_sequences_are_refused_before_transport() -> None:
    settings = robota.ModelSettings(stop=("a", "b", "c", "d", "e", "f"))
    with ReplayServer([]) as server:
        provider = gemini(server, streaming=True)
        agent = robota.Agent(provider=provider, model=MODEL)
        with pytest.raises(robota.ConfigurationError) as caught:
            await agent.run("hi", settings=settings)
        await provider.aclose()
    message = str(caught.value)
    assert "at most 5 stop sequences" in message
    assert repr(MODEL) in message
    assert server.requests == []


async def test_s28_five_gemini_stop_sequences_are_sent() -> None:
    settings = robota.ModelSettings(stop=("a", "b", "c", "d", "e"))
    with serve("test_google_model_max_tokens") as server:
        provider = gemini(server)
        await robota.Agent(provider=provider, model=MODEL).run("capital?", settings=settings)
        await provider.aclose()
    assert server.requests[0].json()["generationConfig"]["stopSequences"] == list("abcde")
