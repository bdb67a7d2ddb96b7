"""The console's journal inspector: one journaled execution as a list of readable records.

``GET /console/executions/{execution_id}`` (served when ``create_app`` is given ``console=True``
and ``journal=``) answers ``{"executionId", "records": [{"kind", "summary"}]}``: each record of
the execution's journal (S40) — its start, model calls and their settlements, tool effects and
their settlements, outside requests and responses, reconciliations and checkpoints — with a
one-line summary. 404 when the journal holds no record of that id; 400 for an id that is not a
valid identifier. Summaries carry the model's text and the tools' arguments and results: the
page shows them as text.
"""

from __future__ import annotations

import json
from typing import assert_never

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from robota import (
    Checkpoint,
    ConfigurationError,
    EffectSettled,
    EffectStarted,
    ExecutionJournal,
    ExecutionStarted,
    JournalRecord,
    ModelCallSettled,
    ModelCallStarted,
    OutsideRequested,
    OutsideResponded,
    Reconciled,
)
from robota.serve._guard import error_body
from robota.sessions import check_session_id

__all__ = ["journal_routes", "record_summary"]

_SHOWN = 300  # characters of a text shown in a summary


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def _json(value: object) -> str:
    return _short(json.dumps(value, ensure_ascii=False, default=str))


def record_summary(record: JournalRecord) -> str:
    """A one-line, human-readable summary of one journal record."""
    if isinstance(record, ExecutionStarted):
        return f"execution {record.execution_id} started with {len(record.history)} message(s)"
    if isinstance(record, ModelCallStarted):
        forced = f", forced ({record.reason})" if record.forced else ""
        return f"model call {record.call_id}: round {record.round}{forced}"
    if isinstance(record, ModelCallSettled):
        message = record.message
        calls = ", ".join(c.name for c in message.tool_calls)
        usage = message.usage
        tokens = f", {usage.total_tokens} tokens" if usage is not None else ""
        return (
            f"model call {record.call_id} settled: {record.outcome}"
            f"{' (retried)' if record.retried else ''}, model {message.model or '?'}{tokens}; "
            f"text {_json(message.content)}" + (f"; tool calls: {calls}" if calls else "")
        )
    if isinstance(record, EffectStarted):
        return f"effect {record.call_key}: {record.tool_name} {_json(dict(record.arguments))}"
    if isinstance(record, EffectSettled):
        error = " (error)" if record.is_error else ""
        return f"effect {record.call_key} settled: {record.status}{error}: {_short(record.content)}"
    if isinstance(record, OutsideRequested):
        return (
            f"outside request {record.request_id} ({record.request_kind}) for "
            f"{record.call_key}: {_json(record.payload)}"
        )
    if isinstance(record, OutsideResponded):
        return f"outside response {record.request_id}: {_json(record.response)}"
    if isinstance(record, Reconciled):
        return f"reconciled {record.item_id}: happened={record.happened}"
    if isinstance(record, Checkpoint):
        stop = f" ({record.stop_reason})" if record.stop_reason else ""
        return f"checkpoint: {record.outcome}{stop}"
    assert_never(record)


def journal_routes(journal: ExecutionJournal) -> list[Route]:
    """The inspector's route over ``journal`` (see the module docstring)."""

    async def execution(request: Request) -> Response:
        execution_id = str(request.path_params["execution_id"])
        try:
            check_session_id(execution_id)
        except ConfigurationError:
            body = error_body("invalid_execution_id", "the execution id is not valid")
            return Response(body, status_code=400, media_type="application/json")
        records = await journal.read(execution_id)
        if not records:
            body = error_body("unknown_execution", "the journal holds no such execution")
            return Response(body, status_code=404, media_type="application/json")
        listed = [{"kind": r.kind, "summary": record_summary(r)} for r in records]
        return JSONResponse({"executionId": execution_id, "records": listed})

    return [Route("/console/executions/{execution_id}", execution, methods=["GET"])]
