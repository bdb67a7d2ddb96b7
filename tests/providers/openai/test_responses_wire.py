"""OpenAIProvider on the Responses API, replayed from real recordings under the real SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from pydantic import BaseModel

import robota
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.core import AssistantMessage, ChatRequest, EventNames, ToolMessage, UserMessage
from robota.core._install import install_command
from robota.core.providers import ResponseDone, TextDelta, ToolCallReady, ToolSpec
from robota.providers.openai import OpenAIProvider

VENDOR = "openai-responses"


def _server(name: str) -> ReplayServer:
    return ReplayServer(load_cassette(cassette_path(VENDOR, name)))


class _ToReplay(httpx2.AsyncBaseTransport):
    """Sends requests addressed to OpenAI's own URL to the replay server instead."""

    def __init__(self, server: ReplayServer) -> None:
        self._port = server.port
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=self._port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _provider(server: ReplayServer, **options: Any) -> OpenAIProvider:
    """The provider under test, at OpenAI's own URL (vendor-default provenance, S18) but served
    by the replay server; it streams only when the recorded answers are streams."""
    options.setdefault("max_retries", 0)
    if server.exchanges:
        options.setdefault("streaming", server.exchanges[0].mode == "sse")
    if "http_client" not in options:
        client = httpx2.AsyncClient(transport=_ToReplay(server))
        _clients.append(client)
        options["http_client"] = client
    return OpenAIProvider(api_key="test", **options)


_clients: list[httpx2.AsyncClient] = []


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    """The test's HTTP clients are the caller's (never closed by the provider): close them."""
    yield
    while _clients:
        await _clients.pop().aclose()


def get_capital(country: str) -> str:
    """The capital of a country."""
    return "Potato City"


def get_location(loc_name: str) -> str:
    """Where a place is."""
    return "not found"


def get_meaning_of_life() -> str:
    """The meaning of life."""
    return "42"


def get_user_country() -> str:
    """The user's country."""
    return "Mexico"


async def test_plain_text_usage_and_the_answering_model() -> None:
    with _server("test_openai_responses_model_simple_response") as server:
        provider = _provider(server)
        result = await robota.Agent(provider=provider, model="gpt-4o").run("capital?")
        await provider.aclose()
        server.assert_all_served()
    assert result.output == "The capital of France is Paris."
    assert result.usage == robota.Usage(14, 8, 22, 0, partial=False, reasoning_tokens=0)
    assert result.model == "gpt-4o-2024-08-06"  # S30: the model that answered
    # Priced per answering model: the dated snapshot shares gpt-4o's row (2.50/10.00 per 1M).
    assert result.cost == pytest.approx((14 * 2.50 + 8 * 10.0) / 1e6)
    body = server.requests[0].json()
    assert body["store"] is False
    assert body["input"] == [{"role": "user", "content": "capital?"}]


async def test_streamed_text_arrives_as_deltas() -> None:
    with _server("test_openai_instructions_with_responses_logprobs_streaming") as server:
        provider = _provider(server)
        request = ChatRequest(model="gpt-4o-mini", messages=(UserMessage("Minas Gerais?"),))
        events = [event async for event in provider.chat_stream(request)]
        await provider.aclose()
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 9
    assert "".join(deltas) == "The capital of Minas Gerais is Belo Horizonte."
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.model == "gpt-4o-mini-2024-07-18"
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (25, 10)
    assert server.requests[0].json()["stream"] is True


async def test_s36_a_tool_round_trip_sends_the_call_id_back_untouched() -> None:
    with _server("test_openai_responses_model_simple_response_with_tool_call") as server:
        provider = _provider(server)
        agent = robota.Agent(
            provider=provider,
            model="gpt-4o",
            tools=[get_capital],
        )
        result = await agent.run("capital of PotatoLand?")
        await provider.aclose()
        server.assert_all_served()
    assert result.output == "The capital of PotatoLand is Potato City."
    call = next(m for m in result.messages if isinstance(m, AssistantMessage) and m.tool_calls)
    assert call.tool_calls[0].id == "call_YfwRsW8sUxDKipwyhWTzOXCA"
    assert json.loads(call.tool_calls[0].arguments) == {"country": "PotatoLand"}
    sent = server.requests[1].json()["input"]
    assert {
        "type": "function_call",
        "call_id": "call_YfwRsW8sUxDKipwyhWTzOXCA",
        "name": "get_capital",
        "arguments": call.tool_calls[0].arguments,
    } in sent
    assert sent[-1] == {
        "type": "function_call_output",
        "call_id": "call_YfwRsW8sUxDKipwyhWTzOXCA",
        "output": "Potato City",
    }
    assert result.usage.prompt_tokens == 40 + 67
    assert result.usage.total_tokens == 58 + 78


async def test_parallel_tool_calls_are_answered_in_call_order() -> None:
    with _server("test_openai_responses_model_retry") as server:
        provider = _provider(server)
        agent = robota.Agent(
            provider=provider,
            model="gpt-4o",
            tools=[get_location],
        )
        result = await agent.run("where?")
        await provider.aclose()
    first = next(m for m in result.messages if isinstance(m, AssistantMessage))
    assert [json.loads(c.arguments)["loc_name"] for c in first.tool_calls] == ["Londos", "London"]
    # Turn 1 reported all zeros for a reply with two calls: kept as reported, but a zero prompt
    # is not a count anyone can attest, so it is partial and the run's cost is unknown (S31).
    assert first.usage == robota.Usage(0, 0, 0, 0, partial=True, reasoning_tokens=0)
    assert result.usage.partial
    assert result.cost is None
    outputs = [
        i for i in server.requests[1].json()["input"] if i.get("type") == "function_call_output"
    ]
    assert [o["call_id"] for o in outputs] == [c.id for c in first.tool_calls]
    assert result.output.startswith('It seems "Londos" might be incorrect')


async def test_streamed_argument_fragments_are_assembled_and_linked_by_call_id() -> None:
    with _server("test_openai_responses_stream") as server:
        provider = _provider(server)
        request = ChatRequest(
            model="gpt-4o",
            messages=(UserMessage("capital of France?"),),
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
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert len(calls) == 1
    assert calls[0].id == "call_kL0PCQV7M2WMoVX8V8OtYSAL"  # the call_id, never the fc_ item id
    assert calls[0].arguments == '{"country":"France"}'
    assert isinstance(events[-1], ResponseDone)


async def test_s26_reasoning_items_are_carried_to_the_next_turn_whole() -> None:
    name = "test_openai_responses_requires_function_call_status_none"
    recorded = load_cassette(cassette_path(VENDOR, name))
    turn1 = json.loads(recorded[0].body)
    reasoning = next(i for i in turn1["output"] if i["type"] == "reasoning")
    with ReplayServer(recorded) as server:
        provider = _provider(server)
        agent = robota.Agent(provider=provider, model="gpt-5", tools=[get_meaning_of_life])
        result = await agent.run("What is the meaning of life?")
        await provider.aclose()
    assert result.output == "42"
    first = next(m for m in result.messages if isinstance(m, AssistantMessage))
    assert first.continuation is not None  # opaque to core; the provider wrote it (S26)
    second = server.requests[1].json()
    assert second["include"] == ["reasoning.encrypted_content"]
    assert second["store"] is False
    kinds = [item.get("type", item.get("role")) for item in second["input"]]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    sent = second["input"][1]
    assert sent["id"] == reasoning["id"]
    assert sent["encrypted_content"] == reasoning["encrypted_content"]  # whole, byte for byte


async def test_text_and_a_call_in_one_reply_keep_their_order_across_turns() -> None:
    with _server("test_openai_responses_phase_live") as server:
        provider = _provider(server)
        agent = robota.Agent(
            provider=provider,
            model="gpt-5.5",
            system_prompt="Briefly narrate what you are about to do before calling each tool.",
            tools=[get_capital],
        )
        result = await agent.run("What is the capital of PotatoLand?")
        await provider.aclose()
    first = next(m for m in result.messages if isinstance(m, AssistantMessage))
    assert first.content == 'I\'ll check the capital lookup tool for "PotatoLand."'
    assert first.tool_calls[0].name == "get_capital"
    assert result.output == "The capital of PotatoLand is **Potato City**."
    second = server.requests[1].json()
    assert second["instructions"].startswith("Briefly narrate")  # S35: the system head
    kinds = [item.get("type", item.get("role")) for item in second["input"]]
    assert kinds == ["user", "reasoning", "assistant", "function_call", "function_call_output"]


async def test_s29_cached_prompt_tokens_are_part_of_the_prompt_and_an_unpriced_model_costs_none() -> (
    None
):
    with _server("test_openai_responses_prompt_cache_e2e") as server:
        provider = _provider(server)
        agent = robota.Agent(provider=provider, model="gpt-5.6-sol")
        cold = await agent.run("x")
        warm = await agent.run("x")
        await provider.aclose()
    assert cold.usage == robota.Usage(4020, 5, 4025, 0, reasoning_tokens=0)
    assert warm.usage == robota.Usage(4020, 5, 4025, 4012, reasoning_tokens=0)
    assert warm.usage.uncached_prompt_tokens == 8
    assert warm.cost is None  # a model with no registered price is never guessed


async def test_reasoning_tokens_count_in_the_completion_and_required_is_sent() -> None:
    with _server("test_openai_responses_streaming_usage") as server:
        provider = _provider(server)
        request = ChatRequest(
            model="gpt-5",
            messages=(UserMessage("Calculate 100 * 200 / 3"),),
            tools=(
                ToolSpec(
                    "final_result",
                    "",
                    {"type": "object", "properties": {"result": {"type": "integer"}}},
                ),
            ),
            tool_choice="required",
        )
        response = await robota.collect_stream(provider.chat_stream(request))
        await provider.aclose()
    assert response.tool_calls[0].name == "final_result"
    assert json.loads(response.tool_calls[0].arguments) == {"result": 6666}
    assert response.usage == robota.Usage(53, 469, 522, 0, reasoning_tokens=448)
    assert response.continuation is not None
    assert "encrypted_content" in response.continuation
    assert server.requests[0].json()["tool_choice"] == "required"


async def test_a_reasoning_summary_is_not_reply_text() -> None:
    with _server("test_reasoning_summary_auto") as server:
        provider = _provider(server)
        result = await robota.Agent(provider=provider, model="gpt-5.2").run("factorial")
        await provider.aclose()
    assert "Generating factorial function" not in result.output
    assert "def factorial" in result.output
    assert result.usage.completion_tokens == 226


async def test_s30_hosted_web_search_is_sent_when_enabled_and_is_not_a_local_call() -> None:
    with _server("test_openai_responses_model_web_search_tool_with_user_location") as server:
        provider = _provider(server, native_tools=["web_search"])
        agent = robota.Agent(provider=provider, model="gpt-5")
        result = await agent.run("weather in Utrecht?", native_tools=["web_search"])
        await provider.aclose()
    assert {"type": "web_search"} in server.requests[0].json()["tools"]
    assert result.tool_calls_executed == 0
    assert result.output.startswith("Here")
    assert result.usage.cache_read_tokens == 8320


async def test_s30_a_hosted_tool_not_enabled_fails_before_any_transport() -> None:
    with ReplayServer([]) as server:
        provider = _provider(server)
        agent = robota.Agent(provider=provider, model="gpt-5")
        with pytest.raises(robota.NativeToolUnavailableError, match="not enabled"):
            await agent.run("weather?", native_tools=["web_search"])
        await provider.aclose()
        assert server.requests == []
    with pytest.raises(robota.ConfigurationError, match="not supported"):
        OpenAIProvider(api_key="k", api="chat", native_tools=["web_search"])


async def test_s18_structured_output_uses_the_native_schema_transport() -> None:
    class Amount(BaseModel):
        amount: float

    with _server("test_openai_responses_native_output_decimal_strict") as server:
        provider = _provider(server)
        result = await robota.Agent(provider=provider, model="gpt-5.4-mini").run(
            "12.34", output=Amount
        )
        await provider.aclose()
    assert result.output == Amount(amount=12.34)
    fmt = server.requests[0].json()["text"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"]["properties"]["amount"]["type"] == "number"


async def test_s18_structured_output_after_a_tool_round() -> None:
    class City(BaseModel):
        city: str
        country: str

    capabilities = robota.ModelCapabilities(structured_output="json_schema")
    assert capabilities.structured_output == "json_schema"
    with _server("test_native_output") as server:
        provider = _provider(server)
        agent = robota.Agent(provider=provider, model="gpt-4o", tools=[get_user_country])
        result = await agent.run("largest city in my country?", output=City)
        await provider.aclose()
    assert result.output == City(city="Mexico City", country="Mexico")
    assert server.requests[0].json()["text"]["format"]["strict"] is True  # strict-compatible


@pytest.mark.parametrize(
    ("model", "effort", "disposition", "sent"),
    [
        ("gpt-5", "low", "applied", "low"),
        ("gpt-5", "max", "clamped", "high"),
        ("gpt-5", "none", "model_default", None),  # below gpt-5's lowest level (minimal)
        ("gpt-5.2", "xhigh", "applied", "xhigh"),
        ("gpt-5.1", "none", "applied", "none"),
        ("gpt-4o", "low", "not_applied", None),
        ("gpt-5", "auto", "model_default", None),
    ],
)
async def test_s24_effort_is_resolved_against_the_model_table(
    model: str, effort: robota.EffortSelection, disposition: str, sent: str | None
) -> None:
    reply = json.loads(
        load_cassette(cassette_path(VENDOR, "test_openai_responses_model_simple_response"))[0].body
    )
    with ReplayServer([Exchange.json(200, reply)]) as server:
        provider = _provider(server)
        result = await robota.Agent(provider=provider, model=model).run("x", effort=effort)
        await provider.aclose()
    body = server.requests[0].json()
    assert body.get("reasoning", {}).get("effort") == sent
    assert result.effort is not None
    assert result.effort.resolution is not None
    assert result.effort.resolution.disposition == disposition
    assert result.effort.native_control_sent == (sent is not None)
    assert result.effort.resolution.source == "models-2025-12"


async def test_s25_native_payloads_reach_the_raw_surface_in_order() -> None:
    seen: list[robota.AgentEvent] = []
    with _server("test_openai_instructions_with_responses_logprobs_streaming") as server:
        provider = _provider(server)
        await robota.Agent(provider=provider, model="gpt-4o-mini").run("x", on_event=seen.append)
        await provider.aclose()
    native = [e for e in seen if e.name == EventNames.PROVIDER_NATIVE]
    assert native[0].data["direction"] == "request"
    assert native[0].data["api"] == "responses"
    assert native[0].data["body"]["model"] == "gpt-4o-mini"
    stream = [e for e in native if e.data["direction"] == "stream_event"]
    assert stream[0].data["body"].type == "response.created"
    assert [e.data["order"] for e in native] == sorted(e.data["order"] for e in native)
    assert all(e.owner_id("round") == "1" for e in native)


async def test_s23_aborting_mid_stream_interrupts_and_nothing_is_written_late() -> None:
    text = load_cassette(
        cassette_path(VENDOR, "test_openai_instructions_with_responses_logprobs_streaming")
    )[0].body.decode()
    with ReplayServer([Exchange.sse(text, chunk_delay=0.05)]) as server:
        provider = _provider(server)
        agent = robota.Agent(provider=provider, model="gpt-4o-mini")
        controller = robota.AbortController()
        stream = agent.run_stream("x", signal=controller.signal)
        async for event in stream:
            if isinstance(event, TextDelta):
                controller.abort()
        result = await stream.result()
        history = list(agent.history)
        await provider.aclose()
    assert result.status == "interrupted"
    last = history[-1]
    assert isinstance(last, AssistantMessage)
    assert last.state == "interrupted"
    assert "Belo Horizonte" not in last.content
    assert list(agent.history) == history


async def test_the_http_client_option_is_used_and_stays_the_callers() -> None:
    reply = json.loads(
        load_cassette(cassette_path(VENDOR, "test_openai_responses_model_simple_response"))[0].body
    )
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(200, json=reply)

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    provider = OpenAIProvider(
        api_key="k",
        base_url="http://vendor.test/v1",
        http_client=client,
        max_retries=0,
        streaming=False,
    )
    result = await robota.Agent(provider=provider, model="gpt-4o").run("x")
    await provider.aclose()
    assert result.output == "The capital of France is Paris."
    assert seen == ["http://vendor.test/v1/responses"]
    assert not client.is_closed  # the caller's client is not closed by the provider
    await client.aclose()


def test_s18_endpoint_provenance_is_a_fact_apart_from_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIProvider(api_key="k").endpoint_provenance() == "vendor_default"
    assert OpenAIProvider(api_key="k", base_url="http://gw/v1").endpoint_provenance() == "custom"
    capabilities = OpenAIProvider(api_key="k").capabilities()
    assert capabilities.models["gpt-5-mini"].reasoning is True
    assert "gpt-unknown" not in capabilities.models  # silence: unknown, not denied (S30)
    # A model the table does not list: OpenAI's general statement, else silence (S30).
    assert robota.model_capability(OpenAIProvider(api_key="k"), "gpt-unknown", "tools") is True
    assert robota.model_capability(OpenAIProvider(api_key="k"), "gpt-unknown", "reasoning") is None


def test_a_missing_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(robota.ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIProvider()


async def test_model_strings_build_the_openai_provider_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with _server("test_openai_instructions_with_responses_logprobs_streaming") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "from-env")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/v1")
        async with robota.Agent(model="openai:gpt-4o-mini") as agent:
            result = await agent.run("capital?")
    assert result.output == "The capital of Minas Gerais is Belo Horizonte."
    assert server.requests[0].headers["authorization"] == "Bearer from-env"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )


def test_importing_robota_and_the_provider_package_does_not_load_the_sdk() -> None:
    done = _python(
        "import sys, robota, robota.providers.openai, robota.providers.openai_compatible; print('openai' in sys.modules)"
    )
    assert done.stdout.strip() == "False", done.stderr


def test_a_missing_sdk_says_the_exact_install_command() -> None:
    done = _python(
        "import sys; sys.modules['openai'] = None\n"
        "from robota.providers.openai import OpenAIProvider\n"
        "try:\n    OpenAIProvider(api_key='k')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    assert "ConfigurationError" in done.stdout
    assert install_command("openai") in done.stdout


def test_s13_the_model_table_is_registered_and_source_dated() -> None:
    import robota.providers.openai._models as table

    assert robota.get_model_context_window("gpt-5-mini", provider="openai") == 400_000
    metadata = robota.get_model_metadata("gpt-4o-2024-08-06", provider="openai")
    assert metadata is not None
    assert metadata.max_output_tokens == 16_384
    pricing = robota.get_model_pricing("gpt-5-mini", provider="openai")
    assert pricing is not None
    assert pricing.cache_read_per_million == 0.025
    assert "read 2025-12" in (table.__doc__ or "")
    assert isinstance(ToolMessage, type)
