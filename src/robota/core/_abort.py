"""Cancellation signals and the one abort classifier (S15, S23, S38).

``AbortController``/``AbortSignal`` are Robota's rendering of the web platform's pair: a run takes
one signal, every provider call and tool observes it, and whoever holds the controller cancels.
They are plain objects, usable from any thread and any event loop; ``await signal.wait()`` is the
asyncio way to observe one.

An abort is soft about tool bodies already running: the run lets them finish and keeps their
results (S38). :meth:`AbortController.abandon` is the second, hard stage — the run stops waiting
for them — so a person who pressed stop twice is never held by a tool that ignores the signal.

``is_abort(error, signal)`` is the single source of truth for "was this failure an abort?". It
decides from the caller's signal and from the error's type and ``__cause__`` chain — never from
message text, because a provider failure whose message merely contains "abort" is a failure, and
reporting it as a clean interruption hides it from everything downstream.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable
from typing import Final, final

from robota.core._errors import AbortError
from robota.core._logging import get_logger

__all__ = [
    "AbortController",
    "AbortSignal",
    "abandon_signal",
    "abort_error_from_reason",
    "is_abort",
]

_log = get_logger("robota.abort")

AbortListener = Callable[[object], None]
"""A callback run once with the abort reason when the signal aborts."""

_MAX_CAUSE_DEPTH: Final = 16


@final
class AbortSignal:
    """The observing half of an :class:`AbortController`.

    A signal aborts at most once and stays aborted. Observe it by checking :attr:`aborted`,
    registering a listener with :meth:`add_listener`, awaiting :meth:`wait`, or calling
    :meth:`throw_if_aborted` at a safe point. Long-running tools must observe it (S23): finishing
    silently after an abort is a contract violation.

    Create signals through :class:`AbortController` (or :meth:`any`); a signal cannot abort
    itself.
    """

    __slots__ = ("__weakref__", "_abandon", "_aborted", "_listeners", "_lock", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._listeners: list[AbortListener] = []
        self._lock = threading.Lock()
        self._abandon: AbortSignal | None = None  # the hard stage, made when first asked for

    @property
    def aborted(self) -> bool:
        """Whether the signal has aborted."""
        return self._aborted

    @property
    def abandoned(self) -> bool:
        """Whether the controller stopped waiting for running work (its hard stage).

        See :meth:`AbortController.abandon`. An abandoned signal has aborted too.
        """
        stage = self._abandon
        return stage is not None and stage.aborted

    @property
    def reason(self) -> object:
        """What the controller aborted with (an :class:`AbortError` by default); ``None`` before."""
        return self._reason

    def add_listener(self, listener: AbortListener) -> Callable[[], None]:
        """Run ``listener(reason)`` once when the signal aborts; return a function that removes it.

        If the signal has already aborted, the listener runs immediately (so no caller can miss
        an abort that raced its registration). Listeners run in the thread that aborts; one that
        raises is reported to the diagnostic sink and does not stop the others.
        """
        with self._lock:
            if not self._aborted:
                self._listeners.append(listener)
                return lambda: self.remove_listener(listener)
        _call_listener(listener, self._reason)
        return _noop

    def remove_listener(self, listener: AbortListener) -> None:
        """Forget a listener; removing one that is not registered does nothing."""
        with self._lock, contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def throw_if_aborted(self) -> None:
        """Raise the abort as an :class:`AbortError` if the signal has aborted."""
        if self._aborted:
            raise abort_error_from_reason(self._reason)

    async def wait(self) -> object:
        """Wait until the signal aborts and return its reason.

        Safe to cancel: a cancelled wait leaves no listener behind. Works when the abort comes
        from another thread.
        """
        if self._aborted:
            return self._reason
        loop = asyncio.get_running_loop()
        future: asyncio.Future[object] = loop.create_future()

        def wake(reason: object) -> None:
            try:
                same_loop = asyncio.get_running_loop() is loop
            except RuntimeError:
                same_loop = False
            if same_loop:
                _resolve(future, reason)
            elif not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, future, reason)

        remove = self.add_listener(wake)
        try:
            return await future
        finally:
            remove()

    @classmethod
    def any(cls, signals: Iterable[AbortSignal]) -> AbortSignal:
        """A signal that aborts when the first of ``signals`` aborts, with that one's reason.

        It also abandons (:attr:`abandoned`) when the first of them abandons.

        The combined signal keeps listeners on its sources until it aborts; combine signals whose
        lifetimes are bounded (a run's signal with the agent's close signal), not a process-long
        signal with an unbounded stream of short-lived ones.
        """
        controller = AbortController()
        sources = list(signals)
        hard_removers: list[Callable[[], None]] = []

        def forward_abandon(reason: object) -> None:
            controller.abandon(reason)
            for remove in hard_removers:
                remove()

        # The hard stage follows the first source that reaches it (with or after its abort).
        hard_removers.extend(
            abandon_signal(source).add_listener(forward_abandon) for source in sources
        )
        if controller.signal.abandoned:  # a source had abandoned already: listen no longer
            for remove in hard_removers:
                remove()
        for source in sources:
            if source.aborted:
                controller.abort(source.reason)
                return controller.signal
        removers: list[Callable[[], None]] = []

        def forward(reason: object) -> None:
            controller.abort(reason)
            for remove in removers:
                remove()

        removers.extend(source.add_listener(forward) for source in sources)
        return controller.signal

    def _abort(self, reason: object) -> bool:
        with self._lock:
            if self._aborted:
                return False
            self._aborted = True
            self._reason = reason
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            _call_listener(listener, reason)
        return True

    def __repr__(self) -> str:
        state = f"aborted, reason={self._reason!r}" if self._aborted else "not aborted"
        return f"<AbortSignal {state}>"


@final
class AbortController:
    """Owns an :class:`AbortSignal` and aborts it.

    Example:
        >>> controller = AbortController()
        >>> controller.abort("user pressed stop")
        >>> controller.signal.aborted, controller.signal.reason
        (True, 'user pressed stop')
    """

    __slots__ = ("_signal",)

    def __init__(self) -> None:
        self._signal = AbortSignal()

    @property
    def signal(self) -> AbortSignal:
        """The signal this controller aborts."""
        return self._signal

    def abort(self, reason: object = None) -> None:
        """Abort the signal with ``reason`` (an :class:`AbortError` when omitted).

        Only the first call has an effect; later calls keep the first reason.
        """
        if self._signal.aborted:
            return
        self._signal._abort(AbortError() if reason is None else reason)

    def abandon(self, reason: object = None) -> None:
        """Abort (if not yet) and stop waiting for work still running: the hard stage (S23, S38).

        After a plain :meth:`abort` a run lets tool bodies already running finish and keeps their
        results. After ``abandon()`` it stops waiting for them: each running body is cancelled
        where it awaits (an async body gets ``CancelledError``, so its ``finally`` blocks run —
        the place to kill a process group it started, see :func:`robota.host.signal_group`), its
        call is recorded as interrupted while running, and the run settles as
        ``"interrupted"`` at once. A synchronous tool running in its worker thread cannot be
        stopped: the thread finishes on its own, what it returns is discarded, and it does not
        keep the process from exiting. A journaled run (S40) keeps waiting — its journal must
        record what a body really did — so there ``abandon()`` is a plain abort.

        Call it after ``abort()`` (a second Ctrl-C), or alone. Only the first call has an effect.
        """
        self.abort(reason)
        stage = abandon_signal(self._signal)
        if not stage.aborted:
            stage._abort(self._signal.reason)

    def __repr__(self) -> str:
        return f"<AbortController signal={self._signal!r}>"


def abandon_signal(signal: AbortSignal) -> AbortSignal:
    """The signal of ``signal``'s hard stage: it aborts when its controller abandons (internal).

    The tool executor guards running bodies with it; callers use
    :meth:`AbortController.abandon` and :attr:`AbortSignal.abandoned`.
    """
    with signal._lock:
        stage = signal._abandon
        if stage is None:
            stage = signal._abandon = AbortSignal()
    return stage


def abort_error_from_reason(reason: object) -> AbortError:
    """The error a cancelled operation raises for ``reason`` (S38).

    The reason itself when it already is an :class:`AbortError`; otherwise a new one carrying the
    reason as ``.reason`` (and as ``__cause__`` when the reason is an exception).
    """
    if isinstance(reason, AbortError):
        return reason
    if reason is None:
        return AbortError()
    return AbortError(f"The operation was aborted: {reason}", reason=reason)


def is_abort(error: BaseException | None, signal: AbortSignal | None = None) -> bool:
    """Whether a failure was an abort (S15): the one classifier every layer uses.

    True when ``signal`` (the caller's own) has aborted — the operation ended because of it,
    whatever the error says — or when the error, or an error on its ``__cause__`` chain, is an
    abort by type: a class named ``AbortError`` (Robota's or another library's) or
    :class:`asyncio.CancelledError`. Message text is never read.

    ``__context__`` (an error raised *while handling* another) is deliberately not followed: a
    failure during cleanup after an abort is still a failure.
    """
    if signal is not None and signal.aborted:
        return True
    current: BaseException | None = error
    for _ in range(_MAX_CAUSE_DEPTH):
        if current is None:
            return False
        if isinstance(current, asyncio.CancelledError) or any(
            klass.__name__ == "AbortError" for klass in type(current).__mro__
        ):
            return True
        current = current.__cause__
    return False


def _resolve(future: asyncio.Future[object], reason: object) -> None:
    if not future.done():
        future.set_result(reason)


def _call_listener(listener: AbortListener, reason: object) -> None:
    try:
        listener(reason)
    except Exception as exc:  # noqa: BLE001 - one listener's bug must not starve the others
        _log.error("abort listener raised", listener=repr(listener), error=repr(exc))


def _noop() -> None:
    return None
