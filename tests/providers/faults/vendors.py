"""Each vendor's failures in its own wire format, for the fault tests of issue 28 (S42).

A :class:`Vendor` knows how to point its Robota adapter at a
:class:`~providers.replay.ReplayServer` (a real HTTP server on 127.0.0.1) and how that vendor
answers when something goes wrong: a 429 with or without a retry hint, a 500 or 503 error body,
an error event inside a 200 stream, a stream whose connection is reset after some text, and a
slow first byte. Successes are the team's real vendor recordings (``tests/providers/recordings``),
served unchanged, so a script such as ``[v.rate_limited(retry_after="2"), v.status_error(503),
v.success()]`` shows a client failures followed by a real answer.

Usage::

    vendor = VENDORS["anthropic"]
    with ReplayServer([vendor.rate_limited(), vendor.success()]) as server:
        provider = vendor.provider(server, sdk_retries=0)
        ...

Error bodies follow each vendor's documented error format:

* OpenAI (both APIs): ``{"error": {"message", "type", "param", "code"}}``; a Chat Completions
  stream carries a failure as a ``data:`` line holding that object, a Responses stream as an
  ``error`` event (``{"type": "error", "code", "message", "param"}``).
* Anthropic: ``{"type": "error", "error": {"type", "message"}, "request_id"}``, over an HTTP
  status or as an ``error`` event inside a 200 stream (``overloaded_error`` mid-stream).
* Gemini: ``{"error": {"code", "message", "status", "details"}}``; a 429 names its wait in a
  ``google.rpc.RetryInfo`` detail (``"retryDelay": "2s"``); inside a stream the same object
  arrives as a ``data:`` chunk.
* An OpenAI-compatible server, in OpenRouter's format: ``{"error": {"code": <HTTP status>,
  "message", "metadata"}}`` with no type, and inside a stream a chunk with an ``error`` member.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota import ChatRequest, Provider, UserMessage
from robota.providers.anthropic import AnthropicProvider
from robota.providers.gemini import GeminiProvider
from robota.providers.openai import OpenAIProvider
from robota.providers.openai_compatible import OpenAICompatibleProvider

__all__ = [
    "RETRY_HINTS",
    "VENDORS",
    "FaultServer",
    "RetryHint",
    "Vendor",
    "request",
]

FaultServer = Callable[[Sequence[Exchange]], ReplayServer]
"""The ``fault_server`` fixture (``conftest.py``): starts a server for a script, stopped after
the test."""

RetryHint = Literal["none", "retry-after", "retry-after-ms", "retry-after-date", "retry-info"]
"""How a 429 says how long to wait: not at all, ``Retry-After: <seconds>``,
``retry-after-ms: <ms>`` (OpenAI and Anthropic; both SDKs read it), ``Retry-After:
<HTTP date>`` (RFC 9110's other form), or Gemini's ``RetryInfo`` detail in the body."""

RETRY_HINTS: Final[Mapping[str, tuple[RetryHint, ...]]] = {
    "openai-chat": ("none", "retry-after", "retry-after-ms"),
    "openai-responses": ("none", "retry-after", "retry-after-ms"),
    "anthropic": ("none", "retry-after", "retry-after-ms"),
    "gemini": ("none", "retry-after", "retry-info"),
    "openai-compatible": ("none", "retry-after", "retry-after-ms"),
}
"""The hint forms each vendor's 429 is tested with."""


def request(vendor: Vendor, prompt: str = "hi") -> ChatRequest:
    """A one-message request to ``vendor``'s model."""
    return ChatRequest(vendor.model, (UserMessage(prompt),))


def _events(vendor_dir: str, cassette: str) -> tuple[Exchange, tuple[str, ...]]:
    exchange = load_cassette(cassette_path(vendor_dir, cassette))[0]
    return exchange, tuple(event.decode() for event in exchange.events())


@dataclasses.dataclass(frozen=True, kw_only=True)
class Vendor:
    """One vendor API: its adapter, its recorded success and its failures on the wire."""

    name: str
    model: str
    recording: tuple[str, str]
    """``(vendor folder, cassette)`` of a recorded one-exchange streamed success."""
    success_text: str
    """The text the recorded stream delivers."""
    text_marker: str
    """A substring that marks an event carrying answer text."""
    prefix_text: str
    """The text delivered by the recording's events up to and including its first text event."""
    build: Callable[..., Provider]
    """``build(server, sdk_retries=, timeout=)``: the adapter pointed at ``server``."""
    error_body: Callable[[int, str | None, str], Any]
    """``error_body(status, vendor_type, message)``: the vendor's error body."""
    status_types: Mapping[int, str | None]
    """The error type the vendor names for 429, 500 and 503 (``None``: its body names none)."""
    stream_error_event: str
    """The SSE text of an error event inside a 200 stream (the vendor's "overloaded")."""
    stream_error_type: str | None
    """The vendor error type that event carries."""
    stream_error_status: int | None = None
    """The HTTP code that event names, when its format has one (Gemini, OpenRouter)."""

    def provider(
        self, server: ReplayServer, *, sdk_retries: int | None = 0, timeout: float | None = None
    ) -> Provider:
        """The streaming adapter pointed at ``server``.

        ``sdk_retries`` is the SDK's own retry count (``None``: the SDK's default; for Gemini,
        whose SDK makes one attempt unless given ``retry_options``, ``None`` and ``0`` both mean
        one attempt); ``timeout`` is in seconds (``None``: the SDK's default).
        """
        return self.build(server, sdk_retries=sdk_retries, timeout=timeout)

    # -- answers -------------------------------------------------------------------------------

    def success(self) -> Exchange:
        """The recorded streamed success, unchanged."""
        return _events(*self.recording)[0]

    def _prefix(self) -> str:
        events = _events(*self.recording)[1]
        first = next(i for i, event in enumerate(events) if self.text_marker in event)
        return "".join(events[: first + 1])

    def status_error(self, status: int, headers: Mapping[str, str] | None = None) -> Exchange:
        """An HTTP error ``status`` with the vendor's error body (its type for that status)."""
        vendor_type = self.status_types[status]
        body = self.error_body(status, vendor_type, f"{vendor_type}: injected by the test")
        return Exchange.json(status, body, headers)

    def rate_limited(self, hint: RetryHint = "none", seconds: float = 2.0) -> Exchange:
        """A 429 whose wait, when ``hint`` is not ``"none"``, is ``seconds``."""
        if hint == "retry-info":
            body = self.error_body(429, self.status_types[429], "Quota exceeded; retry later.")
            body["error"]["details"] = [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{seconds}s"}
            ]
            return Exchange.json(429, body)
        headers = {
            "none": {},
            "retry-after": {"retry-after": f"{seconds:g}"},
            "retry-after-ms": {"retry-after-ms": f"{seconds * 1000:g}"},
            "retry-after-date": {
                "retry-after": email.utils.formatdate(time.time() + seconds, usegmt=True)
            },
        }[hint]
        return self.status_error(429, headers)

    def error_in_stream(self) -> Exchange:
        """A 200 stream: the recording's first text, then the vendor's error event, then EOF."""
        return Exchange.sse(self._prefix() + self.stream_error_event)

    def reset_mid_stream(self) -> Exchange:
        """A 200 stream: the recording's first text, then a TCP reset (``SO_LINGER`` 0)."""
        return Exchange.reset_mid_stream(self._prefix())

    def reset_before_answer(self) -> Exchange:
        """The request read, then a TCP reset before any status line."""
        return Exchange.abort()

    def slow_first_byte(self, seconds: float) -> Exchange:
        """The recorded success, its status line held back ``seconds``."""
        return self.success().delayed(headers=seconds)

    def stalled_stream(self, seconds: float) -> Exchange:
        """The recorded success, its headers sent at once and its first event ``seconds`` late."""
        return self.success().delayed(body=seconds)


# --------------------------------------------------------------------------------------------
# OpenAI (Chat Completions and Responses)
# --------------------------------------------------------------------------------------------


def _openai_body(status: int, vendor_type: str | None, message: str) -> Any:
    code = "rate_limit_exceeded" if status == 429 else None
    return {"error": {"message": message, "type": vendor_type, "param": None, "code": code}}


def _openai(api: Literal["chat", "responses"]) -> Callable[..., Provider]:
    def build(server: ReplayServer, *, sdk_retries: int | None, timeout: float | None) -> Provider:
        return OpenAIProvider(
            api=api,
            api_key="test",
            base_url=server.base_url + "/v1",
            max_retries=sdk_retries,
            timeout=timeout,
        )

    return build


_OPENAI_TYPES: Final = {429: "requests", 500: "server_error", 503: "server_error"}

OPENAI_CHAT: Final = Vendor(
    name="openai-chat",
    model="gpt-5",
    recording=("openai-chat", "test_openai_moderation_stream"),
    success_text="Paris.",
    text_marker='"delta":{"content":"P',
    prefix_text="Paris",
    build=_openai("chat"),
    error_body=_openai_body,
    status_types=_OPENAI_TYPES,
    # The SDK raises a ``data:`` object with an ``error`` member as an APIError (its body).
    stream_error_event="data: "
    + json.dumps(_openai_body(500, "server_error", "The server had an error mid-stream."))
    + "\n\n",
    stream_error_type="server_error",
)

OPENAI_RESPONSES: Final = Vendor(
    name="openai-responses",
    model="gpt-4o-mini",
    recording=("openai-responses", "test_openai_instructions_with_responses_logprobs_streaming"),
    success_text="The capital of Minas Gerais is Belo Horizonte.",
    text_marker="response.output_text.delta",
    prefix_text="The",
    build=_openai("responses"),
    error_body=_openai_body,
    status_types=_OPENAI_TYPES,
    stream_error_event="event: error\ndata: "
    + json.dumps(
        {
            "type": "error",
            "code": "server_error",
            "message": "The server had an error mid-stream.",
            "param": None,
        }
    )
    + "\n\n",
    stream_error_type="server_error",
)


# --------------------------------------------------------------------------------------------
# Anthropic
# --------------------------------------------------------------------------------------------


def _anthropic_body(status: int, vendor_type: str | None, message: str) -> Any:
    del status
    return {
        "type": "error",
        "error": {"type": vendor_type, "message": message},
        "request_id": "req_fault_test",
    }


def _anthropic(server: ReplayServer, *, sdk_retries: int | None, timeout: float | None) -> Provider:
    return AnthropicProvider(
        api_key="test", base_url=server.base_url, max_retries=sdk_retries, timeout=timeout
    )


ANTHROPIC: Final = Vendor(
    name="anthropic",
    model="claude-sonnet-4-5",
    recording=("anthropic", "test_request_stream_fallback_for_high_max_tokens"),
    success_text="2",
    text_marker="text_delta",
    prefix_text="2",
    build=_anthropic,
    error_body=_anthropic_body,
    # Anthropic names 5xx failures ``api_error``; its own overload status is 529.
    status_types={
        429: "rate_limit_error",
        500: "api_error",
        503: "api_error",
        529: "overloaded_error",
    },
    stream_error_event="event: error\ndata: "
    + json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    + "\n\n",
    stream_error_type="overloaded_error",
)


# --------------------------------------------------------------------------------------------
# Gemini
# --------------------------------------------------------------------------------------------


def _gemini_body(status: int, vendor_type: str | None, message: str) -> Any:
    return {"error": {"code": status, "message": message, "status": vendor_type}}


def _gemini(server: ReplayServer, *, sdk_retries: int | None, timeout: float | None) -> Provider:
    options: dict[str, Any] = {"base_url": server.base_url + "/"}
    if timeout is not None:
        options["timeout"] = int(timeout * 1000)  # milliseconds
    if sdk_retries:
        # Tiny waits: the test counts attempts, it does not measure the SDK's backoff.
        options["retry_options"] = {
            "attempts": sdk_retries + 1,
            "initial_delay": 0.01,
            "max_delay": 0.02,
            "jitter": 0.0,
        }
    return GeminiProvider(api_key="test", http_options=options)


GEMINI: Final = Vendor(
    name="gemini",
    model="gemini-2.0-flash",
    recording=("gemini", "test_google_model_stream"),
    success_text="The capital of France is Paris.\n",
    text_marker='"text": "',
    prefix_text="The",
    build=_gemini,
    error_body=_gemini_body,
    status_types={429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"},
    stream_error_event="data: "
    + json.dumps(_gemini_body(503, "UNAVAILABLE", "The model is overloaded. Try again later."))
    + "\r\n\r\n",
    stream_error_type="UNAVAILABLE",
    stream_error_status=503,
)


# --------------------------------------------------------------------------------------------
# An OpenAI-compatible server (OpenRouter's error format)
# --------------------------------------------------------------------------------------------


def _openrouter_body(status: int, vendor_type: str | None, message: str) -> Any:
    # OpenRouter puts the HTTP status in ``code`` and names no type (a recorded 429 in
    # ``openai-chat/test_openrouter_errors_raised``).
    del vendor_type
    return {"error": {"code": status, "message": message, "metadata": {"provider_name": "Up"}}}


def _compatible(
    server: ReplayServer, *, sdk_retries: int | None, timeout: float | None
) -> Provider:
    return OpenAICompatibleProvider(
        base_url=server.base_url + "/v1",
        api_key="test",
        max_retries=sdk_retries,
        timeout=timeout,
    )


OPENAI_COMPATIBLE: Final = Vendor(
    name="openai-compatible",
    model="gpt-5",
    recording=("openai-chat", "test_openai_moderation_stream"),
    success_text="Paris.",
    text_marker='"delta":{"content":"P',
    prefix_text="Paris",
    build=_compatible,
    error_body=_openrouter_body,
    status_types={429: None, 500: None, 503: None},
    # OpenRouter sends an upstream failure as a chunk with an ``error`` member
    # (``openai-chat/test_openrouter_stream_error``).
    stream_error_event="data: "
    + json.dumps(
        {
            "id": "gen-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-5",
            "error": {"code": 502, "message": "Upstream provider failed"},
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": None}],
        }
    )
    + "\n\n",
    stream_error_type=None,
    stream_error_status=502,
)

VENDORS: Final[Mapping[str, Vendor]] = {
    vendor.name: vendor
    for vendor in (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, GEMINI, OPENAI_COMPATIBLE)
}
"""Every vendor API the fault tests cover, by name."""
