"""The replay server itself: transport, script accounting, cassettes, and the real openai SDK."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx2
import openai
import pytest
from openai.types.responses import ResponseStreamEvent

from providers.replay import (
    RECORDINGS_ENV_VAR,
    UNSCRIPTED_STATUS,
    Exchange,
    ReplayServer,
    cassette_path,
    load_cassette,
    load_cassette_requests,
)

CHAT_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "ok"},
        }
    ],
}
RATE_LIMITED = {
    "error": {
        "message": "Rate limit reached for gpt-4o",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}


def _async_openai(server: ReplayServer, *, timeout: float | None = None) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key="test",
        base_url=server.base_url + "/v1",
        max_retries=0,
        timeout=openai.DEFAULT_TIMEOUT if timeout is None else timeout,
    )


def _no_server_threads() -> bool:
    names = [thread.name for thread in threading.enumerate()]
    return not [n for n in names if n.startswith("ReplayServer") or "process_request" in n]


async def _collect_types(stream: openai.AsyncStream[ResponseStreamEvent], into: list[str]) -> None:
    """Append each event's type to ``into`` (so the caller keeps what came before an error)."""
    async for event in stream:
        into.append(event.type)  # noqa: PERF401 - the partial list is the point


# --------------------------------------------------------------------------------------------
# The real openai SDK against cassettes
# --------------------------------------------------------------------------------------------


async def test_openai_chat_replays_a_recorded_json_response() -> None:
    script = load_cassette(cassette_path("openai-chat", "test_valid_response"))
    async with ReplayServer(script) as server, _async_openai(server) as client:
        completion = await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "What is the capital of France?"}]
        )
    assert completion.choices[0].message.content == "The capital of France is Paris."
    assert completion.model == "gpt-4o-2024-08-06"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (14, 7)
    server.assert_all_served()
    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == "Bearer test"
    assert sent.json()["model"] == "gpt-4o"


async def test_openai_responses_replays_two_recorded_streams_on_one_connection() -> None:
    path = cassette_path("openai-responses", "test_openai_responses_stream")
    async with ReplayServer(load_cassette(path)) as server, _async_openai(server) as client:
        first = await client.responses.create(model="gpt-4o", input="capital?", stream=True)
        deltas: list[str] = []
        call_ids: list[str] = []
        async for event in first:
            if event.type == "response.function_call_arguments.delta":
                deltas.append(event.delta)
            elif event.type == "response.output_item.done" and event.item.type == "function_call":
                call_ids.append(event.item.call_id)
        second = await client.responses.create(model="gpt-4o", input="again", stream=True)
        text = ""
        last_type = ""
        async for event in second:
            last_type = event.type
            if event.type == "response.output_text.delta":
                text += event.delta
    assert deltas == ['{"', "country", '":"', "France", '"}']
    assert call_ids == ["call_kL0PCQV7M2WMoVX8V8OtYSAL"]
    assert text == "The capital of France is Paris."
    assert last_type == "response.completed"
    server.assert_all_served()
    # Chunked SSE keeps the pooled connection reusable: both turns went over one socket.
    assert [r.connection for r in server.requests] == [0, 0]


def test_the_sync_sdk_streams_recorded_chat_chunks() -> None:
    path = cassette_path("openai-chat", "test_run_stream_sync_streams_real_model")
    with (
        ReplayServer(load_cassette(path)) as server,
        openai.OpenAI(api_key="t", base_url=server.base_url + "/v1", max_retries=0) as client,
    ):
        chunks = list(client.chat.completions.create(model="gpt-4o-mini", messages=[], stream=True))
    calls = [
        call
        for chunk in chunks
        for choice in chunk.choices
        for call in choice.delta.tool_calls or []
    ]
    assert calls[0].id == "call_ZR5UUuTt3pf61kjwAJIYdVMj"
    assert "".join(call.function.arguments or "" for call in calls if call.function) == (
        '{"country":"UK"}'
    )
    assert server.remaining == 1
    with pytest.raises(AssertionError, match="1 of 2 exchange"):
        server.assert_all_served()


async def test_a_recorded_error_cassette_reaches_the_sdk_as_its_status_error() -> None:
    script = load_cassette(cassette_path("openai-chat", "test_model_name_suggestion[openai-chat]"))
    async with ReplayServer(script) as server, _async_openai(server) as client:
        with pytest.raises(openai.NotFoundError) as caught:
            await client.chat.completions.create(model="gpt-5.2-proo", messages=[])
    assert caught.value.status_code == 404
    assert caught.value.code == "model_not_found"
    assert caught.value.type == "invalid_request_error"
    server.assert_all_served()


# --------------------------------------------------------------------------------------------
# Failure behaviours, as the openai SDK sees them
# --------------------------------------------------------------------------------------------


async def test_drop_mid_stream_surfaces_as_api_connection_error_during_iteration() -> None:
    recorded = load_cassette(cassette_path("openai-responses", "test_openai_responses_stream"))[0]
    prefix = b"".join(recorded.events()[:4]).decode()
    async with (
        ReplayServer([Exchange.drop_mid_stream(prefix)]) as server,
        _async_openai(server) as client,
    ):
        stream = await client.responses.create(model="gpt-4o", input="x", stream=True)
        seen: list[str] = []
        with pytest.raises(openai.APIConnectionError) as caught:
            await _collect_types(stream, seen)
    assert len(seen) == 4  # every whole event before the drop was delivered
    assert seen[0] == "response.created"
    assert type(caught.value) is openai.APIConnectionError  # not the timeout subclass
    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)
    assert "incomplete chunked read" in str(caught.value.__cause__)
    server.assert_all_served()


async def test_hang_surfaces_as_api_timeout_error_and_does_not_delay_shutdown() -> None:
    started = time.monotonic()
    async with (
        ReplayServer([Exchange.hang(30)]) as server,
        _async_openai(server, timeout=0.3) as client,
    ):
        with pytest.raises(openai.APITimeoutError) as caught:
            await client.chat.completions.create(model="gpt-4o", messages=[])
    assert isinstance(caught.value, openai.APIConnectionError)
    assert isinstance(caught.value.__cause__, httpx2.ReadTimeout)
    assert time.monotonic() - started < 5  # leaving the block woke the hanging handler
    server.assert_all_served()


async def test_json_429_is_a_rate_limit_error_with_the_body_and_retry_after() -> None:
    script = [Exchange.json(429, RATE_LIMITED, headers={"retry-after": "7"})]
    async with ReplayServer(script) as server, _async_openai(server) as client:
        with pytest.raises(openai.RateLimitError) as caught:
            await client.chat.completions.create(model="gpt-4o", messages=[])
    error = caught.value
    assert error.status_code == 429
    assert error.type == "requests"
    assert error.code == "rate_limit_exceeded"
    assert error.param is None
    assert error.body == RATE_LIMITED["error"]  # the SDK unwraps the "error" object
    assert error.message == "Error code: 429 - Rate limit reached for gpt-4o"
    assert error.response.headers["retry-after"] == "7"
    assert error.response.headers["content-type"] == "application/json"
    server.assert_all_served()


async def test_the_sdk_retries_onto_the_next_scripted_exchange() -> None:
    script = [
        Exchange.json(429, RATE_LIMITED, headers={"retry-after-ms": "10"}),
        Exchange.json(200, CHAT_COMPLETION),
    ]
    async with (
        ReplayServer(script) as server,
        openai.AsyncOpenAI(api_key="t", base_url=server.base_url + "/v1", max_retries=1) as client,
    ):
        completion = await client.chat.completions.create(model="gpt-4o", messages=[])
    assert completion.choices[0].message.content == "ok"
    server.assert_all_served()
    assert [r.headers.get("x-stainless-retry-count") for r in server.requests] == ["0", "1"]


async def test_a_request_past_the_script_gets_599_and_fails_the_accounting() -> None:
    async with ReplayServer([]) as server, _async_openai(server) as client:
        with pytest.raises(openai.InternalServerError) as caught:
            await client.chat.completions.create(model="gpt-4o", messages=[])
    assert caught.value.status_code == UNSCRIPTED_STATUS
    assert caught.value.code == "unscripted"
    with pytest.raises(AssertionError, match=r"unscripted request #1 POST /v1/chat/completions"):
        server.assert_all_served()


# --------------------------------------------------------------------------------------------
# Transport, with a plain HTTP client
# --------------------------------------------------------------------------------------------


def test_sync_use_records_requests_and_keeps_the_connection_alive() -> None:
    script = [Exchange.json(200, {"n": 1}), Exchange.json(201, {"n": 2}, headers={"x-a": "b"})]
    with ReplayServer(script) as server, httpx2.Client(trust_env=False) as client:
        first = client.post(server.url("v1/things?alt=sse"), json={"q": 1})
        second = client.get(server.url("/other"), headers={"X-Mixed-Case": "Yes"})
    assert (first.status_code, first.json()) == (200, {"n": 1})
    assert first.headers["content-length"] == str(len(json.dumps({"n": 1})))
    assert (second.status_code, second.headers["x-a"]) == (201, "b")
    server.assert_all_served()
    posted, got = server.requests
    assert (posted.method, posted.path, posted.path_only, posted.query) == (
        "POST",
        "/v1/things?alt=sse",
        "/v1/things",
        "alt=sse",
    )
    assert posted.json() == {"q": 1}
    assert (got.method, got.body, got.headers["x-mixed-case"]) == ("GET", b"", "Yes")
    assert posted.connection == got.connection  # keep-alive


def test_a_chunked_request_body_is_read_whole() -> None:
    def pieces() -> list[bytes]:
        return [b'{"a": ', b"1}"]

    with ReplayServer([Exchange.json(200, {})]) as server, httpx2.Client(trust_env=False) as client:
        client.post(server.url("/c"), content=iter(pieces()))
    [received] = server.requests
    assert received.headers["transfer-encoding"] == "chunked"
    assert received.json() == {"a": 1}


def test_sse_events_arrive_one_by_one() -> None:
    text = "data: one\n\ndata: two\n\ndata: three\n\n"
    arrivals: list[tuple[float, bytes]] = []
    with (
        ReplayServer([Exchange.sse(text, chunk_delay=0.15)]) as server,
        httpx2.Client(trust_env=False) as client,
        client.stream("POST", server.url("/s")) as response,
    ):
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["transfer-encoding"] == "chunked"
        arrivals.extend((time.monotonic(), chunk) for chunk in response.iter_raw() if chunk)
    assert b"".join(chunk for _, chunk in arrivals) == text.encode()
    assert len(arrivals) == 3
    assert arrivals[2][0] - arrivals[0][0] >= 0.25  # the client saw the first event early


def test_reset_mid_stream_sends_its_events_then_a_tcp_reset() -> None:
    """Unlike ``drop_mid_stream`` (an orderly close), the client's read fails with ECONNRESET."""
    text = "data: one\n\ndata: two\n\n"
    received: list[bytes] = []
    with (
        ReplayServer([Exchange.reset_mid_stream(text)]) as server,
        httpx2.Client(trust_env=False) as client,
        client.stream("POST", server.url("/s")) as response,
    ):
        assert response.status_code == 200
        with pytest.raises(httpx2.ReadError) as caught:
            received.extend(response.iter_raw())
        server.assert_all_served()
    assert b"".join(received) == text.encode()  # every event sent before the reset arrived
    chain: list[BaseException] = []
    error: BaseException | None = caught.value
    while error is not None:
        chain.append(error)
        error = error.__cause__ or error.__context__
    assert any(isinstance(link, ConnectionResetError) for link in chain), chain


def test_abort_resets_the_connection_before_any_answer() -> None:
    with (
        ReplayServer([Exchange.abort()]) as server,
        httpx2.Client(trust_env=False) as client,
    ):
        with pytest.raises(httpx2.TransportError) as caught:
            client.post(server.url("/s"), content=b"{}")
        server.assert_all_served()
    assert "reset" in str(caught.value).lower()


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_delayed_exchange_holds_its_first_byte(where: str) -> None:
    exchange = Exchange.sse("data: one\n\n")
    delayed = exchange.delayed(**{where: 0.3})
    with ReplayServer([delayed]) as server, httpx2.Client(trust_env=False) as client:
        started = time.monotonic()
        with client.stream("POST", server.url("/s")) as response:
            headers_at = time.monotonic() - started
            body = response.read()
        done_at = time.monotonic() - started
    assert body == b"data: one\n\n"
    assert done_at >= 0.3
    # Headers come late only when the status line was held; a stalled body sends them at once.
    assert (headers_at >= 0.3) is (where == "headers")


def test_leaving_the_block_with_an_idle_pooled_connection_joins_every_thread() -> None:
    before = set(threading.enumerate())
    client = httpx2.Client(trust_env=False)
    try:
        with ReplayServer([Exchange.json(200, {}), Exchange.hang(60)]) as server:
            client.get(server.url("/"))  # the pool keeps this connection open
            started = time.monotonic()
        assert time.monotonic() - started < 2
        assert set(threading.enumerate()) <= before
        assert _no_server_threads()
    finally:
        client.close()
    with pytest.raises(AssertionError, match="1 of 2 exchange"):
        server.assert_all_served()


def test_a_child_process_and_asyncio_run_can_both_use_the_server() -> None:
    script = [Exchange.json(200, {"who": "child"}), Exchange.json(200, CHAT_COMPLETION)]
    child = textwrap.dedent(
        """
        import sys, urllib.request
        handler = urllib.request.ProxyHandler({})
        print(urllib.request.build_opener(handler).open(sys.argv[1], timeout=10).read().decode())
        """
    )

    async def one_completion(base_url: str) -> str | None:
        async with openai.AsyncOpenAI(api_key="t", base_url=base_url, max_retries=0) as client:
            done = await client.chat.completions.create(model="gpt-4o", messages=[])
        return done.choices[0].message.content

    with ReplayServer(script) as server:
        result = subprocess.run(
            [sys.executable, "-c", child, server.url("/from-child")],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        content = asyncio.run(one_completion(server.base_url + "/v1"))
    assert json.loads(result.stdout) == {"who": "child"}
    assert content == "ok"
    server.assert_all_served()


# --------------------------------------------------------------------------------------------
# Exchanges and cassettes
# --------------------------------------------------------------------------------------------


def test_exchange_constructors() -> None:
    sent = Exchange.json(400, {"e": 1}, headers={"Content-Type": "application/problem+json"})
    assert sent.headers == (("Content-Type", "application/problem+json"),)
    assert sent.body == b'{"e": 1}'
    stream = Exchange.sse("data: a\r\n\r\ndata: b\r\n\r\n")
    assert (stream.mode, stream.headers) == ("sse", (("content-type", "text/event-stream"),))
    assert stream.events() == (b"data: a\r\n\r\n", b"data: b\r\n\r\n")
    assert Exchange.drop_mid_stream("data: a\n\n").mode == "drop"
    assert Exchange.hang(1.5).hang_seconds == 1.5


def test_load_cassette_replays_json_as_dumped_and_sse_unchanged() -> None:
    import yaml  # type: ignore[import-untyped,unused-ignore]

    path = cassette_path("gemini", "test_google_model_cached_content")
    recorded = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    script = load_cassette(path)
    assert len(script) == len(recorded) == 4
    for exchange, interaction in zip(script, recorded, strict=True):
        assert exchange.mode == "complete"
        assert exchange.body == json.dumps(interaction["response"]["parsed_body"]).encode()
        names = {name for name, _ in exchange.headers}
        assert "content-type" in names
        assert not {"content-length", "transfer-encoding", "connection"} & names
    vary = [value for name, value in script[-1].headers if name == "vary"]
    assert vary == ["Origin", "X-Origin", "Referer"]  # a repeated header keeps every value

    stream_path = cassette_path("gemini", "test_google_model_stream.yaml")
    [stream] = load_cassette(stream_path)
    raw = yaml.safe_load(stream_path.read_text(encoding="utf-8"))
    assert stream.mode == "sse"
    assert stream.body.decode() == raw["interactions"][0]["response"]["body"]["string"]
    assert len(stream.events()) == 3  # Gemini's CRLF CRLF separators


def test_recorded_requests_show_what_the_vendor_accepted() -> None:
    requests = load_cassette_requests(cassette_path("openai-responses", "test_native_output"))
    assert [(r.method, r.path) for r in requests] == [("POST", "/v1/responses")] * 2
    assert requests[0].uri == "https://api.openai.com/v1/responses"
    assert requests[0].headers["content-type"] == ("application/json",)
    kinds = [item.get("type") for item in requests[1].json()["input"]]
    assert "function_call_output" in kinds

    deleted = load_cassette_requests(cassette_path("gemini", "test_google_model_cached_content"))
    assert (deleted[-1].method, deleted[-1].body) == ("DELETE", "")


def test_missing_cassettes_and_directories_fail_clearly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(FileNotFoundError, match=r"no cassette .*nope\.yaml; openai-chat/ holds"):
        cassette_path("openai-chat", "nope")
    monkeypatch.setenv(RECORDINGS_ENV_VAR, str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError, match=RECORDINGS_ENV_VAR):
        cassette_path("openai-chat", "test_valid_response")
