"""A model newer than OpenAI's table, over the wire (S13, S26, S30), with the real ``openai`` SDK.

The recorded exchange with ``gpt-5.5`` (``openai-responses/test_openai_responses_phase_live``):
the table does not list it, so before its family rule the adapter did not ask for
``include: ["reasoning.encrypted_content"]`` and a stateless (``store=False``) reasoning model
lost its reasoning items between turns.
"""

from __future__ import annotations

import json

import robota
from providers.replay import ReplayServer, cassette_path, load_cassette
from robota.core import AssistantMessage, ChatRequest, UserMessage
from robota.providers.openai import OpenAIProvider

VENDOR = "openai-responses"
RECORDING = "test_openai_responses_phase_live"


def get_capital(country: str) -> str:
    """The capital of a country."""
    return "Potato City"


def _provider(server: ReplayServer, **options: object) -> OpenAIProvider:
    return OpenAIProvider(
        api_key="test", base_url=server.base_url + "/v1", max_retries=0, streaming=False, **options
    )


async def test_s13_gpt_5_5_asks_for_encrypted_reasoning_and_carries_it_to_the_next_turn() -> None:
    recorded = load_cassette(cassette_path(VENDOR, RECORDING))
    turn1 = json.loads(recorded[0].body)
    reasoning = next(item for item in turn1["output"] if item["type"] == "reasoning")
    async with ReplayServer(recorded) as server:
        provider = _provider(server)
        agent = robota.Agent(
            provider=provider,
            model="gpt-5.5",
            system_prompt="Briefly narrate what you are about to do before calling each tool.",
            tools=[get_capital],
            effort="high",
        )
        result = await agent.run("What is the capital of PotatoLand?")
        await provider.aclose()
        server.assert_all_served()
    first, second = (request.json() for request in server.requests)
    # The family rule (gpt-5*) says the model reasons: both turns ask for the encrypted items.
    assert first["include"] == ["reasoning.encrypted_content"]
    assert second["include"] == ["reasoning.encrypted_content"]
    assert first["reasoning"] == {"effort": "high"}  # the family's vocabulary has "high"
    assert second["store"] is False
    kinds = [item.get("type", item.get("role")) for item in second["input"]]
    assert kinds == ["user", "reasoning", "assistant", "function_call", "function_call_output"]
    sent = second["input"][1]
    assert sent["id"] == reasoning["id"]
    assert sent["encrypted_content"] == reasoning["encrypted_content"]  # whole, byte for byte
    assert result.output == "The capital of PotatoLand is **Potato City**."
    # What answered is reported, not what was asked for (S30).
    assert result.model == "gpt-5.5-2026-04-23"
    first_reply = next(m for m in result.messages if isinstance(m, AssistantMessage))
    assert first_reply.continuation is not None
    # A family gives no price and no window: cost and window stay unknown (S04, S13).
    assert result.cost is None
    assert result.context_window is not None
    assert result.context_window.source == "unknown"
    assert result.effort is not None
    assert result.effort.resolution is not None
    assert result.effort.resolution.disposition == "applied"
    assert result.effort.resolution.source is not None
    assert result.effort.resolution.source.startswith("family gpt-5 (")


async def test_s30_a_model_no_family_covers_is_not_asked_for_reasoning_items() -> None:
    recorded = load_cassette(cassette_path(VENDOR, RECORDING))
    async with ReplayServer(recorded[:1]) as server:
        provider = _provider(server)
        await provider.chat(ChatRequest(model="my-finetune", messages=[UserMessage("x")]))
        await provider.aclose()
    assert "include" not in server.requests[0].json()


async def test_s13_a_fine_tuned_reasoning_model_is_its_base_family_on_the_wire() -> None:
    """ft:<base>:org:suffix:id reasons like its base: encrypted reasoning items are asked for,
    the family's effort is sent, and a sampling setting is reported, not sent (S28, S30)."""
    model = "ft:gpt-5-mini-2025-08-07:acme:support-chat:abc123"
    recorded = load_cassette(cassette_path(VENDOR, RECORDING))
    events = robota.RecordingEventService()
    async with ReplayServer(recorded) as server:
        provider = _provider(server)
        agent = robota.Agent(
            provider=provider,
            model=model,
            tools=[get_capital],
            effort="high",
            event_service=events,
        )
        result = await agent.run("hi", settings=robota.ModelSettings(temperature=0.2))
        await provider.aclose()
        server.assert_all_served()
    body = server.requests[0].json()
    assert body["model"] == model
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high"}
    assert "temperature" not in body
    reported = [
        (e.data["setting"], e.data["model"])
        for e in events.events
        if e.name == robota.EventNames.SETTING_UNSUPPORTED
    ]
    assert reported == [("temperature", model)]
    assert result.cost is None  # a family never gives a price
