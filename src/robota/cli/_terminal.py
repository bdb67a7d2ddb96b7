"""The terminal side of a session: reading lines, Ctrl-C, and asking y/N for a tool call.

Three small pieces the ``run`` and ``chat`` commands share:

* :class:`LineReader` reads stdin lines without blocking the event loop. Each read runs in a
  daemon thread (a blocked read never delays the process's exit), and a read whose waiter was
  cancelled is *kept*: the next ``readline()`` gets that line, so nothing typed is lost.
* :class:`Interrupts` turns SIGINT into a cancellation of the current turn — the turn's
  :class:`~robota.AbortController` aborts, the run commits what it received as interrupted and
  the session goes on. A tool already running is waited for (S23, S38), and the user is told
  which; a second Ctrl-C in the same turn stops waiting (:meth:`~robota.AbortController.abandon`:
  the tool's result is recorded as interrupted). Pressed at the prompt it ends the session. A
  third press in a turn whose run still has not settled cancels the command outright.
* :class:`TerminalApprover` is the :class:`~robota.Approver` a :class:`~robota.PermissionGate`
  calls for an ``ask``: it prints the call on stderr and reads ``y``/``N``/``a`` (always, for
  the rest of the session) from stdin. No answer (stdin closed, or the turn cancelled) is no.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
from collections.abc import Callable
from typing import Final, TextIO, final

import robota
import robota.tools
from robota.cli._output import Printer, format_arguments, shorten

__all__ = ["Interrupts", "LineReader", "TerminalApprover"]

_QUESTION_LIMIT: Final = 4_000
_QUESTION_LINES: Final = 60
_CHOICE_LIMIT: Final = 300


@final
class LineReader:
    """Lines from a text stream, awaited; ``None`` at end of input.

    Args:
        stream: Usually ``sys.stdin``.
    """

    __slots__ = ("_lock", "_pending", "_stream")

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pending: asyncio.Future[str] | None = None
        # One line answers one caller: concurrent readers take lines in turn, never share one.
        self._lock = asyncio.Lock()

    def _start(self) -> asyncio.Future[str]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()

        def settle(line: str) -> None:
            if not future.done():
                future.set_result(line)

        def read() -> None:
            try:
                line = self._stream.readline()
            except (OSError, ValueError):  # a closed or broken stdin reads as end of input
                line = ""
            with contextlib.suppress(RuntimeError):  # the loop closed while we were blocked
                loop.call_soon_threadsafe(settle, line)

        threading.Thread(target=read, name="robota-stdin", daemon=True).start()
        return future

    async def readline(self) -> str | None:
        """The next line without its newline, or ``None`` at end of input."""
        async with self._lock:
            if self._pending is None:
                self._pending = self._start()
            # shield: a cancelled waiter leaves the read (and its line) for the next caller.
            line = await asyncio.shield(self._pending)
            self._pending = None
        return None if line == "" else line.rstrip("\r\n")


@final
class Interrupts:
    """SIGINT handling for a session; use it as a context manager around the session.

    Outside a turn, Ctrl-C sets :attr:`quit`. During one, the first Ctrl-C aborts the turn's
    controller (a running tool is waited for, and ``printer`` says so, naming it); the second
    abandons it (the run stops waiting for the tool); a third cancels the command's main task,
    a last resort for a run that still does not settle.

    Args:
        printer: Where the "waiting for tool …" notes go (stderr); ``None`` prints none.
    """

    __slots__ = ("_controller", "_installed", "_loop", "_printer", "_running", "_task", "quit")

    def __init__(self, printer: Printer | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._printer = printer
        self._controller: robota.AbortController | None = None
        self._installed: Callable[[], None] | None = None
        self._running: dict[str, str] = {}  # the turn's tool bodies now running: id -> name
        self.quit = asyncio.Event()

    def __enter__(self) -> Interrupts:
        try:
            self._loop.add_signal_handler(signal.SIGINT, self._on_interrupt)
        except (NotImplementedError, RuntimeError):  # no loop signal handlers (Windows)
            previous = signal.signal(
                signal.SIGINT, lambda *_: self._loop.call_soon_threadsafe(self._on_interrupt)
            )
            self._installed = lambda: self._restore(previous)
        else:
            self._installed = self._remove_handler
        return self

    def _remove_handler(self) -> None:
        self._loop.remove_signal_handler(signal.SIGINT)

    @staticmethod
    def _restore(previous: signal._HANDLER) -> None:
        signal.signal(signal.SIGINT, previous)

    def __exit__(self, *exc_info: object) -> None:
        if self._installed is not None:
            self._installed()
            self._installed = None

    def begin_turn(self) -> robota.AbortController:
        """A fresh controller for the next turn; Ctrl-C aborts it until :meth:`end_turn`."""
        self._controller = robota.AbortController()
        self._running.clear()
        return self._controller

    def end_turn(self) -> None:
        """The turn settled: Ctrl-C means "leave" again."""
        self._controller = None
        self._running.clear()

    def observe(self, event: robota.RunEvent) -> None:
        """Follow the turn's events, to know which tools are running when Ctrl-C comes."""
        if isinstance(event, robota.ToolCallStarted):
            self._running[event.call.id] = event.call.name
        elif isinstance(event, robota.ToolCallFinished):
            self._running.pop(event.call.id, None)

    @property
    def signal(self) -> robota.AbortSignal | None:
        """The current turn's signal, if a turn is running."""
        return None if self._controller is None else self._controller.signal

    def _on_interrupt(self) -> None:
        controller = self._controller
        if controller is None:
            self.quit.set()
        elif not controller.signal.aborted:
            controller.abort(robota.AbortError("interrupted by Ctrl-C"))
            if self._running:
                self._note(
                    f"Stopping: waiting for {self._tools()} to finish "
                    "(Ctrl-C again to stop waiting)"
                )
        elif not controller.signal.abandoned:
            controller.abandon()
            if self._running:
                self._note(
                    f"Stopped waiting for {self._tools()}: recorded as interrupted "
                    "(Ctrl-C again to quit at once)"
                )
        elif self._task is not None:
            self._task.cancel()

    def _tools(self) -> str:
        names = sorted(set(self._running.values()))
        quoted = ", ".join(repr(name) for name in names)
        return f"tool {quoted}" if len(names) == 1 else f"tools {quoted}"

    def _note(self, text: str) -> None:
        if self._printer is not None:
            self._printer.note(text)


async def first_line_or_signal(
    reader: LineReader, stop: robota.AbortSignal | asyncio.Event | None
) -> tuple[bool, str | None]:
    """Read a line unless ``stop`` fires first; ``(stopped, line)``."""
    read = asyncio.ensure_future(reader.readline())
    if stop is None:
        return False, await read
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({read, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if read.done():
        return False, read.result()
    read.cancel()
    return True, None


def _key_argument_first(request: robota.ApprovalRequest) -> dict[str, object]:
    """The call's arguments with the one its rules judge first (the path, the command, S12).

    So the prompt shows the path of a write or the command of a shell call before any long
    argument (a file's new content) is cut off.
    """
    arguments = dict(request.arguments)
    declared = request.tool.permission_argument
    if declared is not None and declared.key in arguments:
        return {declared.key: arguments.pop(declared.key), **arguments}
    return arguments


def _same_call(request: robota.ApprovalRequest) -> str:
    """A key naming exactly this call: the agent, the tool and every argument."""
    arguments = json.dumps(request.arguments, sort_keys=True, default=repr)
    return json.dumps([request.agent, request.tool.name, arguments])


@final
class TerminalApprover:
    """Asks on the terminal whether a tool call may run (an :class:`~robota.Approver`).

    ``a`` (always) returns ``remember=True``, so the gate keeps an allow rule for calls like
    this one. The gate keeps one only when a rule can name the call exactly (S21: not, for
    example, a command with a redirection), so the approver also keeps the consent itself, for
    this exact call (same agent, tool and arguments): asked about it again, it allows without
    asking. Calls that always reach a person are never remembered.

    Args:
        reader: Where answers are read.
        printer: Where the question is shown (stderr).
        interrupts: When given, a cancelled turn stops waiting for an answer (a refusal).
    """

    __slots__ = ("_always", "_interrupts", "_printer", "_reader", "_turn")

    def __init__(
        self, reader: LineReader, printer: Printer, interrupts: Interrupts | None = None
    ) -> None:
        self._reader = reader
        self._printer = printer
        self._interrupts = interrupts
        self._always: set[str] = set()
        # Calls of one response run at once and may ask together: one question at a time, so
        # each prompt is shown whole and the line typed after it answers it alone.
        self._turn = asyncio.Lock()

    async def __call__(self, request: robota.ApprovalRequest) -> robota.Approval:
        """Ask about ``request``; ``y`` approves, ``a`` approves for the session, else no."""
        async with self._turn:
            return await self._ask(request)

    async def _ask(self, request: robota.ApprovalRequest) -> robota.Approval:
        call = f"{request.tool.name}({format_arguments(_key_argument_first(request))})"
        key = None if request.always_ask else _same_call(request)
        if key is not None and key in self._always:
            return robota.Approval(True, remember=True)
        choices = "[y/N]" if request.always_ask else "[y/N/a=always]"
        self._printer.ask(f"allow {call}? ({request.reason}) {choices} ")
        stop = None if self._interrupts is None else self._interrupts.signal
        stopped, line = await first_line_or_signal(self._reader, stop)
        answer = "" if line is None else line.strip().lower()
        if stopped or line is None:
            self._printer.note("no answer: the call is refused")
            return robota.Approval(False, reason="no one answered")
        if answer in ("y", "yes"):
            return robota.Approval(True)
        if answer in ("a", "always") and key is not None:
            self._always.add(key)
            return robota.Approval(True, remember=True)
        return robota.Approval(False, reason="declined at the terminal")

    async def answer(self, question: robota.tools.Question) -> str | None:
        """Ask the model's ``question`` (``robota.tools.ask_user``); ``None`` when declined.

        Suggested choices are numbered; a number picks that choice, anything else is the
        answer as typed. An empty line, end of input or a cancelled turn declines.
        """
        async with self._turn:
            return await self._answer(question)

    async def _answer(self, question: robota.tools.Question) -> str | None:
        # Shown cut (a model's megabyte question must not flood the terminal); answered whole.
        text = shorten(question.text, limit=_QUESTION_LIMIT, lines=_QUESTION_LINES)
        self._printer.note(f"the model asks: {text}")
        for number, choice in enumerate(question.choices, 1):
            self._printer.note(f"  {number}. {shorten(choice, limit=_CHOICE_LIMIT, lines=1)}")
        self._printer.ask("your answer (empty to decline): ")
        stop = None if self._interrupts is None else self._interrupts.signal
        stopped, line = await first_line_or_signal(self._reader, stop)
        text = "" if stopped or line is None else line.strip()
        if not text:
            self._printer.note("no answer: the model is told you declined")
            return None
        if text.isdigit() and 1 <= int(text) <= len(question.choices):
            return question.choices[int(text) - 1]
        return text
