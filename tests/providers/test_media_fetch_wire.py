"""Issue 26 with S06: a URL part an adapter must fetch itself goes through the egress client.

Two real HTTP servers on 127.0.0.1: one serves the media (a PDF, an audio clip, an image), the
other stands in for the vendor and records what the vendor SDK sent. The media URL names the host
``media.test``, which a test resolver maps to 127.0.0.1 and :func:`robota.testing.loopback_allowance`
admits; without the allowance the egress policy refuses the loopback address, as it would any
private one.

Which kinds each adapter fetches (the adapters' docstrings): OpenAI Chat Completions — documents
and audio; OpenAI Responses — audio; OpenAI-compatible servers — every kind; Gemini — every kind
on the ``gemini-1.*`` / ``gemini-2.0*`` models only; Anthropic — none.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import Any

import pytest

import robota
from providers.openai._wire import chat_provider, compatible_provider, completion, sse
from providers.replay import Exchange, ReplayServer
from robota.core import ChatRequest, UserMessage
from robota.host import EgressClient, MediaFetchError
from robota.providers.gemini import GeminiProvider
from robota.providers.openai import OpenAIProvider
from robota.testing import loopback_allowance

PDF = b"%PDF-1.4\n1 0 obj << /Type /Page >>\n%%EOF"
WAV = b"RIFF\x24\0\0\0WAVEfmt " + b"\0" * 20 + b"data\0\0\0\0"
MP3 = b"ID3\x03\0\0\0\0\0\0fake-mp3"
PNG = b"\x89PNG\r\n\x1a\nfake-png"

_GEMINI_REPLY: dict[str, Any] = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
    "modelVersion": "gemini-2.0-flash",
}
_RESPONSES_REPLY: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "gpt-4o",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    ],
    "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def media(body: bytes, content_type: str | None, status: int = 200) -> Exchange:
    headers = () if content_type is None else (("content-type", content_type),)
    return Exchange(status=status, headers=headers, body=body)


def egress(*, allow: bool = True, **options: Any) -> EgressClient:
    """An egress client that resolves ``media.test`` to 127.0.0.1 (admitted only when ``allow``)."""

    async def resolve(host: str) -> list[str]:
        if host != "media.test":
            raise OSError(f"unknown host {host}")
        return ["127.0.0.1"]

    allowance = loopback_allowance("media.test") if allow else None
    return EgressClient(resolver=resolve, allowance=allowance, **options)


def url(server: ReplayServer, path: str) -> str:
    return f"http://media.test:{server.port}{path}"


def request(model: str, *parts: robota.MessagePart) -> ChatRequest:
    return ChatRequest(model=model, messages=(UserMessage((robota.TextPart("see"), *parts)),))


def gemini(server: ReplayServer, **options: Any) -> GeminiProvider:
    return GeminiProvider(
        api_key="k", http_options={"base_url": server.base_url + "/"}, streaming=False, **options
    )


def responses(server: ReplayServer, **options: Any) -> OpenAIProvider:
    return OpenAIProvider(
        api_key="test", base_url=server.base_url + "/v1", max_retries=0, streaming=False, **options
    )


# What each adapter's vendor receives for a fetched part, from the body the SDK sent.
def _chat_content(body: Any) -> Any:
    return body["messages"][0]["content"][1]


def _responses_content(body: Any) -> Any:
    return body["input"][0]["content"][1]


def _gemini_content(body: Any) -> Any:
    return body["contents"][0]["parts"][1]


FETCHED: list[tuple[str, str, Callable[[str], robota.MessagePart], Exchange, Any]] = [
    (
        "chat",
        "gpt-4o",
        lambda u: robota.DocumentPart(url=u),
        media(PDF, "application/pdf"),
        {
            "type": "file",
            "file": {
                "filename": "doc.pdf",
                "file_data": f"data:application/pdf;base64,{_b64(PDF)}",
            },
        },
    ),
    (
        "chat",
        "gpt-4o-audio-preview",
        lambda u: robota.AudioPart(url=u.replace("doc.pdf", "clip.wav")),
        media(WAV, "audio/wav"),
        {"type": "input_audio", "input_audio": {"data": _b64(WAV), "format": "wav"}},
    ),
    (
        "responses",
        "gpt-4o-audio-preview",
        lambda u: robota.AudioPart(url=u.replace("doc.pdf", "clip.mp3")),
        media(MP3, "audio/mpeg"),
        {"type": "input_audio", "input_audio": {"data": _b64(MP3), "format": "mp3"}},
    ),
    (
        "compatible",
        "local-llava",
        lambda u: robota.ImagePart(url=u.replace("doc.pdf", "cat.png")),
        media(PNG, "image/png"),
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_b64(PNG)}"}},
    ),
    (
        "compatible",
        "local-model",
        lambda u: robota.DocumentPart(url=u),
        media(PDF, "application/pdf; qs=0.9"),
        {
            "type": "file",
            "file": {
                "filename": "doc.pdf",
                "file_data": f"data:application/pdf;base64,{_b64(PDF)}",
            },
        },
    ),
    (
        "gemini",
        "gemini-2.0-flash",
        lambda u: robota.DocumentPart(url=u),
        media(PDF, "application/pdf"),
        {
            "inlineData": {
                "mime_type": "application/pdf",
                "data": base64.urlsafe_b64encode(PDF).decode(),
            }
        },
    ),
]


def _vendor(adapter: str) -> Exchange:
    if adapter == "gemini":
        return Exchange.json(200, _GEMINI_REPLY)
    if adapter == "responses":
        return Exchange.json(200, _RESPONSES_REPLY)
    return Exchange.json(200, completion())


def _adapter(adapter: str, server: ReplayServer, **options: Any) -> robota.Provider:
    if adapter == "gemini":
        return gemini(server, **options)
    if adapter == "responses":
        return responses(server, **options)
    if adapter == "compatible":
        return compatible_provider(server, streaming=False, **options)
    return chat_provider(server, streaming=False, **options)


_READ: dict[str, Callable[[Any], Any]] = {
    "chat": _chat_content,
    "compatible": _chat_content,
    "responses": _responses_content,
    "gemini": _gemini_content,
}


@pytest.mark.parametrize(
    ("adapter", "model", "make", "served", "expected"),
    FETCHED,
    ids=[
        "chat-pdf",
        "chat-wav",
        "responses-mp3",
        "compatible-png",
        "compatible-pdf",
        "gemini-2.0-pdf",
    ],
)
async def test_s06_adapter_fetch_goes_through_egress(
    adapter: str,
    model: str,
    make: Callable[[str], robota.MessagePart],
    served: Exchange,
    expected: Any,
) -> None:
    with ReplayServer([served]) as files, ReplayServer([_vendor(adapter)]) as vendor:
        part = make(url(files, "/doc.pdf"))
        async with egress() as client:
            provider = _adapter(adapter, vendor, egress=client)
            await provider.chat(request(model, part))
            await provider.aclose()
    [fetch] = files.requests
    assert fetch.method == "GET"
    assert fetch.headers["host"].startswith("media.test:")  # the checked URL's own host
    assert _READ[adapter](vendor.requests[0].json()) == expected


async def test_s06_adapter_fetch_refuses_loopback_without_the_allowance() -> None:
    with (
        ReplayServer([media(PDF, "application/pdf")]) as files,
        ReplayServer([_vendor("chat")]) as vendor,
    ):
        address = f"http://127.0.0.1:{files.port}/secret.pdf"
        provider = chat_provider(vendor, streaming=False)  # the default egress client
        agent = robota.Agent(provider=provider, model="gpt-4o")
        with pytest.raises(MediaFetchError) as caught:
            await agent.run([robota.TextPart("read"), robota.DocumentPart(url=address)])
        await agent.aclose()
        await provider.aclose()
    assert files.requests == []  # S06: never fetched
    assert vendor.requests == []  # refused before the vendor is called
    error = caught.value
    assert (error.reason, error.url, error.part_kind, error.model) == (
        "egress_refused",
        address,
        "document",
        "gpt-4o",
    )
    assert error.part_index == 1
    text = str(error)
    assert address in text
    assert "DocumentPart" in text
    assert "part 1 of message" in text
    assert "'gpt-4o'" in text
    assert isinstance(error, robota.ConfigurationError)


async def test_s06_adapter_fetch_refuses_a_private_destination_the_name_resolves_to() -> None:
    with (
        ReplayServer([media(PNG, "image/png")]) as files,
        ReplayServer([_vendor("compatible")]) as vendor,
    ):
        async with egress(allow=False) as client:
            provider = compatible_provider(vendor, streaming=False, egress=client)
            with pytest.raises(MediaFetchError, match="egress policy refused"):
                await provider.chat(request("m", robota.ImagePart(url=url(files, "/a.png"))))
            await provider.aclose()
    assert files.requests == []
    assert vendor.requests == []


@pytest.mark.parametrize(
    ("make", "served", "says"),
    [
        (
            lambda u: robota.DocumentPart(url=u + "/doc.pdf"),
            media(b"<html>login</html>", "text/html; charset=utf-8"),
            "the server sent 'text/html', which a document part does not take",
        ),
        (
            lambda u: robota.ImagePart(url=u + "/cat.png"),
            media(PNG, "image/jpeg"),
            "the server sent 'image/jpeg', the part declares 'image/png'",
        ),
        (
            lambda u: robota.AudioPart(url=u + "/clip"),
            media(b"OggS", "audio/ogg"),
            "'audio/ogg' is not a type this adapter sends inline (for audio it takes",
        ),
        (
            lambda u: robota.AudioPart(url=u + "/clip"),
            media(b"?", None),
            "named no media type and the part declares none",
        ),
    ],
    ids=["html-for-a-pdf", "jpeg-for-a-png", "ogg-for-input-audio", "no-type-at-all"],
)
async def test_s06_adapter_fetch_refuses_a_wrong_content_type(
    make: Callable[[str], robota.MessagePart], served: Exchange, says: str
) -> None:
    with ReplayServer([served]) as files, ReplayServer([_vendor("compatible")]) as vendor:
        async with egress() as client:
            provider = compatible_provider(vendor, streaming=False, egress=client)
            with pytest.raises(MediaFetchError) as caught:
                await provider.chat(request("m", make(url(files, ""))))
            await provider.aclose()
    assert says in str(caught.value)
    assert caught.value.reason == "media_type"
    assert vendor.requests == []


async def test_s06_adapter_fetch_fills_in_the_type_the_part_did_not_give() -> None:
    with (
        ReplayServer([media(MP3, "audio/mp3")]) as files,
        ReplayServer([_vendor("chat")]) as vendor,
    ):
        async with egress() as client:
            provider = chat_provider(vendor, streaming=False, egress=client)
            clip = robota.AudioPart(url=url(files, "/stream?id=7"))
            assert clip.media_type is None
            await provider.chat(request("gpt-4o-audio-preview", clip))
            await provider.aclose()
    sent = _chat_content(vendor.requests[0].json())
    assert sent["input_audio"]["format"] == "mp3"  # audio/mp3 normalised to audio/mpeg


async def test_s06_adapter_fetch_refuses_a_body_over_the_egress_clients_limit() -> None:
    with (
        ReplayServer([media(PDF * 100, "application/pdf")]) as files,
        ReplayServer([_vendor("chat")]) as vendor,
    ):
        async with egress(max_bytes=1024) as client:
            provider = chat_provider(vendor, streaming=False, egress=client)
            with pytest.raises(MediaFetchError, match="larger than the egress client") as caught:
                await provider.chat(
                    request("gpt-4o", robota.DocumentPart(url=url(files, "/a.pdf")))
                )
            await provider.aclose()
    assert caught.value.reason == "too_large"
    assert vendor.requests == []


async def test_s06_adapter_fetch_holds_a_part_to_the_adapters_own_limit() -> None:
    big = PNG + b"\0" * (20 * 1024 * 1024)  # one byte-run over the 20 MiB an image may have
    with (
        ReplayServer([media(big, "image/png")]) as files,
        ReplayServer([_vendor("compatible")]) as vendor,
    ):
        async with egress(max_bytes=64 * 1024 * 1024) as client:
            provider = compatible_provider(vendor, streaming=False, egress=client)
            with pytest.raises(MediaFetchError, match="20 MiB this adapter sends inline"):
                await provider.chat(request("m", robota.ImagePart(url=url(files, "/big.png"))))
            await provider.aclose()
    assert vendor.requests == []


async def test_s06_adapter_fetch_refuses_an_http_error() -> None:
    with (
        ReplayServer([media(b"gone", "text/plain", status=404)]) as files,
        ReplayServer([_vendor("chat")]) as vendor,
    ):
        async with egress() as client:
            provider = chat_provider(vendor, streaming=False, egress=client)
            with pytest.raises(MediaFetchError, match="HTTP 404") as caught:
                await provider.chat(
                    request("gpt-4o", robota.DocumentPart(url=url(files, "/a.pdf")))
                )
            await provider.aclose()
    assert caught.value.reason == "http_status"
    assert vendor.requests == []


async def test_s06_a_url_the_vendor_fetches_is_passed_as_a_url() -> None:
    with (
        ReplayServer([]) as files,
        ReplayServer([_vendor("responses"), _vendor("chat"), _vendor("gemini")]) as vendor,
    ):
        image, pdf = url(files, "/cat.png"), url(files, "/doc.pdf")
        async with egress() as client:
            both = (robota.ImagePart(url=image), robota.DocumentPart(url=pdf))
            for provider, model, parts in (
                (responses(vendor, egress=client), "gpt-4o", both),
                # Chat Completions: OpenAI fetches an image URL (a PDF URL it would not).
                (chat_provider(vendor, streaming=False, egress=client), "gpt-4o", both[:1]),
                (gemini(vendor, egress=client), "gemini-2.5-flash", both),
            ):
                await provider.chat(request(model, *parts))
                await provider.aclose()
    assert files.requests == []  # nothing fetched: each vendor fetches these itself
    first, second, third = (r.json() for r in vendor.requests)
    assert _responses_content(first) == {
        "type": "input_image",
        "image_url": image,
        "detail": "auto",
    }
    assert first["input"][0]["content"][2] == {"type": "input_file", "file_url": pdf}
    assert _chat_content(second) == {"type": "image_url", "image_url": {"url": image}}
    assert _gemini_content(third) == {"fileData": {"file_uri": image, "mime_type": "image/png"}}
    assert third["contents"][0]["parts"][2]["fileData"]["file_uri"] == pdf


async def test_s06_adapter_fetch_streams_with_the_fetched_bytes_and_fetches_once() -> None:
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}
            ],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        },
    ]
    with (
        ReplayServer([media(PNG, "image/png")]) as files,
        ReplayServer([sse(chunks), sse(chunks)]) as vendor,
    ):
        async with egress() as client:
            provider = compatible_provider(vendor, egress=client)
            agent = robota.Agent(provider=provider, model="m")
            image = robota.ImagePart(url=url(files, "/cat.png"))
            first = await agent.run([robota.TextPart("what is it?"), image])
            second = await agent.run("and now?")  # the image is in history: sent again
            await agent.aclose()
            await provider.aclose()
    assert (first.output, second.output) == ("ok", "ok")
    assert len(files.requests) == 1  # kept from the first turn, not fetched again
    inline = f"data:image/png;base64,{_b64(PNG)}"
    for sent in vendor.requests:
        assert _chat_content(sent.json()) == {"type": "image_url", "image_url": {"url": inline}}
    # The conversation keeps the URL; only the wire carries the bytes.
    [user, *_] = [m for m in agent.history if isinstance(m, UserMessage)]
    assert user.content[1] == image


async def test_s06_adapter_fetch_honours_the_runs_abort_signal() -> None:
    # The media server never answers; only the abort can end the fetch.
    with ReplayServer([Exchange.hang(60)]) as files, ReplayServer([_vendor("chat")]) as vendor:
        async with egress() as client:
            provider = chat_provider(vendor, streaming=False, egress=client)
            controller = robota.AbortController()
            asyncio.get_running_loop().call_later(0.2, controller.abort)
            with pytest.raises(robota.AbortError):
                await provider.chat(
                    request("gpt-4o", robota.DocumentPart(url=url(files, "/slow.pdf"))),
                    signal=controller.signal,
                )
            await provider.aclose()
    assert vendor.requests == []


async def test_s06_a_tool_results_url_part_is_fetched_too() -> None:
    call = robota.ToolCall("call_1", "report", "{}")
    with (
        ReplayServer([media(PDF, "application/octet-stream")]) as files,
        ReplayServer([_vendor("chat")]) as vendor,
    ):
        document = robota.DocumentPart(url=url(files, "/download?id=3"))
        messages = (
            UserMessage("get the report"),
            robota.AssistantMessage("", tool_calls=(call,)),
            robota.ToolMessage(
                "here it is", tool_call_id="call_1", tool_name="report", parts=(document,)
            ),
        )
        async with egress() as client:
            provider = chat_provider(vendor, streaming=False, egress=client)
            await provider.chat(ChatRequest(model="gpt-4o", messages=messages))
            await provider.aclose()
    sent = vendor.requests[0].json()["messages"][-1]["content"]
    # No type served (octet-stream): the part's own application/pdf stands; no .pdf in the path:
    # the default file name.
    assert sent[1] == {
        "type": "file",
        "file": {
            "filename": "document.pdf",
            "file_data": f"data:application/pdf;base64,{_b64(PDF)}",
        },
    }


def test_s06_egress_must_be_an_egress_client() -> None:
    with pytest.raises(robota.ConfigurationError, match=r"robota\.host\.EgressClient"):
        OpenAIProvider(api_key="k", egress="http://proxy")  # type: ignore[arg-type]
