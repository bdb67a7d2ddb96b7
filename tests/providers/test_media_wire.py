"""Issue 26: image, document and audio parts on the wire of every adapter, under its real SDK.

Each test sends a user message with parts through the adapter against the replay server and
asserts the exact JSON the vendor receives, in the shape its documentation gives:

* OpenAI Responses: ``input_text``, ``input_image`` (``image_url``: a URL or a ``data:`` URL),
  ``input_file`` (``file_data`` + ``filename``, or ``file_url``), ``input_audio``;
* OpenAI Chat Completions (and OpenAI-compatible servers): ``text``, ``image_url``, ``file``,
  ``input_audio`` (``format`` ``wav``/``mp3``);
* Anthropic: ``image`` / ``document`` blocks with a ``base64`` or ``url`` source;
* Gemini: ``inlineData`` (URL-safe base64, as the SDK encodes bytes) or ``fileData`` (a ``file_uri``); the SDK keeps
  the Blob's and FileData's own field names in proto form (``mime_type``), which the API's
  JSON mapping accepts alongside the camel-case ones.

A part the model's capability table refuses is refused before any transport: the replay server
sees no request.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import pytest

import robota
from providers.anthropic._helpers import message_body
from providers.anthropic._helpers import provider as anthropic_provider
from providers.openai._wire import chat_provider, compatible_provider, completion
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.core import ChatRequest, UserMessage
from robota.providers.gemini import GeminiProvider
from robota.providers.openai import OpenAIProvider


def _png() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 2, 3, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )


PNG = _png()
PNG64 = base64.b64encode(PNG).decode()
PDF = b"%PDF-1.4\n1 0 obj << /Type /Page >>\n%%EOF"
PDF64 = base64.b64encode(PDF).decode()
WAV = b"RIFF\x24\0\0\0WAVEfmt " + b"\0" * 20 + b"data\0\0\0\0"
WAV64 = base64.b64encode(WAV).decode()

PARTS = (
    robota.TextPart("Describe these."),
    robota.ImagePart(data=PNG, media_type="image/png"),
    robota.ImagePart(url="https://example.com/cat.jpg"),
    robota.DocumentPart(data=PDF, name="report.pdf"),
)


def _urlsafe(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode()


def _request(model: str, *parts: robota.MessagePart) -> ChatRequest:
    return ChatRequest(model=model, messages=(UserMessage(parts),))


def _responses_reply() -> dict[str, Any]:
    path = cassette_path("openai-responses", "test_openai_responses_model_simple_response")
    reply: dict[str, Any] = json.loads(load_cassette(path)[0].body)
    return reply


def _responses(server: ReplayServer) -> OpenAIProvider:
    return OpenAIProvider(
        api_key="test", base_url=server.base_url + "/v1", max_retries=0, streaming=False
    )


_GEMINI_REPLY: dict[str, Any] = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
    "modelVersion": "gemini-2.5-flash",
}


def _gemini(server: ReplayServer) -> GeminiProvider:
    return GeminiProvider(
        api_key="k", http_options={"base_url": server.base_url + "/"}, streaming=False
    )


# --------------------------------------------------------------------------- OpenAI Responses


async def test_responses_sends_text_images_and_a_pdf_as_input_items() -> None:
    with ReplayServer([Exchange.json(200, _responses_reply())]) as server:
        provider = _responses(server)
        await provider.chat(
            _request("gpt-4o", *PARTS, robota.DocumentPart(url="https://example.com/a.pdf"))
        )
        await provider.aclose()
    [item] = server.requests[0].json()["input"]
    assert item == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Describe these."},
            {
                "type": "input_image",
                "image_url": f"data:image/png;base64,{PNG64}",
                "detail": "auto",
            },
            {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "auto"},
            {
                "type": "input_file",
                "filename": "report.pdf",
                "file_data": f"data:application/pdf;base64,{PDF64}",
            },
            {"type": "input_file", "file_url": "https://example.com/a.pdf"},
        ],
    }


async def test_responses_sends_audio_as_input_audio_on_a_model_not_stated_to_refuse_it() -> None:
    with ReplayServer([Exchange.json(200, _responses_reply())]) as server:
        provider = _responses(server)
        await provider.chat(
            _request("gpt-4o-audio-preview", robota.AudioPart(data=WAV, media_type="audio/wav"))
        )
        await provider.aclose()
    [item] = server.requests[0].json()["input"]
    assert item["content"] == [
        {"type": "input_audio", "input_audio": {"data": WAV64, "format": "wav"}}
    ]


async def test_a_string_message_stays_a_string_on_the_wire() -> None:
    with ReplayServer([Exchange.json(200, _responses_reply())]) as server:
        provider = _responses(server)
        await provider.chat(ChatRequest(model="gpt-4o", messages=(UserMessage("hi"),)))
        await provider.aclose()
    assert server.requests[0].json()["input"] == [{"role": "user", "content": "hi"}]


# --------------------------------------------------------------------------- Chat Completions


async def test_chat_completions_sends_image_url_and_file_parts() -> None:
    with ReplayServer([Exchange.json(200, completion())]) as server:
        provider = chat_provider(server, streaming=False)
        await provider.chat(_request("gpt-4o", *PARTS))
        await provider.aclose()
    [message] = server.requests[0].json()["messages"]
    assert message == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Describe these."},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
            {
                "type": "file",
                "file": {
                    "filename": "report.pdf",
                    "file_data": f"data:application/pdf;base64,{PDF64}",
                },
            },
        ],
    }


async def test_chat_completions_sends_mp3_as_input_audio() -> None:
    with ReplayServer([Exchange.json(200, completion())]) as server:
        provider = chat_provider(server, streaming=False)
        clip = robota.AudioPart(data=b"ID3abc", media_type="audio/mpeg")
        await provider.chat(_request("gpt-4o-audio-preview", clip))
        await provider.aclose()
    [message] = server.requests[0].json()["messages"]
    encoded = base64.b64encode(b"ID3abc").decode()
    assert message["content"] == [
        {"type": "input_audio", "input_audio": {"data": encoded, "format": "mp3"}}
    ]


async def test_an_openai_compatible_server_decides_for_an_unknown_model() -> None:
    with ReplayServer([Exchange.json(200, completion())]) as server:
        provider = compatible_provider(server, streaming=False)
        image = robota.ImagePart(data=PNG, media_type="image/png")
        await provider.chat(_request("local-llava", image))
        await provider.aclose()
    [message] = server.requests[0].json()["messages"]
    assert message["content"][0]["type"] == "image_url"


# A document or audio URL is not refused any more: the adapter fetches it through the egress
# client and sends the bytes (S06, tests/providers/test_media_fetch_wire.py).
@pytest.mark.parametrize(
    ("part", "message"),
    [(robota.AudioPart(data=b"x", media_type="audio/ogg"), "audio/wav or audio/mpeg")],
)
async def test_chat_completions_refuses_a_part_it_has_no_form_for_before_transport(
    part: robota.MessagePart, message: str
) -> None:
    with ReplayServer([Exchange.json(200, completion())]) as server:
        provider = chat_provider(server, streaming=False)
        with pytest.raises(robota.ConfigurationError, match=message) as caught:
            await provider.chat(_request("gpt-4o-audio-preview", part))
        await provider.aclose()
    assert server.requests == []
    assert "gpt-4o-audio-preview" in str(caught.value)


# --------------------------------------------------------------------------- Anthropic


async def test_anthropic_sends_image_and_document_blocks_with_base64_and_url_sources() -> None:
    reply = message_body([{"type": "text", "text": "ok"}])
    with ReplayServer([Exchange.json(200, reply)]) as server:
        provider = anthropic_provider(server)
        await provider.chat(
            _request(
                "claude-sonnet-4-5",
                *PARTS,
                robota.DocumentPart(url="https://example.com/a.pdf"),
            )
        )
        await provider.aclose()
    [message] = server.requests[0].json()["messages"]
    assert message == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Describe these."},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": PNG64},
            },
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF64},
            },
            {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
        ],
    }


# --------------------------------------------------------------------------- Gemini


async def test_gemini_sends_inline_data_and_file_data_parts() -> None:
    with ReplayServer([Exchange.json(200, _GEMINI_REPLY)]) as server:
        provider = _gemini(server)
        await provider.chat(
            _request(
                "gemini-2.5-flash",
                *PARTS,
                robota.AudioPart(data=WAV, media_type="audio/wav"),
            )
        )
        await provider.aclose()
    [content] = server.requests[0].json()["contents"]
    assert content == {
        "role": "user",
        "parts": [
            {"text": "Describe these."},
            {"inlineData": {"mime_type": "image/png", "data": _urlsafe(PNG)}},
            {"fileData": {"file_uri": "https://example.com/cat.jpg", "mime_type": "image/jpeg"}},
            {"inlineData": {"mime_type": "application/pdf", "data": _urlsafe(PDF)}},
            {"inlineData": {"mime_type": "audio/wav", "data": _urlsafe(WAV)}},
        ],
    }


# --------------------------------------------------------------------------- S30 refusal


@pytest.mark.parametrize(
    ("vendor", "model", "part", "says"),
    [
        (
            "responses",
            "o3-mini",
            robota.ImagePart(data=PNG, media_type="image/png"),
            "vision=False",
        ),
        ("chat", "o3-mini", robota.DocumentPart(data=PDF), "documents=False"),
        ("responses", "gpt-4o", robota.AudioPart(data=WAV, media_type="audio/wav"), "audio=False"),
        (
            "anthropic",
            "claude-sonnet-4-5",
            robota.AudioPart(data=WAV, media_type="audio/wav"),
            "audio=False",
        ),
    ],
)
async def test_s30_a_part_the_model_cannot_take_is_refused_before_any_transport(
    vendor: str, model: str, part: robota.MessagePart, says: str
) -> None:
    reply: dict[str, Any] = (
        message_body([{"type": "text", "text": "ok"}])
        if vendor == "anthropic"
        else completion()
        if vendor == "chat"
        else _responses_reply()
    )
    with ReplayServer([Exchange.json(200, reply)]) as server:
        provider: robota.Provider = (
            anthropic_provider(server)
            if vendor == "anthropic"
            else chat_provider(server, streaming=False)
            if vendor == "chat"
            else _responses(server)
        )
        agent = robota.Agent(provider=provider, model=model)
        with pytest.raises(robota.ConfigurationError, match=says) as caught:
            await agent.run([robota.TextPart("what is this?"), part])
        await agent.aclose()
    assert server.requests == []  # refused before any transport
    text = str(caught.value)
    assert model in text
    assert type(part).__name__ in text
    assert caught.value.code == "media_unsupported"


# --------------------------------------------------------------------------- tool results


def _tool_exchange(model: str) -> ChatRequest:
    call = robota.ToolCall("call_1", "screenshot", "{}")
    image = robota.ImagePart(data=PNG, media_type="image/png")
    return ChatRequest(
        model=model,
        messages=(
            UserMessage("look"),
            robota.AssistantMessage("", tool_calls=(call,)),
            robota.ToolMessage(
                "the screen", tool_call_id="call_1", tool_name="screenshot", parts=(image,)
            ),
        ),
    )


async def test_responses_sends_a_tool_results_image_in_its_output_items() -> None:
    with ReplayServer([Exchange.json(200, _responses_reply())]) as server:
        provider = _responses(server)
        await provider.chat(_tool_exchange("gpt-4o"))
        await provider.aclose()
    output = server.requests[0].json()["input"][-1]
    assert output == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "the screen"},
            {
                "type": "input_image",
                "image_url": f"data:image/png;base64,{PNG64}",
                "detail": "auto",
            },
        ],
    }


async def test_chat_completions_sends_a_tool_results_image_in_a_user_message_after_it() -> None:
    with ReplayServer([Exchange.json(200, completion())]) as server:
        provider = chat_provider(server, streaming=False)
        await provider.chat(_tool_exchange("gpt-4o"))
        await provider.aclose()
    tool, media = server.requests[0].json()["messages"][-2:]
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": "the screen"}
    assert media == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Attached to the result of screenshot (call_1):"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
        ],
    }


async def test_anthropic_sends_a_tool_results_image_as_a_block_of_the_tool_result() -> None:
    reply = message_body([{"type": "text", "text": "ok"}])
    with ReplayServer([Exchange.json(200, reply)]) as server:
        provider = anthropic_provider(server)
        await provider.chat(_tool_exchange("claude-sonnet-4-5"))
        await provider.aclose()
    [result] = server.requests[0].json()["messages"][-1]["content"]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": [
            {"type": "text", "text": "the screen"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": PNG64},
            },
        ],
    }


async def test_gemini_sends_a_tool_results_image_after_its_function_response() -> None:
    with ReplayServer([Exchange.json(200, _GEMINI_REPLY)]) as server:
        provider = _gemini(server)
        await provider.chat(_tool_exchange("gemini-2.5-flash"))
        await provider.aclose()
    last = server.requests[0].json()["contents"][-1]
    assert last["role"] == "user"
    assert [next(iter(p)) for p in last["parts"]] == ["functionResponse", "inlineData"]
    assert last["parts"][1]["inlineData"] == {"mime_type": "image/png", "data": _urlsafe(PNG)}


async def test_s30_a_tool_results_image_is_refused_for_a_model_without_vision() -> None:
    with ReplayServer([Exchange.json(200, completion())]) as server:
        provider = chat_provider(server, streaming=False)
        with pytest.raises(robota.ConfigurationError, match="vision=False"):
            await provider.chat(_tool_exchange("o3-mini"))
        await provider.aclose()
    assert server.requests == []
