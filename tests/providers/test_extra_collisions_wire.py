"""``ModelSettings.extra`` never overrides what an adapter sets itself (S28), on every adapter.

One documented rule for all four adapters, under their real SDKs: an ``extra`` field that
collides with a field the adapter sets is refused before transport with a ConfigurationError
naming the field and the ModelSettings field to use instead — or, for a field built from the
run (``messages``, ``contents`` …), saying it cannot be overridden. Before, Gemini's SDK merged
``extra`` over the request body (``contents`` could be replaced) while the OpenAI and Anthropic
adapters skipped such a field silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

import robota
from providers.anthropic._helpers import provider as anthropic_provider
from providers.anthropic._helpers import recorded as anthropic_recorded
from providers.gemini._replay import gemini, serve
from providers.openai._wire import chat_provider, compatible_provider
from providers.replay import ReplayServer
from robota.providers.openai import OpenAIProvider


def _responses(server: ReplayServer) -> OpenAIProvider:
    return OpenAIProvider(
        api_key="test", base_url=server.base_url + "/v1", max_retries=0, streaming=False
    )


def _gemini(server: ReplayServer) -> robota.Provider:
    return gemini(server, streaming=True)


ADAPTERS: dict[str, tuple[Callable[[ReplayServer], robota.Provider], str, str]] = {
    # name: (factory, extra key, model)
    "openai-chat": (chat_provider, "openai", "gpt-4o"),
    "openai-responses": (_responses, "openai", "gpt-4o"),
    "openai-compatible": (compatible_provider, "openai-compatible", "local"),
    "anthropic": (anthropic_provider, "anthropic", "claude-3-opus-latest"),
    "gemini": (_gemini, "gemini", "gemini-2.5-flash"),
}

CASES: list[tuple[str, Mapping[str, Any], str]] = [
    ("openai-chat", {"temperature": 0.3}, "ModelSettings(temperature=...)"),
    ("openai-chat", {"max_completion_tokens": 5}, "ModelSettings(max_output_tokens=...)"),
    ("openai-chat", {"stop": ["x"]}, "ModelSettings(stop=...)"),
    ("openai-chat", {"messages": []}, "cannot be overridden"),
    ("openai-chat", {"stream": False}, "cannot be overridden"),
    ("openai-responses", {"max_output_tokens": 5}, "ModelSettings(max_output_tokens=...)"),
    ("openai-responses", {"input": []}, "cannot be overridden"),
    ("openai-responses", {"reasoning": {"effort": "low"}}, "effort="),
    ("openai-compatible", {"max_tokens": 5}, "ModelSettings(max_output_tokens=...)"),
    ("openai-compatible", {"seed": 1}, "ModelSettings(seed=...)"),
    ("anthropic", {"stop_sequences": ["x"]}, "ModelSettings(stop=...)"),
    ("anthropic", {"max_tokens": 5}, "ModelSettings(max_output_tokens=...)"),
    ("anthropic", {"system": "x"}, "cannot be overridden"),
    ("anthropic", {"thinking": {"type": "disabled"}}, "effort="),
    ("gemini", {"contents": []}, "cannot be overridden"),
    ("gemini", {"systemInstruction": {"parts": []}}, "cannot be overridden"),
    ("gemini", {"generationConfig": {"temperature": 0.1}}, "ModelSettings(temperature=...)"),
    ("gemini", {"generation_config": {"stop_sequences": ["x"]}}, "ModelSettings(stop=...)"),
    ("gemini", {"generationConfig": {"thinkingConfig": {}}}, "effort="),
    ("gemini", {"generationConfig": 1}, "cannot be overridden"),
]


@pytest.mark.parametrize(("adapter", "fields", "fix"), CASES)
async def test_s28_an_extra_field_the_adapter_sets_is_refused_before_transport(
    adapter: str, fields: Mapping[str, Any], fix: str
) -> None:
    factory, key, model = ADAPTERS[adapter]
    settings = robota.ModelSettings(extra={key: fields})
    async with ReplayServer([]) as server:
        provider = factory(server)
        agent = robota.Agent(provider=provider, model=model)
        with pytest.raises(robota.ConfigurationError) as caught:
            await agent.run("hi", settings=settings)
        await provider.aclose()
    assert server.requests == []
    message = str(caught.value)
    assert next(iter(fields)) in message
    assert repr(model) in message
    assert fix in message


async def test_s28_a_gemini_generation_field_robota_does_not_set_merges_in() -> None:
    settings = robota.ModelSettings(
        temperature=0.2, extra={"gemini": {"generationConfig": {"topK": 3}, "labels": {"a": "b"}}}
    )
    with serve("test_google_model_max_tokens") as server:
        provider = gemini(server)
        await robota.Agent(provider=provider, model="gemini-2.5-flash").run("hi", settings=settings)
        await provider.aclose()
    body = server.requests[0].json()
    assert body["generationConfig"]["topK"] == 3
    assert body["generationConfig"]["temperature"] == 0.2
    assert body["labels"] == {"a": "b"}
    assert body["contents"][0]["parts"] == [{"text": "hi"}]


async def test_s28_an_anthropic_field_robota_does_not_set_is_sent() -> None:
    settings = robota.ModelSettings(extra={"anthropic": {"top_k": 5}})
    async with ReplayServer(anthropic_recorded("test_anthropic_model_instructions")) as server:
        provider = anthropic_provider(server)
        await robota.Agent(provider=provider, model="claude-3-opus-latest").run(
            "capital?", settings=settings
        )
        await provider.aclose()
    assert server.requests[0].json()["top_k"] == 5
