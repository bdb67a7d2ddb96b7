"""robota.testing.ScriptedProvider."""

from __future__ import annotations

import json

import pytest

import robota
from robota.core.providers import ChatRequest, ResponseDone, TextDelta, ToolCallReady
from robota.testing import ScriptedProvider, ScriptedTurn, ScriptExhaustedError


def _request(text: str = "hi") -> ChatRequest:
    return ChatRequest(model="m", messages=(robota.UserMessage(text),))


async def test_plain_forms_text_tool_calls_and_exceptions() -> None:
    provider = ScriptedProvider(["hello", [("add", {"a": 1})], ValueError("scripted failure")])
    text = [e async for e in provider.chat_stream(_request())]
    assert isinstance(text[0], TextDelta)
    assert text[0].text == "hello"
    assert isinstance(text[-1], ResponseDone)
    calls = [e async for e in provider.chat_stream(_request())]
    assert isinstance(calls[0], ToolCallReady)
    assert (calls[0].call.id, calls[0].call.name, json.loads(calls[0].call.arguments)) == (
        "call_0",
        "add",
        {"a": 1},
    )
    with pytest.raises(ValueError, match="scripted failure"):
        await provider.chat(_request())
    provider.assert_complete()


async def test_requests_are_recorded_with_messages_tools_choice_and_model() -> None:
    provider = ScriptedProvider(["ok"])
    await provider.chat(_request("question"))
    (request,) = provider.requests
    assert request.messages[-1].content == "question"
    assert (request.tools, request.tool_choice, request.model) == ((), "auto", "m")


async def test_exhausted_script_raises_a_clear_error() -> None:
    provider = ScriptedProvider([])
    with pytest.raises(ScriptExhaustedError, match="no turn left for request #1"):
        await provider.chat(_request("extra"))


def test_assert_complete_reports_unused_turns() -> None:
    with pytest.raises(AssertionError, match="2 of 2 scripted turns were never requested"):
        ScriptedProvider(["a", "b"]).assert_complete()


async def test_chunk_delay_streams_word_by_word() -> None:
    provider = ScriptedProvider(["one two  three"], chunk_delay=0.001)
    chunks = [e.text async for e in provider.chat_stream(_request()) if isinstance(e, TextDelta)]
    assert chunks == ["one ", "two  ", "three"]
    assert "".join(chunks) == "one two  three"


async def test_rich_turn_controls_usage_model_and_continuation() -> None:
    usage = robota.Usage.from_counts(prompt=11, completion=22, cache_read=5)
    provider = ScriptedProvider(
        [ScriptedTurn(text="x", usage=usage, model="other", continuation="sig")]
    )
    response = await provider.chat(_request())
    assert (response.usage, response.model, response.continuation) == (usage, "other", "sig")


def test_bad_turns_are_refused_early() -> None:
    with pytest.raises(TypeError, match="tool_name"):
        ScriptedProvider([[("only-name",)]])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="scripted turn"):
        ScriptedProvider([42])  # type: ignore[list-item]


async def test_raw_tool_call_arguments_are_passed_verbatim() -> None:
    provider = ScriptedProvider([[("t", "{broken")]])
    events = [e async for e in provider.chat_stream(_request())]
    assert isinstance(events[0], ToolCallReady)
    assert events[0].call.arguments == "{broken"


async def test_aborted_signal_stops_the_stream() -> None:
    controller = robota.AbortController()
    controller.abort()
    provider = ScriptedProvider(["never"])
    with pytest.raises(robota.AbortError):
        await provider.chat(_request(), signal=controller.signal)
    assert provider.aborted_calls == 1
