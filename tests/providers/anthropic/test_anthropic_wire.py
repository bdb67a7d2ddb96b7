"""AnthropicProvider replayed from the real Anthropic recordings under the real ``anthropic`` SDK.

Each test asserts the facts the recordings' README lists, and checks what *our* adapter sent on
the next turn against the vendor-owned tokens of the recorded reply (tool ids, signatures,
redacted-thinking data).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers.anthropic._helpers import collect, provider, recorded, request, tool
from providers.replay import ReplayServer
from robota.core import AssistantMessage, ChatRequest, SystemMessage, ToolMessage, UserMessage


def _body(server: ReplayServer, index: int) -> dict[str, Any]:
    body: dict[str, Any] = server.requests[index].json()
    return body


async def test_text_reply_and_system_field() -> None:
    """Plain text; the system head travels in ``system``, never as a message."""
    async with ReplayServer(recorded("test_anthropic_model_instructions")) as server:
        adapter = provider(server)
        messages = (
            SystemMessage("You are helpful."),
            UserMessage("What is the capital of France?"),
        )
        reply = await adapter.chat(ChatRequest(model="claude-3-opus-latest", messages=messages))
        await adapter.aclose()
    assert reply.content == "The capital of France is Paris."
    assert reply.model == "claude-3-opus-20240229"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (20, 10)
    assert reply.usage.cache_read_tokens == 0
    assert reply.finish_reason == "end_turn"
    sent = _body(server, 0)
    assert sent["system"] == "You are helpful."
    assert [m["role"] for m in sent["messages"]] == ["user"]
    assert sent["max_tokens"] == 4096  # the table's max output for this model
    assert server.requests[0].path_only == "/v1/messages"


async def test_streamed_text_with_ping() -> None:
    async with ReplayServer(recorded("test_request_stream_fallback_for_high_max_tokens")) as server:
        adapter = provider(server)
        text, calls, done = await collect(adapter.chat_stream(request("claude-sonnet-4-5")))
        await adapter.aclose()
    assert text == "2"
    assert calls == []
    assert done.model == "claude-sonnet-4-5-20250929"
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (20, 5)
    sent = _body(server, 0)
    assert sent["stream"] is True
    assert sent["max_tokens"] == 64_000  # streamed: the model's full max output


async def test_s36_text_and_tool_use_round_trip() -> None:
    """Text and a call in one reply; the id goes back untouched in tool_use and tool_result."""
    async with ReplayServer(recorded("test_anthropic_text_output_function")) as server:
        adapter = provider(server)
        tools = (tool("get_user_country"),)
        first = await adapter.chat(request("claude-sonnet-4-5", "largest city?", tools=tools))
        assert first.content.startswith("I'll help find the largest city")
        [call] = first.tool_calls
        assert (call.id, call.name, json.loads(call.arguments)) == (
            "toolu_01JJ8TequDsrEU2pv1QFRWAK",
            "get_user_country",
            {},
        )
        assert first.finish_reason == "tool_use"
        history = (
            UserMessage("largest city?"),
            AssistantMessage(first.content, tool_calls=first.tool_calls),
            ToolMessage("Mexico", tool_call_id=call.id, tool_name=call.name),
        )
        final = await adapter.chat(ChatRequest("claude-sonnet-4-5", history, tools=tools))
        await adapter.aclose()
    assert final.content.startswith("Based on the result, you are located in Mexico.")
    assert first.usage is not None
    assert final.usage is not None
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (383, 65)
    assert (final.usage.prompt_tokens, final.usage.completion_tokens) == (460, 91)
    turn2 = _body(server, 1)["messages"]
    assert turn2[1]["content"][0] == {"type": "text", "text": first.content}
    assert turn2[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_01JJ8TequDsrEU2pv1QFRWAK",
        "name": "get_user_country",
        "input": {},
    }
    assert turn2[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01JJ8TequDsrEU2pv1QFRWAK",
            "content": "Mexico",
        }
    ]
    assert _body(server, 0)["tool_choice"] == {"type": "auto"}


async def test_s36_parallel_tool_results_in_one_user_message_in_call_order() -> None:
    async with ReplayServer(recorded("test_multiple_parallel_tool_calls")) as server:
        adapter = provider(server)
        tools = (tool("retrieve_entity_info", "name"),)
        first = await adapter.chat(request("claude-haiku-4-5", "who is youngest?", tools=tools))
        names = [json.loads(c.arguments)["name"] for c in first.tool_calls]
        assert names == ["Alice", "Bob", "Charlie", "Daisy"]
        results = tuple(
            ToolMessage(
                f"{json.loads(c.arguments)['name']} info",
                tool_call_id=c.id,
                tool_name=c.name,
                is_error=index == 2,
            )
            for index, c in enumerate(first.tool_calls)
        )
        history = (
            UserMessage("who is youngest?"),
            AssistantMessage(first.content, tool_calls=first.tool_calls),
            *results,
        )
        final = await adapter.chat(ChatRequest("claude-haiku-4-5", history, tools=tools))
        await adapter.aclose()
    assert "Daisy" in final.content
    assert first.usage is not None
    assert final.usage is not None
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (423, 202)
    assert (final.usage.prompt_tokens, final.usage.completion_tokens) == (771, 77)
    turn2 = _body(server, 1)["messages"]
    assert [m["role"] for m in turn2] == ["user", "assistant", "user"]
    blocks = turn2[2]["content"]
    assert [b["type"] for b in blocks] == ["tool_result"] * 4
    assert [b["tool_use_id"] for b in blocks] == [c.id for c in first.tool_calls]
    assert [b.get("is_error", False) for b in blocks] == [False, False, True, False]


async def test_streamed_input_json_delta_next_to_server_tools() -> None:
    """A streamed client call is assembled from fragments; server tool blocks are not calls."""
    async with ReplayServer(recorded("test_anthropic_native_tool_search_streaming")) as server:
        adapter = provider(server)
        tools = (tool("get_exchange_rate", "from_currency", "to_currency"),)
        text, calls, done = await collect(
            adapter.chat_stream(request("claude-sonnet-4-6", "rate?", tools=tools))
        )
        [ready] = calls
        assert ready.call.id == "toolu_01EFn5wTNBYA8Reni8rbmnHT"
        assert ready.call.name == "get_exchange_rate"
        assert json.loads(ready.call.arguments) == {"from_currency": "USD", "to_currency": "EUR"}
        assert done.usage is not None
        history = (
            UserMessage("rate?"),
            AssistantMessage(text, tool_calls=(ready.call,)),
            ToolMessage("1 USD = 0.92 EUR", tool_call_id=ready.call.id, tool_name=ready.call.name),
        )
        text2, calls2, _ = await collect(
            adapter.chat_stream(ChatRequest("claude-sonnet-4-6", history, tools=tools))
        )
        await adapter.aclose()
    assert calls2 == []
    assert text2.startswith("The current exchange rate is **1 USD = 0.92 EUR**")
    assert _body(server, 1)["messages"][2]["content"][0]["tool_use_id"] == ready.call.id


async def test_s26_thinking_and_signature_carried_back_exactly() -> None:
    exchanges = recorded("test_anthropic_tool_with_thinking")
    turn1 = json.loads(exchanges[0].body)
    thinking = next(b for b in turn1["content"] if b["type"] == "thinking")
    async with ReplayServer(exchanges) as server:
        adapter = provider(server)
        tools = (tool("get_user_country"),)
        first = await adapter.chat(request("claude-sonnet-4-0", "largest city?", tools=tools))
        assert first.continuation is not None
        [call] = first.tool_calls
        history = (
            UserMessage("largest city?"),
            AssistantMessage(
                first.content, tool_calls=first.tool_calls, continuation=first.continuation
            ),
            ToolMessage("Mexico", tool_call_id=call.id, tool_name=call.name),
        )
        final = await adapter.chat(ChatRequest("claude-sonnet-4-0", history, tools=tools))
        await adapter.aclose()
    assert len(thinking["thinking"]) == 376
    assert len(thinking["signature"]) == 736
    assert "Mexico City" in final.content
    assert first.usage is not None
    assert (
        first.usage.prompt_tokens,
        first.usage.completion_tokens,
    ) == (
        398,
        155,
    )
    assistant = _body(server, 1)["messages"][1]["content"]
    assert assistant[0] == {
        "type": "thinking",
        "thinking": thinking["thinking"],
        "signature": thinking["signature"],
    }
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use"]
    assert assistant[2]["id"] == call.id


async def test_s26_redacted_thinking_over_two_turns() -> None:
    exchanges = recorded("test_anthropic_model_thinking_part_redacted")
    recorded_blocks = json.loads(exchanges[0].body)["content"]
    redacted = [b for b in recorded_blocks if b["type"] == "redacted_thinking"]
    async with ReplayServer(exchanges) as server:
        adapter = provider(server)
        model = "claude-sonnet-4-5-20250929"
        first = await adapter.chat(request(model, "ANTHROPIC_MAGIC_STRING"))
        history = (
            UserMessage("ANTHROPIC_MAGIC_STRING"),
            AssistantMessage(first.content, continuation=first.continuation),
            UserMessage("again"),
        )
        second = await adapter.chat(ChatRequest(model, history))
        await adapter.aclose()
    assert redacted
    assert first.content
    assert second.content
    assert "redacted_thinking" not in first.content
    sent = _body(server, 1)["messages"][1]["content"]
    assert sent[: len(redacted)] == [
        {"type": "redacted_thinking", "data": b["data"]} for b in redacted
    ]
    for reply, (p, c) in ((first, (92, 196)), (second, (168, 232))):
        assert reply.usage is not None
        assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (p, c)


async def test_s26_streamed_redacted_thinking_blocks_whole_in_start() -> None:
    async with ReplayServer(
        recorded("test_anthropic_model_thinking_part_redacted_stream")
    ) as server:
        adapter = provider(server)
        text, _, done = await collect(adapter.chat_stream(request("claude-sonnet-4-5-20250929")))
        await adapter.aclose()
    assert text.startswith("I notice that you've sent what appears to be")
    assert done.continuation is not None
    blocks = json.loads(done.continuation)["anthropic"]["thinking"]
    assert [b["type"] for b in blocks] == ["redacted_thinking", "redacted_thinking"]
    assert all(b["data"] for b in blocks)
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (92, 189)


async def test_s26_streamed_thinking_deltas_and_signature() -> None:
    async with ReplayServer(recorded("test_anthropic_model_thinking_part_stream")) as server:
        adapter = provider(server)
        text, _, done = await collect(
            adapter.chat_stream(request("claude-sonnet-4-0", effort="medium"))
        )
        await adapter.aclose()
    assert text.startswith("Here are the basic steps for safely crossing the street")
    assert done.continuation is not None
    [block] = json.loads(done.continuation)["anthropic"]["thinking"]
    assert block["thinking"].startswith(
        "This is a straightforward question about pedestrian safety"
    )
    assert block["signature"]
    assert "pedestrian safety" not in text  # thinking is not reply text
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (43, 282)
    sent = _body(server, 0)
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert "temperature" not in sent
    assert done.effort is not None
    assert done.effort.disposition == "applied"


async def test_s29_cache_creation_then_read_usage_normalised() -> None:
    async with ReplayServer(recorded("test_inline_system_prompt_cache_prefix_is_reused")) as server:
        adapter = provider(server, prompt_caching=True)
        req = ChatRequest(
            "claude-opus-4-8", (SystemMessage("long prefix " * 100), UserMessage("Say OK"))
        )
        first = await adapter.chat(req)
        second = await adapter.chat(req)
        await adapter.aclose()
    assert first.content == second.content == "OK"
    assert first.usage is not None
    assert second.usage is not None
    assert first.usage.prompt_tokens == second.usage.prompt_tokens == 1592
    assert (first.usage.cache_read_tokens, second.usage.cache_read_tokens) == (0, 1590)
    assert first.usage.completion_tokens == 4
    assert not first.usage.partial
    assert not second.usage.partial
    sent = _body(server, 0)
    assert sent["system"] == [
        {"type": "text", "text": "long prefix " * 100, "cache_control": {"type": "ephemeral"}}
    ]
    assert sent["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_s29_cache_read_and_creation_in_one_response() -> None:
    async with ReplayServer(recorded("test_anthropic_cache_real_api")) as server:
        adapter = provider(server, prompt_caching=True)
        tools = (tool("lookup", "q"),)
        first = await adapter.chat(request("claude-sonnet-4-5", "python?", tools=tools))
        second = await adapter.chat(request("claude-sonnet-4-5", "python, short", tools=tools))
        await adapter.aclose()
    assert first.usage is not None
    assert second.usage is not None
    assert (first.usage.prompt_tokens, first.usage.cache_read_tokens) == (1114, 1111)
    assert (second.usage.prompt_tokens, second.usage.cache_read_tokens) == (1532, 1111)
    assert (first.usage.completion_tokens, second.usage.completion_tokens) == (406, 33)
    assert second.content.startswith(
        "Python is a beginner-friendly, versatile programming language"
    )
    assert _body(server, 0)["tools"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_s30_web_search_server_tool_is_not_a_local_call() -> None:
    name = "test_thinking_with_native_tool_wire_contract[anthropic]"
    async with ReplayServer(recorded(name)) as server:
        adapter = provider(server, native_tools=("web_search",))
        reply = await adapter.chat(
            request("claude-sonnet-4-5", "top news?", native_tools=("web_search",), effort="high")
        )
        await adapter.aclose()
    assert reply.tool_calls == ()
    assert "ceasefire" in reply.content
    assert "Iran" in reply.content
    assert "Israel" in reply.content
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (7744, 353)
    assert reply.continuation is not None  # the thinking block
    sent = _body(server, 0)
    assert sent["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]
    assert sent["thinking"]["type"] == "enabled"


async def test_s18_structured_output_through_output_config() -> None:
    schema = {
        "type": "object",
        "properties": {"amount": {"type": "number"}},
        "required": ["amount"],
    }
    from robota.core import ResponseFormat

    async with ReplayServer(recorded("test_anthropic_native_output_decimal_strict")) as server:
        adapter = provider(server)
        reply = await adapter.chat(
            request(
                "claude-sonnet-4-5",
                "12.34",
                response_format=ResponseFormat("json_schema", schema),
            )
        )
        await adapter.aclose()
    assert json.loads(reply.content) == {"amount": 12.34}
    sent = _body(server, 0)["output_config"]["format"]
    assert sent["type"] == "json_schema"
    assert sent["schema"]["additionalProperties"] is False
    assert sent["schema"]["properties"] == {"amount": {"type": "number"}}


async def test_adaptive_thinking_leading_whitespace_block_dropped() -> None:
    async with ReplayServer(
        recorded("test_anthropic_opus_46_features[adaptive-thinking]")
    ) as server:
        adapter = provider(server)
        reply = await adapter.chat(request("claude-opus-4-6", "2+2?"))
        await adapter.aclose()
    assert reply.content == "2 + 2 = **4**"
    assert reply.continuation is not None


@pytest.mark.parametrize(
    ("name", "model", "status", "vendor_type", "switchable"),
    [
        ("test_model_name_suggestion[anthropic]", "claude-sonet-4-5", 404, "not_found_error", True),
        (
            "test_anthropic_explicit_effort_xhigh_unsupported_model_errors",
            "claude-opus-4-6",
            400,
            "invalid_request_error",
            False,
        ),
    ],
)
async def test_s42_recorded_errors(
    name: str, model: str, status: int, vendor_type: str, switchable: bool
) -> None:
    from robota import ProviderError

    async with ReplayServer(recorded(name)) as server:
        adapter = provider(server)
        with pytest.raises(ProviderError) as caught:
            await adapter.chat(request(model))
        await adapter.aclose()
    error = caught.value
    assert (error.status, error.vendor_type, error.switchable) == (status, vendor_type, switchable)
    assert error.provider == "anthropic"
