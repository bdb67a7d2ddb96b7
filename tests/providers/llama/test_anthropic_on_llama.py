"""The Anthropic adapter against llama.cpp's Anthropic-compatible Messages endpoint (/v1/messages).

llama-server speaks the Messages API (tools, tool results, streaming); its thinking signatures
are empty strings (NOTES.md). As with the OpenAI-compatible run, the tiny model never asks for
two calls at once and its replies are a few fast chunks, so parallel calls and a mid-stream abort
are covered on replays instead; the error scenario uses a wrong path (a real 404 from the server).
"""

from __future__ import annotations

from providers.llama._server import LlamaServer
from providers.llama._tiny_model import PLAIN_REPLY
from robota.providers.anthropic import AnthropicProvider
from robota.testing import (
    CONFORMANCE_SCENARIOS,
    ConformanceScenario,
    ConformanceTarget,
    run_provider_conformance,
)


async def test_the_anthropic_adapter_passes_the_conformance_kit_on_llama_servers_messages_api(
    llama_server: LlamaServer,
) -> None:
    def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        if scenario == "error_mapping":
            broken = AnthropicProvider(
                api_key="unused", base_url=llama_server.root_url + "/missing", max_retries=0
            )
            return ConformanceTarget(broken, "tiny", expected_error_status=404)
        provider = AnthropicProvider(
            api_key="unused", base_url=llama_server.root_url, name="llama-messages"
        )
        return ConformanceTarget(
            provider, "tiny", expected_text=PLAIN_REPLY if scenario in ("text", "stream") else None
        )

    wanted = [
        s
        for s in CONFORMANCE_SCENARIOS
        if s not in ("parallel_tool_calls", "abort_mid_stream", "structured_output")
    ]
    report = await run_provider_conformance(factory, scenarios=wanted)
    report.raise_for_failures()
