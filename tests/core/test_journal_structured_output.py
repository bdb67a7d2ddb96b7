"""S18 with S40: a structured run (``output=``) on a journaled agent, and its continuation.

Each structured attempt is an ordinary journaled model call (its record names the attempt), the
validated value is saved with the execution's final checkpoint, and ``resume`` rebuilds the typed
object from it without a model call. A continuation asks for the schema it started with.
The real-process SIGKILL trial is in ``tests/journal/test_crash_trials.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic
import pytest

import robota
from journal_hooks import Crash, HookedJournal, crash_at
from robota.core.execution._journal import decode_journal_record, encode_journal_record
from robota.host import SQLiteJournal
from robota.testing import InMemoryJournal, ScriptedProvider


class City(pydantic.BaseModel):
    name: str
    population: int = pydantic.Field(ge=0)


class Town(pydantic.BaseModel):
    name: str


INVALID = '{"name": "Oslo"}'  # population is missing
VALID = '{"name": "Oslo", "population": 700000}'
OSLO = City(name="Oslo", population=700_000)


def _agent(journal: robota.ExecutionJournal, turns: list[Any]) -> tuple[robota.Agent, Any]:
    provider = ScriptedProvider(turns)
    return robota.Agent(provider=provider, model="m", journal=journal), provider


async def _records(journal: robota.ExecutionJournal, eid: str) -> tuple[Any, ...]:
    return await journal.read(eid)


async def test_s18_s40_journaled_output_run_on_sqlite_returns_the_typed_result(
    tmp_path: Path,
) -> None:
    async with SQLiteJournal(tmp_path / "journal.db") as journal:
        agent, provider = _agent(journal, [VALID])
        result = await agent.run("Largest city in Norway?", output=City, execution_id="e")
        assert result.output == OSLO
        assert result.status == "complete"
        assert result.attempts == 1
        assert len(provider.requests) == 1
        checkpoint = (await _records(journal, "e"))[-1]
        assert isinstance(checkpoint, robota.Checkpoint)
        assert checkpoint.outcome == "complete"
        assert json.loads(checkpoint.output or "") == {"name": "Oslo", "population": 700000}
        await agent.aclose()


async def test_s40_a_structured_retry_turn_is_a_journaled_model_call(tmp_path: Path) -> None:
    async with SQLiteJournal(tmp_path / "journal.db") as journal:
        agent, provider = _agent(journal, [INVALID, VALID])
        result = await agent.run("x", output=City, execution_id="e")
        assert result.output == OSLO
        assert result.attempts == 2
        assert len(provider.requests) == 2
        records = await _records(journal, "e")
        started = [r for r in records if isinstance(r, robota.ModelCallStarted)]
        settled = [r for r in records if isinstance(r, robota.ModelCallSettled)]
        assert [r.attempt for r in started] == [1, 2]
        assert [r.message.content for r in settled] == [INVALID, VALID]
        # The retry's feedback turn is saved with the retry call, before it was dispatched.
        (feedback,) = started[1].history
        assert isinstance(feedback, robota.UserMessage)
        assert "population" in feedback.content
        state = records[0].state
        assert state.output_schema == json.dumps(
            robota.schema_from_type(City), ensure_ascii=False, sort_keys=True
        )
        assert state.output_retries == 2
        await agent.aclose()


async def test_s40_resume_of_a_settled_structured_execution_returns_the_same_typed_result(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    async with SQLiteJournal(path) as journal:
        first, _ = _agent(journal, [INVALID, VALID])
        ran = await first.run("x", output=City, execution_id="e")
        await first.aclose()
    async with SQLiteJournal(path) as journal:  # another process's view: a fresh journal object
        again, provider = _agent(journal, [])
        resumed = await again.resume("e", output=City)
        assert provider.requests == []  # the model is not called again
        assert resumed.output == ran.output == OSLO
        assert isinstance(resumed.output, City)
        assert resumed.attempts == 2
        assert resumed.text == VALID
        assert resumed.status == "complete"
        await again.aclose()


async def test_s40_resume_after_a_crash_between_the_retry_reply_and_validation() -> None:
    inner = InMemoryJournal()
    crashing = HookedJournal(inner, after=crash_at("model_call_settled", nth=2))
    agent, provider = _agent(crashing, [INVALID, VALID])
    with pytest.raises(Crash):
        await agent.run("x", output=City, execution_id="e")
    assert len(provider.requests) == 2
    fresh, again = _agent(inner, [])
    result = await fresh.resume("e", output=City)
    assert again.requests == []  # the settled retry reply is validated, not asked for again
    assert result.output == OSLO
    assert result.attempts == 2
    checkpoint = (await inner.read("e"))[-1]
    assert isinstance(checkpoint, robota.Checkpoint)
    assert checkpoint.outcome == "complete"
    assert checkpoint.output is not None
    replayed = await _agent(inner, [])[0].resume("e", output=City)
    assert replayed.output == OSLO


async def test_s40_resume_after_a_crash_before_the_retry_asks_within_the_budget() -> None:
    inner = InMemoryJournal()
    # The invalid first reply is durable; the process dies before the retry call is recorded.
    crashing = HookedJournal(inner, before=crash_at("model_call_started", nth=2))
    agent, _ = _agent(crashing, [INVALID, VALID])
    with pytest.raises(Crash):
        await agent.run("x", output=City, execution_id="e", output_retries=1)
    fresh, provider = _agent(inner, [VALID])
    result = await fresh.resume("e", output=City)
    assert len(provider.requests) == 1  # exactly the retry that never started
    assert result.output == OSLO
    assert result.attempts == 2
    started = [r for r in await inner.read("e") if isinstance(r, robota.ModelCallStarted)]
    assert [r.attempt for r in started] == [1, 2]


async def test_s40_an_exhausted_structured_execution_fails_again_on_resume_without_a_call() -> None:
    inner = InMemoryJournal()
    agent, _ = _agent(inner, [INVALID, INVALID])
    with pytest.raises(robota.StructuredOutputError) as first:
        await agent.run("x", output=City, execution_id="e", output_retries=1)
    fresh, provider = _agent(inner, [VALID])
    with pytest.raises(robota.StructuredOutputError) as again:
        await fresh.resume("e", output=City)
    assert provider.requests == []  # the budget it started with is kept (S40)
    assert again.value.attempts == first.value.attempts == 2


@pytest.mark.parametrize(
    ("run_output", "resume_output", "says"),
    [
        (City, Town, "this resume asks for schema 'Town'"),
        (City, None, "resume it with the same output="),
        (None, City, "was started without output="),
    ],
)
async def test_s18_s40_resume_with_another_output_type_is_refused_before_anything_runs(
    run_output: Any, resume_output: Any, says: str
) -> None:
    inner = InMemoryJournal()
    crashing = HookedJournal(inner, after=crash_at("model_call_settled", nth=1))
    agent, _ = _agent(crashing, [VALID])
    with pytest.raises(Crash):
        await agent.run("x", output=run_output, execution_id="e")
    count = len(await inner.read("e"))
    fresh, provider = _agent(inner, [VALID])
    with pytest.raises(robota.ExecutionStateError) as refused:
        await fresh.resume("e", output=resume_output)
    assert refused.value.code == "output_mismatch"
    assert says in str(refused.value)
    assert "'e'" in str(refused.value)
    assert provider.requests == []
    assert len(await inner.read("e")) == count  # nothing written
    assert len(fresh.history) == 0  # nothing restored
    result = await fresh.resume("e", output=run_output)  # the right type still works
    assert result.output == (OSLO if run_output is City else VALID)


async def test_s18_s40_a_json_schema_output_resumes_to_the_same_value() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    inner = InMemoryJournal()
    agent, _ = _agent(inner, ['Here: ```json\n{"n": 3}\n```'])
    ran = await agent.run("x", output=schema, execution_id="e")
    resumed = await _agent(inner, [])[0].resume("e", output=dict(schema))
    assert ran.output == resumed.output == {"n": 3}


async def test_s40_structured_fields_of_records_written_before_them_read_as_a_plain_run() -> None:
    inner = InMemoryJournal()
    agent, _ = _agent(inner, ["plain"])
    await agent.run("x", execution_id="e")
    for record in await inner.read("e"):
        body = json.loads(encode_journal_record(record))
        state = body["body"].get("state", {})
        for old in (body["body"], state):
            for field in ("attempt", "output", "output_schema", "output_retries"):
                old.pop(field, None)
        decoded = decode_journal_record(json.dumps(body))
        assert decoded == record


async def test_s40_a_retry_call_reconciled_as_not_happened_is_made_once_with_one_feedback_turn() -> (
    None
):
    inner = InMemoryJournal()
    # The retry call's record (with its feedback turn) is durable; the process dies before the
    # call is dispatched, and the host says it did not happen.
    crashing = HookedJournal(inner, after=crash_at("model_call_started", nth=2))
    agent, _ = _agent(crashing, [INVALID, VALID])
    with pytest.raises(Crash):
        await agent.run("x", output=City, execution_id="e")
    fresh, provider = _agent(inner, [VALID])
    with pytest.raises(robota.ReconciliationRequired) as required:
        await fresh.resume("e", output=City)
    (item,) = required.value.items
    assert item.kind == "model_call"
    await fresh.reconcile("e", item.id, happened=False)
    result = await fresh.resume("e", output=City)
    assert result.output == OSLO
    assert result.attempts == 2
    assert len(provider.requests) == 1
    feedback = [m for m in fresh.history if isinstance(m, robota.UserMessage)][1:]
    assert len(feedback) == 1  # the retry turn is not committed a second time
    assert [m.kind for m in fresh.history] == ["user", "assistant", "user", "assistant"]
