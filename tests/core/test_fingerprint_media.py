"""A request's fingerprint covers the media a tool result carries (issue 26 review, S30).

The response cache and the cassette key a request by its fingerprint. Two requests that differ
only in the image a tool returned ask different questions; serving one's cached answer for the
other would describe the wrong picture.
"""

from __future__ import annotations

import robota
from robota.core.providers import ChatRequest, normalize_request, request_fingerprint
from robota.testing import ScriptedProvider

RED = robota.ImagePart(data=b"\x89PNG\r\n\x1a\nred", media_type="image/png")
BLUE = robota.ImagePart(data=b"\x89PNG\r\n\x1a\nblue", media_type="image/png")


def _request(parts: tuple[robota.ImagePart, ...]) -> ChatRequest:
    call = robota.ToolCall("call_0", "camera", "{}")
    return ChatRequest(
        model="m",
        messages=(
            robota.UserMessage("what do you see?"),
            robota.AssistantMessage("", tool_calls=(call,)),
            robota.ToolMessage("a photo", tool_call_id="call_0", tool_name="camera", parts=parts),
        ),
    )


def test_s30_the_fingerprint_differs_for_different_tool_result_media() -> None:
    assert request_fingerprint(_request((RED,))) != request_fingerprint(_request((BLUE,)))
    assert request_fingerprint(_request((RED,))) != request_fingerprint(_request(()))
    assert request_fingerprint(_request((RED,))) == request_fingerprint(_request((RED,)))


def test_s30_a_tool_result_without_media_normalises_as_before() -> None:
    tool = normalize_request(_request(()))["messages"][2]
    assert "parts" not in tool


async def test_s30_a_cached_answer_is_not_served_for_another_tool_image() -> None:
    cache = robota.InMemoryResponseCache()

    def agent(image: robota.ImagePart, provider: ScriptedProvider) -> robota.Agent:
        @robota.tool
        def camera() -> robota.ToolResult:
            """Take a photo."""
            return robota.ToolResult("a photo", parts=(image,))

        return robota.Agent(provider=provider, model="m", tools=[camera], response_cache=cache)

    red = agent(RED, ScriptedProvider([[("camera", {})], "it is red"]))
    assert (await red.run("what do you see?")).output == "it is red"
    # The first call asks the same question, so it is served from the cache (the camera call);
    # the second carries another photo and must reach the model.
    provider = ScriptedProvider(["it is blue"])
    result = await agent(BLUE, provider).run("what do you see?")
    assert result.output == "it is blue"
    assert provider.remaining == 0
