"""The A2A endpoint's JSON-RPC errors carry fixed text (issue 31: nothing leaked).

The a2a-sdk puts a parser's or validator's text in an error's ``message`` and ``data`` — which
quotes the client's own input back (``input_value=...``, ``Incorrect params ...``), names the
validation library and links to its docs. Each error body is rewritten to the JSON-RPC code, a
short fixed message and (A2A 1.0) the ``ErrorInfo`` reason alone.
"""

from __future__ import annotations

import json

import httpx
import pytest

import robota.serve
from robota.testing import ScriptedProvider
from serve.test_a2a import scripted_agent, serve

SECRET = "SECRETINPUT-7f3a"  # noqa: S105 - the text that must not come back

_SEND = '{"jsonrpc": "2.0", "id": 1, "method": "METHOD", "params": PARAMS}'
_BAD_PARTS = (
    '{"message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": 5}], "x": "@@"}}'
)


def _send(method: str, params: str) -> str:
    return _SEND.replace("METHOD", method).replace("PARAMS", params)


MALFORMED = [
    body.replace("@@", SECRET)
    for body in (
        "{not json @@",
        _send("SendMessage", _BAD_PARTS),
        _send("SendStreamingMessage", _BAD_PARTS),
        _send("SendMessage", '{"message": {"role": "@@"}}'),
        _send("message/send", '{"message": {"role": "@@", "parts": [{"kind": "text"}]}}'),
        _send("message/stream", '{"message": {"role": "@@"}}'),
        _send("@@", "{}"),
        _send("GetTask", '{"id": "@@"}'),
        _send("tasks/get", '{"id": "@@"}'),
        _send("GetTask", '"@@"'),
        '{"jsonrpc": "2.0", "id": {"x": "@@"}, "method": "GetTask", "params": {}}',
        '[1, 2, "@@"]',
    )
]


@pytest.mark.parametrize("version", ["1.0", "0.3", SECRET])
async def test_malformed_requests_get_fixed_error_text_never_their_input(version: str) -> None:
    provider = ScriptedProvider(["still serving"])
    app = lambda url: robota.serve.a2a_app(scripted_agent(provider), url=url)  # noqa: E731
    async with serve(app) as url, httpx.AsyncClient(timeout=30) as http:
        for body in MALFORMED:
            sent = await http.post(
                url,
                content=body.encode(),
                headers={"content-type": "application/json", "A2A-Version": version},
            )
            text = sent.text
            assert sent.status_code < 500, text
            for leak in (SECRET, "Traceback", "pydantic", "validation error", "line 1 column"):
                assert leak not in text, (body, text)
            error = json.loads(text)["error"]
            assert isinstance(error["code"], int)
            assert len(error["message"]) < 80
            for info in error.get("data") or []:
                assert set(info) <= {"@type", "reason", "domain"}, info
        # The server keeps serving.
        ok = await http.post(
            url,
            headers={"A2A-Version": "1.0"},
            json={
                "jsonrpc": "2.0",
                "id": 9,
                "method": "SendMessage",
                "params": {
                    "message": {"role": "ROLE_USER", "messageId": "m9", "parts": [{"text": "hi"}]}
                },
            },
        )
    task = ok.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "still serving"


async def test_an_error_keeps_its_code_and_reason_for_clients() -> None:
    app = lambda url: robota.serve.a2a_app(scripted_agent(ScriptedProvider([])), url=url)  # noqa: E731
    async with serve(app) as url, httpx.AsyncClient(timeout=30) as http:
        missing = await http.post(
            url,
            headers={"A2A-Version": "1.0"},
            json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": SECRET}},
        )
    body = missing.json()
    assert body["id"] == 3
    assert body["error"]["code"] == -32001
    assert body["error"]["message"] == "Task not found"
    assert [info["reason"] for info in body["error"]["data"]] == ["TASK_NOT_FOUND"]
