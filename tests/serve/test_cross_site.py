"""Cross-site requests (issue 31: security by default) against a loopback-only app.

A page on another origin can send "simple" requests (``text/plain`` or form bodies, no custom
header) to ``127.0.0.1`` without a CORS preflight: it cannot read the answer, but the request
still reaches the app. The app must refuse a POST whose ``Origin`` is neither its own nor a
listed CORS origin, and a JSON endpoint must refuse a body that is not declared JSON — or any
web page the developer visits could start a chat run or answer a permission ask.
"""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

import robota
from robota.serve import create_app
from robota.testing import ScriptedProvider
from serve.support import chat_input, client, running

CHROMIUM = "/usr/bin/chromium"
EVIL = "https://evil.example"


def _app(**options: object) -> object:
    return create_app(
        {"a": lambda: robota.Agent("m", provider=ScriptedProvider(["ok"] * 5))},
        **options,  # type: ignore[arg-type]
    )


def _sessions(http: object) -> list[object]:
    # Which of the sessions these tests name were opened: a stream read is 404 for one never
    # opened (the listing endpoint is the console's only).
    names = ("csrf", "plain", "from-evil", "d")
    return [n for n in names if http.get(f"/agents/a/sessions/{n}/stream").status_code != 404]  # type: ignore[attr-defined]


def _code(response: object, status: int) -> str:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    return str(response.json()["error"]["code"])  # type: ignore[attr-defined]


def test_a_post_from_another_origin_is_refused_and_starts_no_run() -> None:
    body = json.dumps(chat_input("csrf", "run rm -rf"))
    with running(_app()) as url, client(url) as http:  # type: ignore[arg-type]
        simple = {"origin": EVIL, "content-type": "text/plain;charset=UTF-8"}
        assert _code(http.post("/agents/a/chat", content=body, headers=simple), 403) == (
            "origin_not_allowed"
        )
        as_json = {"origin": EVIL, "content-type": "application/json"}
        assert _code(http.post("/agents/a/chat", content=body, headers=as_json), 403) == (
            "origin_not_allowed"
        )
        null = {"origin": "null", "content-type": "text/plain"}
        assert _code(http.post("/agents/a/agui", content=body, headers=null), 403) == (
            "origin_not_allowed"
        )
        for path in ("cancel", "approvals/ask-1"):
            refused = http.post(f"/agents/a/sessions/csrf/{path}", headers={"origin": EVIL})
            assert _code(refused, 403) == "origin_not_allowed"
        assert _sessions(http) == []
        # The app's own origin (the console's page) and a client sending none are served.
        own = http.post("/agents/a/chat", json=chat_input("own", "hi"), headers={"origin": url})
        assert own.status_code == 200
        assert http.post("/agents/a/chat", json=chat_input("none", "hi")).status_code == 200


def test_a_json_endpoint_refuses_a_body_not_declared_json() -> None:
    body = json.dumps(chat_input("plain", "hi"))
    with running(_app()) as url, client(url) as http:  # type: ignore[arg-type]
        for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
            refused = http.post("/agents/a/chat", content=body, headers={"content-type": media})
            assert _code(refused, 415) == "unsupported_media_type"
        assert _sessions(http) == []
        typed = {"content-type": "application/json; charset=utf-8"}
        assert http.post("/agents/a/chat", content=body, headers=typed).status_code == 200


def test_a_listed_cors_origin_may_post() -> None:
    app = _app(cors_origins=["https://app.example"])
    with running(app) as url, client(url) as http:  # type: ignore[arg-type]
        listed = {"origin": "https://app.example"}
        response = http.post("/agents/a/chat", json=chat_input("c", "hi"), headers=listed)
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "https://app.example"
        assert (
            _code(
                http.post("/agents/a/chat", json=chat_input("d", "hi"), headers={"origin": EVIL}),
                403,
            )
            == "origin_not_allowed"
        )


def _evil_site() -> Starlette:
    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>evil</title><p>nothing to see</p>")

    return Starlette(routes=[Route("/", page)])


def test_a_page_on_another_origin_cannot_start_a_run_in_a_real_browser() -> None:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium")
    from playwright.sync_api import sync_playwright

    with (
        running(_app()) as url,  # type: ignore[arg-type]
        running(_evil_site()) as evil_url,
        sync_playwright() as p,
        client(url) as http,
    ):
        # Another port of 127.0.0.1 is another origin: evil_url's page attacks url.
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page()
            page.goto(evil_url + "/")
            page.evaluate(
                """async ([target, body]) => {
                    const simple = {method: "POST", mode: "no-cors", body: body};
                    await fetch(target + "/agents/a/chat",
                        {...simple, headers: {"content-type": "text/plain"}});
                    await fetch(target + "/agents/a/chat", {...simple, body: new Blob([body])});
                }""",
                [url, json.dumps(chat_input("from-evil", "hi"))],
            )
        finally:
            browser.close()
        assert _sessions(http) == []


def test_session_ids_are_listed_only_by_the_console() -> None:
    # A session id is what guards a session's stream, cancel and approvals: an app serving
    # clients (not the local console) never lists them to whoever asks.
    token = secrets.token_urlsafe()
    with running(_app(token=token)) as url:  # type: ignore[arg-type]
        auth = {"authorization": f"Bearer {token}"}
        with client(url, headers=auth) as http:
            assert http.post("/agents/a/chat", json=chat_input("alice", "hi")).status_code == 200
            assert http.get("/agents/a/sessions").status_code == 404
    with running(_app(console=True)) as url, client(url) as http:  # type: ignore[arg-type]
        assert http.post("/agents/a/chat", json=chat_input("alice", "hi")).status_code == 200
        listed = http.get("/agents/a/sessions").json()
        assert listed == {"sessions": [{"id": "alice", "running": False}]}
