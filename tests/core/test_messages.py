"""S34/S36 message values."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
import tracemalloc

import pytest

from robota import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)


def _all_kinds() -> list[Message]:
    return [
        SystemMessage("s"),
        UserMessage("u"),
        AssistantMessage("a"),
        ToolMessage("t", tool_call_id="call_1", tool_name="x"),
    ]


def test_s34_every_message_has_a_unique_id() -> None:
    ids = {m.id for _ in range(200) for m in _all_kinds()}
    assert len(ids) == 800


@pytest.mark.parametrize("message", _all_kinds(), ids=lambda m: m.kind)
def test_s34_messages_are_frozen(message: Message) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("message", _all_kinds(), ids=lambda m: m.kind)
def test_s34_messages_are_slotted(message: Message) -> None:
    assert not hasattr(message, "__dict__")


def test_s34_only_assistant_messages_can_be_interrupted() -> None:
    assert AssistantMessage("", state="interrupted").state == "interrupted"
    for message in (
        SystemMessage("s"),
        UserMessage("u"),
        ToolMessage("t", tool_call_id="c", tool_name="x"),
    ):
        assert message.state == "complete"
        with pytest.raises(TypeError):
            type(message)("x", state="interrupted")  # type: ignore[call-arg]


def test_s34_assistant_state_rejects_unknown_values() -> None:
    with pytest.raises(ValueError, match="interrupted"):
        AssistantMessage("x", state="cancelled")  # type: ignore[arg-type]


def test_s36_tool_call_ids_are_opaque_and_may_repeat_across_turns() -> None:
    first = AssistantMessage("", tool_calls=(ToolCall("call_0", "search", '{"q": "a"}'),))
    second = AssistantMessage("", tool_calls=(ToolCall("call_0", "search", '{"q": "b"}'),))
    # The provider's token is kept verbatim; each message still has its own unique id.
    assert first.tool_calls[0].id == second.tool_calls[0].id == "call_0"
    assert first.id != second.id


def test_s36_tool_call_arguments_keep_the_models_exact_text() -> None:
    raw = '{"b": 1,  "a": "ü"}'
    assert ToolCall("c", "t", raw).arguments == raw


def test_message_kinds_discriminate() -> None:
    assert [m.kind for m in _all_kinds()] == ["system", "user", "assistant", "tool"]


def test_assistant_message_carries_model_usage_and_continuation() -> None:
    usage = Usage.from_counts(prompt=3, completion=4)
    message = AssistantMessage("hi", model="m-1", usage=usage, continuation="sig:abc")
    assert (message.model, message.usage, message.continuation) == ("m-1", usage, "sig:abc")


@pytest.mark.parametrize("message", _all_kinds(), ids=lambda m: m.kind)
def test_s34_a_message_id_is_spelled_once_and_stable_once_read(message: Message) -> None:
    # Issue 27: the id is minted with the message but spelled as text on first read.
    first = message.id
    assert re.fullmatch(r"msg_[0-9a-f]{24}", first)
    assert message.id is first
    assert f"id={first!r}" in repr(message)
    assert dataclasses.replace(message).id == first
    assert pickle.loads(pickle.dumps(message)).id == first


@pytest.mark.parametrize("kind", [SystemMessage, UserMessage, AssistantMessage])
def test_s34_equality_and_hash_see_the_id_whether_read_or_not(
    kind: type[SystemMessage | UserMessage | AssistantMessage],
) -> None:
    one, other = kind("same"), kind("same")
    twin = copy.copy(one)  # copied before either id was read
    assert one == twin
    assert hash(one) == hash(twin)
    assert one != other  # same content, different ids
    assert one.id == twin.id != other.id
    given = kind("same", id="msg_given", created_at=1.0)
    assert given.id == "msg_given"
    assert given == kind("same", id="msg_given", created_at=1.0)


def test_s34_an_unread_message_id_costs_no_text() -> None:
    """Issue 27: a message whose id is never read keeps 96 bits, not a 28-character string."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [UserMessage("u") for _ in range(1_000)]
        per_message = (tracemalloc.get_traced_memory()[0] - before) / len(kept)
        for message in kept:
            assert message.id.startswith("msg_")
        read = (tracemalloc.get_traced_memory()[0] - before) / len(kept)
    finally:
        tracemalloc.stop()
    # The object, the int, created_at's float and the list's slot: 129 bytes on CPython 3.11
    # (166 with the id spelled at once); reading every id puts its text (77 bytes) in the int's
    # (40 bytes) place.
    assert per_message <= 136
    assert read - per_message >= 30


async def test_issue_27_a_plain_run_leaves_its_messages_ids_unspelled() -> None:
    # The id is spelled as text on first read (77 bytes each); a run without a journal, a
    # fallback chain or a reader of ids must not read them (issue 28 regression: the result's
    # answering provider and cost read every reply's id).
    import robota
    from robota.testing import ScriptedProvider

    agent = robota.Agent(provider=ScriptedProvider(["one", "two"]), model="m")
    await agent.run("hi")
    await agent.run("again")
    for message in agent.history:
        slot = type(message).__dict__["id"]._slot  # the raw slot under the lazy descriptor
        assert type(slot.__get__(message, type(message))) is int, message.kind
