"""S22 host hook executors, on real subprocesses and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import pathlib
import signal
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from childproc import alive
from robota import AbortController, HookOutcome
from robota.core.hooks import HookSpec
from robota.host import CommandHookExecutor, HttpHookExecutor

PAYLOAD = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def command(text: str, timeout: float | None = None) -> HookSpec:
    return HookSpec("command", command=text, timeout=timeout)


async def run(text: str, timeout: float | None = None, **kwargs: Any) -> HookOutcome:
    return await CommandHookExecutor().execute(command(text, timeout), PAYLOAD, **kwargs)


async def test_s22_exit_0_allows_and_carries_stdout() -> None:
    outcome = await run("echo looks fine")
    assert outcome.kind == "allow"
    assert outcome.output.strip() == "looks fine"


async def test_s22_exit_2_denies_with_stderr_as_the_reason() -> None:
    outcome = await run("echo 'dangerous command' >&2; exit 2")
    assert outcome == HookOutcome.deny("dangerous command")


@pytest.mark.parametrize("code", [1, 3, 127])
async def test_s22_other_exit_codes_are_errors_naming_the_status(code: int) -> None:
    outcome = await run(f"exit {code}")
    assert outcome.kind == "error"
    assert f"status {code}" in outcome.reason


async def test_s22_a_signal_kill_is_an_error_naming_the_signal() -> None:
    outcome = await run("kill -9 $$")
    assert outcome.kind == "error"
    assert "SIGKILL" in outcome.reason


async def test_s22_a_missing_binary_is_an_error() -> None:
    outcome = await run("/no/such/binary --flag")
    assert outcome.kind == "error"
    assert "127" in outcome.reason


async def test_s22_a_process_that_never_started_is_an_error(tmp_path: pathlib.Path) -> None:
    executor = CommandHookExecutor(cwd=str(tmp_path / "missing-directory"))
    outcome = await executor.execute(command("true"), PAYLOAD)
    assert outcome.kind == "error"
    assert "never started" in outcome.reason


async def test_s22_a_timeout_is_an_error_and_kills_the_whole_process_group(
    tmp_path: pathlib.Path,
) -> None:
    marker = tmp_path / "grandchild.pid"
    started = time.monotonic()
    outcome = await run(f"sleep 60 & echo $! > {marker}; wait", timeout=0.5)
    assert outcome.kind == "error"
    assert "timed out after 0.5 seconds" in outcome.reason
    assert time.monotonic() - started < 10
    grandchild = int(marker.read_text())
    await asyncio.sleep(0.1)
    assert not alive(grandchild)


async def test_s22_an_abort_stops_the_hook() -> None:
    controller = AbortController()
    task = asyncio.create_task(run("sleep 30", signal=controller.signal))
    await asyncio.sleep(0.2)
    controller.abort()
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.kind == "error"
    assert "aborted" in outcome.reason


async def test_s22_garbage_stdout_that_looks_like_json_is_an_error() -> None:
    assert (await run("echo '{not json'")).kind == "error"
    assert (await run("echo 'plain words are carried'")).kind == "allow"


async def test_s22_decision_yes_is_an_error_not_an_allow() -> None:
    outcome = await run("""echo '{"decision": "yes"}'""")
    assert outcome.kind == "error"


async def test_s22_explicit_json_verdicts_and_steering() -> None:
    assert (await run("""echo '{"decision": false, "reason": "nope"}'""")) == HookOutcome.deny(
        "nope"
    )
    steered = await run(
        """echo '{"hookSpecificOutput": {"permissionDecision": "ask", "updatedInput": {"command": "ls -la"}}}'"""
    )
    assert (steered.kind, steered.permission_decision, steered.updated_input) == (
        "allow",
        "ask",
        {"command": "ls -la"},
    )


async def test_s22_the_payload_arrives_on_stdin() -> None:
    outcome = await run(
        f"{sys.executable} -c 'import json,sys; print(json.load(sys.stdin)[\"tool_name\"])'"
    )
    assert outcome.output.strip() == "Bash"


# --------------------------------------------------------------------------- HTTP


class _Server:
    def __init__(self) -> None:
        self.replies: list[tuple[int, bytes, float]] = []
        self.received: list[dict[str, Any]] = []
        self.server: asyncio.base_events.Server | None = None
        self.handlers: set[asyncio.Task[Any]] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        try:
            await self._respond(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _respond(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode().split("\r\n"):
            if line.lower().startswith("content-length:"):
                length = int(line.split(":", 1)[1])
        body = await reader.readexactly(length)
        self.received.append(json.loads(body))
        status, payload, delay = self.replies.pop(0)
        await asyncio.sleep(delay)
        writer.write(
            f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n"
            f"connection: close\r\n\r\n".encode()
            + payload
        )
        await writer.drain()

    @property
    def url(self) -> str:
        assert self.server is not None
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/hook"


@pytest.fixture
async def server() -> AsyncIterator[_Server]:
    instance = _Server()
    instance.server = await asyncio.start_server(instance.handle, "127.0.0.1", 0)
    yield instance
    for task in instance.handlers:
        task.cancel()
    await asyncio.gather(*instance.handlers, return_exceptions=True)
    instance.server.close()
    await instance.server.wait_closed()


async def _http(
    server: _Server, status: int, body: Any, delay: float = 0.0, **spec: Any
) -> HookOutcome:
    server.replies.append(
        (status, json.dumps(body).encode() if not isinstance(body, bytes) else body, delay)
    )
    executor = HttpHookExecutor(check_url=None)
    try:
        return await executor.execute(HookSpec("http", url=server.url, **spec), PAYLOAD)
    finally:
        await executor.aclose()


async def test_s22_http_hook_explicit_verdicts(server: _Server) -> None:
    assert (await _http(server, 200, {"decision": True})).kind == "allow"
    assert await _http(server, 200, {"decision": False, "reason": "policy"}) == HookOutcome.deny(
        "policy"
    )
    assert server.received[0]["tool_name"] == "Bash"


async def test_s22_http_hook_without_an_explicit_verdict_is_an_error(server: _Server) -> None:
    assert (await _http(server, 200, {})).kind == "error"
    assert (await _http(server, 200, {"decision": "yes"})).kind == "error"
    assert (await _http(server, 200, b"not json")).kind == "error"
    assert (await _http(server, 500, {"decision": True})).reason == "the hook answered HTTP 500"


async def test_s22_http_hook_cannot_steer(server: _Server) -> None:
    outcome = await _http(
        server, 200, {"decision": True, "permissionDecision": "ask", "updatedInput": {"x": 1}}
    )
    assert (outcome.permission_decision, outcome.updated_input) == (None, None)


async def test_s22_http_hook_timeout_and_unreachable_are_errors(server: _Server) -> None:
    slow = await _http(server, 200, {"decision": True}, delay=2.0, timeout=0.3)
    assert slow.kind == "error"
    assert "timed out" in slow.reason
    executor = HttpHookExecutor(check_url=None)
    outcome = await executor.execute(HookSpec("http", url="http://127.0.0.1:9/"), PAYLOAD)
    await executor.aclose()
    assert outcome.kind == "error"


async def test_s06_http_hook_url_passes_the_egress_check_first(server: _Server) -> None:
    async def refuse(url: str) -> str | None:
        return "loopback addresses are refused"

    executor = HttpHookExecutor(check_url=refuse)
    outcome = await executor.execute(HookSpec("http", url=server.url), PAYLOAD)
    await executor.aclose()
    assert outcome.kind == "error"
    assert "egress" in outcome.reason
    assert server.received == []


def test_signal_names_are_reported() -> None:
    assert signal.Signals(9).name == "SIGKILL"
