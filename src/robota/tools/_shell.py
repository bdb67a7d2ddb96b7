"""``shell``: one command line run by ``bash`` in the workspace root (issue 30, S09, S21, S23).

How a call runs: a small ``/bin/sh`` *leader* starts the group (S09: it leads its own process
group, or its own session once children are isolated) and runs ``bash -c COMMAND`` in the
foreground, with stdin from ``/dev/null`` and stdout and stderr on one pipe (so they interleave
in the order written). When the command ends the leader writes its exit status on a second pipe
and then waits, alive, until the tool kills the whole group. Keeping the leader alive is what
makes that final ``killpg`` safe: the group id cannot have been reused while its leader lives,
so background jobs the command left behind are ended with it, and nothing else is touched.

A time limit sends SIGTERM to the group, then SIGKILL after a short grace; the run's abort
sends SIGKILL at once (S23). The output pipe is read continuously while the command runs, so a
command that writes megabytes never blocks; only the head and the tail are kept.

What this does not stop (S09's documented residual; a process sandbox is needed for it): a
process that leaves the group (``setsid``, a daemon) keeps running, and so does everything in
the group when the command kills the leader itself (``kill -9 $PPID``): once the leader is
reaped its pid may belong to an unrelated process, so the group is not signalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal as signals
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal, Protocol

import robota.core
import robota.host
from robota.tools._group import GroupLeader, kill_group
from robota.tools._workspace import Workspace

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "DEFAULT_TIMEOUT",
    "INHERITED_ENV",
    "MAX_TIMEOUT",
    "ShellTool",
    "shell_env",
]

DEFAULT_TIMEOUT: Final = 120.0
MAX_TIMEOUT: Final = 600.0
DEFAULT_OUTPUT_LIMIT: Final = 30_000
#: The variables a command inherits from this process (the locale's by their names); nothing
#: else passes (no ``BASH_ENV``, ``BASH_FUNC_*``, ``LD_PRELOAD``), so
#: the agent's API keys and tokens never reach a command unless ``env=`` names them.
INHERITED_ENV: Final = frozenset(
    {"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ"}
    # The locale categories by name, not any `LC_` prefix: `LC_SERVICE_TOKEN` is no locale.
    | {
        f"LC_{category}"
        for category in (
            "ALL",
            "ADDRESS",
            "COLLATE",
            "CTYPE",
            "IDENTIFICATION",
            "MEASUREMENT",
            "MESSAGES",
            "MONETARY",
            "NAME",
            "NUMERIC",
            "PAPER",
            "TELEPHONE",
            "TIME",
        )
    }
)
#: S12: permission patterns are scoped to the command line as written (``Bash(git status)``,
#: ``Bash(npm run test:*)``), and the read-only classifier judges it (S21).
COMMAND_ARGUMENT: Final = robota.core.PermissionArgument("command", "command")

_CHUNK: Final = 64 * 1024
_KILL_GRACE: Final = 2.0  # seconds between SIGTERM and SIGKILL at the time limit
_DRAIN: Final = 2.0  # seconds to wait for the output pipe's end once the group is killed
# $0 is the shell, $1 the command. `trap : TERM` keeps the leader alive through the time
# limit's SIGTERM (a caught signal is reset to the default in the command, an ignored one would
# not be); the loop waits until the tool kills the group, or until its stdin ends (the tool's
# process is gone). `read` returns 1 at end of input, more than 128 when a signal interrupts it.
# `--` ends bash's options: the command is run as written (S12: what runs is the judged
# string), never read as bash's own options (`-il` was taken as options, not a command).
# The status goes on a line of its own: anything in the group can write into the report pipe
# through /proc/<leader>/fd, so only its last line is the leader's, and only the last bytes
# are kept (_Report).
_LEADER: Final = (
    'trap : TERM; "$0" -c -- "$1" </dev/null 2>&1; printf "\\n%s\\n" "$?" >&2; exec 2>&-; '
    'while :; do read -r _; [ "$?" -eq 1 ] && exit 0; done'
)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Ending = Literal["done", "timeout", "aborted", "stopped"]


def shell_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command gets.

    :data:`INHERITED_ENV` from this process (``PATH`` without its relative entries), then
    ``extra``, which wins, secrets included: naming a variable there is the caller's explicit
    choice.
    """
    env = {key: value for key, value in os.environ.items() if key in INHERITED_ENV}
    # An empty or relative PATH entry (`::`, `.`, `bin`) is looked up from the working
    # directory, the workspace: `ls`, judged read-only and run without asking (S21), would run
    # a program the repository planted. Only absolute entries are inherited.
    entries = [entry for entry in env.get("PATH", "").split(":") if entry.startswith("/")]
    env["PATH"] = ":".join(entries) if entries else os.defpath
    if extra:
        env.update(extra)
    return env


def _check_env(env: Mapping[str, str] | None) -> dict[str, str]:
    checked: dict[str, str] = {}
    items: list[tuple[object, object]] = list((env or {}).items())  # untyped callers too
    for key, value in items:
        if not isinstance(key, str) or not _NAME.match(key):
            raise ValueError(f"env: {key!r} is not a valid environment variable name")
        if not isinstance(value, str) or "\0" in value:
            raise ValueError(f"env: the value of {key!r} must be a string without NUL bytes")
        checked[key] = value
    return checked


def _shell_program() -> str:
    if os.access("/bin/bash", os.X_OK):
        return "/bin/bash"
    return shutil.which("bash") or "/bin/sh"


class ShellTool(robota.core.Tool):
    """Runs a command line in the workspace root (see :func:`robota.tools.shell`)."""

    tool_name: ClassVar[str] = "Bash"

    def __init__(
        self,
        workspace: Workspace,
        *,
        name: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_timeout: float = MAX_TIMEOUT,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        env: Mapping[str, str] | None = None,
        kill_grace: float = _KILL_GRACE,
    ) -> None:
        if not max_timeout > 0:
            raise ValueError(f"max_timeout must be a positive number of seconds: {max_timeout!r}")
        if not 0 < timeout <= max_timeout:
            raise ValueError(
                f"timeout must be a positive number of seconds no larger than max_timeout "
                f"({max_timeout:g}), got {timeout!r}"
            )
        if type(output_limit) is not int or output_limit < 100:
            raise ValueError(f"output_limit must be an integer of at least 100: {output_limit!r}")
        super().__init__(
            name or self.tool_name,
            _description(timeout, max_timeout, output_limit),
            _parameters(max_timeout),
            risk="execute",  # S21; a read-only command is decided as inspect by the gate
            permission_argument=COMMAND_ARGUMENT,
            source="robota.tools",
        )
        self.workspace = workspace
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.output_limit = output_limit
        self.env = _check_env(env)
        self.kill_grace = kill_grace
        self.program = _shell_program()

    async def execute(
        self, args: Mapping[str, Any], ctx: robota.core.ToolContext
    ) -> robota.core.ToolResult:
        ctx.signal.throw_if_aborted()  # S23: a run already aborted starts no command
        command: str = args["command"]
        if not command.strip():
            return robota.core.ToolResult("the command is empty", is_error=True)
        if "\0" in command:
            return robota.core.ToolResult("the command contains a NUL byte", is_error=True)
        limit = min(float(args.get("timeout", self.timeout)), self.max_timeout)
        capture = _Capture(self.output_limit)
        ending, status = await self._run(command, limit, capture, ctx.signal)
        ctx.signal.throw_if_aborted()  # S23: an aborted command's output is not a result
        result = _result(capture.text(), ending, status, limit)
        if not capture.held:
            return result
        return robota.core.ToolResult(
            f"{result.content}\n[a process that left the command's process group (setsid, a "
            "daemon) still holds its output open; it was not stopped]",
            is_error=result.is_error,
        )

    async def _run(
        self,
        command: str,
        limit: float,
        capture: _Capture,
        signal: robota.core.AbortSignal,
    ) -> tuple[Ending, int | None]:
        # The leader's stdin, held open here until the group is dead (see _LEADER), and the
        # command's output, read here from a descriptor this call owns: a process that left
        # the group (`setsid`) may keep the pipe open, and the call must still be able to end
        # and close it. All four descriptors are close-on-exec; spawn hands the child its ends.
        hold_read, hold_write = os.pipe()
        out_read, out_write = os.pipe()
        try:
            # S09: the leader heads its own group; the whole group is killed below, always.
            # Its stderr (a pipe, spawn's default) carries its report of the exit status.
            process = await robota.host.spawn(
                "/bin/sh",
                "-c",
                _LEADER,
                self.program,
                command,
                stdin=hold_read,
                stdout=out_write,
                cwd=self.workspace.root,
                env=shell_env(self.env),
                process_group=0,
            )
        except BaseException:
            os.close(hold_write)
            os.close(out_read)
            raise
        finally:
            os.close(hold_read)
            os.close(out_write)
        try:
            return await self._watch(process, out_read, limit, capture, signal)
        finally:
            os.close(hold_write)
            os.close(out_read)

    async def _watch(
        self,
        process: _Child,
        output: int,
        limit: float,
        capture: _Capture,
        signal: robota.core.AbortSignal,
    ) -> tuple[Ending, int | None]:
        report = process.stderr
        assert report is not None  # spawn's default for stderr: a pipe
        reading = asyncio.ensure_future(_drain(output, capture))
        status_report = _Report()
        reported = asyncio.ensure_future(status_report.read(report))
        aborted = asyncio.ensure_future(signal.wait())
        ending: Ending = "stopped"  # until the wait below says otherwise (a cancellation)
        try:
            done, _ = await asyncio.wait(
                {reported, aborted}, timeout=limit, return_when=asyncio.FIRST_COMPLETED
            )
            if reported in done:
                ending = "done"
            elif aborted in done:
                ending = "aborted"
            else:
                ending = "timeout"
                kill_group(process, signals.SIGTERM)
                await asyncio.wait(
                    {reported, aborted}, timeout=self.kill_grace, return_when="FIRST_COMPLETED"
                )
        finally:
            aborted.cancel()
            # S09, S23: SIGKILL to the group while its leader still lives (so the id is ours):
            # the command if it still runs, and whatever it left in the background.
            kill_group(process)
            # Every writer in the group is dead, so the pipe ends; one that left the group
            # (`setsid`) may hold it open, so the wait is bounded.
            try:
                await asyncio.wait({reading, reported}, timeout=_DRAIN)
            finally:  # a second cancellation here still stops the reader
                capture.held = not reading.done()
                reading.cancel()
                reported.cancel()
            # The reader must have let go of the descriptor before the caller closes it.
            await asyncio.wait({reading, reported})
            await process.wait()
        status: int | None = None
        if ending != "aborted" and reported.done() and not reported.cancelled():
            status = status_report.status()
        return ending, status


class _Child(GroupLeader, Protocol):
    """What the tool uses of the started leader: an asyncio ``Process`` from ``spawn``.

    robota.tools does not name ``asyncio.subprocess`` (S02 keeps that to robota.host).
    """

    @property
    def stderr(self) -> asyncio.StreamReader | None:
        """The leader's report of the exit status."""
        ...

    async def wait(self) -> int:
        """Wait for the leader's end."""
        ...


async def _drain(fd: int, capture: _Capture) -> None:
    """Read ``fd`` to its end into ``capture``, never blocking the event loop."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            ready = loop.create_future()
            loop.add_reader(fd, _wake, ready)
            try:
                await ready
            finally:
                loop.remove_reader(fd)
            continue
        if not chunk:
            return
        capture.add(chunk)


def _wake(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


class _Report:
    """The leader's exit-status report: read to its end, only its last bytes kept."""

    __slots__ = ("tail",)
    _KEEP: Final = 64

    def __init__(self) -> None:
        self.tail = b""

    async def read(self, stream: asyncio.StreamReader) -> None:
        """Read ``stream`` to its end, in bounded chunks."""
        while chunk := await stream.read(_CHUNK):
            self.add(chunk)

    def add(self, chunk: bytes) -> None:
        """Take the next bytes of the report."""
        self.tail = (self.tail + chunk[-self._KEEP :])[-self._KEEP :]

    def size(self) -> int:
        """How many bytes are held."""
        return len(self.tail)

    def status(self) -> int | None:
        """The status on the report's last line, or ``None`` when it is not one."""
        text = self.tail.removesuffix(b"\n").rpartition(b"\n")[2]
        return int(text) if text.isdigit() and len(text) <= 3 else None


class _Capture:
    """The head and the tail of a command's output, within a bounded memory."""

    __slots__ = ("head", "held", "limit", "tail", "total")

    def __init__(self, limit: int) -> None:
        self.limit = limit  # characters shown at most, head and tail together
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.held = False  # a process outside the group still held the output open at the end

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        # Up to 4 bytes a character: the head holds enough for every character shown, the
        # tail enough for the last half.
        room = 4 * self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            keep = 2 * self.limit
            if len(self.tail) > 2 * keep:
                del self.tail[:-keep]

    def text(self) -> str:
        """The output, cut in the middle when longer than the limit (and saying by how much)."""
        half = self.limit // 2
        head = self.head.decode("utf-8", "replace")
        if not self.tail:
            if len(head) <= self.limit:
                return head
            cut = len(head) - 2 * half
            return f"{head[:half]}{_cut_note(f'{cut:,} characters', self.total)}{head[-half:]}"
        shown_head = head[:half]
        shown_tail = self.tail.decode("utf-8", "replace")[-half:]
        cut = self.total - len(shown_head.encode()) - len(shown_tail.encode())
        return f"{shown_head}{_cut_note(f'about {cut:,} bytes', self.total)}{shown_tail}"


def _cut_note(amount: str, total: int) -> str:
    return (
        f"\n\n[... output cut: {amount} omitted from the middle of {total:,} bytes; "
        "redirect to a file and read parts of it, or filter with grep/head/tail ...]\n\n"
    )


def _result(
    output: str, ending: Ending, status: int | None, limit: float
) -> robota.core.ToolResult:
    body = output if output else "(no output)"
    if ending == "timeout":
        return robota.core.ToolResult(
            f"{body}\n[the command timed out after {limit:g} seconds and was killed; the output "
            "above is what it wrote until then]",
            is_error=True,
        )
    if ending != "done" or status is None:
        return robota.core.ToolResult(f"{body}\n[the command was stopped]", is_error=True)
    if status == 0:
        return robota.core.ToolResult(body)
    note = f"exit code {status}"
    if status > 128:
        with contextlib.suppress(ValueError):  # a plain exit status above 128, not a signal
            note += f" (killed by {signals.Signals(status - 128).name})"
    return robota.core.ToolResult(f"{body}\n{note}", is_error=True)


def _description(timeout: float, max_timeout: float, output_limit: int) -> str:
    return (
        "Run a command line with bash (`bash -c`) in the workspace root and return its combined "
        "stdout and stderr, followed by `exit code N` when it fails. Each call starts fresh in "
        "the workspace root: `cd`, variables and shell state do not carry over to the next "
        "call, so chain steps in one command (`cd sub && make`). stdin is empty (nothing can "
        "be typed in: pass flags like `--yes`, avoid interactive programs and pagers). The "
        f"command is killed after `timeout` seconds (default {timeout:g}, at most "
        f"{max_timeout:g}); background jobs (`&`) are killed when the command ends. Output "
        f"longer than {output_limit:,} characters is cut in the middle. The environment is "
        "minimal (no API keys or credentials). Prefer the dedicated tools for reading, "
        "searching and editing files; commands that change anything may need the user's "
        "approval."
    )


def _parameters(max_timeout: float) -> Mapping[str, Any]:
    return {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line to run."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": f"Seconds before the command is killed (at most {max_timeout:g}; "
                "a larger value is lowered to that).",
            },
            "description": {
                "type": "string",
                "description": "What the command does, in a few words (shown to the user).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
