"""The bounded, numbered event buffer behind resumable streams."""

from __future__ import annotations

import asyncio

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
