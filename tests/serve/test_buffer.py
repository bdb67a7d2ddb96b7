"""The bounded, numbered event buffer behind resumable streams."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from robota.serve._buffer import RunBuffer


async def _all(buffer: RunBuffer, after: int = -1) -> list[tuple[int, str]]:
    return [item async for item in buffer.read(after)]


async def test_a_reader_gets_every_event_after_its_last_one_then_ends_at_close() -> None:
    buffer = RunBuffer(limit=100)
    reader = asyncio.create_task(_all(buffer, after=1))
    for n in range(5):
        buffer.push(f"e{n}")
        await asyncio.sleep(0)
    buffer.close()
    buffer.push("ignored after close")
    assert await reader == [(2, "e2"), (3, "e3"), (4, "e4")]
    assert await _all(buffer) == [(n, f"e{n}") for n in range(5)]


async def test_a_reader_further_behind_than_the_limit_continues_from_the_oldest_kept() -> None:
    buffer = RunBuffer(limit=3)
    for n in range(10):
        buffer.push(f"e{n}")
    buffer.close()
    assert await _all(buffer) == [(7, "e7"), (8, "e8"), (9, "e9")]
    assert await _all(buffer, after=8) == [(9, "e9")]
    assert buffer.next_number == 10


def _upper(text: str) -> str:
    return f"<{text}>"


def _lower(text: str) -> str:
    return f"[{text}]"


async def test_text_queued_while_no_reader_looks_becomes_one_event_numbered_once() -> None:
    # Issue 31: deltas a reader has not taken yet coalesce; a taken event never changes.
    buffer = RunBuffer(limit=100)
    buffer.push("start")
    for word in ("a", "b", "c"):
        buffer.pend(word, _upper)
    first = [item async for item in _until(buffer, 1)]
    buffer.pend("d", _upper)
    buffer.pend("e", _upper)
    buffer.push("end")
    buffer.close()
    assert first == [(0, "start"), (1, "<abc>")]
    assert await _all(buffer) == [(0, "start"), (1, "<abc>"), (2, "<de>"), (3, "end")]
    assert await _all(buffer, after=1) == [(2, "<de>"), (3, "end")]


async def test_text_of_another_message_starts_a_new_event_in_order() -> None:
    buffer = RunBuffer(limit=100)
    buffer.pend("a", _upper)
    buffer.pend("b", _upper)
    buffer.pend("c", _lower)
    buffer.pend("d", _lower)
    buffer.close()
    buffer.pend("ignored after close", _lower)
    assert await _all(buffer) == [(0, "<ab>"), (1, "[cd]")]


async def test_a_waiting_reader_is_woken_by_queued_text() -> None:
    buffer = RunBuffer(limit=100)
    reader = asyncio.create_task(_all(buffer))
    await asyncio.sleep(0)  # the reader waits
    buffer.pend("x", _upper)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    buffer.pend("y", _upper)
    buffer.close()
    got = await reader
    assert "".join(data for _, data in got).replace("><", "") == "<xy>"
    assert [number for number, _ in got] == list(range(len(got)))


async def _until(buffer: RunBuffer, last: int) -> AsyncIterator[tuple[int, str]]:
    async for number, data in buffer.read():
        yield number, data
        if number >= last:
            return


async def test_the_buffer_is_bounded_by_bytes_as_by_count() -> None:
    # Huge tool results must not grow a run's memory without bound: past max_bytes the oldest
    # events go, and a reader further behind continues from the oldest kept (as for count).
    buffer = RunBuffer(limit=1000, max_bytes=100)
    for n in range(10):
        buffer.push(f"{n}" * 30)  # 30 bytes each
    assert buffer.held_bytes <= 100
    buffer.close()
    assert await _all(buffer) == [(n, f"{n}" * 30) for n in (7, 8, 9)]
    assert await _all(buffer, after=8) == [(9, "9" * 30)]
    assert buffer.next_number == 10


async def test_the_byte_bound_counts_utf8_bytes_and_keeps_the_newest_event() -> None:
    buffer = RunBuffer(limit=1000, max_bytes=100)
    buffer.push("é" * 30)  # 60 bytes in UTF-8
    buffer.push("é" * 30)
    assert [n for n, _ in await _first(buffer)] == [1]
    buffer.push("x" * 500)  # one event over the bound alone is still delivered
    buffer.close()
    assert await _all(buffer) == [(2, "x" * 500)]
    assert buffer.held_bytes == 500


async def test_queued_text_counts_towards_the_byte_bound_once_it_is_an_event() -> None:
    buffer = RunBuffer(limit=1000, max_bytes=64)
    for n in range(50):
        buffer.pend("abcdefgh", _upper)
        buffer.push(f"tool-{n:02d}")
    buffer.close()
    events = await _all(buffer)
    assert sum(len(data) for _, data in events) <= 64
    assert events[-1] == (99, "tool-49")
    assert buffer.held_bytes <= 64


async def test_count_and_byte_bounds_together_keep_numbers_consistent() -> None:
    buffer = RunBuffer(limit=3, max_bytes=1000)
    for n in range(20):
        buffer.push("y" * (400 if n % 5 == 0 else 10))
    buffer.close()
    assert [n for n, _ in await _all(buffer)] == [17, 18, 19]
    assert buffer.held_bytes <= 1000


async def _first(buffer: RunBuffer) -> list[tuple[int, str]]:
    async for batch in buffer.read_batches():
        return batch
    return []


async def test_queued_text_is_bounded_by_its_utf8_bytes_not_its_characters() -> None:
    # "é" is 2 bytes in UTF-8: counting characters let the queue (then the one event it became,
    # kept as the newest) grow to twice the bound (4x for emoji, 6x for escaped controls).
    buffer = RunBuffer(limit=1000, max_bytes=100)
    for _ in range(20):
        buffer.pend("é" * 10, _upper)  # 20 bytes each, no reader taking them
        assert buffer.held_bytes <= 100
    buffer.close()
    events = await _all(buffer)
    assert buffer.held_bytes <= 100
    text = "".join(data[1:-1] for _, data in events)
    assert text == "é" * len(text)
    assert len(text) % 10 == 0  # whole deltas, the newest kept


async def test_queued_deltas_count_their_objects_too() -> None:
    # Each queued delta is a Python object (~50 bytes beyond its text): a long message with no
    # reader must not queue millions of them before the byte bound is reached.
    buffer = RunBuffer(limit=100_000, max_bytes=64 * 1024)  # 5000 characters: far below
    deltas = [f"{n % 10}" for n in range(5000)]
    for delta in deltas:
        buffer.pend(delta, _upper)
    assert buffer.next_number >= 4  # the queue became events along the way
    buffer.close()
    events = await _all(buffer)
    assert "".join(data[1:-1] for _, data in events) == "".join(deltas)
