"""``ToolContext.idempotency_key``: one stable key per logical tool call (issue 32, item 5).

The same on every attempt of one call — in one run, across a journaled resume (S40, a real
SQLite journal reopened as a new process would) — and distinct between calls. A tool sends it
with an effect whose target deduplicates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import robota
from robota.host import SQLiteJournal
from robota.testing import ScriptedProvider


def _tools(keys: list[tuple[str, str]]) -> list[robota.Tool]:
    @robota.tool
    async def deploy(target: str, ctx: robota.ToolContext) -> str:
        """Deploy a target once someone outside approved it."""
        keys.append((target, ctx.idempotency_key))
        answer: Any = await ctx.request_outside_response("approval", {"target": target})
        return f"deployed {target} by {answer['by']}"

    @robota.tool
    async def note(text: str, ctx: robota.ToolContext) -> str:
        """Note the text."""
        keys.append((text, ctx.idempotency_key))
        return f"noted {text}"

    return [deploy, note]


def _agent(
    journal: robota.ExecutionJournal | None, turns: list[Any], keys: list[tuple[str, str]]
) -> robota.Agent:
    return robota.Agent(
        provider=ScriptedProvider(turns), model="m", tools=_tools(keys), journal=journal
    )


async def test_the_idempotency_key_is_the_same_across_a_journaled_resume(tmp_path: Path) -> None:
    keys: list[tuple[str, str]] = []
    path = tmp_path / "journal.db"
    async with SQLiteJournal(path) as journal:
        agent = _agent(journal, [[("deploy", {"target": "prod"})]], keys)
        result = await agent.run("ship it", execution_id="exec-1")
        assert result.status == "suspended"
        (request,) = result.pending_requests
    # Another process: a fresh agent over the same journal file answers and resumes.
    async with SQLiteJournal(path) as journal:
        agent = _agent(journal, ["shipped"], keys)
        await agent.respond("exec-1", request.id, {"by": "ops"})
        resumed = await agent.resume("exec-1")
    assert resumed.status == "complete"
    assert [target for target, _ in keys] == ["prod", "prod"]  # the body ran twice …
    first, second = (key for _, key in keys)
    assert first == second  # … as one logical call, with one key
    assert isinstance(first, str)
    assert first.startswith("exec-1:")


async def test_two_calls_get_distinct_idempotency_keys(tmp_path: Path) -> None:
    keys: list[tuple[str, str]] = []
    turns = [[("note", {"text": "a"}), ("note", {"text": "b"})], [("note", {"text": "c"})], "ok"]
    async with SQLiteJournal(tmp_path / "journal.db") as journal:
        await _agent(journal, turns, keys).run("go", execution_id="exec-2")
    assert [text for text, _ in keys] == ["a", "b", "c"]
    assert len({key for _, key in keys}) == 3


async def test_without_a_journal_the_key_is_the_run_id_and_call_id() -> None:
    keys: list[tuple[str, str]] = []
    turns = [[("note", {"text": "a"}), ("note", {"text": "b"})], "ok"]
    result = await _agent(None, turns, keys).run("go")
    (_, one), (_, two) = keys
    assert one != two
    assert result.execution_id is not None
    assert one.startswith(f"{result.execution_id}:")
    assert two.startswith(f"{result.execution_id}:")


def test_a_body_run_by_hand_gets_a_key_from_its_call_id() -> None:
    ctx = robota.ToolContext(signal=robota.AbortController().signal, call_id="c1", tool_name="t")
    assert ctx.idempotency_key == "c1"
    named = robota.ToolContext(
        signal=robota.AbortController().signal, call_id="c1", tool_name="t", execution_id="e"
    )
    assert named.idempotency_key == "e:c1"
