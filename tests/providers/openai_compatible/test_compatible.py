"""``OpenAICompatibleProvider``: claims nothing it was not told (S18, S24, S30), and tolerates
what real Chat Completions servers stream differently (the list in ``_chat.py``'s docstring).

The real ``openai`` SDK talks to the replay server; streams are hand-written in the Chat
Completions wire format, one test per tolerance.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

import robota
from providers.openai._wire import (
    collect_into,
    compatible_provider,
    completion,
    restreamed,
    sse,
    sse_text,
)
from providers.replay import Exchange, ReplayServer
from robota import (
    ChatRequest,
    ModelCapabilities,
    ProviderCapabilities,
    ResponseDone,
    TextDelta,
    ToolCall,
    ToolCallReady,
    Usage,
    UserMessage,
)
from robota.providers.openai_compatible import OpenAICompatibleProvider

MODEL = "local-model"


class City(pydantic.BaseModel):
    name: str
    population: int


CITY_JSON = '{"name": "Oslo", "population": 700000}'


def _chunk(delta: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with a single choice (``delta``), plus top-level fields."""
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": None}
    if "finish_reason" in fields:
        choice["finish_reason"] = fields.pop("finish_reason")
    body: dict[str, Any] = {
        "id": "chatcmpl-local",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [choice],
    }
    body.update(fields)
    return body


def _fragment(index: int | None, **fields: Any) -> dict[str, Any]:
    call: dict[str, Any] = {} if index is None else {"index": index}
    function = {k: fields.pop(k) for k in ("name", "arguments") if k in fields}
    call.update(fields)
    if function:
        call["function"] = function
    return call


USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}


async def _stream(script: list[Exchange], **options: Any) -> tuple[list[Any], ReplayServer]:
    async with ReplayServer(script) as server:
        provider = compatible_provider(server, **options)
        try:
            events = [
                event
                async for event in provider.chat_stream(ChatRequest(MODEL, [UserMessage("hi")]))
            ]
        finally:
            await provider.aclose()
        server.assert_all_served()
    return events, server


def _text(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def _calls(events: list[Any]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallReady)]


def _done(events: list[Any]) -> ResponseDone:
    assert [type(e) for e in events].count(ResponseDone) == 1
    done = events[-1]
    assert isinstance(done, ResponseDone)
    return done


# --------------------------------------------------------------------------------------------
# What the provider claims
# --------------------------------------------------------------------------------------------


async def test_s18_endpoint_provenance_is_custom_and_no_table_is_published() -> None:
    async with ReplayServer([]) as server:
        provider = compatible_provider(server)
        assert provider.endpoint_provenance() == "custom"
        assert provider.capabilities() is None  # S30: silence, not denial
        assert robota.model_capabilities(provider, MODEL) is None
        assert provider.name == "openai-compatible"
        await provider.aclose()


async def test_s18_without_a_table_the_structured_request_is_sent_unchanged() -> None:
    reply = restreamed(Exchange.json(200, completion(CITY_JSON, model=MODEL)))
    async with ReplayServer([reply]) as server:
        provider = compatible_provider(server)
        agent = robota.Agent(provider=provider, model=MODEL, system_prompt="Be brief.")
        result = await agent.run("Largest city in Norway?", output=City)
        await provider.aclose()
    assert result.output == City(name="Oslo", population=700_000)
    body = server.requests[0].json()
    # No table: the loop neither picks a transport nor states the schema as an instruction
    # (that would treat silence as a stated absence of a schema parameter).
    assert "response_format" not in body
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Largest city in Norway?"},
    ]


def _table(transport: Any) -> ProviderCapabilities:
    return ProviderCapabilities(models={MODEL: ModelCapabilities(structured_output=transport)})


async def test_s18_a_declared_absence_states_the_schema_as_a_system_instruction() -> None:
    reply = restreamed(Exchange.json(200, completion(CITY_JSON, model=MODEL)))
    async with ReplayServer([reply]) as server:
        provider = compatible_provider(server, capabilities=_table("none"))
        agent = robota.Agent(provider=provider, model=MODEL, system_prompt="Be brief.")
        result = await agent.run("Largest city in Norway?", output=City)
        await provider.aclose()
    assert result.output == City(name="Oslo", population=700_000)
    body = server.requests[0].json()
    assert "response_format" not in body
    system = body["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("Be brief.\n\nReply with only a JSON value")
    instruction = system["content"].split("\n", 3)[-1]
    assert json.loads(instruction) == robota.schema_from_type(City)
    assert agent.history[0].content == "Be brief."  # the instruction never enters history


async def test_s18_a_declared_schema_parameter_is_used_as_given_and_not_strict() -> None:
    reply = restreamed(Exchange.json(200, completion(CITY_JSON, model=MODEL)))
    async with ReplayServer([reply]) as server:
        provider = compatible_provider(server, capabilities=_table("json_schema"))
        result = await robota.Agent(provider=provider, model=MODEL).run("x", output=City)
        await provider.aclose()
    assert result.output == City(name="Oslo", population=700_000)
    response_format = server.requests[0].json()["response_format"]
    assert response_format == {
        "type": "json_schema",
        "json_schema": {
            "name": "City",
            "schema": robota.schema_from_type(City),
            "strict": False,  # strict mode is OpenAI's guarantee, not a compatible server's
        },
    }


async def test_s18_declared_json_mode_sends_json_object() -> None:
    reply = restreamed(Exchange.json(200, completion(CITY_JSON, model=MODEL)))
    async with ReplayServer([reply]) as server:
        provider = compatible_provider(server, capabilities=_table("json_mode"))
        await robota.Agent(provider=provider, model=MODEL).run("x", output=City)
        await provider.aclose()
    body = server.requests[0].json()
    assert body["response_format"] == {"type": "json_object"}
    assert "Reply with only a JSON value" in body["messages"][0]["content"]


async def test_s13_declared_model_metadata_is_registered_under_the_provider_name() -> None:
    name = "compatible-metadata-test"
    async with ReplayServer([]) as server:
        provider = compatible_provider(
            server,
            name=name,
            models=[robota.ModelMetadata("meta-model", 32_768, max_output_tokens=4_096)],
        )
        await provider.aclose()
    try:
        assert robota.get_model_context_window("meta-model", provider=name) == 32_768
        metadata = robota.get_model_metadata("meta-model", provider=name)
        assert metadata is not None
        assert metadata.max_output_tokens == 4_096
    finally:
        robota.unregister_model_metadata("meta-model", provider=name)


async def test_s30_two_named_instances_coexist_in_one_agent() -> None:
    a_reply = restreamed(Exchange.json(200, completion("from a", model="m")))
    b_reply = restreamed(Exchange.json(200, completion("from b", model="m")))
    async with ReplayServer([a_reply]) as server_a, ReplayServer([b_reply]) as server_b:
        a = compatible_provider(server_a, name="a")
        b = compatible_provider(server_b, name="b")
        agent = robota.Agent(providers=[a, b], model="a:m")
        first = await agent.run("hi")
        agent.set_model("b:m")
        second = await agent.run("hi again")
        await a.aclose()
        await b.aclose()
        server_a.assert_all_served()
        server_b.assert_all_served()
    assert (first.text, second.text) == ("from a", "from b")
    assert server_a.requests[0].json()["model"] == "m"  # the prefix only chooses the provider
    assert server_b.requests[0].json()["model"] == "m"


async def test_openai_api_key_in_the_environment_is_not_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    reply = Exchange.json(200, completion("ok", model=MODEL))
    async with ReplayServer([reply, reply]) as server:
        anonymous = compatible_provider(server)
        keyed = compatible_provider(server, api_key="local-key", headers={"x-tenant": "t1"})
        await anonymous.chat(ChatRequest(MODEL, [UserMessage("hi")]))
        await keyed.chat(ChatRequest(MODEL, [UserMessage("hi")]))
        await anonymous.aclose()
        await keyed.aclose()
    for sent in server.requests:
        assert "sk-real-openai-key" not in json.dumps(sent.headers)
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"
    assert server.requests[1].headers["authorization"] == "Bearer local-key"
    assert server.requests[1].headers["x-tenant"] == "t1"


async def test_output_limit_uses_max_tokens_by_default() -> None:
    reply = Exchange.json(200, completion("ok", model=MODEL))
    async with ReplayServer([reply, reply]) as server:
        default = compatible_provider(server)
        modern = compatible_provider(server, max_tokens_field="max_completion_tokens")
        request = ChatRequest(MODEL, [UserMessage("hi")], max_output_tokens=50)
        await default.chat(request)
        await modern.chat(request)
        await default.aclose()
        await modern.aclose()
    assert server.requests[0].json()["max_tokens"] == 50
    assert "max_completion_tokens" not in server.requests[0].json()
    assert server.requests[1].json()["max_completion_tokens"] == 50


async def test_s24_effort_is_not_sent_unless_the_model_declares_levels() -> None:
    reply = restreamed(Exchange.json(200, completion("ok", model=MODEL)))
    async with ReplayServer([reply]) as server:
        provider = compatible_provider(server)
        result = await robota.Agent(provider=provider, model=MODEL).run("hi", effort="high")
        await provider.aclose()
    assert "reasoning_effort" not in server.requests[0].json()
    assert result.effort is not None
    assert result.effort.native_control_sent is False
    assert result.effort.dispatched is True


async def test_s24_declared_effort_levels_send_reasoning_effort() -> None:
    reply = restreamed(Exchange.json(200, completion("ok", model=MODEL)))
    async with ReplayServer([reply]) as server:
        provider = compatible_provider(server, effort_levels={MODEL: ("low", "medium", "high")})
        result = await robota.Agent(provider=provider, model=MODEL).run("hi", effort="high")
        await provider.aclose()
    assert server.requests[0].json()["reasoning_effort"] == "high"
    assert result.effort is not None
    assert result.effort.native_control_sent is True


async def test_s24_auto_effort_sends_nothing_even_with_declared_levels() -> None:
    reply = restreamed(Exchange.json(200, completion("ok", model=MODEL)))
    async with ReplayServer([reply]) as server:
        provider = compatible_provider(server, effort_levels={MODEL: ("low", "high")})
        result = await robota.Agent(provider=provider, model=MODEL).run("hi")
        await provider.aclose()
    assert "reasoning_effort" not in server.requests[0].json()
    assert result.effort is not None
    assert result.effort.native_control_sent is False


# --------------------------------------------------------------------------------------------
# Stream tolerances (one test per item of _chat.py's list)
# --------------------------------------------------------------------------------------------


async def test_s31_usage_missing_from_a_stream_is_unknown_never_zero() -> None:
    stream = sse([_chunk({"role": "assistant", "content": "Hi"}), _chunk(finish_reason="stop")])
    events, server = await _stream([stream], stream_usage=False)
    assert "stream_options" not in server.requests[0].json()
    assert _text(events) == "Hi"
    assert _done(events).usage is None


async def test_s31_a_run_without_reported_usage_has_partial_usage() -> None:
    stream = sse([_chunk({"role": "assistant", "content": "Hi"}), _chunk(finish_reason="stop")])
    async with ReplayServer([stream]) as server:
        provider = compatible_provider(server)
        result = await robota.Agent(provider=provider, model=MODEL).run("hi")
        await provider.aclose()
    assert result.text == "Hi"
    assert result.usage.partial is True  # unknown counts, not a consistent zero


async def test_usage_on_the_last_chunk_with_choices() -> None:
    stream = sse(
        [
            _chunk({"role": "assistant", "content": "Hello"}),
            _chunk({"content": " there"}, finish_reason="stop", usage=USAGE),
        ]
    )
    events, _ = await _stream([stream])
    assert _text(events) == "Hello there"
    done = _done(events)
    assert done.usage == Usage(12, 5, 17)
    assert done.finish_reason == "stop"


async def test_usage_on_a_choiceless_chunk_and_other_choiceless_chunks_carry_nothing() -> None:
    stream = sse(
        [
            _chunk({"role": "assistant", "content": "A"}),
            {**_chunk(), "choices": []},  # no usage, no content
            _chunk({"content": "B"}, finish_reason="stop"),
            {**_chunk(), "choices": [], "usage": USAGE},
            {**_chunk(), "choices": [], "moderation": {"flagged": False}},
        ]
    )
    events, _ = await _stream([stream])
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["A", "B"]
    assert _done(events).usage == Usage(12, 5, 17)


async def test_sse_comment_lines_carry_no_content() -> None:
    stream = sse(
        [
            ": PROCESSING\n\n",
            _chunk({"role": "assistant", "content": "ok"}),
            ": keep-alive\n\n",
            _chunk(finish_reason="stop", usage=USAGE),
        ]
    )
    events, _ = await _stream([stream])
    assert _text(events) == "ok"
    assert _done(events).usage == Usage(12, 5, 17)


async def test_tool_call_fragments_repeating_id_and_name_make_one_call() -> None:
    pieces = ['{"ci', 'ty": "Pa', 'ris"}']
    stream = sse(
        [
            _chunk({"role": "assistant", "content": None}),
            *[
                _chunk(
                    {
                        "tool_calls": [
                            _fragment(
                                0, id="call_1", type="function", name="get_weather", arguments=piece
                            )
                        ]
                    }
                )
                for piece in pieces
            ],
            _chunk(finish_reason="tool_calls", usage=USAGE),
        ]
    )
    events, _ = await _stream([stream])
    assert _calls(events) == [ToolCall("call_1", "get_weather", '{"city": "Paris"}')]
    assert _text(events) == ""


async def test_tool_call_name_streamed_in_pieces() -> None:
    stream = sse(
        [
            _chunk({"tool_calls": [_fragment(0, id="call_1", name="get_", arguments="")]}),
            _chunk({"tool_calls": [_fragment(0, name="weather", arguments='{"city":')]}),
            _chunk({"tool_calls": [_fragment(0, arguments='"Oslo"}')]}),
            _chunk(finish_reason="tool_calls"),
        ]
    )
    events, _ = await _stream([stream])
    assert _calls(events) == [ToolCall("call_1", "get_weather", '{"city":"Oslo"}')]


async def test_parallel_tool_call_fragments_are_keyed_by_index() -> None:
    stream = sse(
        [
            _chunk({"tool_calls": [_fragment(0, id="a", name="first", arguments='{"x":')]}),
            _chunk({"tool_calls": [_fragment(1, id="b", name="second", arguments='{"y":')]}),
            _chunk({"tool_calls": [_fragment(0, arguments="1}")]}),
            _chunk({"tool_calls": [_fragment(1, arguments="2}")]}),
            _chunk(finish_reason="tool_calls"),
        ]
    )
    events, _ = await _stream([stream])
    assert _calls(events) == [
        ToolCall("a", "first", '{"x":1}'),
        ToolCall("b", "second", '{"y":2}'),
    ]


async def test_tool_call_fragments_without_an_index_continue_their_call() -> None:
    # Some servers omit ``index``: fragments then belong to the call their id names, and a
    # fragment with neither continues the call before it.
    stream = sse(
        [
            _chunk({"tool_calls": [_fragment(None, id="a", name="first", arguments='{"x":')]}),
            _chunk({"tool_calls": [_fragment(None, arguments="1}")]}),
            _chunk({"tool_calls": [_fragment(None, id="b", name="second", arguments="{")]}),
            _chunk({"tool_calls": [_fragment(None, id="b", name="second", arguments="}")]}),
            _chunk(finish_reason="tool_calls"),
        ]
    )
    events, _ = await _stream([stream])
    assert _calls(events) == [ToolCall("a", "first", '{"x":1}'), ToolCall("b", "second", "{}")]


async def test_s36_an_empty_streamed_call_id_is_kept_not_minted() -> None:
    stream = sse(
        [
            _chunk({"tool_calls": [_fragment(0, id="", name="get_time", arguments="{}")]}),
            _chunk(finish_reason="tool_calls"),
        ]
    )
    events, _ = await _stream([stream])
    assert _calls(events) == [ToolCall("", "get_time", "{}")]


async def test_a_call_without_arguments_has_an_empty_object() -> None:
    stream = sse(
        [_chunk({"tool_calls": [_fragment(0, id="c", name="now")]}), _chunk(finish_reason="stop")]
    )
    events, _ = await _stream([stream])
    assert _calls(events) == [ToolCall("c", "now", "{}")]


@pytest.mark.parametrize("content", [None, ""], ids=["null", "empty"])
async def test_content_null_or_empty_beside_tool_calls_is_no_text(content: str | None) -> None:
    stream = sse(
        [
            _chunk({"role": "assistant", "content": content}),
            _chunk(
                {
                    "content": content,
                    "tool_calls": [_fragment(0, id="c", name="now", arguments="{}")],
                }
            ),
            _chunk(finish_reason="tool_calls"),
        ]
    )
    events, _ = await _stream([stream])
    assert [type(e) for e in events] == [ToolCallReady, ResponseDone]


@pytest.mark.parametrize("content", [None, ""], ids=["null", "empty"])
async def test_content_null_or_empty_beside_tool_calls_in_a_complete_reply(
    content: str | None,
) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    reply = Exchange.json(200, completion(content, model=MODEL, tool_calls=[call]))
    async with ReplayServer([reply]) as server:
        provider = compatible_provider(server)
        response = await provider.chat(ChatRequest(MODEL, [UserMessage("hi")]))
        await provider.aclose()
    assert response.content == ""
    assert response.tool_calls == (ToolCall("c", "now", "{}"),)


async def test_s36_a_tool_round_trip_sends_content_null_and_the_ids_back() -> None:
    @robota.tool
    def now() -> str:
        """The time."""
        return "noon"

    first = sse(
        [
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"tool_calls": [_fragment(0, id="srv-7", name="now", arguments="")]}),
            _chunk(finish_reason="tool_calls", usage=USAGE),
        ]
    )
    second = sse([_chunk({"content": "It is noon."}, finish_reason="stop", usage=USAGE)])
    async with ReplayServer([first, second]) as server:
        provider = compatible_provider(server)
        result = await robota.Agent(provider=provider, model=MODEL, tools=[now]).run("time?")
        await provider.aclose()
    assert result.text == "It is noon."
    assert result.usage == Usage(24, 10, 34)
    messages = server.requests[1].json()["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "srv-7", "type": "function", "function": {"name": "now", "arguments": "{}"}}
        ],
    }
    assert messages[2] == {"role": "tool", "tool_call_id": "srv-7", "content": "noon"}


async def test_s42_an_error_object_inside_a_200_stream_is_a_provider_error() -> None:
    stream = sse(
        [
            ": PROCESSING\n\n",
            _chunk({"role": "assistant", "content": "Partial"}),
            {**_chunk(), "error": {"code": 503, "message": "Upstream overloaded"}},
        ]
    )
    seen: list[Any] = []
    async with ReplayServer([stream]) as server:
        provider = compatible_provider(server, name="gateway")
        with pytest.raises(robota.ProviderError) as info:
            await collect_into(provider.chat_stream(ChatRequest(MODEL, [UserMessage("hi")])), seen)
        await provider.aclose()
    error = info.value
    assert error.status == 503
    assert error.switchable is True
    assert error.provider == "gateway"
    assert "Upstream overloaded" in str(error)
    assert seen == [TextDelta("Partial")]


async def test_s39_an_error_inside_a_stream_fails_the_run_and_is_recorded() -> None:
    stream = sse([{**_chunk(), "error": {"code": 400, "message": "Token limit reached"}}])
    async with ReplayServer([stream]) as server:
        provider = compatible_provider(server)
        agent = robota.Agent(provider=provider, model=MODEL)
        with pytest.raises(robota.ProviderError, match="Token limit reached"):
            await agent.run("hi")
        await provider.aclose()
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert "Token limit reached" in last.content


async def test_a_stream_without_done_still_ends_with_one_response_done() -> None:
    stream = Exchange.sse(
        sse_text([_chunk({"content": "ok"}, finish_reason="stop", usage=USAGE)], done=False)
    )
    events, _ = await _stream([stream])
    assert _text(events) == "ok"
    assert _done(events).usage == Usage(12, 5, 17)


async def test_the_answering_model_comes_from_the_chunks() -> None:
    stream = sse([_chunk({"content": "ok"}, finish_reason="stop", model="served-as-this")])
    events, _ = await _stream([stream])
    assert _done(events).model == "served-as-this"


def test_a_missing_base_url_is_a_configuration_error() -> None:
    with pytest.raises(robota.ConfigurationError, match="base_url"):
        OpenAICompatibleProvider(base_url="")
