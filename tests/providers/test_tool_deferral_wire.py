"""S19 on the wire: the tools a vendor receives are exactly the offered ones, on every adapter.

Deferral is a function tool over a catalog core owns, so it works the same on providers with no
native deferral. Each adapter runs under its real SDK against the local replay server: the model
searches in round 1, calls the tool it found in round 2, and answers in round 3. The request
bodies the server received show the withheld schemas absent (not merely marked), the loaded one
present from round 2 on, and the whole tool payload at least 90% smaller than with deferral off.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

import robota
from providers.openai._wire import chat_provider, completion
from providers.replay import Exchange, ReplayServer
from robota import TOOL_SEARCH_NAME
from robota.providers.anthropic import AnthropicProvider
from robota.providers.gemini import GeminiProvider

SEARCH_ARGS = {"query": "select:invoice_lookup_9"}
CALL_ARGS = {"record_id": "I-1"}


def tools() -> list[robota.Tool]:
    made: list[robota.Tool] = []
    for index in range(200):

        def body(record_id: str, limit: int = 10) -> str:
            return f"{record_id} {limit}"

        body.__doc__ = f"""Look up invoice records in ledger {index}.

        Args:
            record_id: The invoice identifier exactly as printed on the document.
            limit: How many related invoices to return, newest first.
        """
        made.append(robota.tool(body, name=f"invoice_lookup_{index}", defer=index > 0))
    return made


def _openai(step: int) -> Exchange:
    if step == 0:
        return Exchange.json(200, completion("done"))
    name, args = (TOOL_SEARCH_NAME, SEARCH_ARGS) if step == 1 else ("invoice_lookup_9", CALL_ARGS)
    call = {
        "id": f"call_{step}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return Exchange.json(200, completion(None, tool_calls=[call], finish_reason="tool_calls"))


def _anthropic(step: int) -> Exchange:
    content: list[dict[str, Any]]
    if step == 0:
        content, stop = [{"type": "text", "text": "done"}], "end_turn"
    else:
        name, args = (
            (TOOL_SEARCH_NAME, SEARCH_ARGS) if step == 1 else ("invoice_lookup_9", CALL_ARGS)
        )
        content, stop = (
            [{"type": "tool_use", "id": f"toolu_{step}", "name": name, "input": args}],
            "tool_use",
        )
    return Exchange.json(
        200,
        {
            "id": f"msg_{step}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 1},
        },
    )


def _gemini(step: int) -> Exchange:
    part: dict[str, Any]
    if step == 0:
        part = {"text": "done"}
    else:
        name, args = (
            (TOOL_SEARCH_NAME, SEARCH_ARGS) if step == 1 else ("invoice_lookup_9", CALL_ARGS)
        )
        part = {"functionCall": {"name": name, "args": args}}
    return Exchange.json(
        200,
        {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 3,
                "candidatesTokenCount": 1,
                "totalTokenCount": 4,
            },
            "modelVersion": "gemini-2.5-flash",
        },
    )


def _openai_tools(body: Mapping[str, Any]) -> list[Any]:
    return list(body.get("tools", []))


def _openai_name(tool: Mapping[str, Any]) -> str:
    return str(tool["function"]["name"])


def _gemini_tools(body: Mapping[str, Any]) -> list[Any]:
    return [d for group in body.get("tools", []) for d in group.get("functionDeclarations", [])]


VENDORS: dict[str, tuple[Any, ...]] = {
    "openai-chat": (
        lambda server: chat_provider(server, streaming=False),
        "gpt-4o",
        _openai,
        _openai_tools,
        _openai_name,
    ),
    "anthropic": (
        lambda server: AnthropicProvider(
            api_key="k", base_url=server.base_url, max_retries=0, streaming=False
        ),
        "claude-sonnet-4-5",
        _anthropic,
        lambda body: list(body.get("tools", [])),
        lambda tool: str(tool["name"]),
    ),
    "gemini": (
        lambda server: GeminiProvider(
            api_key="k", streaming=False, http_options={"base_url": server.base_url + "/"}
        ),
        "gemini-2.5-flash",
        _gemini,
        _gemini_tools,
        lambda tool: str(tool["name"]),
    ),
}


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_s19_the_wire_carries_exactly_the_offered_tools_on_every_adapter(vendor: str) -> None:
    make, model, answer, tools_of, name_of = VENDORS[vendor]
    answer_fn: Callable[[int], Exchange] = answer
    with ReplayServer([answer_fn(1), answer_fn(2), answer_fn(0)]) as server:
        provider = make(server)
        agent = robota.Agent(provider=provider, model=model, tools=tools(), tool_deferral="on")
        result = await agent.run("find invoice I-1")
        await provider.aclose()
        server.assert_all_served()
        bodies = [request.json() for request in server.requests]
    assert result.text == "done"
    names = [[name_of(tool) for tool in tools_of(body)] for body in bodies]
    assert names[0] == ["invoice_lookup_0", TOOL_SEARCH_NAME]
    assert names[1] == ["invoice_lookup_0", TOOL_SEARCH_NAME, "invoice_lookup_9"]
    answers = [m for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert answers[-1].content == "I-1 10"

    with ReplayServer([answer_fn(0)]) as server:
        provider = make(server)
        agent = robota.Agent(provider=provider, model=model, tools=tools(), tool_deferral="off")
        await agent.run("find invoice I-1")
        await provider.aclose()
        full_body = server.requests[0].json()
    full = len(json.dumps(tools_of(full_body)))
    reduced = len(json.dumps(tools_of(bodies[0])))
    assert len(tools_of(full_body)) == 200
    assert reduced <= 0.10 * full, (vendor, reduced, full)
