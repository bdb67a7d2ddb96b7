"""The numbered, bounded event buffer of one served run (resumable streams).

A run's events are encoded once, for the protocol the run was started with, and kept here in
order, each with its number (the SSE ``id:``). Every reader — the response that started the
run, or a client reconnecting with ``Last-Event-ID`` — reads from the buffer, so a dropped
connection never loses an event still held. The buffer keeps at most ``limit`` events and at
most ``max_bytes`` bytes of them (UTF-8; the newest event is kept even when it alone is larger,
so a reader that keeps up never misses one): the oldest go first. A reader that fell further
behind — a client reconnecting with a ``Last-Event-ID`` older than the oldest event kept —
continues from the oldest one kept, without an error or a marker: the events between are
skipped (the final text of a run is in its last events either way).

Text deltas are coalesced (issue 31: the cost per streamed token): :meth:`RunBuffer.pend`
queues a delta's text unnumbered, and the queued text becomes one event — numbered then, and
never changed after — when a reader next looks, or before the next pushed event. A reader that
keeps up gets the deltas as they came; one that is behind gets what queued meanwhile as one
event (or a few: the queue becomes an event before it may hold half of ``max_bytes``, counting
each delta's UTF-8 bytes, at most 4 a character, and its object). Both protocols allow any
chunking of a text, so a client shows the same text; event numbers (``Last-Event-ID``) name
events as they were sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Final, final

__all__ = ["DEFAULT_BUFFER_BYTES", "RunBuffer", "text_encoder", "wire_bytes"]

DEFAULT_BUFFER_BYTES: Final = 8 * 1024 * 1024
"""The default byte bound of one run's buffered events (8 MiB)."""

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
    """The encoded events of one run, numbered from 0, at most ``limit`` and ``max_bytes`` kept.

    Writers call :meth:`push` and :meth:`pend` (from the event loop's thread) and
    :meth:`close` once; readers iterate :meth:`read`, which ends after the last event of a
    closed buffer.
    """

    __slots__ = (
        "_bytes",
        "_closed",
        "_dropped",
        "_encode",
        "_events",
        "_first",
        "_limit",
        "_max_bytes",
        "_pending",
        "_pending_size",
        "_queue_bytes",
        "_sizes",
        "_waiters",
    )

    def __init__(self, limit: int, max_bytes: int = DEFAULT_BUFFER_BYTES) -> None:
        self._limit = limit
        self._max_bytes = max_bytes
        self._events: list[str] = []
        self._sizes: list[int] = []  # each event's UTF-8 size (0 once shed)
        self._bytes = 0  # the UTF-8 size of the events still readable
        self._dropped = 0  # the number of the first event in ``_events``
        self._first = 0  # the number of the first event still readable (shed ones are "")
        self._pending_size = 0  # a quarter of the queue's size at most (see pend)
        self._queue_bytes = max_bytes // 8
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
    def held_bytes(self) -> int:
        """The UTF-8 size of the events held (at most ``max_bytes``, or the newest event's)."""
        return self._bytes

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
        # The queue is bounded too (no reader is taking it), to half the buffer's bound so the
        # event it becomes fits beside others. A delta is counted as a quarter of what it can
        # hold at most, against a quarter of that bound: its UTF-8 bytes (4 a character at
        # most) and its Python object (about 64) — no encoding per streamed token.
        size = len(text) + 16
        if self._pending and (
            encode is not self._encode or self._pending_size + size > self._queue_bytes
        ):
            self._settle()
        self._encode = encode
        self._pending.append(text)
        self._pending_size += size
        if self._waiters:
            self._wake()

    def _settle(self) -> None:
        # The queued text becomes one numbered event.
        encode = self._encode
        assert encode is not None  # set with the first pending text
        text = self._pending[0] if len(self._pending) == 1 else "".join(self._pending)
        self._pending.clear()
        self._pending_size = 0
        self._append(encode(text))

    def _append(self, data: str) -> None:
        size = len(data) if data.isascii() else len(data.encode("utf-8", "surrogatepass"))
        self._events.append(data)
        self._sizes.append(size)
        self._bytes += size
        if self._bytes > self._max_bytes:
            self._shed()
        if len(self._events) >= 2 * self._limit:
            # Trim in batches, so a push costs O(1) amortised.
            excess = len(self._events) - self._limit
            self._bytes -= sum(self._sizes[:excess])  # shed events count 0 already
            del self._events[:excess]
            del self._sizes[:excess]
            self._dropped += excess
            self._first = max(self._first, self._dropped)

    def _shed(self) -> None:
        # Over max_bytes: release the oldest readable events (all but the newest) at once, and
        # compact the lists in batches so a push stays O(1) amortised.
        index = self._first - self._dropped
        last = len(self._events) - 1
        while self._bytes > self._max_bytes and index < last:
            self._bytes -= self._sizes[index]
            self._sizes[index] = 0
            self._events[index] = ""
            index += 1
        self._first = self._dropped + index
        if index > len(self._events) // 2:
            del self._events[:index]
            del self._sizes[:index]
            self._dropped += index

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
            oldest = max(self._first, self.next_number - self._limit)
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
