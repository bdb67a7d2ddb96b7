"""``robota.serve.a2a_app`` and ``a2a_tool``: a real uvicorn server on 127.0.0.1, driven by the
``a2a-sdk``'s own client, and a Robota agent calling it through the egress client (issue 31).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
import uvicorn
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from starlette.applications import Starlette

import robota
import robota.host
import robota.serve
from robota.testing import InMemoryJournal, ScriptedProvider, loopback_allowance

HOST = "agent.test"
FAKE_KEY = "sk-test-FAKEKEY-0123456789abcdef"


def _socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    return sock


@contextlib.asynccontextmanager
async def serve(build: Callable[[str], Starlette], host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve ``build(url)`` with uvicorn on 127.0.0.1 (port 0) in this loop; yield the URL."""
    sock = _socket()
    url = f"http://{host}:{sock.getsockname()[1]}/"
    server = uvicorn.Server(
        uvicorn.Config(build(url), log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    )
    running = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if running.done():
            running.result()
        await asyncio.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True
        await running
        sock.close()


def scripted_agent(provider: ScriptedProvider) -> Callable[[], robota.Agent]:
    return lambda: robota.Agent(provider=provider, model="scripted-model", name="helper")


def user_message(text: str, *, context_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            context_id=context_id,
            parts=[Part(text=text)],
        )
    )


@contextlib.asynccontextmanager
async def sdk_client(url: str, **config: bool) -> AsyncIterator[tuple[httpx.AsyncClient, Client]]:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, **config)).create(card)
        yield http, client


async def final_task(client: Client, request: SendMessageRequest) -> Task:
    task = None
    async for event in client.send_message(request):
        if event.HasField("task"):
            task = event.task
    assert task is not None
    return task


def answer(task: Task) -> str:
    return "".join(part.text for artifact in task.artifacts for part in artifact.parts)


async def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (a hang guard, not a timing assertion: it fails only a stuck test)."""
    async with asyncio.timeout(60):
        while True:
            if condition():
                return
            await asyncio.sleep(0.01)


async def streaming(client: Client, task_id: str) -> Task:
    """The task, once some of its answer has streamed."""
    async with asyncio.timeout(60):  # a hang guard only
        while True:
            task = await client.get_task(GetTaskRequest(id=task_id))
            if answer(task):
                return task
            await asyncio.sleep(0.02)


async def test_the_sdk_client_reads_the_card_sends_a_message_and_gets_the_task() -> None:
    provider = ScriptedProvider(["Hello from robota"])
    app = lambda url: robota.serve.a2a_app(  # noqa: E731
        scripted_agent(provider), name="helper", description="says hello", url=url
    )
    async with serve(app) as url, sdk_client(url, streaming=False) as (http, client):
        card = await A2ACardResolver(http, url).get_agent_card()
        assert card.name == "helper"
        assert card.description == "says hello"
        assert card.supported_interfaces[0].url == url
        assert card.capabilities.streaming

        task = await final_task(client, user_message("hi"))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert answer(task) == "Hello from robota"

        fetched = await client.get_task(GetTaskRequest(id=task.id))
        assert fetched.status.state == TaskState.TASK_STATE_COMPLETED
        assert answer(fetched) == "Hello from robota"
    assert provider.requests[0].messages[-1].content == "hi"


async def test_streaming_sends_the_text_as_artifact_chunks_and_ends_with_the_whole_answer() -> None:
    provider = ScriptedProvider(["one two three four"], chunk_delay=0.01)
    app = lambda url: robota.serve.a2a_app(scripted_agent(provider), url=url)  # noqa: E731
    async with serve(app) as url, sdk_client(url, streaming=True) as (_, client):
        chunks: list[str] = []
        states: list[int] = []
        async for event in client.send_message(user_message("count")):
            if event.HasField("artifact_update"):
                chunks.append("".join(p.text for p in event.artifact_update.artifact.parts))
            if event.HasField("status_update"):
                states.append(event.status_update.status.state)
        assert len(chunks) > 2  # streamed deltas, then the whole text
        assert chunks[-1] == "one two three four"
        assert states[-1] == TaskState.TASK_STATE_COMPLETED


async def test_the_03_method_names_are_served_on_the_same_endpoint() -> None:
    provider = ScriptedProvider(["old protocol answer"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(provider), url=url)  # noqa: E731
    async with serve(app) as url, httpx.AsyncClient(timeout=30) as http:
        sent = await http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {
                    "message": {
                        "role": "user",
                        "messageId": "m1",
                        "parts": [{"kind": "text", "text": "hello"}],
                    }
                },
            },
        )
        result = sent.json()["result"]
        assert result["status"]["state"] == "completed"
        got = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": result["id"]}},
        )
        texts = [p["text"] for a in got.json()["result"]["artifacts"] for p in a["parts"]]
        assert texts == ["old protocol answer"]


@pytest.mark.parametrize("shared", [False, True], ids=["factory", "one-agent"])
async def test_a_context_id_is_one_conversation(shared: bool) -> None:
    provider = ScriptedProvider(["first answer", "second answer", "other answer"])
    source = scripted_agent(provider)()
    app = lambda url: robota.serve.a2a_app(source if shared else scripted_agent(provider), url=url)  # noqa: E731
    async with serve(app) as url, sdk_client(url, streaming=False) as (_, client):
        first = await final_task(client, user_message("one"))
        await final_task(client, user_message("two", context_id=first.context_id))
        await final_task(client, user_message("elsewhere"))
    texts = [
        [getattr(m, "content", None) for m in request.messages] for request in provider.requests
    ]
    assert texts[1] == ["one", "first answer", "two"]  # the context continued
    assert texts[2] == ["elsewhere"]  # a new context starts empty
    await source.aclose()


async def test_s23_cancel_aborts_the_run_and_ends_the_task_canceled_with_the_text_so_far() -> None:
    words = " ".join(f"word{i}" for i in range(400))
    provider = ScriptedProvider([words], chunk_delay=0.02)
    app = lambda url: robota.serve.a2a_app(scripted_agent(provider), url=url)  # noqa: E731
    before = set(asyncio.all_tasks())
    async with serve(app) as url, sdk_client(url, streaming=False, polling=True) as (_, client):
        started = await final_task(client, user_message("talk for a long time"))
        await streaming(client, started.id)
        canceled = await client.cancel_task(CancelTaskRequest(id=started.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        stored = await client.get_task(GetTaskRequest(id=started.id))
        assert stored.status.state == TaskState.TASK_STATE_CANCELED
        so_far = answer(stored)
        assert so_far
        assert words.startswith(so_far.rstrip())
        assert len(so_far) < len(words)
    assert provider.aborted_calls == 1
    # Nothing leaked: no task of the server, the SDK or the run outlives the server.
    current = asyncio.current_task()
    assert {t for t in asyncio.all_tasks() - before if t is not current and not t.done()} == set()


async def test_a_provider_error_fails_the_task_without_its_text_or_a_trace() -> None:
    error = robota.ProviderError(f"401 Unauthorized: invalid key {FAKE_KEY}", status=401)
    provider = ScriptedProvider([error])
    app = lambda url: robota.serve.a2a_app(scripted_agent(provider), url=url)  # noqa: E731
    async with serve(app) as url, httpx.AsyncClient(timeout=30) as http:
        sent = await http.post(
            url,
            headers={"A2A-Version": "1.0"},
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}]}
                },
            },
        )
        body = sent.text
        task = sent.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        status = task["status"]["message"]["parts"][0]["text"]
        assert "model call failed" in status
        assert "401" in status
        got = await http.post(
            url,
            headers={"A2A-Version": "1.0"},
            json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}},
        )
        for text in (body, got.text):
            assert FAKE_KEY not in text
            assert "FAKEKEY" not in text
            assert "Traceback" not in text


async def _resolve(host: str) -> list[str]:
    return ["127.0.0.1"] if host == HOST else []


def egress() -> robota.host.EgressClient:
    return robota.host.EgressClient(resolver=_resolve, allowance=loopback_allowance(HOST))


async def test_a2a_tool_lets_an_agent_ask_the_served_agent_through_the_egress_client() -> None:
    remote = ScriptedProvider(["The answer is 4."])
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), name="math", url=url)  # noqa: E731
    async with serve(app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        assert tool.name == "a2a_agent_test"
        assert tool.risk == "execute"
        caller = ScriptedProvider(
            [[(tool.name, {"message": "What is 2+2?"})], "The remote agent says 4."]
        )
        async with robota.Agent(provider=caller, model="scripted-model", tools=[tool]) as agent:
            result = await agent.run("Ask the math agent what 2+2 is.")
    assert result.text == "The remote agent says 4."
    assert remote.requests[0].messages[-1].content == "What is 2+2?"
    tool_result = caller.requests[1].messages[-1]
    assert isinstance(tool_result, robota.ToolMessage)
    assert not tool_result.is_error
    assert tool_result.content == "The answer is 4."


async def test_a2a_tool_to_a_literal_loopback_url_is_refused_by_egress() -> None:
    remote = ScriptedProvider(["never asked"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url)  # noqa: E731
    async with serve(app) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        async with robota.Agent(
            provider=ScriptedProvider([]), model="scripted-model", tools=[tool]
        ) as agent:
            result = (await agent.invoke_tool(tool.name, {"message": "hello"})).result
    assert result.is_error
    assert "refused" in result.content
    assert remote.remaining == 1  # nothing reached the served agent


async def test_a2a_tool_refuses_a_card_that_points_to_another_origin() -> None:
    remote = ScriptedProvider(["never asked"])
    app = lambda url: robota.serve.a2a_app(  # noqa: E731
        scripted_agent(remote), url="http://elsewhere.example/rpc", allowed_hosts=[HOST]
    )
    async with serve(app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        async with robota.Agent(
            provider=ScriptedProvider([]), model="scripted-model", tools=[tool]
        ) as agent:
            result = (await agent.invoke_tool(tool.name, {"message": "hello"})).result
    assert result.is_error
    assert "another origin" in result.content
    assert remote.remaining == 1


def test_bad_arguments_are_refused_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="absolute http"):
        robota.serve.a2a_app(scripted_agent(ScriptedProvider([])), url="/relative")
    with pytest.raises(ValueError, match="max_contexts"):
        robota.serve.a2a_app(
            scripted_agent(ScriptedProvider([])), url="http://127.0.0.1/", max_contexts=0
        )
    with pytest.raises(TypeError, match=r"robota\.Agent"):
        robota.serve.a2a_app("agent", url="http://127.0.0.1/")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="absolute http"):
        robota.serve.a2a_tool("ftp://agent.test/")


async def test_s23_a_canceled_task_does_not_wait_for_the_shared_agents_other_turn() -> None:
    words = " ".join(f"word{i}" for i in range(400))
    provider = ScriptedProvider([words], chunk_delay=0.02)
    agent = scripted_agent(provider)()
    app = lambda url: robota.serve.a2a_app(agent, url=url)  # noqa: E731
    async with serve(app) as url, sdk_client(url, streaming=False, polling=True) as (_, client):
        busy = await final_task(client, user_message("talk for a long time"))
        await streaming(client, busy.id)
        waiting = await final_task(client, user_message("and me?"))  # queued behind `busy`
        canceled = await client.cancel_task(CancelTaskRequest(id=waiting.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        still = await client.get_task(GetTaskRequest(id=busy.id))
        assert still.status.state == TaskState.TASK_STATE_WORKING  # the other turn goes on
        await client.cancel_task(CancelTaskRequest(id=busy.id))
    assert len(provider.requests) == 1  # the canceled turn never reached the model
    await agent.aclose()


async def test_a_message_without_text_is_rejected_and_never_reaches_the_model() -> None:
    provider = ScriptedProvider(["never asked"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(provider), url=url)  # noqa: E731
    async with serve(app) as url, sdk_client(url, streaming=False) as (_, client):
        request = user_message("")
        request.message.parts[0].Clear()
        request.message.parts[0].url = "https://example.com/picture.png"
        task = await final_task(client, request)
    assert task.status.state == TaskState.TASK_STATE_REJECTED
    assert "text" in task.status.message.parts[0].text
    assert provider.remaining == 1


async def test_s23_aborting_the_calling_run_ends_the_a2a_call() -> None:
    words = " ".join(f"word{i}" for i in range(100))
    remote = ScriptedProvider([words], chunk_delay=0.01)
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url)  # noqa: E731
    async with serve(app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        caller = ScriptedProvider([[(tool.name, {"message": "talk"})], "never sent"])
        controller = robota.AbortController()
        async with robota.Agent(provider=caller, model="scripted-model", tools=[tool]) as agent:
            running = asyncio.create_task(agent.run("go", signal=controller.signal))
            await until(lambda: bool(remote.requests))  # the remote run has begun
            controller.abort()
            result = await running
    assert result.status == "interrupted"
    tool_message = result.messages[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert words not in tool_message.content  # ended mid-call, not after the remote answered
    assert len(caller.requests) == 1


def test_the_a2a_names_are_exported_and_the_sdk_loads_only_when_used() -> None:
    assert {"a2a_app", "a2a_tool"} <= set(robota.serve.__all__)
    probe = "import sys, robota.serve; assert 'a2a' not in sys.modules, 'a2a loaded at import'"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


async def test_s40_a_suspended_run_fails_the_task_instead_of_completing_it() -> None:
    @robota.tool
    async def deploy(target: str, ctx: robota.ToolContext) -> str:
        """Deploy once a person approved it."""
        await ctx.request_outside_response("approval", {"target": target})
        return "deployed"

    provider = ScriptedProvider([[("deploy", {"target": "prod"})]])
    factory = lambda: robota.Agent(  # noqa: E731
        provider=provider, model="m", tools=[deploy], journal=InMemoryJournal()
    )
    app = lambda url: robota.serve.a2a_app(factory, url=url)  # noqa: E731
    async with serve(app) as url, sdk_client(url, streaming=False) as (_, client):
        task = await final_task(client, user_message("ship it"))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "suspended" in task.status.message.parts[0].text


async def test_at_most_max_contexts_conversations_are_kept_the_oldest_agent_closed() -> None:
    provider = ScriptedProvider(["one", "two", "three"])
    made: list[robota.Agent] = []

    def factory() -> robota.Agent:
        made.append(robota.Agent(provider=provider, model="m"))
        return made[-1]

    app = lambda url: robota.serve.a2a_app(factory, url=url, max_contexts=1)  # noqa: E731
    async with serve(app) as url, sdk_client(url, streaming=False) as (_, client):
        first = await final_task(client, user_message("a"))
        await final_task(client, user_message("b"))
        await until(lambda: made[0].closed)  # dropped for the newer context, then closed
        assert not made[1].closed
        await final_task(client, user_message("again", context_id=first.context_id))
    assert len(made) == 3  # the dropped context starts over with a new agent
    assert [getattr(m, "content", None) for m in provider.requests[2].messages] == ["again"]
    assert all(agent.closed for agent in made)  # the app closes what it made on shutdown


async def test_a2a_tool_reports_a_failed_remote_task_as_an_error_without_its_secrets() -> None:
    error = robota.ProviderError(f"invalid key {FAKE_KEY}", status=401)
    remote = ScriptedProvider([error])
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url)  # noqa: E731
    async with serve(app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        async with robota.Agent(
            provider=ScriptedProvider([]), model="scripted-model", tools=[tool]
        ) as agent:
            result = (await agent.invoke_tool(tool.name, {"message": "hello"})).result
    assert result.is_error
    assert "failed" in result.content
    assert FAKE_KEY not in result.content


@pytest.mark.parametrize("tool_path", ["a2a/", "elsewhere/", "a2a/.well-known/agent-card.json"])
async def test_the_card_is_found_under_the_agents_path_or_at_the_root(tool_path: str) -> None:
    remote = ScriptedProvider(["found you"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url + "a2a/")  # noqa: E731
    async with serve(app, host=HOST) as url, egress() as client:
        async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport()) as http:
            local = url.replace(HOST, "127.0.0.1")
            card = await A2ACardResolver(http, local + "a2a").get_agent_card()  # the SDK's way
        assert card.supported_interfaces[0].url == url + "a2a/"
        tool = robota.serve.a2a_tool(url + tool_path, client=client)
        async with robota.Agent(
            provider=ScriptedProvider([]), model="scripted-model", tools=[tool]
        ) as agent:
            result = (await agent.invoke_tool(tool.name, {"message": "hello"})).result
    assert not result.is_error, result.content
    assert result.content == "found you"


async def test_a_loopback_a2a_server_answers_only_its_own_host_names() -> None:
    # Issue 31 (DNS rebinding): the A2A app checked no Host header, so a web page could drive
    # a loopback server through a DNS name it rebound to 127.0.0.1.
    remote = ScriptedProvider(["never asked"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url)  # noqa: E731
    async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {}}
        for path, method in ((".well-known/agent-card.json", "GET"), ("", "POST")):
            rebound = await http.request(
                method, path, json=rpc, headers={"host": "attacker.example"}
            )
            assert rebound.status_code == 403
            assert rebound.json()["error"]["code"] == "host_not_allowed"
        stray = await http.get(
            ".well-known/agent-card.json", headers={"authorization": "Bearer whatever-it-is"}
        )
        assert stray.status_code == 400
        assert (await http.get(".well-known/agent-card.json")).status_code == 200
    assert remote.remaining == 1


async def test_an_a2a_request_body_over_the_limit_is_a_413_even_chunked() -> None:
    # Issue 31 (request size limits): the SDK read any body whole, chunked ones included.
    remote = ScriptedProvider(["never asked"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url)  # noqa: E731
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"x": "'
    big += b"x" * (2 * 1024 * 1024) + b'"}}'

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        declared = await http.post("", content=big)
        assert declared.status_code == 413
        chunked = await http.post("", content=chunks())
        assert chunked.status_code == 413
        assert chunked.json()["error"]["code"] == "body_too_large"
        assert (await http.get(".well-known/agent-card.json")).status_code == 200
    assert remote.remaining == 1


def test_serve_requires_a_token_to_bind_an_a2a_app_beyond_loopback() -> None:
    from robota.serve._server import check_bind

    app = robota.serve.a2a_app(scripted_agent(ScriptedProvider([])), url="http://a.test/")
    with pytest.raises(robota.ConfigurationError, match="without a token"):
        check_bind(app, "0.0.0.0")  # noqa: S104
    with pytest.raises(ValueError, match="allowed_hosts"):
        robota.serve.a2a_app(
            scripted_agent(ScriptedProvider([])), url="http://a/", allowed_hosts="h"
        )


async def test_a_cross_site_post_cannot_drive_a_loopback_a2a_server() -> None:
    # Regression: the SDK parses a text/plain body as JSON-RPC, so a web page could send a
    # message to a loopback A2A agent with a simple (unpreflighted) cross-site POST.
    remote = ScriptedProvider(["never asked"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url)  # noqa: E731
    message = {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": "hi"}]}
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        forged = await http.post(
            "",
            content=json.dumps(rpc),
            headers={"content-type": "text/plain", "origin": "https://evil.example"},
        )
        assert forged.status_code == 403
        assert forged.json()["error"]["code"] == "origin_not_allowed"
    assert remote.remaining == 1


async def test_a_lone_surrogate_in_the_answer_does_not_fail_the_task() -> None:
    # Regression: protobuf refused the artifact part and the task failed (UnicodeEncodeError).
    provider = ScriptedProvider(["bad \ud800 text"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(provider), url=url)  # noqa: E731
    async with serve(app) as url, sdk_client(url, streaming=False) as (_, client):
        task = await final_task(client, user_message("hi"))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer(task) == "bad ? text"


async def test_s23_aborting_the_run_cancels_the_remote_a2a_task() -> None:
    # The tool sends tasks/cancel (A2A 1.0 CancelTask) for the remote task when the calling
    # run is aborted, instead of leaving the remote agent working for nobody.
    words = " ".join(f"word{i}" for i in range(600))
    remote = ScriptedProvider([words], chunk_delay=0.02)
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url)  # noqa: E731
    async with serve(app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        caller = ScriptedProvider([[(tool.name, {"message": "talk a lot"})], "unreached"])
        controller = robota.AbortController()
        async with robota.Agent(provider=caller, model="scripted-model", tools=[tool]) as agent:
            running = asyncio.create_task(agent.run("go", signal=controller.signal))
            await until(lambda: bool(remote.requests))  # the remote task is working
            controller.abort()
            result = await running
            await until(lambda: remote.aborted_calls == 1)  # S23 reached the remote run
    assert result.status == "interrupted"


async def test_a_remote_task_that_outlives_the_tools_timeout_is_canceled_too() -> None:
    words = " ".join(f"word{i}" for i in range(600))
    remote = ScriptedProvider([words], chunk_delay=0.02)
    app = lambda url: robota.serve.a2a_app(scripted_agent(remote), url=url)  # noqa: E731
    async with serve(app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client, timeout=0.5)
        caller = ScriptedProvider([[(tool.name, {"message": "talk a lot"})], "gave up"])
        async with robota.Agent(provider=caller, model="scripted-model", tools=[tool]) as agent:
            result = await agent.run("go")
            await until(lambda: remote.aborted_calls == 1)
    tool_result = caller.requests[1].messages[-1]
    assert isinstance(tool_result, robota.ToolMessage)
    assert tool_result.is_error
    assert "took longer than 0.5 s" in tool_result.content
    assert result.text == "gave up"
