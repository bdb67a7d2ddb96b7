"""The pure wire functions of ``robota.providers.gemini._wire`` (no network), plus edge answers."""

from __future__ import annotations

import base64
import json

import pytest
from google.genai import types

import robota
from providers.gemini._replay import gemini
from providers.replay import Exchange, ReplayServer
from robota.core import AssistantMessage, ChatRequest, ToolCall, ToolMessage, UserMessage
from robota.providers.gemini._wire import gemini_contents, gemini_response

SIGNATURE = base64.b64encode(b"\x01\x02signed+/").decode()


def _response(parts: list[dict[str, object]]) -> dict[str, object]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7},
        "modelVersion": "gemini-3-flash-preview",
    }


def _sdk(data: dict[str, object]) -> types.GenerateContentResponse:
    """A response as the SDK parses it off the wire (base64 signatures become bytes)."""
    return types.GenerateContentResponse.model_validate_json(json.dumps(data))


def test_s26_signatures_go_back_on_the_same_part_kind() -> None:
    reply = gemini_response(
        _sdk(
            _response(
                [
                    {"text": "thinking about it", "thought": True, "thoughtSignature": SIGNATURE},
                    {"text": "Let me look.", "thoughtSignature": SIGNATURE},
                    {"functionCall": {"name": "lookup", "args": {"q": "x"}, "id": "c1"}},
                    {
                        "functionCall": {"name": "lookup", "args": {"q": "y"}},
                        "thoughtSignature": SIGNATURE,
                    },
                ]
            )
        ),
        effort=None,
        provider="gemini",
        model="m",
    )
    assert reply.content == "Let me look."  # the thought is not reply text
    assert [c.id for c in reply.tool_calls] == ["c1", "gemini-call-1"]
    assistant = AssistantMessage(
        reply.content, tool_calls=reply.tool_calls, continuation=reply.continuation
    )
    _, contents = gemini_contents((UserMessage("q"), assistant))
    parts = contents[1]["parts"]
    raw = base64.b64decode(SIGNATURE)
    assert parts[0] == {"text": "thinking about it", "thought": True, "thought_signature": raw}
    assert parts[1] == {"text": "Let me look.", "thought_signature": raw}
    assert parts[2] == {"function_call": {"name": "lookup", "args": {"q": "x"}, "id": "c1"}}
    assert parts[3] == {
        "function_call": {"name": "lookup", "args": {"q": "y"}},
        "thought_signature": raw,
    }


def test_s36_minted_ids_never_go_on_the_wire_and_results_are_one_user_content() -> None:
    calls = (ToolCall("gemini-call-0", "f", "{}"), ToolCall("gemini-call-1", "f", '{"a": 1}'))
    messages = (
        UserMessage("q"),
        AssistantMessage("", tool_calls=calls),
        ToolMessage("one", tool_call_id="gemini-call-0", tool_name="f"),
        ToolMessage("boom", tool_call_id="gemini-call-1", tool_name="f", is_error=True),
    )
    _, contents = gemini_contents(messages)
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"function_call": {"name": "f", "args": {}}},
            {"function_call": {"name": "f", "args": {"a": 1}}},
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [
            {"function_response": {"name": "f", "response": {"result": "one"}}},
            {"function_response": {"name": "f", "response": {"error": "boom"}}},
        ],
    }


def test_a_continuation_written_by_another_provider_is_ignored() -> None:
    foreign = json.dumps({"openai_responses": {"reasoning": []}})
    _, contents = gemini_contents((AssistantMessage("hi", continuation=foreign),))
    assert contents == [{"role": "model", "parts": [{"text": "hi"}]}]
    _, contents = gemini_contents((AssistantMessage("", continuation="not json"),))
    assert contents == []  # Gemini refuses a content without parts


async def test_a_blocked_prompt_is_an_empty_reply_with_the_block_reason() -> None:
    blocked = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7},
        "modelVersion": "gemini-2.5-flash",
    }
    with ReplayServer([Exchange.json(200, blocked)]) as server:
        provider = gemini(server)
        request = ChatRequest(model="gemini-2.5-flash", messages=(UserMessage("x"),))
        reply = await provider.chat(request)
        await provider.aclose()
    assert (reply.content, reply.finish_reason) == ("", "PROHIBITED_CONTENT")
    assert reply.usage == robota.Usage(7, 0, 7, None, partial=False, reasoning_tokens=None)


async def test_s42_an_answer_that_is_not_a_generate_content_response_is_invalid() -> None:
    with ReplayServer([Exchange.json(200, {"hello": "world"})]) as server:
        provider = gemini(server)
        request = ChatRequest(model="gemini-2.5-flash", messages=(UserMessage("x"),))
        with pytest.raises(robota.ProviderError) as caught:
            await provider.chat(request)
        await provider.aclose()
    assert caught.value.vendor_type == "invalid_response"
    assert caught.value.switchable is False


def test_s31_a_total_that_does_not_add_up_is_partial() -> None:
    reply = gemini_response(
        _sdk(
            {
                **_response([{"text": "x"}]),
                "usageMetadata": {
                    "promptTokenCount": 5,
                    "candidatesTokenCount": 2,
                    "totalTokenCount": 90,
                },
            }
        ),
        effort=None,
        provider="gemini",
        model="m",
    )
    assert reply.usage == robota.Usage(5, 2, 90, None, partial=True, reasoning_tokens=None)
