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
    RunEvent,
    RunResult,
    RunStream,
    TextDelta,
)
from robota.serve._buffer import DEFAULT_BUFFER_BYTES, RunBuffer
from robota.serve._summary import error_code
from robota.sessions import Session, SessionStore, check_session_id

__all__ = [
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


class SessionsFull(Exception):
    """A new conversation was refused: the registry holds its ``max_sessions``."""


class Translator(Protocol):
    """One protocol's view of a run (AG-UI or the UI message stream)."""

    text_encoder: Callable[[str], str] | None
    """Encodes one text-delta event of the open text; ``None`` when no text is open."""

    def start(self) -> list[str]: ...
    def open_text(self) -> tuple[list[str], Callable[[str], str]]: ...
    def event(self, event: RunEvent) -> list[str]: ...
    def permission(self, ask_id: str, tool: str, arguments: object, reason: str) -> list[str]: ...
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

    @property
    def running(self) -> bool:
        return self.run is not None and self.run.task is not None and not self.run.task.done()

    def stream(self, text: str, controller: AbortController) -> RunStream[Any]:
        if self.session is not None:
            return self.session.run_stream(text, signal=controller.signal)
        return self.agent.run_stream(text, signal=controller.signal)


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

    @property
    def full(self) -> bool:
        """Whether no new conversation may be opened."""
        return len(self._conversations) >= self._max_sessions

    def knows_agent(self, name: str) -> bool:
        return name in self._agents

    def listed(self, agent_name: str) -> list[tuple[str, bool]]:
        """``(session id, running)`` of each open conversation of ``agent_name``."""
        return [
            (sid, c.running) for (name, sid), c in self._conversations.items() if name == agent_name
        ]

    def find(self, agent_name: str, session_id: str) -> Conversation | None:
        found = self._conversations.get((agent_name, session_id))
        if found is not None:  # most recently used last: idle ones are evicted oldest first
            self._conversations[(agent_name, session_id)] = self._conversations.pop(
                (agent_name, session_id)
            )
        return found

    async def open(self, agent_name: str, session_id: str) -> Conversation:
        """The conversation ``session_id`` of ``agent_name``, created (or reopened) when new.

        Raises:
            ConfigurationError: a bad session id, or a factory that did not build an Agent.
            SessionsFull: a new conversation past ``max_sessions`` (checked under the lock,
                so concurrent openers cannot all pass it).
        """
        session_id = check_session_id(session_id)
        async with self._opening:
            key = (agent_name, session_id)
            found = self.find(agent_name, session_id)
            if found is not None:
                return found
            if self.full and not await self._evict_idle():
                raise SessionsFull
            approver = HttpApprover(self._approval_timeout)
            agent = _build(self._agents[agent_name], approver, agent_name)
            session = None
            if self._store is not None:
                session = await Session.open(agent, self._store, session_id)
            conversation = Conversation(agent_name, session_id, agent, approver, session)
            self._conversations[key] = conversation
            return conversation

    async def _evict_idle(self) -> bool:
        """Close the least recently used idle conversation to make room; ``False`` if none.

        Only with a session store, which keeps the conversation: a later request reopens it
        from there. In memory the agent's history is the conversation, so nothing is dropped.
        """
        if self._store is None:
            return False
        for key, conversation in self._conversations.items():
            if not conversation.running and not conversation.approver.pending:
                del self._conversations[key]
                if conversation.session is not None:
                    await conversation.session.aclose()
                await conversation.agent.aclose()
                return True
        return False

    def start(
        self,
        conversation: Conversation,
        text: str,
        protocol: str,
        make_translator: Callable[[str], Translator],
        run_id: str | None = None,
    ) -> ActiveRun:
        """Start a run of ``conversation`` in the background; read it from ``run.buffer``.

        ``run_id`` is the client's (AG-UI ``runId``) or, when ``None``, a minted one.
        """
        run_id = run_id or f"run-{uuid.uuid4().hex}"
        run = ActiveRun(
            run_id=run_id,
            protocol=protocol,
            translator=make_translator(run_id),
            buffer=RunBuffer(self._buffer_limit, self._buffer_bytes),
        )
        conversation.run = run
        conversation.approver.bind(run)
        run.task = asyncio.get_running_loop().create_task(_drive(conversation, run, text))
        return run

    async def aclose(self) -> None:
        """Abort every running run, wait for it, and close the sessions and agents."""
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


async def _drive(conversation: Conversation, run: ActiveRun, text: str) -> None:
    translator = run.translator
    pend = run.buffer.pend
    try:
        run.emit(translator.start())
        async with conversation.stream(text, run.controller) as stream:
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
            result = await stream.result()
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
