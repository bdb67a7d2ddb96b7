"""``RunStream``: a run whose progress is iterated (S23, S38).

Iterate it for :data:`~robota.RunEvent` values (text deltas, tool calls, committed messages),
then ``await stream.result()`` for the :class:`~robota.RunResult`. A model call that failed and
is tried again (a :class:`~robota.RetryPolicy` or a fallback model) yields
:class:`~robota.RetryStarted` carrying the text it had streamed, which is discarded: history
keeps the retried reply only. An agent the run calls as a tool (issue 29) streams into this
stream as :class:`~robota.SubagentEvent` values, apart from the run's own events. The run
starts — and takes the agent's slot (S38) — only when iteration (or :meth:`RunStream.result`)
begins, so a stream that is never consumed never runs.

Leaving early aborts the turn (S23): ``break`` out of ``async for`` (the stream object is dropped
and aborts), ``await stream.aclose()``, or leave an ``async with`` block. The run then commits
what it received as interrupted and releases the slot.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Final, Generic, final

from typing_extensions import TypeVar

from robota.core._abort import AbortController, AbortSignal
from robota.core._errors import AbortError
from robota.core._run_events import RunEvent
from robota.core.execution._result import RunResult

__all__ = ["RunStream"]

OutputT = TypeVar("OutputT", default=str)

Starter = Callable[[AbortSignal, Callable[[RunEvent], None]], Coroutine[Any, Any, RunResult[Any]]]

_CONSUMER_LEFT: Final = "the stream's consumer stopped reading"


@final
class _Channel:
    """The run task's side of a stream.

    It holds no reference to the :class:`RunStream`, so dropping the stream object frees it at
    once (and its finaliser aborts the run).
    """

    __slots__ = ("buffer", "wakeup")

    def __init__(self) -> None:
        self.buffer: deque[RunEvent] = deque()
        self.wakeup = asyncio.Event()

    def push(self, event: RunEvent) -> None:
        self.buffer.append(event)
        self.wakeup.set()

    def finished(self, task: asyncio.Task[RunResult[Any]]) -> None:
        self.wakeup.set()
        if not task.cancelled():
            task.exception()  # retrieved here so an abandoned stream never logs it as unhandled


@final
class RunStream(Generic[OutputT]):
    """A streamed run; see the module docstring. Obtain one from ``Agent.run_stream``."""

    __slots__ = (
        "__weakref__",
        "_channel",
        "_closed",
        "_controller",
        "_on_task",
        "_signal",
        "_start",
        "_task",
    )

    def __init__(
        self,
        start: Starter,
        signal: AbortSignal | None,
        on_task: Callable[[asyncio.Task[RunResult[Any]]], None] | None = None,
    ) -> None:
        self._start = start
        self._controller = AbortController()
        self._signal = (
            self._controller.signal
            if signal is None
            else AbortSignal.any([signal, self._controller.signal])
        )
        self._on_task = on_task
        self._task: asyncio.Task[RunResult[Any]] | None = None
        self._channel: _Channel | None = None
        self._closed = False

    def _begin(self) -> tuple[asyncio.Task[RunResult[Any]], _Channel]:
        if self._task is None or self._channel is None:
            channel = _Channel()
            task = asyncio.get_running_loop().create_task(self._start(self._signal, channel.push))
            task.add_done_callback(channel.finished)
            self._channel = channel
            self._task = task
            if self._on_task is not None:
                self._on_task(task)
        return self._task, self._channel

    def __aiter__(self) -> RunStream[OutputT]:
        return self

    async def __anext__(self) -> RunEvent:
        task, channel = self._begin()
        while not channel.buffer:
            if task.done():
                if not self._closed:
                    task.result()  # raises the run's failure, if any
                raise StopAsyncIteration
            channel.wakeup.clear()
            await channel.wakeup.wait()
        return channel.buffer.popleft()

    async def result(self) -> RunResult[OutputT]:
        """The run's result, once it has finished (starting it if nothing iterated yet).

        Raises the run's failure. Events not iterated are discarded.
        """
        task, _ = self._begin()
        return await asyncio.shield(task)

    async def aclose(self) -> None:
        """Stop consuming: abort the run (if it is still going) and wait until it has settled.

        The run commits what it received as interrupted (S23). Idempotent.
        """
        self._closed = True
        task = self._task
        if task is None or task.done():
            return
        self._controller.abort(AbortError(_CONSUMER_LEFT))
        await asyncio.wait((task,))

    async def __aenter__(self) -> RunStream[OutputT]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __del__(self) -> None:
        # Dropped mid-run (e.g. `break` out of `async for`): abort the turn (S23). Aborting is
        # synchronous and thread-safe; the run itself settles on its loop.
        task = self._task
        if task is not None and not task.done():
            self._controller.abort(AbortError(_CONSUMER_LEFT))

    def __repr__(self) -> str:
        state = (
            "not started" if self._task is None else ("done" if self._task.done() else "running")
        )
        return f"<RunStream {state}>"
