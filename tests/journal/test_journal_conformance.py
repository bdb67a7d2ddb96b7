"""robota.testing's journal conformance kit (S40, S10): our journals pass it, and a journal broken
in any one rule's way fails that rule's check with a message naming the fault."""

from __future__ import annotations

import asyncio
import dataclasses
import pathlib
from collections.abc import Callable

import pytest

import robota.testing
from robota.core import ConfigurationError, StorageError
from robota.core.execution._journal import (
    ExecutionJournal,
    ExecutionLockedError,
    JournalLease,
    JournalRecord,
    Reconciled,
    decode_journal_record,
    encode_journal_record,
)
from robota.host import SQLiteJournal
from robota.testing import (
    JOURNAL_CONFORMANCE_CHECKS,
    InMemoryJournal,
    JournalCheck,
    JournalCheckResult,
    JournalConformanceReport,
    run_journal_conformance,
)

# ------------------------------------------------------------------------ a journal to break


@dataclasses.dataclass
class Store:
    """What every handle of a FaultyJournal shares: the durable store."""

    logs: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    held: dict[str, object] = dataclasses.field(default_factory=dict)
    opened: list[FaultyJournal] = dataclasses.field(default_factory=list)


class FaultyJournal(ExecutionJournal):
    """A multi-handle journal over a shared Store, conformant unless told which rule to break."""

    def __init__(self, store: Store, faults: frozenset[str]) -> None:
        self.store = store
        self.faults = faults
        self.closes = 0
        self.own_held: dict[str, object] = {}  # "locks_per_handle": a lock only this handle sees
        self.pending: list[tuple[str, str]] = []  # "buffers_writes": appends not yet shared
        store.opened.append(self)

    def _held(self) -> dict[str, object]:
        return self.own_held if "locks_per_handle" in self.faults else self.store.held

    async def acquire(self, execution_id: str) -> JournalLease:
        if not execution_id and "empty_id_ok" not in self.faults:
            raise ConfigurationError("an execution id must be a non-empty string")
        held = self._held()
        if execution_id in held and "no_lock" not in self.faults:
            if "waits_when_held" in self.faults:
                await asyncio.Event().wait()  # a lock that waits for its holder: never refuses
            named = "someone-else" if "wrong_locked_id" in self.faults else execution_id
            raise ExecutionLockedError("held", execution_id=named)
        token = object()
        held[execution_id] = token
        return FaultyLease(self, execution_id, token)

    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        if not execution_id and "empty_id_ok" not in self.faults:
            raise ConfigurationError("an execution id must be a non-empty string")
        if "hangs_on_read" in self.faults:
            await asyncio.Event().wait()
        if "shared_prefix" in self.faults:
            texts = [
                t
                for eid, log in self.store.logs.items()
                if eid.startswith(execution_id)
                for t in log
            ]
        else:
            texts = list(self.store.logs.get(execution_id, ()))
        records = tuple(decode_journal_record(text) for text in texts)
        if "reverses" in self.faults:
            records = records[::-1]
        if "lists" in self.faults:
            return list(records)  # type: ignore[return-value]  # the fault under test
        return records

    async def aclose(self) -> None:
        self.closes += 1
        for eid, text in self.pending:
            self.store.logs.setdefault(eid, []).append(text)
        self.pending.clear()
        if "close_fails" in self.faults:
            raise StorageError("cannot close")

    async def write(self, execution_id: str, text: str) -> None:
        if "buffers_writes" in self.faults:
            self.pending.append((execution_id, text))
        elif "lost_updates" in self.faults:
            # Read-modify-write of the shared state across an await: concurrent appends to
            # other executions are lost.
            snapshot = {eid: list(log) for eid, log in self.store.logs.items()}
            await asyncio.sleep(0)
            snapshot.setdefault(execution_id, []).append(text)
            self.store.logs = snapshot
        else:
            self.store.logs.setdefault(execution_id, []).append(text)


class FaultyLease(JournalLease):
    def __init__(self, journal: FaultyJournal, execution_id: str, token: object) -> None:
        self.journal = journal
        self.id = execution_id
        self.token = token
        self.released = False

    @property
    def execution_id(self) -> str:
        return self.id

    async def append(self, record: JournalRecord) -> None:
        faults = self.journal.faults
        if self.released and "writes_after_release" not in faults:
            raise StorageError("released")
        try:
            text = encode_journal_record(record)
        except StorageError:
            if "stores_unencodable" in faults:
                await self.journal.write(self.id, encode_journal_record(Reconciled("junk", False)))
            raise
        await self.journal.write(self.id, text)

    async def release(self) -> None:
        faults = self.journal.faults
        held = self.journal._held()
        if "stale_release_frees" in faults:
            held.pop(self.id, None)
            self.released = True
            return
        if self.released:
            if "release_not_idempotent" in faults:
                raise StorageError("already released")
            return
        self.released = True
        if held.get(self.id) is self.token:
            del held[self.id]

    async def __aexit__(self, *exc_info: object) -> None:
        if "no_context_release" not in self.journal.faults:
            await self.release()


def faulty(*faults: str) -> tuple[Store, Callable[[], FaultyJournal]]:
    store = Store()
    chosen = frozenset(faults)
    return store, lambda: FaultyJournal(store, chosen)


# ------------------------------------------------------------------------ our journals pass


async def test_s40_the_in_memory_journal_passes_every_check() -> None:
    journal = InMemoryJournal()
    report = await run_journal_conformance(lambda: journal)
    report.raise_for_failures()
    assert report.passed
    assert report.journal == "InMemoryJournal"
    assert [r.check for r in report.results] == list(JOURNAL_CONFORMANCE_CHECKS)
    assert all(r.status == "passed" and r.duration > 0 for r in report.results)


async def test_s40_the_sqlite_journal_passes_every_check_and_again_on_the_same_store(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "journal.db"
    for _ in range(2):  # fresh execution ids: a second run on the same store passes too
        report = await run_journal_conformance(lambda: SQLiteJournal(path))
        report.raise_for_failures()
        assert report.passed
        assert report.journal == "SQLiteJournal"


async def test_s40_a_conformant_multi_handle_journal_passes_and_every_handle_is_closed_once() -> (
    None
):
    store, factory = faulty()
    report = await run_journal_conformance(factory)
    report.raise_for_failures()
    assert len(store.opened) > len(JOURNAL_CONFORMANCE_CHECKS)  # a fresh handle per need
    assert [handle.closes for handle in store.opened] == [1] * len(store.opened)
    assert store.held == {}  # every lease the kit took was released


async def test_s40_the_factory_may_be_async() -> None:
    journal = InMemoryJournal()

    async def factory() -> ExecutionJournal:
        return journal

    report = await run_journal_conformance(factory, checks=["round_trip", "second_writer_refused"])
    assert report.passed
    assert report.not_run == tuple(
        c for c in JOURNAL_CONFORMANCE_CHECKS if c not in ("round_trip", "second_writer_refused")
    )


# ------------------------------------------------------------------------ broken journals fail

BROKEN: list[tuple[str, JournalCheck, str]] = [
    ("no_lock", "second_writer_refused", "returned <"),
    ("waits_when_held", "second_writer_refused", "did not answer within 0.2 s"),
    ("locks_per_handle", "second_writer_refused", "on a second handle from the factory returned"),
    ("wrong_locked_id", "second_writer_refused", "naming execution 'someone-else'"),
    ("reverses", "append_order", "record #1 is"),
    ("reverses", "round_trip", "every record reads back exactly as appended"),
    ("lists", "unknown_execution_empty", "returned a list; it returns a tuple"),
    ("shared_prefix", "executions_isolated", "with other executions interleaved returned"),
    ("stale_release_frees", "release_idempotent", "after a stale release()"),
    ("release_not_idempotent", "release_idempotent", "a second release() raised"),
    (
        "no_context_release",
        "release_then_acquire",
        "acquire() after `async with lease:` ended raised",
    ),
    ("writes_after_release", "append_after_release_refused", "a released lease cannot write"),
    ("stores_unencodable", "unencodable_record_refused", "2 records, but 1 were appended"),
    ("buffers_writes", "visible_across_handles", "on a second handle right after append() #1"),
    ("lost_updates", "concurrent_appends", "after concurrent appends"),
    ("empty_id_ok", "empty_execution_id_refused", "refused with ConfigurationError"),
    (
        "close_fails",
        "round_trip",
        "aclose() of FaultyJournal raised robota.StorageError: cannot close",
    ),
]


@pytest.mark.parametrize(("fault", "check", "fragment"), BROKEN)
async def test_s40_a_journal_broken_in_one_way_fails_that_check_with_the_reason(
    fault: str, check: JournalCheck, fragment: str
) -> None:
    store, factory = faulty(fault)
    report = await run_journal_conformance(factory, checks=[check], refusal_bound=0.2)
    assert not report.passed
    result = report.result(check)
    assert result.status == "failed"
    assert fragment in result.message
    with pytest.raises(
        AssertionError, match="journal conformance failed for FaultyJournal"
    ) as caught:
        report.raise_for_failures()
    assert f"  - {check}: failed — " in str(caught.value)
    assert "(not run: " in str(caught.value)
    assert [handle.closes for handle in store.opened] == [1] * len(store.opened)


async def test_s40_a_hanging_journal_fails_naming_the_call_it_hung_in() -> None:
    _, factory = faulty("hangs_on_read")
    report = await run_journal_conformance(
        factory, checks=["unknown_execution_empty"], check_timeout=0.2
    )
    message = report.result("unknown_execution_empty").message
    assert message.startswith("did not finish within 0.2 s; it was waiting for read(")


async def test_s40_every_check_fails_for_a_factory_that_cannot_build_a_journal() -> None:
    def factory() -> ExecutionJournal:
        raise OSError("no such database")

    report = await run_journal_conformance(factory)
    assert report.journal is None
    assert [r.status for r in report.results] == ["failed"] * len(JOURNAL_CONFORMANCE_CHECKS)
    assert all(r.message == "the factory raised OSError: no such database" for r in report.results)


async def test_s40_a_factory_returning_something_else_is_reported() -> None:
    def factory() -> object:
        return object()

    report = await run_journal_conformance(factory, checks=["round_trip"])  # type: ignore[arg-type]
    assert "not an ExecutionJournal" in report.result("round_trip").message


# ------------------------------------------------------------------------ the kit's own surface


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"checks": "round_trip"}, "write checks=['round_trip']"),
        ({"checks": ["round_tripp"]}, "unknown journal conformance checks ['round_tripp']"),
        ({"checks": []}, "an empty run proves nothing"),
        ({"check_timeout": 0}, "check_timeout must be a positive number"),
        ({"refusal_bound": True}, "refusal_bound must be a positive number"),
    ],
)
async def test_s40_the_kit_refuses_options_that_cannot_work(
    options: dict[str, object], fragment: str
) -> None:
    with pytest.raises(ConfigurationError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        await run_journal_conformance(InMemoryJournal, **options)  # type: ignore[arg-type]


def test_s40_the_report_reads_as_a_list_of_results() -> None:
    report = JournalConformanceReport(
        (
            JournalCheckResult("round_trip", "passed", "", 0.1),
            JournalCheckResult("append_order", "failed", "read() returned 2 records", 0.2),
            JournalCheckResult("concurrent_appends", "not_run", "not requested"),
        ),
        "MyJournal",
    )
    assert str(report) == (
        "journal conformance of MyJournal:\n"
        "  round_trip: passed\n"
        "  append_order: failed — read() returned 2 records\n"
        "  concurrent_appends: not_run — not requested"
    )
    assert report.failures == (report.results[1],)
    assert report.not_run == ("concurrent_appends",)
    with pytest.raises(KeyError):
        report.result("nope")  # type: ignore[arg-type]


def test_s40_the_kit_is_public_in_robota_testing() -> None:
    for name in (
        "JOURNAL_CONFORMANCE_CHECKS",
        "JournalCheck",
        "JournalCheckResult",
        "JournalConformanceReport",
        "JournalFactory",
        "run_journal_conformance",
    ):
        assert name in robota.testing.__all__
    assert len(set(JOURNAL_CONFORMANCE_CHECKS)) == len(JOURNAL_CONFORMANCE_CHECKS) == 13
