"""Issue 31 + S40: a served journaled agent's saved asks — races and the cases around them.

A journal that holds an answer's write (``OutsideResponded``) until the test lets it go makes
the window between "an answer arrived" and "it is durable" wide enough to send other requests
into it. Also: eviction of a waiting session, an agent served without a session store, a
sub-agent's ask under a journaled parent, and a cancel racing the last answer.
"""

from __future__ import annotations

import asyncio
import pathlib
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx2
from ag_ui.core import CustomEvent, RunFinishedEvent

import robota
import robota.testing
from robota.serve import HttpApprover, create_app
from robota.serve._app import _Handlers
from robota.serve._runs import Conversations
from robota.serve._vercel import VercelTranslator
from serve.durable_app import PHASES, durable_app
from serve.support import agui, agui_input, client, running, sse_events


class _HeldLease(robota.JournalLease):
    def __init__(self, inner: robota.JournalLease, journal: HeldAnswers) -> None:
        self._inner = inner
        self._journal = journal

    @property
    def execution_id(self) -> str:
        return self._inner.execution_id

    async def append(self, record: robota.JournalRecord) -> None:
        if isinstance(record, robota.OutsideResponded):
            self._journal.entered.set()
            await asyncio.to_thread(self._journal.go.wait, 30)
        await self._inner.append(record)

    async def release(self) -> None:
        await self._inner.release()


class HeldAnswers(robota.ExecutionJournal):
    """Delegates to ``inner``; an answer's write waits for :attr:`go`."""

    def __init__(self, inner: robota.ExecutionJournal) -> None:
        self._inner = inner
        self.entered = threading.Event()
        self.go = threading.Event()

    async def acquire(self, execution_id: str) -> robota.JournalLease:
        return _HeldLease(await self._inner.acquire(execution_id), self)

    async def read(self, execution_id: str) -> tuple[robota.JournalRecord, ...]:
        return await self._inner.read(execution_id)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _effects(directory: pathlib.Path) -> list[str]:
    path = directory / "effects.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _interrupt_of(http: httpx2.Client) -> str:
    first = agui(sse_events(http.post("/agents/a/agui", json=agui_input("t", "go")).iter_lines()))
    finished = first[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.result["status"] == "suspended"
    (interrupt,) = finished.outcome.interrupts  # type: ignore[union-attr]
    return str(interrupt.id)


def test_s40_a_new_turn_is_refused_while_the_last_answer_is_being_saved(
    tmp_path: pathlib.Path,
) -> None:
    # The answer is not durable yet: the turn still waits for it, so a new message must not
    # start a turn over the suspended one (nor the answer's continuation then run twice).
    held: list[HeldAnswers] = []

    def wrap(journal: robota.ExecutionJournal) -> robota.ExecutionJournal:
        held.append(HeldAnswers(journal))
        return held[0]

    app = durable_app(tmp_path, [*PHASES["1"], *PHASES["2"]], wrap=wrap)
    with running(app) as url, client(url) as http, ThreadPoolExecutor(1) as pool:
        ask = _interrupt_of(http)
        answering = pool.submit(
            http.post,
            f"/agents/a/sessions/t/approvals/{ask}",
            json={"approved": True, "protocol": "agui"},
        )
        assert held[0].entered.wait(30)
        try:
            other = http.post("/agents/a/agui", json=agui_input("t", "other", run_id="run-x"))
        finally:
            held[0].go.set()
        assert other.status_code == 409, other.text
        assert other.json()["error"]["code"] == "awaiting_answers"
        answer = answering.result(30)
        assert answer.status_code == 200, answer.text
        rest = agui(sse_events(http.get("/agents/a/sessions/t/stream").iter_lines()))
    finished = rest[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.result["status"] == "complete"
    assert finished.result["text"] == "done"
    assert _effects(tmp_path) == ["hey"]


def test_s40_a_session_waiting_for_answers_is_evicted_and_answered_after_reopening(
    tmp_path: pathlib.Path,
) -> None:
    # Its asks are durable (journal + session store): an abandoned ask must not pin a slot of
    # max_sessions forever, and the evicted session is answered after it is reopened.
    app = durable_app(tmp_path, [*PHASES["1"], "hi", "done"], max_sessions=1)
    with running(app) as url, client(url) as http:
        ask = _interrupt_of(http)
        other = http.post("/agents/a/agui", json=agui_input("u", "hello", run_id="run-u"))
        assert other.status_code == 200, other.text
        answer = http.post(
            f"/agents/a/sessions/t/approvals/{ask}", json={"approved": True, "protocol": "agui"}
        )
        assert answer.status_code == 200, answer.text
        rest = agui(sse_events(http.get("/agents/a/sessions/t/stream").iter_lines()))
    finished = rest[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.result["status"] == "complete"
    assert finished.result["text"] == "done"
    assert _effects(tmp_path) == ["hey"]


def test_s40_a_journaled_agent_without_a_session_store_is_answered_and_continued(
    tmp_path: pathlib.Path,
) -> None:
    # No session store: the agent's own history is the conversation; its suspended execution
    # is continued on the same agent once the ask is answered.
    journal = robota.testing.InMemoryJournal()
    effects: list[str] = []

    @robota.tool
    def shout(text: str) -> str:
        """Say it louder."""
        effects.append(text)
        return text.upper()

    provider = robota.testing.ScriptedProvider([[("shout", {"text": "hey"})], "done", "more"])

    def factory(approver: HttpApprover) -> robota.Agent:
        gate = robota.PermissionGate(robota.PermissionPolicy(ask=["shout"]), approver=approver)
        return robota.Agent("m", provider=provider, tools=[shout], tool_gate=gate, journal=journal)

    with running(create_app({"a": factory})) as url, client(url) as http:
        ask = _interrupt_of(http)
        busy = http.post("/agents/a/agui", json=agui_input("t", "other", run_id="run-x"))
        assert busy.status_code == 409
        answer = http.post(f"/agents/a/sessions/t/approvals/{ask}", json={"approved": True})
        assert answer.status_code == 200, answer.text
        rest = agui(sse_events(http.get("/agents/a/sessions/t/stream").iter_lines()))
        assert isinstance(rest[-1], RunFinishedEvent)
        assert rest[-1].result["text"] == "done"
        nxt = agui(
            sse_events(
                http.post(
                    "/agents/a/agui", json=agui_input("t", "and", run_id="run-3")
                ).iter_lines()
            )
        )
    assert isinstance(nxt[-1], RunFinishedEvent)
    assert nxt[-1].result["text"] == "more"
    assert effects == ["hey"]


def test_s40_a_sub_agents_ask_under_a_journaled_parent_is_answered_in_the_stream(
    tmp_path: pathlib.Path,
) -> None:
    # Issue 29: a child cannot suspend its caller yet, so its ask is not saved (that failed the
    # whole served run with subagent_suspended): it waits in the running stream for its POST.
    effects: list[str] = []

    @robota.tool
    def shout(text: str) -> str:
        """Say it louder."""
        effects.append(text)
        return text.upper()

    journal = robota.testing.InMemoryJournal()
    child_provider = robota.testing.ScriptedProvider([[("shout", {"text": "hey"})], "shouted"])
    parent_provider = robota.testing.ScriptedProvider([[("helper", {"input": "go"})], "done"])

    def factory(approver: HttpApprover) -> robota.Agent:
        child = robota.Agent("c", provider=child_provider, name="helper", tools=[shout])
        gate = robota.PermissionGate(robota.PermissionPolicy(ask=["shout"]), approver=approver)
        return robota.Agent(
            "p",
            provider=parent_provider,
            name="lead",
            tools=[child],
            tool_gate=gate,
            journal=journal,
        )

    with running(create_app({"a": factory})) as url, client(url) as http:
        events = []
        body = agui_input("t", "go")
        with http.stream("POST", "/agents/a/agui", json=body) as response:
            for sse in sse_events(response.iter_lines()):
                (event,) = agui([sse])
                events.append(event)
                if isinstance(event, CustomEvent) and event.name == "robota.permission_request":
                    answer = http.post(
                        f"/agents/a/sessions/t/approvals/{event.value['id']}",
                        json={"approved": True},
                    )
                    assert answer.status_code == 200, answer.text
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent), finished
    assert finished.result["status"] == "complete"
    assert finished.result["text"] == "done"
    assert effects == ["hey"]


async def test_s40_an_answer_saved_as_a_cancel_ends_the_waiting_stream_still_continues_the_turn() -> (
    None
):
    # The stream waiting in-line for the answer is cancelled (S23) and, before it wakes, the
    # last answer is saved: the POST left the turn to that stream (it was running), which now
    # ends — the turn must still go on (as when the answer comes after the stream ended), not
    # stay answered and never continued, with a new turn then started over it.
    effects: list[str] = []

    @robota.tool
    def shout(text: str) -> str:
        """Say it louder."""
        effects.append(text)
        return text.upper()

    journal = robota.testing.InMemoryJournal()
    provider = robota.testing.ScriptedProvider([[("shout", {"text": "hey"})], "done"])

    def factory(approver: HttpApprover) -> robota.Agent:
        gate = robota.PermissionGate(robota.PermissionPolicy(ask=["shout"]), approver=approver)
        return robota.Agent("m", provider=provider, tools=[shout], tool_gate=gate, journal=journal)

    conversations = Conversations(
        {"a": factory}, None, buffer_limit=1_000, max_sessions=10, approval_timeout=None
    )
    handlers = _Handlers(conversations, 10_000, None, None)
    conversation = await conversations.open("a", "t")
    run = conversations.start(conversation, "go", "chat", VercelTranslator)
    async for _, frame in run.buffer.read():
        if "data-permission-request" in frame:
            break  # announced: the stream now waits in line for the answer
    (ask,) = conversation.requests
    assert conversation.running
    run.controller.abort()  # the cancel endpoint's abort; the stream has not woken yet
    await handlers._answer(conversation, ask, {"approved": True}, None)
    assert run.task is not None
    await run.task
    latest = conversation.run
    assert latest is not None
    assert latest is not run
    assert latest.task is not None
    await latest.task
    assert effects == ["hey"]
    assert not conversation.requests
    await conversations.aclose()
