"""What the ``robota`` command prints, and where.

stdout carries the answer only — the streamed text, or with ``--json`` one JSON object — so it
can be piped. Everything about the run goes to stderr through ``rich`` (styled on a terminal,
plain otherwise, ``NO_COLOR`` honoured): tool calls with their arguments, their results cut to
a few lines, the usage and cost footer, notes and prompts. Model and tool text is printed as
text, never parsed as ``rich`` markup, and never as control sequences: a fetched page, a diff, a
question or a call's arguments could otherwise clear the screen, rewrite the permission prompt
so a dangerous call reads as a harmless one, or set the clipboard. Every control character
(C0 but newline and tab, DEL, C1) and every bidirectional override is shown as a visible escape
(:func:`printable`) — on stderr always, on stdout when it is a terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TextIO, assert_never, final

from rich.console import Console
from rich.text import Text

import robota

__all__ = [
    "Printer",
    "RunRenderer",
    "ToolCallRecord",
    "format_arguments",
    "no_answer_reason",
    "printable",
    "result_json",
    "shorten",
    "unknown_window_note",
    "usage_footer",
]

_ARGUMENTS_LIMIT: Final = 200
_RESULT_LIMIT: Final = 300
_RESULT_LINES: Final = 3
_DIFF_LINES: Final = 200
_DIFF_LINE_LIMIT: Final = 500  # a minified file's one line must not flood the terminal


# C0 controls but tab, newline and a CR ending a line, DEL, C1 controls, and the bidirectional
# embeddings, overrides and isolates (a "Trojan source" line reads otherwise than it runs).
_UNPRINTABLE: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character and bidi override shown as a visible escape."""
    return _UNPRINTABLE.sub(_escape, text)


def _diff_style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return "cyan" if line.startswith("@@") else ""


def shorten(text: str, *, limit: int = _RESULT_LIMIT, lines: int = _RESULT_LINES) -> str:
    """``text`` cut to ``lines`` lines and ``limit`` characters, saying how much was left out."""
    kept = text.splitlines()[:lines] if text else [""]
    cut = "\n".join(kept)
    if len(cut) > limit:
        cut = cut[:limit]
    left = len(text) - len(cut)
    return cut if left <= 0 else f"{cut}... (+{left} chars)"


def format_arguments(arguments: Mapping[str, Any] | str) -> str:
    """A call's arguments as ``key='value', …`` (raw text when they are not a JSON object)."""
    value: object = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return shorten(arguments, limit=_ARGUMENTS_LIMIT, lines=1)
    if isinstance(value, Mapping):
        text = ", ".join(f"{key}={item!r}" for key, item in value.items())
    else:
        text = repr(value)
    return shorten(text, limit=_ARGUMENTS_LIMIT, lines=1)


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.6f}"


def usage_footer(result: robota.RunResult[Any]) -> str:
    """One line: tokens (prompt/completion/total/cached), cost, model and how the run ended."""
    usage = result.usage
    cached = "unknown" if usage.cache_read_tokens is None else str(usage.cache_read_tokens)
    partial = " (partial)" if usage.partial else ""
    parts = [
        f"usage: {usage.prompt_tokens} prompt + {usage.completion_tokens} completion = "
        f"{usage.total_tokens} total, {cached} cached{partial}",
        f"cost: {_cost(result.cost)}",
    ]
    if result.model:
        parts.append(f"model: {result.model}")
    effort = result.effort
    if effort is not None and effort.native_control_sent and effort.resolution is not None:
        parts.append(f"effort: {effort.resolution.level}")
    if result.stop_reason != "end_turn":
        parts.append(f"stop: {result.stop_reason}")
    return " | ".join(parts)


@final
class Printer:
    """stderr output for a person, through ``rich``.

    Args:
        console: The stderr console; by default one that detects the terminal itself.
    """

    __slots__ = ("console",)

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)

    def _line(self, text: str, style: str = "") -> None:
        self.console.print(Text(printable(text), style=style), soft_wrap=True)

    def tool_call(self, name: str, arguments: str) -> None:
        """A tool call about to run."""
        self._line(f"-> {name}({format_arguments(arguments)})", "cyan")

    def tool_result(self, event: robota.ToolCallFinished) -> None:
        """A tool call's result, shortened; then its diff, when its view carries one."""
        mark = "" if event.status == "completed" else f"[{event.status}] "
        self._line(f"<- {mark}{shorten(event.content)}", "red" if event.is_error else "green")
        # Duck-typed: an edit tool's view (a FileChange) has a unified diff in `.diff` (S39:
        # the view is display data, never shown to the model).
        diff = getattr(event.view, "diff", None)
        if isinstance(diff, str) and diff:
            self.diff(diff)

    def diff(self, text: str) -> None:
        """A unified diff, ``+``/``-`` lines coloured on a terminal (plain text otherwise)."""
        lines = text.splitlines()
        for line in lines[:_DIFF_LINES]:
            shown = shorten(line, limit=_DIFF_LINE_LIMIT, lines=1)
            self._line(shown, _diff_style(line))
        if len(lines) > _DIFF_LINES:
            self._line(f"... (+{len(lines) - _DIFF_LINES} diff lines)", "dim")

    def info(self, text: str) -> None:
        """Plain text a command asked for (``/cost``, ``/help``)."""
        self._line(text)

    def footer(self, result: robota.RunResult[Any]) -> None:
        """The usage and cost line."""
        self._line(usage_footer(result), "dim")

    def note(self, text: str) -> None:
        """A remark about the session (interrupted, bye …)."""
        self._line(text, "yellow")

    def error(self, text: str) -> None:
        """``error: <text>`` on one line."""
        self._line(f"error: {text}", "bold red")

    def ask(self, text: str) -> None:
        """A question, without a newline."""
        self.console.print(Text(printable(text), style="bold"), end="", soft_wrap=True)


@final
@dataclass(slots=True)
class ToolCallRecord:
    """One tool call of a run, for ``--json``."""

    id: str
    name: str
    arguments: str
    status: str = ""
    result: str = ""
    is_error: bool = False

    def to_json(self) -> dict[str, Any]:
        """The JSON form; ``arguments`` parsed when they are valid JSON."""
        try:
            arguments: object = json.loads(self.arguments) if self.arguments else {}
        except json.JSONDecodeError:
            arguments = self.arguments
        return {
            "id": self.id,
            "name": self.name,
            "arguments": arguments,
            "status": self.status,
            "result": self.result,
            "is_error": self.is_error,
        }


@final
@dataclass(slots=True)
class RunRenderer:
    """Shows one run's events as they arrive and records its tool calls.

    Args:
        out: Where streamed text goes (stdout), or ``None`` to stream nothing (``--json``).
        printer: Where tool calls go, or ``None`` to show none.
    """

    out: TextIO | None
    printer: Printer | None
    calls: list[ToolCallRecord] = field(default_factory=list)
    _started: set[str] = field(default_factory=set)
    _mid_line: bool = False

    def _end_text_line(self) -> None:
        if self._mid_line and self.out is not None:
            self.out.write("\n")
            self.out.flush()
        self._mid_line = False

    def event(self, event: robota.RunEvent) -> None:
        """Render ``event``."""
        match event:
            case robota.TextDelta():
                if self.out is not None and event.text:
                    # A terminal gets no control sequence from the model; a pipe the exact text.
                    self.out.write(printable(event.text) if _is_terminal(self.out) else event.text)
                    self.out.flush()
                    self._mid_line = not event.text.endswith("\n")
            case robota.ToolCallStarted():
                self._end_text_line()
                self._started.add(event.call.id)
                if self.printer is not None:
                    self.printer.tool_call(event.call.name, event.call.arguments)
            case robota.ToolCallFinished():
                self._end_text_line()
                call = event.call
                self.calls.append(
                    ToolCallRecord(
                        call.id,
                        call.name,
                        call.arguments,
                        event.status,
                        event.content,
                        event.is_error,
                    )
                )
                if self.printer is not None:
                    if call.id not in self._started:  # refused before a body ran: no start event
                        self.printer.tool_call(call.name, call.arguments)
                    self.printer.tool_result(event)
            case robota.RetryStarted():
                # The failed attempt's text stays on the terminal; the retried reply starts on
                # a line of its own (it is the one history keeps, issue 28), after a note
                # saying the text above it is not part of the answer.
                self._end_text_line()
                if self.printer is not None:
                    self.printer.note(retry_note(event))
            case robota.RoundStarted() | robota.MessageCommitted() | robota.SubagentEvent():
                # A sub-agent's progress is not printed: its answer shows as its tool's result.
                pass
            case _:
                assert_never(event)

    def finish(self) -> None:
        """End the streamed text with a newline, if it did not end with one."""
        self._end_text_line()


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (OSError, ValueError):  # a closed stream
        return False


def retry_note(event: robota.RetryStarted) -> str:
    """The one line shown when a model call is tried again (issue 28)."""
    error = event.error
    status = error.status if isinstance(error, robota.ProviderError) else None
    cause = f"{status} " if status else ""
    what = (
        f"moving to {event.provider}:{event.model}"
        if event.fallback
        else f"retrying (attempt {event.attempt})"
    )
    wait = f" in {event.delay:.1f}s" if event.delay >= 0.05 else ""
    dropped = "; the text above is discarded" if event.discarded else ""
    return f"[{cause}{error.code}: {what}{wait}{dropped}]"


def no_answer_reason(result: robota.RunResult[Any]) -> str | None:
    """Why a run that ended without an answer has none (a guard stopped it), else ``None``.

    The pre-send context guard (S39) commits its diagnostic as the reply but sends nothing, so
    the run is ``complete`` with nothing streamed; the command must not report that as success.
    """
    if result.status != "complete":
        return None
    if result.stop_reason == "context_limit":
        return result.text.strip() or "the request was not sent: it exceeds the context window"
    if not result.text.strip():
        return f"the run ended without an answer (stop reason: {result.stop_reason})"
    return None


def unknown_window_note(result: robota.RunResult[Any], model: str) -> str | None:
    """A note when the run's context window was unknown (S13): nothing checked its size."""
    window = result.context_window
    if window is None or window.known:
        return None
    return (
        f"note: the context window of {model} is unknown (not registered, not reported by the "
        "server), so requests were not checked for size; pass --context-window N to set it"
    )


def result_json(result: robota.RunResult[Any], calls: list[ToolCallRecord]) -> dict[str, Any]:
    """The ``--json`` object for a finished run."""
    usage = result.usage
    effort = result.effort
    return {
        "output": result.output,
        "status": result.status,
        "stop_reason": result.stop_reason,
        "model": result.model,
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
            "cached_tokens": usage.cache_read_tokens,
            "partial": usage.partial,
        },
        "cost": result.cost,
        "rounds": result.rounds,
        "effort": None
        if effort is None
        else {
            "requested": effort.requested,
            "level": None if effort.resolution is None else effort.resolution.level,
            "native_control_sent": effort.native_control_sent,
        },
        "tool_calls": [call.to_json() for call in calls],
        "context_window": None
        if result.context_window is None
        else {"tokens": result.context_window.tokens, "source": result.context_window.source},
        "run_id": result.run_id,
    }
