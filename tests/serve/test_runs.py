"""Cancel by request (S23), resumable streams and permission asks answered by POST."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
from ag_ui.core import (
    CustomEvent,
    EventType,
    RunFinishedEvent,
    TextMessageContentEvent,
    ToolCallResultEvent,
)

import robota
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream
from robota.serve import HttpApprover, create_app
from robota.sessions import Session, SQLiteSessionStore
from robota.testing import ScriptedProvider
from serve.support import Sse, agui, agui_input, chat_input, client, running, sse_events, ui_stream

LONG = " ".join(f"word{i}" for i in range(400))


@robota.tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


def _slow_agent() -> robota.Agent:
    return robota.Agent("m", provider=ScriptedProvider([LONG], chunk_delay=0.01))


def _events(response: httpx2.Response) -> Iterator[Sse]:
    return sse_events(response.iter_lines())


def test_s23_cancel_by_request_ends_the_agui_stream_with_the_text_so_far() -> None:
    with running(create_app({"a": _slow_agent})) as url, client(url) as http:
        with http.stream("POST", "/agents/a/agui", json=agui_input("t", "go")) as response:
            events = []
            for sse in _events(response):
                events.append(agui([sse])[0])
                if isinstance(events[-1], TextMessageContentEvent) and len(events) == 5:
                    cancel = http.post("/agents/a/sessions/t/cancel")
                    assert cancel.status_code == 202
                    assert cancel.json() == {"cancelled": True, "runId": "run-1"}
        again = http.post("/agents/a/sessions/t/cancel")
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "no_active_run"
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.outcome is not None
    assert finished.outcome.type == "cancelled"
    assert finished.result["status"] == "interrupted"
    streamed = "".join(e.delta for e in events if isinstance(e, TextMessageContentEvent))
    assert streamed.startswith("word0")
    assert len(streamed) < len(LONG)
    assert finished.result["text"] == streamed
    assert events[-2].type == EventType.TEXT_MESSAGE_END


def test_s23_cancel_by_request_ends_the_ui_stream_with_finish_and_done() -> None:
    with (
        running(create_app({"a": _slow_agent})) as url,
        client(url) as http,
        http.stream("POST", "/agents/a/chat", json=chat_input("c", "go")) as response,
    ):
        datas = []
        for sse in _events(response):
            datas.append(sse.data)
            if '"text-delta"' in sse.data and len(datas) == 5:
                assert http.post("/agents/a/sessions/c/cancel").status_code == 202
    message = ui_stream(datas)
    assert message.metadata["status"] == "interrupted"
    assert message.metadata["text"] == message.text
    assert 0 < len(message.text) < len(LONG)


def test_a_second_run_of_a_busy_session_is_refused() -> None:
    with (
        running(create_app({"a": _slow_agent})) as url,
        client(url) as http,
        http.stream("POST", "/agents/a/chat", json=chat_input("c", "go")) as response,
    ):
        next(response.iter_lines())
        busy = http.post("/agents/a/chat", json=chat_input("c", "again"))
        assert busy.status_code == 409
        assert busy.json()["error"]["code"] == "session_busy"
        assert http.post("/agents/a/sessions/c/cancel").status_code == 202


def test_a_reconnecting_client_continues_after_its_last_event_id() -> None:
    with running(create_app({"a": _slow_agent})) as url, client(url) as http:
        with http.stream("POST", "/agents/a/agui", json=agui_input("t", "go")) as response:
            seen = []
            for sse in _events(response):
                seen.append(sse)
                if len(seen) == 6:
                    break  # the connection drops; the run goes on
        last = seen[-1].id
        assert last is not None
        resumed = http.get("/agents/a/sessions/t/stream", headers={"last-event-id": last})
        assert resumed.status_code == 200
        rest = list(sse_events(resumed.text.splitlines()))
        whole = list(sse_events(http.get("/agents/a/sessions/t/stream").text.splitlines()))
    assert [e.id for e in seen + rest] == [e.id for e in whole]
    assert [e.data for e in seen + rest] == [e.data for e in whole]
    events = agui(whole)
    assert [int(e.id.rsplit(":", 1)[1]) for e in whole] == list(range(len(whole)))  # type: ignore[union-attr]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.result["status"] == "complete"
    assert finished.result["text"] == LONG


def _gated(approver: HttpApprover) -> robota.Agent:
    provider = ScriptedProvider([[("shout", {"text": "hey"})], "done"])
    gate = robota.PermissionGate(robota.PermissionPolicy(ask=["shout"]), approver=approver)
    return robota.Agent("m", provider=provider, tools=[shout], tool_gate=gate)


def test_a_permission_ask_surfaces_as_an_agui_custom_event_and_a_post_approves_it() -> None:
    with (
        running(create_app({"a": _gated})) as url,
        client(url) as http,
        http.stream("POST", "/agents/a/agui", json=agui_input("t", "go")) as response,
    ):
        events = []
        for sse in _events(response):
            event = agui([sse])[0]
            events.append(event)
            if isinstance(event, CustomEvent):
                assert event.name == "robota.permission_request"
                assert event.value["tool"] == "shout"
                assert event.value["arguments"] == {"text": "hey"}
                ask = event.value["id"]
                wrong = http.post(
                    "/agents/a/sessions/t/approvals/ask-nope", json={"approved": True}
                )
                assert wrong.status_code == 404
                answer = http.post(f"/agents/a/sessions/t/approvals/{ask}", json={"approved": True})
                assert answer.status_code == 200
    [result] = [e for e in events if isinstance(e, ToolCallResultEvent)]
    assert result.content == "HEY"
    assert isinstance(events[-1], RunFinishedEvent)
    assert events[-1].result["text"] == "done"


def test_a_permission_ask_surfaces_as_a_data_part_and_a_post_denies_it() -> None:
    with (
        running(create_app({"a": _gated})) as url,
        client(url) as http,
        http.stream("POST", "/agents/a/chat", json=chat_input("c", "go")) as response,
    ):
        datas = []
        for sse in _events(response):
            datas.append(sse.data)
            if "data-permission-request" in sse.data:
                part = json.loads(sse.data)
                assert part["data"]["tool"] == "shout"
                answer = http.post(
                    f"/agents/a/sessions/c/approvals/{part['id']}",
                    json={"approved": False, "reason": "not now"},
                )
                assert answer.status_code == 200
                bad = http.post(f"/agents/a/sessions/c/approvals/{part['id']}", json={})
                assert bad.status_code == 400
    message = ui_stream(datas)
    [tool] = message.tools.values()
    assert "error" in tool
    assert "output" not in tool
    assert [d["type"] for d in message.data] == ["data-permission-request"]
    assert message.text == "done"


def test_a_permission_ask_nobody_answers_is_refused_after_the_approval_timeout() -> None:
    app = create_app({"a": _gated}, approval_timeout=0.2)
    with running(app) as url, client(url) as http:
        response = http.post("/agents/a/chat", json=chat_input("c", "go"))
    message = ui_stream([e.data for e in sse_events(response.text.splitlines())])
    [tool] = message.tools.values()
    assert "error" in tool
    assert "output" not in tool
    assert [d["type"] for d in message.data] == ["data-permission-request"]
    assert message.text == "done"


def test_cancel_refuses_a_waiting_permission_ask_and_ends_the_run() -> None:
    with running(create_app({"a": _gated})) as url, client(url) as http:
        with http.stream("POST", "/agents/a/agui", json=agui_input("t", "go")) as response:
            events = []
            for sse in _events(response):
                events.append(agui([sse])[0])
                if isinstance(events[-1], CustomEvent):
                    assert http.post("/agents/a/sessions/t/cancel").status_code == 202
        assert http.post("/agents/a/sessions/t/cancel").status_code == 409
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.result["status"] == "interrupted"
    assert not [e for e in events if isinstance(e, ToolCallResultEvent) and e.content == "HEY"]


def test_a_factory_gets_the_approver_only_when_it_asks_for_one() -> None:
    seen: list[object] = []

    def with_default(reply: str = "defaulted") -> robota.Agent:
        seen.append(reply)
        return robota.Agent("m", provider=ScriptedProvider([reply]))

    def by_name(*, approver: HttpApprover) -> robota.Agent:
        seen.append(approver)
        return robota.Agent("m", provider=ScriptedProvider(["named"]))

    with running(create_app({"d": with_default, "n": by_name})) as url, client(url) as http:
        first = http.post("/agents/d/chat", json=chat_input("c", "go"))
        second = http.post("/agents/n/chat", json=chat_input("c", "go"))
    assert ui_stream([e.data for e in sse_events(first.text.splitlines())]).text == "defaulted"
    assert ui_stream([e.data for e in sse_events(second.text.splitlines())]).text == "named"
    assert seen[0] == "defaulted"
    assert isinstance(seen[1], HttpApprover)


def test_s23_cancel_of_a_stored_session_saves_the_turn_and_the_session_runs_on(
    tmp_path: Path,
) -> None:
    def factory() -> robota.Agent:
        return robota.Agent("m", provider=ScriptedProvider([LONG, "after"], chunk_delay=0.01))

    store = SQLiteSessionStore(tmp_path / "s.db")
    with running(create_app({"a": factory}, sessions=store)) as url, client(url) as http:
        with http.stream("POST", "/agents/a/chat", json=chat_input("c", "go")) as response:
            datas = []
            for sse in _events(response):
                datas.append(sse.data)
                if '"text-delta"' in sse.data and len(datas) == 5:
                    assert http.post("/agents/a/sessions/c/cancel").status_code == 202
        interrupted = ui_stream(datas)
        after = http.post("/agents/a/chat", json=chat_input("c", "again"))
    assert interrupted.metadata["status"] == "interrupted"
    assert ui_stream([e.data for e in sse_events(after.text.splitlines())]).text == "after"

    async def turns() -> list[str]:
        agent = robota.Agent("m", provider=ScriptedProvider([]))
        async with await Session.open(agent, store, "c") as session:
            return [turn.status for turn in session.turns]

    assert asyncio.run(turns()) == ["interrupted", "complete"]


def test_a_waiting_stream_writes_keep_alive_comments_the_readers_ignore() -> None:
    app = create_app({"a": _gated}, approval_timeout=0.5, heartbeat=0.05)
    with running(app) as url, client(url) as http:
        response = http.post("/agents/a/chat", json=chat_input("c", "go"))
    lines = response.text.splitlines()
    assert ": keep-alive" in lines
    assert ui_stream([e.data for e in sse_events(lines)]).text == "done"


class _Words(robota.Provider):
    """Streams each word as its own delta, with no pause between them."""

    name = "words"

    def __init__(self, words: list[str]) -> None:
        self._words = words

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        for word in self._words:
            yield robota.TextDelta(word)
        yield robota.ResponseDone(model="m", usage=robota.Usage.from_counts(prompt=1, completion=1))


def test_thousands_of_small_deltas_arrive_as_the_same_text_with_contiguous_ids() -> None:
    # Issue 31: deltas queued while the writer is behind coalesce into fewer events; the client
    # still assembles the exact text, every event valid, every id numbered in order.
    words = [f"w{i} " for i in range(3000)]
    app = create_app({"a": lambda: robota.Agent("m", provider=_Words(words))})
    with running(app) as url, client(url) as http:
        response = http.post("/agents/a/agui", json=agui_input("t", "go"))
        whole = list(sse_events(response.text.splitlines()))
        again = http.get("/agents/a/sessions/t/stream").text
    events = agui(whole)
    text = "".join(e.delta for e in events if isinstance(e, TextMessageContentEvent))
    assert text == "".join(words)
    assert [int(str(e.id).rsplit(":", 1)[1]) for e in whole] == list(range(len(whole)))
    assert [e.data for e in sse_events(again.splitlines())] == [e.data for e in whole]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.result["text"] == "".join(words)


async def test_concurrent_new_sessions_never_exceed_max_sessions() -> None:
    # Regression: the app checked `full` before awaiting the store, so requests that arrived
    # while one session was being opened all passed the check and max_sessions was exceeded.
    from robota.serve._runs import Conversation, Conversations, SessionsFull
    from robota.testing import InMemorySessionStore

    gate = asyncio.Event()

    class SlowStore(InMemorySessionStore):
        async def create(self, header: object, entries: object = ()) -> None:
            await gate.wait()
            await super().create(header, entries)  # type: ignore[arg-type]

    conversations = Conversations(
        {"a": lambda: robota.Agent("m", provider=ScriptedProvider([]))},
        SlowStore(),
        buffer_limit=10,
        max_sessions=1,
        approval_timeout=None,
    )
    first = asyncio.ensure_future(conversations.open("a", "one"))
    second = asyncio.ensure_future(conversations.open("a", "two"))
    await asyncio.sleep(0)  # both are past any check made before the store is awaited
    gate.set()
    outcomes = await asyncio.gather(first, second, return_exceptions=True)
    assert not [o for o in outcomes if not isinstance(o, SessionsFull | Conversation)]
    # With a store the second open may close the idle first one; never are both held.
    assert [sid for sid in ("one", "two") if conversations.find("a", sid)] != ["one", "two"]
    await conversations.aclose()


def test_past_max_sessions_a_stored_idle_session_makes_room_and_reopens(tmp_path: Path) -> None:
    # Regression: sessions were never released, so max_sessions new ids (from any client)
    # made the app answer 503 to every new conversation until it restarted.
    def factory() -> robota.Agent:
        return robota.Agent("m", provider=ScriptedProvider(["one", "two", "three", "four"]))

    store = SQLiteSessionStore(tmp_path / "s.db")
    app = create_app({"a": factory}, sessions=store, max_sessions=1)
    with running(app) as url, client(url) as http:
        for chat_id in ("first", "second", "first"):
            response = http.post("/agents/a/chat", json=chat_input(chat_id, "hi"))
            assert response.status_code == 200, response.text

    async def turns(session_id: str) -> int:
        agent = robota.Agent("m", provider=ScriptedProvider([]))
        async with await Session.open(agent, store, session_id) as session:
            return len(session.turns)

    assert asyncio.run(turns("first")) == 2  # reopened from the store, its history kept
    assert asyncio.run(turns("second")) == 1


def test_an_ask_is_answered_only_through_its_own_session() -> None:
    # Issue 31: one session's ask cannot be answered with another session's path, even one
    # with the same session id under another agent name.
    app = create_app(
        {"a": _gated, "b": lambda: robota.Agent("m", provider=ScriptedProvider(["hi"]))}
    )
    with running(app) as url, client(url) as http:
        assert http.post("/agents/b/chat", json=chat_input("t", "x")).status_code == 200
        assert http.post("/agents/b/chat", json=chat_input("u", "x")).status_code == 200
        with http.stream("POST", "/agents/a/chat", json=chat_input("t", "go")) as response:
            datas = []
            for sse in _events(response):
                datas.append(sse.data)
                if "data-permission-request" in sse.data:
                    ask = json.loads(sse.data)["id"]
                    for path in ("/agents/b/sessions/t", "/agents/b/sessions/u"):
                        other = http.post(f"{path}/approvals/{ask}", json={"approved": True})
                        assert other.status_code == 404
                        assert other.json()["error"]["code"] == "unknown_ask"
                    own = http.post(
                        f"/agents/a/sessions/t/approvals/{ask}", json={"approved": False}
                    )
                    assert own.status_code == 200
    [tool] = ui_stream(datas).tools.values()
    assert "error" in tool  # the session's own (denying) answer was the one applied
