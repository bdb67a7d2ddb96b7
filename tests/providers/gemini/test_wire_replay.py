"""GeminiProvider replayed from the real Gemini recordings under the real ``google-genai`` SDK."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import robota
from providers.gemini._replay import body, gemini, recorded, same_signature, serve
from providers.replay import Exchange, ReplayServer
from robota.core import AssistantMessage, ChatRequest, ToolMessage, UserMessage
from robota.core.providers import ResponseDone, TextDelta, ToolCallReady, ToolSpec


def get_user_country() -> str:
    """The user's country."""
    return "Mexico"


def get_country() -> str:
    """The user's country."""
    return "Mexico"


def get_capital(country: str) -> str:
    """The capital of a country."""
    return "Paris"


def get_temperature(city: str) -> str:
    """The temperature in a city."""
    return "30°C"


class City(BaseModel):
    city: str
    country: str


def _signatures(part_owner: dict[str, Any]) -> str:
    signature: str = part_owner["thoughtSignature"]
    return signature


def _response_parts(exchange: Exchange) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = body(exchange)["candidates"][0]["content"]["parts"]
    return parts


async def test_plain_text_the_system_instruction_and_the_answering_model() -> None:
    with serve("test_google_model_instructions") as server:
        provider = gemini(server)
        agent = robota.Agent(
            provider=provider, model="gemini-2.0-flash", system_prompt="Be concise."
        )
        result = await agent.run("capital of France?")
        await provider.aclose()
        server.assert_all_served()
    assert result.output == "The capital of France is Paris.\n"
    assert result.usage == robota.Usage(13, 8, 21, None, partial=False, reasoning_tokens=None)
    assert result.model == "gemini-2.0-flash"
    sent = server.requests[0]
    assert sent.path_only == "/v1beta/models/gemini-2.0-flash:generateContent"
    payload = sent.json()
    assert payload["systemInstruction"]["parts"] == [{"text": "Be concise."}]
    assert payload["contents"] == [{"role": "user", "parts": [{"text": "capital of France?"}]}]
    assert result.cost == pytest.approx((13 * 0.10 + 8 * 0.40) / 1e6)


async def test_s29_thoughts_count_in_the_completion_and_the_total_adds_up() -> None:
    with serve("test_google_model") as server:
        provider = gemini(server)
        result = await robota.Agent(provider=provider, model="gemini-2.5-flash").run("hello")
        await provider.aclose()
    assert result.output == "Hello! How can I help you today?"
    # prompt 9; completion = candidates 9 + thoughts 34; total 52 as reported.
    assert result.usage == robota.Usage(9, 43, 52, None, partial=False, reasoning_tokens=34)


async def test_streamed_text_takes_the_final_chunks_prompt_count() -> None:
    with serve("test_google_model_stream") as server:
        provider = gemini(server)
        request = ChatRequest(model="gemini-2.0-flash-exp", messages=(UserMessage("capital?"),))
        events = [event async for event in provider.chat_stream(request)]
        await provider.aclose()
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "The",
        " capital of France",
        " is Paris.\n",
    ]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    # The early chunks say prompt 15; the final one 13/8/21, and the final one wins.
    assert done.usage == robota.Usage(13, 8, 21, None, partial=False, reasoning_tokens=None)
    assert done.model == "gemini-2.0-flash-exp"
    assert done.finish_reason == "STOP"
    assert server.requests[0].path.endswith(":streamGenerateContent?alt=sse")


async def test_s26_a_signed_function_call_goes_back_with_its_signature_on_turn_2() -> None:
    exchanges = recorded("test_google_text_output_function")
    signature = _signatures(_response_parts(exchanges[0])[0])
    with ReplayServer(exchanges) as server:
        provider = gemini(server)
        agent = robota.Agent(provider=provider, model="gemini-2.5-pro", tools=[get_user_country])
        result = await agent.run("largest city in my country?")
        await provider.aclose()
        server.assert_all_served()
    assert result.output == "The largest city in Mexico is Mexico City."
    turn2 = server.requests[1].json()["contents"]
    model_turn = turn2[1]
    assert model_turn["role"] == "model"
    (call_part,) = model_turn["parts"]
    assert call_part["functionCall"] == {
        "name": "get_user_country",
        "args": {},
    }  # no id: none given
    assert same_signature(call_part["thoughtSignature"], signature)
    assert turn2[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_user_country", "response": {"result": "Mexico"}}}
        ],
    }
    first = next(m for m in result.messages if isinstance(m, AssistantMessage) and m.tool_calls)
    assert first.usage == robota.Usage(49, 148, 197, None, partial=False, reasoning_tokens=136)
    assert result.usage.total_tokens == 197 + 153
    # The final answer was signed too: its signature is kept for a later turn.
    last = result.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.continuation is not None
    assert json.loads(last.continuation)["gemini"]["text"]


async def test_s36_three_calls_to_one_function_without_ids_are_linked_by_position() -> None:
    exchanges = recorded("test_google_instructions_only_with_tool_calls")
    first_signature = _signatures(_response_parts(exchanges[0])[0])
    spec = ToolSpec("generate_topic", "", {"type": "object", "properties": {}})
    with ReplayServer(exchanges[:2]) as server:
        provider = gemini(server)
        request = ChatRequest(
            model="gemini-3-flash-preview",
            messages=(UserMessage("Tell three jokes."),),
            tools=(spec,),
            tool_choice="required",
        )
        reply = await provider.chat(request)
        # S36: no provider ids; the adapter's positional ids are distinct within the turn.
        assert [c.id for c in reply.tool_calls] == [
            "gemini-call-0",
            "gemini-call-1",
            "gemini-call-2",
        ]
        assert {c.name for c in reply.tool_calls} == {"generate_topic"}
        assert reply.usage == robota.Usage(83, 220, 303, None, partial=False, reasoning_tokens=190)
        results = [
            ToolMessage(topic, tool_call_id=call.id, tool_name=call.name)
            for call, topic in zip(reply.tool_calls, ("cars", "penguins", "cars"), strict=True)
        ]
        assistant = AssistantMessage(
            reply.content, tool_calls=reply.tool_calls, continuation=reply.continuation
        )
        follow = ChatRequest(
            model="gemini-3-flash-preview",
            messages=(*request.messages, assistant, *results),
            tools=(spec,),
        )
        second = await provider.chat(follow)
        await provider.aclose()
        server.assert_all_served()
    assert [c.name for c in second.tool_calls] == ["generate_topic"]
    sent = server.requests[1].json()
    assert sent["toolConfig"]["functionCallingConfig"]["mode"] == "AUTO"
    assert server.requests[0].json()["toolConfig"]["functionCallingConfig"]["mode"] == "ANY"
    calls = sent["contents"][1]["parts"]
    assert [p["functionCall"] for p in calls] == [{"name": "generate_topic", "args": {}}] * 3
    # Only the first call was signed, and only it carries the signature back.
    assert same_signature(calls[0]["thoughtSignature"], first_signature)
    assert "thoughtSignature" not in calls[1]
    assert "thoughtSignature" not in calls[2]
    # The three results in call order, without ids (Gemini gave none), in one user content.
    assert sent["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "generate_topic", "response": {"result": topic}}}
            for topic in ("cars", "penguins", "cars")
        ],
    }


async def test_s26_a_streamed_signed_call_is_sent_back_with_its_signature() -> None:
    exchanges = recorded("test_google_streaming_tool_call_thought_signature")
    chunk = exchanges[0].body.decode().split("\r\n\r\n")[0].removeprefix("data: ")
    signature = json.loads(chunk)["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    with ReplayServer(exchanges) as server:
        provider = gemini(server)
        agent = robota.Agent(provider=provider, model="gemini-3-pro-preview", tools=[get_country])
        result = await agent.run("capital of my country? Call the tool")
        await provider.aclose()
        server.assert_all_served()
    assert result.output == "The capital of Mexico is Mexico City."
    part = server.requests[1].json()["contents"][1]["parts"][0]
    assert part["functionCall"] == {"name": "get_country", "args": {}}
    assert same_signature(part["thoughtSignature"], signature)
    first = next(m for m in result.messages if isinstance(m, AssistantMessage) and m.tool_calls)
    assert first.usage == robota.Usage(29, 212, 241, None, partial=False, reasoning_tokens=202)
    last = result.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.usage == robota.Usage(257, 8, 265, None, partial=False, reasoning_tokens=None)


async def test_streamed_tool_rounds_one_after_another() -> None:
    with serve("test_google_model_iter_stream") as server:
        provider = gemini(server)
        agent = robota.Agent(
            provider=provider, model="gemini-2.0-flash", tools=[get_capital, get_temperature]
        )
        result = await agent.run("temperature in the capital of France?")
        await provider.aclose()
        server.assert_all_served()
    assert result.output == "The temperature in Paris is 30°C.\n"
    calls = [
        (c.name, json.loads(c.arguments))
        for m in result.messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
    ]
    assert calls == [("get_capital", {"country": "France"}), ("get_temperature", {"city": "Paris"})]
    # The final chunks' usage: 52/5/57, 64/5/69, 79/12/91 (stream 3 said 169 early on).
    assert result.usage == robota.Usage(195, 22, 217, None, partial=False, reasoning_tokens=None)
    turn3 = server.requests[2].json()["contents"]
    assert turn3[-1]["parts"] == [
        {"functionResponse": {"name": "get_temperature", "response": {"result": "30°C"}}}
    ]


async def test_s18_structured_output_uses_response_json_schema() -> None:
    with serve("test_google_native_output") as server:
        provider = gemini(server)
        result = await robota.Agent(provider=provider, model="gemini-2.0-flash").run(
            "Mexico's largest city", output=City
        )
        await provider.aclose()
    assert result.output == City(city="Mexico City", country="Mexico")
    config = server.requests[0].json()["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["properties"]["city"]["type"] == "string"
    assert result.usage == robota.Usage(8, 20, 28, None, partial=False, reasoning_tokens=None)


async def test_s36_structured_output_after_tools_keeps_the_gemini_3_call_id() -> None:
    with serve("test_native_output_with_function_tools") as server:
        provider = gemini(server)
        agent = robota.Agent(
            provider=provider, model="gemini-3-flash-preview", tools=[get_user_country]
        )
        result = await agent.run("largest city in my country?", output=City)
        await provider.aclose()
        server.assert_all_served()
    assert result.output == City(city="Mexico City", country="Mexico")
    first = next(m for m in result.messages if isinstance(m, AssistantMessage) and m.tool_calls)
    assert first.tool_calls[0].id == "w71i0cbt"
    contents = server.requests[1].json()["contents"]
    assert contents[1]["parts"][0]["functionCall"]["id"] == "w71i0cbt"
    assert contents[2]["parts"][0]["functionResponse"] == {
        "id": "w71i0cbt",
        "name": "get_user_country",
        "response": {"result": "Mexico"},
    }


async def test_thought_summaries_are_not_reply_text() -> None:
    with serve("test_google_model_thinking_part_iter") as server:
        provider = gemini(server)
        result = await robota.Agent(provider=provider, model="gemini-2.5-pro").run("cross?")
        await provider.aclose()
    assert result.output.startswith("This is a great question! Safely crossing the street")
    assert "Clarifying User Goals" not in result.output
    assert result.usage == robota.Usage(
        34, 469 + 787, 1290, None, partial=False, reasoning_tokens=787
    )
    last = result.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.continuation is not None  # the signed text part


async def test_s29_cached_content_is_part_of_the_prompt_and_reported_as_cache_read() -> None:
    with serve("test_google_model_cached_content", only=slice(1, 2)) as server:
        provider = gemini(server)
        name = "cachedContents/7lf5him5ev4iemi1yjv2gwli5bhpz3yidzejwllo"
        request = ChatRequest(
            model="gemini-2.5-flash",
            messages=(UserMessage("capital?"),),
            options={"cached_content": name},
        )
        reply = await provider.chat(request)
        await provider.aclose()
    assert reply.content == "Paris."
    assert reply.usage == robota.Usage(3520, 44, 3564, 3512, partial=False, reasoning_tokens=42)
    assert server.requests[0].json()["cachedContent"] == name


async def test_s30_google_search_grounding_is_sent_when_enabled_and_counts_tool_prompt() -> None:
    with serve("test_google_native_tool_only_web_search_completes") as server:
        provider = gemini(server, native_tools=["google_search"])
        agent = robota.Agent(provider=provider, model="gemini-2.5-flash")
        result = await agent.run("time in San Francisco?", native_tools=["google_search"])
        await provider.aclose()
    assert {"googleSearch": {}} in server.requests[0].json()["tools"]
    assert result.tool_calls_executed == 0
    assert result.output.startswith("It is currently 3:56 AM PDT on Tuesday, June 9, 2026")
    # prompt = 11 + toolUsePrompt 90; completion = 105 + thoughts 131; total 337.
    assert result.usage == robota.Usage(101, 236, 337, None, partial=False, reasoning_tokens=131)


async def test_s30_a_hosted_tool_not_enabled_fails_before_any_transport() -> None:
    with ReplayServer([]) as server:
        provider = gemini(server)
        agent = robota.Agent(provider=provider, model="gemini-2.5-flash")
        with pytest.raises(robota.NativeToolUnavailableError, match="not enabled"):
            await agent.run("x", native_tools=["google_search"])
        await provider.aclose()
        assert server.requests == []


async def test_max_tokens_is_kept_as_the_finish_reason() -> None:
    with serve("test_google_model_max_tokens") as server:
        provider = gemini(server)
        request = ChatRequest(
            model="gemini-2.5-flash", messages=(UserMessage("capital?"),), max_output_tokens=5
        )
        reply = await provider.chat(request)
        await provider.aclose()
    assert reply.content == "The capital of France is"
    assert reply.finish_reason == "MAX_TOKENS"
    assert reply.usage == robota.Usage(15, 5, 20, None, partial=False, reasoning_tokens=None)
    assert server.requests[0].json()["generationConfig"]["maxOutputTokens"] == 5


async def test_a_safety_stop_without_parts_is_an_empty_reply_not_an_error() -> None:
    with serve("test_google_model_safety_settings") as server:
        provider = gemini(server)
        request = ChatRequest(model="gemini-1.5-flash", messages=(UserMessage("x"),))
        reply = await provider.chat(request)
        await provider.aclose()
    assert reply.content == ""
    assert reply.tool_calls == ()
    assert reply.finish_reason == "SAFETY"
    # candidatesTokenCount is absent (proto3 omits zeros): 14/0/14 adds up.
    assert reply.usage == robota.Usage(14, 0, 14, None, partial=False, reasoning_tokens=None)


async def test_s42_an_unknown_model_is_a_switchable_404() -> None:
    with serve("test_model_name_suggestion[google]") as server:
        provider = gemini(server)
        with pytest.raises(robota.ProviderError) as caught:
            await robota.Agent(provider=provider, model="gemini-3.6-flahs").run("x")
        await provider.aclose()
    assert caught.value.status == 404
    assert caught.value.vendor_type == "NOT_FOUND"
    assert caught.value.switchable is True
    assert "gemini-3.6-flahs" in str(caught.value)


async def test_s42_a_stream_without_a_finish_reason_is_incomplete() -> None:
    exchanges = recorded("test_google_model_stream")
    text = exchanges[0].body.decode()
    cut = "\r\n\r\n".join(text.split("\r\n\r\n")[:2]) + "\r\n\r\n"  # the last chunk never came
    with ReplayServer([Exchange.sse(cut)]) as server:
        provider = gemini(server)
        request = ChatRequest(model="gemini-2.0-flash", messages=(UserMessage("x"),))
        with pytest.raises(robota.NetworkError) as caught:
            _ = [event async for event in provider.chat_stream(request)]
        await provider.aclose()
    assert caught.value.vendor_type == "incomplete_stream"
    assert caught.value.switchable is False


async def test_s17_tools_are_projected_with_the_gemini_policy_and_the_note() -> None:
    reply = body(recorded("test_google_model_instructions")[0])
    schema = {
        "type": "object",
        "properties": {"city": {"type": ["string", "null"]}, "n": {"type": "integer"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    with ReplayServer([Exchange.json(200, reply)]) as server:
        provider = gemini(server)
        request = ChatRequest(
            model="gemini-2.0-flash",
            messages=(UserMessage("x"),),
            tools=(ToolSpec("lookup", "Look a city up.", schema),),
            tool_choice="none",
        )
        await provider.chat(request)
        await provider.aclose()
    sent = server.requests[0].json()
    (declaration,) = sent["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "lookup"
    parameters = declaration["parameters"]
    assert parameters["properties"]["city"] == {"type": "STRING", "nullable": True}
    assert "additionalProperties" not in parameters
    assert "additionalProperties" in declaration["description"]  # core's dropped-constraint note
    assert sent["toolConfig"]["functionCallingConfig"]["mode"] == "NONE"


async def test_s25_native_payloads_reach_the_raw_surface() -> None:
    seen: list[robota.AgentEvent] = []
    with serve("test_google_model_stream") as server:
        provider = gemini(server)
        await robota.Agent(provider=provider, model="gemini-2.0-flash").run(
            "x", on_event=seen.append
        )
        await provider.aclose()
    native = [e for e in seen if e.name == robota.EventNames.PROVIDER_NATIVE]
    assert native[0].data["direction"] == "request"
    assert native[0].data["api"] == "generate_content"
    assert native[0].data["body"]["model"] == "gemini-2.0-flash"
    assert [e.data["direction"] for e in native[1:]] == ["stream_event"] * 3


async def test_streamed_calls_are_reported_whole() -> None:
    with serve("test_google_model_iter_stream", only=slice(0, 1)) as server:
        provider = gemini(server)
        request = ChatRequest(
            model="gemini-2.0-flash",
            messages=(UserMessage("x"),),
            tools=(
                ToolSpec(
                    "get_capital",
                    "",
                    {"type": "object", "properties": {"country": {"type": "string"}}},
                ),
            ),
        )
        events = [event async for event in provider.chat_stream(request)]
        await provider.aclose()
    (ready,) = [e for e in events if isinstance(e, ToolCallReady)]
    assert ready.call.id == "gemini-call-0"
    assert json.loads(ready.call.arguments) == {"country": "France"}
