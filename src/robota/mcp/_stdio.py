"""``MCPServerStdio``: an MCP server as a child process speaking JSON-RPC over its stdio.

The process is started by :func:`robota.host.spawn` (so the process-wide S09 decision applies)
and always leads its own process group — its own session once children are isolated — so
stopping it stops whatever it started. Stopping: close its stdin, wait, ``SIGTERM`` the group,
wait, ``SIGKILL`` the group. While it runs, the group is registered to be killed if this process
ends (S08). Its stderr is kept (the last few kilobytes) to explain a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final

from robota.core import ConfigurationError
from robota.host import register_at_exit, spawn
from robota.mcp._results import check_string_map, default_server_name
from robota.mcp._server import DEFAULT_START_TIMEOUT, MCPServerBase

__all__ = ["MCPServerStdio"]

_GRACE: Final = 2.0
_STDERR_KEPT: Final = 8192
# The variables a server inherits by default (a server gets no secrets it was not given).
_INHERITED: Final = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")


@final
class MCPServerStdio(MCPServerBase):
    """An MCP server run as a child process, its tools usable as ``mcp__<name>__<tool>``.

    Pass it in ``Agent(tools=[...])``. It is started when the agent first needs it (first run,
    direct invocation, ``async with agent``), shared by every run of the agent, started again by
    the next run if it died, and stopped by ``agent.aclose()`` — its whole process group.

    Args:
        command: The program, e.g. ``"uvx"``, ``sys.executable``.
        args: Its arguments, e.g. ``("-m", "mcp_server_time")``.
        env: Variables for the server. It inherits only ``HOME``, ``LOGNAME``, ``PATH``,
            ``SHELL``, ``TERM``, ``USER``, ``LANG``, ``LC_ALL`` and ``TMPDIR`` from this process
            (no secrets by accident); ``env`` adds to or replaces those.
        cwd: Its working directory (default: this process's).
        name: The ``<server>`` of its tool names (letters, digits, ``_``, ``-``); default: made
            from the command (the module after ``-m``, else the program's file name).
        start_timeout: Seconds the whole start may take: process, handshake, tool listing.
        defer: Make the server's tools deferred (S19): with the agent's ``tool_deferral``
            engaged, their schemas are withheld until ``tool_search`` loads them.

    Raises:
        ConfigurationError: for a bad argument, or the ``mcp`` SDK not installed
            (the message says how to install the ``mcp`` extra).
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        defer: bool = False,
    ) -> None:
        given: object = command
        if not isinstance(given, str) or not given:
            raise ConfigurationError(f"command must be a non-empty string, got {command!r}")
        arguments: object = args
        if isinstance(arguments, str) or not all(isinstance(a, str) for a in args):
            raise ConfigurationError(f"args must be a sequence of strings, got {args!r}")
        self._command = command
        self._args = tuple(args)
        self._env = check_string_map(env, "env")
        self._cwd = os.fspath(cwd) if cwd is not None else None
        self._stderr = bytearray()
        self.pid: int | None = None
        super().__init__(
            name if name is not None else _name_for(command, self._args),
            start_timeout=start_timeout,
            defer=defer,
        )

    def _environment(self) -> dict[str, str]:
        env = {key: os.environ[key] for key in _INHERITED if key in os.environ}
        env.update(self._env)
        return env

    def _describe(self, error: BaseException | None, *, for_log: bool = False) -> str:
        text = super()._describe(error)
        if not for_log:
            return text  # the model may read it: the server's stderr stays out of it
        tail = bytes(self._stderr).decode(errors="replace").strip()
        return f"{text}; its stderr ends: {tail[-500:]}" if tail else text

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        return self._process()

    @contextlib.asynccontextmanager
    async def _process(self) -> AsyncIterator[Any]:
        import anyio  # noqa: PLC0415 - the SDK's own dependency, loaded with it
        import mcp_types  # noqa: PLC0415
        from mcp.shared.message import SessionMessage  # noqa: PLC0415

        pipe = asyncio.subprocess.PIPE
        self._stderr.clear()
        process = await spawn(
            self._command,
            *self._args,
            stdin=pipe,
            stdout=pipe,
            stderr=pipe,
            cwd=self._cwd,
            env=self._environment(),
            process_group=0,  # S09: its own group (its own session when children are isolated)
            limit=16 * 1024 * 1024,  # one JSON-RPC message per line; results can be large
        )
        self.pid = pgid = process.pid
        registration = register_at_exit(lambda: _kill_group(process, pgid, signals.SIGKILL))
        read_send, read_recv = anyio.create_memory_object_stream[Any](16)
        write_send, write_recv = anyio.create_memory_object_stream[Any](16)

        async def read() -> None:
            assert process.stdout is not None
            async with read_send:
                while True:
                    line = await process.stdout.readline()
                    if not line:
                        # EOF: the SDK wakes every waiter with "connection closed"; the
                        # connection is dead, so the next start() starts the server again.
                        code = await process.wait()
                        self._lost(f"the server process exited with status {code}")
                        return
                    if not line.strip():
                        continue
                    item: Any
                    try:
                        item = SessionMessage(
                            mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        )
                    except ValueError as exc:
                        item = exc  # the SDK hands it to the message handler
                    await read_send.send(item)

        async def write() -> None:
            assert process.stdin is not None
            async with write_recv:
                async for message in write_recv:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    process.stdin.write(data.encode() + b"\n")
                    await process.stdin.drain()

        async def keep_stderr() -> None:
            assert process.stderr is not None
            while chunk := await process.stderr.read(4096):
                self._stderr.extend(chunk)
                del self._stderr[:-_STDERR_KEPT]

        tasks = [asyncio.ensure_future(job()) for job in (read, write, keep_stderr)]
        try:
            yield read_recv, write_send
        finally:
            # Shielded: a cancelled start or a cancelled connection still stops the process.
            with anyio.CancelScope(shield=True):
                await _stop(process, pgid)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            registration.release()
            self.pid = None


def _name_for(command: str, args: tuple[str, ...]) -> str:
    if "-m" in args[:-1]:
        return default_server_name(args[args.index("-m") + 1])
    return default_server_name(Path(command).name)


def _kill_group(process: asyncio.subprocess.Process, pgid: int, sig: int) -> None:
    # S09: a group is signalled only while its leader lives (once reaped, its id may be reused).
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)


async def _stop(process: asyncio.subprocess.Process, pgid: int) -> None:
    """Close stdin, then SIGTERM, then SIGKILL the group; every step waits a grace period."""
    with contextlib.suppress(Exception):
        if process.stdin is not None:
            process.stdin.close()
    for sig in (None, signals.SIGTERM, signals.SIGKILL):
        if sig is not None:
            _kill_group(process, pgid, sig)
        try:
            await asyncio.wait_for(asyncio.shield(process.wait()), _GRACE)
        except TimeoutError:
            continue
        break
    # The leader is gone; a descendant it left in its group would still run. The id cannot have
    # been reused while any process of the group holds it, so this reaches only that group (or
    # nothing: ESRCH). The residual window — the group emptying and its id being taken as a new
    # group's within this very step — is microseconds wide.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signals.SIGKILL)
