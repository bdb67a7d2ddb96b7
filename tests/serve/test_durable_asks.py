"""Issue 31 + S40: permission asks of a journaled agent across an HTTP boundary and a restart.

The agent (``durable_app``) keeps its sessions and its execution journal in SQLite files; an
ask is saved as an outside request, so its id is stable and it can be answered by a POST to
the same server, to a server started again after a graceful stop, or after ``kill -9``.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
from ag_ui.core import CustomEvent, RunFinishedEvent, ToolCallResultEvent

import robota
from robota.host import SQLiteJournal
from robota.serve import create_app
from robota.sessions import Session, SQLiteSessionStore
from robota.testing import ScriptedProvider
from serve.durable_app import PHASES, durable_app
from serve.support import Sse, agui, agui_input, chat_input, client, running, sse_events, ui_stream

HERE = pathlib.Path(__file__).parent


def _events(response: httpx2.Response) -> Iterator[Sse]:
    return sse_events(response.iter_lines())


def _effects(directory: pathlib.Path) -> list[str]:
    path = directory / "effects.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _ask_of(datas: list[str]) -> str:
    (part,) = [json.loads(d) for d in datas if "data-permission-request" in d]
    return str(part["id"])


def test_s40_a_journaled_ask_is_answered_in_the_same_ui_stream(tmp_path: pathlib.Path) -> None:
    app = durable_app(tmp_path, [*PHASES["1"], *PHASES["2"]])
    with running(app) as url, client(url) as http:
        datas = []
        with http.stream("POST", "/agents/a/chat", json=chat_input("c", "go")) as response:
            for sse in _events(response):
                datas.append(sse.data)
                if "data-permission-request" in sse.data:
                    part = json.loads(sse.data)
                    assert part["id"].startswith("ask_")  # saved under a stable id (S40)
                    assert part["data"]["tool"] == "shout"
                    assert part["data"]["arguments"] == {"text": "hey"}
                    assert _effects(tmp_path) == []
                    answer = http.post(
                        f"/agents/a/sessions/c/approvals/{part['id']}", json={"approved": True}
                    )
                    assert answer.status_code == 200
                    assert answer.json() == {"answered": True, "runId": None}
    message = ui_stream(datas)
    [tool] = message.tools.values()
    assert tool["output"] == "HEY"
    assert message.text == "done"
    assert _effects(tmp_path) == ["hey"]


def test_s40_an_agui_run_ends_with_an_interrupt_and_a_resume_run_continues_it(
    tmp_path: pathlib.Path,
) -> None:
    app = durable_app(tmp_path, [*PHASES["1"], *PHASES["2"]])
    with running(app) as url, client(url) as http:
        first = agui(
            sse_events(http.post("/agents/a/agui", json=agui_input("t", "go")).iter_lines())
        )
        [custom] = [e for e in first if isinstance(e, CustomEvent)]
        assert custom.name == "robota.permission_request"
        finished = first[-1]
        assert isinstance(finished, RunFinishedEvent)
        assert finished.result["status"] == "suspended"
        outcome = finished.outcome
        assert outcome is not None
        assert outcome.type == "interrupt"  # type: ignore[union-attr]
        (interrupt,) = outcome.interrupts  # type: ignore[union-attr]
        assert interrupt.id == custom.value["id"]
        assert interrupt.response_schema is not None
        # A new message while the turn waits is refused, with what it waits for.
        busy = http.post("/agents/a/agui", json=agui_input("t", "other", run_id="run-x"))
        assert busy.status_code == 409
        assert busy.json()["error"]["code"] == "awaiting_answers"
        wrong = agui_input("t", "", run_id="run-2")
        wrong["resume"] = [{"interruptId": "ask_nope", "status": "resolved", "payload": True}]
        assert http.post("/agents/a/agui", json=wrong).status_code == 404
        body = agui_input("t", "", run_id="run-2")
        body["resume"] = [
            {"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": True}}
        ]
        second = agui(sse_events(http.post("/agents/a/agui", json=body).iter_lines()))
    [result] = [e for e in second if isinstance(e, ToolCallResultEvent)]
    assert result.content == "HEY"
    assert isinstance(second[-1], RunFinishedEvent)
    assert second[-1].result["status"] == "complete"
    assert second[-1].result["text"] == "done"
    assert _effects(tmp_path) == ["hey"]


def test_s40_an_ask_answered_after_a_graceful_restart_continues_the_turn(
    tmp_path: pathlib.Path,
) -> None:
    with (
        running(durable_app(tmp_path, PHASES["1"], approval_timeout=0.2)) as url,
        client(url) as http,
    ):
        datas = [
            sse.data
            for sse in sse_events(
                http.post("/agents/a/chat", json=chat_input("c", "go")).iter_lines()
            )
        ]
    ask = _ask_of(datas)
    assert ui_stream(datas).metadata["status"] == "suspended"
    # A new server (new agents, new provider script) over the same files.
    with running(durable_app(tmp_path, PHASES["2"])) as url, client(url) as http:
        assert (
            http.post(
                "/agents/a/sessions/other/approvals/" + ask, json={"approved": True}
            ).status_code
            == 404
        )
        answer = http.post(f"/agents/a/sessions/c/approvals/{ask}", json={"approved": True})
        assert answer.status_code == 200
        run_id = answer.json()["runId"]
        assert run_id
        again = http.post(f"/agents/a/sessions/c/approvals/{ask}", json={"approved": True})
        assert again.status_code == 404  # answered once
        rest = list(sse_events(http.get("/agents/a/sessions/c/stream").iter_lines()))
        assert all(sse.id is not None and sse.id.startswith(run_id) for sse in rest if sse.id)
        message = ui_stream([sse.data for sse in rest])
        assert message.text == "done"
        [tool] = message.tools.values()
        assert tool["output"] == "HEY"
        # The session goes on: a new turn sees the whole conversation.
        nxt = ui_stream(
            [
                sse.data
                for sse in sse_events(
                    http.post("/agents/a/chat", json=chat_input("c", "more")).iter_lines()
                )
            ]
        )
        assert nxt.text == "and again"
    assert _effects(tmp_path) == ["hey"]


@contextmanager
def _worker(directory: pathlib.Path, phase: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), *sys.path])}
    process = subprocess.Popen(
        [sys.executable, str(HERE / "durable_app.py"), str(directory), phase],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "serving at " in line, line
        yield process, line.split("serving at ", 1)[1].strip()
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(30)
        if process.stderr is not None:
            process.stderr.close()


def test_s40_an_ask_survives_kill_9_of_the_server_and_is_answered_by_the_next(
    tmp_path: pathlib.Path,
) -> None:
    with _worker(tmp_path, "1") as (process, url), client(url) as http:
        with http.stream("POST", "/agents/a/chat", json=chat_input("c", "go")) as response:
            for sse in _events(response):
                if "data-permission-request" in sse.data:
                    ask = json.loads(sse.data)["id"]
                    os.killpg(process.pid, signal.SIGKILL)  # the server dies mid-wait
                    break
        process.wait(30)
    with _worker(tmp_path, "2") as (_, url), client(url) as http:
        answer = http.post(f"/agents/a/sessions/c/approvals/{ask}", json={"approved": True})
        assert answer.status_code == 200, answer.text
        message = ui_stream(
            [sse.data for sse in sse_events(http.get("/agents/a/sessions/c/stream").iter_lines())]
        )
        assert message.text == "done"
        assert [t["output"] for t in message.tools.values()] == ["HEY"]
    assert _effects(tmp_path) == ["hey"]  # exactly once, after the answer
    assert asyncio.run(_session_turns(tmp_path)) == ["complete"]


def test_s40_a_denied_ask_after_a_restart_refuses_the_call(tmp_path: pathlib.Path) -> None:
    with (
        running(durable_app(tmp_path, PHASES["1"], approval_timeout=0.2)) as url,
        client(url) as http,
    ):
        ask = _ask_of(
            [
                s.data
                for s in sse_events(
                    http.post("/agents/a/chat", json=chat_input("c", "go")).iter_lines()
                )
            ]
        )
    with running(durable_app(tmp_path, PHASES["2"])) as url, client(url) as http:
        answer = http.post(
            f"/agents/a/sessions/c/approvals/{ask}", json={"approved": False, "reason": "no"}
        )
        assert answer.status_code == 200
        message = ui_stream(
            [s.data for s in sse_events(http.get("/agents/a/sessions/c/stream").iter_lines())]
        )
        [tool] = message.tools.values()
        assert "error" in tool
        assert message.text == "done"
    assert _effects(tmp_path) == []


def test_s40_a_tools_outside_request_is_an_event_answered_by_post(tmp_path: pathlib.Path) -> None:
    @robota.tool
    async def deploy(target: str, ctx: robota.ToolContext) -> str:
        """Deploy in a window someone names."""
        window = await ctx.request_outside_response("window", {"target": target})
        return f"deployed {target} at {window}"

    journal = SQLiteJournal(str(tmp_path / "journal.db"))
    provider = ScriptedProvider([[("deploy", {"target": "prod"})], "ok"])

    def factory() -> robota.Agent:
        return robota.Agent("m", provider=provider, tools=[deploy], journal=journal)

    store = SQLiteSessionStore(str(tmp_path / "sessions.db"))
    app = create_app({"a": factory}, sessions=store)
    with running(app) as url, client(url) as http:
        datas = []
        with http.stream("POST", "/agents/a/chat", json=chat_input("c", "go")) as response:
            for sse in _events(response):
                datas.append(sse.data)
                if "data-outside-request" in sse.data:
                    part = json.loads(sse.data)
                    assert part["data"]["kind"] == "window"
                    assert part["data"]["payload"] == {"target": "prod"}
                    wrong = http.post(
                        f"/agents/a/sessions/c/approvals/{part['id']}", json={"approved": True}
                    )
                    assert wrong.status_code == 409
                    answer = http.post(
                        f"/agents/a/sessions/c/responses/{part['id']}",
                        json={"response": "tonight"},
                    )
                    assert answer.status_code == 200
    message = ui_stream(datas)
    assert [t["output"] for t in message.tools.values()] == ["deployed prod at tonight"]
    assert message.text == "ok"


async def _session_turns(directory: pathlib.Path) -> list[str]:
    store = SQLiteSessionStore(str(directory / "sessions.db"))
    agent = robota.Agent("m", provider=ScriptedProvider([]))
    session = await Session.open(agent, store, "c")
    return [t.status for t in session.turns]


def test_s40_a_session_reopening_into_a_long_continuation_does_not_hold_up_others(
    tmp_path: pathlib.Path,
) -> None:
    # A turn whose every answer was saved but whose continuation never ran (a crash right
    # after the answer) continues when its session is next opened. That open must hold up
    # only its own session, never the opening of another.
    with (
        running(durable_app(tmp_path, PHASES["1"], approval_timeout=0.2)) as url,
        client(url) as http,
    ):
        ask = _ask_of(
            [
                s.data
                for s in sse_events(
                    http.post("/agents/a/chat", json=chat_input("c", "go")).iter_lines()
                )
            ]
        )

    @robota.tool
    def shout(text: str) -> str:
        """Say it louder."""
        raise AssertionError("answering must not run the turn")

    async def answer_only() -> None:
        store = SQLiteSessionStore(str(tmp_path / "sessions.db"))
        journal = SQLiteJournal(str(tmp_path / "journal.db"))
        agent = robota.Agent("m", provider=ScriptedProvider([]), tools=[shout], journal=journal)
        session = await Session.open(agent, store, "c")
        await session.respond(ask, {"approved": True, "reason": ""})
        await session.aclose()

    asyncio.run(answer_only())
    release = threading.Event()
    entered = threading.Event()

    async def hold() -> None:
        entered.set()
        await asyncio.to_thread(release.wait, 60)

    app = durable_app(tmp_path, PHASES["2"], before_effect=hold)
    with running(app) as url, client(url) as http:
        touched: list[int] = []
        toucher = threading.Thread(
            target=lambda: touched.append(
                http.post(
                    f"/agents/a/sessions/c/approvals/{ask}", json={"approved": True}
                ).status_code
            )
        )
        toucher.start()
        try:
            assert entered.wait(30)  # session c is reopening, its continuation's tool held
            other = ui_stream(
                [
                    s.data
                    for s in sse_events(
                        http.post("/agents/a/chat", json=chat_input("d", "hi")).iter_lines()
                    )
                ]
            )
            assert other.metadata["status"] == "complete"
            assert toucher.is_alive()  # c is still held: d did not wait for it
        finally:
            release.set()
            toucher.join(30)
        assert touched, "the request to session c never finished"
    assert _effects(tmp_path) == ["hey"]
