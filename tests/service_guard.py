"""Which tests need a service, and the guard that keeps them out of a fast run (importable).

Three services back parts of the suite: a PostgreSQL server (``postgres_dsn``), llama.cpp's
``llama-server`` (``llama_server``), and a Temporal dev server (``temporal_address``). A test that
requests one of those fixtures, directly or through another fixture, is marked ``service`` at
collection (``tests/conftest.py``); a fixture that reaches a service only for some of its
parameters marks those parameters itself (``pytest.param("postgres", marks=pytest.mark.service)``).

``make test-fast`` runs ``pytest -m "not service"`` with ``ROBOTA_TEST_FAST=1``. Under that
variable every place that starts a service calls :func:`refuse_in_fast_run` first, so a test that
reaches a service without carrying the mark errors loudly instead of quietly starting PostgreSQL
or compiling llama.cpp in what was meant to be the quick run.
"""

from __future__ import annotations

import os
from typing import Final

FAST_RUN_ENV: Final = "ROBOTA_TEST_FAST"
SERVICE_MARK: Final = "service"
SERVICE_FIXTURES: Final = frozenset(
    {"postgres_dsn", "llama_server", "smollm2_server", "temporal_address"}
)


class ServiceInFastRunError(RuntimeError):
    """A test reached a service during a fast run: it needs the ``service`` mark."""


def fast_run() -> bool:
    """Whether this session is a fast run (``ROBOTA_TEST_FAST`` set to a non-empty value)."""
    return bool(os.environ.get(FAST_RUN_ENV))


def refuse_in_fast_run(service: str) -> None:
    """Raise :class:`ServiceInFastRunError` if this is a fast run; call before starting ``service``."""
    if fast_run():
        raise ServiceInFastRunError(
            f"{service} was requested during a fast run ({FAST_RUN_ENV}=1, `make test-fast`): "
            f"the test needs the `{SERVICE_MARK}` mark (request one of the fixtures "
            f"{', '.join(sorted(SERVICE_FIXTURES))}, which mark it, or mark it yourself)"
        )
