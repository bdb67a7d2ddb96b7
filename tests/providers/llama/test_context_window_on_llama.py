"""The context window a real ``llama-server`` reports, and the guard that uses it (issue 25).

The server runs the tiny model with ``-c 4096 -np 1``. Its own answers are checked first (so a
change in llama.cpp's response shapes shows here), then an agent with no declared window reads
4096 from the server and refuses a prompt that would not fit before sending it.
"""

from __future__ import annotations

import httpx2

import robota
from providers.llama._server import LlamaServer
from robota.providers.openai_compatible import OpenAICompatibleProvider


def test_llama_server_reports_its_window_in_models_and_props(llama_server: LlamaServer) -> None:
    models = httpx2.get(f"{llama_server.base_url}/models", timeout=10).json()
    assert [entry["meta"]["n_ctx_train"] for entry in models["data"]] == [4096]
    props = httpx2.get(f"{llama_server.root_url}/props", timeout=10).json()
    assert props["default_generation_settings"]["n_ctx"] == 4096


async def test_s39_the_reported_window_refuses_a_prompt_too_large_before_sending(
    llama_server: LlamaServer,
) -> None:
    provider = OpenAICompatibleProvider(base_url=llama_server.base_url, name="llama-reported")
    async with robota.Agent(provider=provider, model="tiny", owns_providers=True) as agent:
        small = await agent.run("Hello")
        assert small.status == "complete"
        assert small.context_window == robota.ContextWindow(4096, "server")
        big = await agent.run("word " * 20_000)
    assert big.stop_reason == "context_limit"
    assert big.rounds == 0  # nothing was sent
    assert "4,096-token context window" in big.text
