"""Helpers for driving the real `robota` command against the replay server."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

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
            [*COMMAND, *args],
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
