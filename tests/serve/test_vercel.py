"""The Vercel AI SDK UI message stream over a real server, read by the reference reader."""

from __future__ import annotations

import asyncio
from pathlib import Path

import robota
from robota.serve import create_app
from robota.sessions import Session, SQLiteSessionStore
from robota.testing import ScriptedProvider
from serve.support import chat_input, client, running, sse_events, ui_stream


@robota.tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


def test_vercel_text_run_follows_the_ui_message_stream_order() -> None:
    app = create_app({"a": lambda: robota.Agent("m", provider=ScriptedProvider(["Hi there you"]))})
    body = chat_input("chat-1", "hello")
    with (
        running(app) as url,
        client(url) as http,
        http.stream("POST", "/agents/a/chat", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        assert response.headers["content-type"].startswith("text/event-stream")
        datas = [event.data for event in sse_events(response.iter_lines())]
    message = ui_stream(datas)
    assert message.types[:3] == ["start", "start-step", "text-start"]
    assert message.types[-2:] == ["finish-step", "finish"]
    assert message.text == "Hi there you"
    assert message.metadata["status"] == "complete"
    assert message.metadata["usage"]["totalTokens"] > 0


def test_vercel_tool_call_parts_carry_input_and_output() -> None:
    def factory() -> robota.Agent:
        provider = ScriptedProvider([[("shout", {"text": "hey"})], "done"])
        return robota.Agent("m", provider=provider, tools=[shout])

    with running(create_app({"a": factory})) as url, client(url) as http:
        response = http.post("/agents/a/chat", json=chat_input("c", "go"))
    message = ui_stream([event.data for event in sse_events(response.text.splitlines())])
    [tool] = message.tools.values()
    assert tool["name"] == "shout"
    assert tool["input"] == {"text": "hey"}
    assert tool["output"] == "HEY"
    assert message.text == "done"
    # Two model rounds, two steps.
    assert message.types.count("start-step") == 2


def test_vercel_chat_id_is_a_session_kept_in_the_store(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    providers: list[ScriptedProvider] = []

    def factory() -> robota.Agent:
        providers.append(ScriptedProvider(["first", "second"]))
        return robota.Agent("m", provider=providers[-1])

    with running(create_app({"a": factory}, sessions=store)) as url, client(url) as http:
        http.post("/agents/a/chat", json=chat_input("chat-7", "one"))
        response = http.post("/agents/a/chat", json=chat_input("chat-7", "two"))
    assert ui_stream([e.data for e in sse_events(response.text.splitlines())]).text == "second"
    sent = providers[0].requests[1].messages
    assert [m.content for m in sent if m.kind != "system"] == ["one", "first", "two"]
    assert len(providers) == 1
    # The server has stopped (its lifespan closed the session); the store kept both turns.
    reopened = robota.Agent("m", provider=ScriptedProvider([]))

    async def history() -> list[object]:
        async with await Session.open(reopened, store, "chat-7") as session:
            return [m.content for m in session.history]

    assert asyncio.run(history()) == ["one", "first", "two", "second"]
