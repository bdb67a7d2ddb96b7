"""Issue 28: the deterministic tiny model on a real ``llama-server`` as the fallback target.

The primary model is a real vendor adapter on its real SDK, pointed at a fault server on
127.0.0.1 that answers in that vendor's wire format with an overload; its failure is
``switchable``, so after the policy's attempts the run moves to the local model (S30). The answer, the
message, the result and the events name the model that answered.
"""

from __future__ import annotations

import pytest

import robota
from providers.faults.vendors import VENDORS
from providers.llama._server import LlamaServer
from providers.llama._tiny_model import PLAIN_REPLY
from providers.replay import ReplayServer
from robota.core import ModelMetadata
from robota.providers.openai_compatible import OpenAICompatibleProvider


def _llama(server: LlamaServer) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        base_url=server.base_url,
        name="llama",
        models=[ModelMetadata("tiny", 4096, 512)],
        max_retries=0,
    )


@pytest.mark.parametrize("vendor_name", ["anthropic", "openai-chat", "gemini"])
@pytest.mark.parametrize("fault", ["503", "overloaded in a 200 stream"])
async def test_S30_an_overloaded_vendor_falls_back_to_the_local_model(
    vendor_name: str, fault: str, llama_server: LlamaServer
) -> None:
    vendor = VENDORS[vendor_name]
    answer = vendor.status_error(503) if fault == "503" else vendor.error_in_stream()
    server = ReplayServer([answer, answer]).start()  # the policy's two attempts, both failing
    primary = vendor.provider(server, sdk_retries=0, timeout=5.0)
    local = _llama(llama_server)
    recorder = robota.RecordingEventService()
    agent = robota.Agent(
        provider=primary,
        model=vendor.model,
        retry=robota.RetryPolicy(attempts=2, initial_delay=0.01, jitter=0.0),
        fallback=[(local, "tiny")],
        event_service=recorder,
    )
    try:
        result = await agent.run("hello")
    finally:
        await agent.aclose()
        await primary.aclose()
        await local.aclose()
        server.stop()
    assert len(server.requests) == 2  # retried once on the primary, then moved; never again
    assert result.text == PLAIN_REPLY
    assert result.provider == "llama"
    (reply,) = [m for m in result.messages if isinstance(m, robota.AssistantMessage)]
    assert reply.model == "tiny"
    (switch,) = [e for e in recorder.events if e.name == robota.EventNames.MODEL_FALLBACK]
    assert switch.data["to_model"] == "tiny"
    assert switch.data["to_provider"] == "llama"
