"""A Claude model newer than the table, over the wire (S13, S24), with the real ``anthropic`` SDK.

``claude-opus-4-8`` (recorded in ``anthropic/test_inline_system_prompt_cache_prefix_is_reused``)
is not listed. Its family refuses an extended-thinking budget (the API answers 400), so effort
goes as the model's own effort control, and a family gives no price.
"""

from __future__ import annotations

import robota
from providers.anthropic._helpers import provider, recorded, request
from providers.replay import ReplayServer

RECORDING = "test_inline_system_prompt_cache_prefix_is_reused"


async def test_s13_claude_opus_4_8_sends_the_effort_control_never_a_thinking_budget() -> None:
    async with ReplayServer(recorded(RECORDING)[:1]) as server:
        adapter = provider(server)
        response = await adapter.chat(request("claude-opus-4-8", effort="high"))
        await adapter.aclose()
    sent = server.requests[0].json()
    assert sent["model"] == "claude-opus-4-8"
    assert sent["output_config"] == {"effort": "high"}
    assert "thinking" not in sent
    assert response.content == "OK"
    assert response.effort is not None
    assert response.effort.disposition == "applied"
    assert response.usage is not None
    # No price for a family member: cost stays unknown (S04).
    assert robota.estimate_cost(response.usage, "claude-opus-4-8", provider=adapter.name) is None


async def test_s13_a_newer_claude_4_model_gets_a_thinking_budget_that_fits() -> None:
    async with ReplayServer(recorded(RECORDING)[:1]) as server:
        adapter = provider(server)
        response = await adapter.chat(
            request("claude-sonnet-4-6", effort="high", max_output_tokens=8_000)
        )
        await adapter.aclose()
    sent = server.requests[0].json()
    # The family's budgets that fit below max_tokens: "high" is clamped to "low" (4096).
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert sent["max_tokens"] == 8_000
    assert response.effort is not None
    assert response.effort.disposition == "clamped"
