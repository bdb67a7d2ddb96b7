"""The shared part of the MCP tool sources: one connection held by a task of its own.

A server's connection lives in one task (the SDK's client must be entered and left in the same
task, and a transport failure cancels whatever runs inside it). Calls from any run go to that
client and race three things: their answer, the run's abort signal, and the connection's end —
so a call in flight when the server dies fails at once with :class:`MCPConnectionError`, and an
aborted call is cancelled, which makes the SDK send ``notifications/cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

from robota.core import (
    AbortSignal,
    ConfigurationError,
    RejectedTool,
    Tool,
    ToolSource,
    abort_error_from_reason,
    get_logger,
    install_command,
)
from robota.mcp._results import (
    MCPConnectionError,
    MCPProtocolError,
    build_tools,
    check_server_name,
)

__all__ = ["MCPServerBase"]

_log = get_logger("robota.mcp")

DEFAULT_START_TIMEOUT: Final = 30.0
_STOP_TIMEOUT: Final = 10.0
_SETTLE_TIMEOUT: Final = 5.0
_MAX_TOOLS: Final = 1000
_CONNECTION_CLOSED: Final = -32000
_MODERN: Final = "2026-07-28"


def _load_mcp(what: str) -> Any:
    try:
        import mcp  # noqa: PLC0415 - the optional extra, loaded on use
    except ImportError as exc:
        raise ConfigurationError(
            f"{what} needs the Model Context Protocol SDK: {install_command('mcp')}"
        ) from exc
    return mcp


def _has_tools(client: Any) -> bool:
    """Whether the server offers tools (a server may offer only prompts or resources)."""
    capabilities = getattr(client, "server_capabilities", None)
    return capabilities is None or getattr(capabilities, "tools", None) is not None


def _is_transport_failure(error: BaseException) -> bool:
    """A failure of the connection itself, as opposed to a malformed answer."""
    if isinstance(error, (OSError, EOFError, ConnectionError)):
        return True
    names = {cls.__name__ for cls in type(error).__mro__}
    return bool(
        names & {"TransportError", "ClosedResourceError", "BrokenResourceError", "EndOfStream"}
    )


def _leaf(error: BaseException) -> BaseException:
    """The first non-group exception inside nested exception groups (the SDK wraps them)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        inner = [e for e in error.exceptions if not isinstance(e, asyncio.CancelledError)]
        error = (inner or list(error.exceptions))[0]
    return error


class _Connection:
    __slots__ = ("client", "closed", "error", "ready", "stop", "task")

    def __init__(self) -> None:
        self.client: Any = None
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed = asyncio.Event()
        self.stop = asyncio.Event()
        self.error: BaseException | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return (
            self.ready.done()
            and not self.ready.exception()
            and not self.closed.is_set()
            and not self.stop.is_set()
        )

    def lose(self, error: BaseException) -> None:
        """The transport is gone (the process exited, the stream closed): end the connection."""
        if not self.stop.is_set():
            if self.error is None:
                self.error = error
            self.stop.set()


class MCPServerBase(ToolSource):
    """What :class:`~robota.mcp.MCPServerStdio` and :class:`~robota.mcp.MCPServerHTTP` share."""

    def __init__(
        self, name: str, *, start_timeout: float = DEFAULT_START_TIMEOUT, defer: bool = False
    ) -> None:
        super().__init__()
        _load_mcp(type(self).__name__)  # a missing extra is said at construction
        self._name = check_server_name(name)
        limit: object = start_timeout
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0:
            raise ConfigurationError(f"start_timeout must be a positive number, got {limit!r}")
        flag: object = defer
        if not isinstance(flag, bool):
            raise ConfigurationError(f"defer must be True or False, got {defer!r}")
        self._start_timeout = float(start_timeout)
        self._defer = defer
        self._connection: _Connection | None = None
        self._lock: asyncio.Lock | None = None
        self._tools: list[Tool] = []
        self._rejected: list[RejectedTool] = []
        self._refreshing: set[asyncio.Task[None]] = set()
        self._dirty = False
        self._attempts = 0
        self._failure: BaseException | None = None
        self.restarts = 0

    @property
    def name(self) -> str:
        """The server's name: ``<server>`` in its tools' ``mcp__<server>__<tool>``."""
        return self._name

    @property
    def running(self) -> bool:
        """Whether the connection is up."""
        return self._connection is not None and self._connection.alive

    @abstractmethod
    def _transport(self) -> AbstractAsyncContextManager[Any]:
        """The SDK transport (an async context manager yielding the read and write streams)."""

    def _lost(self, why: str) -> None:
        """Called by a transport whose stream ended: the current connection is dead."""
        connection = self._connection
        if connection is not None:
            connection.lose(MCPConnectionError(why, context={"server": self._name}))

    def _describe(self, error: BaseException | None, *, for_log: bool = False) -> str:
        """Why the connection ended, for messages (a subclass adds more for the log)."""
        if error is None:
            return "it stopped"
        leaf = _leaf(error)
        return f"{type(leaf).__name__}: {leaf}"

    # ------------------------------------------------------------------ ToolSource

    def tools(self) -> Sequence[Tool]:
        """The server's tools as last listed (empty before :meth:`start`)."""
        return tuple(self._tools)

    def rejected(self) -> Sequence[RejectedTool]:
        """The server's tools left out, and why (a schema outside the subset …)."""
        return tuple(self._rejected)

    async def start(self) -> None:
        """Connect (starting the server) and list its tools, or return at once while connected.

        The whole start — handshake and listing — is bounded by ``start_timeout``. Callers that
        waited for a start already under way share its failure instead of each trying again. A
        connection that died is replaced, reported through the diagnostic sink, never silently.

        Raises:
            MCPConnectionError: the server could not be started, connected to or listed.
            MCPProtocolError: the server answered the listing with an error.
        """
        connection = self._connection
        if connection is not None and connection.alive:
            return
        lock = self._start_lock()
        attempt = self._attempts
        async with lock:
            connection = self._connection
            if connection is not None and connection.alive:
                return
            if self._attempts != attempt and self._failure is not None:
                raise self._failure  # the start this caller waited for failed just now
            self._attempts += 1
            if connection is not None:
                self.restarts += 1
                _log.warning(
                    "MCP server connection ended; starting it again",
                    server=self._name,
                    reason=self._describe(connection.error, for_log=True),
                )
                self._connection = None
                await self._finish(connection)
            try:
                await asyncio.wait_for(self._open(), self._start_timeout)
            except TimeoutError:
                self._failure = MCPConnectionError(
                    f"MCP server {self._name!r} did not answer within {self._start_timeout:g} s",
                    context={"server": self._name},
                )
                raise self._failure from None
            except (MCPConnectionError, MCPProtocolError) as exc:
                self._failure = exc
                raise
            self._failure = None

    async def _open(self) -> None:
        connection = await self._connect()
        try:
            await self._list(connection)
        except BaseException:
            await self._finish(connection)  # never a "healthy" connection without its tools
            raise
        self._connection = connection

    def _start_lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def aclose(self) -> None:
        """Stop the server (its process group, for stdio) and drop the connection. Never raises.

        A start under way finishes first (it holds the same lock), so nothing it started is left
        running.
        """
        async with self._start_lock():
            connection, self._connection = self._connection, None
            refreshing = list(self._refreshing)
            for task in refreshing:
                task.cancel()
            await asyncio.gather(*refreshing, return_exceptions=True)
            if connection is not None:
                await self._finish(connection)

    async def settle(self) -> None:
        """Wait (a bounded time) for a tool-list refresh under way, so the next round has it."""
        refreshing = list(self._refreshing)
        if refreshing:
            await asyncio.wait(refreshing, timeout=_SETTLE_TIMEOUT)

    # ------------------------------------------------------------------ the connection

    async def _connect(self) -> _Connection:
        mcp = _load_mcp(type(self).__name__)
        connection = _Connection()
        connection.task = asyncio.get_running_loop().create_task(
            self._hold(mcp, connection), name=f"robota-mcp-{self._name}"
        )
        try:
            await asyncio.shield(connection.ready)
        except asyncio.CancelledError:
            await self._finish(connection, at_once=True)  # a timeout or the caller's cancel
            raise
        except BaseException as exc:  # noqa: BLE001 - any start failure is the typed error
            await self._finish(connection, at_once=True)
            raise MCPConnectionError(
                # Raised to the host (never shown to a model): the server's stderr helps.
                f"MCP server {self._name!r} could not be started: "
                f"{self._describe(exc, for_log=True)}",
                context={"server": self._name},
                cause=_leaf(exc),
            ) from None
        return connection

    async def _hold(self, mcp: Any, connection: _Connection) -> None:
        """The connection's own task: enter the SDK client, serve until told to stop."""
        try:
            async with mcp.Client(
                self._transport(),
                cache=None,
                message_handler=self._on_message,
            ) as client:
                connection.client = client
                listen = self._listen(client)
                async with contextlib.AsyncExitStack() as stack:
                    if listen is not None:
                        watcher = asyncio.ensure_future(self._watch(listen))
                        stack.callback(watcher.cancel)
                    if not connection.ready.done():
                        connection.ready.set_result(None)
                    await connection.stop.wait()
        except BaseException as exc:
            if isinstance(_leaf(exc), (KeyboardInterrupt, SystemExit)):
                raise
            connection.error = exc
            if not connection.ready.done():
                connection.ready.set_exception(exc)
                connection.ready.exception()  # retrieved: _connect reports it
        finally:
            if not connection.ready.done():
                connection.ready.set_exception(MCPConnectionError("the connection ended"))
                connection.ready.exception()
            connection.closed.set()

    async def _finish(self, connection: _Connection, *, at_once: bool = False) -> None:
        """End a connection: let its task leave the SDK client, or cancel it (a handshake)."""
        connection.stop.set()
        task = connection.task
        if task is None or task.done():
            return
        if not at_once:
            done, _ = await asyncio.wait((task,), timeout=_STOP_TIMEOUT)
            if done:
                return
        task.cancel()  # the transport's own cleanup is shielded: the process still stops
        await asyncio.wait((task,), timeout=_STOP_TIMEOUT)

    def _listen(self, client: Any) -> Any:
        """A ``tools/list_changed`` subscription on a modern connection that offers one."""
        capabilities = getattr(client, "server_capabilities", None)
        tools = getattr(capabilities, "tools", None)
        if getattr(client, "protocol_version", None) != _MODERN or not getattr(
            tools, "list_changed", False
        ):
            return None
        listen = getattr(client, "listen", None)
        return listen(tools_list_changed=True) if callable(listen) else None

    async def _watch(self, listen: Any) -> None:
        with contextlib.suppress(Exception):
            async with listen as subscription:
                async for _ in subscription:
                    self._schedule_refresh()

    async def _on_message(self, message: Any) -> None:
        # Legacy connections push notifications/tools/list_changed here; a modern one tees it.
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self._schedule_refresh()

    def _schedule_refresh(self) -> None:
        # Never listed from inside the SDK's receive loop: the answer arrives through it. One
        # refresh at a time; a change announced during it makes it list once more, so the
        # newest list always wins and a storm of notifications costs two listings.
        self._dirty = True
        if self._refreshing:
            return
        task = asyncio.get_running_loop().create_task(self._refresh())
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def _refresh(self) -> None:
        while self._dirty:
            self._dirty = False
            connection = self._connection
            if connection is None or not connection.alive:
                return
            try:
                await asyncio.wait_for(self._list(connection), self._start_timeout)
            except Exception as exc:  # noqa: BLE001 - a failed refresh keeps the last list
                _log.error("MCP tool list refresh failed", server=self._name, error=repr(exc))
                return

    async def _list(self, connection: _Connection) -> None:
        if not _has_tools(connection.client):
            self._tools, self._rejected = [], []  # a server of prompts or resources only
            self.changed()
            return
        listed: list[Any] = []
        cursor: str | None = None
        while True:
            page = await self._request(connection, connection.client.list_tools(cursor=cursor))
            if len(listed) > _MAX_TOOLS:
                break
            listed.extend(getattr(page, "tools", None) or ())
            cursor = getattr(page, "next_cursor", None)
            if not cursor:
                break
        tools, rejected = build_tools(
            self._name, listed[:_MAX_TOOLS], self._call, defer=self._defer
        )
        if len(listed) > _MAX_TOOLS:
            rejected.append(
                RejectedTool(f"mcp__{self._name}__*", f"only the first {_MAX_TOOLS} tools are used")
            )
        self._tools, self._rejected = list(tools), rejected
        self.changed()

    async def _request(
        self, connection: _Connection, work: Any, signal: AbortSignal | None = None
    ) -> Any:
        """Await one SDK request, racing the connection's end (and ``signal``)."""
        call = asyncio.ensure_future(work)
        closed = asyncio.ensure_future(connection.closed.wait())
        aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
        waiters: list[asyncio.Future[Any]] = [call, closed] + ([aborted] if aborted else [])
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            call.cancel()  # the SDK sends notifications/cancelled for it
            raise
        finally:
            closed.cancel()
            if aborted is not None:
                aborted.cancel()
        if call.done():
            return self._answer(call, connection)
        call.cancel()  # the SDK sends notifications/cancelled for it
        with contextlib.suppress(BaseException):
            await call
        if signal is not None and signal.aborted:
            raise abort_error_from_reason(signal.reason)
        raise MCPConnectionError(
            f"MCP server {self._name!r} died during the call ({self._describe(connection.error)}); "
            "it is started again on the next run",
            context={"server": self._name},
        )

    def _answer(self, call: asyncio.Future[Any], connection: _Connection) -> Any:
        try:
            return call.result()
        except asyncio.CancelledError:
            raise MCPConnectionError(
                f"MCP server {self._name!r}: the connection was cancelled during the call",
                context={"server": self._name},
            ) from None
        except Exception as exc:  # noqa: BLE001 - the SDK's failures, sorted into two types
            error = _leaf(exc)
            code = getattr(error, "code", None)
            if code is not None and code != _CONNECTION_CLOSED:
                raise MCPProtocolError(
                    f"MCP server {self._name!r} answered with error {code}: "
                    f"{getattr(error, 'message', error)}",
                    context={"server": self._name, "code": code},
                ) from None
            if code is None and not _is_transport_failure(error):
                raise MCPProtocolError(
                    f"MCP server {self._name!r} sent an invalid result: {type(error).__name__}",
                    context={"server": self._name, "detail": str(error)[:500]},
                ) from None
            if code == _CONNECTION_CLOSED:
                connection.lose(error)
                _log.warning(
                    "MCP server connection closed during a call",
                    server=self._name,
                    reason=self._describe(connection.error or error, for_log=True),
                )
                raise MCPConnectionError(
                    f"MCP server {self._name!r} died during the call "
                    f"({self._describe(connection.error or error)}); it is started again on the "
                    "next run",
                    context={"server": self._name},
                ) from None
            raise MCPConnectionError(
                f"MCP server {self._name!r}: {type(error).__name__}: {error}",
                context={"server": self._name},
            ) from None

    async def _call(self, remote: str, arguments: Mapping[str, Any], signal: AbortSignal) -> Any:
        connection = self._connection
        if connection is None or not connection.alive:
            why = self._describe(connection.error) if connection is not None else "not started"
            raise MCPConnectionError(
                f"MCP server {self._name!r} is not connected ({why}); it is started again on "
                "the next run",
                context={"server": self._name},
            )
        signal.throw_if_aborted()
        return await self._request(
            connection, connection.client.call_tool(remote, dict(arguments)), signal
        )
