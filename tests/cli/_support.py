"""Helpers for driving the real `robota` command against the replay server."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pathlib
import pty
import re
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator, Sequence
from typing import IO, Any

from childproc import default_signals

COMMAND = [sys.executable, "-m", "robota"]


def robota(
    args: Sequence[str],
    *,
    env: dict[str, str],
    cwd: pathlib.Path,
    input: str = "",
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run `robota ARGS` to completion with `input` on stdin."""
    return subprocess.run(
        [*COMMAND, *args],
        input=input,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
        start_new_session=True,  # no controlling terminal: nothing can read /dev/tty
    )


@contextlib.contextmanager
def announced_server(
    argv: Sequence[str], *, cwd: pathlib.Path, env: dict[str, str], announces: str
) -> Iterator[str]:
    """Run a serving ``robota`` command; yield the URL its first stderr line announces.

    The line must contain ``announces`` (e.g. ``"console is at "``); the URL is the word after
    it. The process is terminated (and waited for) when the block ends.
    """
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert announces in line, line
        yield line.split(announces, 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(30)
        if process.stderr is not None:
            process.stderr.close()


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def chat_sse(*parts: str, usage: tuple[int, int] = (10, 5), model: str = "gpt-4o-mini") -> str:
    """A Chat Completions stream of `parts` as content deltas, then usage and `[DONE]`."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": part}) for part in parts]
    events.append(chunk({}, "stop"))
    prompt, completion = usage
    tail = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }
    events.append(f"data: {json.dumps(tail)}\n\n")
    events.append("data: [DONE]\n\n")
    return "".join(events)


class Child:
    """`robota ARGS` running with pipes; its output collected as it arrives."""

    def __init__(self, args: Sequence[str], *, env: dict[str, str], cwd: pathlib.Path) -> None:
        self.process = subprocess.Popen(
            default_signals([*COMMAND, *args]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**env, "PYTHONUNBUFFERED": "1"},
            cwd=cwd,
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self._threads = [
            threading.Thread(target=self._pump, args=(self.process.stdout, self._out), daemon=True),
            threading.Thread(target=self._pump, args=(self.process.stderr, self._err), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _pump(self, stream: IO[bytes] | None, sink: list[bytes]) -> None:
        assert stream is not None
        while chunk := os.read(stream.fileno(), 4096):
            with self._lock:
                sink.append(chunk)

    @property
    def stdout(self) -> str:
        with self._lock:
            return b"".join(self._out).decode()

    @property
    def stderr(self) -> str:
        with self._lock:
            return b"".join(self._err).decode()

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def wait_for(
        self, text: str, *, stream: str = "stdout", count: int = 1, timeout: float = 30
    ) -> None:
        """Wait until `text` appeared `count` times on `stream`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = self.stdout if stream == "stdout" else self.stderr
            if seen.count(text) >= count:
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(
            f"{text!r} did not appear {count}x on {stream} (exit code {self.process.poll()}); "
            f"stdout={self.stdout!r} stderr={self.stderr!r}"
        )

    def finish(self, timeout: float = 30) -> int:
        """Close stdin, wait for the exit, and return the exit code."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        code = self.process.wait(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.finish()


def tool_call_sse(
    name: str, arguments: str = "{}", *, model: str = "gpt-4o-mini", call_id: str = "call_1"
) -> str:
    """A Chat Completions stream in which the model calls tool `name` with `arguments`."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": "chatcmpl-tool",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    events = [
        chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
        chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
    ]
    return "".join(events)


class Terminal:
    """`robota ARGS` in a real pseudo-terminal, as a person runs it.

    The child leads its own session with the pty as its controlling terminal and the signals a
    person's shell leaves at their default action (whatever this suite inherited), so a Ctrl-C
    typed with :meth:`ctrl_c` is turned into SIGINT by the terminal driver and delivered to the
    foreground process group. stdout and stderr both go to the terminal; :attr:`text` is what it
    showed, escape sequences removed.
    """

    def __init__(self, args: Sequence[str], *, env: dict[str, str], cwd: pathlib.Path) -> None:
        environment = {**env, "PYTHONUNBUFFERED": "1", "TERM": "xterm", "COLUMNS": "200"}
        self.master, child_side = pty.openpty()
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        try:
            self.process = subprocess.Popen(
                default_signals([*COMMAND, *args], controlling_tty=True),
                stdin=child_side,
                stdout=child_side,
                stderr=child_side,
                env=environment,
                cwd=cwd,
                start_new_session=True,  # a session of its own, whose terminal is the pty
            )
        finally:
            os.close(child_side)
        self._lock = threading.Lock()
        self._raw: list[bytes] = []
        self.returncode: int | None = None
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: the child side closed
                return
            if not chunk:
                return
            with self._lock:
                self._raw.append(chunk)

    @property
    def text(self) -> str:
        with self._lock:
            raw = b"".join(self._raw).decode(errors="replace")
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", raw).replace("\r", "")

    def type(self, text: str) -> None:
        """Type `text` (a line ends with "\\n")."""
        os.write(self.master, text.encode())

    def ctrl_c(self) -> None:
        """Press Ctrl-C: the terminal driver sends SIGINT to the foreground process group."""
        os.write(self.master, b"\x03")

    def wait_for(self, text: str, *, count: int = 1, timeout: float = 30) -> None:
        """Wait until the terminal showed `text` `count` times."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.text.count(text) >= count:
                return
            if self.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(
            f"{text!r} did not appear {count}x (exit {self.returncode}); terminal: {self.text!r}"
        )

    def poll(self) -> int | None:
        """The exit status once the child exited (128 + N when a signal N killed it)."""
        if self.returncode is None:
            code = self.process.poll()
            if code is not None:
                self.returncode = 128 - code if code < 0 else code
        return self.returncode

    def wait(self, timeout: float) -> int:
        """Wait for the exit; its status."""
        deadline = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"still running after {timeout} s; terminal: {self.text!r}")
            time.sleep(0.02)
        self._reader.join(timeout=5)
        return code

    def close(self) -> None:
        """Kill the child if it still runs, reap it and close the terminal."""
        if self.poll() is None:
            self.process.kill()
            self.wait(timeout=30)
        os.close(self.master)


TMUX = "/usr/bin/tmux"
_KEEP_STATUS = 'trap : INT; status_file=$1; shift; "$@"; echo "$?" >"$status_file"'


class Tmux:
    """`robota ARGS` in a pane of a tmux server of its own, typed at as a person would.

    The server listens on a socket under `directory` and reads no configuration; it is started
    with `env` (so the pane's command gets it) and the command is given as separate arguments,
    which tmux runs without a shell. :meth:`screen` is what the pane shows, history included.
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        env: dict[str, str],
        cwd: pathlib.Path,
        directory: pathlib.Path,
        status_file: pathlib.Path | None = None,
    ) -> None:
        self.socket = str(directory / "tmux.sock")
        self.status_file = status_file
        command = [*COMMAND, *args]
        if status_file is not None:
            # A shell writes the exit status to status_file (tmux keeps no reliable record of
            # it); its trap only lets it outlive a Ctrl-C, the command gets SIGINT as usual.
            command = ["/bin/sh", "-c", _KEEP_STATUS, "sh", str(status_file), *command]
        self.env = {**env, "PYTHONUNBUFFERED": "1"}
        self._tmux(
            "new-session",
            "-d",
            "-s",
            "robota",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            str(cwd),
            *command,
        )
        self._tmux("set-option", "-t", "robota", "history-limit", "5000")

    def _tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [TMUX, "-S", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
            check=False,
        )

    def alive(self) -> bool:
        """Whether the pane's command is still running (its session ends with it)."""
        return self._tmux("has-session", "-t", "robota").returncode == 0

    def screen(self, *, escapes: bool = False) -> str:
        """The pane's text, its scroll-back included (with ``escapes``, its colours too)."""
        colours = ("-e",) if escapes else ()
        return self._tmux(
            "capture-pane", "-p", "-J", *colours, "-t", "robota", "-S", "-5000"
        ).stdout

    def type_line(self, text: str) -> None:
        """Type `text` literally, then Enter."""
        self._tmux("send-keys", "-t", "robota", "-l", text)
        self._tmux("send-keys", "-t", "robota", "Enter")

    def keys(self, *keys: str) -> None:
        """Press keys by tmux's names (``C-c`` is Ctrl-C: the pane's terminal sends SIGINT)."""
        self._tmux("send-keys", "-t", "robota", *keys)

    def wait_for(self, text: str, *, count: int = 1, timeout: float = 30) -> str:
        """Wait until the pane showed `text` `count` times; the screen then."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if screen.count(text) >= count:
                return screen
            if not self.alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"{text!r} did not appear {count}x in the pane: {screen!r}")

    def wait_exit(self, timeout: float = 30) -> None:
        """Wait until the pane's command has exited."""
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                raise AssertionError(f"still running after {timeout} s: {self.screen()!r}")
            time.sleep(0.05)

    def exit_status(self, timeout: float = 30) -> int:
        """Wait until the pane's command has exited; its exit status (needs ``status_file``)."""
        assert self.status_file is not None, "started without a status_file"
        self.wait_exit(timeout)
        return int(self.status_file.read_text())

    def close(self) -> None:
        """Stop this test's tmux server (and the pane's command with it)."""
        self._tmux("kill-server")
