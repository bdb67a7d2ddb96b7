"""The Chat Completions wire (``_chat.py``) against real recorded vendor exchanges.

Every test drives the real ``openai`` SDK against the replay server, answering with the recorded
responses of ``tests/providers/recordings/openai-chat``. What our adapter *sent* is checked against
the vendor-owned tokens of the recorded turn-1 response (call ids, signatures), never against the
recorded request bodies, which another project built.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pydantic
import pytest

import robota
from providers.openai._wire import (
    chat_provider,
    collect_into,
    compatible_provider,
    restreamed,
)
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota import (
    AssistantMessage,
    ChatRequest,
    ResponseDone,
    SystemMessage,
    TextDelta,
    ToolCallReady,
    ToolMessage,
    Usage,
    UserMessage,
)
from robota.core import Provider

ProviderFactory = Callable[..., Provider]


def _script(name: str) -> list[Exchange]:
    return load_cassette(cassette_path("openai-chat", name))


def _streamed(name: str) -> list[Exchange]:
    """The cassette's JSON responses as streams (the agent loop always streams)."""
    return [restreamed(exchange) for exchange in _script(name)]


def _price(model: str, usage: Usage) -> float:
    pricing = robota.get_model_pricing(model, provider="openai")
    assert pricing is not None
    return pricing.cost(usage)


async def _events(provider: Provider, request: ChatRequest) -> list[Any]:
    return [event async for event in provider.chat_stream(request)]


# Compatible servers' recordings are replayed through both adapters that speak the wire.
COMPATIBLE_ADAPTERS = pytest.mark.parametrize(
    "make", [chat_provider, compatible_provider], ids=["openai-chat", "compatible"]
)


# --------------------------------------------------------------------------------------------
# Plain text, usage, answering model, cost
# --------------------------------------------------------------------------------------------


async def test_plain_text_usage_and_answering_model() -> None:
    async with ReplayServer(_script("test_valid_response")) as server:
        provider = chat_provider(server)
        response = await provider.chat(
            ChatRequest("gpt-4o", [UserMessage("What is the capital of France?")])
        )
        await provider.aclose()
        server.assert_all_served()
    assert response.content == "The capital of France is Paris."
    assert response.tool_calls == ()
    assert response.model == "gpt-4o-2024-08-06"  # S30: the model that answered
    assert response.usage == Usage(14, 7, 21, cache_read_tokens=0, reasoning_tokens=0)
    assert response.finish_reason == "stop"
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.json() == {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "What is the capital of France?"}],
    }


async def test_s30_run_is_priced_per_answering_model() -> None:
    async with ReplayServer(_streamed("test_valid_response")) as server:
        provider = chat_provider(server)
        result = await robota.Agent(provider=provider, model="gpt-4o").run(
            "What is the capital of France?"
        )
        await provider.aclose()
        server.assert_all_served()
    assert result.text == "The capital of France is Paris."
    assert result.model == "gpt-4o-2024-08-06"
    assert result.usage == Usage(14, 7, 21, cache_read_tokens=0, reasoning_tokens=0)
    # The dated snapshot is priced by its own (alias) row: 14 × $2.50 + 7 × $10 per 1M.
    assert result.cost == pytest.approx((14 * 2.50 + 7 * 10.0) / 1e6)
    assert result.cost == pytest.approx(_price("gpt-4o-2024-08-06", result.usage))


async def test_s29_cached_tokens_are_part_of_the_prompt_and_an_unpriced_model_costs_none() -> None:
    async with ReplayServer(_streamed("test_openai_chat_prompt_cache_e2e")) as server:
        provider = chat_provider(server)
        agent = robota.Agent(provider=provider, model="gpt-5.6-sol")
        cold = await agent.run("Reply OK.")
        warm = await agent.run("Reply OK again.")
        await provider.aclose()
        server.assert_all_served()
    assert cold.usage == Usage(4020, 4, 4024, cache_read_tokens=0, reasoning_tokens=0)
    assert warm.usage == Usage(4020, 4, 4024, cache_read_tokens=4012, reasoning_tokens=0)
    assert warm.usage.uncached_prompt_tokens == 8
    assert not warm.usage.partial
    assert warm.model == "gpt-5.6-sol"
    assert cold.cost is None  # not in the table: never a guess
    assert warm.cost is None


async def test_s29_cached_tokens_on_the_direct_surface() -> None:
    async with ReplayServer(_script("test_openai_chat_prompt_cache_e2e")) as server:
        provider = chat_provider(server)
        request = ChatRequest("gpt-5.6-sol", [UserMessage("Reply OK.")])
        cold = await provider.chat(request)
        warm = await provider.chat(request)
        await provider.aclose()
    assert cold.usage is not None
    assert cold.usage.cache_read_tokens == 0
    assert warm.usage == Usage(4020, 4, 4024, cache_read_tokens=4012, reasoning_tokens=0)
    assert warm.content == "OK"


async def test_reasoning_tokens_are_counted_inside_completion_tokens() -> None:
    async with ReplayServer(_script("test_tool_choice_matrix[auto-openai]")) as server:
        provider = chat_provider(server)
        await provider.chat(ChatRequest("gpt-5-mini", [UserMessage("What's the weather?")]))
        second = await provider.chat(ChatRequest("gpt-5-mini", [UserMessage("again")]))
        await provider.aclose()
    # 171 completion tokens include the 128 reasoning tokens; the total adds up.
    assert second.usage == Usage(167, 171, 338, cache_read_tokens=0, reasoning_tokens=128)


async def test_search_model_direct() -> None:
    async with ReplayServer(_script("test_openai_web_search_tool")) as server:
        provider = chat_provider(server)
        response = await provider.chat(
            ChatRequest(
                "gpt-4o-search-preview",
                [SystemMessage("You are a helpful assistant."), UserMessage("What day is today?")],
            )
        )
        await provider.aclose()
    assert response.content == "May 14, 2025, 8:51:29 AM "  # trailing space kept
    assert response.model == "gpt-4o-search-preview-2025-03-11"
    assert response.usage == Usage(11, 17, 28, cache_read_tokens=0, reasoning_tokens=0)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


async def test_stream_with_a_moderation_chunk_and_usage_on_a_choiceless_chunk() -> None:
    async with ReplayServer(_script("test_openai_moderation_stream")) as server:
        provider = chat_provider(server)
        events = await _events(
            provider, ChatRequest("gpt-5", [UserMessage("What is the capital of France?")])
        )
        await provider.aclose()
        server.assert_all_served()
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Paris", "."]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert [e for e in events if isinstance(e, ResponseDone)] == [done]
    assert done.model == "gpt-5-2025-08-07"
    assert done.usage == Usage(13, 11, 24, cache_read_tokens=0, reasoning_tokens=0)
    assert done.finish_reason == "stop"
    body = server.requests[0].json()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}  # or a stream has no usage


async def test_s24_streamed_run_on_a_reasoning_model_sends_no_effort_for_auto() -> None:
    async with ReplayServer(_script("test_openai_moderation_stream")) as server:
        provider = chat_provider(server)
        result = await robota.Agent(provider=provider, model="gpt-5").run(
            "What is the capital of France?"
        )
        await provider.aclose()
    assert result.text == "Paris."
    assert result.model == "gpt-5-2025-08-07"
    assert result.usage == Usage(13, 11, 24, cache_read_tokens=0, reasoning_tokens=0)
    assert result.cost == pytest.approx(_price("gpt-5", result.usage))
    assert "reasoning_effort" not in server.requests[0].json()
    assert result.effort is not None
    assert result.effort.native_control_sent is False


async def test_s24_effort_is_sent_as_reasoning_effort_for_a_listed_reasoning_model() -> None:
    async with ReplayServer(_script("test_openai_moderation_stream")) as server:
        provider = chat_provider(server)
        result = await robota.Agent(provider=provider, model="gpt-5").run(
            "What is the capital of France?", effort="low"
        )
        await provider.aclose()
    assert server.requests[0].json()["reasoning_effort"] == "low"
    assert result.effort is not None
    assert result.effort.native_control_sent is True


async def test_streamed_tool_call_fragments_are_assembled_into_one_call() -> None:
    async with ReplayServer(_script("test_run_stream_sync_streams_real_model")[:1]) as server:
        provider = chat_provider(server)
        events = await _events(
            provider, ChatRequest("gpt-4o-mini", [UserMessage("What is the capital of the UK?")])
        )
        await provider.aclose()
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert calls == [
        robota.ToolCall("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", '{"country":"UK"}')
    ]
    assert not [e for e in events if isinstance(e, TextDelta)]  # content null is no text
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.finish_reason == "tool_calls"
    assert done.usage == Usage(53, 15, 68, cache_read_tokens=0, reasoning_tokens=0)


async def test_s36_streamed_tool_round_trip_sends_the_call_id_back_untouched() -> None:
    ran: list[str] = []

    @robota.tool
    def get_capital(country: str) -> str:
        """The capital of a country."""
        ran.append(country)
        return "London"

    async with ReplayServer(_script("test_run_stream_sync_streams_real_model")) as server:
        provider = chat_provider(server)
        agent = robota.Agent(provider=provider, model="gpt-4o-mini", tools=[get_capital])
        result = await agent.run("What is the capital of the UK? Use the tool, then answer.")
        await provider.aclose()
        server.assert_all_served()
    assert ran == ["UK"]
    assert result.text == "The capital of the UK is London."
    assert result.rounds == 2
    assert result.tool_calls_executed == 1
    assert result.usage == Usage(53 + 78, 15 + 9, 68 + 87, cache_read_tokens=0, reasoning_tokens=0)
    assert result.model == "gpt-4o-mini-2024-07-18"
    assert result.cost == pytest.approx(_price("gpt-4o-mini", result.usage))
    first = server.requests[0].json()
    assert [t["function"]["name"] for t in first["tools"]] == ["get_capital"]
    assert first["tool_choice"] == "auto"
    messages = server.requests[1].json()["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_ZR5UUuTt3pf61kjwAJIYdVMj",
                "type": "function",
                "function": {"name": "get_capital", "arguments": '{"country":"UK"}'},
            }
        ],
    }
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "call_ZR5UUuTt3pf61kjwAJIYdVMj",
        "content": "London",
    }


# --------------------------------------------------------------------------------------------
# Tool round trips recorded as JSON
# --------------------------------------------------------------------------------------------


async def test_content_null_beside_tool_calls_is_no_text() -> None:
    script = _script("test_openai_instructions_with_tool_calls_keep_instructions")
    async with ReplayServer(script[:1]) as server:
        provider = chat_provider(server)
        response = await provider.chat(
            ChatRequest("gpt-4.1-mini", [UserMessage("What is the temperature in Tokyo?")])
        )
        await provider.aclose()
    assert response.content == ""
    assert response.tool_calls == (
        robota.ToolCall("call_bhZkmIKKItNGJ41whHUHB7p9", "get_temperature", '{"city":"Tokyo"}'),
    )
    assert response.finish_reason == "tool_calls"
    assert response.model == "gpt-4.1-mini-2025-04-14"
    assert response.usage == Usage(50, 15, 65, cache_read_tokens=0, reasoning_tokens=0)


async def test_s35_s36_system_prompt_heads_every_request_and_the_tool_result_is_linked() -> None:
    @robota.tool
    def get_temperature(city: str) -> str:
        """The current temperature of a city, in degrees Celsius."""
        return "20.0" if city == "Tokyo" else "unknown"

    name = "test_openai_instructions_with_tool_calls_keep_instructions"
    async with ReplayServer(_streamed(name)) as server:
        provider = chat_provider(server)
        agent = robota.Agent(
            provider=provider,
            model="gpt-4.1-mini",
            system_prompt="You are a helpful assistant.",
            tools=[get_temperature],
        )
        result = await agent.run("What is the temperature in Tokyo?")
        await provider.aclose()
        server.assert_all_served()
    assert result.text == "The temperature in Tokyo is currently 20.0 degrees Celsius."
    assert result.usage == Usage(125, 30, 155, cache_read_tokens=0, reasoning_tokens=0)
    assert result.cost == pytest.approx((125 * 0.40 + 30 * 1.60) / 1e6)
    first, second = (r.json()["messages"] for r in server.requests)
    system = {"role": "system", "content": "You are a helpful assistant."}
    assert first == [system, {"role": "user", "content": "What is the temperature in Tokyo?"}]
    assert second[0] == system
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2]["content"] is None  # null, not "", beside tool calls
    assert second[2]["tool_calls"][0]["id"] == "call_bhZkmIKKItNGJ41whHUHB7p9"
    assert second[3] == {
        "role": "tool",
        "tool_call_id": "call_bhZkmIKKItNGJ41whHUHB7p9",
        "content": "20.0",
    }
    committed = [m for m in result.messages if isinstance(m, AssistantMessage)]
    assert committed[0].tool_calls[0].id == "call_bhZkmIKKItNGJ41whHUHB7p9"
    assert committed[0].model == "gpt-4.1-mini-2025-04-14"


async def test_tool_round_trip_on_a_reasoning_model() -> None:
    @robota.tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return f"Sunny, 22C in {city}"

    async with ReplayServer(_streamed("test_tool_choice_matrix[auto-openai]")) as server:
        provider = chat_provider(server)
        agent = robota.Agent(provider=provider, model="gpt-5-mini", tools=[get_weather])
        result = await agent.run("What's the weather in Paris?")
        await provider.aclose()
        server.assert_all_served()
    assert result.text.startswith("It's sunny in Paris right now")
    assert result.usage == Usage(
        132 + 167, 23 + 171, 155 + 338, cache_read_tokens=0, reasoning_tokens=128
    )
    assert result.model == "gpt-5-mini-2025-08-07"
    assert result.cost == pytest.approx(_price("gpt-5-mini", result.usage))
    messages = server.requests[1].json()["messages"]
    assert messages[1]["tool_calls"][0]["id"] == "call_aDdJTteHrpMdhdkEkyxjxEHH"
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"city":"Paris"}'
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "call_aDdJTteHrpMdhdkEkyxjxEHH",
        "content": "Sunny, 22C in Paris",
    }


class CityCountry(pydantic.BaseModel):
    city: str
    country: str


async def test_s18_structured_output_after_a_tool_round_uses_response_format() -> None:
    @robota.tool
    def get_user_country() -> str:
        """The user's country."""
        return "Mexico"

    async with ReplayServer(_streamed("test_openai_native_output")) as server:
        provider = chat_provider(server)
        agent = robota.Agent(provider=provider, model="gpt-4o", tools=[get_user_country])
        result = await agent.run(
            "What is the largest city in the user country?", output=CityCountry
        )
        await provider.aclose()
        server.assert_all_served()
    assert result.output == CityCountry(city="Mexico City", country="Mexico")
    assert result.text == '{"city":"Mexico City","country":"Mexico"}'
    assert result.usage == Usage(
        71 + 92, 12 + 15, 83 + 107, cache_read_tokens=0, reasoning_tokens=0
    )
    for sent in server.requests:
        body = sent.json()
        assert body["response_format"]["type"] == "json_schema"
        wire = body["response_format"]["json_schema"]
        original = robota.schema_from_type(CityCountry)
        assert wire["schema"]["properties"] == original["properties"]
        assert wire["schema"]["required"] == original["required"]
        assert "Reply with only a JSON value" not in json.dumps(body["messages"])
    messages = server.requests[1].json()["messages"]
    assert messages[1]["tool_calls"][0]["id"] == "call_PkRGedQNRFUzJp2R7dO7avWR"
    assert messages[2]["tool_call_id"] == "call_PkRGedQNRFUzJp2R7dO7avWR"
    assert messages[2]["content"] == "Mexico"


# --------------------------------------------------------------------------------------------
# Recorded errors
# --------------------------------------------------------------------------------------------


async def test_s42_recorded_404_unknown_model_is_switchable() -> None:
    async with ReplayServer(_script("test_model_name_suggestion[openai-chat]")) as server:
        provider = chat_provider(server)
        with pytest.raises(robota.ProviderError) as info:
            await provider.chat(ChatRequest("gpt-5.2-proo", [UserMessage("hello")]))
        await provider.aclose()
    error = info.value
    assert error.status == 404
    assert error.vendor_type == "invalid_request_error"
    assert error.code == "model_not_found"
    assert error.switchable is True
    assert error.provider == "openai"
    assert error.model == "gpt-5.2-proo"
    assert "gpt-5.2-proo" in str(error)


async def test_s42_recorded_400_unsupported_value_is_not_switchable() -> None:
    async with ReplayServer(_script("test_openai_o1_mini_system_role[system]")) as server:
        provider = chat_provider(server)
        agent = robota.Agent(provider=provider, model="o1-mini", system_prompt="You are helpful.")
        with pytest.raises(robota.ProviderError) as info:
            await agent.run("Hello")
        await provider.aclose()
    error = info.value
    assert error.status == 400
    assert error.vendor_type == "invalid_request_error"
    assert error.switchable is False
    assert "messages[0].role" in str(error)
    last = agent.history[-1]  # S39: recorded as a readable assistant message
    assert isinstance(last, AssistantMessage)
    assert "messages[0].role" in last.content


# --------------------------------------------------------------------------------------------
# OpenAI-compatible servers (replayed through both adapters that speak the wire)
# --------------------------------------------------------------------------------------------

GOOGLE = "test_compatible_api_with_tool_calls_without_id"
GOOGLE_SIGNATURE_1 = "AVSoXO4AzAXs7GGvOY63fp8CwJK3yR8HbUPhxhfN2HaPvJnscmZCkaWvckz5NL3nIMK+si"


def _recorded_extra_content(name: str, index: int) -> Any:
    return json.loads(_script(name)[index].body)["choices"][0]["message"]["extra_content"]


@COMPATIBLE_ADAPTERS
async def test_s36_groq_parallel_calls_keep_their_ids_and_order(make: ProviderFactory) -> None:
    async with ReplayServer(_script("test_tool_choice_matrix[tools_plus_output-groq]")) as server:
        provider = make(server)
        response = await provider.chat(
            ChatRequest(
                "meta-llama/llama-4-scout-17b-16e-instruct",
                [UserMessage("Get weather for Paris and summarize")],
                tool_choice="required",
            )
        )
        await provider.aclose()
    assert response.tool_calls == (
        robota.ToolCall("rew01jq49", "get_weather", '{"city":"Paris"}'),
        robota.ToolCall(
            "gbpypqxpx", "final_result", '{"city":"Paris","summary":"Current weather in Paris"}'
        ),
    )
    assert response.content == ""  # no content key at all
    # Groq's timing fields in usage are ignored; the triple adds up.
    assert response.usage == Usage(779, 65, 844)
    assert response.model == "meta-llama/llama-4-scout-17b-16e-instruct"


@COMPATIBLE_ADAPTERS
async def test_s36_groq_parallel_results_go_back_in_call_order(make: ProviderFactory) -> None:
    @robota.tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return f"Rainy in {city}"

    @robota.tool
    def final_result(city: str, summary: str) -> str:
        """The final response which ends this conversation."""
        return f"{city}: {summary}"

    model = "meta-llama/llama-4-scout-17b-16e-instruct"
    final = restreamed(Exchange.json(200, _completion_text("Done.", model)))
    script = [*_streamed("test_tool_choice_matrix[tools_plus_output-groq]"), final]
    async with ReplayServer(script) as server:
        provider = make(server)
        agent = robota.Agent(provider=provider, model=model, tools=[get_weather, final_result])
        result = await agent.run("Get weather for Paris and summarize", tool_choice="required")
        await provider.aclose()
        server.assert_all_served()
    assert result.tool_calls_executed == 2
    assert server.requests[0].json()["tool_choice"] == "required"
    messages = server.requests[1].json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["rew01jq49", "gbpypqxpx"]
    assert messages[2] == {"role": "tool", "tool_call_id": "rew01jq49", "content": "Rainy in Paris"}
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "gbpypqxpx",
        "content": "Paris: Current weather in Paris",
    }


def _completion_text(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-final",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


@COMPATIBLE_ADAPTERS
async def test_s26_s36_google_empty_call_id_and_signature_go_back_on_turn_2(
    make: ProviderFactory,
) -> None:
    async with ReplayServer(_script(GOOGLE)) as server:
        provider = make(server)
        model = "gemini-2.5-pro-preview-05-06"
        question = UserMessage("What is the current time?")
        first = await provider.chat(ChatRequest(model, [question]))
        assert first.tool_calls == (robota.ToolCall("", "get_current_time", "{}"),)  # not minted
        assert first.continuation is not None
        # S31: Google leaves thinking out of completion_tokens; the counts are kept, marked.
        assert first.usage == Usage(35, 12, 109, partial=True)
        turn_1 = AssistantMessage(
            first.content, tool_calls=first.tool_calls, continuation=first.continuation
        )
        result = ToolMessage("Noon", tool_call_id="", tool_name="get_current_time")
        second = await provider.chat(ChatRequest(model, [question, turn_1, result]))
        await provider.aclose()
        server.assert_all_served()
    assert second.content == "The current time is Noon."
    assert second.usage == Usage(66, 6, 100, partial=True)
    messages = server.requests[1].json()["messages"]
    assistant = messages[1]
    assert assistant["tool_calls"][0]["id"] == ""
    assert assistant["content"] is None
    assert assistant["extra_content"] == _recorded_extra_content(GOOGLE, 0)
    assert assistant["extra_content"]["google"]["thought_signature"].startswith(GOOGLE_SIGNATURE_1)
    assert messages[2] == {"role": "tool", "tool_call_id": "", "content": "Noon"}


@COMPATIBLE_ADAPTERS
async def test_s26_google_signature_goes_back_through_an_agent_run(make: ProviderFactory) -> None:
    @robota.tool
    def get_current_time() -> str:
        """Get the current time."""
        return "Noon"

    async with ReplayServer(_streamed(GOOGLE)) as server:
        provider = make(server)
        agent = robota.Agent(
            provider=provider, model="gemini-2.5-pro-preview-05-06", tools=[get_current_time]
        )
        result = await agent.run("What is the current time?")
        await provider.aclose()
        server.assert_all_served()
    assert result.text == "The current time is Noon."
    assert result.usage.partial is True
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (101, 18)
    assert result.usage.total_tokens == 209  # the vendor's totals, summed, never "fixed"
    messages = server.requests[1].json()["messages"]
    assert messages[1]["extra_content"] == _recorded_extra_content(GOOGLE, 0)
    assert messages[1]["tool_calls"][0]["id"] == ""
    assert messages[2]["tool_call_id"] == ""
    committed = [m for m in result.messages if isinstance(m, AssistantMessage)]
    assert committed[1].continuation is not None  # the turn-2 signature is kept too


@COMPATIBLE_ADAPTERS
async def test_s30_cerebras_answering_model_name_is_reported(make: ProviderFactory) -> None:
    async with ReplayServer(_streamed("test_openai_model_cerebras_provider")) as server:
        provider = make(server)
        result = await robota.Agent(provider=provider, model="llama3.3-70b").run(
            "What is the capital of France?"
        )
        await provider.aclose()
    assert server.requests[0].json()["model"] == "llama3.3-70b"
    assert result.text == "The capital of France is Paris."
    assert result.model == "llama-3.3-70b"
    reply = result.messages[-1]
    assert isinstance(reply, AssistantMessage)
    assert reply.model == "llama-3.3-70b"  # S30: the committed reply names it too
    assert result.usage == Usage(42, 8, 50, cache_read_tokens=0)
    assert result.cost is None  # nobody priced either name


async def test_s30_cerebras_run_is_priced_by_the_answering_model_not_the_requested_one() -> None:
    script = _streamed("test_openai_model_cerebras_provider")
    async with ReplayServer(script) as server:
        provider = compatible_provider(
            server,
            name="cerebras-priced",
            pricing=[
                robota.ModelPricing("llama3.3-70b", 100.0, 100.0),  # the requested name
                robota.ModelPricing("llama-3.3-70b", 1.0, 2.0),  # the model that answered
            ],
        )
        result = await robota.Agent(provider=provider, model="llama3.3-70b").run("Capital?")
        await provider.aclose()
    assert result.cost == pytest.approx((42 * 1.0 + 8 * 2.0) / 1e6)


@COMPATIBLE_ADAPTERS
async def test_s42_openrouter_429_after_the_sdk_retries(make: ProviderFactory) -> None:
    async with ReplayServer(_script("test_openrouter_errors_raised")) as server:
        provider = make(server, max_retries=2)
        agent = robota.Agent(
            provider=provider, model="google/gemini-2.0-flash-exp:free", system_prompt="Be helpful."
        )
        with pytest.raises(robota.RateLimitError) as info:
            await agent.run("Tell me a joke.")
        await provider.aclose()
        server.assert_all_served()  # three attempts: the first and the SDK's two retries
    error = info.value
    assert error.status == 429
    assert error.retry_after is None  # no retry-after header was sent
    assert error.vendor_type is None  # its body's "code": 429 is the status, not a type
    assert error.switchable is True
    assert error.provider == provider.name
    assert "Provider returned error" in str(error)
    last = agent.history[-1]
    assert isinstance(last, AssistantMessage)
    assert "Provider returned error" in last.content


@COMPATIBLE_ADAPTERS
async def test_s42_openrouter_error_inside_a_200_stream(make: ProviderFactory) -> None:
    async with ReplayServer(_script("test_openrouter_stream_error")) as server:
        provider = make(server)
        seen: list[Any] = []
        with pytest.raises(robota.ProviderError) as info:
            await collect_into(
                provider.chat_stream(
                    ChatRequest("minimax/minimax-m2:free", [UserMessage("Hello there")])
                ),
                seen,
            )
        await provider.aclose()
    error = info.value
    assert not isinstance(error, robota.NetworkError)
    assert error.status == 400  # the status the error object names
    assert error.switchable is False
    assert "Token limit reached" in str(error)
    assert seen == []  # the SSE comments and the empty-content deltas carry no content


@COMPATIBLE_ADAPTERS
async def test_s39_openrouter_stream_error_is_raised_and_recorded(make: ProviderFactory) -> None:
    async with ReplayServer(_script("test_openrouter_stream_error")) as server:
        provider = make(server)
        agent = robota.Agent(provider=provider, model="minimax/minimax-m2:free")
        with pytest.raises(robota.ProviderError, match="Token limit reached"):
            await agent.run("Hello there")
        await provider.aclose()
    last = agent.history[-1]
    assert isinstance(last, AssistantMessage)
    assert "Token limit reached" in last.content
