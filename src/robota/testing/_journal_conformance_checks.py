"""The journal conformance kit's checks: one coroutine per rule of the journal port (S40, S10).

Each check receives a :class:`Probe`, which opens handles through the caller's factory, keeps
the leases the check took (released when it ends) and names the call the check is waiting on,
so a hanging journal fails with the call it hung in. Every failure is a
:class:`~robota.testing._conformance_io.ScenarioFailed` whose message says which call did what,
and what the contract wanted instead.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, TypeVar, final

from robota.core import (
    AssistantMessage,
    Checkpoint,
    ConfigurationError,
    EffectSettled,
    EffectStarted,
    ExecutionJournal,
    ExecutionLockedError,
    ExecutionStarted,
    JournalLease,
    JournalRecord,
    ModelCallSettled,
    ModelCallStarted,
    OutsideRequested,
    OutsideResponded,
    Reconciled,
    RuntimeState,
    StorageError,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    encode_journal_record,
)
from robota.testing._conformance_io import ScenarioFailed, being_cancelled, describe

__all__ = [
    "CHECKS",
    "JOURNAL_CONFORMANCE_CHECKS",
    "JournalCheck",
    "JournalFactory",
    "Limits",
    "Probe",
    "Run",
]

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)

JournalCheck: TypeAlias = Literal[
    "round_trip",
    "append_order",
    "executions_isolated",
    "unknown_execution_empty",
    "second_writer_refused",
    "executions_held_together",
    "release_then_acquire",
    "release_idempotent",
    "append_after_release_refused",
    "unencodable_record_refused",
    "visible_across_handles",
    "concurrent_appends",
    "empty_execution_id_refused",
]
"""One rule the journal conformance kit checks.

See :func:`~robota.testing.run_journal_conformance` for what each asserts.
"""

JOURNAL_CONFORMANCE_CHECKS: Final[tuple[JournalCheck, ...]] = (
    "round_trip",
    "append_order",
    "executions_isolated",
    "unknown_execution_empty",
    "second_writer_refused",
    "executions_held_together",
    "release_then_acquire",
    "release_idempotent",
    "append_after_release_refused",
    "unencodable_record_refused",
    "visible_across_handles",
    "concurrent_appends",
    "empty_execution_id_refused",
)
"""Every check, in the order the kit runs them."""

JournalFactory: TypeAlias = Callable[[], ExecutionJournal | Awaitable[ExecutionJournal]]
"""Returns a handle on the store under test, synchronously or as an awaitable.

Every call must reach the same durable store: a new instance on the same path or DSN for a
durable back-end, the one shared instance for an in-memory journal. The kit closes each handle
it was given once, when the run ends.
"""

_LOCKED_WANTED: Final = (
    "a second writer is refused at once with ExecutionLockedError (S10), never made to wait"
)
_CLEANUP_TIMEOUT: Final = 5.0


# ---------------------------------------------------------------------------------- the run


@final
@dataclass(frozen=True, slots=True)
class Limits:
    """The kit's time bounds (see :func:`robota.testing.run_journal_conformance`)."""

    check_timeout: float
    refusal_bound: float


@final
class Run:
    """The handles one run was given (closed at its end) and the name of the journal."""

    __slots__ = ("factory", "handles", "limits")

    def __init__(self, factory: JournalFactory, limits: Limits) -> None:
        self.factory = factory
        self.limits = limits
        # Each distinct handle once, with the check that first received it.
        self.handles: dict[int, tuple[ExecutionJournal, JournalCheck]] = {}

    @property
    def journal_name(self) -> str | None:
        for handle, _ in self.handles.values():
            return type(handle).__qualname__
        return None

    async def close_all(self) -> dict[JournalCheck, list[str]]:
        problems: dict[JournalCheck, list[str]] = {}
        for handle, check in self.handles.values():
            what = f"aclose() of {type(handle).__qualname__}"
            try:
                async with asyncio.timeout(_CLEANUP_TIMEOUT):
                    await handle.aclose()
            except TimeoutError:
                problems.setdefault(check, []).append(
                    f"{what} did not finish within {_CLEANUP_TIMEOUT:g} s"
                )
            except Exception as exc:  # noqa: BLE001 - reported as that check's failure
                problems.setdefault(check, []).append(f"{what} raised {describe(exc)}")
        return problems


@final
class Probe:
    """One check's view of the run: opens handles, tracks leases, names the call it awaits."""

    __slots__ = ("check", "leases", "limits", "run", "step")

    def __init__(self, run: Run, check: JournalCheck) -> None:
        self.run = run
        self.check = check
        self.limits = run.limits
        self.leases: list[JournalLease] = []
        self.step = "nothing yet"

    def new_id(self, label: str = "") -> str:
        """A fresh execution id, unique to this check and run."""
        suffix = f"-{label}" if label else ""
        return f"conformance-{self.check}-{uuid.uuid4().hex}{suffix}"

    async def journal(self) -> ExecutionJournal:
        self.step = "factory()"
        try:
            built = self.run.factory()
            handle = await built if inspect.isawaitable(built) else built
        except Exception as exc:
            raise ScenarioFailed(f"the factory raised {describe(exc)}") from exc
        if not isinstance(handle, ExecutionJournal):
            raise ScenarioFailed(f"the factory returned {handle!r}, not an ExecutionJournal")
        self.run.handles.setdefault(id(handle), (handle, self.check))
        return handle

    async def call(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        self.step = what
        try:
            return await make()
        except asyncio.CancelledError:
            if being_cancelled():
                raise
            raise ScenarioFailed(
                f"{what} raised CancelledError though nothing cancelled it"
            ) from None
        except Exception as exc:
            raise ScenarioFailed(f"{what} raised {describe(exc)}") from exc

    async def acquire(
        self, journal: ExecutionJournal, execution_id: str, what: str = "acquire()"
    ) -> JournalLease:
        lease = await self.call(what, lambda: journal.acquire(execution_id))
        if not isinstance(lease, JournalLease):
            raise ScenarioFailed(f"{what} returned {lease!r}, not a JournalLease")
        self.leases.append(lease)
        return lease

    async def append(self, lease: JournalLease, record: JournalRecord, what: str) -> None:
        await self.call(what, lambda: lease.append(record))

    async def read(
        self, journal: ExecutionJournal, execution_id: str, what: str = "read()"
    ) -> tuple[JournalRecord, ...]:
        got = await self.call(what, lambda: journal.read(execution_id))
        if not isinstance(got, tuple):
            raise ScenarioFailed(f"{what} returned a {type(got).__name__}; it returns a tuple")
        return got

    async def refused(
        self, what: str, make: Callable[[], Awaitable[object]], error: type[E], wanted: str
    ) -> E:
        self.step = what
        try:
            result = await make()
        except error as exc:
            return exc
        except asyncio.CancelledError:
            if being_cancelled():
                raise
            raise ScenarioFailed(f"{what} raised CancelledError; {wanted}") from None
        except Exception as exc:
            raise ScenarioFailed(f"{what} raised {describe(exc)}; {wanted}") from exc
        if isinstance(result, JournalLease):
            self.leases.append(result)  # released when the check ends
        raise ScenarioFailed(f"{what} returned {_short(result)}; {wanted}")

    async def refused_at_once(
        self, journal: ExecutionJournal, execution_id: str, what: str
    ) -> None:
        bound = self.limits.refusal_bound
        scope = asyncio.timeout(bound)
        try:
            async with scope:
                error = await self.refused(
                    what,
                    lambda: journal.acquire(execution_id),
                    ExecutionLockedError,
                    _LOCKED_WANTED,
                )
        except TimeoutError:
            if scope.expired():
                raise ScenarioFailed(
                    f"{what} did not answer within {bound:g} s; {_LOCKED_WANTED}"
                ) from None
            raise
        if error.execution_id != execution_id:
            raise ScenarioFailed(
                f"{what} raised ExecutionLockedError naming execution {error.execution_id!r}; "
                f"it names the execution asked for, {execution_id!r}"
            )

    async def release_all(self) -> list[str]:
        problems: list[str] = []
        for lease in self.leases:
            try:
                async with asyncio.timeout(_CLEANUP_TIMEOUT):
                    await lease.release()
            except TimeoutError:
                problems.append(
                    f"release() while cleaning up did not finish within {_CLEANUP_TIMEOUT:g} s"
                )
            except Exception as exc:  # noqa: BLE001 - reported as the check's failure
                problems.append(
                    f"release() while cleaning up raised {describe(exc)}; release is idempotent"
                )
        return problems


def _expect_records(
    what: str, got: Sequence[JournalRecord], wanted: Sequence[JournalRecord]
) -> None:
    """Fail unless ``got`` holds exactly ``wanted``, in order, value for value."""
    for index, (have, want) in enumerate(zip(got, wanted, strict=False)):
        if have != want or _canonical(have) != _canonical(want):
            raise ScenarioFailed(
                f"{what}: record #{index + 1} is {_short(have)}, but {_short(want)} was "
                "appended; every record reads back exactly as appended, in append order"
            )
    if len(got) != len(wanted):
        if len(got) > len(wanted):
            odd = f"the first extra one is {_short(got[len(wanted)])}"
        else:
            odd = f"the first missing one is {_short(wanted[len(got)])}"
        raise ScenarioFailed(
            f"{what} returned {len(got)} records, but {len(wanted)} were appended ({odd}); every "
            "appended record reads back, and nothing else"
        )


def _canonical(record: JournalRecord) -> str:
    # Equality alone would take True for 1 and 1.0 for 1; the encoded text tells them apart.
    try:
        return json.dumps(json.loads(encode_journal_record(record)), sort_keys=True)
    except StorageError as exc:
        raise ScenarioFailed(f"read() returned a record that cannot be encoded: {exc}") from exc


def _short(value: object, limit: int = 240) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


# ---------------------------------------------------------------------------------- records


def _filler(n: int, label: str = "") -> JournalRecord:
    """A small record distinct for each ``n`` (and ``label``)."""
    if n % 2:
        return EffectSettled(f"call{label}#{n}", "ok", f"result {n}{label}")
    return Reconciled(f"item{label}-{n}", happened=bool(n % 3), result=f"r{n}")


def _sample_records(execution_id: str) -> tuple[JournalRecord, ...]:
    """One record of every kind, with every field a back-end could lose set (or ``None``)."""
    usage = Usage(1200, 345, 1545, cache_read_tokens=1000, partial=False, reasoning_tokens=200)
    partial = Usage(10, 0, 12, cache_read_tokens=None, partial=True, reasoning_tokens=None)
    system = SystemMessage("Be terse. Ünïcödé ✓", id="msg-sys-ü", created_at=1_700_000_000.25)
    user = UserMessage(
        'Two plus two? 🤔\n\t"quoted" \\ back\\slash, nul \x00, separator \u2028, עברית',
        id="msg-user-1",
        created_at=1_700_000_001.123456,
    )
    calls = (
        ToolCall("call_1", "add", '{"a": 2, "b": 2}'),
        ToolCall("call_2", "lookup", '{"q": "héllo 🌍"}'),
    )
    asked = AssistantMessage(
        "",
        tool_calls=calls,
        model="model-x-2026",
        usage=usage,
        continuation="opaque+/=signature",
        id="msg-asst-1",
        created_at=1_700_000_002.5,
    )
    added = ToolMessage(
        "4", tool_call_id="call_1", tool_name="add", id="msg-tool-1", created_at=1_700_000_003.0
    )
    failed = ToolMessage(
        "lookup failed: ✗",
        tool_call_id="call_2",
        tool_name="lookup",
        is_error=True,
        id="msg-tool-2",
        created_at=1_700_000_003.75,
    )
    cut = AssistantMessage(
        "partial answer…",
        state="interrupted",
        usage=partial,
        id="msg-asst-2",
        created_at=1_700_000_004.0,
    )
    final_reply = AssistantMessage("Four.", id="msg-asst-3", created_at=1_700_000_005.0)
    state = RuntimeState(
        agent_name="conformance-ü",
        provider="scripted",
        model="model-x",
        system_prompt=None,
        tool_catalog_digest="9f" * 32,
        tool_residency=(("add", "resident"), ("lookup", "deferred")),
        max_rounds=8,
        max_same_tool_inputs=None,
        allow_tool_only_completion=True,
        tool_choice="required",
        native_tools=("web_search",),
        effort="high",
        context_floor=4096,
    )
    payload = {
        "nested": {"list": [1, 2.5, None, True, False, "ü", [], {}], "deep": [[[{"x": [0.1]}]]]},
        "big": 2**63 + 1,
        "negative": -7,
        "empty": {},
        "text": "line\nbreak \x00 nul",
    }
    return (
        ExecutionStarted(execution_id, state, (system, user)),
        ModelCallStarted("mc-1", 1),
        ModelCallSettled("mc-1", asked),
        EffectStarted("mc-1#0", "body-1", "call_1", "add", {"a": 2, "b": 2}),
        EffectSettled("mc-1#0", "ok", "4"),
        EffectStarted(
            "mc-1#1", "body-2", None, "lookup", {"q": "héllo 🌍", "opts": {"deep": [1, None]}}
        ),
        OutsideRequested("req-1", "mc-1#1", "approval", payload),
        OutsideRequested("req-2", "mc-1#1", "note", None),
        OutsideResponded("req-1", {"approved": True, "by": "ünïcode", "at": 1.5}),
        OutsideResponded("req-2", None),
        EffectSettled("mc-1#1", "error", "lookup failed: ✗", is_error=True),
        Reconciled("item-1", happened=True, result="done"),
        Reconciled("item-2", happened=False),
        ModelCallStarted("mc-2", 2, forced=True, reason="max_rounds", history=(added, failed)),
        ModelCallSettled("mc-2", cut, outcome="interrupted", dispatched=False),
        ModelCallSettled("mc-3", final_reply, outcome="failure"),
        # Issue 28: a failed attempt another one followed, on the chain's second model.
        ModelCallSettled(
            "mc-4", cut, outcome="failure", provider="backup", fallback=1, retried=True
        ),
        Checkpoint(),
        Checkpoint((UserMessage("more?", id="msg-user-2", created_at=1.0),), "suspended"),
        Checkpoint((), "complete", "end_turn"),
    )


# ---------------------------------------------------------------------------------- checks


async def _round_trip(p: Probe) -> None:
    journal = await p.journal()
    execution_id = p.new_id("ünï✓")
    records = _sample_records(execution_id)
    lease = await p.acquire(journal, execution_id)
    for n, record in enumerate(records, start=1):
        await p.append(lease, record, f"append() of record #{n} ({record.kind})")
    got = await p.read(journal, execution_id)
    _expect_records("read() after one record of every kind", got, records)


async def _append_order(p: Probe) -> None:
    journal = await p.journal()
    execution_id = p.new_id()
    lease = await p.acquire(journal, execution_id)
    if lease.execution_id != execution_id:
        raise ScenarioFailed(
            f"the lease's execution_id is {lease.execution_id!r}; it is the id acquired, "
            f"{execution_id!r}"
        )
    records = [_filler(n) for n in range(100)]
    for n, record in enumerate(records, start=1):
        await p.append(lease, record, f"append() #{n}")
    _expect_records("read() after 100 appends", await p.read(journal, execution_id), records)


async def _executions_isolated(p: Probe) -> None:
    journal = await p.journal()
    # Ids that share a prefix, or hold SQL pattern characters, must still be told apart.
    first = p.new_id()
    ids = (first, f"{first}-longer", f"{first}%", f"{first}_")
    leases = [await p.acquire(journal, eid, f"acquire({eid!r})") for eid in ids]
    wanted: dict[str, list[JournalRecord]] = {eid: [] for eid in ids}
    for n in range(4):
        for index, (eid, lease) in enumerate(zip(ids, leases, strict=True)):
            record = _filler(n, f"-{index}")
            await p.append(lease, record, f"append() #{n + 1} to {eid!r}")
            wanted[eid].append(record)
    for eid in ids:
        got = await p.read(journal, eid, f"read({eid!r})")
        _expect_records(f"read({eid!r}) with other executions interleaved", got, wanted[eid])


async def _unknown_execution_empty(p: Probe) -> None:
    journal = await p.journal()
    known = p.new_id()
    lease = await p.acquire(journal, known)
    await p.append(lease, _filler(1), "append()")
    for eid in (p.new_id("never-written"), known[:-1], f"{known}-suffix"):
        got = await p.read(journal, eid, f"read({eid!r}) of an unknown execution")
        if got != ():
            raise ScenarioFailed(
                f"read({eid!r}) of an execution never written returned {_short(got)}; it returns ()"
            )


async def _second_writer_refused(p: Probe) -> None:
    journal = await p.journal()
    execution_id = p.new_id()
    lease = await p.acquire(journal, execution_id)
    await p.append(lease, _filler(1), "append()")
    await p.refused_at_once(
        journal, execution_id, "a second acquire() of a held execution on the same handle"
    )
    other = await p.journal()
    await p.refused_at_once(
        other, execution_id, "acquire() of a held execution on a second handle from the factory"
    )
    await p.append(lease, _filler(2), "append() by the holder after the refusals")
    got = await p.read(journal, execution_id)
    _expect_records("read() after refused acquires", got, [_filler(1), _filler(2)])


async def _executions_held_together(p: Probe) -> None:
    journal = await p.journal()
    other = await p.journal()
    ids = (p.new_id("a"), p.new_id("b"), p.new_id("c"))
    leases = (
        await p.acquire(journal, ids[0], "acquire() of a first execution"),
        await p.acquire(journal, ids[1], "acquire() of a second execution on the same handle"),
        await p.acquire(other, ids[2], "acquire() of a third execution on a second handle"),
    )
    for index, (eid, lease) in enumerate(zip(ids, leases, strict=True)):
        await p.append(lease, _filler(index), f"append() to {eid!r}")
    for index, eid in enumerate(ids):
        _expect_records(
            f"read({eid!r})", await p.read(journal, eid, f"read({eid!r})"), [_filler(index)]
        )


async def _release_then_acquire(p: Probe) -> None:
    journal = await p.journal()
    other = await p.journal()
    execution_id = p.new_id()
    lease = await p.acquire(journal, execution_id)
    await p.append(lease, _filler(1), "append() by the first lease")
    await p.call("release()", lease.release)
    again = await p.acquire(journal, execution_id, "acquire() on the same handle after release()")
    await p.append(again, _filler(2), "append() by the second lease")
    await p.call("release() of the second lease", again.release)
    third = await p.acquire(other, execution_id, "acquire() on a second handle after release()")
    await p.append(third, _filler(3), "append() by the third lease")

    async def leave_by_context() -> None:
        async with third:
            pass

    await p.call("leaving `async with lease:`", leave_by_context)
    fourth = await p.acquire(journal, execution_id, "acquire() after `async with lease:` ended")
    await p.append(fourth, _filler(4), "append() by the fourth lease")
    got = await p.read(other, execution_id)
    _expect_records("read() after successive leases", got, [_filler(n) for n in range(1, 5)])


async def _release_idempotent(p: Probe) -> None:
    journal = await p.journal()
    other = await p.journal()
    execution_id = p.new_id()
    lease = await p.acquire(journal, execution_id)
    await p.call("release()", lease.release)
    await p.call("a second release()", lease.release)
    holder = await p.acquire(other, execution_id, "acquire() after two release() calls")
    await p.call("release() of a lease released earlier, while another holds it", lease.release)
    # The stale lease's release must not free the new holder's lease.
    await p.refused_at_once(
        journal, execution_id, "acquire() while the new holder has it (after a stale release())"
    )
    await p.append(holder, _filler(1), "append() by the new holder")
    _expect_records("read()", await p.read(journal, execution_id), [_filler(1)])


async def _append_after_release_refused(p: Probe) -> None:
    journal = await p.journal()
    other = await p.journal()
    execution_id = p.new_id()
    lease = await p.acquire(journal, execution_id)
    await p.append(lease, _filler(1), "append()")
    await p.call("release()", lease.release)
    wanted = "a released lease cannot write: append() raises StorageError and stores nothing"
    await p.refused(
        "append() after release()", lambda: lease.append(_filler(2)), StorageError, wanted
    )
    _expect_records(
        "read() after a refused append", await p.read(journal, execution_id), [_filler(1)]
    )
    holder = await p.acquire(other, execution_id, "acquire() on a second handle")
    await p.refused(
        "append() by a released lease while another holds the execution",
        lambda: lease.append(_filler(3)),
        StorageError,
        wanted,
    )
    await p.append(holder, _filler(4), "append() by the new holder")
    _expect_records(
        "read() after a stale lease's append",
        await p.read(other, execution_id),
        [_filler(1), _filler(4)],
    )


async def _unencodable_record_refused(p: Probe) -> None:
    journal = await p.journal()
    execution_id = p.new_id()
    lease = await p.acquire(journal, execution_id)
    await p.append(lease, _filler(1), "append()")
    wanted = "a record that is not JSON raises StorageError and stores nothing"
    bad: tuple[tuple[str, JournalRecord], ...] = (
        ("an object() payload", OutsideRequested("req-bad", "mc#0", "approval", object())),
        ("a NaN response", OutsideResponded("req-nan", float("nan"))),
        ("a set in the arguments", EffectStarted("mc#0", "body", None, "t", {"s": {1, 2}})),
    )
    for label, record in bad:
        await p.refused(
            f"append() of a record with {label}",
            functools.partial(lease.append, record),
            StorageError,
            wanted,
        )
        got = await p.read(journal, execution_id, f"read() after the record with {label}")
        _expect_records(f"read() after refusing the record with {label}", got, [_filler(1)])
    await p.append(lease, _filler(2), "append() after the refused records")
    got = await p.read(journal, execution_id)
    _expect_records("read() after the refused records", got, [_filler(1), _filler(2)])


async def _visible_across_handles(p: Probe) -> None:
    writer = await p.journal()
    reader = await p.journal()
    execution_id = p.new_id()
    lease = await p.acquire(writer, execution_id)
    records: list[JournalRecord] = []
    for n in range(1, 6):
        records.append(_filler(n))
        await p.append(lease, records[-1], f"append() #{n}")
        got = await p.read(reader, execution_id, f"read() on a second handle after append() #{n}")
        _expect_records(f"read() on a second handle right after append() #{n}", got, records)
    late = await p.journal()
    got = await p.read(late, execution_id, "read() on a handle opened after the appends")
    _expect_records("read() on a handle opened after the appends", got, records)


async def _concurrent_appends(p: Probe) -> None:
    first = await p.journal()
    second = await p.journal()
    ids = tuple(p.new_id(str(n)) for n in range(4))
    journals = (first, second, first, second)
    leases = [
        await p.acquire(journal, eid, f"acquire({eid!r})")
        for journal, eid in zip(journals, ids, strict=True)
    ]
    wanted = {eid: [_filler(n, f"-{eid[-1]}") for n in range(25)] for eid in ids}

    async def write(eid: str, lease: JournalLease) -> None:
        for n, record in enumerate(wanted[eid], start=1):
            try:
                await lease.append(record)
            except Exception as exc:
                raise ScenarioFailed(
                    f"append() #{n} to {eid!r}, beside appends to three other executions, "
                    f"raised {describe(exc)}"
                ) from exc

    p.step = "asyncio.gather() of appends to four executions"
    # Every writer runs to its end (no task is left behind); the first failure is reported.
    outcomes = await asyncio.gather(
        *(write(eid, lease) for eid, lease in zip(ids, leases, strict=True)),
        return_exceptions=True,
    )
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            if isinstance(outcome, ScenarioFailed):
                raise outcome
            raise ScenarioFailed(f"a writer raised {describe(outcome)}") from outcome
    for eid in ids:
        got = await p.read(first, eid, f"read({eid!r})")
        _expect_records(f"read({eid!r}) after concurrent appends", got, wanted[eid])


async def _empty_execution_id_refused(p: Probe) -> None:
    journal = await p.journal()
    wanted = "an empty execution id is refused with ConfigurationError"
    await p.refused('acquire("")', lambda: journal.acquire(""), ConfigurationError, wanted)
    await p.refused('read("")', lambda: journal.read(""), ConfigurationError, wanted)


CHECKS: Final[Mapping[JournalCheck, Callable[[Probe], Awaitable[None]]]] = {
    "round_trip": _round_trip,
    "append_order": _append_order,
    "executions_isolated": _executions_isolated,
    "unknown_execution_empty": _unknown_execution_empty,
    "second_writer_refused": _second_writer_refused,
    "executions_held_together": _executions_held_together,
    "release_then_acquire": _release_then_acquire,
    "release_idempotent": _release_idempotent,
    "append_after_release_refused": _append_after_release_refused,
    "unencodable_record_refused": _unencodable_record_refused,
    "visible_across_handles": _visible_across_handles,
    "concurrent_appends": _concurrent_appends,
    "empty_execution_id_refused": _empty_execution_id_refused,
}
