"""S24: effort resolved per Gemini model — a thinking budget (2.5) or a thinking level (3)."""

from __future__ import annotations

import pytest

import robota
from providers.gemini._replay import body, gemini, recorded
from providers.replay import Exchange, ReplayServer


@pytest.mark.parametrize(
    ("model", "effort", "disposition", "sent"),
    [
        ("gemini-2.5-flash", "low", "applied", {"thinking_budget": 1024}),
        ("gemini-2.5-flash", "none", "applied", {"thinking_budget": 0}),
        ("gemini-2.5-flash", "max", "clamped", {"thinking_budget": 24576}),
        ("gemini-2.5-pro", "high", "applied", {"thinking_budget": 32768}),
        ("gemini-2.5-pro", "none", "model_default", None),  # 2.5 Pro cannot stop thinking
        ("gemini-2.5-flash-lite", "medium", "applied", {"thinking_budget": 8192}),
        ("gemini-3-pro-preview", "medium", "clamped", {"thinking_level": "LOW"}),
        ("gemini-3-pro-preview", "high", "applied", {"thinking_level": "HIGH"}),
        ("gemini-3-flash-preview", "minimal", "applied", {"thinking_level": "MINIMAL"}),
        ("gemini-2.0-flash", "low", "not_applied", None),
        ("gemini-unlisted", "low", "not_applied", None),
        ("gemini-2.5-flash", "auto", "model_default", None),
    ],
)
async def test_s24_effort_is_resolved_against_the_model_table(
    model: str, effort: robota.EffortSelection, disposition: str, sent: dict[str, object] | None
) -> None:
    reply = body(recorded("test_google_model")[0])
    with ReplayServer([Exchange.json(200, reply)]) as server:
        provider = gemini(server)
        result = await robota.Agent(provider=provider, model=model).run("x", effort=effort)
        await provider.aclose()
    config = server.requests[0].json().get("generationConfig", {})
    # The SDK copies ThinkingConfig through in its Python field names (the API's JSON parser
    # takes both spellings), so that is what goes on the wire.
    assert config.get("thinkingConfig") == sent
    assert result.effort is not None
    resolution = result.effort.resolution
    assert resolution is not None
    assert resolution.disposition == disposition
    assert resolution.source == "gemini-models-2025-12"
    assert result.effort.native_control_sent == (sent is not None)
