"""``a2a_tool`` and the run's abort (S23) against a scripted remote A2A endpoint on 127.0.0.1.

The remote here is a small Starlette app (a real uvicorn server) that holds ``SendMessage``
until the test lets it answer, so the abort lands while the message is in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import robota
import robota.serve
from serve.test_a2a import HOST, egress, serve, until


class _Remote:
    """An A2A 1.0 JSON-RPC endpoint that answers ``SendMessage`` once ``release`` is set."""

    def __init__(self, reply: dict[str, Any], status: int = 200) -> None:
        self.reply = reply
        self.status = status
        self.methods: list[str] = []
        self.release = asyncio.Event()
        self.on_card: Callable[[], None] = lambda: None

    def app(self, url: str) -> Starlette:
        card = {
            "name": "remote",
            "description": "a scripted remote",
            "version": "1",
            "supportedInterfaces": [
                {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
        }

        async def card_route(_: Request) -> JSONResponse:
            self.on_card()
            return JSONResponse(card)

        async def rpc(request: Request) -> JSONResponse:
            body = await request.json()
            self.methods.append(body["method"])
            if body["method"] == "SendMessage":
                await self.release.wait()
                if self.status != 200:
                    return JSONResponse({"detail": "down"}, status_code=self.status)
            result: dict[str, Any] = self.reply
            if body["method"] == "CancelTask":
                result = {"id": body["params"]["id"], "status": {"state": "TASK_STATE_CANCELED"}}
            return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

        return Starlette(
            routes=[
                Route("/.well-known/agent-card.json", card_route),
                Route("/", rpc, methods=["POST"]),
            ]
        )


_LATE_ANSWERS = {
    "message": {
        "message": {"role": "ROLE_AGENT", "messageId": "r1", "parts": [{"text": "late answer"}]}
    },
    "completed-task": {
        "task": {
            "id": "t1",
            "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": "late answer"}]}],
        }
    },
}


@pytest.mark.parametrize(
    ("reply", "status"),
    [*((reply, 200) for reply in _LATE_ANSWERS.values()), ({}, 503)],
    ids=[*_LATE_ANSWERS, "http-error"],
)
async def test_s23_an_answer_arriving_after_the_abort_is_not_the_calls_result(
    reply: dict[str, Any], status: int
) -> None:
    # S23: silent completion after abort is a contract violation. The tool waits a little for
    # the SendMessage answer (to learn a task id to cancel), but an answer (or a failure) that
    # arrives then must not be returned as if the call had ended by itself.
    remote = _Remote(reply, status)
    async with serve(remote.app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        controller = robota.AbortController()
        ctx = robota.ToolContext(signal=controller.signal, call_id="c", tool_name=tool.name)
        call = asyncio.create_task(tool.execute({"message": "hi"}, ctx))
        await until(lambda: "SendMessage" in remote.methods)
        controller.abort()
        await asyncio.sleep(0)
        remote.release.set()  # the answer comes after the abort, within the tool's grace time
        with pytest.raises(robota.AbortError):
            await call


async def test_s23_a_task_named_by_an_answer_after_the_abort_is_canceled() -> None:
    working = {"task": {"id": "t9", "contextId": "c9", "status": {"state": "TASK_STATE_WORKING"}}}
    remote = _Remote(working)
    async with serve(remote.app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        controller = robota.AbortController()
        ctx = robota.ToolContext(signal=controller.signal, call_id="c", tool_name=tool.name)
        call = asyncio.create_task(tool.execute({"message": "hi"}, ctx))
        await until(lambda: "SendMessage" in remote.methods)
        controller.abort()
        await asyncio.sleep(0)
        remote.release.set()
        with pytest.raises(robota.AbortError):
            await call
    assert remote.methods == ["SendMessage", "CancelTask"]  # no GetTask after the abort


async def test_s23_an_abort_while_the_card_is_fetched_sends_no_message() -> None:
    remote = _Remote(_LATE_ANSWERS["message"])
    remote.release.set()
    controller = robota.AbortController()
    remote.on_card = controller.abort  # the abort lands while the card is on its way
    async with serve(remote.app, host=HOST) as url, egress() as client:
        tool = robota.serve.a2a_tool(url, client=client)
        ctx = robota.ToolContext(signal=controller.signal, call_id="c", tool_name=tool.name)
        with pytest.raises(robota.AbortError):
            await tool.execute({"message": "hi"}, ctx)
    assert remote.methods == []  # no message was sent after the abort
