"""The numbered, bounded event buffer of one served run (resumable streams).

A run's events are encoded once, for the protocol the run was started with, and kept here in
order, each with its number (the SSE ``id:``). Every reader — the response that started the
run, or a client reconnecting with ``Last-Event-ID`` — reads from the buffer, so a dropped
connection never loses an event still held. The buffer keeps at most ``limit`` events: a reader
that fell further behind continues from the oldest one kept.

Text deltas are coalesced (issue 31: the cost per streamed token): :meth:`RunBuffer.pend`
queues a delta's text unnumbered, and the queued text becomes one event — numbered then, and
never changed after — when a reader next looks, or before the next pushed event. A reader that
keeps up gets the deltas as they came; one that is behind gets what queued meanwhile as one
event. Both protocols allow any chunking of a text, so a client shows the same text; event
numbers (``Last-Event-ID``) name events as they were sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import final

__all__ = ["RunBuffer", "text_encoder", "wire_bytes"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def wire_bytes(frames: str) -> bytes:
    """``frames`` (SSE text) as UTF-8, each lone surrogate replaced by U+FFFD.

    A model's text may hold a lone surrogate (a provider decoding a JSON escape of one), which
    UTF-8 cannot encode and the encoders (``ensure_ascii=False``) copy as is. Its JSON escape
    would be lossless but strict readers (pydantic's, so the ag-ui client) refuse it; the
    replacement character is what a UTF-8 decoder shows for a broken sequence anyway.
    """
    try:
        return frames.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", frames).encode()


@final
class RunBuffer:
    """The encoded events of one run, numbered from 0, at most ``limit`` kept.

    Writers call :meth:`push` and :meth:`pend` (from the event loop's thread) and
    :meth:`close` once; readers iterate :meth:`read`, which ends after the last event of a
    closed buffer.
    """

    __slots__ = (
        "_closed",
        "_dropped",
        "_encode",
        "_events",
        "_limit",
        "_pending",
        "_waiters",
    )

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._events: list[str] = []
        self._dropped = 0  # the number of the first event still held
        self._closed = False
        self._pending: list[str] = []  # text queued, not yet an event
        self._encode: Callable[[str], str] | None = None  # how the queued text becomes one
        # Readers waiting for an event: a future each, made only when one waits (no
        # per-event asyncio.Event).
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def closed(self) -> bool:
        """Whether the run has written its last event."""
        return self._closed

    @property
    def next_number(self) -> int:
        """The number the next event will get (the count of events numbered so far)."""
        return self._dropped + len(self._events)

    def push(self, data: str) -> None:
        """Append one encoded event (ignored once closed); the oldest go past ``limit``."""
        if self._closed:
            return
        if self._pending:
            self._settle()
        self._append(data)
        if self._waiters:
            self._wake()

    def pend(self, text: str, encode: Callable[[str], str]) -> None:
        """Queue ``text`` to become part of the event ``encode(all queued text)``.

        Consecutive calls with the same ``encode`` join their texts into one event when no
        reader took the first yet; a different ``encode`` (another message) starts a new one.
        """
        if self._closed:
            return
        if self._pending and encode is not self._encode:
            self._settle()
        self._encode = encode
        self._pending.append(text)
        if self._waiters:
            self._wake()

    def _settle(self) -> None:
        # The queued text becomes one numbered event.
        encode = self._encode
        assert encode is not None  # set with the first pending text
        text = self._pending[0] if len(self._pending) == 1 else "".join(self._pending)
        self._pending.clear()
        self._append(encode(text))

    def _append(self, data: str) -> None:
        self._events.append(data)
        if len(self._events) >= 2 * self._limit:
            # Trim in batches, so a push costs O(1) amortised.
            excess = len(self._events) - self._limit
            del self._events[:excess]
            self._dropped += excess

    def close(self) -> None:
        """Mark the end of the run's events; readers finish after the last one. Idempotent."""
        if self._pending:
            self._settle()
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def read(self, after: int = -1) -> AsyncIterator[tuple[int, str]]:
        """Yield ``(number, data)`` for every event numbered above ``after``, as they come.

        A reader further behind than the buffer holds continues from the oldest event kept.
        """
        async for batch in self.read_batches(after):
            for item in batch:
                yield item

    async def read_batches(
        self, after: int = -1, *, idle: float | None = None
    ) -> AsyncIterator[list[tuple[int, str]]]:
        """As :meth:`read`, every event already there at once (one write per batch).

        With ``idle``, an empty batch comes after each ``idle`` seconds without an event (the
        caller writes a keep-alive then).
        """
        position = after + 1
        while True:
            if self._pending:
                self._settle()
            oldest = max(self._dropped, self.next_number - self._limit)
            position = max(position, oldest)
            end = self.next_number
            if position < end:
                start = position - self._dropped
                batch = self._events[start : end - self._dropped]
                yield list(enumerate(batch, position))
                position = end
                continue
            if self._closed:
                return
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout(idle):  # a timer, not a task per wait
                    await waiter
            except TimeoutError:
                yield []
            finally:
                if not waiter.done():
                    waiter.cancel()
                # A timed-out (or cancelled) wait leaves the list; a woken one was taken from it.
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)


_TEXT_DUMPS = json.JSONEncoder(ensure_ascii=False).encode


def text_encoder(fields: dict[str, str]) -> Callable[[str], str]:
    """The encoder of one message's text-delta events: ``fields`` then ``"delta"``.

    The hot path of a stream (one call per coalesced delta): the fixed fields are encoded once,
    each delta with one ``json`` call — never a model object per token.
    """
    prefix = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))[:-1] + ',"delta":'
    dumps = _TEXT_DUMPS

    def encode(text: str) -> str:
        return prefix + dumps(text) + "}"

    return encode
