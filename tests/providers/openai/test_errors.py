"""S42: how ``openai`` SDK failures become robota errors — one test per row of the table in
``_errors.py`` — on both OpenAI APIs, both surfaces, and through ``Agent.run`` (S39).

Every failure is produced for real: the SDK talks to the replay server, which answers with an
error body in OpenAI's documented format (``{"error": {"message", "type", "param", "code"}}``),
holds the request past the client's timeout, or drops the connection in the middle of a stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import openai
import pytest

import robota
from providers.openai._wire import collect_into, completion, sse_text
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota import ChatRequest, TextDelta, UserMessage
from robota.providers.openai import OpenAIProvider

API = Literal["responses", "chat"]
MODEL = "gpt-4o"
APIS = pytest.mark.parametrize("api", ["responses", "chat"])
SURFACES = pytest.mark.parametrize("surface", ["chat", "stream"])


def _provider(server: ReplayServer, api: API, **options: Any) -> OpenAIProvider:
    options.setdefault("max_retries", 0)
    return OpenAIProvider(api=api, api_key="test", base_url=server.base_url + "/v1", **options)


def _request() -> ChatRequest:
    return ChatRequest(MODEL, [UserMessage("hi")])


async def _call(provider: OpenAIProvider, surface: str) -> list[Any]:
    if surface == "chat":
        return [await provider.chat(_request())]
    return [event async for event in provider.chat_stream(_request())]


def _check_translated(error: robota.ProviderError) -> None:
    """No SDK exception type leaks: the SDK's exception is only the cause."""
    assert not isinstance(error, openai.OpenAIError)
    assert isinstance(error.__cause__, openai.OpenAIError)
    assert error.provider == "openai"
    assert error.model == MODEL


async def _fail(
    script: list[Exchange], *, api: API, surface: str, **options: Any
) -> robota.ProviderError:
    async with ReplayServer(script) as server:
        provider = _provider(server, api, **options)
        try:
            with pytest.raises(robota.ProviderError) as info:
                await _call(provider, surface)
        finally:
            await provider.aclose()
        server.assert_all_served()
    return info.value


def _error(message: str, type_: str | None, code: str | None, param: str | None = None) -> Any:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


async def _status(
    status: int,
    body: Any,
    *,
    api: API,
    surface: str,
    headers: dict[str, str] | None = None,
) -> robota.ProviderError:
    error = await _fail([Exchange.json(status, body, headers)], api=api, surface=surface)
    _check_translated(error)
    assert isinstance(error.__cause__, openai.APIStatusError)
    assert error.status == status
    return error


# --------------------------------------------------------------------------------------------
# One test per row
# --------------------------------------------------------------------------------------------

INVALID = _error(
    "Invalid 'temperature': decimal below minimum value.",
    "invalid_request_error",
    "decimal_below_min_value",
    "temperature",
)
MODEL_NOT_FOUND = _error(
    "The model `gpt-4o` does not exist or you do not have access to it.",
    "invalid_request_error",
    "model_not_found",
)
BAD_KEY = _error("Incorrect API key provided: test.", "invalid_request_error", "invalid_api_key")
FORBIDDEN = _error(
    "Country, region, or territory not supported",
    "request_forbidden",
    "unsupported_country_region_territory",
)
BAD_URL = _error("Invalid URL (POST /v1/chat/completions)", "invalid_request_error", None)
CONFLICT = _error("Another request is modifying this resource.", "conflict_error", None)
UNPROCESSABLE = _error("The request could not be processed.", "invalid_request_error", None)
RATE_LIMITED = _error(
    "Rate limit reached for gpt-4o in organization org-test on requests per min (RPM): "
    "Limit 3, Used 3, Requested 1.",
    "requests",
    "rate_limit_exceeded",
)
NO_QUOTA = _error(
    "You exceeded your current quota, please check your plan and billing details.",
    "insufficient_quota",
    "insufficient_quota",
)
SERVER_ERROR = _error(
    "The server had an error while processing your request. Sorry about that!",
    "server_error",
    None,
)
OVERLOADED = _error(
    "The engine is currently overloaded, please try again later.", "server_error", None
)


@APIS
@SURFACES
async def test_s42_invalid_request_400_is_not_switchable(api: API, surface: str) -> None:
    error = await _status(400, INVALID, api=api, surface=surface)
    assert type(error) is robota.ProviderError
    assert error.vendor_type == "invalid_request_error"
    assert error.code == "invalid_request"
    assert error.switchable is False
    assert error.recoverable is False
    assert "decimal below minimum value" in str(error)


@APIS
@SURFACES
@pytest.mark.parametrize("status", [400, 404])
async def test_s42_model_not_found_is_switchable(api: API, surface: str, status: int) -> None:
    # The Responses API answers 400 for an unknown model, Chat Completions 404 (recorded).
    error = await _status(status, MODEL_NOT_FOUND, api=api, surface=surface)
    assert type(error) is robota.ProviderError
    assert error.vendor_type == "invalid_request_error"
    assert error.code == "model_not_found"
    assert error.switchable is True


@APIS
@SURFACES
@pytest.mark.parametrize(("status", "body"), [(401, BAD_KEY), (403, FORBIDDEN)])
async def test_s42_authentication_401_403_is_not_switchable(
    api: API, surface: str, status: int, body: Any
) -> None:
    error = await _status(status, body, api=api, surface=surface)
    assert isinstance(error, robota.AuthenticationError)
    assert error.vendor_type == body["error"]["type"]
    assert error.switchable is False
    assert error.recoverable is False


@APIS
@SURFACES
async def test_s42_not_found_404_other_is_switchable(api: API, surface: str) -> None:
    error = await _status(404, BAD_URL, api=api, surface=surface)
    assert type(error) is robota.ProviderError
    assert error.code == "not_found"
    assert error.vendor_type == "invalid_request_error"
    assert error.switchable is True


@APIS
@SURFACES
async def test_s42_conflict_409_is_switchable(api: API, surface: str) -> None:
    error = await _status(409, CONFLICT, api=api, surface=surface)
    assert type(error) is robota.ProviderError
    assert error.code == "conflict"
    assert error.vendor_type == "conflict_error"
    assert error.switchable is True


@APIS
@SURFACES
async def test_s42_unprocessable_422_is_not_switchable(api: API, surface: str) -> None:
    error = await _status(422, UNPROCESSABLE, api=api, surface=surface)
    assert type(error) is robota.ProviderError
    assert error.code == "unprocessable"
    assert error.switchable is False


@APIS
@SURFACES
@pytest.mark.parametrize(
    ("headers", "seconds"),
    [({"retry-after": "7"}, 7.0), ({"retry-after-ms": "1500"}, 1.5), (None, None)],
    ids=["retry-after", "retry-after-ms", "no-header"],
)
async def test_s42_rate_limited_429_is_switchable_and_keeps_retry_after(
    api: API, surface: str, headers: dict[str, str] | None, seconds: float | None
) -> None:
    error = await _status(429, RATE_LIMITED, api=api, surface=surface, headers=headers)
    assert isinstance(error, robota.RateLimitError)
    assert error.retry_after == seconds
    assert error.vendor_type == "requests"
    assert error.code == "rate_limited"
    assert error.switchable is True
    assert error.recoverable is True


@APIS
@SURFACES
async def test_s42_insufficient_quota_429_is_not_switchable(api: API, surface: str) -> None:
    error = await _status(429, NO_QUOTA, api=api, surface=surface)
    assert isinstance(error, robota.RateLimitError)
    assert error.vendor_type == "insufficient_quota"
    assert error.code == "insufficient_quota"  # a different failure kind than a rate limit
    assert error.switchable is False
    assert error.recoverable is False  # waiting does not refill a quota


@APIS
@SURFACES
@pytest.mark.parametrize(("status", "body"), [(500, SERVER_ERROR), (503, OVERLOADED)])
async def test_s42_server_error_5xx_is_switchable(
    api: API, surface: str, status: int, body: Any
) -> None:
    error = await _status(status, body, api=api, surface=surface)
    assert type(error) is robota.ProviderError
    assert error.code == "server_error"
    assert error.vendor_type == "server_error"
    assert error.switchable is True
    assert error.recoverable is True


@APIS
@SURFACES
async def test_s42_timeout_is_switchable(api: API, surface: str) -> None:
    error = await _fail([Exchange.hang(10.0)], api=api, surface=surface, timeout=0.3)
    _check_translated(error)
    assert isinstance(error, robota.NetworkError)
    assert isinstance(error.__cause__, openai.APITimeoutError)
    assert error.status is None
    assert error.vendor_type == "timeout"
    assert error.switchable is True
    assert error.recoverable is True


CHAT_PREFIX = sse_text(
    [
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "The capital"}}],
        }
    ],
    done=False,
)


def _responses_prefix() -> str:
    """The first events of a recorded Responses stream, up to its first text delta."""
    stream = load_cassette(
        cassette_path(
            "openai-responses", "test_openai_instructions_with_responses_logprobs_streaming"
        )
    )[0]
    events = [event.decode() for event in stream.events()]
    first_delta = next(i for i, e in enumerate(events) if "response.output_text.delta" in e)
    return "".join(events[: first_delta + 1])


@APIS
async def test_s42_connection_dropped_mid_stream_is_not_switchable(api: API) -> None:
    prefix = CHAT_PREFIX if api == "chat" else _responses_prefix()
    seen: list[Any] = []
    async with ReplayServer([Exchange.drop_mid_stream(prefix)]) as server:
        provider = _provider(server, api)
        try:
            with pytest.raises(robota.ProviderError) as info:
                await collect_into(provider.chat_stream(_request()), seen)
        finally:
            await provider.aclose()
    error = info.value
    assert not isinstance(error, openai.OpenAIError)
    assert isinstance(error, robota.NetworkError)
    assert error.vendor_type == "connection_error"
    assert error.status is None
    assert error.switchable is False
    assert error.provider == "openai"
    assert [type(event) for event in seen] == [TextDelta]  # what came before the drop


@APIS
async def test_s42_connection_dropped_mid_body_is_not_switchable(api: API) -> None:
    async with ReplayServer([Exchange.drop_mid_stream(CHAT_PREFIX)]) as server:
        provider = _provider(server, api)
        try:
            with pytest.raises(robota.ProviderError) as info:
                await provider.chat(_request())
        finally:
            await provider.aclose()
    error = info.value
    assert not isinstance(error, openai.OpenAIError)
    assert isinstance(error, robota.NetworkError)
    assert error.vendor_type == "connection_error"
    assert error.switchable is False


@APIS
@SURFACES
async def test_s42_connection_refused_is_not_switchable(api: API, surface: str) -> None:
    with ReplayServer([]) as closed:
        url = closed.base_url + "/v1"
    provider = OpenAIProvider(api=api, api_key="test", base_url=url, max_retries=0)
    try:
        with pytest.raises(robota.ProviderError) as info:
            await _call(provider, surface)
    finally:
        await provider.aclose()
    error = info.value
    _check_translated(error)
    assert isinstance(error, robota.NetworkError)
    assert isinstance(error.__cause__, openai.APIConnectionError)
    assert error.vendor_type == "connection_error"
    assert error.switchable is False


def _chunk(**fields: Any) -> dict[str, Any]:
    return {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": None}],
        **fields,
    }


@pytest.mark.parametrize(
    ("error", "cls", "status", "switchable", "recoverable"),
    [
        ({"code": 400, "message": "Token limit reached"}, robota.ProviderError, 400, False, False),
        ({"code": 429, "message": "Rate limited upstream"}, robota.RateLimitError, 429, True, True),
        ({"code": 502, "message": "Upstream failed"}, robota.ProviderError, 502, True, True),
        ({"code": 401, "message": "Key revoked"}, robota.AuthenticationError, 401, False, False),
        ({"message": "Something went wrong"}, robota.ProviderError, None, False, False),
        ({"code": "weird", "message": "Unknown failure"}, robota.ProviderError, None, False, False),
        (
            {"message": "The server had an error.", "type": "server_error", "code": None},
            robota.ProviderError,
            None,
            True,
            True,
        ),
    ],
    ids=["400", "429", "502", "401", "no-code", "string-code", "server_error-type"],
)
async def test_s42_error_event_inside_a_200_stream_maps_by_its_code(
    error: dict[str, Any],
    cls: type[robota.ProviderError],
    status: int | None,
    switchable: bool,
    recoverable: bool,
) -> None:
    """S42: an error object inside a 200 stream maps like the status or documented type it
    names — class, switchable, and recoverable (a server error without a status is as
    transient as a 5xx)."""
    stream = sse_text([_chunk(), _chunk(error=error)])
    async with ReplayServer([Exchange.sse(stream)]) as server:
        provider = _provider(server, "chat")
        try:
            with pytest.raises(robota.ProviderError) as info:
                await _call(provider, "stream")
        finally:
            await provider.aclose()
    mapped = info.value
    assert not isinstance(mapped, openai.OpenAIError)
    assert type(mapped) is cls
    assert mapped.status == status
    assert mapped.switchable is switchable
    assert mapped.recoverable is recoverable
    assert mapped.provider == "openai"
    assert error["message"] in str(mapped)


@APIS
async def test_s42_unknown_status_is_not_switchable(api: API) -> None:
    error = await _status(418, _error("I'm a teapot", None, None), api=api, surface="chat")
    assert type(error) is robota.ProviderError
    assert error.switchable is False  # S42: never switch on an unknown cause


# --------------------------------------------------------------------------------------------
# Through Agent.run (S39) and the SDK's own retries
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    status: int
    body: Any
    cls: type[robota.ProviderError]
    headers: dict[str, str] = field(default_factory=dict)


ROWS = {
    "invalid_request": Row(400, INVALID, robota.ProviderError),
    "model_not_found": Row(404, MODEL_NOT_FOUND, robota.ProviderError),
    "authentication": Row(401, BAD_KEY, robota.AuthenticationError),
    "not_found": Row(404, BAD_URL, robota.ProviderError),
    "conflict": Row(409, CONFLICT, robota.ProviderError),
    "unprocessable": Row(422, UNPROCESSABLE, robota.ProviderError),
    "rate_limited": Row(429, RATE_LIMITED, robota.RateLimitError, {"retry-after": "3"}),
    "insufficient_quota": Row(429, NO_QUOTA, robota.RateLimitError),
    "server_error": Row(503, OVERLOADED, robota.ProviderError),
}


@APIS
@pytest.mark.parametrize("row", ROWS)
async def test_s39_a_failed_call_is_raised_and_recorded_in_history(api: API, row: str) -> None:
    case = ROWS[row]
    async with ReplayServer([Exchange.json(case.status, case.body, case.headers)]) as server:
        provider = _provider(server, api)
        agent = robota.Agent(provider=provider, model=MODEL)
        try:
            with pytest.raises(robota.ProviderError) as info:
                await agent.run("hi")
        finally:
            await provider.aclose()
    error = info.value
    assert type(error) is case.cls
    assert not isinstance(error, openai.OpenAIError)
    assert error.status == case.status
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert case.body["error"]["message"] in last.content  # readable, not "no response"


@APIS
async def test_s39_a_timeout_is_raised_and_recorded_in_history(api: API) -> None:
    async with ReplayServer([Exchange.hang(10.0)]) as server:
        provider = _provider(server, api, timeout=0.3)
        agent = robota.Agent(provider=provider, model=MODEL)
        try:
            with pytest.raises(robota.NetworkError):
                await agent.run("hi")
        finally:
            await provider.aclose()
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert "timeout" in last.content


def _success(api: API) -> Exchange:
    if api == "chat":
        return Exchange.json(200, completion("Recovered.", model="gpt-4o-2024-08-06"))
    recorded = load_cassette(
        cassette_path("openai-responses", "test_openai_responses_model_simple_response")
    )[0]
    return Exchange.json(200, json.loads(recorded.body))


@APIS
async def test_s42_sdk_retry_after_a_503_succeeds(api: API) -> None:
    failure = Exchange.json(503, OVERLOADED, {"retry-after-ms": "10"})
    async with ReplayServer([failure, _success(api)]) as server:
        provider = _provider(server, api, max_retries=1)
        try:
            response = await provider.chat(_request())
        finally:
            await provider.aclose()
        server.assert_all_served()
    assert response.content in ("Recovered.", "The capital of France is Paris.")
    assert response.model == "gpt-4o-2024-08-06"
    assert len(server.requests) == 2
