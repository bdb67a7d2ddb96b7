"""A crash in the middle of a side effect, and the resume that does not repeat it (S40).

Run it: ``python examples/durable_booking.py``. A worker process runs an agent whose tool books a
flight by appending a line to a file. The worker dies (SIGKILL) right after the booking was
written and before its result could be recorded — the worst moment. This process then resumes
the execution from the SQLite journal: the journal cannot prove whether the booking happened, so
``resume`` raises ``ReconciliationRequired`` naming the call instead of booking again. The host
looks at the file, sees the booking, settles the call with ``reconcile(happened=True)``, and the
resumed run finishes. The file holds one booking.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import robota
from robota.host import SQLiteJournal
from robota.testing import ScriptedProvider

EXECUTION_ID = "booking-42"  # chosen by the host up front: a crashed worker returns nothing


def booking_tool(bookings: Path, *, crash_after_booking: bool) -> robota.Tool:
    @robota.tool
    async def book_flight(flight: str, ctx: robota.ToolContext) -> str:
        """Book a flight.

        Args:
            flight: The flight number.
        """
        with bookings.open("a", encoding="utf-8") as file:  # the real side effect
            file.write(f"{ctx.call_id} {flight}\n")  # ctx.call_id is stable across processes
        if crash_after_booking:
            os.kill(os.getpid(), signal.SIGKILL)  # the worker dies before the result is saved
        return f"booked {flight}"

    return book_flight


async def worker(folder: Path) -> None:
    model = ScriptedProvider([[("book_flight", {"flight": "LH400"})], "Booked LH400."])
    tool = booking_tool(folder / "bookings.txt", crash_after_booking=True)
    async with SQLiteJournal(folder / "journal.db") as journal:
        agent = robota.Agent(provider=model, model="any", tools=[tool], journal=journal)
        await agent.run("Book me LH400", execution_id=EXECUTION_ID)


async def host(folder: Path) -> None:
    bookings = folder / "bookings.txt"
    model = ScriptedProvider(["Your flight LH400 is booked."])  # the rest of the conversation
    tool = booking_tool(bookings, crash_after_booking=False)
    async with SQLiteJournal(folder / "journal.db") as journal:
        agent = robota.Agent(provider=model, model="any", tools=[tool], journal=journal)
        try:
            await agent.resume(EXECUTION_ID)
        except robota.ReconciliationRequired as required:
            for item in required.items:
                print(f"reconciliation needed for {item.tool_name} {dict(item.arguments or {})}")
                done = any(line.startswith(f"{item.call_id} ") for line in bookings.open())
                result = f"booked {(item.arguments or {}).get('flight')}" if done else None
                await agent.reconcile(EXECUTION_ID, item.id, happened=done, result=result)
        result = await agent.resume(EXECUTION_ID)
        print(f"status: {result.status}; reply: {result.output}")
    print(f"bookings in file: {len(bookings.read_text().splitlines())}")


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        asyncio.run(worker(Path(sys.argv[2])))
        return
    with tempfile.TemporaryDirectory() as folder:
        worker_command = [sys.executable, __file__, "--worker", folder]
        crashed = subprocess.run(worker_command, check=False)  # noqa: S603 - this very file
        print(f"worker exited with {crashed.returncode} (killed mid-booking)")
        asyncio.run(host(Path(folder)))


if __name__ == "__main__":
    main()
