"""``robota temporal worker``: a Temporal worker for agents named in a Python module.

``--agents module:attr`` names a mapping of agent name → factory (a callable returning a fresh
:class:`robota.Agent`); the module is imported as the worker starts. ``--journal`` gives the
execution journal every worker shares (``sqlite:PATH`` or ``postgres:DSN``), which makes tool
effects exactly-once (S40). The worker runs until SIGTERM or SIGINT, then shuts down gracefully.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import signal
import sys
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from robota.cli._errors import USAGE, CliError, one_line
from robota.core import ExecutionJournal, install_command

__all__ = ["load_agents", "open_journal", "worker_command"]


def load_agents(spec: str) -> Mapping[str, Any]:
    """The mapping ``module:attr`` names.

    Raises:
        CliError: for a malformed spec, a module that fails to import, a missing attribute or
            a value that is not a non-empty mapping.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise CliError(f"--agents must be module:attr (e.g. myapp.agents:AGENTS), got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is the user's module's
        raise CliError(f"--agents: cannot import {module_name!r}: {exc}") from None
    value: object = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise CliError(f"--agents: {module_name!r} has no attribute {attr!r}")
        value = getattr(value, part)
    if not isinstance(value, Mapping) or not value:
        raise CliError(
            f"--agents: {spec} must be a non-empty mapping of agent name → factory, got "
            f"{type(value).__name__}"
        )
    return value


def open_journal(spec: str | None) -> ExecutionJournal | None:
    """The journal ``sqlite:PATH`` or ``postgres:DSN`` names (``None`` for none)."""
    if not spec:
        return None
    kind, _, target = spec.partition(":")
    if kind == "sqlite" and target:
        from robota.host import SQLiteJournal  # noqa: PLC0415

        return SQLiteJournal(target)
    if kind == "postgres" and target:
        from robota.host import PostgresJournal  # noqa: PLC0415

        return PostgresJournal(target)
    raise CliError(f"--journal must be sqlite:PATH or postgres:DSN, got {spec!r}")


def worker_command(
    *,
    agents: str,
    task_queue: str,
    address: str,
    namespace: str,
    journal: str | None,
    graceful_shutdown: float = 30.0,
    sticky_timeout: float = 10.0,
) -> int:
    """Run one worker until SIGTERM/SIGINT; the process exits 0 after a graceful shutdown."""
    for label, value in (
        ("--graceful-shutdown", graceful_shutdown),
        ("--sticky-timeout", sticky_timeout),
    ):
        if not value > 0:
            raise CliError(f"{label} must be a positive number of seconds, got {value}")
    try:
        from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest  # noqa: PLC0415
        from temporalio.client import Client  # noqa: PLC0415

        from robota.temporal import AgentRegistry, create_worker  # noqa: PLC0415
    except ImportError:
        raise CliError(
            f"robota temporal needs the temporalio SDK: {install_command('temporal')}",
            exit_code=USAGE,
        ) from None
    registry = AgentRegistry(load_agents(agents))
    store = open_journal(journal)

    async def serve() -> None:
        try:
            client = await Client.connect(address, namespace=namespace)
        except Exception as exc:  # noqa: BLE001 - the SDK's connect raises RuntimeError
            raise CliError(
                f"cannot reach the Temporal server at {address}: {exc}", exit_code=1
            ) from None
        try:  # a wrong namespace is said now, not as a worker's traceback after "serving"
            await client.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace=namespace)
            )
        except Exception as exc:  # noqa: BLE001 - the SDK raises RPCError
            raise CliError(f"namespace {namespace!r} at {address}: {exc}", exit_code=1) from None
        for name in registry.names:
            try:  # each factory builds once now: a broken one is said before any run needs it
                registry.live(name)
            except Exception as exc:  # noqa: BLE001 - the user's factory may raise anything
                raise CliError(f"agent {name!r}: its factory failed: {exc!r}") from None
        worker = create_worker(
            client,
            task_queue=task_queue,
            agents=registry,
            journal=store,
            graceful_shutdown_timeout=timedelta(seconds=graceful_shutdown),
            sticky_queue_schedule_to_start_timeout=timedelta(seconds=sticky_timeout),
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(number, stop.set)
        async with worker:
            sys.stderr.write(
                f"robota temporal worker: serving {', '.join(registry.names)} on {task_queue!r} at "
                f"{address}\n"
            )
            sys.stderr.flush()
            await stop.wait()
        await registry.aclose()  # the providers' connections
        if store is not None:
            await store.aclose()

    code = 0
    try:
        asyncio.run(serve())
    except CliError as error:
        sys.stderr.write(f"error: {one_line(error.message)}\n")
        code = error.exit_code
    # Once a client has connected, the SDK's own threads can outlive the event loop and crash
    # CPython's finalization ("PyGILState_Release: thread state … must be current",
    # temporalio/sdk-python#300), turning a clean exit into SIGABRT. Everything is closed by
    # now: end the process here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
