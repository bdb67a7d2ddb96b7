"""AG-UI over a real server: every event parsed into the ag-ui-protocol package's models."""

from __future__ import annotations

import json

from ag_ui.core import (
    EventType,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

import robota
from robota.serve import create_app
from robota.serve._agui import AguiTranslator
from robota.testing import ScriptedProvider
from serve.support import Sse, agui, agui_input, client, running, sse_events


@robota.tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


def test_agui_text_run_streams_start_message_and_finish_events() -> None:
    app = create_app(
        {"helper": lambda: robota.Agent("m", provider=ScriptedProvider(["Hello there"]))}
    )
    body = agui_input("t1", "hi")
    with (
        running(app) as url,
        client(url) as http,
        http.stream("POST", "/agents/helper/agui", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = agui(sse_events(response.iter_lines()))
    types = [e.type for e in events]
    assert types[0] == EventType.RUN_STARTED
    assert types[1] == EventType.TEXT_MESSAGE_START
    assert types[-2:] == [EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]
    started, finished = events[0], events[-1]
    assert isinstance(started, RunStartedEvent)
    assert started.thread_id == "t1"
    assert started.run_id == "run-1"
    text = "".join(e.delta for e in events if isinstance(e, TextMessageContentEvent))
    assert text == "Hello there"
    assert isinstance(finished, RunFinishedEvent)
    assert finished.result["status"] == "complete"
    assert finished.result["text"] == "Hello there"
    assert finished.result["usage"]["totalTokens"] > 0


def test_agui_tool_call_streams_start_args_end_and_result() -> None:
    def factory() -> robota.Agent:
        provider = ScriptedProvider([[("shout", {"text": "hey"})], "done"])
        return robota.Agent("m", provider=provider, tools=[shout])

    with running(create_app({"a": factory})) as url, client(url) as http:
        response = http.post("/agents/a/agui", json=agui_input("t1", "go"))
    events = agui(sse_events(response.text.splitlines()))
    types = [e.type for e in events]
    start = types.index(EventType.TOOL_CALL_START)
    assert types[start : start + 4] == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_RESULT,
    ]
    call = events[start]
    assert isinstance(call, ToolCallStartEvent)
    assert call.tool_call_name == "shout"
    args = events[start + 1]
    assert isinstance(args, ToolCallArgsEvent)
    assert '"hey"' in args.delta
    result = events[start + 3]
    assert isinstance(result, ToolCallResultEvent)
    assert result.tool_call_id == call.tool_call_id
    assert result.content == "HEY"
    assert types[-1] == EventType.RUN_FINISHED


def test_agui_thread_id_keeps_the_conversation_across_requests() -> None:
    providers: list[ScriptedProvider] = []

    def factory() -> robota.Agent:
        providers.append(ScriptedProvider(["first answer", "second answer"]))
        return robota.Agent("m", provider=providers[-1])

    with running(create_app({"a": factory})) as url, client(url) as http:
        http.post("/agents/a/agui", json=agui_input("thread-A", "one", "r1"))
        http.post("/agents/a/agui", json=agui_input("thread-A", "two", "r2"))
        other = http.post("/agents/a/agui", json=agui_input("thread-B", "three", "r3"))
    # One agent per session: thread-A's second turn saw its first turn; thread-B is fresh.
    assert len(providers) == 2
    second = providers[0].requests[1].messages
    assert [m.content for m in second if m.kind != "system"] == ["one", "first answer", "two"]
    fresh = providers[1].requests[0].messages
    assert [m.content for m in fresh if m.kind != "system"] == ["three"]
    finished = agui(sse_events(other.text.splitlines()))[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.thread_id == "thread-B"


def test_agui_state_sent_by_the_client_is_echoed_as_a_snapshot() -> None:
    app = create_app({"a": lambda: robota.Agent("m", provider=ScriptedProvider(["ok", "ok"]))})
    with running(app) as url, client(url) as http:
        first = http.post(
            "/agents/a/agui", json=agui_input("t", "hi", "r1", state={"step": 3, "tags": ["x"]})
        )
        second = http.post("/agents/a/agui", json=agui_input("t", "again", "r2"))
    for response in (first, second):
        events = agui(sse_events(response.text.splitlines()))
        snapshot = events[1]
        assert isinstance(snapshot, StateSnapshotEvent)
        assert snapshot.snapshot == {"step": 3, "tags": ["x"]}


def test_agui_text_content_encoded_without_a_model_matches_the_package_model() -> None:
    # Issue 31: TEXT_MESSAGE_CONTENT is written by a prefix and one json.dumps, not a model.
    translator = AguiTranslator("t", "r")
    opened, encode = translator.open_text()
    start = agui([Sse(None, opened[0])])[0]
    assert isinstance(start, TextMessageStartEvent)
    for text in ("plain", 'quote " and \\ slash', "new\nline\ttab\x00\x1f", "é 漢字 🙂 \u2028"):
        data = encode(text)
        event = agui([Sse(None, data)])[0]
        assert isinstance(event, TextMessageContentEvent)
        assert (event.message_id, event.delta) == (start.message_id, text)
        model = TextMessageContentEvent(message_id=start.message_id, delta=text)
        assert json.loads(data) == json.loads(
            model.model_dump_json(by_alias=True, exclude_none=True)
        )


def test_agui_a_sub_agents_events_are_forwarded_attributed_to_its_sub_run() -> None:
    def factory() -> robota.Agent:
        helper = robota.Agent(
            "m",
            provider=ScriptedProvider(["deep"]),
            name="helper",
        )
        child = robota.Agent(
            "m",
            provider=ScriptedProvider(
                [[("shout", {"text": "hi"}), ("helper", {"input": "dig"})], "found it"]
            ),
            name="researcher",
            tools=[shout, helper.as_tool()],
        )
        provider = ScriptedProvider([[("researcher", {"input": "look"})], "all done"])
        return robota.Agent("m", provider=provider, name="lead", tools=[child.as_tool()])

    with running(create_app({"a": factory})) as url, client(url) as http:
        response = http.post("/agents/a/agui", json=agui_input("t1", "go"))
    events = agui(sse_events(response.text.splitlines()))  # each one the package's model
    starts = [e for e in events if isinstance(e, SubagentStartedEvent)]
    assert [s.name for s in starts] == ["lead/researcher", "lead/researcher/helper"]
    researcher, helper = starts
    [lead_call] = [
        e for e in events if isinstance(e, ToolCallStartEvent) and e.tool_call_name == "researcher"
    ]
    assert lead_call.subagent_run_id is None  # the lead's own call
    assert researcher.parent_tool_call_id == lead_call.tool_call_id
    assert researcher.parent_subagent_run_id is None
    [helper_call] = [
        e for e in events if isinstance(e, ToolCallStartEvent) and e.tool_call_name == "helper"
    ]
    assert helper_call.subagent_run_id == researcher.subagent_run_id
    assert helper.parent_subagent_run_id == researcher.subagent_run_id
    assert helper.parent_tool_call_id == helper_call.tool_call_id
    # Two providers both said "call_0": the sub-agent's call has an id of its own.
    assert len({e.tool_call_id for e in events if isinstance(e, ToolCallStartEvent)}) == 3
    texts: dict[str | None, str] = {}
    for e in events:
        if isinstance(e, TextMessageContentEvent):
            texts[e.subagent_run_id] = texts.get(e.subagent_run_id, "") + e.delta
    assert texts == {
        None: "all done",
        researcher.subagent_run_id: "found it",
        helper.subagent_run_id: "deep",
    }
    [shouted] = [e for e in events if isinstance(e, ToolCallResultEvent) and e.content == "HI"]
    assert shouted.subagent_run_id == researcher.subagent_run_id
    finished = [e.subagent_run_id for e in events if isinstance(e, SubagentFinishedEvent)]
    assert finished == [helper.subagent_run_id, researcher.subagent_run_id]
    # Each sub-run finishes after its last event and before the result of the call running it.
    order = [(type(e).__name__, getattr(e, "subagent_run_id", None)) for e in events]
    assert order.index(("SubagentFinishedEvent", researcher.subagent_run_id)) > max(
        i
        for i, (_, sub) in enumerate(order)
        if sub == researcher.subagent_run_id and _ != "SubagentFinishedEvent"
    )
    assert isinstance(events[-1], RunFinishedEvent)
