"""Regressions from an adversarial review of the Anthropic adapter (S24, S42)."""

from __future__ import annotations

from typing import Any

import pytest

import robota
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.core import ChatRequest, ToolSpec, UserMessage
from robota.providers.anthropic import AnthropicProvider

_REPLY: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
_TOOL = ToolSpec("t", "d", {"type": "object", "properties": {"a": {"type": "string"}}})


@pytest.mark.parametrize("effort", ["low", "medium", "high", "max"])
async def test_s24_a_complete_call_sends_a_budget_below_its_own_max_tokens(effort: str) -> None:
    # Regression: the budget was chosen for a stream's max_tokens, then sent on a complete call
    # whose max_tokens is capped lower — a request the API refuses, recorded as applied.
    with ReplayServer([Exchange.json(200, _REPLY)]) as server:
        provider = AnthropicProvider(api_key="k", base_url=server.base_url, max_retries=0)
        request = ChatRequest(
            model="claude-sonnet-4-5",
            messages=(UserMessage("hi"),),
            effort=effort,  # type: ignore[arg-type]
        )
        response = await provider.chat(request)
        await provider.aclose()
    sent = server.requests[0].json()
    budget = sent["thinking"]["budget_tokens"]
    assert budget < sent["max_tokens"]
    assert response.effort is not None
    assert response.effort.native_value == str(budget)


async def test_s24_thinking_is_not_sent_with_a_forced_tool_call() -> None:
    with ReplayServer([Exchange.json(200, _REPLY)]) as server:
        provider = AnthropicProvider(
            api_key="k", base_url=server.base_url, max_retries=0, streaming=False
        )
        request = ChatRequest(
            model="claude-sonnet-4-5",
            messages=(UserMessage("hi"),),
            tools=(_TOOL,),
            tool_choice="required",
            effort="low",
        )
        response = await provider.chat(request)
        await provider.aclose()
    sent = server.requests[0].json()
    assert "thinking" not in sent
    assert sent["tool_choice"] == {"type": "any"}
    assert response.effort is not None
    assert response.effort.disposition == "not_applied"
    assert not response.effort.sends_control


async def test_s42_a_request_the_sdk_refuses_before_sending_is_a_configuration_error() -> None:
    # Regression: the SDK's own pre-send refusal was reported as an unreadable server answer.
    with ReplayServer([Exchange.json(200, _REPLY)]) as server:
        provider = AnthropicProvider(
            api_key="k", base_url=server.base_url, max_retries=0, streaming=False
        )
        request = ChatRequest(
            model="claude-sonnet-4-5", messages=(UserMessage("hi"),), max_output_tokens=64000
        )
        with pytest.raises(robota.ConfigurationError, match="could not build the request"):
            await provider.chat(request)
        await provider.aclose()
        assert server.requests == []


@pytest.mark.parametrize(
    ("effort", "disposition", "sent"),
    [
        ("xhigh", "clamped", "high"),
        ("max", "applied", "max"),
        ("low", "applied", "low"),
        ("auto", "model_default", None),
    ],
)
async def test_s24_a_model_with_its_own_effort_control_gets_output_config_effort(
    effort: str, disposition: str, sent: str | None
) -> None:
    # claude-opus-4-6 takes output_config.effort, not a thinking budget; the recording is the
    # API refusing 'xhigh' ("Supported levels: high, low, max, medium"), which the adapter's
    # resolution never sends.
    recorded = load_cassette(
        cassette_path("anthropic", "test_anthropic_explicit_effort_xhigh_unsupported_model_errors")
    )
    with ReplayServer(recorded) as server:
        provider = AnthropicProvider(
            api_key="k", base_url=server.base_url, max_retries=0, streaming=False
        )
        request = ChatRequest(model="claude-opus-4-6", messages=(UserMessage("hi"),), effort=effort)  # type: ignore[arg-type]
        assert provider.resolve_effort(request).disposition == disposition
        with pytest.raises(robota.ProviderError) as caught:
            await provider.chat(request)
        await provider.aclose()
    body = server.requests[0].json()
    assert body.get("output_config", {}).get("effort") == sent
    assert "thinking" not in body
    assert caught.value.status == 400
    assert not caught.value.switchable
