"""A Robota agent behind the A2A protocol (issue 31, item 3): the agent card and task endpoints.

:func:`build_a2a_app` makes a starlette application from the ``a2a-sdk`` building blocks — the
card route, the JSON-RPC route (A2A 1.0 methods ``SendMessage``, ``SendStreamingMessage``,
``GetTask``, ``CancelTask`` …, and their 0.3 names ``message/send``, ``message/stream``,
``tasks/get``, ``tasks/cancel`` on the same endpoint), the SDK's request handler and an
in-memory task store — around :class:`_AgentExecutor`, which runs the Robota agent once per
incoming message.

What a task carries: the text parts of the incoming message are the prompt; text deltas stream
as chunks of one artifact (``answer``), replaced at the end by the run's final text; the task
then completes. A cancel aborts the run (S23): the run settles as interrupted, the artifact holds
the text committed so far and the task ends ``canceled``. A failed run ends the task ``failed``
with a short message naming the failure's class and code — never its text, which can quote a
provider's response, and never a stack trace or a key. A malformed request's JSON-RPC error
carries its code and a fixed message only (:mod:`robota.serve._rpc_errors`): the SDK's own
error text, which quotes the client's input, never reaches the client.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, final
from urllib.parse import urlsplit

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette
from starlette.middleware import Middleware

import robota.core
from robota.serve._guard import DEFAULT_MAX_BODY_BYTES, BodyLimit, ServeConfig, ServeGuard
from robota.serve._rpc_errors import FixedRpcErrors

__all__ = ["DEFAULT_MAX_CONTEXTS", "AgentSource", "build_a2a_app"]

DEFAULT_MAX_CONTEXTS: Final = 256
"""How many conversations (A2A context ids) an app keeps in memory before dropping the oldest."""

AgentSource = robota.core.Agent | Callable[[], robota.core.Agent]
"""What :func:`robota.serve.a2a_app` serves: one agent, or a factory making one per context."""

_ARTIFACT_ID: Final = "answer"
_CARD_PATH: Final = "/.well-known/agent-card.json"
_PROTOCOL_VERSION: Final = "1.0"
_TEXT: Final = "text/plain"
_SUSPENDED: Final = (
    "the agent's run is suspended, waiting for an outside response this endpoint cannot give"
)


class _Conversations:
    """The conversations of one app, one per A2A context id, at most ``limit`` of them.

    With a factory, each context gets its own agent (runs of different contexts go on side by
    side); the least recently used one past the limit is closed. With one agent, that agent
    holds every context's history in turn: a turn installs the context's history
    (:meth:`robota.Agent.replace_history`), runs, and keeps what the run added — turns go one at
    a time, and a dropped context loses its history.
    """

    def __init__(self, source: AgentSource, limit: int) -> None:
        self._factory = None if isinstance(source, robota.core.Agent) else source
        self._shared = source if isinstance(source, robota.core.Agent) else None
        self._limit = limit
        self._agents: OrderedDict[str, robota.core.Agent] = OrderedDict()
        self._histories: OrderedDict[str, tuple[robota.core.Message, ...]] = OrderedDict()
        self._turn = asyncio.Lock()
        self._closing: set[asyncio.Task[list[BaseException]]] = set()

    @contextlib.asynccontextmanager
    async def turn(
        self, context_id: str, signal: robota.core.AbortSignal
    ) -> AsyncIterator[robota.core.Agent]:
        """The agent that holds ``context_id``'s conversation, for one turn.

        Raises :class:`~robota.AbortError` when ``signal`` aborts while the turn waits for the
        shared agent (S23: a canceled task does not wait for other contexts' turns).
        """
        if self._shared is not None:
            await self._acquire(signal)
            try:
                await self._shared.replace_history(self._histories.get(context_id, ()))
                try:
                    yield self._shared
                finally:
                    self._histories[context_id] = tuple(self._shared.history)
                    self._histories.move_to_end(context_id)
                    while len(self._histories) > self._limit:
                        self._histories.popitem(last=False)
            finally:
                self._turn.release()
            return
        agent = self._agents.get(context_id)
        if agent is None:
            assert self._factory is not None
            agent = self._factory()
            if not isinstance(agent, robota.core.Agent):
                raise TypeError(
                    f"the agent factory must return a robota.Agent, got {type(agent).__name__}"
                )
            self._agents[context_id] = agent
        self._agents.move_to_end(context_id)
        while len(self._agents) > self._limit:
            _, oldest = self._agents.popitem(last=False)
            # aclose() waits for the runs still in flight on it, then closes it.
            closing = asyncio.get_running_loop().create_task(oldest.aclose())
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)
        yield agent

    async def _acquire(self, signal: robota.core.AbortSignal) -> None:
        """Take the shared agent's turn, or raise ``AbortError`` if ``signal`` aborts first."""
        signal.throw_if_aborted()
        acquiring = asyncio.ensure_future(self._turn.acquire())
        stopping = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait((acquiring, stopping), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # cancelled while waiting: give the turn back, then re-raise
            await self._abandon(acquiring, stopping)
            raise
        if acquiring.done() and not signal.aborted:
            stopping.cancel()
            return
        await self._abandon(acquiring, stopping)
        signal.throw_if_aborted()

    async def _abandon(self, acquiring: asyncio.Future[Any], stopping: asyncio.Future[Any]) -> None:
        stopping.cancel()
        acquiring.cancel()
        await asyncio.wait((acquiring,))
        if not acquiring.cancelled() and acquiring.exception() is None:
            self._turn.release()  # it was taken just before the cancel landed

    async def aclose(self) -> None:
        """Close the agents this app made (a shared agent is the caller's and stays open)."""
        agents = list(self._agents.values())
        self._agents.clear()
        for agent in agents:
            await agent.aclose()
        if self._closing:
            await asyncio.wait(tuple(self._closing))


@dataclass(slots=True)
class _Run:
    controller: robota.core.AbortController = field(default_factory=robota.core.AbortController)
    done: asyncio.Event = field(default_factory=asyncio.Event)


def _valid(text: str) -> str:
    # A lone surrogate (a model's or tool's broken text) makes protobuf refuse the part and
    # fail the run; it becomes "?" instead.
    return text.encode("utf-8", "replace").decode("utf-8")


def _text_message(updater: TaskUpdater, text: str) -> Message:
    return updater.new_agent_message([Part(text=text)])


def _failure(error: BaseException) -> str:
    """A short, safe description of a failed run: the class and code, never the message.

    A provider error's text can quote what the vendor sent back (a request echo with headers,
    a key prefix); the class name, the stable code and the HTTP status say enough.
    """
    if isinstance(error, robota.core.ProviderError):
        status = f", HTTP {error.status}" if error.status else ""
        return f"the agent's model call failed ({error.code}{status})"
    if isinstance(error, robota.core.RobotaError):
        return f"the agent's run failed ({type(error).__name__}: {error.code})"
    return f"the agent's run failed ({type(error).__name__})"


@final
class _AgentExecutor(AgentExecutor):
    """Runs the Robota agent for each message the A2A request handler hands over."""

    def __init__(self, conversations: _Conversations) -> None:
        self._conversations = conversations
        self._runs: dict[str, _Run] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            # A new task: the SDK wants the task itself before any update of it.
            task = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            )
            if context.message is not None:
                task.history.append(context.message)
            await event_queue.enqueue_event(task)
        prompt = context.get_user_input()
        if not prompt.strip():
            await updater.reject(
                _text_message(updater, "this agent reads text: send at least one text part")
            )
            return
        run = _Run()
        self._runs[task_id] = run
        try:
            await updater.start_work()
            await self._run(prompt, context_id, run, updater)
        finally:
            self._runs.pop(task_id, None)
            run.done.set()

    async def _run(self, prompt: str, context_id: str, run: _Run, updater: TaskUpdater) -> None:
        signal = run.controller.signal
        chunks = 0
        try:
            async with (
                self._conversations.turn(context_id, signal) as agent,
                agent.run_stream(prompt, signal=signal) as stream,
            ):
                async for event in stream:
                    if isinstance(event, robota.core.TextDelta) and event.text:
                        await updater.add_artifact(
                            [Part(text=_valid(event.text))],
                            artifact_id=_ARTIFACT_ID,
                            name=_ARTIFACT_ID,
                            append=chunks > 0,
                            last_chunk=False,
                        )
                        chunks += 1
                result = await stream.result()
        except Exception as error:  # noqa: BLE001 - a run's failure becomes the task's state
            if robota.core.is_abort(error, signal):
                await updater.cancel(_text_message(updater, "interrupted"))
            else:
                await updater.failed(_text_message(updater, _failure(error)))
            return
        # The whole final text replaces the streamed chunks: a retried round's discarded text
        # (RetryStarted) must not stay in the answer.
        await updater.add_artifact(
            [Part(text=_valid(result.text))],
            artifact_id=_ARTIFACT_ID,
            name=_ARTIFACT_ID,
            append=False,
            last_chunk=True,
        )
        if result.status == "interrupted" or signal.aborted:
            # S23: an aborted run settles as interrupted, keeping the text so far.
            await updater.cancel(_text_message(updater, "interrupted"))
        elif result.status == "suspended":
            # S40: a journaled run waits for an outside response (a permission answer …) that
            # nothing on this endpoint can give; the task does not pretend it completed.
            await updater.failed(_text_message(updater, _SUSPENDED))
        else:
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        run = self._runs.get(context.task_id or "")
        if run is None:
            # Nothing running here (parked, or not started): the handler writes CANCELED.
            return
        run.controller.abort(robota.core.AbortError("the A2A task was canceled"))
        # The run settles as interrupted and `execute` writes the CANCELED state itself,
        # before the handler tears the task's queue down.
        await run.done.wait()


def _card(
    *, name: str, description: str, url: str, version: str, skills: Sequence[AgentSkill]
) -> AgentCard:
    return AgentCard(
        name=name,
        description=description,
        version=version,
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=_PROTOCOL_VERSION)
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=[_TEXT],
        default_output_modes=[_TEXT],
        skills=list(skills)
        or [AgentSkill(id="chat", name=name, description=description, tags=["chat"])],
    )


def build_a2a_app(
    agent: AgentSource,
    *,
    name: str | None,
    description: str,
    url: str,
    version: str,
    skills: Sequence[AgentSkill],
    max_contexts: int,
    allowed_hosts: Sequence[str] = (),
) -> Starlette:
    """See :func:`robota.serve.a2a_app`."""
    if not isinstance(agent, robota.core.Agent) and not callable(agent):
        raise TypeError(
            "agent must be a robota.Agent or a callable returning one (one agent per context),"
            f" got {type(agent).__name__}"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"url must be the absolute http(s) URL clients reach the agent at, got {url!r}"
        )
    limit: object = max_contexts  # untyped callers can pass anything
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_contexts must be an int of at least 1, got {max_contexts!r}")
    card_name = name or (agent.name if isinstance(agent, robota.core.Agent) else "agent")
    # The card's description is required by A2A 1.0; say at least what serves it.
    description = description or f"{card_name}: an agent served by Robota"
    card = _card(name=card_name, description=description, url=url, version=version, skills=skills)
    conversations = _Conversations(agent, max_contexts)
    handler = DefaultRequestHandler(
        agent_executor=_AgentExecutor(conversations),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    path = parts.path or "/"
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, path, enable_v0_3_compat=True),
    ]
    if path.rstrip("/"):
        # The SDK's resolver looks for the card under the agent's base path as well.
        routes += create_agent_card_routes(card, card_url=path.rstrip("/") + _CARD_PATH)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await handler.aclose()
            await conversations.aclose()

    # Issue 31: a loopback server answers only loopback ``Host`` names and the host of its own
    # ``url`` (DNS rebinding: a web page cannot reach it through a name it rebound), refuses a
    # stray bearer token, and reads no body past the limit (the SDK reads bodies whole).
    guard = ServeConfig(None)
    own = parts.hostname or "localhost"
    names: object = allowed_hosts  # untyped callers can pass anything
    entries: list[object] = [] if isinstance(names, str) else list(allowed_hosts)
    if isinstance(names, str) or not all(isinstance(h, str) and h for h in entries):
        raise ValueError(f"allowed_hosts must be a sequence of host names, got {names!r}")
    hosts = frozenset(
        form
        for host in (own, *allowed_hosts)
        for form in ((host, f"[{host}]") if ":" in host else (host,))
    )
    middleware = [
        Middleware(ServeGuard, config=guard, extra_hosts=hosts),
        Middleware(BodyLimit, limit=DEFAULT_MAX_BODY_BYTES),
        # The SDK's errors quote the client's input and its validator's text: fixed text only.
        Middleware(FixedRpcErrors),
    ]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.robota_serve = guard
    return app
