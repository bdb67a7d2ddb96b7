"""Peak memory of a 20 MB image on its way to each vendor SDK (issue 26).

The claim measured: image bytes are never copied more than once between the caller and the SDK.
For each adapter — OpenAI Chat Completions, OpenAI Responses, Anthropic, Gemini — under its real
SDK, against a local HTTP server on 127.0.0.1 that runs in a child process (so the server's own
reading of the 27 MB body is not counted), an agent runs with a 20 MB PNG:

* **1 round**: the image and a question, a text answer;
* **3 rounds**: the same, with two tool calls before the answer (the image is sent each round).

``tracemalloc`` starts after the caller has built the part (the caller's bytes are not counted)
and traces the run. The SDK's request method is wrapped so the peak is split in two:

* **ours**: the peak from the run's start until the SDK method is entered, in every round (the
  loop, the context estimate, the adapter's wire mapping);
* **SDK**: the peak while the SDK method runs (its serialisation to JSON and then to bytes,
  plus what ours still holds: the wire form it was handed).

Figures are multiples of the image size. Allocation counts under ``tracemalloc`` are
deterministic, so these numbers do not drift between runs the way timings do.

Target (PASS/FAIL): *ours* holds at most one copy of the wire form — for a base64 wire (OpenAI,
Anthropic) the base64 text, 4/3 of the image, so ours ≤ 1.40× (the 4/3 plus a few hundred KB of
encoding window); for Gemini, whose SDK takes the bytes themselves, ours ≤ 0.05×. The SDK's own
copies are outside robota's control and only reported.

Run: ``.venv/bin/python benchmarks/media_memory.py`` (also part of ``make bench``).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import http.server
import json
import random
import struct
import subprocess
import sys
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import robota

IMAGE_SIZE = 20_000_000
BASE64_TARGET = 1.40
BYTES_TARGET = 0.05
_MARK = b"echoed-"


def make_image(size: int = IMAGE_SIZE) -> bytes:
    """A PNG of ``size`` bytes: a real 4000×3000 header, then deterministic filler."""
    header = struct.pack(">IIBBBBB", 4000, 3000, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    head = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk
    head += struct.pack(">I", zlib.crc32(chunk))
    return head + random.Random(0).randbytes(size - len(head))


@robota.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echoed-{text}"


# ------------------------------------------------------------------ the server (child process)


def _call_reply(path: str, count: int) -> dict[str, Any]:
    arguments = json.dumps({"text": f"t{count}"})
    call_id = f"call_{count}"
    if path.endswith("/chat/completions"):
        function = {"name": "echo", "arguments": arguments}
        call = {"id": call_id, "type": "function", "function": function}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return _chat(message, "tool_calls")
    if path.endswith("/responses"):
        item = {
            "type": "function_call",
            "id": f"fc_{count}",
            "call_id": call_id,
            "name": "echo",
            "arguments": arguments,
            "status": "completed",
        }
        return _responses(item)
    if path.endswith("/messages"):
        block = {"type": "tool_use", "id": call_id, "name": "echo", "input": {"text": f"t{count}"}}
        return _anthropic(block, "tool_use")
    part = {"functionCall": {"name": "echo", "args": {"text": f"t{count}"}}}
    return _gemini(part)


def _text_reply(path: str) -> dict[str, Any]:
    if path.endswith("/chat/completions"):
        return _chat({"role": "assistant", "content": "a picture"}, "stop")
    if path.endswith("/responses"):
        content = [{"type": "output_text", "text": "a picture", "annotations": []}]
        item = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": content,
        }
        return _responses(item)
    if path.endswith("/messages"):
        return _anthropic({"type": "text", "text": "a picture"}, "end_turn")
    return _gemini({"text": "a picture"})


def _chat(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def _responses(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-4o",
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 2,
            "total_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _anthropic(block: dict[str, Any], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }


def _gemini(part: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
        "modelVersion": "gemini-2.5-flash",
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers a tool call until the request holds ``rounds=N``'s N - 1 tool results."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        path = self.path.split("?", 1)[0]
        wanted = 3 if b"rounds=3" in body else 1
        done = body.count(_MARK)
        reply = _call_reply(path, done) if done < wanted - 1 else _text_reply(path)
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve() -> None:
    """Serve on 127.0.0.1 (a free port, printed on stdout) until stdin closes."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


# ------------------------------------------------------------------ the client (this process)


class _Probe:
    """Splits tracemalloc's peak at the SDK method's entry and exit."""

    def __init__(self) -> None:
        self.ours = 0
        self.sdk = 0
        self.calls = 0

    def wrap(self, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(method)  # keeps the signature the adapter inspects (S28)
        async def measured(*args: Any, **kwargs: Any) -> Any:
            if tracemalloc.is_tracing():
                self.ours = max(self.ours, tracemalloc.get_traced_memory()[1])
                tracemalloc.reset_peak()
            try:
                return await method(*args, **kwargs)
            finally:
                if tracemalloc.is_tracing():
                    self.calls += 1
                    self.sdk = max(self.sdk, tracemalloc.get_traced_memory()[1])
                    tracemalloc.reset_peak()

        return measured


def _provider(adapter: str, base_url: str, probe: _Probe) -> tuple[robota.Provider, str]:
    if adapter == "gemini":
        from robota.providers.gemini import GeminiProvider

        gemini = GeminiProvider(
            api_key="k", http_options={"base_url": base_url + "/"}, streaming=False
        )
        models = gemini._client.aio.models
        models.generate_content = probe.wrap(models.generate_content)
        return gemini, "gemini-2.5-flash"
    if adapter == "anthropic":
        from robota.providers.anthropic import AnthropicProvider

        anthropic = AnthropicProvider(
            api_key="k", base_url=base_url, max_retries=0, streaming=False
        )
        messages = anthropic._client.messages
        messages.create = probe.wrap(messages.create)  # type: ignore[method-assign]
        return anthropic, "claude-sonnet-4-5"
    from robota.providers.openai import OpenAIProvider

    api = "chat" if adapter == "openai-chat" else "responses"
    openai = OpenAIProvider(
        api_key="k", base_url=base_url + "/v1", api=api, max_retries=0, streaming=False
    )
    client = openai._client
    resource = client.chat.completions if api == "chat" else client.responses
    resource.create = probe.wrap(resource.create)  # type: ignore[method-assign]
    return openai, "gpt-4o"


@dataclass(frozen=True)
class Figure:
    adapter: str
    rounds: int
    ours: float
    sdk: float
    sdk_calls: int
    target: float

    @property
    def passed(self) -> bool:
        return self.ours <= self.target


ADAPTERS = ("openai-chat", "openai-responses", "anthropic", "gemini")


async def measure(adapter: str, rounds: int, base_url: str, image: bytes) -> Figure:
    """One run with ``image`` under tracemalloc (see the module docstring)."""
    probe = _Probe()
    provider, model = _provider(adapter, base_url, probe)
    tools = [echo] if rounds > 1 else []
    warm = robota.Agent(provider=provider, model=model, tools=tools)
    await warm.run("warm up")  # lazy imports and the connection, outside the measurement
    agent = robota.Agent(provider=provider, model=model, tools=tools)
    question = robota.TextPart(f"What is this? rounds={rounds}")
    parts = [question, robota.ImagePart(image, "image/png")]
    gc.collect()
    tracemalloc.start()
    try:
        result = await agent.run(parts)
        probe.ours = max(probe.ours, tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()
        await provider.aclose()
    assert result.rounds == rounds, (adapter, result.rounds)
    assert probe.calls == rounds, (adapter, probe.calls)
    size = len(image)
    return Figure(
        adapter,
        rounds,
        probe.ours / size,
        probe.sdk / size,
        probe.calls,
        BYTES_TARGET if adapter == "gemini" else BASE64_TARGET,
    )


async def measure_all(image: bytes, base_url: str) -> list[Figure]:
    return [
        await measure(adapter, rounds, base_url, image) for adapter in ADAPTERS for rounds in (1, 3)
    ]


def run_with_server(image: bytes) -> list[Figure]:
    """Every figure, against the server started in a child process for the duration."""
    child = subprocess.Popen(  # noqa: S603 - this interpreter, this file, fixed arguments
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        port = child.stdout.readline().strip()
        return asyncio.run(measure_all(image, f"http://127.0.0.1:{port}"))
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=10)


def main() -> bool:
    """Print the figures; ``True`` when every adapter meets its target."""
    image = make_image()
    figures = run_with_server(image)
    print(
        f"\nMedia memory (issue 26): a {len(image) / 1e6:.0f} MB image, peak Python allocation "
        "after the part is built, as a multiple of the image size"
    )
    print(f"  {'adapter':<18}{'rounds':>7}{'ours':>8}{'SDK':>8}{'target':>10}")
    ok = True
    for f in figures:
        verdict = "PASS" if f.passed else "FAIL"
        ok = ok and f.passed
        figures_text = f"{f.ours:>7.2f}×{f.sdk:>7.2f}×   ≤{f.target:.2f}×"
        print(f"  {f.adapter:<18}{f.rounds:>7}{figures_text}  {verdict}")
    print(
        "  ours: until the SDK method is entered (one base64 copy is 1.33×); SDK: while it "
        "serialises (its own copies, plus the wire form ours handed it)"
    )
    return ok


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        sys.exit(0 if main() else 1)
