"""S34/S35 ConversationStore."""

from __future__ import annotations

import pytest

from robota import (
    DEFAULT_INTERRUPTED_ANNOTATION,
    AbortError,
    AssistantMessage,
    ConfigurationError,
    ConversationStore,
    HistoryError,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)


def test_s34_history_is_append_only_in_order() -> None:
    store = ConversationStore()
    u1, u2 = UserMessage("one"), UserMessage("two")
    store.append(u1)
    with store.begin_assistant() as pending:
        pending.append_text("reply")
    store.append(u2)
    assert [m.content for m in store.messages] == ["one", "reply", "two"]
    assert store.messages[0] is u1


def test_s34_consumers_get_a_read_only_view() -> None:
    store = ConversationStore()
    store.append(UserMessage("x"))
    view = store.messages
    assert not hasattr(view, "append")
    with pytest.raises(TypeError):
        view[0] = UserMessage("y")  # type: ignore[index]
    with pytest.raises(TypeError):
        del view[0]  # type: ignore[attr-defined]
    assert isinstance(view[0:1], tuple)


def test_s34_view_is_live_and_snapshot_is_frozen() -> None:
    store = ConversationStore()
    view = store.messages
    snap = store.snapshot()
    store.append(UserMessage("later"))
    assert len(view) == 1
    assert snap == ()


def test_s34_abort_with_empty_content_still_commits_an_interrupted_message() -> None:
    store = ConversationStore()
    store.append(UserMessage("hi"))
    with pytest.raises(AbortError), store.begin_assistant(model="m"):
        raise AbortError()
    last = store.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.content == ""
    assert last.state == "interrupted"
    assert last.model == "m"


def test_s34_abort_mid_stream_keeps_the_partial_text() -> None:
    store = ConversationStore()
    pending = store.begin_assistant()
    pending.append_text("The ans")
    message = pending.commit(interrupted=True)
    assert store.messages[-1] is message
    assert (message.content, message.state) == ("The ans", "interrupted")


def test_s34_single_commit_path_for_completion_and_abort() -> None:
    store = ConversationStore()
    with store.begin_assistant() as done:
        done.append_text("ok")
    assert store.messages[-1].state == "complete"

    def receive_then_fail() -> None:
        with store.begin_assistant() as failed:
            failed.append_text("partial")
            raise RuntimeError("stream broke")

    with pytest.raises(RuntimeError):
        receive_then_fail()
    assert store.messages[-1].state == "interrupted"
    assert store.messages[-1].content == "partial"


def test_s34_commit_carries_tool_calls_usage_model_and_continuation() -> None:
    store = ConversationStore()
    pending = store.begin_assistant(model="asked-for")
    pending.add_tool_call(ToolCall("call_1", "search", '{"q": 1}'))
    pending.model = "answered-by"
    pending.usage = Usage.from_counts(prompt=5, completion=2)
    pending.continuation = "opaque"
    assert pending.tool_calls == (ToolCall("call_1", "search", '{"q": 1}'),)
    message = pending.commit()
    assert message.tool_calls[0].name == "search"
    assert (message.model, message.continuation) == ("answered-by", "opaque")
    assert message.usage == Usage.from_counts(prompt=5, completion=2)
    assert pending.committed is message


def test_s34_a_message_commits_exactly_once() -> None:
    store = ConversationStore()
    pending = store.begin_assistant()
    pending.commit()
    with pytest.raises(HistoryError):
        pending.commit()
    with pytest.raises(HistoryError):
        pending.append_text("more")
    assert len(store) == 1


def test_s34_writes_cannot_interleave_with_a_pending_response() -> None:
    store = ConversationStore()
    pending = store.begin_assistant()
    assert store.has_pending
    with pytest.raises(HistoryError):
        store.append(UserMessage("sneaky"))
    with pytest.raises(HistoryError):
        store.begin_assistant()
    pending.commit()
    assert not store.has_pending
    store.append(ToolMessage("r", tool_call_id="c", tool_name="t"))


def test_s34_assistant_and_system_messages_cannot_bypass_their_protocols() -> None:
    store = ConversationStore()
    with pytest.raises(HistoryError, match="begin_assistant"):
        store.append(AssistantMessage("forged"))  # type: ignore[arg-type]
    with pytest.raises(HistoryError, match="set_system_prompt"):
        store.append(SystemMessage("second head"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.append("plain text")  # type: ignore[arg-type]


def test_s34_interrupted_text_is_annotated_when_read_for_a_provider() -> None:
    store = ConversationStore()
    pending = store.begin_assistant()
    pending.append_text("Half an ans")
    stored = pending.commit(interrupted=True)
    sent = store.provider_messages()[-1]
    assert sent.content == f"Half an ans\n\n{DEFAULT_INTERRUPTED_ANNOTATION}"
    assert sent.id == stored.id
    # History itself keeps the text exactly as received.
    assert store.messages[-1].content == "Half an ans"


def test_s34_empty_interrupted_message_is_annotated_alone() -> None:
    store = ConversationStore()
    store.begin_assistant().commit(interrupted=True)
    assert store.provider_messages()[-1].content == DEFAULT_INTERRUPTED_ANNOTATION


def test_s35_annotation_has_an_override_seam() -> None:
    store = ConversationStore(interrupted_annotation="(cut)")
    store.begin_assistant().commit(interrupted=True)
    assert store.provider_messages()[-1].content == "(cut)"


def test_s34_complete_messages_are_sent_unchanged() -> None:
    store = ConversationStore(system_prompt="sys")
    store.append(UserMessage("u"))
    with store.begin_assistant() as p:
        p.append_text("a")
    assert list(store.provider_messages()) == list(store.messages)


def test_s35_a_second_system_prompt_replaces_the_first() -> None:
    store = ConversationStore(system_prompt="first")
    store.append(UserMessage("u"))
    store.set_system_prompt("second")
    systems = [m for m in store.messages if isinstance(m, SystemMessage)]
    assert [s.content for s in systems] == ["second"]
    assert store.messages[0].content == "second"
    assert store.provider_messages()[0].content == "second"
    assert store.system_prompt == "second"


def test_s35_system_prompt_set_later_goes_to_the_head() -> None:
    store = ConversationStore()
    store.append(UserMessage("u"))
    store.set_system_prompt("late")
    assert [m.kind for m in store.messages] == ["system", "user"]


def test_s35_removing_the_system_prompt() -> None:
    store = ConversationStore(system_prompt="x")
    assert store.set_system_prompt(None) is None
    assert store.system_prompt is None
    assert len(store) == 0
    assert store.set_system_prompt("") is None


def test_s35_restored_history_may_hold_a_system_message_only_first() -> None:
    with pytest.raises(HistoryError, match="first"):
        ConversationStore(messages=[UserMessage("u"), SystemMessage("s")])
    store = ConversationStore(
        messages=[SystemMessage("old"), UserMessage("u")], system_prompt="new"
    )
    assert [m.content for m in store.messages] == ["new", "u"]


def test_s34_restored_interrupted_message_is_annotated() -> None:
    restored = AssistantMessage("cut", state="interrupted")
    store = ConversationStore(messages=[UserMessage("u"), restored])
    assert store.provider_messages()[-1].content.endswith(DEFAULT_INTERRUPTED_ANNOTATION)
    with pytest.raises(TypeError):
        ConversationStore(messages=["text"])  # type: ignore[list-item]


def test_s34_history_is_unbounded_by_default() -> None:
    store = ConversationStore()
    for i in range(5_000):
        store.append(UserMessage(str(i)))
    assert len(store) == 5_000


def test_s34_cap_drops_oldest_but_keeps_the_system_head() -> None:
    store = ConversationStore(system_prompt="sys", max_messages=3)
    for i in range(5):
        store.append(UserMessage(str(i)))
    assert [m.content for m in store.messages] == ["sys", "2", "3", "4"]
    assert [m.content for m in store.provider_messages()] == ["sys", "2", "3", "4"]


def test_s34_cap_never_leaves_an_orphaned_tool_result_first() -> None:
    store = ConversationStore(max_messages=3)
    store.append(UserMessage("q"))
    with store.begin_assistant() as p:
        p.add_tool_call(ToolCall("c1", "t"))
        p.add_tool_call(ToolCall("c2", "t"))
    store.append(ToolMessage("r1", tool_call_id="c1", tool_name="t"))
    store.append(ToolMessage("r2", tool_call_id="c2", tool_name="t"))
    assert [m.kind for m in store.messages] == ["assistant", "tool", "tool"]
    # Dropping the assistant call would leave r1, r2 orphaned at the front: they go too.
    store.append(UserMessage("next"))
    assert [m.content for m in store.messages] == ["next"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_s34_cap_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="max_messages"):
        ConversationStore(max_messages=bad)  # type: ignore[arg-type]


def test_store_repr_and_len() -> None:
    store = ConversationStore(system_prompt="s")
    assert len(store) == 1
    assert repr(store) == "<ConversationStore 1 messages>"
    assert repr(store.messages) == "HistoryView(1 messages)"


def test_s34_a_provider_snapshot_survives_the_first_interrupted_message() -> None:
    # Issue 27: the provider view shares the history's list until an interrupted message.
    store = ConversationStore(system_prompt="sys")
    store.append(UserMessage("q"))
    before = store.provider_snapshot()
    store.begin_assistant().commit(interrupted=True)
    store.append(UserMessage("again"))
    assert [m.content for m in before] == ["sys", "q"]
    assert store.messages[2].content == ""
    assert store.provider_messages()[2].content == DEFAULT_INTERRUPTED_ANNOTATION
    assert [m.content for m in store.provider_messages()][3:] == ["again"]
    store.set_system_prompt("new")
    assert [m.content for m in store.messages][:2] == ["new", "q"]
    assert [m.content for m in store.provider_messages()][:2] == ["new", "q"]
    assert [m.content for m in before] == ["sys", "q"]


def test_s34_head_changes_and_trims_keep_one_list_until_history_and_requests_differ() -> None:
    store = ConversationStore(max_messages=2)
    for text in ("a", "b", "c"):
        store.append(UserMessage(text))
    store.set_system_prompt("sys")
    store.set_system_prompt(None)
    store.set_system_prompt("sys")
    expected = ["sys", "b", "c"]
    assert [m.content for m in store.messages] == expected
    assert [m.content for m in store.provider_messages()] == expected


def test_s31_the_estimate_after_head_changes_and_trims_equals_a_fresh_count() -> None:
    store = ConversationStore(system_prompt="a system prompt", max_messages=4)
    for index in range(6):
        store.append(UserMessage(f"question {index} " * index))
        store.begin_assistant().commit(interrupted=index % 2 == 1)
    store.set_system_prompt("a longer system prompt than before")
    fresh = ConversationStore(messages=store.messages)
    assert [m.content for m in fresh.provider_messages()] == [
        m.content for m in store.provider_messages()
    ]
    assert store.context.estimated_tokens == fresh.context.estimated_tokens
    store.set_system_prompt(None)
    assert (
        store.context.estimated_tokens
        == ConversationStore(messages=store.messages).context.estimated_tokens
    )
