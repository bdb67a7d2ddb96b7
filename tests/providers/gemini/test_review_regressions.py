"""Regressions from an adversarial review of the Gemini adapter (S11, S42)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import robota
from providers.replay import Exchange, ReplayServer
from robota.core import ChatRequest, SystemMessage, UserMessage
from robota.providers.gemini import GeminiProvider

_REPLY: dict[str, Any] = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
    "modelVersion": "gemini-2.5-flash",
}


def test_an_api_key_from_the_environment_is_never_sent_to_vertex_ai(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-secret-env")
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-secret-env-2")
    provider = GeminiProvider(vertexai=True, project="proj", location="us-central1")
    client = provider._client._api_client
    assert client.vertexai
    assert not client.api_key
    headers = client._http_options.headers or {}
    assert "x-goog-api-key" not in {k.lower() for k in headers}


async def test_every_system_message_of_a_request_is_kept() -> None:
    messages = (
        SystemMessage("RULE A"),
        UserMessage("hi"),
        SystemMessage("RULE B"),
        UserMessage("again"),
    )
    with ReplayServer([Exchange.json(200, _REPLY)]) as server:
        provider = GeminiProvider(
            api_key="k", http_options={"base_url": server.base_url + "/"}, streaming=False
        )
        await provider.chat(ChatRequest(model="gemini-2.5-flash", messages=messages))
        await provider.aclose()
    [part] = server.requests[0].json()["systemInstruction"]["parts"]
    assert part["text"] == "RULE A\n\nRULE B"


async def test_s42_a_request_the_sdk_refuses_to_build_is_a_configuration_error() -> None:
    with ReplayServer([Exchange.json(200, _REPLY)]) as server:
        provider = GeminiProvider(
            api_key="k", http_options={"base_url": server.base_url + "/"}, streaming=False
        )
        request = ChatRequest(
            model="gemini-2.5-flash", messages=(UserMessage("hi"),), options={"not_a_field": 1}
        )
        with pytest.raises(robota.ConfigurationError, match="could not build the request"):
            await provider.chat(request)
        await provider.aclose()
        assert server.requests == []


async def test_s42_an_error_inside_a_200_stream_is_a_provider_error_by_its_code() -> None:
    first = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "par"}]}}],
        "modelVersion": "gemini-2.5-flash",
    }
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    stream = f"data: {json.dumps(first)}\r\n\r\ndata: {json.dumps(error)}\r\n\r\n"
    with ReplayServer([Exchange.sse(stream)]) as server:
        provider = GeminiProvider(api_key="k", http_options={"base_url": server.base_url + "/"})
        with pytest.raises(robota.ProviderError) as caught:
            await robota.collect_stream(
                provider.chat_stream(
                    ChatRequest(model="gemini-2.5-flash", messages=(UserMessage("hi"),))
                )
            )
        await provider.aclose()
    assert caught.value.status == 503
    assert caught.value.switchable
    assert type(caught.value).__module__.startswith("robota")
