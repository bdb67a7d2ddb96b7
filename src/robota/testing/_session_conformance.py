"""The session store conformance kit: hold any :class:`~robota.sessions.SessionStore` to the port.

A store author writes one factory returning a handle on the store under test and awaits
:func:`run_session_store_conformance`::

    async def test_my_store_conforms(tmp_path) -> None:
        report = await run_session_store_conformance(lambda: MyStore(tmp_path / "s.db"))
        report.raise_for_failures()

Every factory call must return a handle on the *same* store (a new instance on the same path or
DSN for a durable store, so the kit sees appends and leases across handles; the one shared
instance for an in-memory store). Checks work under fresh random session ids, so the kit can run
again on the same store. It closes every handle once when the run ends. Each check is bounded by
a timeout, so a store that hangs fails instead of hanging the test.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import final

from robota.core import ConfigurationError
from robota.testing._conformance import ScenarioStatus
from robota.testing._conformance_io import ScenarioFailed, describe, raise_for_failures
from robota.testing._session_conformance_checks import (
    CHECKS,
    SESSION_STORE_CHECKS,
    Probe,
    SessionStoreCheck,
    SessionStoreFactory,
)

__all__ = [
    "SESSION_STORE_CHECKS",
    "SessionStoreCheck",
    "SessionStoreCheckResult",
    "SessionStoreConformanceReport",
    "SessionStoreFactory",
    "run_session_store_conformance",
]


@final
@dataclass(frozen=True, slots=True)
class SessionStoreCheckResult:
    """How one check went: ``passed``, ``failed`` (with why) or ``not_run``."""

    check: SessionStoreCheck
    status: ScenarioStatus
    message: str = ""
    duration: float = 0.0

    def __str__(self) -> str:
        line = f"{self.check}: {self.status}"
        return f"{line} — {self.message}" if self.message else line


@final
@dataclass(frozen=True, slots=True)
class SessionStoreConformanceReport:
    """Every check's result, in :data:`SESSION_STORE_CHECKS` order; ``store``: its class name."""

    results: tuple[SessionStoreCheckResult, ...]
    store: str | None = None

    @property
    def passed(self) -> bool:
        """Whether every requested check passed."""
        return not self.failures and any(r.status == "passed" for r in self.results)

    @property
    def failures(self) -> tuple[SessionStoreCheckResult, ...]:
        """The checks that failed."""
        return tuple(r for r in self.results if r.status == "failed")

    @property
    def not_run(self) -> tuple[SessionStoreCheck, ...]:
        """The checks the caller did not request."""
        return tuple(r.check for r in self.results if r.status == "not_run")

    def raise_for_failures(self) -> None:
        """Raise ``AssertionError`` naming every failed check and why; nothing otherwise."""
        raise_for_failures(
            f"session store conformance failed for {self.store or 'the store'}",
            self.failures,
            self.not_run,
        )

    def __str__(self) -> str:
        head = f"session store conformance of {self.store or 'store'}:"
        return "\n".join([head] + [f"  {r}" for r in self.results])


async def _run_one(
    factory: SessionStoreFactory, check: SessionStoreCheck, seconds: float, bound: float
) -> tuple[list[str], float, list[object]]:
    probe = Probe(factory, bound)
    problems: list[str] = []
    started = time.monotonic()
    try:
        async with asyncio.timeout(seconds):
            await CHECKS[check](probe)
    except ScenarioFailed as failure:
        problems.append(str(failure))
    except TimeoutError:
        problems.append(f"did not finish within {seconds:g} s")
    except Exception as exc:  # noqa: BLE001 - reported as the check's failure, not raised
        problems.append(f"unexpected {describe(exc)}")
    try:
        await probe.release_all()
    except Exception as exc:  # noqa: BLE001 - a failing release fails the check
        problems.append(f"release() raised {describe(exc)}")
    return problems, time.monotonic() - started, list(probe.handles)


async def run_session_store_conformance(
    factory: SessionStoreFactory,
    *,
    checks: Iterable[SessionStoreCheck] | None = None,
    check_timeout: float = 30.0,
    refusal_bound: float = 0.5,
) -> SessionStoreConformanceReport:
    """Run the requested checks of the session store contract one after another.

    * ``round_trip`` — every entry kind (messages with ids, timestamps, tool calls, media parts,
      usage with ``partial`` and reasoning tokens, Unicode with NUL and U+2028) reads back
      exactly, whether given to ``create`` or appended; the header keeps its fork origin.
    * ``load_after`` — ``load_after(id, n)`` gives the header and the entries after the first
      ``n`` (none past the end), through any handle; a bad count raises ConfigurationError, an
      unknown id :class:`~robota.sessions.SessionNotFoundError`.
    * ``create_once`` — a second ``create`` of an id raises ConfigurationError (code
      ``session_exists``) and changes nothing.
    * ``append_order`` — 100 appends read back in order; the lease names its session.
    * ``sessions_isolated`` — ids sharing a prefix or holding ``%``/``_`` read only their own.
    * ``unknown_session`` — ``load``/``acquire``/``delete`` of an unknown id raise
      :class:`~robota.sessions.SessionNotFoundError`.
    * ``second_writer_refused`` — a held session's ``acquire`` (same handle, second handle) and
      ``delete`` raise :class:`~robota.sessions.SessionBusyError` within ``refusal_bound``
      seconds; the holder still writes.
    * ``release_then_acquire`` — after release (idempotent) the session is acquired again; a
      stale lease's release does not free the next holder's.
    * ``append_after_release_refused`` — a released lease's ``append`` raises StorageError and
      stores nothing.
    * ``visible_across_handles`` — appends are visible to another handle and to a later one.
    * ``list_sessions`` — every header, ordered by ``(created_at, id)``.
    * ``session_infos`` — ``list_session_infos`` gives each session's info exactly as the fold
      of its log gives it (metadata, turns after a rewind, a pending and an abandoned turn,
      usage and cost totals, a fork's origin), in the same order, through another handle.
    * ``delete`` — header and log are gone; the id can be created again, empty.
    * ``bad_id_refused`` — empty, over-long, control-character and ``/`` ids raise
      ConfigurationError.

    Raises:
        ConfigurationError: no check, an unknown one, or a non-positive time bound.
    """
    given: frozenset[object] = frozenset()
    if checks is not None:
        if isinstance(checks, str):
            raise ConfigurationError(f"checks must be a collection of names; write [{checks!r}]")
        given = frozenset(checks)
        unknown = sorted(str(c) for c in given if c not in SESSION_STORE_CHECKS)
        if len(unknown) > 0 or len(given) == 0:
            raise ConfigurationError(
                f"unknown or no session store checks {unknown}; choose among "
                f"{list(SESSION_STORE_CHECKS)}"
            )
    bounds: tuple[tuple[str, object], ...] = (
        ("check_timeout", check_timeout),
        ("refusal_bound", refusal_bound),
    )
    for name, value in bounds:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ConfigurationError(f"{name} must be a positive number of seconds, got {value!r}")
    results: list[SessionStoreCheckResult] = []
    handles: list[object] = []
    store_name: str | None = None
    try:
        for check in SESSION_STORE_CHECKS:
            if checks is not None and check not in given:
                results.append(SessionStoreCheckResult(check, "not_run", "not requested"))
                continue
            problems, duration, opened = await _run_one(
                factory, check, float(check_timeout), float(refusal_bound)
            )
            handles.extend(opened)
            if opened and store_name is None:
                store_name = type(opened[0]).__name__
            status: ScenarioStatus = "failed" if problems else "passed"
            results.append(SessionStoreCheckResult(check, status, "; ".join(problems), duration))
    finally:
        for handle in {id(h): h for h in handles}.values():
            aclose = getattr(handle, "aclose", None)
            if aclose is not None:
                await aclose()
    return SessionStoreConformanceReport(tuple(results), store_name)
