"""Fixtures for tests against a real llama.cpp ``llama-server`` running the tiny model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from providers.llama._server import LlamaServer


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """One real ``llama-server`` for the whole session, serving the deterministic tiny model.

    The first use on a machine builds the server (about 5 minutes); later sessions start it in
    well under a second. ``base_url`` is ``http://127.0.0.1:PORT/v1``, ``model`` is ``"tiny"``.
    """
    with LlamaServer() as server:
        yield server
