"""The session store conformance kit's checks: one coroutine per rule of the store port.

Each check receives a :class:`Probe`, which opens handles through the caller's factory and keeps
the leases the check took (released when it ends). A failure is a
:class:`~robota.testing._conformance_io.ScenarioFailed` saying which call did what and what the
contract wanted instead.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Final, Literal, TypeAlias, final

from robota.core import (
    AssistantMessage,
    ConfigurationError,
    DocumentPart,
    ImagePart,
    StorageError,
    TextPart,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from robota.sessions import (
    MetadataSet,
    Rewound,
    SessionBusyError,
    SessionEntry,
    SessionHeader,
    SessionLease,
    SessionNotFoundError,
    SessionStore,
    TurnSaved,
    TurnStarted,
    encode_session_entry,
)
from robota.testing._conformance_io import ScenarioFailed

__all__ = ["CHECKS", "SESSION_STORE_CHECKS", "Probe", "SessionStoreCheck", "SessionStoreFactory"]

SessionStoreFactory: TypeAlias = Callable[[], SessionStore]
"""Returns a handle on the store under test; every call a handle on the *same* store."""

SessionStoreCheck: TypeAlias = Literal[
    "round_trip",
    "load_after",
    "create_once",
    "append_order",
    "sessions_isolated",
    "unknown_session",
    "second_writer_refused",
    "release_then_acquire",
    "append_after_release_refused",
    "visible_across_handles",
    "list_sessions",
    "session_infos",
    "delete",
    "bad_id_refused",
]
SESSION_STORE_CHECKS: Final[tuple[SessionStoreCheck, ...]] = (
    "round_trip",
    "load_after",
    "create_once",
    "append_order",
    "sessions_isolated",
    "unknown_session",
    "second_writer_refused",
    "release_then_acquire",
    "append_after_release_refused",
    "visible_across_handles",
    "list_sessions",
    "session_infos",
    "delete",
    "bad_id_refused",
)
"""Every check, in the order the kit runs them."""


@final
class Probe:
    """A check's access to the store: handles from the factory, leases released at the end."""

    __slots__ = ("_factory", "handles", "leases", "refusal_bound")

    def __init__(self, factory: SessionStoreFactory, refusal_bound: float) -> None:
        self._factory = factory
        self.handles: list[SessionStore] = []
        self.leases: list[SessionLease] = []
        self.refusal_bound = refusal_bound

    def store(self) -> SessionStore:
        """A handle on the store (a new one per call; the kit closes it)."""
        handle = self._factory()
        if not isinstance(handle, SessionStore):
            raise ScenarioFailed(f"the factory returned {handle!r}, not a SessionStore")
        self.handles.append(handle)
        return handle

    async def lease(self, store: SessionStore, session_id: str) -> SessionLease:
        """``store.acquire(session_id)``, remembered for release."""
        lease = await store.acquire(session_id)
        self.leases.append(lease)
        return lease

    async def release_all(self) -> None:
        """Release every lease the check took."""
        for lease in self.leases:
            await lease.release()


def _id(tag: str = "") -> str:
    return f"conf{tag}-{uuid.uuid4().hex[:12]}"


def _header(session_id: str, **kw: object) -> SessionHeader:
    return SessionHeader(session_id, time.time(), **kw)  # type: ignore[arg-type]


def _entries() -> tuple[SessionEntry, ...]:
    call = ToolCall("call_1", "lookup", '{"q": "caf\\u00e9 \\u2028"}')
    return (
        MetadataSet("Tïtle\u2028", "user-1", ("a", "b"), 1.5),
        TurnStarted(0, "s/0", "be brief", 2.0),
        TurnSaved(
            0,
            "complete",
            (
                UserMessage("hello \x00 wörld"),
                AssistantMessage("", tool_calls=(call,), usage=Usage(3, 4, 7, 1, True, 2)),
                ToolMessage("found", tool_call_id="call_1", tool_name="lookup"),
                UserMessage(
                    (TextPart("see"), ImagePart(url="https://example.com/a.png", media_type=None))
                ),
                ToolMessage(
                    "a pdf",
                    tool_call_id="call_1",
                    tool_name="lookup",
                    is_error=True,
                    parts=(DocumentPart(data=_PDF, media_type="application/pdf"),),
                ),
                AssistantMessage("done"),
            ),
            Usage(3, 4, 7, 1, True, 2),
            0.25,
            "s/0",
            3.0,
        ),
        TurnSaved(1, "failed", (UserMessage("x"),), Usage(), None, None, 4.0, "Boom: x"),
        Rewound(1, 5.0),
    )


_PDF: Final = b"%PDF-1.4\n1 0 obj << /Type /Page >>\n%%EOF"


def _same(got: tuple[SessionEntry, ...], want: tuple[SessionEntry, ...], where: str) -> None:
    if [encode_session_entry(e) for e in got] != [encode_session_entry(e) for e in want]:
        raise ScenarioFailed(f"{where}: read back {got!r}, appended {want!r}")
    if got != want:
        raise ScenarioFailed(f"{where}: entries read back unequal to the ones written")


async def _refused(probe: Probe, call: Awaitable[object], where: str) -> None:
    started = time.monotonic()
    try:
        await call
    except SessionBusyError:
        elapsed = time.monotonic() - started
        if elapsed > probe.refusal_bound:
            message = f"{where} was refused after {elapsed:.2f} s, not at once"
            raise ScenarioFailed(message) from None
        return
    raise ScenarioFailed(f"{where} was not refused with SessionBusyError")


async def round_trip(probe: Probe) -> None:
    """Every entry kind reads back exactly, first entries of ``create`` and appends alike."""
    store = probe.store()
    sid = _id()
    first = _entries()
    await store.create(_header(sid, parent_id="p", fork_at=2), first[:2])
    lease = await probe.lease(store, sid)
    for entry in first[2:]:
        await lease.append(entry)
    stored = await store.load(sid)
    if stored.header.id != sid or (stored.header.parent_id, stored.header.fork_at) != ("p", 2):
        raise ScenarioFailed(f"load({sid!r}).header is {stored.header!r}")
    _same(stored.entries, first, f"load({sid!r})")


async def load_after(probe: Probe) -> None:
    """``load_after(id, n)`` is the header and ``load``'s entries from the n-th on.

    Through any handle; past the end, none; a negative or non-integer count is a
    ConfigurationError, an unknown id SessionNotFoundError.
    """
    store, other = probe.store(), probe.store()
    sid = _id()
    written = _entries()
    await store.create(_header(sid, parent_id="p", fork_at=1), written[:1])
    lease = await probe.lease(store, sid)
    for entry in written[1:]:
        await lease.append(entry)
    for handle in (store, other):
        for after in range(len(written) + 2):
            got = await handle.load_after(sid, after)
            if got.header != (await handle.load(sid)).header:
                raise ScenarioFailed(f"load_after({sid!r}, {after}).header is {got.header!r}")
            _same(got.entries, written[after:], f"load_after({sid!r}, {after})")
    await lease.append(Rewound(0, 9.0))
    _same((await other.load_after(sid, len(written))).entries, (Rewound(0, 9.0),), "a new one")
    for bad in (-1, True, 1.0, "1"):
        try:
            await store.load_after(sid, bad)  # type: ignore[arg-type]
        except ConfigurationError:
            continue
        raise ScenarioFailed(f"load_after({sid!r}, {bad!r}) was not refused")
    try:
        await store.load_after(sid + "-no", 0)
    except SessionNotFoundError:
        return
    raise ScenarioFailed("load_after() of an unknown session did not raise SessionNotFoundError")


async def create_once(probe: Probe) -> None:
    """A second ``create`` of one id is refused (code session_exists) and changes nothing."""
    store = probe.store()
    sid = _id()
    await store.create(_header(sid), _entries()[:1])
    try:
        await store.create(_header(sid), _entries())
    except ConfigurationError as exc:
        if exc.code != "session_exists":
            raise ScenarioFailed(f"second create raised code {exc.code!r}") from None
    else:
        raise ScenarioFailed("a second create() of one id was accepted")
    _same((await store.load(sid)).entries, _entries()[:1], "after the refused create")


async def append_order(probe: Probe) -> None:
    """100 appends read back in append order; the lease names its session."""
    store = probe.store()
    sid = _id()
    await store.create(_header(sid))
    lease = await probe.lease(store, sid)
    if lease.session_id != sid:
        raise ScenarioFailed(f"lease.session_id is {lease.session_id!r}, not {sid!r}")
    written = tuple(Rewound(i, float(i)) for i in range(100))
    for entry in written:
        await lease.append(entry)
    _same((await store.load(sid)).entries, written, "100 appends")


async def sessions_isolated(probe: Probe) -> None:
    """Sessions whose ids share a prefix or hold ``%`` and ``_`` each read only their own."""
    store = probe.store()
    base = _id()
    ids = (base, base + "x", base + "%", base + "_")
    leases = []
    for sid in ids:
        await store.create(_header(sid))
        leases.append(await probe.lease(store, sid))
    for round_ in range(3):
        for index, lease in enumerate(leases):
            await lease.append(Rewound(index * 10 + round_, 0.0))
    for index, sid in enumerate(ids):
        want = tuple(Rewound(index * 10 + r, 0.0) for r in range(3))
        _same((await store.load(sid)).entries, want, f"load({sid!r})")


async def unknown_session(probe: Probe) -> None:
    """``load``, ``acquire`` and ``delete`` of an unknown id raise SessionNotFoundError."""
    store = probe.store()
    sid = _id()
    await store.create(_header(sid))
    calls: Mapping[str, Callable[[], Awaitable[object]]] = {
        "load": lambda: store.load(sid + "-no"),
        "acquire": lambda: store.acquire(sid[:-1]),
        "delete": lambda: store.delete(sid + "-no"),
    }
    for name, call in calls.items():
        try:
            await call()
        except SessionNotFoundError:
            continue
        raise ScenarioFailed(f"{name}() of an unknown session did not raise SessionNotFoundError")


async def second_writer_refused(probe: Probe) -> None:
    """A held session is refused at once, on the same handle and another; the holder writes."""
    first, second = probe.store(), probe.store()
    sid = _id()
    await first.create(_header(sid))
    lease = await probe.lease(first, sid)
    await _refused(probe, first.acquire(sid), "acquire() on the holder's handle")
    await _refused(probe, second.acquire(sid), "acquire() on a second handle")
    await _refused(probe, second.delete(sid), "delete() of a held session")
    await lease.append(Rewound(0, 0.0))
    _same((await second.load(sid)).entries, (Rewound(0, 0.0),), "the holder's append")


async def release_then_acquire(probe: Probe) -> None:
    """After ``release()`` (twice: idempotent) the session is acquired again, on any handle."""
    first, second = probe.store(), probe.store()
    sid = _id()
    await first.create(_header(sid))
    async with await first.acquire(sid) as lease:
        await lease.append(Rewound(0, 0.0))
    await lease.release()
    lease2 = await probe.lease(second, sid)
    await lease.release()  # a stale release must not free the next holder's lease
    await _refused(probe, first.acquire(sid), "acquire() after a stale release()")
    await lease2.append(Rewound(1, 0.0))
    _same((await first.load(sid)).entries, (Rewound(0, 0.0), Rewound(1, 0.0)), "two holders")


async def append_after_release_refused(probe: Probe) -> None:
    """A released lease appends nothing (StorageError), also once another holds the session."""
    store = probe.store()
    sid = _id()
    await store.create(_header(sid))
    lease = await store.acquire(sid)
    await lease.release()
    await probe.lease(store, sid)
    try:
        await lease.append(Rewound(0, 0.0))
    except StorageError:
        pass
    else:
        raise ScenarioFailed("append() on a released lease was accepted")
    if (await store.load(sid)).entries:
        raise ScenarioFailed("append() on a released lease stored an entry")


async def visible_across_handles(probe: Probe) -> None:
    """An append is visible to another handle when it returns, and to a handle opened later."""
    first, second = probe.store(), probe.store()
    sid = _id()
    await first.create(_header(sid))
    lease = await probe.lease(first, sid)
    for index in range(3):
        await lease.append(Rewound(index, 0.0))
        got = (await second.load(sid)).entries
        if len(got) != index + 1:
            raise ScenarioFailed(f"a second handle read {len(got)} entries after {index + 1}")
    later = probe.store()
    if len((await later.load(sid)).entries) != 3:
        raise ScenarioFailed("a handle opened later does not read the earlier appends")


async def list_sessions(probe: Probe) -> None:
    """``list_sessions`` holds every created session's header, oldest first."""
    store = probe.store()
    ids = [_id("a"), _id("b")]
    stamp = time.time()
    for offset, sid in enumerate(ids):
        await store.create(SessionHeader(sid, stamp + offset, None, None))
    listed = [h for h in await store.list_sessions() if h.id in ids]
    if [h.id for h in listed] != ids:
        raise ScenarioFailed(f"list_sessions() gave {listed!r}, wanted {ids} in that order")
    key = [(h.created_at, h.id) for h in await store.list_sessions()]
    if key != sorted(key):
        raise ScenarioFailed("list_sessions() is not ordered by (created_at, id)")


async def session_infos(probe: Probe) -> None:
    """``list_session_infos`` gives each session's info as the fold of its log gives it.

    Every entry kind counts: metadata (the latest wins), a pending turn and the abandoned save
    that ends it, a rewind, a turn of unknown cost, a fork's header; entries given to
    ``create`` and appended later alike, read through another handle.
    """
    store, reader = probe.store(), probe.store()
    stamp = time.time()
    first, second = _id("i"), _id("j")
    await store.create(SessionHeader(first, stamp, None, None), _entries())
    forked = (TurnSaved(0, "complete", (UserMessage("q"),), Usage(5, 6), 0.25, None, 1.0),)
    await store.create(SessionHeader(second, stamp + 1, first, 1), forked)
    lease = await probe.lease(store, first)
    entry: SessionEntry
    for entry in (
        TurnStarted(7, "s/7", None, stamp + 10),
        TurnSaved(7, "abandoned", (), Usage(), None, "s/7", stamp + 11),
    ):
        await lease.append(entry)
    lease = await probe.lease(store, second)
    for entry in (
        TurnSaved(1, "complete", (UserMessage("r"),), Usage(1, 2), 0.5, None, stamp + 12),
        MetadataSet("old", None, (), stamp + 13),
        MetadataSet("new", "u", ("t",), stamp + 14),
        TurnStarted(2, "s/2", "p", stamp + 15),
    ):
        await lease.append(entry)
    ids = [first, second]
    got = [i for i in await reader.list_session_infos() if i.id in ids]
    want = [i for i in await SessionStore.list_session_infos(reader) if i.id in ids]
    if [i.id for i in got] != ids:
        raise ScenarioFailed(f"list_session_infos() gave {[i.id for i in got]}, wanted {ids}")
    if got != want:
        raise ScenarioFailed(f"list_session_infos() gave {got!r}; the logs fold to {want!r}")
    one, two = got
    facts = (
        (one.turns, 1),
        (one.cost, None),
        (one.pending, False),
        (one.updated_at, stamp + 11),
        (one.metadata.title, "Tïtle\u2028"),
        (two.turns, 2),
        (two.cost, 0.75),
        (two.usage, Usage(6, 8)),
        (two.pending, True),
        ((two.parent_id, two.fork_at), (first, 1)),
        ((two.metadata.title, two.metadata.user_id, two.metadata.tags), ("new", "u", ("t",))),
    )
    for seen, wanted in facts:
        if seen != wanted:
            raise ScenarioFailed(
                f"list_session_infos() shows {seen!r} where the log gives {wanted!r}"
            )
    await probe.release_all()
    probe.leases.clear()
    await store.delete(first)
    if any(i.id == first for i in await reader.list_session_infos()):
        raise ScenarioFailed("list_session_infos() after delete() lists the session")


async def delete(probe: Probe) -> None:
    """``delete`` removes the header and the log; the id can be created anew, empty."""
    store = probe.store()
    sid = _id()
    await store.create(_header(sid), _entries())
    await store.delete(sid)
    try:
        await store.load(sid)
    except SessionNotFoundError:
        pass
    else:
        raise ScenarioFailed("load() after delete() found the session")
    if any(h.id == sid for h in await store.list_sessions()):
        raise ScenarioFailed("list_sessions() after delete() lists the session")
    await store.create(_header(sid))
    if (await store.load(sid)).entries:
        raise ScenarioFailed("a session created again after delete() has the old entries")


async def bad_id_refused(probe: Probe) -> None:
    """An empty, too long or control-character id is refused with ConfigurationError."""
    store = probe.store()
    for bad in ("", "x" * 181, "a\nb", "a/b"):
        for name, call in (
            ("create", lambda b=bad: store.create(SessionHeader(b, 0.0))),
            ("load", lambda b=bad: store.load(b)),
            ("acquire", lambda b=bad: store.acquire(b)),
        ):
            try:
                await call()
            except ConfigurationError:
                continue
            raise ScenarioFailed(f"{name}({bad[:20]!r}) was not refused with ConfigurationError")


CHECKS: Final[Mapping[SessionStoreCheck, Callable[[Probe], Awaitable[None]]]] = {
    "round_trip": round_trip,
    "load_after": load_after,
    "create_once": create_once,
    "append_order": append_order,
    "sessions_isolated": sessions_isolated,
    "unknown_session": unknown_session,
    "second_writer_refused": second_writer_refused,
    "release_then_acquire": release_then_acquire,
    "append_after_release_refused": append_after_release_refused,
    "visible_across_handles": visible_across_handles,
    "list_sessions": list_sessions,
    "session_infos": session_infos,
    "delete": delete,
    "bad_id_refused": bad_id_refused,
}
