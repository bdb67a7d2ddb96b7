"""A round's work does not grow with the history (issue 4's limit; regression from issue 26).

``make bench`` times this (per-round overhead at 10 and 10,000 messages, ratio ≤ 1.5); these
tests pin the same property without a clock: they count the Python and built-in calls one run
makes (``sys.setprofile`` sees both), which is deterministic. A per-request pass over history
(S30's media check scanned every message on every request) makes the count grow by thousands
per round with a 10,000-message history.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from types import FrameType
from typing import Any

import pytest

import robota
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream

SMALL, LARGE = 10, 10_000


@robota.tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


def _history(size: int) -> list[robota.Message]:
    return [robota.UserMessage(f"earlier message {i}") for i in range(size)]


class _Instant(robota.Provider):
    """Two rounds of one call each, then a reply; reads nothing of the request.

    (``ScriptedProvider`` counts the request's tokens, as a real server does: a pass over the
    history that is the provider's, not the loop's.)
    """

    name = "instant"

    def __init__(self) -> None:
        self._turn = 0

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        self._turn += 1
        if self._turn % 3:
            yield robota.ToolCallReady(robota.ToolCall(f"c{self._turn}", "echo", '{"text": "x"}'))
        else:
            yield robota.TextDelta("done")
        yield robota.ResponseDone(
            model="instant", usage=robota.Usage.from_counts(prompt=100, completion=10)
        )


def _agent(history: list[robota.Message]) -> robota.Agent:
    return robota.Agent(provider=_Instant(), model="instant", tools=[echo], history=history)


async def _calls_of_one_run(agent: robota.Agent) -> int:
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        result = await agent.run("go")
    finally:
        sys.setprofile(None)
    assert result.rounds == 3
    return count


async def _growth(small_history: list[robota.Message], large_history: list[robota.Message]) -> int:
    # A warm-up run first: first-use caches (schemas, capability lookups) are not per-round work.
    for history in (small_history, large_history):
        await _agent(list(history)).run("warm up")
    small = await _calls_of_one_run(_agent(small_history))
    large = await _calls_of_one_run(_agent(large_history))
    return large - small


@pytest.mark.asyncio
async def test_s31_a_runs_calls_do_not_grow_with_a_text_only_history() -> None:
    # 3 rounds over 10,000 messages: a per-message pass would add ≥ 30,000 calls.
    assert await _growth(_history(SMALL), _history(LARGE)) < 300


@pytest.mark.asyncio
async def test_s30_a_media_part_long_ago_costs_no_pass_per_round_on_a_model_that_takes_it() -> None:
    image = robota.ImagePart.from_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32, "image/png")
    picture = robota.UserMessage((robota.TextPart("look"), image))
    # The scripted model states no media capability: nothing is omitted, and nothing should
    # be rescanned per round beyond what the first media message needs.
    growth = await _growth([picture, *_history(SMALL)], [picture, *_history(LARGE)])
    assert growth < 300


def test_s30_the_store_keeps_its_media_messages_in_step_with_history() -> None:
    image = robota.ImagePart.from_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32, "image/png")
    store = robota.ConversationStore(max_messages=3)
    assert store.media_messages == ()
    picture = robota.UserMessage((robota.TextPart("look"), image))
    store.append(picture)
    store.append(robota.UserMessage((robota.TextPart("text only"),)))
    result = robota.ToolMessage("seen", tool_call_id="c", tool_name="t", parts=(image,))
    store.append(result)
    assert store.media_messages == (picture, result)
    store.append(robota.UserMessage("later"))  # the cap trims the oldest: the picture
    assert store.media_messages == (result,)
    store.restore([robota.UserMessage("a"), robota.UserMessage("b"), robota.UserMessage("c")])
    assert store.media_messages == ()
