"""S14 diagnostic sink."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

import robota
from robota import LogEvent, MemorySink, StdlibLoggingSink, get_logger, set_global_logger_sink


def test_s14_default_sink_is_silent() -> None:
    # A fresh interpreter: importing robota and emitting diagnostics prints nothing anywhere.
    code = (
        "import robota\n"
        "robota.get_logger('robota.x').error('loud?', detail=1)\n"
        "robota.get_model_context_window('nobody-registered-this')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout == ""
    assert result.stderr == ""


def test_s14_logger_created_before_the_sink_honours_it() -> None:
    early = get_logger("robota.early")  # e.g. created at module import time
    sink = MemorySink()
    previous = set_global_logger_sink(sink)
    try:
        early.warning("after install", answer=42)
    finally:
        set_global_logger_sink(previous)
    assert [(e.logger, e.message, dict(e.fields)) for e in sink.events] == [
        ("robota.early", "after install", {"answer": 42})
    ]
    assert sink.events[0].level == logging.WARNING


def test_s14_sink_is_resolved_per_call_so_uninstalling_silences_again() -> None:
    logger = get_logger("robota.per_call")
    sink = MemorySink()
    previous = set_global_logger_sink(sink)
    logger.info("one")
    set_global_logger_sink(previous)
    logger.info("two")
    assert [e.message for e in sink.events] == ["one"]


def test_s14_explicit_sink_wins_over_the_global_one(memory_sink: MemorySink) -> None:
    own = MemorySink()
    logger = get_logger("robota.own", own)
    logger.error("mine")
    assert [e.message for e in own.events] == ["mine"]
    assert memory_sink.events == []


def test_s14_set_global_logger_sink_returns_previous_and_none_restores_silence() -> None:
    first = MemorySink()
    original = set_global_logger_sink(first)
    try:
        assert set_global_logger_sink(None) is first
        assert isinstance(robota.get_global_logger_sink(), robota.NullSink)
    finally:
        set_global_logger_sink(original)


def test_s14_rejects_an_object_that_is_not_a_sink() -> None:
    with pytest.raises(TypeError, match="emit"):
        set_global_logger_sink(object())  # type: ignore[arg-type]


def test_s14_a_raising_sink_never_changes_execution() -> None:
    class Broken:
        def emit(self, event: LogEvent) -> None:
            raise RuntimeError("sink is down")

    get_logger("robota.x", Broken()).error("still fine")  # does not raise


def test_s14_stdlib_sink_forwards_levels_and_fields(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="robota.std")
    logger = get_logger("robota.std", StdlibLoggingSink())
    logger.debug("d")
    logger.info("i")
    logger.warning("w", model="m")
    logger.error("e")
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "robota.std"]
    assert records == [
        (logging.DEBUG, "d"),
        (logging.INFO, "i"),
        (logging.WARNING, "w model='m'"),
        (logging.ERROR, "e"),
    ]
    warning = next(r for r in caplog.records if r.levelno == logging.WARNING)
    assert warning.robota_fields == {"model": "m"}


def test_s14_stdlib_sink_respects_the_stdlib_level(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="robota.level")
    logger = get_logger("robota.level", StdlibLoggingSink())
    logger.info("filtered")
    logger.warning("kept")
    assert [r.getMessage() for r in caplog.records if r.name == "robota.level"] == ["kept"]


def test_s14_stdlib_sink_can_target_one_logger(caplog: pytest.LogCaptureFixture) -> None:
    target = logging.getLogger("host.diagnostics")
    caplog.set_level(logging.INFO, logger="host.diagnostics")
    get_logger("robota.a", StdlibLoggingSink(target)).info("routed")
    assert [r.name for r in caplog.records if r.getMessage() == "routed"] == ["host.diagnostics"]


def test_memory_sink_filters_by_its_level() -> None:
    sink = MemorySink(level=logging.WARNING)
    logger = get_logger("robota.m", sink)
    logger.info("no")
    logger.warning("yes")
    assert [e.message for e in sink.events] == ["yes"]
    assert repr(logger) == "<Logger 'robota.m'>"
