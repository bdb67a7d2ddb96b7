"""Serving overhead (issue 31): a streamed token over HTTP against the same run in-process.

1. **Per token**: one agent whose model streams ``TOKENS`` text deltas at once (no latency).
   In-process: ``async for event in agent.run_stream(...)`` to the end. Served: the same agent
   behind :func:`robota.serve.create_app` on a real uvicorn server on 127.0.0.1, one
   ``POST /agents/bench/chat`` read to ``[DONE]`` with ``httpx2`` (the UI message stream, one
   SSE event per delta). Samples interleaved (in-process, served …), each figure the median;
   the goal line is served ÷ in-process per token (issue 31: ≤ 1.5×).
2. **Concurrent sessions**: ``SESSIONS`` chats streamed at once through one worker, each its own
   session; the wall time, and the memory the app keeps per finished session (its agent, its
   conversation and the run's event buffer), by tracemalloc around the app alone driven over
   ``httpx2.ASGITransport`` (no server or client sockets in the measured window).

``python benchmarks/serve_stream.py`` prints the table; the exit status is 0 when the per-token
goal is met.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import AsyncIterator

import httpx2
import uvicorn

import robota
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream
from robota.serve import create_app

TOKENS = 2_000
SAMPLES = 7
SESSIONS = 200
GOAL = 1.5


class Tokens(robota.Provider):
    """Streams ``count`` one-word deltas at once."""

    name = "bench"

    def __init__(self, count: int) -> None:
        self._count = count

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        for index in range(self._count):
            yield robota.TextDelta(f"t{index} ")
        yield robota.ResponseDone(
            model="bench-model", usage=robota.Usage.from_counts(prompt=1, completion=1)
        )


def _agent(count: int = TOKENS) -> robota.Agent:
    return robota.Agent("bench-model", provider=Tokens(count))


async def _in_process() -> float:
    agent = _agent()
    start = time.perf_counter()
    async with agent.run_stream("go", fresh_conversation=True) as stream:
        async for _ in stream:
            pass
        await stream.result()
    elapsed = time.perf_counter() - start
    await agent.aclose()
    return elapsed


def _served(http: httpx2.Client, n: int) -> float:
    body = {
        "id": f"s{n}",
        "messages": [{"role": "user", "parts": [{"type": "text", "text": "go"}]}],
    }
    start = time.perf_counter()
    with http.stream("POST", "/agents/bench/chat", json=body) as response:
        for _ in response.iter_lines():
            pass
    return time.perf_counter() - start


def per_token() -> tuple[float, float]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(
        uvicorn.Config(create_app({"bench": _agent}), log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    ours: list[float] = []
    bare: list[float] = []
    try:
        with httpx2.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}") as http:
            _served(http, -1)  # warm up
            for n in range(SAMPLES):
                bare.append(asyncio.run(_in_process()))
                ours.append(_served(http, n))
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
    return statistics.median(bare) / TOKENS, statistics.median(ours) / TOKENS


async def concurrent() -> tuple[float, float]:
    app = create_app({"bench": lambda: _agent(50)}, max_sessions=SESSIONS + 1)
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:

        async def chat(n: int) -> None:
            body = {"id": f"c{n}", "messages": [{"role": "user", "content": "go"}]}
            response = await http.post("/agents/bench/chat", json=body)
            assert response.text.endswith("data: [DONE]\n\n"), response.text[-200:]

        await chat(-1)  # warm up
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        await asyncio.gather(*(chat(n) for n in range(SESSIONS)))
        wall = time.perf_counter() - start
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    return wall, (after - before) / SESSIONS


def main() -> bool:
    bare, ours = per_token()
    ratio = ours / bare
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    print(f"per streamed token, {TOKENS} tokens, median of {SAMPLES}")
    print(f"  in-process run_stream   {bare * 1e6:8.2f} µs")
    print(
        f"  served (UI stream, SSE) {ours * 1e6:8.2f} µs   {ratio:.2f}×  goal ≤ {GOAL}×  {verdict}"
    )
    wall, per_session = asyncio.run(concurrent())
    print(f"{SESSIONS} concurrent streamed sessions (50 tokens each), one worker")
    print(f"  wall {wall * 1e3:.0f} ms; kept per finished session {per_session / 1024:.1f} KiB")
    return ratio <= GOAL


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
