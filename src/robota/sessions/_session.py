"""A :class:`Session`: one conversation with an id, kept in a store, run by an agent.

Each turn runs under the session's lease (one writer across processes, S10): take the lease,
reload the log (another process may have added turns), resume a turn a crash left pending (S40),
load the active conversation into the agent (:meth:`~robota.Agent.replace_history`, with the
agent's *live* system prompt, S35), run, save the turn's messages in one append, give the lease
up. A turn that cannot take the lease fails at once with :class:`SessionBusyError` — the one
writer choice: failing is visible and never leaves a caller blocked behind a stuck turn. A pending
turn — resumed, answered — is in :mod:`robota.sessions._session_pending`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Final, Literal, final

from robota.core import (
    AbortSignal,
    Agent,
    ConfigurationError,
    Message,
    MessagePart,
    OutsideRequest,
    RunEvent,
    RunResult,
    RunStream,
    Usage,
    UsageLimits,
)
from robota.core.hooks import hook_fields
from robota.core.payloads import user_content
from robota.sessions._compaction import CompactionPolicy
from robota.sessions._compactor import Compactor
from robota.sessions._errors import SessionNotFoundError, SessionStateError
from robota.sessions._fork import fork_entries, position
from robota.sessions._lazy import SessionLog, read_log
from robota.sessions._limits import check_session_limits, turn_options
from robota.sessions._records import (
    Compacted,
    MetadataSet,
    Rewound,
    SessionEntry,
    SessionHeader,
    TurnStarted,
)
from robota.sessions._session_pending import PendingTurnMixin, keep_until_done
from robota.sessions._state import SessionInfo, SessionMetadata, SessionState, Turn, check_metadata
from robota.sessions._store import SessionLease, SessionStore, check_session_id
from robota.sessions._summary import list_sessions
from robota.sessions._turns import ended_turn, refuse_session_owned, saved_turn

__all__ = ["Session", "list_sessions"]

_ID_PREFIX: Final = "ses_"
_DEFAULT_POLICY: Final = CompactionPolicy()

UserInput = str | Sequence[MessagePart]  # as robota.Agent.run takes it
_Call = Callable[..., Awaitable[RunResult[Any]]]  # Agent.run, or a turn streamed to a consumer

# Sessions sharing one agent take turns on it: loading a conversation and running the turn must
# not interleave with another session's. Keyed by the agent itself, weakly: the lock lives as
# long as the agent (a session holds its agent), and an id() reused by a later agent can never
# hand it a dead agent's lock — even when a session was dropped without aclose().
_AGENT_LOCKS: weakref.WeakKeyDictionary[Agent, asyncio.Lock] = weakref.WeakKeyDictionary()


def _agent_lock(agent: Agent) -> asyncio.Lock:
    lock = _AGENT_LOCKS.get(agent)
    if lock is None:
        lock = _AGENT_LOCKS[agent] = asyncio.Lock()
    return lock


@final
class Session(PendingTurnMixin):
    """A conversation with an id that outlives processes (issue 27).

    Open one with :meth:`open`; each :meth:`run` is one turn, saved atomically when it ends. A
    crash (SIGKILL) mid-turn leaves the session at its last complete turn — or, when the agent is
    journaled (``Agent(journal=...)``), at a *pending* turn that the next :meth:`open` or
    :meth:`run` resumes with :meth:`~robota.Agent.resume` to the end of the interrupted turn,
    repeating no model call or tool effect (S40).

    The agent: the session loads its conversation into the agent before every turn, replacing
    whatever the agent held (:meth:`~robota.Agent.replace_history`), so do not run the agent
    directly while it serves a session. Several sessions may share one agent (a fork does by
    default): they take turns. The system prompt is the agent's, live (S35): a new turn on a
    restored session carries the agent's current prompt, never a stored one; continuing an
    interrupted execution keeps the prompt it started with.

    Hooks (S22): ``SessionStart`` fires when a session is opened (``source``: ``"startup"`` for a
    new one, ``"resume"`` for an existing one) and ``SessionEnd`` at :meth:`aclose`, through the
    agent's hook runner (:attr:`~robota.Agent.hooks`). Both are awaited and advisory: their
    outcome is not inspected, so a hook cannot veto opening or closing.

    Compaction (S39): before each turn, a conversation past its policy's mark
    (:class:`CompactionPolicy`, on by default) has its oldest turns replaced — for the model —
    by a marked summary message (:func:`is_compaction_summary`), keeping the system prompt, the
    latest turns and every tool call with its result; the replaced turns stay in the store and
    in :attr:`turns`. ``PreCompact`` hooks (S22) fire before it, awaited and inspected: a deny
    (exit 2, ``"decision": "block"``) vetoes that compaction, and a
    ``{"hookSpecificOutput": {"summary": "..."}}`` body supplies the summary. :meth:`compact`
    compacts on request.

    Lifecycle: ``open`` → ``closed`` (:meth:`aclose` or ``async with``); a closed session refuses
    every call with :class:`SessionStateError`. The store is the caller's: closing a session does
    not close it.
    """

    __slots__ = (
        "_agent",
        "_limits",
        "_lock",
        "_log",
        "_policy",
        "_requests",
        "_status",
        "_store",
    )

    def __init__(
        self,
        agent: Agent,
        store: SessionStore,
        log: SessionLog,
        *,
        _token: object,
        _policy: CompactionPolicy | None = _DEFAULT_POLICY,
        _limits: UsageLimits | None = None,
    ) -> None:
        if _token is not _OPEN:
            raise TypeError("use `await Session.open(agent, store, session_id)` to get a Session")
        self._policy = _policy
        self._limits = _limits
        self._agent = agent
        self._store = store
        self._log = log  # issue 27: decoded on first use (robota.sessions._lazy)
        self._lock = _agent_lock(agent)
        self._status: Literal["open", "closed"] = "open"
        self._requests: tuple[OutsideRequest, ...] = ()

    # ------------------------------------------------------------------ opening

    @classmethod
    async def open(
        cls,
        agent: Agent,
        store: SessionStore,
        session_id: str | None = None,
        *,
        title: str | None = None,
        user_id: str | None = None,
        tags: Iterable[str] = (),
        compaction: CompactionPolicy | None = _DEFAULT_POLICY,
        limits: UsageLimits | None = None,
    ) -> Session:
        """Open session ``session_id`` of ``store`` for ``agent``, creating it when new.

        With ``session_id=None`` a new session gets a fresh id (``session.id``); an id the store
        does not hold yet creates that session (a chat named by its user); openers racing to
        create one id all succeed, the losers resuming the winner's session. Opening an existing
        session resumes a turn a crash left pending, when its lease is free (a pending turn whose
        lease another process holds is still running there). ``title``, ``user_id`` and
        ``tags`` set the metadata of a new session; on an existing one, when any is given, they
        replace its metadata (as :meth:`set_metadata`). ``compaction`` is this handle's
        automatic-compaction policy (S39): the default :class:`CompactionPolicy`, your own, or
        ``None`` for none (a compaction a crash left pending is still finished). ``limits``
        caps this handle's turns by the session's totals (S31): each turn — and each
        compaction's summary call — runs with what the session's :attr:`usage` and :attr:`cost`
        leave of them (output no provider reported counted by estimate, S31), under the agent's
        and the turn's own ``limits=``, and stops with
        :class:`~robota.UsageLimitExceeded` rather than pass them;
        a cost limit needs the session's cost known. Tokens and cost only (``requests`` and
        ``tool_calls`` are per turn).

        Raises:
            ConfigurationError: ``agent`` is not an Agent, ``store`` not a SessionStore, or a
                bad id or metadata (the message names the fix).
            SessionStateError: the session has a pending turn and the agent has no journal to
                resume it with, or the resumed turn is suspended (answer it, then
                :meth:`resume`).
            ReconciliationRequired: the pending turn's execution cannot be resumed without the
                host settling it (:meth:`~robota.Agent.reconcile`, then open again).
            StorageError: the store failed. The log's entries are decoded on first use (see
                :attr:`history`): a damaged one is reported then, unless its text is not one
                robota writes (reported here).
        """
        if not isinstance(agent, Agent):
            raise ConfigurationError(f"Session.open() needs a robota.Agent, got {agent!r}")
        if not isinstance(store, SessionStore):
            raise ConfigurationError(
                f"Session.open() needs a SessionStore (robota.sessions.SQLiteSessionStore, "
                f"robota.testing.InMemorySessionStore …), got {store!r}"
            )
        if compaction is not None and not isinstance(compaction, CompactionPolicy):
            raise ConfigurationError(
                f"Session.open(compaction=) takes a robota.sessions.CompactionPolicy or None, got "
                f"{compaction!r}"
            )
        metadata = check_metadata(title, user_id, tags)
        limits = check_session_limits(limits)
        given = title is not None or user_id is not None or bool(metadata.tags)
        source: Literal["startup", "resume"] = "resume"
        if session_id is None:
            session_id = _ID_PREFIX + uuid.uuid4().hex
        session_id = check_session_id(session_id)
        try:
            log = await read_log(store, session_id)
        except SessionNotFoundError:
            now = time.time()
            entries: tuple[SessionEntry, ...] = (
                (MetadataSet(metadata.title, metadata.user_id, metadata.tags, now),)
                if given
                else ()
            )
            try:
                await store.create(SessionHeader(session_id, now), entries)
                source, given = "startup", False
            except ConfigurationError as exc:
                if exc.code != "session_exists":
                    raise
                # Another opener created it since the load: this open resumes theirs.
            log = await read_log(store, session_id)
        session = cls(agent, store, log, _token=_OPEN, _policy=compaction, _limits=limits)
        try:
            if given:
                await session.set_metadata(
                    title=metadata.title, user_id=metadata.user_id, tags=metadata.tags
                )
            if log.may_have_pending_turn() and session._state.pending is not None:
                await session._recover_if_free()
            await session._fire("SessionStart", {"source": source})
        except BaseException:
            session._status = "closed"
            raise
        return session

    # ------------------------------------------------------------------ reading

    @property
    def id(self) -> str:
        """The session id."""
        return self._log.header.id

    @property
    def agent(self) -> Agent:
        """The agent that runs this session's turns."""
        return self._agent

    @property
    def store(self) -> SessionStore:
        """The store the session is kept in."""
        return self._store

    @property
    def history(self) -> Sequence[Message]:
        """The active conversation as the model will see it next, without the system prompt.

        As of this handle's last read of the store (every open, turn, fork and rewind reads
        it); another process's later turns appear at this session's next turn. A tuple — except
        right after :meth:`open`, whose log is decoded on first use (issue 27): then a
        read-only sequence that decodes it on its first read and reads as the tuple of its
        messages from then on (equal to it, slicing to tuples; ``tuple(history)`` for the tuple
        itself), raising :class:`~robota.StorageError` there if the log holds a damaged entry.
        """
        return self._log.history()

    @property
    def turns(self) -> tuple[Turn, ...]:
        """The active turns, in order (rewound ones are kept in the store, not here)."""
        return self._state.turns()

    @property
    def limits(self) -> UsageLimits | None:
        """This handle's session-wide usage limits (``Session.open(limits=...)``), if any."""
        return self._limits

    @property
    def compaction(self) -> CompactionPolicy | None:
        """This handle's automatic-compaction policy (S39); ``None`` when off."""
        return self._policy

    @property
    def compactions(self) -> tuple[Compacted, ...]:
        """The compactions in force, oldest first; the last one's summary heads :attr:`history`."""
        return tuple(self._state.compactions)

    @property
    def metadata(self) -> SessionMetadata:
        """The session's title, user id and tags."""
        return self._state.metadata

    @property
    def usage(self) -> Usage:
        """Usage over every turn run in this session (see :class:`SessionInfo`)."""
        return self._state.usage

    @property
    def cost(self) -> float | None:
        """Estimated USD cost of every turn run in this session; ``None`` when any is unknown."""
        return self._state.cost

    @property
    def info(self) -> SessionInfo:
        """The session's :class:`SessionInfo`."""
        return self._state.info()

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._status == "closed"

    async def refresh(self) -> None:
        """Read the session from the store again (another process's turns, a rewind …)."""
        self._check_open()
        await self._reload()

    # ------------------------------------------------------------------ turns

    async def run(self, input: UserInput, **options: Any) -> RunResult[Any]:
        """Run one turn: the agent answers ``input`` with the session's conversation before it.

        Options are :meth:`robota.Agent.run`'s (``output=``, ``signal=``, ``max_rounds=`` …)
        except ``fresh_conversation`` (a turn runs in the session's conversation) and
        ``execution_id``, which the session chooses (``"<session id>/<turn number>"``
        for a journaled agent). The turn's messages are saved in one append when the run ends:
        ``complete`` or ``interrupted`` as the run returned, ``failed`` (with the messages the
        run had added, then the error re-raised) when it raised — ``abandoned``, adding nothing,
        when a ``UserPromptSubmit`` hook blocked the prompt (S22). A ``suspended`` run (S40)
        stays pending: answer its requests with :meth:`~robota.Agent.respond`, then
        :meth:`resume`.

        Raises:
            SessionBusyError: another writer holds the session (raised at once).
            SessionStateError: the session is closed, or holds a pending turn that cannot be
                resumed here (see :meth:`open`).
            ConfigurationError: bad input or options.
            Any error of :meth:`robota.Agent.run`, after the failed turn was saved.
        """
        self._check_open()
        refuse_session_owned(options, "session.run()")
        user_content(input, "session.run()")  # a bad input fails before anything is written
        async with self._lock, await self._acquire() as lease:
            with self._hook_fields():
                state = await self._reload()
                if state.pending is not None:
                    await self._resume_pending(lease, state)
                    state = self._state
                await self._before_turn(lease, state, input, options.get("signal"))
                return await self._run_turn(lease, self._state, input, options)

    def run_stream(self, input: UserInput, **options: Any) -> RunStream[Any]:
        """One turn, streamed: iterate it for events, then ``await stream.result()``.

        As :meth:`robota.Agent.run_stream` (the same :class:`~robota.RunStream`), with
        :meth:`run`'s session rules: the turn takes the session's lease when iteration (or
        ``result()``) begins and holds it until the turn is saved; a pending turn is resumed
        first; ``execution_id`` is the session's choice. Leaving early — ``break``,
        ``await stream.aclose()``, dropping the stream — aborts the run (S23); the turn is
        then saved ``interrupted`` with what the agent committed, and the lease released. The
        input is checked here; the options, and :class:`SessionBusyError`, when the turn starts.

        Raises:
            SessionStateError: the session is closed.
            ConfigurationError: bad input, or ``execution_id=`` or ``fresh_conversation=``.
        """
        self._check_open()
        refuse_session_owned(options, "session.run_stream()")
        user_content(input, "session.run_stream()")
        options = dict(options)
        signal: AbortSignal | None = options.pop("signal", None)

        def start(
            run_signal: AbortSignal, notify: Callable[[RunEvent], None]
        ) -> Coroutine[Any, Any, RunResult[Any]]:
            return self._stream_turn(input, {**options, "signal": run_signal}, notify)

        return RunStream(start, signal, keep_until_done)

    async def _stream_turn(
        self, input: UserInput, options: dict[str, Any], notify: Callable[[RunEvent], None]
    ) -> RunResult[Any]:
        self._check_open()  # closed between run_stream() and the first read

        async def streamed(text: UserInput, **run_options: Any) -> RunResult[Any]:
            # S23: leaving (an abort through run_signal, or this task's cancellation) makes
            # the agent commit what it received as interrupted; `async with` waits for that.
            async with self._agent.run_stream(text, **run_options) as stream:
                async for event in stream:
                    notify(event)
                return await stream.result()

        async with self._lock, await self._acquire() as lease:
            with self._hook_fields():
                state = await self._reload()
                if state.pending is not None:
                    await self._resume_pending(lease, state)
                    state = self._state
                await self._before_turn(lease, state, input, options.get("signal"))
                return await self._run_turn(lease, state, input, options, streamed)

    async def compact(
        self, *, instructions: str | None = None, keep_recent_turns: int | None = None
    ) -> Compacted | None:
        """Compact now (S39, trigger ``"manual"``), whatever the conversation's size.

        Replaces the oldest turns — as many as one summary request can carry, leaving the
        ``keep_recent_turns`` latest (default: the policy's) — by a summary, as the automatic
        policy would; ``instructions`` are added to the summary request and passed to
        ``PreCompact`` hooks as ``custom_instructions``. Uses this handle's policy, or the
        default one when it has none. Returns the record, or ``None`` when nothing was
        compacted (no older turn to replace, or a ``PreCompact`` hook vetoed).

        Raises:
            ConfigurationError: a bad argument.
            SessionBusyError: another writer holds the session.
            SessionStateError: the session is closed, or the summary call failed (code
                ``compaction_failed``; nothing was compacted).
            Any error of the summary run (a provider error …).
        """
        self._check_open()
        if instructions is not None and not isinstance(instructions, str):
            raise ConfigurationError(f"instructions must be a string or None, got {instructions!r}")
        policy = self._policy or _DEFAULT_POLICY
        keep: object = policy.keep_recent_turns if keep_recent_turns is None else keep_recent_turns
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
            raise ConfigurationError(
                f"keep_recent_turns must be a non-negative integer or None, got {keep!r}"
            )
        async with self._lock, await self._acquire() as lease:
            with self._hook_fields():
                state = await self._reload()
                if state.pending is not None:
                    await self._resume_pending(lease, state)
                compactor = self._compactor(lease, None)
                pending = self._state.compacting
                if pending is not None and self._agent.journal is not None:
                    await compactor.finish(pending, policy)
                return await compactor.compact(policy, "manual", instructions or "", keep)

    def _compactor(self, lease: SessionLease, signal: Any) -> Compactor:
        async def append(entry: SessionEntry) -> None:
            await self._append(lease, entry)

        return Compactor(self._agent, self.id, append, lambda: self._state, signal, self._limits)

    async def _before_turn(
        self, lease: SessionLease, state: SessionState, input: UserInput, signal: Any
    ) -> None:
        """Automatic compaction (S39), under the turn's lease, before the turn's request."""
        content = user_content(input, "session.run()")
        await self._compactor(lease, signal).before_turn(self._policy, content)

    async def _run_turn(
        self,
        lease: SessionLease,
        state: SessionState,
        input: UserInput,
        options: Any,
        call: _Call | None = None,
    ) -> RunResult[Any]:
        number = state.next_turn
        # S31: what the session's limits leave, after its totals (a compaction's included).
        options = turn_options(
            self._limits, self._agent.limits, self._state.limit_usage, self._state.cost, options
        )
        execution_id: str | None = None
        if self._agent.journal is not None:
            execution_id = f"{self.id}/{number}"
            # S40: the turn is recorded with its execution before the run, so a crash leaves
            # it pending and the next open resumes that execution instead of losing it.
            await self._append(
                lease,
                TurnStarted(number, execution_id, self._agent.system_prompt, time.time()),
            )
            options = {**options, "execution_id": execution_id}
        # S35: the live prompt as head; S31: reports made before a compaction do not count.
        await self._agent.replace_history(state.history, reported_usage=state.reports_current)
        base = len(self._agent.history)
        try:
            result: RunResult[Any] = await (call or self._agent.run)(input, **options)
        except BaseException as exc:
            saved = ended_turn(number, exc, tuple(self._agent.history[base:]), execution_id)
            await asyncio.shield(self._append(lease, saved))
            raise
        if result.status != "suspended":
            await self._append(lease, saved_turn(number, result, execution_id))
        else:
            self._requests = result.pending_requests
        return result

    # ------------------------------------------------------------------ fork, rewind, metadata

    async def fork(self, at: int | None = None, *, session_id: str | None = None) -> Session:
        """A new session whose conversation is this one's first ``at`` turns (all when ``None``).

        This session is not changed. The fork has its own id (``session_id``, or a fresh one),
        this session's metadata, and ``info.parent_id`` / ``info.fork_at`` naming its origin; it
        is served by the same agent (sessions sharing an agent take turns on it), with this handle's
        compaction policy and limits.

        Raises:
            ConfigurationError: ``at`` is not between 0 and the number of active turns, or the
                id exists already (code ``session_exists``).
            SessionStateError: the session is closed.
        """
        self._check_open()
        state = await self._reload()
        at = position(at, len(state.active), "fork", "at")
        now = time.time()
        new_id = check_session_id(session_id if session_id is not None else _new_id())
        entries = fork_entries(state, at, now)
        await self._store.create(SessionHeader(new_id, now, self.id, at), entries)
        return await Session.open(
            self._agent, self._store, new_id, compaction=self._policy, limits=self._limits
        )

    async def rewind(self, to: int) -> None:
        """Keep only the first ``to`` active turns; the later ones stay in the store's record.

        The next turn continues from turn ``to`` exactly as a conversation of only the kept
        turns would: the model sees the kept turns' messages and nothing of the dropped ones.
        Rewinding to before a compaction point drops that compaction (S39): the model sees the
        kept turns themselves again (or the summary of an earlier compaction within them).
        New turns get numbers after every turn ever stored, so the log stays unambiguous.

        Raises:
            ConfigurationError: ``to`` is not between 0 and the number of active turns.
            SessionBusyError: another writer holds the session.
            SessionStateError: the session is closed.
        """
        self._check_open()
        async with self._lock, await self._acquire() as lease:
            state = await self._reload()
            to = position(to, len(state.active), "rewind", "to")
            await self._append(lease, Rewound(to, time.time()))

    async def set_metadata(
        self, *, title: str | None = None, user_id: str | None = None, tags: Iterable[str] = ()
    ) -> None:
        """Replace the session's title, user id and tags (pass the current ones to keep them).

        Raises:
            ConfigurationError: a value of the wrong type.
            SessionBusyError: another writer holds the session.
        """
        self._check_open()
        metadata = check_metadata(title, user_id, tags)
        async with await self._acquire() as lease:
            await self._reload()
            await self._append(
                lease, MetadataSet(metadata.title, metadata.user_id, metadata.tags, time.time())
            )

    async def delete(self) -> None:
        """Delete the session from its store, with its whole record, and close this handle.

        Raises:
            SessionBusyError: another writer holds the session.
        """
        self._check_open()
        await self._store.delete(self.id)
        await self.aclose()

    # ------------------------------------------------------------------ closing

    async def aclose(self) -> None:
        """Close this handle: fire ``SessionEnd`` (S22) and let the agent go. Idempotent.

        The store stays open (it is the caller's), and so does the agent.
        """
        if self._status == "closed":
            return
        self._status = "closed"
        await self._fire("SessionEnd", {"reason": "other"})

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        turns = len(self._log.state().active) if self._log.decoded else "(not decoded)"
        return f"<Session {self.id!r} {turns} turns {self._status}>"

    # ------------------------------------------------------------------ helpers

    def _check_open(self) -> None:
        if self._status == "closed":
            raise SessionStateError(
                f"session {self.id!r} is closed; open it again with Session.open(agent, store, "
                f"{self.id!r})",
                code="session_closed",
            )

    @property
    def _state(self) -> SessionState:
        # Decodes and folds the log on first use (issue 27); raises StorageError if damaged.
        return self._log.state()

    async def _acquire(self) -> SessionLease:
        return await self._store.acquire(self.id)

    async def _reload(self) -> SessionState:
        # Issue 27: the log is append-only, so only the entries after those folded in are read
        # (another process's turns, a write whose outcome was unknown). A header that changed
        # means the session was deleted and made again: read it whole.
        state = self._state
        newer = await self._store.load_after(self.id, state.folded)
        if newer.header == state.header:
            self._log = SessionLog.folded(state.advanced(newer.entries))
        else:
            self._log = SessionLog.folded(SessionState(await self._store.load(self.id)))
        return self._log.state()

    async def _append(self, lease: SessionLease, entry: SessionEntry) -> None:
        await lease.append(entry)
        self._state.apply(entry)

    def _hook_fields(self) -> AbstractContextManager[None]:
        # S22: every hook a turn, a resume or a compaction fires names the session, as Claude
        # Code's hook inputs do (SessionStart and SessionEnd set it themselves, in _fire).
        return hook_fields(session_id=self.id)

    async def _fire(
        self, event: Literal["SessionStart", "SessionEnd"], extra: dict[str, Any]
    ) -> None:
        runner = self._agent.hooks
        if runner is None or not runner.configured(event):
            return
        # S22: awaited, outcome not inspected (advisory; see HOOK_EVENTS).
        await runner.run(event, {"hook_event_name": event, "session_id": self.id, **extra})


_OPEN: Final = object()


def _new_id() -> str:
    return _ID_PREFIX + uuid.uuid4().hex
