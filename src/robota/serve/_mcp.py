"""``mcp_server``: an agent served as an MCP server (issue 31, item 2; the official ``mcp`` SDK).

The agent is one MCP tool, named after it, taking ``{"prompt": string}`` (and ``session_id``
when a session store is given) and answering with the run's final text. Optionally the agent's
own tools are exposed too, each call taking the agent's permission gate (S21) through the direct
invocation path (S43). Served over stdio (:meth:`AgentMCPServer.run_stdio`) or streamable HTTP
(:meth:`AgentMCPServer.http_app`, an ASGI app for uvicorn).

Invariants: a failed run reaches the client as a tool error whose text names only the error's
class and code — never its message (a provider error may quote a header or a key) nor a stack
trace. A client's cancellation (``notifications/cancelled``, or the connection dropping) aborts
the run (S23); the run then settles as interrupted in the background.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, Final, final

from robota.core import (
    AbortController,
    AbortSignal,
    Agent,
    Approver,
    ConfigurationError,
    RobotaError,
    RunResult,
    TextDelta,
    ToolCallStarted,
    install_command,
)
from robota.serve._guard import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    BodyLimit,
    is_loopback_host,
)
from robota.serve._rpc_errors import JSONRPC_MESSAGES, FixedRpcErrors

# The SDK's transport errors that quote nothing of the request: kept, they tell a client what
# to fix (its parse and validation errors, which quote the input, get fixed text).
_TRANSPORT_MESSAGES = frozenset(
    {
        "Bad Request: Missing session ID",
        "Conflict: Only one SSE stream is allowed per session",
        "Method Not Allowed",
        "Method Not Allowed: Session termination not supported",
        "Not Acceptable: Client must accept application/json",
        "Not Acceptable: Client must accept both application/json and text/event-stream",
        "Not Acceptable: Client must accept text/event-stream",
        "Not Found: Invalid or expired session ID",
        "Not Found: Session has been terminated",
        "Unsupported Media Type: Content-Type must be application/json",
    }
)

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from robota.sessions import SessionStore

__all__ = ["AgentMCPServer", "mcp_server", "run_mcp_stdio"]

_log = logging.getLogger("robota.serve.mcp")

# MCP tool names: 1-128 of letters, digits, ``_``, ``-``, ``.`` (the spec's recommended set).
_TOOL_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
# The binds served without a token; any other (0.0.0.0, a LAN address …) needs one. A fixed list,
# not an address classification (S06 decides addresses only from robota.host's table).
_LOOPBACK_BINDS: Final = frozenset({"127.0.0.1", "::1", "[::1]", "localhost"})
_LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


def _install_hint() -> ConfigurationError:
    return ConfigurationError(
        f"mcp_server() needs the Model Context Protocol SDK: {install_command('mcp')}"
    )


def _tool_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:128]
    return cleaned or "agent"


def _failure(exc: BaseException) -> str:
    # Only the class and the stable code: an error's message may quote a key or a header.
    if isinstance(exc, RobotaError):
        return f"the agent's run failed: {type(exc).__name__} ({exc.code})"
    return f"the agent's run failed: {type(exc).__name__}"


@final
class AgentMCPServer:
    """An :class:`~robota.Agent` as an MCP server; build it with :func:`mcp_server`.

    Attributes:
        agent: The served agent.
        tool_name: The name of the tool that runs the agent.
        server: The SDK's low-level ``mcp.server.lowlevel.Server`` (for custom transports).
    """

    def __init__(
        self,
        agent: Agent,
        *,
        name: str | None,
        description: str | None,
        expose_tools: bool,
        approver: Approver | None,
        sessions: SessionStore | None,
    ) -> None:
        try:
            from mcp.server.lowlevel import Server  # noqa: PLC0415 - the optional extra
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise _install_hint() from exc
        if not isinstance(agent, Agent):
            raise ConfigurationError(f"mcp_server() needs an Agent, got {type(agent).__name__}")
        tool_name = name if name is not None else _tool_name(agent.name)
        given: object = tool_name  # untyped callers can pass anything
        if not isinstance(given, str) or not _TOOL_NAME.match(tool_name):
            raise ConfigurationError(
                f"name must be 1-128 letters, digits, '_', '-' or '.', got {name!r}"
            )
        self.agent = agent
        self.tool_name = tool_name
        self._description = (
            description
            if description is not None
            else f"Ask the agent {agent.name!r}: it answers the prompt, using its own tools."
        )
        self._expose = bool(expose_tools)
        self._approver = approver
        self._sessions = sessions
        if self._expose and any(t.name == tool_name for t in agent.tools):
            raise ConfigurationError(
                f"the agent has a tool named {tool_name!r}, the agent tool's name; pass name="
            )
        # Runs a cancelled call left settling (S23); kept so they are not garbage-collected.
        self._settling: set[asyncio.Task[Any]] = set()
        self.server: Server[Any] = Server(
            tool_name,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    # ------------------------------------------------------------------ tools

    def _agent_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {
            "prompt": {"type": "string", "description": "The message for the agent."}
        }
        if self._sessions is not None:
            properties["session_id"] = {
                "type": "string",
                "description": "Continue this conversation (created when new); "
                "omit it for a fresh conversation.",
            }
        return {
            "type": "object",
            "properties": properties,
            "required": ["prompt"],
            "additionalProperties": False,
        }

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        import mcp_types  # noqa: PLC0415

        tools = [
            mcp_types.Tool(
                name=self.tool_name,
                description=self._description,
                input_schema=self._agent_schema(),
            )
        ]
        if self._expose:
            tools.extend(
                mcp_types.Tool(
                    name=t.name, description=t.description, input_schema=dict(t.parameters)
                )
                for t in self.agent.tools
            )
        return mcp_types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        arguments: Mapping[str, Any] = params.arguments or {}
        if params.name == self.tool_name:
            return await self._guarded(ctx, lambda signal: self._run_agent(ctx, arguments, signal))
        if self._expose and any(t.name == params.name for t in self.agent.tools):
            return await self._guarded(
                ctx, lambda signal: self._invoke(params.name, arguments, signal)
            )
        return _error(f"unknown tool {params.name!r}")

    async def _guarded(
        self,
        ctx: ServerRequestContext[Any],
        body: Callable[[AbortSignal], Awaitable[mcp_types.CallToolResult]],
    ) -> mcp_types.CallToolResult:
        """Run ``body`` in its own task; the client's cancellation aborts it (S23).

        The SDK cancels this handler when the client sends ``notifications/cancelled`` or goes
        away; the body then gets an abort through its signal and settles on its own (an
        interrupted run), instead of being torn mid-step by a foreign cancellation.
        """
        controller = AbortController()
        task = asyncio.ensure_future(body(controller.signal))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            controller.abort("the MCP client cancelled the call")
            self._settling.add(task)
            task.add_done_callback(_settled(self._settling))
            raise

    async def _run_agent(
        self,
        ctx: ServerRequestContext[Any],
        arguments: Mapping[str, Any],
        signal: AbortSignal,
    ) -> mcp_types.CallToolResult:
        prompt = arguments.get("prompt")
        if not isinstance(prompt, str):
            return _error("'prompt' must be a string")
        session_id = arguments.get("session_id")
        extra = sorted(set(arguments) - {"prompt", *(("session_id",) if self._sessions else ())})
        if extra:
            return _error(f"unexpected argument(s): {', '.join(extra)}")
        if session_id is not None:
            from robota.sessions import check_session_id  # noqa: PLC0415 - only with a store

            try:
                check_session_id(session_id)
            except ConfigurationError as exc:  # our own message, naming the fix
                return _error(f"'session_id': {exc.message}")
        progress = _Progress(ctx)
        try:
            if self._sessions is not None and session_id is not None:
                result = await self._run_in_session(prompt, session_id, signal, progress)
            else:
                stream = self.agent.run_stream(prompt, signal=signal, fresh_conversation=True)
                async for event in stream:
                    await progress.report(event)
                result = await stream.result()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure becomes a tool error (no trace)
            _log.warning("agent %r: MCP call failed: %s", self.agent.name, _failure(exc))
            return _error(_failure(exc))
        return _answer(result)

    async def _run_in_session(
        self, prompt: str, session_id: str, signal: AbortSignal, progress: _Progress
    ) -> RunResult[Any]:
        from robota.sessions import Session  # noqa: PLC0415 - only with a store

        assert self._sessions is not None  # the caller checked
        async with await Session.open(self.agent, self._sessions, session_id) as session:
            stream = session.run_stream(prompt, signal=signal)
            async for event in stream:
                await progress.report(event)
            return await stream.result()

    async def _invoke(
        self, name: str, arguments: Mapping[str, Any], signal: AbortSignal
    ) -> mcp_types.CallToolResult:
        try:
            # S43 + S21: the agent's gate decides; an ask is answered only by ``approver``,
            # a denial without one.
            outcome = await self.agent.invoke_tool(
                name, arguments, signal=signal, approver=self._approver
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a tool error, never a trace
            return _error(_failure(exc).replace("agent's run", f"tool {name!r}"))
        result = outcome.result
        if outcome.status != "completed" or result.is_error:
            return _error(result.content or f"the call was {outcome.status}")
        return _text(result.content)

    # ------------------------------------------------------------------ transports

    async def run_stdio(self) -> None:
        """Serve over this process's stdin and stdout until the client closes them."""
        from mcp.server.stdio import stdio_server  # noqa: PLC0415

        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    def http_app(
        self,
        *,
        path: str = "/mcp",
        token: str | None = None,
        allowed_hosts: Sequence[str] = (),
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    ) -> ASGIApp:
        """The streamable-HTTP MCP endpoint as an ASGI app (serve it with uvicorn).

        Request bodies are limited as :func:`robota.serve.create_app` limits them: a body over
        ``max_body_bytes`` (1 MiB) is a 413 ``body_too_large``, one not received in full
        within ``body_timeout`` seconds (30; ``None``: no limit) a 408 ``body_timeout`` (the
        connection is closed) — JSON ``{"error": {"code", "message"}}`` bodies, checked after
        the token and before the SDK reads anything. The SDK's JSON-RPC errors carry their code
        and a fixed message only (its own text quotes the client's input).

        DNS-rebinding protection (the SDK's) is always on: a request's ``Host`` header must be
        a loopback one (``127.0.0.1``, ``localhost``, ``[::1]``, any port) or one of
        ``allowed_hosts`` (``"agents.example.com"``, ``"10.0.0.5:8000"``, ``"host:*"``), else
        it is refused with a 4xx. With ``token``, every request must carry
        ``Authorization: Bearer <token>`` (compared in constant time); a wrong or missing one
        is a 401. Without one, a request that carries a token anyway is a 400, and one from a
        peer not on this machine a 403.

        Misuse: the app runs its session manager in the ASGI lifespan — serve it with lifespan
        on (uvicorn's default), and build one app per server object.
        """
        from mcp.server.transport_security import TransportSecuritySettings  # noqa: PLC0415

        hosts: object = allowed_hosts
        entries: list[object] = [] if isinstance(hosts, str) else list(allowed_hosts)
        if isinstance(hosts, str) or not all(isinstance(h, str) and h for h in entries):
            raise ConfigurationError(f"allowed_hosts must be a sequence of hosts, got {hosts!r}")
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[*_LOOPBACK_HOSTS, *allowed_hosts],
            allowed_origins=[f"http://{h}" for h in (*_LOOPBACK_HOSTS, *allowed_hosts)],
        )
        app: ASGIApp = self.server.streamable_http_app(
            streamable_http_path=path, transport_security=security
        )
        given: object = token
        if token is not None and (not isinstance(given, str) or not token):
            raise ConfigurationError("token must be a non-empty string")
        limit: object = max_body_bytes
        if isinstance(limit, bool) or not isinstance(limit, int) or max_body_bytes < 1:
            raise ConfigurationError(f"max_body_bytes must be an int >= 1, got {limit!r}")
        if body_timeout is not None and not body_timeout > 0:
            raise ConfigurationError("body_timeout must be > 0 seconds or None")
        # The SDK's errors quote the client's input and pydantic's text: fixed text only.
        fixed: ASGIApp = FixedRpcErrors(app, JSONRPC_MESSAGES, _TRANSPORT_MESSAGES)
        limited: ASGIApp = BodyLimit(fixed, max_body_bytes, body_timeout)
        return _bearer(limited, token)

    def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        token: str | None = None,
        allowed_hosts: Sequence[str] = (),
    ) -> None:
        """Serve :meth:`http_app` with uvicorn on ``host:port`` until interrupted (blocking).

        Binding anything but loopback (``127.0.0.1``, ``::1``, ``localhost``) needs ``token``;
        list in ``allowed_hosts`` the ``Host`` values its clients will send.

        Raises:
            ConfigurationError: ``host`` is not loopback and no ``token`` was given.
        """
        if host.lower() not in _LOOPBACK_BINDS and token is None:
            raise ConfigurationError(
                f"serving on {host!r} (not loopback) needs token=: anyone who reaches it "
                "could run the agent"
            )
        try:
            import uvicorn  # noqa: PLC0415 - the `serve` extra
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise ConfigurationError(
                f"run_http() needs uvicorn: {install_command('serve')}"
            ) from exc

        app = self.http_app(token=token, allowed_hosts=allowed_hosts)
        uvicorn.run(app, host=host, port=port, log_level="warning")

    def __repr__(self) -> str:
        return f"<AgentMCPServer {self.tool_name!r} expose_tools={self._expose}>"


def mcp_server(
    agent: Agent,
    *,
    name: str | None = None,
    description: str | None = None,
    expose_tools: bool = False,
    approver: Approver | None = None,
    sessions: SessionStore | None = None,
) -> AgentMCPServer:
    """Serve ``agent`` as an MCP server: one tool that runs it (issue 31).

    The tool takes ``{"prompt": str}`` and returns the run's final text. Each call runs in a
    fresh conversation (``fresh_conversation=True``: the agent's own history is neither sent
    nor changed). With ``sessions``, the tool also takes an optional ``session_id``: a call
    naming one continues that :class:`robota.sessions.Session` of the store (created when new;
    a second concurrent call on one id fails, :class:`~robota.sessions.SessionBusyError`).
    A failed run is a tool error naming only the error's class and code. A client's
    cancellation aborts the run (S23). While the run streams, a client that asked for progress
    (a ``progressToken``) gets ``notifications/progress``: one per text chunk and tool call.

    Args:
        agent: The agent to serve.
        name: The tool's name (and the server's); default: the agent's name, with characters
            MCP does not allow in a tool name replaced by ``_``.
        description: The tool's description; default: one naming the agent.
        expose_tools: Also list the agent's own tools (:attr:`robota.Agent.tools`); each call
            goes through :meth:`robota.Agent.invoke_tool` and so the agent's permission gate
            (S21, S43): a deny rule refuses, and an ``ask`` is a refusal unless ``approver``
            answers it. A refusal is a tool error carrying the gate's reason.
        approver: Answers permission asks of exposed tool calls; default: none (asks refused).
        sessions: A :class:`robota.sessions.SessionStore` enabling ``session_id``.

    Returns:
        An :class:`AgentMCPServer`: ``await run_stdio()``, ``http_app()``, ``run_http()``.

    Raises:
        ConfigurationError: a bad name, a name clash with an exposed tool, or the ``mcp`` SDK
            missing (the message says how to install it).
    """
    return AgentMCPServer(
        agent,
        name=name,
        description=description,
        expose_tools=expose_tools,
        approver=approver,
        sessions=sessions,
    )


async def run_mcp_stdio(agent: Agent, **options: Any) -> None:
    """``await mcp_server(agent, **options).run_stdio()``: serve ``agent`` over stdio."""
    await mcp_server(agent, **options).run_stdio()


# ---------------------------------------------------------------------- helpers


class _Progress:
    """Sends ``notifications/progress`` for a run's events (a no-op unless the client asked)."""

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self._ctx = ctx
        self._count = 0
        self._live = True

    async def report(self, event: object) -> None:
        if not self._live:
            return
        if isinstance(event, TextDelta):
            message = event.text
        elif isinstance(event, ToolCallStarted):
            message = f"calling {event.call.name}"
        else:
            return
        self._count += 1
        try:
            await self._ctx.session.report_progress(float(self._count), None, _valid(message))
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - progress is best effort; the run goes on
            self._live = False


def _settled(tasks: set[asyncio.Task[Any]]) -> Callable[[asyncio.Task[Any]], None]:
    def done(task: asyncio.Task[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.debug("a cancelled MCP call ended with %s", type(task.exception()).__name__)

    return done


def _valid(text: str) -> str:
    # A lone surrogate (a model's or tool's broken text) made the SDK's serializer fail and the
    # client got no response at all; it becomes "?" instead.
    return text.encode("utf-8", "replace").decode("utf-8")


def _text(text: str) -> mcp_types.CallToolResult:
    import mcp_types  # noqa: PLC0415

    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=_valid(text))])


def _error(message: str) -> mcp_types.CallToolResult:
    import mcp_types  # noqa: PLC0415

    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=_valid(message))], is_error=True
    )


def _answer(result: RunResult[Any]) -> mcp_types.CallToolResult:
    if result.status == "complete":
        return _text(result.text)
    if result.status == "interrupted":
        return _error(f"the agent's run was interrupted; text so far: {result.text}")
    # S40: a suspended run waits for an outside answer this transport cannot carry.
    return _error("the agent's run is waiting for an approval this MCP server cannot relay")


def _bearer(app: ASGIApp, token: str | None) -> ASGIApp:
    """Check ``Authorization`` on every HTTP request (issue 31).

    With ``token``: ``Bearer <token>`` (the scheme in any case), compared in constant time,
    else 401. Without one (a loopback-only server): a request carrying a token anyway is a 400
    — its client believes it authenticates to a server that checks nothing — and one from a
    peer not on this machine a 403.
    """
    expected = token.encode() if token is not None else None

    async def guarded(
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] == "http":
            given: bytes | None = None
            for name, value in scope.get("headers") or ():
                if name.lower() == b"authorization":
                    given = value
            refusal: tuple[int, bytes] | None = None
            if expected is None:
                client = scope.get("client")
                if given is not None:
                    refusal = (400, b"this server is loopback-only and checks no token")
                elif client is not None and not is_loopback_host(str(client[0])):
                    # Run by hand on 0.0.0.0, a LAN peer could send a loopback Host header.
                    refusal = (403, b"this server is loopback-only: it answers this machine")
            else:
                scheme, _, credentials = (given or b"").partition(b" ")
                # compare_digest runs even for a wrong scheme: no early exit to time.
                matches = hmac.compare_digest(credentials.strip(), expected)
                if scheme.lower() != b"bearer" or not matches:
                    refusal = (401, b"a bearer token is required")
            if refusal is not None:
                status, body = refusal
                headers = [(b"content-type", b"text/plain")]
                if status == 401:
                    headers.append((b"www-authenticate", b"Bearer"))
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded
