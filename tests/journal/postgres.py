"""Run a throwaway PostgreSQL cluster for the journal tests.

Why: :class:`robota.host.PostgresJournal`'s guarantees — one writer per execution through a
session advisory lock, a crashed holder's lock freed by the server, commits durable on return —
are the server's behaviour, so they are tested against a real server, not a fake.

``PostgresServer`` finds ``initdb``/``pg_ctl`` (on ``PATH``, else ``/usr/lib/postgresql/*/bin``),
makes a cluster in a temporary directory, and starts it on 127.0.0.1 on a free port (and a unix
socket in the same directory) with ``fsync=on`` and trust authentication for local connections.
PostgreSQL refuses to run as root, so as root the directory is given to the ``postgres`` user and
every server command runs through ``runuser -u postgres --``. On exit the cluster is stopped with
``pg_ctl stop -m immediate`` and the directory deleted. ``.ci/postgres`` does the same for CI.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Final, Self

import psycopg

SERVER_USER: Final = "postgres"
DATABASE: Final = "robota_test"
_START_ATTEMPTS: Final = 3
_LOG_TAIL_LINES: Final = 40


class PostgresServerError(RuntimeError):
    """The cluster could not be made, started, or stopped."""


def postgres_bin_dir() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``: from ``PATH``, else the newest Debian one."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if not candidates:
        raise PostgresServerError(
            "no initdb on PATH or in /usr/lib/postgresql/*/bin: install PostgreSQL, or point "
            "ROBOTA_TEST_POSTGRES_DSN at a server"
        )
    return Path(candidates[-1]).parent


def _free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    """A running throwaway PostgreSQL cluster, as a context manager.

    Usage::

        with PostgresServer() as server:
            journal = PostgresJournal(server.dsn)

    ``dsn`` reaches the database ``robota_test`` over TCP as the superuser ``postgres``;
    ``admin_dsn`` reaches the ``postgres`` maintenance database. ``log_tail()`` returns the
    server's recent log lines.
    """

    def __init__(self, *, startup_timeout_s: float = 30.0) -> None:
        """Configure the cluster; nothing starts before ``__enter__``."""
        self._startup_timeout_s = startup_timeout_s
        self._bin: Path | None = None
        self._root: Path | None = None
        self._running = False
        self.port = 0

    @property
    def data_dir(self) -> Path:
        """The cluster's data directory."""
        assert self._root is not None, "the server is not started"
        return self._root / "data"

    @property
    def socket_dir(self) -> Path:
        """The directory of the server's unix socket."""
        assert self._root is not None, "the server is not started"
        return self._root

    @property
    def log_file(self) -> Path:
        """The server's log."""
        assert self._root is not None, "the server is not started"
        return self._root / "server.log"

    def dsn_for(self, dbname: str) -> str:
        """A libpq DSN for database ``dbname`` on this server, over TCP."""
        return f"host=127.0.0.1 port={self.port} dbname={dbname} user={SERVER_USER}"

    @property
    def dsn(self) -> str:
        """The test database's DSN."""
        return self.dsn_for(DATABASE)

    @property
    def admin_dsn(self) -> str:
        """The maintenance database's DSN."""
        return self.dsn_for("postgres")

    def log_tail(self) -> str:
        """The last lines of the server's log."""
        try:
            lines = self.log_file.read_text(errors="replace").splitlines()
        except (AssertionError, OSError):
            return ""
        return "\n".join(lines[-_LOG_TAIL_LINES:])

    def __enter__(self) -> Self:
        """Make the cluster, start it, wait until it accepts connections, create the database."""
        self._bin = postgres_bin_dir()
        self._root = Path(tempfile.mkdtemp(prefix="robota-postgres-"))
        try:
            if os.geteuid() == 0:
                entry = pwd.getpwnam(SERVER_USER)  # KeyError: no such user, said below
                os.chown(self._root, entry.pw_uid, entry.pw_gid)
            self._run(
                "initdb",
                *("-D", str(self.data_dir)),
                *("-U", SERVER_USER),
                "--auth=trust",  # only 127.0.0.1 and the private socket listen
                *("-E", "UTF8"),
                "--no-sync",  # the cluster is thrown away; the server itself runs fsync=on
            )
            self._start()
            self._create_database()
        except KeyError as error:
            self._stop()
            raise PostgresServerError(
                f"running as root needs a {SERVER_USER!r} system user to own the cluster"
            ) from error
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the cluster at once (``-m immediate``) and delete its directory."""
        self._stop()

    def _command(self, program: str, *args: str) -> list[str]:
        assert self._bin is not None
        command = [str(self._bin / program), *args]
        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root.
            command = ["runuser", "-u", SERVER_USER, "--", *command]
        return command

    def _run(self, program: str, *args: str, timeout: float = 60.0) -> None:
        done = subprocess.run(
            self._command(program, *args),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=self._root,
        )
        if done.returncode != 0:
            raise PostgresServerError(
                f"{program} exited {done.returncode}: {done.stderr.strip() or done.stdout.strip()}"
                f"\nserver log:\n{self.log_tail()}"
            )

    def _start(self) -> None:
        """``pg_ctl start -w`` on a free port; a port taken meanwhile is retried on another."""
        for attempt in range(1, _START_ATTEMPTS + 1):
            self.port = _free_port()
            options = " ".join(
                (
                    "-c listen_addresses=127.0.0.1",
                    f"-c port={self.port}",
                    f"-c unix_socket_directories='{self.socket_dir}'",
                    "-c fsync=on",
                    "-c synchronous_commit=on",
                    "-c max_connections=100",
                )
            )
            try:
                self._run(
                    "pg_ctl",
                    "start",
                    *("-D", str(self.data_dir)),
                    *("-l", str(self.log_file)),  # the server's output: never our pipes
                    *("-o", options),
                    "-w",
                    *("-t", str(int(self._startup_timeout_s))),
                    timeout=self._startup_timeout_s + 10,
                )
            except PostgresServerError:
                if attempt == _START_ATTEMPTS or "already in use" not in self.log_tail():
                    raise
                continue
            self._running = True
            self._wait_ready()
            return

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self._startup_timeout_s
        while True:
            try:
                with psycopg.connect(self.admin_dsn, connect_timeout=2):
                    return
            except psycopg.OperationalError as error:
                if time.monotonic() > deadline:
                    raise PostgresServerError(
                        f"the server does not accept connections: {error}\n{self.log_tail()}"
                    ) from error
                time.sleep(0.05)

    def _create_database(self) -> None:
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")

    def _stop(self) -> None:
        root, self._root = self._root, None
        try:
            if self._running and root is not None:
                self._running = False
                self._root = root  # data_dir needs it for the command
                try:
                    self._run("pg_ctl", "stop", "-D", str(self.data_dir), "-m", "immediate", "-w")
                finally:
                    self._root = None
        finally:
            if root is not None:
                with contextlib.suppress(FileNotFoundError):
                    shutil.rmtree(root)
