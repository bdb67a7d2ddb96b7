"""The journal conformance kit: hold any :class:`~robota.ExecutionJournal` to the port's contract.

A journal author — of one of this package's back-ends or their own — writes one factory that
returns a handle on the store under test and awaits :func:`run_journal_conformance`::

    async def test_my_journal_conforms(tmp_path) -> None:
        report = await run_journal_conformance(lambda: MyJournal(tmp_path / "journal"))
        report.raise_for_failures()

The factory is called whenever a check needs a handle, and every call must return a handle on the
*same durable store*: for a durable back-end a new instance on the same path or DSN (so the kit
sees that an append is visible, and a lease exclusive, across handles), for an in-memory journal
the one shared instance. Checks write under fresh random execution ids, so they are independent
of each other and of what the store already holds, and the kit can run again on the same store.
It closes every handle it was given, each once, when the run ends.

The report says, per check, whether it passed, failed (with a message naming the call, what it
did and what the contract wanted) or was not run because the caller did not ask for it. Each
check is bounded by a timeout, so a journal that hangs fails instead of hanging the test.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import final

from robota.core import ConfigurationError
from robota.testing._conformance import ScenarioStatus
from robota.testing._conformance_io import ScenarioFailed, describe, raise_for_failures
from robota.testing._journal_conformance_checks import (
    CHECKS,
    JOURNAL_CONFORMANCE_CHECKS,
    JournalCheck,
    JournalFactory,
    Limits,
    Probe,
    Run,
)

__all__ = [
    "JOURNAL_CONFORMANCE_CHECKS",
    "JournalCheck",
    "JournalCheckResult",
    "JournalConformanceReport",
    "JournalFactory",
    "run_journal_conformance",
]


@final
@dataclass(frozen=True, slots=True)
class JournalCheckResult:
    """How one check went.

    Attributes:
        check: The check.
        status: ``passed``, ``failed`` or ``not_run`` (the caller did not request it).
        message: Why it failed (the call, what it did, what the contract wants); for a check
            not run, why not; empty when it passed.
        duration: Seconds it took (0 when not run).
    """

    check: JournalCheck
    status: ScenarioStatus
    message: str = ""
    duration: float = 0.0

    def __str__(self) -> str:
        line = f"{self.check}: {self.status}"
        return f"{line} — {self.message}" if self.message else line


@final
@dataclass(frozen=True, slots=True)
class JournalConformanceReport:
    """Every check's result, in the kit's order (:data:`JOURNAL_CONFORMANCE_CHECKS`).

    Attributes:
        results: One :class:`JournalCheckResult` per check, requested or not.
        journal: The class name of the journal under test (from the first handle), when the
            factory returned one.
    """

    results: tuple[JournalCheckResult, ...]
    journal: str | None = None

    @property
    def passed(self) -> bool:
        """Whether every requested check passed (those not run are not counted as passes)."""
        return not self.failures and any(r.status == "passed" for r in self.results)

    @property
    def failures(self) -> tuple[JournalCheckResult, ...]:
        """The checks that failed."""
        return tuple(r for r in self.results if r.status == "failed")

    @property
    def not_run(self) -> tuple[JournalCheck, ...]:
        """The checks the caller did not request."""
        return tuple(r.check for r in self.results if r.status == "not_run")

    def result(self, check: JournalCheck) -> JournalCheckResult:
        """The result of ``check``.

        Raises:
            KeyError: ``check`` is not a journal conformance check.
        """
        for item in self.results:
            if item.check == check:
                return item
        raise KeyError(check)

    def raise_for_failures(self) -> None:
        """Raise ``AssertionError`` naming every failed check and why; do nothing otherwise.

        Checks not run are listed in the message too, so a green test never hides them.
        """
        raise_for_failures(
            f"journal conformance failed for {self.journal or 'the journal'}",
            self.failures,
            self.not_run,
        )

    def __str__(self) -> str:
        return "\n".join(
            [f"journal conformance of {self.journal or 'journal'}:"]
            + [f"  {r}" for r in self.results]
        )


@dataclass(slots=True)
class _Outcome:
    problems: list[str] = field(default_factory=list)
    duration: float = 0.0


async def _run_one(run: Run, check: JournalCheck) -> _Outcome:
    probe = Probe(run, check)
    outcome = _Outcome()
    started = time.monotonic()
    seconds = run.limits.check_timeout
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            await CHECKS[check](probe)
    except ScenarioFailed as failure:
        outcome.problems.append(str(failure))
    except TimeoutError as exc:
        if not scope.expired():
            outcome.problems.append(f"unexpected {describe(exc)}")
        else:
            outcome.problems.append(
                f"did not finish within {seconds:g} s; it was waiting for {probe.step}"
            )
    except Exception as exc:  # noqa: BLE001 - reported as the check's failure, not raised
        outcome.problems.append(f"unexpected {describe(exc)}")
    cleanup = await probe.release_all()
    if not outcome.problems:
        outcome.problems.extend(cleanup)
    outcome.duration = time.monotonic() - started
    return outcome


def _requested(checks: Iterable[JournalCheck] | None) -> frozenset[JournalCheck]:
    if checks is None:
        return frozenset(JOURNAL_CONFORMANCE_CHECKS)
    if isinstance(checks, str):
        raise ConfigurationError(
            f"checks must be a collection of check names, not the string {checks!r}; "
            f"write checks=[{checks!r}]"
        )
    chosen = frozenset(checks)
    unknown = sorted(str(c) for c in chosen if c not in JOURNAL_CONFORMANCE_CHECKS)
    if unknown:
        raise ConfigurationError(
            f"unknown journal conformance checks {unknown}; choose among "
            f"{list(JOURNAL_CONFORMANCE_CHECKS)}"
        )
    if not chosen:
        raise ConfigurationError(
            "no journal conformance check requested; an empty run proves nothing"
        )
    return chosen


async def run_journal_conformance(
    factory: JournalFactory,
    *,
    checks: Iterable[JournalCheck] | None = None,
    check_timeout: float = 30.0,
    refusal_bound: float = 0.5,
) -> JournalConformanceReport:
    """Run the requested checks of the journal contract (S40, S10) one after another.

    Each check asks ``factory`` for the handles it needs, works under fresh random execution
    ids and releases every lease it took; the kit closes every handle once, when the run ends
    (a failing ``aclose()`` fails the check that first received the handle). Records compare
    value for value and by their encoded JSON, so ``True`` does not pass for ``1``.

    * ``round_trip`` — one record of every kind, with messages carrying ids and timestamps,
      usage with reasoning tokens and ``partial``, tool calls, ``None`` fields, Unicode (a NUL
      and U+2028 included) and nested JSON payloads, reads back exactly as appended.
    * ``append_order`` — 100 appends read back in append order; the lease names its execution.
    * ``executions_isolated`` — interleaved appends to executions whose ids share a prefix or
      hold ``%`` and ``_`` each read back only their own records.
    * ``unknown_execution_empty`` — an execution never written (a prefix of a written id, say)
      reads as ``()``.
    * ``second_writer_refused`` — acquiring a held execution, through the same handle and
      through a second handle, raises :class:`~robota.ExecutionLockedError` naming it within
      ``refusal_bound`` seconds, never after a wait; the holder still writes.
    * ``executions_held_together`` — three executions held at once, on one handle and two.
    * ``release_then_acquire`` — after ``release()`` (or leaving ``async with lease:``) the
      execution can be acquired again, on the same handle and on another; records accumulate.
    * ``release_idempotent`` — ``release()`` twice does not raise, and a stale lease's release
      does not free the execution from its next holder.
    * ``append_after_release_refused`` — a released lease's ``append()`` raises
      :class:`~robota.StorageError` and stores nothing, also once someone else holds it.
    * ``unencodable_record_refused`` — a record holding a value that is not JSON (an
      ``object()`` payload, a NaN, a set) raises StorageError and stores nothing; the lease
      still writes afterwards.
    * ``visible_across_handles`` — each append is visible to a read on a second handle as soon
      as it returned, and to a handle opened afterwards.
    * ``concurrent_appends`` — appends to four executions under ``asyncio.gather`` keep each
      execution's order.
    * ``empty_execution_id_refused`` — ``acquire("")`` and ``read("")`` raise
      :class:`~robota.ConfigurationError`.

    Args:
        factory: See :data:`JournalFactory`.
        checks: The checks to run (default: all); the rest are reported as not run.
        check_timeout: Seconds one check may take; a check still waiting then fails, naming the
            call it was waiting for.
        refusal_bound: Seconds within which a refused ``acquire()`` must raise.

    Returns:
        The report; call :meth:`JournalConformanceReport.raise_for_failures` in a test.

    Raises:
        ConfigurationError: no check, an unknown one, or a non-positive time bound.

    Example:
        >>> async def test_sqlite_journal_conforms(tmp_path) -> None:  # doctest: +SKIP
        ...     path = tmp_path / "journal.db"
        ...     report = await run_journal_conformance(lambda: SQLiteJournal(path))
        ...     report.raise_for_failures()
    """
    chosen = _requested(checks)
    bounds: tuple[tuple[str, object], ...] = (
        ("check_timeout", check_timeout),
        ("refusal_bound", refusal_bound),
    )
    for name, value in bounds:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ConfigurationError(f"{name} must be a positive number of seconds, got {value!r}")
    run = Run(factory, Limits(float(check_timeout), float(refusal_bound)))
    outcomes: dict[JournalCheck, _Outcome] = {}
    try:
        for check in JOURNAL_CONFORMANCE_CHECKS:
            if check in chosen:
                outcomes[check] = await _run_one(run, check)
    finally:
        closing = await run.close_all()
    for check, problems in closing.items():
        outcomes[check].problems.extend(problems)
    results: list[JournalCheckResult] = []
    for check in JOURNAL_CONFORMANCE_CHECKS:
        outcome = outcomes.get(check)
        if outcome is None:
            results.append(JournalCheckResult(check, "not_run", "not requested"))
        elif outcome.problems:
            message = "; ".join(outcome.problems)
            results.append(JournalCheckResult(check, "failed", message, outcome.duration))
        else:
            results.append(JournalCheckResult(check, "passed", "", outcome.duration))
    return JournalConformanceReport(tuple(results), run.journal_name)
