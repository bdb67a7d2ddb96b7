"""The host's side of durable execution (S40): checking ids, answering waits, settling items.

What :meth:`~robota.Agent.respond`, :meth:`~robota.Agent.reconcile` and
:meth:`~robota.Agent.resume` do with the journal, apart from the agent: every call takes the
execution's writer lease (S10) for as long as it reads and writes, so nothing it decides can be
raced by a worker running the execution; a journal's own failure becomes a
:class:`~robota.StorageError` that keeps its cause.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Final, final

from robota.core._errors import (
    ConfigurationError,
    RobotaError,
    StorageError,
)
from robota.core._logging import get_logger
from robota.core._messages import AssistantMessage
from robota.core.execution._journal import (
    ExecutionJournal,
    ExecutionStateError,
    JournalLease,
    JournalRecord,
    ModelCallSettled,
    OutsideResponded,
    Reconciled,
    ReconciliationRequired,
    RuntimeState,
)
from robota.core.execution._journaled import append_record
from robota.core.execution._recovery import Recovery, recover, state_items, state_value

__all__ = [
    "MAX_EXECUTION_ID",
    "Holding",
    "acquire_lease",
    "check_execution_id",
    "read_records",
    "release_lease",
    "require_settled",
    "save_response",
    "settle_item",
]

MAX_EXECUTION_ID: Final = 200

_log = get_logger("robota.journal")


def check_execution_id(value: object) -> str:
    """``value`` as an execution id every back-end can store, or a ConfigurationError."""
    if (
        not isinstance(value, str)
        or not value
        or len(value) > MAX_EXECUTION_ID
        or not value.isprintable()
        or value != value.strip()
        or not _encodable(value)
    ):
        raise ConfigurationError(
            f"an execution id must be 1-{MAX_EXECUTION_ID} printable characters without "
            f"leading or trailing spaces, got {value!r}"
        )
    return value


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False  # a lone surrogate: no UTF-8 store can keep it
    return True


def require_settled(recovery: Recovery, current: RuntimeState) -> None:
    """Raise :class:`~robota.ReconciliationRequired` for whatever the journal cannot prove."""
    items = [*recovery.items, *state_items(recovery, current)]
    if items:
        raise ReconciliationRequired(
            f"execution {recovery.execution_id!r} cannot be resumed until the host settles "
            f"{len(items)} item(s) with agent.reconcile(): "
            + "; ".join(f"{item.id} ({item.detail})" for item in items),
            execution_id=recovery.execution_id,
            items=items,
        )


async def save_response(
    journal: ExecutionJournal, execution_id: str, request_id: str, response: object
) -> None:
    """Save the answer to one pending request; durable on return (S40)."""
    try:
        json.dumps(response, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ConfigurationError(f"the response must be JSON-serialisable: {exc}") from exc
    async with Holding(journal, execution_id) as (lease, recovery):
        request = recovery.requests.get(request_id)
        if request is None:
            known = ", ".join(recovery.requests) or "none"
            raise ExecutionStateError(
                f"execution {execution_id!r} has no request {request_id!r} (its requests: {known})",
                code="request_unknown",
            )
        if request_id in recovery.responses:
            raise ExecutionStateError(
                f"request {request_id!r} of execution {execution_id!r} is already answered",
                code="request_answered",
            )
        await append_record(lease, OutsideResponded(request_id, response))


async def settle_item(
    journal: ExecutionJournal,
    execution_id: str,
    item_id: str,
    happened: object,
    result: object,
    current: RuntimeState,
) -> None:
    """Record the host's explicit settlement of one open item (S40)."""
    if not isinstance(happened, bool):
        raise ConfigurationError(f"happened must be True or False, got {happened!r}")
    if result is not None and not isinstance(result, str):
        raise ConfigurationError(f"result must be a string or None, got {result!r}")
    text: str | None = result
    async with Holding(journal, execution_id) as (lease, recovery):
        items = {item.id: item for item in (*recovery.items, *state_items(recovery, current))}
        item = items.get(item_id)
        if item is None:
            open_items = ", ".join(items) or "none"
            raise ExecutionStateError(
                f"{item_id!r} is not an open item of execution {execution_id!r} (open: "
                f"{open_items})",
                code="item_unknown",
            )
        if item.kind == "runtime_state":
            if not happened:
                raise ConfigurationError(
                    "a runtime-state difference can only be accepted (happened=True); "
                    "otherwise resume on an agent built like the one that started it"
                )
            text = state_value(current, item_id)
        elif happened and text is None:
            raise ConfigurationError(
                f"happened=True needs result= for {item_id!r}: the "
                + ("tool's result the model will see" if item.kind == "effect" else "reply")
            )
        if item.kind == "model_call" and happened and item.call_id is not None:
            # The reply the host vouches for becomes the call's settled response, in one record
            # with its own identity, so every later recovery restores the same message.
            reply = AssistantMessage(text or "", model=recovery.state.model)
            await append_record(lease, ModelCallSettled(item.call_id, reply))
            return
        await append_record(lease, Reconciled(item_id, happened, text))


# ---------------------------------------------------------------------------------- journal I/O


async def acquire_lease(journal: ExecutionJournal, execution_id: str) -> JournalLease:
    """The writer's lease; a journal's own failure becomes a StorageError."""
    try:
        return await journal.acquire(execution_id)
    except RobotaError:
        raise
    except Exception as exc:
        raise StorageError(
            f"the execution journal failed to acquire execution {execution_id!r}: {exc!r}",
            cause=exc,
        ) from exc


async def read_records(journal: ExecutionJournal, execution_id: str) -> tuple[JournalRecord, ...]:
    """The execution's records; a journal's own failure becomes a StorageError."""
    try:
        return await journal.read(execution_id)
    except RobotaError:
        raise
    except Exception as exc:
        raise StorageError(
            f"the execution journal failed to read execution {execution_id!r}: {exc!r}",
            cause=exc,
        ) from exc


async def release_lease(lease: JournalLease) -> None:
    """Release; a failure is logged, never raised over the run's own outcome."""
    try:
        await lease.release()
    except Exception as exc:  # noqa: BLE001 - logged, see above
        _log.error("execution journal lease release failed", error=repr(exc))


@final
class Holding:
    """``async with``: the writer's lease on an execution and its recovery, released after."""

    __slots__ = ("_execution_id", "_journal", "_lease")

    def __init__(self, journal: ExecutionJournal, execution_id: str) -> None:
        self._journal = journal
        self._execution_id = execution_id
        self._lease: JournalLease | None = None

    async def __aenter__(self) -> tuple[JournalLease, Recovery]:
        lease = await acquire_lease(self._journal, self._execution_id)
        self._lease = lease
        try:
            recovery = recover(
                self._execution_id, await read_records(self._journal, self._execution_id)
            )
        except BaseException:
            await release_lease(lease)
            self._lease = None
            raise
        return lease, recovery

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._lease is not None:
            await release_lease(self._lease)
