"""Served conversations: one agent per session id, one run at a time, asks answered by POST.

A :class:`Conversations` registry keeps a :class:`Conversation` per ``(agent name, session
id)``: the agent its factory built for that session, and — when the app was given a session
store — the :class:`robota.sessions.Session` that keeps the conversation in it (else the
agent's own history is the conversation, in memory for the life of the process). A run is a
background task that feeds a :class:`~robota.serve._buffer.RunBuffer`; the HTTP response
only reads that buffer, so a client that disconnects does not stop the run (cancel it with the
cancel endpoint, S23) and a reconnecting client continues where it left off.

Permission asks (S21): a factory that takes one argument receives an :class:`HttpApprover`
bound to its session; when the agent's gate asks, the approver writes a permission-request
event into the running stream and waits until the approvals endpoint answers it (or the run
is aborted, which refuses the call).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from robota import (
    AbortController,
    Agent,
    Approval,
    ApprovalRequest,
    Approver,
    ConfigurationError,
    OutsideRequest,
    RunEvent,
    RunResult,
    RunStream,
    TextDelta,
)
from robota.serve._buffer import DEFAULT_BUFFER_BYTES, RunBuffer
from robota.serve._summary import error_code
from robota.sessions import Session, SessionNotFoundError, SessionStore, check_session_id

__all__ = [
    "APPROVAL_KIND",
    "AgentFactory",
    "Conversation",
    "Conversations",
    "HttpApprover",
    "SessionsFull",
    "Translator",
]

_log = logging.getLogger("robota.serve")

AgentFactory: TypeAlias = Callable[[], Agent] | Callable[[Approver], Agent]
"""Builds the agent of one session: ``factory()``, or ``factory(approver)`` when its first
parameter is positional without a default (or one is named ``approver``) — the
:class:`HttpApprover` that asks the client, for a ``PermissionGate``."""

_FAILED = "the run failed"

APPROVAL_KIND = "robota.approval"
"""The kind of outside request a journaled run's permission ask is saved as (S40)."""

_MAX_REASON = 2_000


class SessionsFull(Exception):
    """A new conversation was refused: the registry holds its ``max_sessions``."""


class Translator(Protocol):
    """One protocol's view of a run (AG-UI or the UI message stream)."""

    text_encoder: Callable[[str], str] | None
    """Encodes one text-delta event of the open text; ``None`` when no text is open."""

    waits_for_answers: bool
    """Whether a suspended run's stream stays open for its answers (S40). AG-UI's does not:
    the run ends with an ``interrupt`` outcome, continued by a run with ``resume`` entries."""

    def start(self) -> list[str]: ...
    def open_text(self) -> tuple[list[str], Callable[[str], str]]: ...
    def event(self, event: RunEvent) -> list[str]: ...
    def permission(self, ask_id: str, tool: str, arguments: object, reason: str) -> list[str]: ...
    def outside_request(self, request: OutsideRequest) -> list[str]: ...
    def finish(self, result: RunResult[Any]) -> list[str]: ...
    def fail(self, code: str, message: str) -> list[str]: ...
    def done(self) -> list[str]: ...


@dataclass(eq=False)
class ActiveRun:
    """One run of a conversation: its id, abort controller, event buffer and task."""

    run_id: str
    protocol: str
    translator: Translator
    buffer: RunBuffer
    controller: AbortController = field(default_factory=AbortController)
    task: asyncio.Task[None] | None = None

    def emit(self, frames: list[str]) -> None:
        for frame in frames:
            self.buffer.push(frame)


class HttpApprover:
    """An :class:`~robota.Approver` answered over HTTP (the approvals endpoint).

    Each ask gets an id, appears in the session's running stream as a permission-request event,
    and waits until :meth:`answer` is called with that id — or the run is aborted (cancel
    endpoint, shutdown) or ``timeout`` seconds pass, which refuse the call. Asks made with no
    run streaming are refused. The app builds one per session; build your own only to test.

    A journaled agent's asks (``Agent(journal=...)``; S40) are durable instead: the ask is saved
    as an outside request of kind :data:`APPROVAL_KIND` (its id is the ask id the stream shows)
    and the execution suspends; the app waits for the answer, saves it, and resumes the run in
    the same stream — or, after the wait ended or the server restarted, when the answer comes.
    """

    def __init__(self, timeout: float | None = None) -> None:
        self._timeout = timeout
        self._run: ActiveRun | None = None
        self._pending: dict[str, asyncio.Future[Approval]] = {}

    def bind(self, run: ActiveRun | None) -> None:
        self._run = run

    @property
    def pending(self) -> tuple[str, ...]:
        """The ids of the asks waiting for an answer."""
        return tuple(self._pending)

    def answer(self, ask_id: str, approval: Approval) -> bool:
        """Answer ask ``ask_id``; ``False`` when no such ask is waiting."""
        future = self._pending.get(ask_id)
        if future is None or future.done():
            return False
        future.set_result(approval)
        return True

    async def __call__(self, request: ApprovalRequest) -> Approval:
        if request.request_outside_response is not None:
            # S40: saved and suspended the first time; the saved answer on the resumed call.
            payload = {
                "tool": request.tool.name,
                "arguments": dict(request.arguments),
                "reason": request.reason,
                "agent": request.agent,
            }
            return approval_of(await request.request_outside_response(APPROVAL_KIND, payload))
        run = self._run
        if run is None:
            return Approval(approved=False, reason="no client is connected to answer")
        ask_id = f"ask-{uuid.uuid4().hex}"
        future: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
        self._pending[ask_id] = future
        arguments = dict(request.arguments)
        run.emit(run.translator.permission(ask_id, request.tool.name, arguments, request.reason))
        signal = run.controller.signal

        def refuse(reason: object) -> None:
            if not future.done():
                future.set_result(Approval(approved=False, reason="the run was cancelled"))

        if signal.aborted:
            refuse(None)
        unsubscribe = signal.add_listener(refuse)
        try:
            return await asyncio.wait_for(future, self._timeout)
        except TimeoutError:
            return Approval(approved=False, reason="no answer came in time")
        finally:
            unsubscribe()
            self._pending.pop(ask_id, None)


def approval_of(answer: object) -> Approval:
    """The :class:`~robota.Approval` a saved answer stands for; anything else refuses."""
    if isinstance(answer, dict) and isinstance(answer.get("approved"), bool):
        reason = answer.get("reason")
        return Approval(
            approved=answer["approved"],
            remember=answer.get("remember") is True,
            reason=reason[:_MAX_REASON] if isinstance(reason, str) else "",
        )
    return Approval(approved=False, reason="the saved answer was not an approval")


@dataclass(eq=False)
class Conversation:
    """One session of one agent, and its current or last run."""

    agent_name: str
    session_id: str
    agent: Agent
    approver: HttpApprover
    session: Session | None = None
    run: ActiveRun | None = None
    state: Any = None
    requests: dict[str, OutsideRequest] = field(default_factory=dict)
    """S40: the outside requests (asks included) the suspended turn waits for, by id."""
    execution_id: str | None = None
    """The suspended execution, for an agent served without a session store."""
    protocol: str = "chat"
    """The protocol of the latest run (a continuation started by an answer streams in it)."""
    answering: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while answers are saved and the continuation they allow is started (S40): two
    POSTs never both start it, and a new turn never starts over an answer being saved."""
    _answered: asyncio.Event | None = None

    @property
    def running(self) -> bool:
        return self.run is not None and self.run.task is not None and not self.run.task.done()

    def stream(self, text: str | None, controller: AbortController) -> RunStream[Any]:
        """The turn for ``text``, or (``None``) the suspended turn's continuation (S40)."""
        signal = controller.signal
        if self.session is not None:
            if text is None:
                return self.session.resume_stream(signal=signal)
            return self.session.run_stream(text, signal=signal)
        if text is None:
            assert self.execution_id is not None  # the caller checked it suspended
            return self.agent.resume_stream(self.execution_id, signal=signal)
        return self.agent.run_stream(text, signal=signal)

    def suspended(self, result: RunResult[Any]) -> None:
        """Keep what a suspended run waits for."""
        self.requests = {request.id: request for request in result.pending_requests}
        self.execution_id = result.execution_id

    async def respond(self, request_id: str, response: object) -> bool:
        """Save the answer to one waiting request (S40); ``False`` when none has that id.

        Durable on return. When it was the last one, a run waiting for answers goes on.

        The caller holds :attr:`answering`. The request stays waiting until its answer is
        durable: a new turn meanwhile is refused, and it is gone from :attr:`requests` only
        once nothing can lose the answer.

        Raises:
            Any error of ``Session.respond`` / ``Agent.respond`` (the request was already
            answered elsewhere, the journal failed): the request stays waiting.
        """
        if request_id not in self.requests:
            return False
        if self.session is not None:
            await self.session.respond(request_id, response)
        else:
            assert self.execution_id is not None
            await self.agent.respond(self.execution_id, request_id, response)
        del self.requests[request_id]
        if not self.requests and self._answered is not None:
            self._answered.set()
        return True

    async def wait_answers(self, run: ActiveRun, patience: float | None) -> bool:
        """Wait until every request is answered; ``False`` on abort or after ``patience`` s."""
        answered = self._answered = asyncio.Event()
        if not self.requests:
            return True
        signal = run.controller.signal
        unsubscribe = signal.add_listener(lambda reason: answered.set())
        try:
            await asyncio.wait_for(answered.wait(), patience)
        except TimeoutError:
            pass  # answered as the time ran out: the answer's POST left the turn to this run
        finally:
            unsubscribe()
            self._answered = None
        return not self.requests and not signal.aborted


class Conversations:
    """Every served conversation, by ``(agent name, session id)``; see the module docstring."""

    def __init__(
        self,
        agents: Mapping[str, AgentFactory],
        store: SessionStore | None,
        *,
        buffer_limit: int,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
        max_sessions: int,
        approval_timeout: float | None,
    ) -> None:
        self._approval_timeout = approval_timeout
        self._max_sessions = max_sessions
        self._agents = dict(agents)
        self._store = store
        self._buffer_limit = buffer_limit
        self._buffer_bytes = buffer_bytes
        self._conversations: dict[tuple[str, str], Conversation] = {}
        self._opening = asyncio.Lock()
        # One lock per session being opened (with how many wait on it), and the sessions
        # being opened: counted as held, so openers cannot pass max_sessions together.
        self._key_locks: dict[tuple[str, str], list[Any]] = {}
        self._reserved: set[tuple[str, str]] = set()
        self._closing = False

    @property
    def full(self) -> bool:
        """Whether no new conversation may be opened."""
        return len(self._conversations) + len(self._reserved) >= self._max_sessions

    def knows_agent(self, name: str) -> bool:
        return name in self._agents

    def listed(self, agent_name: str) -> list[tuple[str, bool]]:
        """``(session id, running)`` of each open conversation of ``agent_name``."""
        return [
            (sid, c.running) for (name, sid), c in self._conversations.items() if name == agent_name
        ]

    async def reopen(self, agent_name: str, session_id: str) -> Conversation | None:
        """A conversation already open, or one the session store holds (after a restart).

        ``None`` when neither: a request naming a session never creates it.
        """
        found = self.find(agent_name, session_id)
        if found is not None or self._store is None:
            return found
        try:
            session_id = check_session_id(session_id)
            await self._store.load_after(session_id, 0)
        except (ConfigurationError, SessionNotFoundError):
            return None
        return await self.open(agent_name, session_id)

    def find(self, agent_name: str, session_id: str) -> Conversation | None:
        found = self._conversations.get((agent_name, session_id))
        if found is not None:  # most recently used last: idle ones are evicted oldest first
            self._conversations[(agent_name, session_id)] = self._conversations.pop(
                (agent_name, session_id)
            )
        return found

    async def open(self, agent_name: str, session_id: str) -> Conversation:
        """The conversation ``session_id`` of ``agent_name``, created (or reopened) when new.

        Openers of one session wait for each other; openers of others do not — opening may
        continue a turn a crash left pending (S40), which takes as long as that turn. Room is
        reserved under one short lock, so concurrent openers cannot pass ``max_sessions``.

        Raises:
            ConfigurationError: a bad session id, or a factory that did not build an Agent.
            SessionsFull: a new conversation past ``max_sessions``.
        """
        session_id = check_session_id(session_id)
        key = (agent_name, session_id)
        found = self.find(agent_name, session_id)
        if found is not None:
            return found
        held = self._key_locks.get(key)
        if held is None:
            held = self._key_locks[key] = [asyncio.Lock(), 0]
        held[1] += 1
        try:
            async with held[0]:
                found = self.find(agent_name, session_id)
                if found is not None:
                    return found
                async with self._opening:  # the room, reserved
                    if self.full and not await self._evict_idle():
                        raise SessionsFull
                    self._reserved.add(key)
                try:
                    conversation = await self._opened(agent_name, session_id)
                finally:
                    self._reserved.discard(key)
                self._conversations[key] = conversation
                return conversation
        finally:
            held[1] -= 1
            if held[1] == 0:
                del self._key_locks[key]

    async def _opened(self, agent_name: str, session_id: str) -> Conversation:
        approver = HttpApprover(self._approval_timeout)
        agent = _build(self._agents[agent_name], approver, agent_name)
        session = None
        if self._store is not None:
            session = await Session.open(agent, self._store, session_id)
        conversation = Conversation(agent_name, session_id, agent, approver, session)
        if session is not None:  # S40: a turn left suspended (before a restart) still waits
            conversation.requests = {r.id: r for r in session.pending_requests}
        return conversation

    async def _evict_idle(self) -> bool:
        """Close the least recently used idle conversation to make room; ``False`` if none.

        Only with a session store, which keeps the conversation: a later request reopens it
        from there. In memory the agent's history is the conversation, so nothing is dropped.
        """
        if self._store is None:
            return False
        for key, conversation in self._conversations.items():
            # S40: a turn waiting for answers is kept by the journal and the store (an
            # abandoned ask must not hold a slot forever); one being answered is not idle.
            if (
                not conversation.running
                and not conversation.approver.pending
                and not conversation.answering.locked()
            ):
                del self._conversations[key]
                if conversation.session is not None:
                    await conversation.session.aclose()
                await conversation.agent.aclose()
                return True
        return False

    def start(
        self,
        conversation: Conversation,
        text: str | None,
        protocol: str,
        make_translator: Callable[[str], Translator],
        run_id: str | None = None,
    ) -> ActiveRun:
        """Start a run of ``conversation`` in the background; read it from ``run.buffer``.

        ``run_id`` is the client's (AG-UI ``runId``) or, when ``None``, a minted one;
        ``text=None`` continues the suspended turn once its requests are answered (S40).
        """
        run_id = run_id or f"run-{uuid.uuid4().hex}"
        run = ActiveRun(
            run_id=run_id,
            protocol=protocol,
            translator=make_translator(run_id),
            buffer=RunBuffer(self._buffer_limit, self._buffer_bytes),
        )
        conversation.run = run
        conversation.protocol = protocol
        conversation.approver.bind(run)
        run.task = asyncio.get_running_loop().create_task(
            _drive(conversation, run, text, self._approval_timeout, self._hand_off(make_translator))
        )
        return run

    def _hand_off(
        self, make_translator: Callable[[str], Translator]
    ) -> Callable[[Conversation], None]:
        """What a stream that ends with its turn answered but not continued calls (S40).

        Its wait was aborted (cancel) just as the last answer was saved: the answer's POST left
        the turn to that stream, so the continuation starts now as the session's next run, as
        when the answer comes after the stream ended — but not while the app shuts down (a
        session store's turn is then continued when the session is next opened).
        """

        def hand_off(conversation: Conversation) -> None:
            if not self._closing:
                self.start(conversation, None, conversation.protocol, make_translator)

        return hand_off

    async def aclose(self) -> None:
        """Abort every running run, wait for it, and close the sessions and agents."""
        self._closing = True
        conversations = list(self._conversations.values())
        self._conversations.clear()
        tasks = []
        for conversation in conversations:
            run = conversation.run
            if run is not None and run.task is not None and not run.task.done():
                run.controller.abort()
                tasks.append(run.task)
        if tasks:
            await asyncio.wait(tasks)
        for conversation in conversations:
            if conversation.session is not None:
                await conversation.session.aclose()
            await conversation.agent.aclose()


def _approver_call(signature: inspect.Signature) -> str | None:
    # A parameter named `approver` (passed by name), or a first positional one without a
    # default: a factory like `def make(count=3)` is still called with no argument.
    if "approver" in signature.parameters:
        return "keyword"
    first = next(iter(signature.parameters.values()), None)
    if (
        first is not None
        and first.kind in {first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD}
        and first.default is first.empty
    ):
        return "positional"
    return None


def _build(factory: AgentFactory, approver: HttpApprover, name: str) -> Agent:
    try:
        call = _approver_call(inspect.signature(factory))
    except (TypeError, ValueError):
        call = None
    if call == "keyword":
        agent = factory(approver=approver)  # type: ignore[call-arg]
    elif call == "positional":
        agent = factory(approver)  # type: ignore[call-arg]
    else:
        agent = factory()  # type: ignore[call-arg]
    if not isinstance(agent, Agent):
        raise ConfigurationError(
            f"the factory for agent {name!r} must return a robota.Agent, got {agent!r}"
        )
    return agent


async def _drive(
    conversation: Conversation,
    run: ActiveRun,
    text: str | None,
    patience: float | None,
    hand_off: Callable[[Conversation], None],
) -> None:
    translator = run.translator
    answered = False  # the turn ended suspended, yet every request is answered (S40)
    try:
        run.emit(translator.start())
        result = await _pump(run, conversation.stream(text, run.controller))
        while result.status == "suspended":
            # S40: a saved ask or outside request. Announce each; answered while this stream
            # waits, the turn goes on in it; else the stream ends and an answer continues it.
            conversation.suspended(result)
            for request in result.pending_requests:
                run.emit(_announce(translator, request))
            if not translator.waits_for_answers or not await conversation.wait_answers(
                run, patience
            ):
                answered = not conversation.requests  # a cancel raced the last answer
                break
            result = await _pump(run, conversation.stream(None, run.controller))
        run.emit(translator.finish(result))
    except asyncio.CancelledError:
        run.emit(translator.fail("aborted", _FAILED))
        raise
    except Exception as exc:  # noqa: BLE001 - reported to the client as a code, never raised
        code = error_code(exc)
        # Never the message: it may hold a provider's response or a key (issue 31).
        _log.warning("served run %s failed: %s (%s)", run.run_id, type(exc).__name__, code)
        run.emit(translator.fail(code, _FAILED))
    finally:
        conversation.approver.bind(None)
        run.emit(translator.done())
        run.buffer.close()
        if answered and conversation.run is run:
            hand_off(conversation)


async def _pump(run: ActiveRun, stream: RunStream[Any]) -> RunResult[Any]:
    """Translate ``stream``'s events into ``run``'s buffer; its result."""
    translator = run.translator
    pend = run.buffer.pend
    async with stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                # The hot path (issue 31): a delta is queued text, coalesced with the
                # deltas after it into one event when the reader is behind (_buffer).
                if event.text:
                    encode = translator.text_encoder
                    if encode is None:
                        frames, encode = translator.open_text()
                        run.emit(frames)
                    pend(event.text, encode)
                continue
            run.emit(translator.event(event))
        return await stream.result()


def _announce(translator: Translator, request: OutsideRequest) -> list[str]:
    """The event a waiting request is shown as: a permission ask, or an outside request."""
    payload = request.payload
    if request.kind == APPROVAL_KIND and isinstance(payload, dict):
        reason = payload.get("reason")
        return translator.permission(
            request.id,
            request.tool_name or "",
            payload.get("arguments"),
            reason if isinstance(reason, str) else "",
        )
    return translator.outside_request(request)
