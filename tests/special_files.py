"""Special files planted where an owner-only file belongs, and a guard against a read that hangs.

A FIFO at a store, key or record path made ``open(2)`` wait for a writer that never comes (S07,
S11). The tests plant each kind of non-regular file there and run the read in a thread: the
guard fails the test when the read has not finished after a generous bound, and then opens the
FIFO's other end so the stuck thread ends instead of outliving the test. The bound is a hang
guard, not a speed assertion.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from typing import Final, TypeVar

import pytest

T = TypeVar("T")

#: Non-regular files an account can plant without privileges.
PLANTABLE_KINDS: Final = ("fifo", "socket", "directory")

#: Seconds a read may take before it counts as hung; generous, since CI machines are slow.
HANG_BOUND: Final = 10.0


def plant(path: str | os.PathLike[str], kind: str) -> None:
    """Put a non-regular file of ``kind`` (see :data:`PLANTABLE_KINDS`) at ``path``, owner-only."""
    path = os.fspath(path)
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "socket":
        # A socket's path is limited to about 100 bytes, so it is bound in a short directory and
        # moved into place; the socket file stays after the socket closes.
        short = tempfile.mkdtemp()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
                listener.bind(os.path.join(short, "s"))
            os.chmod(os.path.join(short, "s"), 0o600)
            os.rename(os.path.join(short, "s"), path)
        finally:
            shutil.rmtree(short, ignore_errors=True)
    elif kind == "directory":
        os.mkdir(path, 0o700)
    else:
        raise AssertionError(f"unknown kind {kind!r}")


def finishes(call: Callable[[], T], *, fifos: tuple[str | os.PathLike[str], ...] = ()) -> T:
    """Run ``call`` in a thread; its result or exception, or a test failure if it hangs.

    ``fifos`` are opened for writing and closed after a hang, so a reader stuck in ``open`` or
    ``read`` on one of them sees end of file and its thread ends.
    """
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the test's thread, which re-raises it
            failure.append(exc)

    thread = threading.Thread(target=run, name="hang-guard", daemon=True)
    thread.start()
    thread.join(HANG_BOUND)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(os.fspath(fifo), os.O_WRONLY | os.O_NONBLOCK))
        thread.join(HANG_BOUND)
        pytest.fail(f"the read was still blocked after {HANG_BOUND} s (a FIFO waits for a writer)")
    if failure:
        raise failure[0]
    return outcome[0]


def planted_fifos(path: str | os.PathLike[str], kind: str) -> tuple[pathlib.Path, ...]:
    """The FIFO to release after a hang: ``path`` itself when ``kind`` is a FIFO."""
    return (pathlib.Path(path),) if kind == "fifo" else ()
