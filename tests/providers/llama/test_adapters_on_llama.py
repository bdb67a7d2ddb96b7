"""The OpenAI adapters against a real OpenAI-compatible server: llama.cpp's ``llama-server``.

The server runs the hand-built deterministic model (``_tiny_model``): it calls the offered tool
when no tool result is present and answers in text otherwise, so the conformance kit and a full
agent loop run against real HTTP, real SSE and a real server's own wire habits.

What this server does unlike a vendor, and is therefore not asserted here (NOTES.md): a named
``tool_choice`` is treated as ``auto``, it never emits parallel calls from this model, and any
model name is accepted (no 404 for an unknown model) — the error scenario uses a wrong path.
Its streamed responses close the connection while advertising keep-alive, so the next pooled
request can meet "server disconnected"; the SDK's own retry (kept at its default here) absorbs
that, which is the configuration users get.
"""

from __future__ import annotations

import json

import pytest

import robota
from providers.llama._server import LlamaServer
from providers.llama._tiny_model import PLAIN_REPLY, REPLY_AFTER_TOOL
from robota.core import ModelMetadata
from robota.providers.openai import OpenAIProvider
from robota.providers.openai_compatible import OpenAICompatibleProvider
from robota.testing import (
    CONFORMANCE_SCENARIOS,
    ConformanceScenario,
    ConformanceTarget,
    run_provider_conformance,
)

_TABLE = robota.ProviderCapabilities(
    models={
        "tiny": robota.ModelCapabilities(
            tools=True, streaming=True, structured_output="json_schema"
        )
    }
)
"""What a caller declares about llama-server (it enforces json_schema with a grammar)."""


def _compatible(server: LlamaServer, **options: object) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        base_url=server.base_url,
        name="llama",
        models=[ModelMetadata("tiny", 4096, 512)],
        **options,  # type: ignore[arg-type]
    )


async def test_the_compatible_adapter_passes_the_conformance_kit_on_llama_server(
    llama_server: LlamaServer,
) -> None:
    def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        if scenario == "error_mapping":
            # A real answer from the real server: its API root moved, so every call is a 404.
            broken = OpenAICompatibleProvider(
                base_url=llama_server.base_url + "/missing", name="llama", max_retries=0
            )
            return ConformanceTarget(
                broken, "tiny", expected_error_status=404, expected_error_switchable=True
            )
        return ConformanceTarget(
            _compatible(llama_server, capabilities=_TABLE),
            "tiny",
            expected_text=PLAIN_REPLY if scenario in ("text", "stream") else None,
            tool_result="Paris",
        )

    # The tiny model never asks for two calls at once; its replies are a few fast chunks, so an
    # abort "mid-stream" cannot be placed reliably — both are covered on replays instead.
    wanted = [
        s for s in CONFORMANCE_SCENARIOS if s not in ("parallel_tool_calls", "abort_mid_stream")
    ]
    report = await run_provider_conformance(factory, scenarios=wanted)
    report.raise_for_failures()
    assert {r.scenario for r in report.results if r.status == "passed"} == set(wanted)


async def test_a_full_agent_loop_on_llama_server(llama_server: LlamaServer) -> None:
    calls: list[str] = []

    @robota.tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return "sunny"

    provider = _compatible(llama_server)
    async with robota.Agent(
        provider=provider, model="tiny", tools=[get_weather], owns_providers=True
    ) as agent:
        result = await agent.run("What is the weather in Paris?")
        assert result.status == "complete"
        assert result.output == REPLY_AFTER_TOOL
        assert result.tool_calls_executed == 1
        assert calls == ["lorem ipsum"]  # the model's grammar-constrained argument
        assert result.rounds == 2
        assert result.usage.prompt_tokens > 0
        assert not result.usage.partial
        assert result.model  # the server names the model that answered
        assert robota.get_model_context_window("tiny", provider="llama") == 4096
        # A second turn sees the whole history, tool result included.
        again = await agent.run("And tomorrow?")
        assert again.output == REPLY_AFTER_TOOL


async def test_s18_structured_output_on_llama_server_follows_the_declared_table(
    llama_server: LlamaServer,
) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    # A declared native schema parameter: the server's grammar holds the reply to the schema.
    declared = _compatible(llama_server, capabilities=_TABLE)
    result = await robota.Agent(provider=declared, model="tiny").run("Where?", output=schema)
    await declared.aclose()
    assert result.output == {"city": "lorem ipsum"}
    # JSON mode declared: the server's json_object grammar, the schema stated as instruction.
    mode_table = robota.ProviderCapabilities(
        models={"tiny": robota.ModelCapabilities(structured_output="json_mode")}
    )
    json_mode = _compatible(llama_server, capabilities=mode_table)
    mode = await robota.Agent(provider=json_mode, model="tiny").run(
        "Where?", output=dict, output_retries=0
    )
    await json_mode.aclose()
    assert isinstance(mode.output, dict)
    # No table at all: silence is not a stated absence, so the request goes unchanged — no
    # response_format, no instruction — and this model then answers in plain text (S18).
    silent = _compatible(llama_server)
    with pytest.raises(robota.StructuredOutputError, match="not valid JSON"):
        await robota.Agent(provider=silent, model="tiny").run(
            "Where?", output=schema, output_retries=0
        )
    await silent.aclose()


async def test_the_responses_adapter_on_llama_servers_responses_subset(
    llama_server: LlamaServer,
) -> None:
    def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        provider = OpenAIProvider(
            api_key="unused", base_url=llama_server.base_url, name="llama-responses"
        )
        return ConformanceTarget(
            provider, "tiny", expected_text=PLAIN_REPLY if scenario in ("text", "stream") else None
        )

    # The subset the server's /v1/responses translation supports (NOTES.md).
    wanted: list[ConformanceScenario] = ["text", "stream", "tool_round_trip", "usage_and_model"]
    report = await run_provider_conformance(factory, scenarios=wanted)
    report.raise_for_failures()


async def test_streamed_tool_call_fragments_from_a_real_server(llama_server: LlamaServer) -> None:
    provider = _compatible(llama_server)
    request = robota.ChatRequest(
        model="tiny",
        messages=(robota.UserMessage("weather?"),),
        tools=(
            robota.ToolSpec(
                "get_weather", "", {"type": "object", "properties": {"city": {"type": "string"}}}
            ),
        ),
    )
    response = await robota.collect_stream(provider.chat_stream(request))
    await provider.aclose()
    assert len(response.tool_calls) == 1
    call = response.tool_calls[0]
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"city": "lorem ipsum"}
    assert call.id  # the server's own id, kept as given (S36)
