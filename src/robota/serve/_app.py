"""``create_app``: the ASGI app (starlette) that serves agents over AG-UI and the Vercel stream.

Paths (``{name}`` is a key of ``agents``, ``{session_id}`` a conversation's id):

* ``POST /agents/{name}/agui`` — body: an AG-UI ``RunAgentInput`` (``threadId`` is the session
  id; the last ``user`` message is the turn's input; ``state`` is kept and echoed). Answers an
  SSE stream of AG-UI events. The server keeps the conversation: earlier ``messages`` are not
  read, and client-side ``tools`` and ``context`` are not supported yet. A body with ``resume``
  entries answers the interrupts a suspended run ended with (S40) and streams the continuation.
* ``POST /agents/{name}/chat`` — body: ``useChat``'s ``{"id", "messages": [{"role", "parts":
  [{"type": "text", "text"}]}]}`` (``id`` is the session id; the last ``user`` message is the
  input). Answers a UI message stream (``x-vercel-ai-ui-message-stream: v1``).
* ``GET /agents/{name}/sessions/{session_id}/stream`` — the session's latest run again, from
  the event after the SSE ``Last-Event-ID`` header (all of it without one).
* ``POST /agents/{name}/sessions/{session_id}/cancel`` — abort the running run (S23): its
  stream ends with the text so far and the protocol's finish event (202).
* ``POST /agents/{name}/sessions/{session_id}/approvals/{ask_id}`` — body ``{"approved":
  bool, "reason"?: str, "protocol"?: "agui"|"chat"}``: answer a permission ask the stream
  announced (200, ``{"answered": true, "runId"}``). A journaled agent's ask (S40) is saved
  durably and may be answered after the stream ended or the server restarted; the last answer
  then starts the continuation (``runId``; read it at ``.../stream``, in ``protocol``, else
  the session's last run's).
* ``POST /agents/{name}/sessions/{session_id}/responses/{request_id}`` — body ``{"response":
  <JSON>}``: answer a tool's outside request (``ctx.request_outside_response``, S40), as above.
* ``GET /agents/{name}/sessions`` (with ``console=True`` only: a session id is what guards a
  session, so an app serving clients never lists them) — ``{"sessions": [{"id", "running"}]}``:
  the sessions this app has open for the agent (not every session a store holds).
* With ``console=True``: the web console at ``GET /`` (see :mod:`robota.serve._console`) and,
  given ``journal=``, ``GET /console/executions/{id}`` (see :mod:`robota.serve._inspect`).

Status codes: 400 malformed JSON or body (or one nested over 64 deep), 401 missing or wrong
token, 403 a non-loopback ``Host`` on a loopback-only server, an unlisted ``Origin``, or a POST
whose ``Origin`` is neither the app's own nor one of ``cors_origins`` (``origin_not_allowed``: a
page on another site cannot start a run or answer an ask), 404 unknown agent, session, run, ask,
request or interrupt, 408 ``body_timeout`` a body not received in full within ``body_timeout``
seconds (the connection is then closed), 409 a run already going (or none to cancel, an AG-UI
``runId`` the session's last run had, a turn waiting for answers — ``awaiting_answers`` — or an
answer the journal refused), 413 body over ``max_body_bytes``, 415 a POST body declared as
anything but JSON, 500
``agent_unavailable`` (the factory or the session store failed), 503 past ``max_sessions``.
Error bodies are ``{"error": {"code", "message"}}`` and never carry an exception's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ag_ui.core import ResumeEntry, RunAgentInput
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from robota import Approval, ConfigurationError, ExecutionJournal, OutsideRequest, RobotaError
from robota.serve._agui import AguiTranslator
from robota.serve._buffer import DEFAULT_BUFFER_BYTES, wire_bytes
from robota.serve._console import console_routes
from robota.serve._guard import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    ServeConfig,
    ServeGuard,
    body_timeout_error,
    error_body,
)
from robota.serve._inspect import journal_routes
from robota.serve._runs import (
    APPROVAL_KIND,
    ActiveRun,
    AgentFactory,
    Conversation,
    Conversations,
    SessionsFull,
    Translator,
)
from robota.serve._vercel import UI_MESSAGE_STREAM_HEADER, VercelTranslator
from robota.sessions import SessionStore, check_session_id

__all__ = ["DEFAULT_BODY_TIMEOUT", "DEFAULT_MAX_BODY_BYTES", "MIN_TOKEN_LENGTH", "create_app"]

_log = logging.getLogger("robota.serve")

MIN_TOKEN_LENGTH = 16
"""The shortest bearer token an app accepts."""

MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects a request body may have (400 ``too_deep``)."""

_TOO_DEEP = f"the body nests arrays or objects more than {MAX_JSON_DEPTH} deep"

_EVENT_NUMBER = re.compile("[0-9]{1,18}")


class _BadRequest(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _error(status: int, code: str, message: str) -> Response:
    # 408: the unread rest of the body would be read as the next request; end the connection.
    headers = {"connection": "close"} if status == 408 else None
    return Response(
        error_body(code, message),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def _is_json(content_type: str) -> bool:
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def _read_json(request: Request, limit: int, seconds: float | None) -> Any:
    content_type = request.headers.get("content-type")
    if content_type is not None and not _is_json(content_type):
        # A JSON body declared as anything else is what a cross-site form or text/plain fetch
        # sends (no preflight): refused, so only a preflighted (CORS-checked) page may post.
        raise _BadRequest(
            415, "unsupported_media_type", "send the body as 'Content-Type: application/json'"
        )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _BadRequest(413, "body_too_large", f"the body is limited to {limit} bytes")
    body = bytearray()
    try:
        # The whole body within ``timeout``: a trickled or stalled body does not hold the
        # request's task (and its connection) forever.
        async with asyncio.timeout(seconds):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise _BadRequest(
                        413, "body_too_large", f"the body is limited to {limit} bytes"
                    )
    except TimeoutError:
        assert seconds is not None  # only a limit times out
        raise _BadRequest(*body_timeout_error(seconds)) from None
    try:
        value = json.loads(body)
    except RecursionError:
        raise _BadRequest(400, "too_deep", _TOO_DEEP) from None
    except (ValueError, UnicodeDecodeError):
        raise _BadRequest(400, "malformed_json", "the body is not valid JSON") from None
    if _depth_over(value, MAX_JSON_DEPTH):
        # A shallower parse still passes, but validating or echoing it (AG-UI ``state``)
        # recurses again, deeper in the stack: refuse it here, with a clear 400.
        raise _BadRequest(400, "too_deep", _TOO_DEEP)
    return value


def _depth_over(value: object, limit: int) -> bool:
    # Iterative, so the check itself cannot exhaust the stack.
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _agui_text(payload: RunAgentInput) -> str:
    for message in reversed(payload.messages):
        if message.role != "user":
            continue
        content: object = message.content
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [getattr(part, "text", None) for part in content]
            return "\n\n".join(t for t in texts if isinstance(t, str))
    raise _BadRequest(400, "no_user_message", "messages has no 'user' message to answer")


async def _respond(
    conversation: Conversation, request_id: str, answer: object, refusal: str
) -> bool:
    """Save ``answer`` (S40); a refusal of the store is a 409 with ``refusal``, never its text."""
    try:
        return await conversation.respond(request_id, answer)
    except RobotaError as exc:
        _log.warning("answering %s failed: %s", request_id, type(exc).__name__)
        raise _BadRequest(409, "not_answerable", refusal) from None


def _resume_answer(waiting: OutsideRequest, entry: ResumeEntry) -> object:
    """The response an AG-UI resume entry gives a waiting request (S40)."""
    if waiting.kind != APPROVAL_KIND:
        return entry.payload if entry.status == "resolved" else None
    if entry.status != "resolved":
        return {"approved": False, "reason": "the client cancelled the interrupt"}
    given = entry.payload
    if isinstance(given, bool):
        return {"approved": given, "reason": ""}
    if isinstance(given, dict) and isinstance(given.get("approved"), bool):
        reason = given.get("reason")
        return {
            "approved": given["approved"],
            "reason": reason if isinstance(reason, str) else "",
            "remember": given.get("remember") is True,
        }
    raise _BadRequest(
        400, "invalid_resume", 'an approval is answered with {"approved": true|false}'
    )


def _chat_request(body: object) -> tuple[str, str]:
    if not isinstance(body, dict):
        raise _BadRequest(400, "invalid_body", "the body must be a JSON object")
    chat_id = body.get("id")
    messages = body.get("messages")
    if not isinstance(chat_id, str) or not chat_id:
        raise _BadRequest(400, "invalid_body", "'id' (the chat id) must be a non-empty string")
    if not isinstance(messages, list):
        raise _BadRequest(400, "invalid_body", "'messages' must be a list")
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        parts = message.get("parts")
        if isinstance(parts, list):
            texts = [
                p["text"]
                for p in parts
                if isinstance(p, dict)
                and p.get("type") == "text"
                and isinstance(p.get("text"), str)
            ]
            return chat_id, "\n\n".join(texts)
        if isinstance(message.get("content"), str):
            return chat_id, str(message["content"])
        raise _BadRequest(400, "invalid_body", "the last user message has no text parts")
    raise _BadRequest(400, "no_user_message", "messages has no 'user' message to answer")


def _sse(run: ActiveRun, after: int, heartbeat: float | None) -> StreamingResponse:
    async def frames() -> AsyncIterator[bytes]:
        prefix = f"id: {run.run_id}:"
        async for batch in run.buffer.read_batches(after, idle=heartbeat):
            if not batch:
                yield b": keep-alive\n\n"  # an SSE comment: clients ignore it, proxies see traffic
                continue
            yield wire_bytes("".join(f"{prefix}{n}\ndata: {data}\n\n" for n, data in batch))

    headers = {"cache-control": "no-cache", "x-accel-buffering": "no"}
    if run.protocol == "chat":
        headers[UI_MESSAGE_STREAM_HEADER[0]] = UI_MESSAGE_STREAM_HEADER[1]
    return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)


T = TypeVar("T")


class _Handlers:
    def __init__(
        self,
        conversations: Conversations,
        max_body_bytes: int,
        body_timeout: float | None,
        heartbeat: float | None,
    ) -> None:
        self._conversations = conversations
        self._limit = max_body_bytes
        self._body_timeout = body_timeout
        self._heartbeat = heartbeat

    async def _json(self, request: Request) -> Any:
        return await _read_json(request, self._limit, self._body_timeout)

    def _agent_name(self, request: Request) -> str:
        name = str(request.path_params["name"])
        if not self._conversations.knows_agent(name):
            raise _BadRequest(404, "unknown_agent", "no agent is served under that name")
        return name

    async def sessions(self, request: Request) -> Response:
        listed = self._conversations.listed(self._agent_name(request))
        return JSONResponse({"sessions": [{"id": i, "running": r} for i, r in listed]})

    def _existing(self, request: Request) -> Conversation:
        name = self._agent_name(request)
        found = self._conversations.find(name, str(request.path_params["session_id"]))
        if found is None:
            raise _BadRequest(404, "unknown_session", "no such session")
        return found

    async def _opened(self, name: str, opening: Awaitable[T]) -> T:
        """``opening``'s conversation; its failures as client-safe errors (503, 500)."""
        try:
            return await opening
        except SessionsFull:
            raise _BadRequest(
                503, "too_many_sessions", "the server holds its maximum of sessions"
            ) from None
        except Exception as exc:  # noqa: BLE001 - a factory's or store's text never reaches a client
            _log.warning("opening session of agent %r failed: %s", name, type(exc).__name__)
            raise _BadRequest(500, "agent_unavailable", "the agent could not be started") from None

    async def _reopened(self, name: str, session_id: str) -> Conversation:
        """An open conversation, or one the session store holds (S40: after a restart)."""
        found = await self._opened(name, self._conversations.reopen(name, session_id))
        if found is None:
            raise _BadRequest(404, "unknown_session", "no such session")
        return found

    def _translator(self, conversation: Conversation, protocol: str) -> Callable[[str], Translator]:
        if protocol == "agui":
            thread_id, state = conversation.session_id, conversation.state
            return lambda run_id: AguiTranslator(thread_id, run_id, state)
        return VercelTranslator

    async def _answer(
        self, conversation: Conversation, request_id: str, response: object, protocol: object
    ) -> Response:
        """Save an answer to a waiting request (S40); the last one continues the turn."""
        async with conversation.answering:
            answered = await _respond(
                conversation,
                request_id,
                response,
                "the request could not be answered (answered already?)",
            )
            if not answered:
                raise _BadRequest(404, "unknown_request", "no such request is waiting")
            run_id = None
            if not conversation.requests and not conversation.running:
                # Nobody's stream waits (it ended, or the server restarted): the continuation
                # runs now, readable at the session's stream endpoint.
                chosen = protocol if protocol in ("agui", "chat") else conversation.protocol
                run = self._conversations.start(
                    conversation, None, chosen, self._translator(conversation, chosen)
                )
                run_id = run.run_id
        return JSONResponse({"answered": True, "runId": run_id})

    async def _start(
        self,
        name: str,
        session_id: str,
        text: str,
        protocol: str,
        make_translator: Callable[[str], Translator],
        run_id: str | None = None,
    ) -> tuple[Conversation, ActiveRun]:
        try:
            check_session_id(session_id)
        except ConfigurationError:
            raise _BadRequest(400, "invalid_session_id", "the session id is not valid") from None
        if not text.strip():
            raise _BadRequest(400, "empty_message", "the last user message has no text")
        conversation = await self._opened(name, self._conversations.open(name, session_id))
        if conversation.running:
            raise _BadRequest(409, "session_busy", "a run of this session is still going")
        if conversation.requests:
            raise _BadRequest(
                409,
                "awaiting_answers",
                "the session's turn is waiting for answers to "
                + ", ".join(sorted(conversation.requests)),
            )
        run = self._conversations.start(conversation, text, protocol, make_translator, run_id)
        return conversation, run

    async def agui(self, request: Request) -> Response:
        name = self._agent_name(request)
        body = await self._json(request)
        try:
            payload = RunAgentInput.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise _BadRequest(
                400, "invalid_body", f"not an AG-UI RunAgentInput: {where}: {first['msg']}"
            ) from None
        try:
            # The run id names the stream's events (SSE ``id:``): no control characters.
            check_session_id(payload.run_id)
        except ConfigurationError:
            raise _BadRequest(400, "invalid_run_id", "the run id is not valid") from None
        if payload.resume:
            return await self._agui_resume(name, payload)
        text = _agui_text(payload)
        found = self._conversations.find(name, payload.thread_id)
        if found is not None and found.run is not None and found.run.run_id == payload.run_id:
            # Event ids are "runId:n": a reused run id would make a reconnect ambiguous.
            raise _BadRequest(409, "run_id_reused", "this session already ran a run of that id")
        state = payload.state if payload.state is not None else (found and found.state)
        thread_id = payload.thread_id
        conversation, run = await self._start(
            name,
            thread_id,
            text,
            "agui",
            lambda run_id: AguiTranslator(thread_id, run_id, state),
            payload.run_id,
        )
        conversation.state = state
        return _sse(run, -1, self._heartbeat)

    async def _agui_resume(self, name: str, payload: RunAgentInput) -> Response:
        """A run whose ``resume`` entries answer the interrupts a suspended run ended with."""
        conversation = await self._reopened(name, payload.thread_id)
        async with conversation.answering:  # S40: one continuation, never over a new turn
            return await self._agui_answer(conversation, payload)

    async def _agui_answer(self, conversation: Conversation, payload: RunAgentInput) -> Response:
        if conversation.running:
            raise _BadRequest(409, "session_busy", "a run of this session is still going")
        if conversation.run is not None and conversation.run.run_id == payload.run_id:
            raise _BadRequest(409, "run_id_reused", "this session already ran a run of that id")
        answers: list[tuple[str, object]] = []
        for entry in payload.resume or ():
            waiting = conversation.requests.get(entry.interrupt_id)
            if waiting is None:
                raise _BadRequest(404, "unknown_interrupt", "a resume entry names no interrupt")
            answers.append((entry.interrupt_id, _resume_answer(waiting, entry)))
        for request_id, answer in answers:
            await _respond(conversation, request_id, answer, "an interrupt could not be answered")
        if payload.state is not None:
            conversation.state = payload.state
        # Still waiting for others: the continuation ends at once with the ones left.
        run = self._conversations.start(
            conversation, None, "agui", self._translator(conversation, "agui"), payload.run_id
        )
        return _sse(run, -1, self._heartbeat)

    async def chat(self, request: Request) -> Response:
        name = self._agent_name(request)
        chat_id, text = _chat_request(await self._json(request))
        _, run = await self._start(name, chat_id, text, "chat", VercelTranslator)
        return _sse(run, -1, self._heartbeat)

    async def stream(self, request: Request) -> Response:
        conversation = self._existing(request)
        run = conversation.run
        if run is None:
            raise _BadRequest(404, "no_run", "this session has no run to read")
        after = -1
        last = request.headers.get("last-event-id")
        if last:
            run_id, _, number = last.rpartition(":")
            # ASCII digits, at most 18 (str.isdigit() takes "²", which int() refuses: a 500).
            if run_id != run.run_id or not _EVENT_NUMBER.fullmatch(number):
                raise _BadRequest(404, "unknown_event", "Last-Event-ID names no event of this run")
            after = int(number)
        return _sse(run, after, self._heartbeat)

    async def cancel(self, request: Request) -> Response:
        conversation = self._existing(request)
        run = conversation.run
        if run is None or not conversation.running:
            raise _BadRequest(409, "no_active_run", "this session has no run going")
        run.controller.abort()  # S23: the run ends interrupted with what it received
        return JSONResponse({"cancelled": True, "runId": run.run_id}, status_code=202)

    async def approve(self, request: Request) -> Response:
        name = self._agent_name(request)
        body = await self._json(request)
        if not isinstance(body, dict) or not isinstance(body.get("approved"), bool):
            raise _BadRequest(400, "invalid_body", 'the body must be {"approved": true|false}')
        conversation = await self._reopened(name, str(request.path_params["session_id"]))
        reason = body.get("reason")
        reason = reason if isinstance(reason, str) else ""
        ask_id = str(request.path_params["ask_id"])
        waiting = conversation.requests.get(ask_id)
        if waiting is not None:  # S40: a journaled agent's saved ask
            if waiting.kind != APPROVAL_KIND:
                raise _BadRequest(
                    409, "not_an_ask", "that request is answered at its responses endpoint"
                )
            answer = {"approved": body["approved"], "reason": reason}
            return await self._answer(conversation, ask_id, answer, body.get("protocol"))
        approval = Approval(approved=body["approved"], reason=reason)
        if not conversation.approver.answer(ask_id, approval):
            raise _BadRequest(404, "unknown_ask", "no such permission request is waiting")
        return JSONResponse({"answered": True, "runId": None})

    async def respond(self, request: Request) -> Response:
        name = self._agent_name(request)
        body = await self._json(request)
        if not isinstance(body, dict) or "response" not in body:
            raise _BadRequest(400, "invalid_body", 'the body must be {"response": <JSON>}')
        conversation = await self._reopened(name, str(request.path_params["session_id"]))
        request_id = str(request.path_params["request_id"])
        waiting = conversation.requests.get(request_id)
        if waiting is None:
            raise _BadRequest(404, "unknown_request", "no such request is waiting")
        if waiting.kind == APPROVAL_KIND:
            raise _BadRequest(
                409, "is_an_ask", "that request is answered at its approvals endpoint"
            )
        return await self._answer(conversation, request_id, body["response"], body.get("protocol"))


def _route(path: str, endpoint: Any, methods: Sequence[str]) -> Route:
    # A cross-site POST (CSRF) is refused before any route by ServeGuard's Origin check.
    async def guarded(request: Request) -> Response:
        try:
            response: Response = await endpoint(request)
        except _BadRequest as exc:
            return _error(exc.status, exc.code, exc.message)
        return response

    return Route(path, guarded, methods=list(methods))


def create_app(
    agents: Mapping[str, AgentFactory],
    *,
    sessions: SessionStore | None = None,
    token: str | None = None,
    cors_origins: Sequence[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    stream_buffer: int = 10_000,
    stream_buffer_bytes: int = DEFAULT_BUFFER_BYTES,
    max_sessions: int = 10_000,
    approval_timeout: float | None = 600.0,
    heartbeat: float | None = 15.0,
    console: bool = False,
    journal: ExecutionJournal | None = None,
) -> Starlette:
    """An ASGI app serving ``agents`` over AG-UI and the Vercel AI SDK UI message stream.

    Args:
        agents: Agent name (the ``{name}`` of every path) → factory. A factory is called once
            per session and returns a fresh :class:`~robota.Agent`: ``factory()``, or
            ``factory(approver)`` when it takes one argument — then pass ``approver`` to a
            ``PermissionGate`` and its asks are answered by the approvals endpoint.
        sessions: A :class:`robota.sessions.SessionStore`: each session id is a
            :class:`robota.sessions.Session` kept in it. ``None``: each session is its agent's
            history, in memory for the life of the app.
        token: The bearer token every request must carry (required to serve beyond loopback,
            see :func:`robota.serve.serve`; at least 16 characters).
        cors_origins: Origins a browser may call from; none by default (CORS closed). A
            request carrying any other ``Origin`` than the app's own is refused (403).
        max_body_bytes: The request body limit (413 over it).
        body_timeout: Seconds a request's whole body may take to arrive (30 by default; ``None``:
            no limit). A client that sends its headers and then trickles or stalls the body
            gets a 408 ``body_timeout`` and its connection is closed; others are served
            meanwhile.
        stream_buffer: How many events of a run are kept for reconnecting readers.
        stream_buffer_bytes: How many bytes (UTF-8) of a run's events are kept, 8 MiB by
            default (the newest event is kept even when larger alone). Past either bound the
            oldest events go: a client reconnecting with an older ``Last-Event-ID`` continues
            from the oldest event kept (the ones between are skipped, without an error).
        max_sessions: How many sessions the app holds open. Past it, with ``sessions``, the
            least recently used idle one is closed (a later request reopens it from the
            store); without a store (or with every session busy) a new one gets 503.
        approval_timeout: Seconds a permission ask waits for its POST before it is refused
            (``None``: no limit — a run then waits for as long as nobody answers).
        heartbeat: Seconds of silence after which a stream writes an SSE comment
            (``: keep-alive``), so proxies keep a waiting stream open; ``None`` for none.
        console: Also serve the web console (``robota web``) at ``/``: a page to chat with
            the agents, watch tool calls, answer permission asks and see each turn's usage and
            cost. For a loopback-only app (a browser sends no bearer token).
        journal: With ``console=True``: the execution journal the console's inspector reads
            (``GET /console/executions/{id}``: an execution's model calls, effects and
            settlements).

    See the module docstring for the paths and status codes. The app's lifespan closes every
    session and agent it opened (aborting runs still going) when the server stops.

    Raises:
        ConfigurationError: no agents, a bad name, a too-short token or a bad limit.
    """
    if not agents:
        raise ConfigurationError("create_app() needs at least one agent: agents={'name': factory}")
    for name, factory in agents.items():
        if not name or "/" in name or not callable(factory):
            raise ConfigurationError(
                f"create_app(agents=) maps a name without '/' to a factory; got {name!r}: "
                f"{factory!r}"
            )
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise ConfigurationError(
            f"create_app(token=) needs at least {MIN_TOKEN_LENGTH} characters; use "
            "secrets.token_urlsafe()"
        )
    for option, value in (
        ("approval_timeout", approval_timeout),
        ("heartbeat", heartbeat),
        ("body_timeout", body_timeout),
    ):
        if value is not None and not value > 0:
            raise ConfigurationError(f"create_app({option}=) must be > 0 seconds or None")
    if min(max_body_bytes, stream_buffer, stream_buffer_bytes, max_sessions) < 1:
        raise ConfigurationError(
            "create_app(): max_body_bytes, stream_buffer, stream_buffer_bytes and max_sessions "
            "must be >= 1"
        )
    if sessions is not None and not isinstance(sessions, SessionStore):
        raise ConfigurationError(
            f"create_app(sessions=) takes a robota.sessions.SessionStore, got {sessions!r}"
        )
    conversations = Conversations(
        agents,
        sessions,
        buffer_limit=stream_buffer,
        buffer_bytes=stream_buffer_bytes,
        max_sessions=max_sessions,
        approval_timeout=approval_timeout,
    )
    handlers = _Handlers(conversations, max_body_bytes, body_timeout, heartbeat)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await conversations.aclose()

    base = "/agents/{name}"
    session = base + "/sessions/{session_id}"
    routes = [
        _route(base + "/agui", handlers.agui, ["POST"]),
        _route(base + "/chat", handlers.chat, ["POST"]),
        _route(session + "/stream", handlers.stream, ["GET"]),
        _route(session + "/cancel", handlers.cancel, ["POST"]),
        _route(session + "/approvals/{ask_id}", handlers.approve, ["POST"]),
        _route(session + "/responses/{request_id}", handlers.respond, ["POST"]),
    ]
    if console:
        # Only the (local) console lists session ids: an id is what guards a session's stream.
        routes.append(_route(base + "/sessions", handlers.sessions, ["GET"]))
        routes += console_routes(list(agents), journal=journal is not None)
        if journal is not None:
            routes += journal_routes(journal)
    middleware = []
    if cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=["authorization", "content-type", "last-event-id"],
            )
        )
    config = ServeConfig(token)
    middleware.append(Middleware(ServeGuard, config=config, origins=frozenset(cors_origins)))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.robota_serve = config
    return app
