"""``robota serve --agent NAME=MODULE:ATTR``: the real command serves ``create_app`` over HTTP."""

from __future__ import annotations

import json
import pathlib
import secrets
import subprocess
import sys
from contextlib import AbstractContextManager

import httpx2
import pytest

from cli._support import announced_server

AGENT_MODULE = """
import robota
from robota.testing import ScriptedProvider


def make():
    return robota.Agent(
        name="helper", provider=ScriptedProvider(["hi from the served app"]), model="m"
    )


agent = make()
NOT_AN_AGENT = 42
"""

COMMAND = [sys.executable, "-m", "robota", "serve"]


@pytest.fixture
def served(workdir: pathlib.Path) -> pathlib.Path:
    (workdir / "served_agent.py").write_text(AGENT_MODULE)
    return workdir


def _http_process(
    served: pathlib.Path, env: dict[str, str], *args: str
) -> AbstractContextManager[str]:
    return announced_server(
        [*COMMAND, *args, "--port", "0"], cwd=served, env=env, announces="over HTTP at "
    )


def _chat(url: str, name: str, session_id: str) -> list[dict[str, object]]:
    body = {"id": session_id, "messages": [{"role": "user", "content": "hello"}]}
    with httpx2.Client(base_url=url, timeout=30) as http:
        response = http.post(f"/agents/{name}/chat", json=body)
    assert response.status_code == 200
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    datas = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert datas[-1] == "[DONE]"
    return [json.loads(data) for data in datas[:-1]]


def test_serve_http_streams_a_scripted_answer_from_a_factory(
    served: pathlib.Path, env: dict[str, str]
) -> None:
    with _http_process(
        served, env, "--agent", "helper=served_agent:make", "--agent", "other=served_agent:agent"
    ) as url:
        assert url.startswith("http://127.0.0.1:")
        parts = _chat(url, "helper", "s1")
        # Each session gets its own agent from the factory: a second session answers too.
        again = _chat(url, "helper", "s2")
        with httpx2.Client(base_url=url, timeout=30) as http:
            unknown = http.post("/agents/nobody/chat", json={"id": "x", "messages": []})
    for stream in (parts, again):
        text = "".join(str(p["delta"]) for p in stream if p["type"] == "text-delta")
        assert text == "hi from the served app"
        assert stream[-1]["type"] == "finish"
    assert unknown.status_code == 404


def test_an_agent_object_serves_one_session_only(served: pathlib.Path, env: dict[str, str]) -> None:
    with _http_process(served, env, "--agent", "one=served_agent:agent") as url:
        parts = _chat(url, "one", "first")
        with httpx2.Client(base_url=url, timeout=30) as http:
            body = {"id": "second", "messages": [{"role": "user", "content": "hello"}]}
            second = http.post("/agents/one/chat", json=body)
    assert parts[-1]["type"] == "finish"
    # One Agent object holds one conversation; another session never shares it.
    assert second.status_code == 500
    assert second.json()["error"]["code"] == "agent_unavailable"


def test_serve_http_keeps_sessions_in_a_sessions_db(
    served: pathlib.Path, env: dict[str, str]
) -> None:
    db = served / "sessions.db"
    with _http_process(
        served, env, "--agent", "helper=served_agent:make", "--sessions-db", str(db)
    ) as url:
        parts = _chat(url, "helper", "kept")
    assert parts[-1]["type"] == "finish"
    listed = subprocess.run(
        [sys.executable, "-m", "robota", "sessions", "list", "--sessions-db", str(db)],
        cwd=served,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert "kept" in listed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "helper=served_agent:NOT_AN_AGENT"], "must be a robota.Agent"),
        (["--agent", "helper=no_such_module:make"], "cannot import"),
        (["--agent", "served_agent:make"], "must be NAME=MODULE:ATTR"),
        (["--agent", "a=served_agent:make", "--agent", "a=served_agent:make"], "given twice"),
        (["--agent", "helper=served_agent:make", "--host", "0.0.0.0"], "ROBOTA_SERVE_TOKEN"),  # noqa: S104
        (["--agent", "helper=served_agent:make", "--port", "70000"], "--port must be"),
        (["--agent", "helper=served_agent:make", "--http", "127.0.0.1:0"], "go with --mcp"),
        (["--mcp", "--agent", "served_agent:make", "--port", "0"], "are for HTTP"),
        (
            ["--agent", "helper=served_agent:make", "--cors-origin", "*"],
            "--cors-origin must be an origin",
        ),
    ],
)
def test_serve_http_bad_input_is_one_error_line(
    served: pathlib.Path, env: dict[str, str], args: list[str], message: str
) -> None:
    done = subprocess.run(
        [*COMMAND, *args],
        cwd=served,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ")
    assert message in done.stderr.lower() or message in done.stderr
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_serve_http_requires_the_token_from_the_environment(
    served: pathlib.Path, env: dict[str, str]
) -> None:
    token = secrets.token_urlsafe()
    with _http_process(
        served, {**env, "ROBOTA_SERVE_TOKEN": token}, "--agent", "helper=served_agent:make"
    ) as url:
        body = {"id": "s", "messages": [{"role": "user", "content": "hello"}]}
        with httpx2.Client(base_url=url, timeout=30) as http:
            missing = http.post("/agents/helper/chat", json=body)
            wrong = http.post(
                "/agents/helper/chat", json=body, headers={"authorization": "Bearer nope"}
            )
            right = http.post(
                "/agents/helper/chat", json=body, headers={"authorization": f"Bearer {token}"}
            )
    assert (missing.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert token not in missing.text + wrong.text
    assert right.text.endswith("data: [DONE]\n\n")


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.9.9.9", "localhost", "LOCALHOST", "::1", "[::1]"]
)
def test_a_loopback_host_in_any_spelling_needs_no_token(host: str) -> None:
    # Regression: `--host [::1]` (the bracketed form a URL uses) was read as not loopback, so
    # the command asked for a token that a loopback bind does not need.
    from robota.cli._serve import _loopback

    assert _loopback(host)


@pytest.mark.parametrize(
    "host",
    ["0.0.0.0", "::", "[::]", "10.0.0.1", "example.com", "[::2]"],  # noqa: S104 - the point
)
def test_a_host_beyond_loopback_needs_the_token(host: str) -> None:
    from robota.cli._serve import _loopback

    assert not _loopback(host)
