"""AnthropicProvider's construction, tables, effort (S24) and request-shaping rules."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

import robota
from providers.anthropic._helpers import message_body, provider, request, tool
from providers.replay import Exchange, ReplayServer
from robota.core import (
    AssistantMessage,
    ChatRequest,
    ConfigurationError,
    SystemMessage,
    ToolCall,
    UserMessage,
)
from robota.providers.anthropic import AnthropicProvider


def _sent(server: ReplayServer, index: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = server.requests[index].json()
    return body


def test_missing_api_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider()


def test_s30_unsupported_native_tool_refused() -> None:
    with pytest.raises(ConfigurationError, match="code_execution"):
        AnthropicProvider(api_key="k", native_tools=("code_execution",))


def test_s30_capabilities_table_and_s18_provenance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    adapter = AnthropicProvider(api_key="k", native_tools=("web_search",))
    table = adapter.capabilities()
    assert table.native_tools_enabled == frozenset({"web_search"})
    assert table.models["claude-sonnet-4-5-20250929"].structured_output == "json_schema"
    assert table.models["claude-sonnet-4-0"].structured_output == "none"
    assert table.models["claude-3-5-haiku-latest"].reasoning is False
    assert adapter.endpoint_provenance() == "vendor_default"
    custom = AnthropicProvider(api_key="k", base_url="http://127.0.0.1:1")
    assert custom.endpoint_provenance() == "custom"


def test_s04_s13_table_registered_at_import() -> None:
    assert robota.get_model_metadata("claude-sonnet-4-5", provider="anthropic").context_window == (
        200_000
    )


@pytest.mark.parametrize(
    ("model", "effort", "max_tokens", "disposition", "budget"),
    [
        ("claude-sonnet-4-5", "auto", None, "model_default", None),
        ("claude-sonnet-4-5", "none", None, "model_default", None),
        ("claude-sonnet-4-5", "low", None, "applied", "4096"),
        ("claude-sonnet-4-5", "high", None, "applied", "32768"),
        ("claude-sonnet-4-5", "max", None, "clamped", "32768"),
        ("claude-sonnet-4-5", "high", 8000, "clamped", "4096"),
        ("claude-opus-4-1", "high", None, "applied", "24576"),
        ("claude-3-5-haiku-latest", "high", None, "not_applied", None),
        ("claude-5-opus", "high", None, "not_applied", None),
    ],
)
def test_s24_effort_dispositions(
    model: str, effort: Any, max_tokens: int | None, disposition: str, budget: str | None
) -> None:
    adapter = AnthropicProvider(api_key="k")
    resolution = adapter.resolve_effort(request(model, effort=effort, max_output_tokens=max_tokens))
    assert resolution.disposition == disposition
    assert resolution.native_value == budget
    assert resolution.source == "models-2025-12"


@pytest.mark.parametrize(
    ("max_tokens", "disposition", "budget"),
    [
        (None, "clamped", "1024"),  # the unlisted default max_tokens (4096) fits only 1024
        (30_000, "applied", "24576"),  # the family's budgets, the 32k-output rows'
    ],
)
def test_s13_a_newer_claude_4_model_thinks_by_its_family(
    max_tokens: int | None, disposition: str, budget: str
) -> None:
    adapter = AnthropicProvider(api_key="k")
    resolution = adapter.resolve_effort(
        request("claude-sonnet-4-6", effort="high", max_output_tokens=max_tokens)
    )
    assert resolution.disposition == disposition
    assert resolution.native_value == budget
    assert resolution.source is not None
    assert resolution.source.startswith("family claude-4 (")


async def test_s24_no_thinking_sent_for_auto_and_temperature_kept() -> None:
    async with ReplayServer(
        [Exchange.json(200, message_body([{"type": "text", "text": "x"}]))]
    ) as server:
        adapter = provider(server)
        reply = await adapter.chat(request("claude-sonnet-4-5", temperature=0.2))
        await adapter.aclose()
    sent = _sent(server)
    assert "thinking" not in sent
    assert sent["temperature"] == 0.2
    assert sent["max_tokens"] == 16_384  # non-streamed default cap
    assert reply.effort is not None
    assert reply.effort.disposition == "model_default"


async def test_tool_choice_mapping_and_cache_breakpoints() -> None:
    bodies = [message_body([{"type": "text", "text": "x"}])] * 2
    async with ReplayServer([Exchange.json(200, b) for b in bodies]) as server:
        adapter = provider(server, prompt_caching=True)
        continuation = json.dumps(
            {"anthropic": {"thinking": [{"type": "thinking", "thinking": "t", "signature": "s"}]}}
        )
        history = (
            SystemMessage("sys"),
            UserMessage("q"),
            AssistantMessage(
                "", tool_calls=(ToolCall("toolu_1", "a", "{}"),), continuation=continuation
            ),
        )
        tools = (tool("a"), tool("b"))
        await adapter.chat(
            ChatRequest("claude-sonnet-4-5", history, tools=tools, tool_choice="required")
        )
        await adapter.chat(
            ChatRequest("claude-sonnet-4-5", history[:2], tools=tools, tool_choice="none")
        )
        await adapter.aclose()
    first, second = _sent(server, 0), _sent(server, 1)
    assert first["tool_choice"] == {"type": "any"}
    assert second["tool_choice"] == {"type": "none"}
    assert "cache_control" not in first["tools"][0]
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    last = first["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["thinking", "tool_use"]
    assert "cache_control" not in last[0]  # thinking blocks are never marked
    assert last[1]["cache_control"] == {"type": "ephemeral"}
    assert first["tools"][0]["input_schema"]["additionalProperties"] is False  # S17 policy


async def test_s26_continuation_of_another_provider_is_ignored() -> None:
    async with ReplayServer(
        [Exchange.json(200, message_body([{"type": "text", "text": "x"}]))]
    ) as server:
        adapter = provider(server)
        history = (
            UserMessage("q"),
            AssistantMessage("a", continuation='{"openai_responses": {"reasoning": []}}'),
            UserMessage("q2"),
        )
        await adapter.chat(ChatRequest("claude-sonnet-4-5", history))
        await adapter.aclose()
    assert _sent(server)["messages"][1]["content"] == [{"type": "text", "text": "a"}]


async def test_model_string_resolves_through_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    from providers.anthropic._helpers import recorded

    async with ReplayServer(recorded("test_request_stream_fallback_for_high_max_tokens")) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        async with robota.Agent(model="anthropic:claude-sonnet-4-5") as agent:
            result = await agent.run("1+1?")
    assert result.output == "2"
    assert server.requests[0].headers["authorization"] == "Bearer from-env"


def test_importing_the_package_does_not_load_the_sdk() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, robota, robota.providers.anthropic; print('anthropic' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
