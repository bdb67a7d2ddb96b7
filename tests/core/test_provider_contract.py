"""S28/S30/S41 provider contract and capabilities."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import robota
from robota.core.providers import (
    ChatRequest,
    ChatResponse,
    ModelCapabilities,
    NativePayload,
    Provider,
    ProviderCapabilities,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    check_native_tools,
    collect_stream,
    model_capability,
    provider_capabilities,
    stream_response,
)
from robota.testing import ScriptedProvider


def test_s41_a_provider_must_implement_both_chat_and_chat_stream() -> None:
    class OnlyChat(Provider):
        name = "only-chat"

        async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
            return ChatResponse("x")

    with pytest.raises(TypeError, match="chat_stream"):
        OnlyChat()  # type: ignore[abstract]


class _Echo(Provider):
    name = "echo"

    def __init__(self, table: ProviderCapabilities | None = None) -> None:
        self.table = table
        self.captured: list[NativePayload] = []

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return ChatResponse(request.messages[-1].content, model="echo-1")

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        async for event in stream_response(await self.chat(request)):
            yield event

    def capabilities(self) -> ProviderCapabilities | None:
        return self.table


async def test_s28_universal_surface_and_stream_helpers_agree() -> None:
    request = ChatRequest(model="m", messages=(robota.UserMessage("hello"),))
    provider = _Echo()
    assert (await provider.chat(request)).content == "hello"
    collected = await collect_stream(provider.chat_stream(request))
    assert collected.content == "hello"
    assert collected.model == "echo-1"


async def test_s28_raw_surface_defaults_to_the_universal_one_and_reports_nothing() -> None:
    provider = _Echo()
    request = ChatRequest(model="m", messages=(robota.UserMessage("hi"),))
    captured: list[NativePayload] = []
    response = await provider.chat_raw(request, capture=captured.append)
    assert response.content == "hi"
    events = [e async for e in provider.chat_stream_raw(request, capture=captured.append)]
    assert isinstance(events[-1], ResponseDone)
    assert captured == []


async def test_stream_response_yields_text_calls_then_done() -> None:
    call = robota.ToolCall("c1", "t", "{}")
    events = [e async for e in stream_response(ChatResponse("hi", (call,), model="m"))]
    assert [type(e) for e in events] == [TextDelta, ToolCallReady, ResponseDone]


def test_s30_capabilities_are_read_through_one_function() -> None:
    table = ProviderCapabilities(default_model=ModelCapabilities(tools=True))
    assert provider_capabilities(_Echo(table)) is table
    assert provider_capabilities(_Echo(None)) is None


def test_s30_a_wrong_capabilities_type_is_reported() -> None:
    class Bad(_Echo):
        def capabilities(self) -> ProviderCapabilities | None:
            return {"tools": True}  # type: ignore[return-value]

    with pytest.raises(TypeError, match="ProviderCapabilities"):
        provider_capabilities(Bad())


def test_s30_model_table_is_asked_before_the_vendor_default() -> None:
    table = ProviderCapabilities(
        default_model=ModelCapabilities(tools=True, vision=False),
        models={"small": ModelCapabilities(tools=False)},
    )
    provider = _Echo(table)
    assert model_capability(provider, "small", "tools") is False
    assert model_capability(provider, "small", "vision") is False  # falls back to the default
    assert model_capability(provider, "big", "tools") is True


def test_s30_silence_is_unknown_never_false() -> None:
    table = ProviderCapabilities(models={"m": ModelCapabilities(tools=True)})
    assert model_capability(_Echo(table), "m", "vision") is None
    assert model_capability(_Echo(None), "m", "tools") is None


def test_s30_unknown_capability_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown model capability"):
        model_capability(_Echo(), "m", "telepathy")


def test_s30_native_tool_supported_but_not_enabled_is_refused_with_that_reason() -> None:
    table = ProviderCapabilities(native_tools_supported=frozenset({"web_search"}))
    with pytest.raises(robota.NativeToolUnavailableError, match="not enabled"):
        check_native_tools(_Echo(table), ["web_search"])
    with pytest.raises(robota.NativeToolUnavailableError, match="not supported"):
        check_native_tools(_Echo(table), ["web_fetch"])
    check_native_tools(_Echo(table), [])


def test_s30_a_provider_cannot_enable_what_it_does_not_support() -> None:
    with pytest.raises(robota.ConfigurationError, match="not supported"):
        ProviderCapabilities(native_tools_enabled=frozenset({"web_search"}))


async def test_s30_unavailable_native_tool_fails_before_any_transport() -> None:
    provider = ScriptedProvider(["never sent"])
    agent = robota.Agent(provider=provider, model="m")
    with pytest.raises(robota.NativeToolUnavailableError):
        await agent.run("search the web", native_tools=["web_search"])
    assert provider.requests == []


async def test_s30_enabled_native_tool_reaches_the_request() -> None:
    table = ProviderCapabilities(
        native_tools_supported=frozenset({"web_search"}),
        native_tools_enabled=frozenset({"web_search"}),
    )
    provider = ScriptedProvider(["found it"], capabilities=table)
    agent = robota.Agent(provider=provider, model="m")
    await agent.run("search", native_tools=["web_search"])
    assert provider.requests[0].native_tools == ("web_search",)


async def test_s30_committed_reply_names_the_model_that_actually_answered() -> None:
    from robota.testing import ScriptedTurn

    provider = ScriptedProvider([ScriptedTurn(text="hi", model="fallback-model")])
    agent = robota.Agent(provider=provider, model="asked-model")
    result = await agent.run("hello")
    assert provider.requests[0].model == "asked-model"
    assert result.model == "fallback-model"
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert last.model == "fallback-model"
