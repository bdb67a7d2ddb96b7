"""S22 host hook executors, on real subprocesses and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from childproc import alive
from robota import AbortController, ConfigurationError, HookOutcome
from robota.core.hooks import HookSpec
from robota.host import CommandHookExecutor, EgressClient, HttpHookExecutor
from robota.testing import loopback_allowance

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


async def test_s27_a_command_hook_gets_only_the_traceparent_it_is_handed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Called directly, outside any run: the process's own trace variables are ambient.
    ambient = "00-11111111111111111111111111111111-2222222222222222-01"
    handed = "00-33333333333333333333333333333333-4444444444444444-01"
    monkeypatch.setenv("TRACEPARENT", ambient)
    monkeypatch.setenv("TRACESTATE", "ambient=1")
    monkeypatch.setenv("ROBOTA_TEST_MARK", "kept")
    show = 'printf "%s|%s|%s" "${TRACEPARENT-none}" "${TRACESTATE-none}" "$ROBOTA_TEST_MARK"'
    assert (await run(show)).output == "none|none|kept"
    assert (await run(show, traceparent=handed)).output == f"{handed}|none|kept"
    assert os.environ["TRACEPARENT"] == ambient


async def test_s22_the_payload_arrives_on_stdin() -> None:
    outcome = await run(
        f"{sys.executable} -c 'import json,sys; print(json.load(sys.stdin)[\"tool_name\"])'"
    )
    assert outcome.output.strip() == "Bash"


_SHOW_CWD = f"{sys.executable} -c 'import json,sys; print(json.load(sys.stdin).get(\"cwd\"))'"


async def test_s22_a_command_hook_payload_carries_the_working_directory_it_runs_in(
    tmp_path: pathlib.Path,
) -> None:
    # The Claude Code hook input names its cwd in every event's payload; a hook written for it
    # reads input["cwd"]. It is the directory the hook process runs in.
    assert (await run(_SHOW_CWD)).output.strip() == os.getcwd()
    placed = CommandHookExecutor(cwd=str(tmp_path))
    outcome = await placed.execute(command(_SHOW_CWD), PAYLOAD)
    assert outcome.output.strip() == str(tmp_path)
    given = await placed.execute(command(_SHOW_CWD), {**PAYLOAD, "cwd": "/from/the/fire/site"})
    assert given.output.strip() == "/from/the/fire/site"


# --------------------------------------------------------------------------- HTTP


class _Server:
    def __init__(self) -> None:
        self.replies: list[tuple[int, bytes, float]] = []
        self.received: list[dict[str, Any]] = []
        self.server: asyncio.base_events.Server | None = None
        self.handlers: set[asyncio.Task[Any]] = set()
        self.location = ""

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
        location = f"location: {self.location}\r\n" if self.location else ""
        writer.write(
            f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n"
            f"{location}connection: close\r\n\r\n".encode()
            + payload
        )
        await writer.drain()

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    @property
    def named_url(self) -> str:
        return f"http://hooks.test:{self.port}/hook"


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


async def _resolve(host: str) -> list[str]:
    assert host == "hooks.test"
    return ["127.0.0.1"]


def _egress() -> EgressClient:
    # S06: the hook server is on loopback, reached by name under the test-only allowance.
    return EgressClient(resolver=_resolve, allowance=loopback_allowance("hooks.test"))


async def _http(
    server: _Server, status: int, body: Any, delay: float = 0.0, **spec: Any
) -> HookOutcome:
    server.replies.append(
        (status, json.dumps(body).encode() if not isinstance(body, bytes) else body, delay)
    )
    async with _egress() as egress:
        executor = HttpHookExecutor(egress=egress)
        return await executor.execute(HookSpec("http", url=server.named_url, **spec), PAYLOAD)


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
    async with _egress() as egress:
        outcome = await HttpHookExecutor(egress=egress).execute(
            HookSpec("http", url="http://hooks.test:9/"), PAYLOAD
        )
    assert outcome.kind == "error"
    assert "could not be reached" in outcome.reason


async def test_s22_an_abort_stops_an_http_hook(server: _Server) -> None:
    server.replies.append((200, b'{"decision": true}', 5.0))
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.2, controller.abort)
    async with _egress() as egress:
        started = time.monotonic()
        outcome = await HttpHookExecutor(egress=egress).execute(
            HookSpec("http", url=server.named_url), PAYLOAD, signal=controller.signal
        )
    assert outcome.kind == "error"
    assert "aborted" in outcome.reason
    assert time.monotonic() - started < 4.0


async def test_s06_an_http_hook_goes_through_the_egress_boundary_by_default(
    server: _Server,
) -> None:
    executor = HttpHookExecutor()
    outcome = await executor.execute(HookSpec("http", url=server.url), PAYLOAD)
    await executor.aclose()
    assert outcome.kind == "error"
    assert "egress" in outcome.reason
    assert "loopback" in outcome.reason
    assert server.received == []


async def test_s06_an_http_hook_redirected_to_loopback_is_refused_at_the_hop(
    server: _Server,
) -> None:
    # The allowed, named hook server answers with a redirect to a literal loopback address.
    server.replies.append((307, b"", 0.0))
    server.location = "http://127.0.0.1:9/admin"
    async with _egress() as egress:
        outcome = await HttpHookExecutor(egress=egress).execute(
            HookSpec("http", url=server.named_url), PAYLOAD
        )
    assert outcome.kind == "error"
    assert "egress" in outcome.reason
    assert "redirect" in outcome.reason
    assert len(server.received) == 1  # the first hop only


async def test_s06_a_trusted_client_reaches_a_fixed_local_endpoint(server: _Server) -> None:
    server.replies.append((200, b'{"decision": true}', 0.0))
    async with httpx2.AsyncClient(trust_env=False) as client:
        outcome = await HttpHookExecutor(trusted_client=client).execute(
            HookSpec("http", url=server.url), PAYLOAD
        )
    assert outcome.kind == "allow"
    assert server.received[0]["tool_name"] == "Bash"


async def test_s06_egress_and_trusted_client_are_exclusive() -> None:
    async with _egress() as egress, httpx2.AsyncClient() as client:
        with pytest.raises(ConfigurationError, match="not both"):
            HttpHookExecutor(egress=egress, trusted_client=client)


SESSION_PROBE = "echo $(ps -o sid= -p $$) $(ps -o pgid= -p $$) $$"


async def test_s09_while_children_are_not_isolated_a_command_hook_shares_the_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # S09: with the decision off the hook keeps this process's session (its terminal); it still
    # leads its own process group so a timeout can kill it whole (S22).
    monkeypatch.setattr(sys, "_robota_children_isolated", False, raising=False)
    outcome = await run(SESSION_PROBE)
    sid, pgid, pid = (int(word) for word in outcome.output.split())
    assert sid == os.getsid(0)
    assert pgid == pid


def test_s09_once_children_are_isolated_a_command_hook_leads_its_own_session() -> None:
    # The decision never turns off, so it is taken in a child interpreter.
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import asyncio, os, sys
                from robota.core.hooks import HookSpec
                from robota.host import CommandHookExecutor, isolate_children
                isolate_children()
                outcome = asyncio.run(CommandHookExecutor().execute(
                    HookSpec("command", command=sys.argv[1]), {"hook_event_name": "Stop"}))
                print(os.getsid(0), outcome.output.strip())
                """
            ),
            SESSION_PROBE,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    ours, sid, pgid, pid = (int(word) for word in result.stdout.split())
    assert sid == pid != ours
    assert pgid == pid


@pytest.mark.parametrize("steps", range(6))
async def test_a_command_hook_cancelled_while_its_process_starts_returns_and_leaves_none(
    steps: int, tmp_path: pathlib.Path
) -> None:
    # Regression (issue 27): a cancellation landing inside asyncio's subprocess creation hung
    # the cancelled task forever (CPython gh-103847) — a Notification hook cancelled at an
    # agent's close never let the close return. The cancellation now waits for the start,
    # kills the process group and is raised.
    pids = tmp_path / "pids"
    task = asyncio.ensure_future(run(f"echo $$ >> {pids}; cat > /dev/null; exec sleep 300"))
    for _ in range(steps):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=30)  # a failure detector: a hang is the bug
    assert done, "the cancelled hook never returned"
    assert task.cancelled()
    started = [int(p) for p in pids.read_text().split()] if pids.exists() else []
    assert not [pid for pid in started if alive(pid)]
