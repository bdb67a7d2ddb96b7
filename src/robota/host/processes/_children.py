"""Children's sessions (S09): whether child processes share this process's terminal.

One decision for the whole process, made once by its entry point with :func:`isolate_children`:
it is kept on the ``sys`` module so every copy of this module sees the same answer, and once on
it never turns off. While it is off, :func:`spawn` passes the caller's options through untouched.
Once on:

* each child leads its own session and process group, so it cannot open ``/dev/tty`` or type into
  the terminal;
* a terminal descriptor may not be handed to it: an explicit inherit (``None``) or one of this
  process's standard streams is refused — :func:`spawn` defaults to no stdin and piped output,
  so a stream left to the default hands none;
* the child's whole group is registered with the exit registry (S08) and killed when this process
  ends, and :func:`signal_group` reaches the group, not only the leader — but only while the
  leader lives: once it is reaped its pid (and so the group id) may belong to an unrelated
  process, so the registration is released and nothing is signalled for it. A descendant that
  outlives its leader is left running (a documented residual).

Windows stays off: a console is not a session a child can leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
import sys
from collections.abc import Coroutine, Mapping
from typing import IO, Any, Final

from robota.core import ConfigurationError
from robota.host.store._lifetime import register_at_exit

__all__ = ["children_isolated", "isolate_children", "signal_group", "spawn"]

_FLAG: Final = "_robota_children_isolated"
_GROUPS: Final = "_robota_isolated_groups"

StdStream = int | IO[Any] | None


def isolate_children() -> None:
    """Give every child started through :func:`spawn` its own session from now on (S09).

    Call it once, early, from the program's entry point. It never turns off. No-op on Windows.
    """
    if os.name != "posix":
        return
    setattr(sys, _FLAG, True)


def children_isolated() -> bool:
    """Whether the process-wide decision is on."""
    return bool(getattr(sys, _FLAG, False))


def _groups() -> set[int]:
    groups: set[int] | None = getattr(sys, _GROUPS, None)
    if groups is None:
        groups = set()
        setattr(sys, _GROUPS, groups)
    return groups


def _is_terminal_stream(value: StdStream) -> bool:
    if value is None:
        return True  # an explicit inherit hands the child this process's descriptors
    if value in (asyncio.subprocess.PIPE, asyncio.subprocess.DEVNULL, asyncio.subprocess.STDOUT):
        return False
    fd = value if isinstance(value, int) else None
    if fd is None:
        fileno = getattr(value, "fileno", None)
        if fileno is None:
            return False
        try:
            fd = int(fileno())
        except (OSError, ValueError):
            return False
    if fd in (0, 1, 2):
        return True
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _kill_group(pgid: int) -> None:
    if pgid in _groups():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signals.SIGKILL)


async def spawn(
    program: str,
    *args: str,
    stdin: StdStream = asyncio.subprocess.DEVNULL,
    stdout: StdStream = asyncio.subprocess.PIPE,
    stderr: StdStream = asyncio.subprocess.PIPE,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> asyncio.subprocess.Process:
    """Start ``program`` with ``args`` under the process-wide decision (S09).

    While the decision is off, this is ``asyncio.create_subprocess_exec`` with the options given.
    While it is on, the child leads its own session, may not be handed a terminal descriptor, and
    its group is killed when this process ends (while its leader lives).

    Raises:
        ConfigurationError: when the decision is on and a standard stream would hand the child a
            terminal (``None``, this process's stdin/stdout/stderr, or a tty).
    """
    isolated = children_isolated()
    if isolated:
        for name, value in (("stdin", stdin), ("stdout", stdout), ("stderr", stderr)):
            if _is_terminal_stream(value):
                raise ConfigurationError(
                    f"{name} would hand the child a terminal descriptor, which an isolated child "
                    "may not have (S09); pass PIPE, DEVNULL or a file"
                )
        # A session leader already leads its own process group (and may not call setpgid).
        options.pop("process_group", None)
        options["start_new_session"] = True
    leads_group = isolated or options.get("process_group") == 0
    process = await _started(
        asyncio.create_subprocess_exec(
            program, *args, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env=env, **options
        ),
        leads_group=leads_group,
    )
    if not isolated:
        return process
    pgid = process.pid
    _groups().add(pgid)
    registration = register_at_exit(lambda: _kill_group(pgid))

    def leader_reaped(_: object) -> None:
        # Once the leader is reaped its pid may be reused: stop treating it as our group. A
        # watcher cancelled at loop shutdown reaped nothing: the registration stays.
        if process.returncode is not None:
            _groups().discard(pgid)
            registration.release()

    watcher = asyncio.ensure_future(process.wait())
    watcher.add_done_callback(leader_reaped)
    return process


async def _started(
    creating: Coroutine[Any, Any, asyncio.subprocess.Process], *, leads_group: bool
) -> asyncio.subprocess.Process:
    """Await ``creating`` so that a cancellation cannot interrupt it midway.

    A cancellation landing inside asyncio's subprocess creation can leave the cancelled task
    waiting forever for a transport that never reports its end (CPython gh-103847; it is how a
    cancelled hook hung its canceller). So the creation always finishes; a cancellation that
    arrived meanwhile then kills the new child (its group, when it leads one), waits for its
    end and is raised — never swallowed.
    """
    task = asyncio.ensure_future(creating)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        cancelled = sys.exc_info()[1]
    while not task.done():
        with contextlib.suppress(asyncio.CancelledError):  # raised below, once, unchanged
            await asyncio.wait({task})  # never cancels what it waits on
    if not task.cancelled() and task.exception() is None:
        process = task.result()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if leads_group:
                os.killpg(process.pid, signals.SIGKILL)
            else:
                process.kill()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await process.communicate()  # drains and closes its pipes, reaps it
    assert cancelled is not None
    raise cancelled


def signal_group(process: asyncio.subprocess.Process, sig: int = signals.SIGTERM) -> bool:
    """Send ``sig`` to ``process``'s whole group while its leader lives (S09).

    When children are not isolated, only the process itself is signalled. Returns whether a
    signal was sent: nothing is sent for a leader that has exited.
    """
    if process.returncode is not None:
        return False
    pgid = process.pid
    try:
        if children_isolated() and pgid in _groups():
            os.killpg(pgid, sig)
        else:
            process.send_signal(sig)
    except ProcessLookupError:
        return False
    return True
