"""``robota web``: the real command serves the web console for an agent on 127.0.0.1."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import httpx2
import pytest

from cli._support import announced_server

AGENT_MODULE = """
import robota
from robota.testing import ScriptedProvider


def make():
    return robota.Agent(name="helper", provider=ScriptedProvider(["hi from the web"]), model="m")


NOT_AN_AGENT = 42

one = robota.Agent(name="one", provider=ScriptedProvider(["first", "second", "third"]), model="m")
"""

COMMAND = [sys.executable, "-m", "robota", "web"]


@pytest.fixture
def served(workdir: pathlib.Path) -> pathlib.Path:
    (workdir / "web_agent.py").write_text(AGENT_MODULE)
    return workdir


def test_robota_web_serves_the_console_and_the_agent_on_loopback(
    served: pathlib.Path, env: dict[str, str]
) -> None:
    with announced_server(
        [*COMMAND, "--agent", "web_agent:make", "--port", "0"],
        cwd=served,
        env=env,
        announces="the Robota web console is at ",
    ) as url:
        assert url.startswith("http://127.0.0.1:")
        with httpx2.Client(base_url=url, timeout=30) as http:
            page = http.get("/")
            assert page.status_code == 200
            assert "default-src 'self'" in page.headers["content-security-policy"]
            assert http.get("/console/agents").json() == {"agents": ["make"], "journal": False}
            chat = {
                "id": "s1",
                "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
            }
            streamed = http.post("/agents/make/chat", json=chat).text
        datas = [line[5:].strip() for line in streamed.splitlines() if line.startswith("data:")]
        deltas = [json.loads(d).get("delta", "") for d in datas[:-1]]
        assert "".join(deltas) == "hi from the web"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "web_agent:NOT_AN_AGENT"], "must be a robota.Agent"),
        (["--agent", "no_such_module:agent"], "cannot import"),
        (["--agent", "web_agent:make", "--port", "70000"], "--port must be 0 to 65535"),
    ],
)
def test_robota_web_bad_input_is_one_error_line(
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
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_robota_web_never_shares_one_agent_object_between_sessions(
    served: pathlib.Path, env: dict[str, str]
) -> None:
    # One Agent object holds one conversation: a second session must not continue (and see)
    # the first one's history, nor run concurrently on the same object (as robota serve).
    with announced_server(
        [*COMMAND, "--agent", "web_agent:one", "--port", "0"],
        cwd=served,
        env=env,
        announces="the Robota web console is at ",
    ) as url:

        def chat(session: str) -> httpx2.Response:
            body = {
                "id": session,
                "messages": [{"role": "user", "parts": [{"type": "text", "text": "secret"}]}],
            }
            return http.post("/agents/one/chat", json=body)

        with httpx2.Client(base_url=url, timeout=30) as http:
            assert chat("s1").status_code == 200
            other = chat("s2")
            assert other.status_code == 500, other.text
            assert other.json()["error"]["code"] == "agent_unavailable"
            assert chat("s1").status_code == 200  # the first session still serves
