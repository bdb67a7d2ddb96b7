"""Issue 28: one place owns retries — with a RetryPolicy, an adapter the agent built from a model
string does not retry underneath it (its SDK's retries are off), so the policy's attempts are the
requests the server sees. A real HTTP server on 127.0.0.1 answers every chat call with 503.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest

import robota
from robota.testing import ScriptedProvider


class _Unavailable(http.server.BaseHTTPRequestHandler):
    posts: list[str]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        type(self).posts.append(self.path)
        body = json.dumps({"error": {"message": "overloaded", "type": "server_error"}}).encode()
        self.send_response(503)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def unavailable() -> Iterator[tuple[str, list[str]]]:
    posts: list[str] = []
    handler = type("Handler", (_Unavailable,), {"posts": posts})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", posts
    finally:
        server.shutdown()
        server.server_close()


async def test_S42_with_a_policy_the_built_adapter_leaves_retries_to_it(
    unavailable: tuple[str, list[str]],
) -> None:
    base_url, posts = unavailable
    policy = robota.RetryPolicy(attempts=2, initial_delay=0.001, jitter=0.0)
    async with robota.Agent(
        model="openai-compatible:some-model", base_url=base_url, api_key="k", retry=policy
    ) as agent:
        with pytest.raises(robota.ProviderError) as raised:
            await agent.run("hi")
    assert raised.value.status == 503
    chat = [path for path in posts if path.endswith("/chat/completions")]
    assert len(chat) == 2  # the policy's two attempts, no SDK retry under either


async def test_S30_a_fallback_model_string_builds_an_owned_adapter_without_sdk_retries(
    unavailable: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, posts = unavailable
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", base_url)
    overloaded = robota.ProviderError("overloaded", status=529)
    primary = ScriptedProvider([overloaded, overloaded], name="primary")
    policy = robota.RetryPolicy(attempts=2, initial_delay=0.001, jitter=0.0)
    recorder = robota.RecordingEventService()
    async with robota.Agent(
        provider=primary,
        model="big",
        fallback=["openai-compatible:small"],
        retry=policy,
        event_service=recorder,
    ) as agent:
        with pytest.raises(robota.ProviderError) as raised:
            await agent.run("hi")
    assert raised.value.status == 503
    (switch,) = [e for e in recorder.events if e.name == robota.EventNames.MODEL_FALLBACK]
    assert (switch.data["provider"], switch.data["to_provider"]) == ("primary", "openai-compatible")
    assert switch.data["to_model"] == "small"
    # The policy's two attempts on each model (529 is recoverable), and the built fallback's
    # SDK retried under neither of its own.
    assert len(primary.requests) == 2
    chat = [path for path in posts if path.endswith("/chat/completions")]
    assert len(chat) == 2


async def test_S42_after_a_run_policy_turned_sdk_retries_off_later_runs_keep_the_default_policy(
    unavailable: tuple[str, list[str]],
) -> None:
    # Review finding: a run's retry= turns the built adapter's SDK retries off for good; a later
    # run without a policy of its own must not be left with no retries at all: the agent takes
    # the default RetryPolicy (3 attempts) in their place.
    base_url, posts = unavailable
    fast = robota.RetryPolicy(attempts=2, initial_delay=0.001, jitter=0.0)
    async with robota.Agent(
        model="openai-compatible:some-model", base_url=base_url, api_key="k"
    ) as agent:
        assert agent.retry is None
        with pytest.raises(robota.ProviderError):
            await agent.run("hi", retry=fast)
        assert agent.retry == robota.RetryPolicy()
        posts.clear()
        with pytest.raises(robota.ProviderError):
            await agent.run("again")
    chat = [path for path in posts if path.endswith("/chat/completions")]
    assert len(chat) == robota.RetryPolicy().attempts
