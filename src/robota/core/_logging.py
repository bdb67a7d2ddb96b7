"""The diagnostic sink (S14): where Robota's own diagnostics go.

Silent by default. A library that writes to the console because it was imported is its own
defect, so diagnostics reach a destination only when a host installs one::

    import logging, robota

    logging.basicConfig(level=logging.INFO)
    robota.set_global_logger_sink(robota.StdlibLoggingSink())

A :class:`Logger` without a sink of its own resolves the process-wide sink *on every call*, so a
logger created at import time honours a sink installed later; a logger given a sink explicitly
uses that one. Levels are the standard library's (``logging.WARNING`` …) — forwarding to stdlib
``logging`` is one sink among others, not a second level system.

A sink that raises is ignored for that event: a broken diagnostic destination must never change
what the runtime does.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, final, runtime_checkable

from robota.core._messages import now

__all__ = [
    "LogEvent",
    "Logger",
    "LoggerSink",
    "MemorySink",
    "NullSink",
    "StdlibLoggingSink",
    "get_global_logger_sink",
    "get_logger",
    "set_global_logger_sink",
]


@final
@dataclass(frozen=True, slots=True)
class LogEvent:
    """One diagnostic event.

    Attributes:
        level: A standard ``logging`` level number (``logging.WARNING`` …).
        logger: The dotted name of the logger that emitted it (``"robota.models"`` …).
        message: A fixed, human-readable message; variable facts go in ``fields``.
        fields: Structured facts (model name, tool name …). Never secrets.
        created: Wall-clock time (``time.time()``) at emission.
    """

    level: int
    logger: str
    message: str
    fields: Mapping[str, object] = field(default_factory=dict)
    created: float = field(default_factory=now)


@runtime_checkable
class LoggerSink(Protocol):
    """A destination for :class:`LogEvent` values. Implement ``emit``; it may filter by level."""

    def emit(self, event: LogEvent) -> None:
        """Receive one event. Must not block for long; exceptions are ignored by the caller."""
        ...


@final
class NullSink:
    """The default sink: discards everything."""

    __slots__ = ()

    def emit(self, event: LogEvent) -> None:
        """Discard ``event``."""


@final
class MemorySink:
    """Keeps events in a list — for tests, and for hosts that show diagnostics in their own UI.

    Attributes:
        events: Every event received, oldest first.
    """

    __slots__ = ("events", "level")

    def __init__(self, level: int = logging.NOTSET) -> None:
        self.events: list[LogEvent] = []
        self.level = level

    def emit(self, event: LogEvent) -> None:
        """Keep ``event`` if its level is at least this sink's level."""
        if event.level >= self.level:
            self.events.append(event)


@final
class StdlibLoggingSink:
    """Forwards events to the standard library's ``logging``.

    Each event goes to ``logging.getLogger(event.logger)`` (or to ``logger`` when given) with the
    fields appended to the message as ``key=value`` pairs and also attached to the record as
    ``record.robota_fields``. Whether anything is printed is then ``logging``'s configuration.
    """

    __slots__ = ("_logger",)

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self._logger = logger

    def emit(self, event: LogEvent) -> None:
        """Log ``event`` through ``logging``."""
        target = self._logger if self._logger is not None else logging.getLogger(event.logger)
        if not target.isEnabledFor(event.level):
            return
        text = event.message
        if event.fields:
            text += " " + " ".join(f"{key}={value!r}" for key, value in event.fields.items())
        target.log(event.level, "%s", text, extra={"robota_fields": dict(event.fields)})


_NULL_SINK = NullSink()
_global_sink: LoggerSink = _NULL_SINK


def set_global_logger_sink(sink: LoggerSink | None) -> LoggerSink:
    """Install the process-wide diagnostic sink and return the previous one.

    ``None`` restores silence. Loggers without a sink of their own read it on every call,
    including loggers created before this call.
    """
    global _global_sink  # noqa: PLW0603 - S14 names this the one process-wide sink
    if sink is not None and not isinstance(sink, LoggerSink):
        raise TypeError(f"a logger sink needs an emit(event) method; got {type(sink).__name__}")
    previous = _global_sink
    _global_sink = _NULL_SINK if sink is None else sink
    return previous


def get_global_logger_sink() -> LoggerSink:
    """The process-wide sink currently installed (a :class:`NullSink` unless a host set one)."""
    return _global_sink


@final
class Logger:
    """A named diagnostic logger.

    Args:
        name: Dotted name, conventionally ``robota.<area>``.
        sink: A sink that always wins over the process-wide one; ``None`` follows the global sink.
    """

    __slots__ = ("name", "sink")

    def __init__(self, name: str, sink: LoggerSink | None = None) -> None:
        self.name = name
        self.sink = sink

    def log(self, level: int, message: str, /, **fields: object) -> None:
        """Emit one event at ``level``."""
        sink = self.sink if self.sink is not None else _global_sink
        if sink is _NULL_SINK:
            return
        # S14: a broken sink must never change what the runtime does.
        with contextlib.suppress(Exception):
            sink.emit(LogEvent(level, self.name, message, fields))

    def debug(self, message: str, /, **fields: object) -> None:
        """Emit at ``logging.DEBUG``."""
        self.log(logging.DEBUG, message, **fields)

    def info(self, message: str, /, **fields: object) -> None:
        """Emit at ``logging.INFO``."""
        self.log(logging.INFO, message, **fields)

    def warning(self, message: str, /, **fields: object) -> None:
        """Emit at ``logging.WARNING``."""
        self.log(logging.WARNING, message, **fields)

    def error(self, message: str, /, **fields: object) -> None:
        """Emit at ``logging.ERROR``."""
        self.log(logging.ERROR, message, **fields)

    def __repr__(self) -> str:
        return f"<Logger {self.name!r}>"


def get_logger(name: str, sink: LoggerSink | None = None) -> Logger:
    """A :class:`Logger` named ``name``; see :class:`Logger` for how its sink is chosen."""
    return Logger(name, sink)
