"""``robota.serve.mcp_server``: an agent as an MCP server, driven by the official MCP client.

Over stdio the server is a real child process (``mcp_agent_app.py``); over streamable HTTP it is
a real uvicorn server on 127.0.0.1 (a free port) in a thread.
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import robota
from robota.core import ConfigurationError
from robota.serve import AgentMCPServer, mcp_server
from robota.testing import InMemorySessionStore, ScriptedProvider

APP = Path(__file__).with_name("mcp_agent_app.py")
# The child imports this checkout's robota (the SDK passes it only a few variables).
SOURCE = str(Path(robota.__file__).resolve().parents[1])


def _app_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mcp_agent_app", APP)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


app = _app_module()


@asynccontextmanager
async def stdio_session(mode: str, log: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=[str(APP), mode, str(log)], env={"PYTHONPATH": SOURCE}
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def http_served(server: AgentMCPServer, **options: Any) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    runner = uvicorn.Server(
        uvicorn.Config(
            server.http_app(**options),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
    )
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not runner.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the MCP agent server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        runner.should_exit = True
        thread.join(15)
        sock.close()


@asynccontextmanager
async def http_session(
    url: str, headers: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=30) as client,
        streamable_http_client(url, http_client=client) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


def _text(result: Any) -> str:
    return "".join(part.text for part in result.content if part.type == "text")


# --------------------------------------------------------------------------- stdio


async def test_stdio_lists_the_agent_as_one_tool_with_a_prompt_schema(tmp_path: Path) -> None:
    async with stdio_session("answer", tmp_path / "log") as session:
        listed = await session.list_tools()
    assert [t.name for t in listed.tools] == ["oracle"]
    schema = listed.tools[0].input_schema
    assert schema["required"] == ["prompt"]
    assert schema["properties"]["prompt"]["type"] == "string"
    assert "session_id" not in schema["properties"]  # no store, no sessions


async def test_stdio_call_returns_the_final_text_and_runs_the_agents_own_tools(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log"
    async with stdio_session("answer", log) as session:
        first = await session.call_tool("oracle", {"prompt": "what is it?"})
        second = await session.call_tool("oracle", {"prompt": "look it up"})
    assert (first.is_error, _text(first)) == (False, "the answer is 42")
    assert (second.is_error, _text(second)) == (False, "looked up: k=42")
    assert log.read_text().splitlines() == ["lookup:k"]  # the scripted tool call really ran


async def test_stdio_failing_provider_is_a_tool_error_without_the_key_or_a_trace(
    tmp_path: Path,
) -> None:
    async with stdio_session("fail", tmp_path / "log") as session:
        result = await session.call_tool("broken", {"prompt": "hi"})
        again = await session.call_tool("broken", {"prompt": "hi"})  # the server still serves
    text = _text(result)
    assert result.is_error is True
    assert "ProviderError" in text
    assert app.FAKE_KEY not in text
    assert "Traceback" not in text
    assert again.is_error is True


async def test_stdio_bad_arguments_are_a_clear_tool_error(tmp_path: Path) -> None:
    async with stdio_session("answer", tmp_path / "log") as session:
        missing = await session.call_tool("oracle", {})
        unknown = await session.call_tool("nope", {"prompt": "x"})
    assert missing.is_error is True
    assert "prompt" in _text(missing)
    assert unknown.is_error is True
    assert "unknown tool" in _text(unknown)


async def test_s23_client_cancellation_aborts_the_run(tmp_path: Path) -> None:
    log = tmp_path / "log"
    async with stdio_session("slow", log) as session:
        call = asyncio.create_task(session.call_tool("sleeper", {"prompt": "wait"}))
        for _ in range(1000):
            if log.exists() and "wait:start" in log.read_text():
                break
            await asyncio.sleep(0.01)
        call.cancel()  # the SDK sends notifications/cancelled
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(1000):
            if "wait:end" in log.read_text():
                break
            await asyncio.sleep(0.01)
    assert log.read_text().splitlines() == ["wait:start", "wait:end aborted=True"]


async def test_s21_exposed_tools_go_through_the_permission_gate(tmp_path: Path) -> None:
    log = tmp_path / "log"
    async with stdio_session("tools", log) as session:
        names = sorted(t.name for t in (await session.list_tools()).tools)
        allowed = await session.call_tool("lookup", {"key": "a"})
        denied = await session.call_tool("remove", {"path": "x"})
        asked = await session.call_tool("ask_me", {"question": "q"})
        invalid = await session.call_tool("lookup", {"key": 5})
    assert names == ["ask_me", "keeper", "lookup", "remove"]
    assert (allowed.is_error, _text(allowed)) == (False, "a=42")
    assert denied.is_error is True  # S21: the deny rule holds
    assert "denied by rule 'remove'" in _text(denied)
    assert asked.is_error is True  # an ask with no approver is a denial
    assert "no one is attached" in _text(asked)
    assert invalid.is_error is True
    assert log.read_text().splitlines() == ["lookup:a"]  # no refused body ran


# --------------------------------------------------------------------------- streamable HTTP


def _oracle(turns: list[Any], provider: ScriptedProvider | None = None) -> robota.Agent:
    @robota.tool(risk="inspect")
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"{key}=7"

    scripted = provider if provider is not None else ScriptedProvider(turns, chunk_delay=0.001)
    return robota.Agent(name="oracle", provider=scripted, model="m", tools=[lookup])


async def test_http_call_runs_the_agent_with_progress(tmp_path: Path) -> None:
    server = mcp_server(_oracle([[("lookup", {"key": "z"})], "z is seven"]))
    seen: list[str | None] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    with http_served(server) as url:
        async with http_session(url) as session:
            listed = await session.list_tools()
            result = await session.call_tool("oracle", {"prompt": "z?"}, progress_callback=progress)
    assert [t.name for t in listed.tools] == ["oracle"]
    assert (result.is_error, _text(result)) == (False, "z is seven")
    assert "calling lookup" in seen
    assert "".join(m for m in seen if m and not m.startswith("calling ")).strip() == "z is seven"


async def test_http_each_call_is_a_fresh_conversation_unless_a_session_id_is_given() -> None:
    provider = ScriptedProvider(["one", "two", "three", "four", "five"])
    agent = _oracle([], provider)
    server = mcp_server(agent, sessions=InMemorySessionStore())
    with http_served(server) as url:
        async with http_session(url) as session:
            schema = (await session.list_tools()).tools[0].input_schema
            await session.call_tool("oracle", {"prompt": "a"})
            await session.call_tool("oracle", {"prompt": "b"})
            await session.call_tool("oracle", {"prompt": "c", "session_id": "s1"})
            await session.call_tool("oracle", {"prompt": "d", "session_id": "s1"})
            await session.call_tool("oracle", {"prompt": "e"})
    assert "session_id" in schema["properties"]
    users = [
        [m for m in r.messages if isinstance(m, robota.UserMessage)] for r in provider.requests
    ]
    # fresh, fresh, a new session, that session continued, fresh again
    assert [len(u) for u in users] == [1, 1, 1, 2, 1]


async def test_s21_an_approver_answers_asks_of_exposed_tools_and_deny_still_holds() -> None:
    asked: list[str] = []

    async def approve(request: robota.ApprovalRequest) -> robota.Approval:
        asked.append(request.tool.name)
        return robota.Approval(True)

    @robota.tool
    def ask_me(question: str) -> str:
        """An undeclared tool: the gate asks."""
        return f"answered {question}"

    @robota.tool
    def remove(path: str) -> str:
        """Remove a file."""
        return "removed"

    agent = robota.Agent(
        name="keeper",
        provider=ScriptedProvider([]),
        model="m",
        tools=[ask_me, remove],
        tool_gate=robota.PermissionGate(robota.PermissionPolicy(deny=["remove"])),
    )
    server = mcp_server(agent, expose_tools=True, approver=approve)
    with http_served(server) as url:
        async with http_session(url) as session:
            approved = await session.call_tool("ask_me", {"question": "yes"})
            denied = await session.call_tool("remove", {"path": "x"})
    assert (approved.is_error, _text(approved)) == (False, "answered yes")
    assert denied.is_error is True
    assert asked == ["ask_me"]  # the deny rule refused without asking


async def test_http_a_bad_session_id_is_a_clear_tool_error() -> None:
    provider = ScriptedProvider([])
    server = mcp_server(_oracle([], provider), sessions=InMemorySessionStore())
    with http_served(server) as url:
        async with http_session(url) as session:
            slash = await session.call_tool("oracle", {"prompt": "a", "session_id": "a/b"})
            number = await session.call_tool("oracle", {"prompt": "a", "session_id": 5})
    assert slash.is_error is True
    assert "'/'" in _text(slash)
    assert number.is_error is True
    assert "string" in _text(number)
    assert provider.requests == []  # refused before any run


async def test_s23_http_cancellation_aborts_the_run() -> None:
    events: list[str] = []  # appended from the server's thread

    @robota.tool(risk="inspect")
    async def wait(ctx: robota.ToolContext) -> str:
        """Wait until aborted."""
        events.append("start")
        try:
            await asyncio.wait_for(ctx.signal.wait(), 60)
        finally:
            events.append(f"end aborted={ctx.signal.aborted}")
        return "waited"

    provider = ScriptedProvider([[("wait", {})], "done"])
    agent = robota.Agent(name="sleeper", provider=provider, model="m", tools=[wait])
    server = mcp_server(agent)
    with http_served(server) as url:
        async with http_session(url) as session:
            call = asyncio.create_task(session.call_tool("sleeper", {"prompt": "wait"}))
            for _ in range(1000):
                if events:
                    break
                await asyncio.sleep(0.01)
            call.cancel()  # the SDK sends notifications/cancelled
            with pytest.raises(asyncio.CancelledError):
                await call
            for _ in range(1000):
                if len(events) == 2:
                    break
                await asyncio.sleep(0.01)
    assert events == ["start", "end aborted=True"]


async def test_http_token_is_required_when_given() -> None:
    server = mcp_server(_oracle(["ok"]))
    with http_served(server, token="s3cret") as url:  # noqa: S106 - a test token
        async with httpx2.AsyncClient() as client:
            refused = await client.post(url, json={})
        async with http_session(url, {"Authorization": "Bearer s3cret"}) as session:
            result = await session.call_tool("oracle", {"prompt": "hi"})
    assert refused.status_code == 401
    assert _text(result) == "ok"


async def test_http_token_scheme_is_case_insensitive_and_a_stray_token_is_refused() -> None:
    # Regression (issue 31): a token sent to a loopback-only server was silently accepted,
    # and "bearer" (RFC 9110: the scheme is case-insensitive) was refused with the right token.
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    with http_served(mcp_server(_oracle([]))) as url:
        async with httpx2.AsyncClient() as client:
            stray = await client.post(
                url, json=initialize, headers={**accept, "Authorization": "Bearer s3cret-token"}
            )
    assert stray.status_code == 400
    assert "Traceback" not in stray.text
    with http_served(mcp_server(_oracle([])), token="s3cret") as url:  # noqa: S106 - a test token
        async with httpx2.AsyncClient() as client:
            lower = await client.post(
                url, json=initialize, headers={**accept, "Authorization": "bearer s3cret"}
            )
            wrong = await client.post(
                url, json=initialize, headers={**accept, "Authorization": "Bearer s3cre"}
            )
    assert lower.status_code == 200
    assert wrong.status_code == 401


async def test_http_refuses_a_foreign_host_header_and_keeps_serving() -> None:
    server = mcp_server(_oracle(["ok"]))
    with http_served(server) as url:
        async with httpx2.AsyncClient() as client:
            foreign = await client.post(
                url,
                headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
                content=b"{}",
            )
        async with http_session(url) as session:
            result = await session.call_tool("oracle", {"prompt": "hi"})
    assert 400 <= foreign.status_code < 500
    assert "Traceback" not in foreign.text
    assert _text(result) == "ok"


# --------------------------------------------------------------------------- configuration


def test_bad_names_and_clashes_are_configuration_errors() -> None:
    agent = _oracle([])
    with pytest.raises(ConfigurationError, match="name must be"):
        mcp_server(agent, name="has space")
    with pytest.raises(ConfigurationError, match="tool named 'lookup'"):
        mcp_server(agent, name="lookup", expose_tools=True)
    assert (
        mcp_server(
            robota.Agent(name="my agent", provider=ScriptedProvider([]), model="m")
        ).tool_name
        == "my_agent"
    )


def test_non_loopback_http_needs_a_token() -> None:
    with pytest.raises(ConfigurationError, match="needs token"):
        mcp_server(_oracle([])).run_http("0.0.0.0", 0)  # noqa: S104 - refused


async def test_http_without_a_token_refuses_a_peer_from_another_machine() -> None:
    # Regression: run by hand on 0.0.0.0 with no token, the app answered a LAN peer that sent
    # a loopback Host header. Uvicorn's proxy headers (trusted for this test) show such a peer.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    config = uvicorn.Config(
        mcp_server(_oracle([])).http_app(),
        log_level="warning",
        proxy_headers=True,
        forwarded_allow_ips="*",
    )
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not runner.started:
            assert thread.is_alive()
            await asyncio.sleep(0.01)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient() as client:
            lan = await client.post(
                url, json={}, headers={**headers, "X-Forwarded-For": "10.1.2.3"}
            )
    finally:
        runner.should_exit = True
        thread.join(15)
        sock.close()
    assert lan.status_code == 403


async def test_a_lone_surrogate_in_the_answer_still_reaches_the_client() -> None:
    # Regression: the SDK failed to serialize the result and the client got no response.
    agent = robota.Agent(name="oracle", provider=ScriptedProvider(["bad \ud800 text"]), model="m")
    with http_served(mcp_server(agent)) as url:
        async with http_session(url) as session:
            result = await session.call_tool("oracle", {"prompt": "hi"})
    assert _text(result) == "bad ? text"
