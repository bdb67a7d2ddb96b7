"""Fixtures for the fault tests (issue 28): a scripted fault server and the vendor under test."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from providers.faults.vendors import VENDORS, FaultServer, Vendor
from providers.replay import Exchange, ReplayServer


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    """Start a server on 127.0.0.1 (an ephemeral port) that answers the N-th request with the
    N-th exchange of the script it is given; every server started is stopped after the test."""
    servers: list[ReplayServer] = []

    def start(script: Sequence[Exchange]) -> ReplayServer:
        server = ReplayServer(script).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(params=sorted(VENDORS))
def vendor(request: pytest.FixtureRequest) -> Vendor:
    """Each vendor API in turn: OpenAI Chat Completions and Responses, Anthropic, Gemini, and
    an OpenAI-compatible server (OpenRouter's error format)."""
    return VENDORS[str(request.param)]
