"""The worker factory: one Temporal worker that runs Robota workflows and their activities.

Internal; re-exported by :mod:`robota.temporal`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.worker import Replayer, Worker

from robota.core import ConfigurationError, ExecutionJournal
from robota.temporal._activities import AgentFactory, AgentRegistry, RobotaActivities
from robota.temporal._workflow import RobotaAgentWorkflow, bind_registry

__all__ = ["create_replayer", "create_worker"]


def create_worker(
    client: Client,
    *,
    task_queue: str,
    agents: Mapping[str, AgentFactory] | AgentRegistry,
    journal: ExecutionJournal | None = None,
    **options: Any,
) -> Worker:
    """A Temporal worker for the registered agents: their workflow and both activities.

    Run it with ``await worker.run()`` or ``async with worker:``. Start as many as you like, on
    as many machines, on the same ``task_queue``: a run continues on whichever is alive.

    Args:
        client: A connected ``temporalio.client.Client``.
        task_queue: The queue to poll (what :func:`start_agent_run` is given).
        agents: Name → factory (a callable returning a fresh :class:`robota.Agent`), or an
            :class:`AgentRegistry`. Each factory must build the same agent every time with no
            I/O of its own: workflow code replays it.
        journal: Where tool effects are recorded (S40) — an :class:`~robota.host.SQLiteJournal`
            or :class:`~robota.host.PostgresJournal` every worker shares. With it, a tool body
            whose earlier attempt started but never settled is not run again (reconciliation),
            unless the tool is idempotent. Without it, Temporal's at-least-once retries apply.
        **options: Passed to ``temporalio.worker.Worker`` (``max_concurrent_activities``,
            ``graceful_shutdown_timeout`` …).

    Raises:
        ConfigurationError: for an empty task queue, bad agents or a journal of the wrong type.
    """
    queue: object = task_queue  # untyped callers can pass anything
    if not isinstance(queue, str) or not queue:
        raise ConfigurationError(f"task_queue must be a non-empty string, got {task_queue!r}")
    if journal is not None and not isinstance(journal, ExecutionJournal):
        raise ConfigurationError(
            f"journal must be an ExecutionJournal (robota.host.SQLiteJournal, "
            f"robota.host.PostgresJournal …), got {journal!r}"
        )
    registry = agents if isinstance(agents, AgentRegistry) else AgentRegistry(agents)
    activities = RobotaActivities(registry, journal)
    bind_registry(client.namespace, task_queue, registry)
    # Heartbeats carry a run's abort to a tool body; the SDK's default throttle (up to 60 s, or
    # 0.8 × the heartbeat timeout) would delay it. A second is cheap.
    options.setdefault("max_heartbeat_throttle_interval", timedelta(seconds=1))
    options.setdefault("default_heartbeat_throttle_interval", timedelta(seconds=1))
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[RobotaAgentWorkflow],
        activities=activities.all(),
        **options,
    )


def create_replayer(agents: Mapping[str, AgentFactory] | AgentRegistry, **options: Any) -> Replayer:
    """A ``temporalio.worker.Replayer`` for Robota workflows: check a history replays cleanly.

    Use it before deploying a change to an agent or to robota: replay recorded histories of
    real runs (``await replayer.replay_workflow(await handle.fetch_history())``); a change that
    would make running workflows take different steps fails with a nondeterminism error.

    Args:
        agents: The same name → factory mapping the workers have.
        **options: Passed to ``Replayer`` (``namespace``, ``data_converter`` …).
    """
    registry = agents if isinstance(agents, AgentRegistry) else AgentRegistry(agents)
    namespace = str(options.get("namespace", "ReplayNamespace"))
    bind_registry(namespace, f"replay-{options.get('build_id')}", registry)
    return Replayer(workflows=[RobotaAgentWorkflow], **options)
