"""Security by default (issue 31): binds, tokens, hosts, CORS, limits, errors that leak nothing."""

# ruff: noqa: S104, S105, S106 - the tests bind-check "0.0.0.0" and use a made-up token

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import robota
from robota.serve import create_app, serve
from robota.serve._server import is_loopback_host
from robota.testing import ScriptedProvider
from serve.support import agui, agui_input, chat_input, client, running, sse_events, ui_stream

TOKEN = "t0ken-of-the-test-suite-0123456789"
FAKE_KEY = "sk-live-FAKE0123456789abcdefSECRET"


def _app(**options: object) -> object:
    return create_app(
        {"a": lambda: robota.Agent("m", provider=ScriptedProvider(["ok"] * 5))},
        **options,  # type: ignore[arg-type]
    )


def _still_serving(http: object) -> None:
    response = http.post("/agents/a/chat", json=chat_input("alive", "hi"))  # type: ignore[attr-defined]
    assert response.status_code == 200
    assert ui_stream([e.data for e in sse_events(response.text.splitlines())]).text == "ok"


def _error_code(response: object, status: int) -> str:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"] == "application/json"  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert "Traceback" not in response.text  # type: ignore[attr-defined]
    return str(body["error"]["code"])


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com"])
def test_serve_refuses_a_non_loopback_bind_without_a_token(host: str) -> None:
    with pytest.raises(robota.ConfigurationError, match="without a token"):
        serve(_app(), host=host, port=0)  # type: ignore[arg-type]


def test_serve_refuses_a_short_or_conflicting_token() -> None:
    with pytest.raises(robota.ConfigurationError, match="at least 16"):
        serve(_app(), host="0.0.0.0", token="short")  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="differs"):
        serve(_app(token=TOKEN), host="0.0.0.0", token=TOKEN + "x")  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="at least 16"):
        _app(token="short")


def test_token_is_required_and_compared_on_every_request() -> None:
    with running(_app(token=TOKEN)) as url:  # type: ignore[arg-type]
        with client(url) as http:
            assert _error_code(http.post("/agents/a/chat", json=chat_input("c", "x")), 401)
            wrong = http.post(
                "/agents/a/chat",
                json=chat_input("c", "x"),
                headers={"authorization": f"Bearer {TOKEN}x"},
            )
            assert _error_code(wrong, 401) == "unauthorized"
            assert wrong.headers["www-authenticate"] == "Bearer"
            basic = http.post(
                "/agents/a/chat", json=chat_input("c", "x"), headers={"authorization": TOKEN}
            )
            assert _error_code(basic, 401) == "unauthorized"
        with client(url, headers={"authorization": f"Bearer {TOKEN}"}) as http:
            _still_serving(http)


def test_a_token_sent_to_a_loopback_only_server_is_refused() -> None:
    with running(_app()) as url, client(url) as http:  # type: ignore[arg-type]
        response = http.post(
            "/agents/a/chat",
            json=chat_input("c", "x"),
            headers={"authorization": f"Bearer {TOKEN}"},
        )
        assert _error_code(response, 400) == "unexpected_token"
        _still_serving(http)


def test_a_loopback_only_server_answers_only_loopback_host_names() -> None:
    with running(_app()) as url, client(url) as http:  # type: ignore[arg-type]
        rebound = http.post(
            "/agents/a/chat", json=chat_input("c", "x"), headers={"host": "evil.example:80"}
        )
        assert _error_code(rebound, 403) == "host_not_allowed"
        local = http.post(
            "/agents/a/chat", json=chat_input("c2", "x"), headers={"host": "localhost:1"}
        )
        assert local.status_code == 200
        _still_serving(http)


def test_cors_is_closed_unless_origins_are_listed() -> None:
    preflight = {
        "origin": "https://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
    }
    with running(_app()) as url, client(url) as http:  # type: ignore[arg-type]
        closed = http.options("/agents/a/chat", headers=preflight)
        assert 400 <= closed.status_code < 500
        assert "access-control-allow-origin" not in closed.headers
        simple = http.post(
            "/agents/a/chat", json=chat_input("c", "x"), headers={"origin": "https://evil.example"}
        )
        assert "access-control-allow-origin" not in simple.headers
        _still_serving(http)
    app = _app(cors_origins=["https://app.example"])
    with running(app) as url, client(url) as http:  # type: ignore[arg-type]
        refused = http.options("/agents/a/chat", headers=preflight)
        assert refused.status_code == 400
        assert "access-control-allow-origin" not in refused.headers
        allowed = http.options(
            "/agents/a/chat", headers={**preflight, "origin": "https://app.example"}
        )
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == "https://app.example"
        _still_serving(http)


def test_bad_input_gets_a_clear_4xx_and_the_server_keeps_serving() -> None:
    with running(_app(max_body_bytes=2048)) as url, client(url) as http:  # type: ignore[arg-type]
        malformed = http.post(
            "/agents/a/chat",
            content=b'{"id": "c", "messages": [',
            headers={"content-type": "application/json"},
        )
        assert _error_code(malformed, 400) == "malformed_json"
        big = chat_input("c", "x" * 4096)
        assert _error_code(http.post("/agents/a/chat", json=big), 413) == "body_too_large"
        chunked = http.post("/agents/a/chat", content=iter([b"{" + b" " * 3000, b"}"]))
        assert _error_code(chunked, 413) == "body_too_large"
        assert _error_code(http.post("/agents/a/agui", json={"threadId": 1}), 400) == "invalid_body"
        assert _error_code(http.post("/agents/a/chat", json=[1]), 400) == "invalid_body"
        no_user = {"id": "c", "messages": [{"role": "assistant", "parts": []}]}
        assert _error_code(http.post("/agents/a/chat", json=no_user), 400) == "no_user_message"
        injected = agui_input("t", "x", run_id="r\ndata: {}")
        assert _error_code(http.post("/agents/a/agui", json=injected), 400) == "invalid_run_id"
        empty = chat_input("c", "  ")
        assert _error_code(http.post("/agents/a/chat", json=empty), 400) == "empty_message"
        parts = agui_input("t-parts", "x")
        parts["messages"][0]["content"] = [{"type": "text", "text": "hi"}]
        assert http.post("/agents/a/agui", json=parts).status_code == 200
        bad_id = chat_input("bad\u0000id", "x")
        assert _error_code(http.post("/agents/a/chat", json=bad_id), 400) == "invalid_session_id"
        unknown = http.post("/agents/nobody/chat", json=chat_input("c", "x"))
        assert _error_code(unknown, 404) == "unknown_agent"
        for path in ("cancel", "approvals/ask-1"):
            missing = http.post(f"/agents/a/sessions/nope/{path}", json={"approved": True})
            assert _error_code(missing, 404) == "unknown_session"
        assert _error_code(http.get("/agents/a/sessions/nope/stream"), 404) == "unknown_session"
        _still_serving(http)


def test_one_sessions_stream_is_never_readable_with_another_id() -> None:
    with running(_app()) as url, client(url) as http:  # type: ignore[arg-type]
        first = http.post("/agents/a/chat", json=chat_input("alice", "secret plans"))
        last_id = [e.id for e in sse_events(first.text.splitlines())][-1]
        http.post("/agents/a/chat", json=chat_input("bob", "hi"))
        # Bob's stream endpoint serves Bob's run only; Alice's event id names nothing there.
        other = http.get("/agents/a/sessions/bob/stream", headers={"last-event-id": last_id})
        assert _error_code(other, 404) == "unknown_event"
        assert _error_code(http.get("/agents/a/sessions/carol/stream"), 404) == "unknown_session"
        own = http.get("/agents/a/sessions/alice/stream", headers={"last-event-id": last_id})
        assert own.status_code == 200
        assert own.text == ""


def test_a_provider_error_reaches_the_client_as_a_code_never_its_message() -> None:
    def failing() -> robota.Agent:
        error = robota.ProviderError(f"401 from vendor: invalid key {FAKE_KEY}", status=401)
        return robota.Agent("m", provider=ScriptedProvider([error, error]))

    with running(create_app({"a": failing})) as url, client(url) as http:
        agui_response = http.post("/agents/a/agui", json=agui_input("t", "hi"))
        chat_response = http.post("/agents/a/chat", json=chat_input("c", "hi"))
        _still_serving_failing = http.post("/agents/a/chat", json=chat_input("c2", "hi"))
    for response in (agui_response, chat_response, _still_serving_failing):
        assert response.status_code == 200
        assert FAKE_KEY not in response.text
        assert "sk-live" not in response.text
        assert "Traceback" not in response.text
    last = agui(sse_events(agui_response.text.splitlines()))[-1]
    assert last.type == "RUN_ERROR"
    assert last.message == "the run failed"  # type: ignore[attr-defined]
    assert last.code  # type: ignore[attr-defined]
    message = ui_stream([e.data for e in sse_events(chat_response.text.splitlines())])
    assert message.error is not None
    assert message.error.startswith("the run failed (")


def test_a_failing_factory_is_a_500_without_its_message_and_the_server_keeps_serving() -> None:
    def broken() -> robota.Agent:
        raise RuntimeError(f"could not read {FAKE_KEY}")

    app = create_app(
        {"broken": broken, "a": lambda: robota.Agent("m", provider=ScriptedProvider(["ok"]))}
    )
    with running(app) as url, client(url) as http:
        response = http.post("/agents/broken/chat", json=chat_input("c", "x"))
        assert _error_code(response, 500) == "agent_unavailable"
        assert FAKE_KEY not in response.text
        _still_serving(http)


def test_sessions_past_max_sessions_are_refused() -> None:
    with running(_app(max_sessions=2)) as url, client(url) as http:  # type: ignore[arg-type]
        for chat_id in ("one", "two"):
            assert http.post("/agents/a/chat", json=chat_input(chat_id, "x")).status_code == 200
        third = http.post("/agents/a/chat", json=chat_input("three", "x"))
        assert _error_code(third, 503) == "too_many_sessions"
        # An open session still runs.
        assert http.post("/agents/a/chat", json=chat_input("one", "x")).status_code == 200


_SERVE_SCRIPT = """
import robota
from robota.serve import create_app, serve
from robota.serve._server import is_loopback_host
from robota.testing import ScriptedProvider

app = create_app({"a": lambda: robota.Agent("m", provider=ScriptedProvider(["served"]))})
serve(app, port=0, log_level="info")
"""


def test_serve_binds_loopback_by_default_and_serves(tmp_path: Path) -> None:
    script = tmp_path / "serve_it.py"
    script.write_text(_SERVE_SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [sys.executable, str(script)], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stderr is not None
        address = None
        for line in process.stderr:
            found = re.search(r"running on http://([\d.]+):(\d+)", line)
            if found:
                address = found.groups()
                break
        assert address is not None, "uvicorn never said where it listens"
        host, port = address
        assert host == "127.0.0.1"
        with client(f"http://127.0.0.1:{port}") as http:
            response = http.post("/agents/a/chat", json=chat_input("c", "hi"))
        assert ui_stream([e.data for e in sse_events(response.text.splitlines())]).text == "served"
    finally:
        process.terminate()
        process.wait(15)
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("localhost.example.com", False),
    ],
)
def test_only_loopback_hosts_may_be_bound_without_a_token(host: str, loopback: bool) -> None:
    if loopback:
        assert is_loopback_host(host)
    else:
        assert not is_loopback_host(host)
        with pytest.raises(robota.ConfigurationError, match="without a token"):
            serve(_app(), host=host, port=0)  # type: ignore[arg-type]


def test_a_deeply_nested_body_is_a_400_not_a_server_error() -> None:
    # Regression: json.loads raised RecursionError (not ValueError) on a 400 kB body of
    # nested arrays, and the app answered a 500 and dropped the connection.
    deep = b"[" * 200_000 + b"]" * 200_000
    state = b"[" * 200 + b"]" * 200  # parses, but too deep to validate and echo safely
    agui_body = json.dumps(agui_input("t-deep", "hi")).encode()
    agui_body = agui_body[:-1] + b', "state": ' + state + b"}"
    with running(_app()) as url, client(url) as http:  # type: ignore[arg-type]
        for path, body in (("chat", deep), ("agui", deep), ("agui", agui_body)):
            response = http.post(f"/agents/a/{path}", content=body)
            assert _error_code(response, 400) == "too_deep"
        shallow = agui_body.replace(state, b"[[[1]]]")
        assert http.post("/agents/a/agui", content=shallow).status_code == 200
        _still_serving(http)


def test_a_cross_site_simple_post_cannot_run_the_agent() -> None:
    # Regression: a web page could POST a "simple" request (text/plain, no preflight) to a
    # loopback server; the browser hid the answer, but the agent ran the page's prompt.
    seen: list[str] = []

    def factory() -> robota.Agent:
        seen.append("built")
        return robota.Agent("m", provider=ScriptedProvider(["ok"] * 5))

    body = json.dumps(chat_input("csrf", "delete everything")).encode()
    simple = {"content-type": "text/plain", "origin": "https://evil.example"}
    app = create_app({"a": factory}, cors_origins=["https://app.example"])
    with running(app) as url, client(url) as http:
        for path in ("/agents/a/chat", "/agents/a/agui", "/agents/a/sessions/csrf/cancel"):
            assert _error_code(http.post(path, content=body, headers=simple), 403) == (
                "origin_not_allowed"
            )
        for origin in ("null", url.replace("127.0.0.1", "localhost")):
            refused = http.post("/agents/a/chat", content=body, headers={"origin": origin})
            assert _error_code(refused, 403) == "origin_not_allowed"
        assert seen == []
        listed = http.post(
            "/agents/a/chat", content=body, headers={"origin": "https://app.example"}
        )
        assert listed.status_code == 200
        same = http.post(
            "/agents/a/chat", json=chat_input("own-page", "hi"), headers={"origin": url}
        )
        assert same.status_code == 200
        _still_serving(http)
    # cors_origins=["*"] opens the app to every site, for CORS and this check alike (the body
    # must still be declared JSON: a text/plain one is refused with 415 whatever the origin).
    with running(_app(cors_origins=["*"])) as url, client(url) as http:  # type: ignore[arg-type]
        anyone = http.post(
            "/agents/a/chat",
            content=body,
            headers={"content-type": "application/json", "origin": "https://evil.example"},
        )
        assert anyone.status_code == 200
        assert http.post("/agents/a/chat", content=body, headers=simple).status_code == 415


def test_a_loopback_only_app_refuses_a_peer_from_another_machine() -> None:
    # Regression: the app run by hand on `uvicorn --host 0.0.0.0` (no serve(), so no bind
    # check) answered any LAN peer that sent `Host: 127.0.0.1`. A peer from another address
    # is shown to the app here by uvicorn's proxy headers, trusted for this test only.
    import socket
    import threading

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    config = uvicorn.Config(
        _app(),  # type: ignore[arg-type]
        log_level="warning",
        proxy_headers=True,
        forwarded_allow_ips="*",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive()
            threading.Event().wait(0.01)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with client(url) as http:
            lan = {"x-forwarded-for": "192.168.1.23"}
            remote = http.post("/agents/a/chat", json=chat_input("lan", "x"), headers=lan)
            assert _error_code(remote, 403) == "client_not_allowed"
            local = {"x-forwarded-for": "127.0.0.1"}
            assert (
                http.post("/agents/a/chat", json=chat_input("lan", "x"), headers=local).status_code
                == 200
            )
            _still_serving(http)
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def test_a_lone_surrogate_in_the_models_text_does_not_break_either_stream() -> None:
    # Regression: the UI message stream ended mid-body (UnicodeEncodeError while writing) and
    # the AG-UI run failed with internal_error when the model's text held a lone surrogate.
    app = create_app(
        {"a": lambda: robota.Agent("m", provider=ScriptedProvider(["bad \ud800 text"] * 3))}
    )
    with running(app) as url, client(url) as http:
        chat = http.post("/agents/a/chat", json=chat_input("s", "hi"))
        assert (
            ui_stream([e.data for e in sse_events(chat.text.splitlines())]).text
            == "bad \ufffd text"
        )
        again = http.get("/agents/a/sessions/s/stream")
        assert ui_stream([e.data for e in sse_events(again.text.splitlines())]).text == (
            "bad \ufffd text"
        )
        events = agui(
            sse_events(http.post("/agents/a/agui", json=agui_input("t", "hi")).text.splitlines())
        )
        assert events[-1].type == "RUN_FINISHED"
        deltas = "".join(e.delta for e in events if e.type == "TEXT_MESSAGE_CONTENT")  # type: ignore[attr-defined]
        assert deltas == "bad \ufffd text"
