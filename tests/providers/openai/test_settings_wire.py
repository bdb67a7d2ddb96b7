"""ModelSettings on the OpenAI wires (S28, S30): the exact request fields, under the real SDK.

Field names as openai-python 2.x and OpenAI's API reference state them: Responses takes
``max_output_tokens``, ``temperature``, ``top_p``, ``parallel_tool_calls`` (no ``stop``,
``seed`` or penalties); Chat Completions takes ``max_completion_tokens`` (OpenAI) or
``max_tokens`` (most compatible servers), ``stop``, ``seed``, ``presence_penalty``,
``frequency_penalty`` besides.
"""

from __future__ import annotations

from typing import Any

import pytest

import robota
from providers.openai._wire import chat_provider, compatible_provider, restreamed
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.core.providers import model_capability
from robota.providers.openai import OpenAIProvider

EVERYTHING = robota.ModelSettings(
    temperature=0.2,
    top_p=0.9,
    max_output_tokens=64,
    stop=("END", "STOP"),
    seed=5,
    presence_penalty=0.5,
    frequency_penalty=-0.5,
    parallel_tool_calls=False,
    timeout=30.0,
    extra={"openai": {"service_tier": "flex", "not_in_the_sdk": {"a": 1}}, "other": {"x": 1}},
)


def lookup(city: str) -> str:
    """Look a city up."""
    return city


def _responses(server: ReplayServer) -> OpenAIProvider:
    return OpenAIProvider(
        api_key="test", base_url=server.base_url + "/v1", max_retries=0, streaming=False
    )


async def _run(
    provider: robota.Provider, model: str, **options: Any
) -> robota.RecordingEventService:
    events = robota.RecordingEventService()
    agent = robota.Agent(provider=provider, model=model, event_service=events, tools=[lookup])
    await agent.run("capital?", settings=EVERYTHING, **options)
    await provider.aclose()
    return events


def _unsupported(events: robota.RecordingEventService) -> list[tuple[str, str]]:
    return [
        (e.data["setting"], e.data["model"])
        for e in events.events
        if e.name == robota.EventNames.SETTING_UNSUPPORTED
    ]


async def test_s28_responses_sends_its_fields_and_reports_the_rest() -> None:
    script = load_cassette(
        cassette_path("openai-responses", "test_openai_responses_model_simple_response")
    )
    with ReplayServer(script) as server:
        events = await _run(_responses(server), "gpt-4o")
        server.assert_all_served()
    body = server.requests[0].json()
    assert body["max_output_tokens"] == 64
    assert body["temperature"] == 0.2
    assert body["top_p"] == 0.9
    assert body["parallel_tool_calls"] is False  # tools were offered
    assert body["service_tier"] == "flex"  # extra["openai"], a field the SDK types
    assert body["not_in_the_sdk"] == {"a": 1}  # extra["openai"], through extra_body
    for absent in ("stop", "seed", "presence_penalty", "frequency_penalty", "x"):
        assert absent not in body
    # S30: not dropped silently — reported, naming the field and the model.
    assert _unsupported(events) == [
        ("stop", "gpt-4o"),
        ("seed", "gpt-4o"),
        ("presence_penalty", "gpt-4o"),
        ("frequency_penalty", "gpt-4o"),
    ]


async def test_s28_chat_completions_sends_every_field() -> None:
    script = [
        restreamed(e) for e in load_cassette(cassette_path("openai-chat", "test_valid_response"))
    ]
    with ReplayServer(script) as server:
        events = await _run(chat_provider(server), "gpt-4o")
        server.assert_all_served()
    body = server.requests[0].json()
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body
    assert body["temperature"] == 0.2
    assert body["top_p"] == 0.9
    assert body["stop"] == ["END", "STOP"]
    assert body["seed"] == 5
    assert body["presence_penalty"] == 0.5
    assert body["frequency_penalty"] == -0.5
    assert body["parallel_tool_calls"] is False
    assert body["service_tier"] == "flex"
    assert body["not_in_the_sdk"] == {"a": 1}
    assert "x" not in body
    assert _unsupported(events) == []


async def test_s28_openai_compatible_sends_max_tokens_and_its_own_extra() -> None:
    script = [
        restreamed(e) for e in load_cassette(cassette_path("openai-chat", "test_valid_response"))
    ]
    settings = robota.ModelSettings(
        max_output_tokens=7, stop="\n", seed=1, extra={"openai-compatible": {"top_k": 3}}
    )
    with ReplayServer(script) as server:
        provider = compatible_provider(server)
        agent = robota.Agent(provider=provider, model="local")
        await agent.run("hi", settings=settings)
        await provider.aclose()
    body = server.requests[0].json()
    assert body["max_tokens"] == 7
    assert body["stop"] == ["\n"]
    assert body["seed"] == 1
    assert body["top_k"] == 3  # a llama.cpp sampling field the SDK does not type


def test_s30_the_capability_query_states_each_apis_settings() -> None:
    responses = OpenAIProvider(api_key="test")
    chat = OpenAIProvider(api_key="test", api="chat")
    assert model_capability(responses, "gpt-4o", "settings") == frozenset(
        {"temperature", "top_p", "max_output_tokens", "parallel_tool_calls", "timeout", "extra"}
    )
    supported = model_capability(chat, "gpt-4o", "settings")
    assert isinstance(supported, frozenset)
    assert {"stop", "seed", "presence_penalty", "frequency_penalty"} <= supported


@pytest.mark.parametrize("api", ["responses", "chat"])
async def test_s28_timeout_is_the_sdks_per_request_timeout(api: str) -> None:
    with ReplayServer([Exchange.hang(30)]) as server:
        provider = OpenAIProvider(
            api_key="test",
            base_url=server.base_url + "/v1",
            max_retries=0,
            api=api,  # type: ignore[arg-type]
        )
        request = robota.ChatRequest(
            "gpt-4o",
            [robota.UserMessage("hi")],
            settings=robota.ModelSettings(timeout=0.3),
        )
        with pytest.raises(robota.NetworkError, match=r"(?i)timed? ?out"):
            await provider.chat(request)
        await provider.aclose()


SAMPLING = ("temperature", "top_p", "presence_penalty", "frequency_penalty")


@pytest.mark.parametrize("model", ["o3", "gpt-5", "gpt-5.5"])  # a row, a row, a family member
async def test_s28_a_reasoning_model_is_not_sent_sampling_settings_on_chat(model: str) -> None:
    script = [
        restreamed(e) for e in load_cassette(cassette_path("openai-chat", "test_valid_response"))
    ]
    with ReplayServer(script) as server:
        events = await _run(chat_provider(server), model)
        server.assert_all_served()
    body = server.requests[0].json()
    for absent in SAMPLING:
        assert absent not in body
    # What a reasoning model does take still goes.
    assert body["max_completion_tokens"] == 64
    assert body["stop"] == ["END", "STOP"]
    assert body["seed"] == 5
    assert body["parallel_tool_calls"] is False
    # S30: each dropped field reported, naming it and the model.
    assert _unsupported(events) == [(name, model) for name in SAMPLING]


async def test_s28_a_reasoning_model_is_not_sent_sampling_settings_on_responses() -> None:
    script = load_cassette(
        cassette_path("openai-responses", "test_openai_responses_model_simple_response")
    )
    with ReplayServer(script) as server:
        events = await _run(_responses(server), "o4-mini")
        server.assert_all_served()
    body = server.requests[0].json()
    assert "temperature" not in body
    assert "top_p" not in body
    assert body["max_output_tokens"] == 64
    reported = _unsupported(events)
    assert ("temperature", "o4-mini") in reported
    assert ("top_p", "o4-mini") in reported


async def test_s28_gpt_4_1_is_still_sent_sampling_settings() -> None:
    script = [
        restreamed(e) for e in load_cassette(cassette_path("openai-chat", "test_valid_response"))
    ]
    with ReplayServer(script) as server:
        events = await _run(chat_provider(server), "gpt-4.1")
    body = server.requests[0].json()
    assert [body[name] for name in SAMPLING] == [0.2, 0.9, 0.5, -0.5]
    assert _unsupported(events) == []


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_s30_the_capability_query_leaves_sampling_out_for_reasoning_models(api: str) -> None:
    provider = OpenAIProvider(api_key="test", api=api)  # type: ignore[arg-type]
    for model in ("o3", "o1", "gpt-5.2", "gpt-5-mini", "gpt-5.5", "gpt-5-pro-2026-01-01"):
        honoured = model_capability(provider, model, "settings")
        assert isinstance(honoured, frozenset), model
        assert not honoured & set(SAMPLING), model
        assert "max_output_tokens" in honoured, model
    for model in ("gpt-4.1", "gpt-4o-mini", "gpt-4.1-2026-01-01"):
        honoured = model_capability(provider, model, "settings")
        assert isinstance(honoured, frozenset), model
        assert {"temperature", "top_p"} <= honoured, model


FIVE_STOPS = robota.ModelSettings(stop=("a", "b", "c", "d", "e"))


async def test_s28_more_than_four_chat_stop_sequences_are_refused_before_transport() -> None:
    with ReplayServer([]) as server:
        provider = chat_provider(server, streaming=False)
        agent = robota.Agent(provider=provider, model="gpt-4o")
        with pytest.raises(robota.ConfigurationError) as caught:
            await agent.run("hi", settings=FIVE_STOPS)
        await provider.aclose()
    message = str(caught.value)
    assert "at most 4 stop sequences" in message
    assert "'gpt-4o'" in message
    assert "Pass at most 4" in message
    assert server.requests == []


async def test_s28_four_chat_stop_sequences_are_sent() -> None:
    script = [
        restreamed(e) for e in load_cassette(cassette_path("openai-chat", "test_valid_response"))
    ]
    with ReplayServer(script) as server:
        provider = chat_provider(server)
        agent = robota.Agent(provider=provider, model="gpt-4o")
        await agent.run("hi", settings=robota.ModelSettings(stop=("a", "b", "c", "d")))
        await provider.aclose()
    assert server.requests[0].json()["stop"] == ["a", "b", "c", "d"]


async def test_s28_an_openai_compatible_server_states_no_stop_limit() -> None:
    script = [
        restreamed(e) for e in load_cassette(cassette_path("openai-chat", "test_valid_response"))
    ]
    with ReplayServer(script) as server:
        compatible = compatible_provider(server)
        await robota.Agent(provider=compatible, model="local").run("hi", settings=FIVE_STOPS)
        await compatible.aclose()
    assert server.requests[0].json()["stop"] == ["a", "b", "c", "d", "e"]


async def test_s28_responses_reports_stop_whatever_its_length() -> None:
    script = load_cassette(
        cassette_path("openai-responses", "test_openai_responses_model_simple_response")
    )
    events = robota.RecordingEventService()
    with ReplayServer(script) as server:
        responses = _responses(server)
        agent = robota.Agent(provider=responses, model="gpt-4o", event_service=events)
        await agent.run("hi", settings=FIVE_STOPS)
        await responses.aclose()
    assert "stop" not in server.requests[0].json()
    assert _unsupported(events) == [("stop", "gpt-4o")]
