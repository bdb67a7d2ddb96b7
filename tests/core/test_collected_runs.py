"""A run nobody finishes, closed by the garbage collector in whatever context it runs (S40).

A Temporal worker that stops hands its cached workflows to the collector (the SDK does not evict
idle runs at shutdown), which closes their suspended coroutines in any thread, often inside
another workflow's activation. Such a teardown must leave no trace there: no id drawn from the
other workflow's replayable source (tests/test_lowlevel.py), and no run reported failed — a
context variable reset from another context raises ValueError, which used to replace the
GeneratorExit so the loop took the close for a failure: RUN_FAILED, and every plugin's
``on_error`` called with a made-up internal error, in the other workflow's context.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import sys
from typing import Any

import pytest

import robota
from robota.testing import ScriptedProvider


class Watcher(robota.Plugin):
    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    async def on_error(self, run: Any, error: BaseException) -> None:
        self.seen.append(f"on_error: {error!r}")


@robota.tool
async def wait_for_a_person() -> str:
    """Waits for an answer that never comes (an ask nobody answers)."""
    await asyncio.get_running_loop().create_future()
    return "answered"


def _abandon(agent: robota.Agent) -> None:
    # A run left waiting on a loop that is then dropped, as a stopped worker drops a workflow:
    # nobody cancels it; the loop and its tasks are left to the collector.
    loop = asyncio.new_event_loop()
    task = loop.create_task(agent.run("go"))
    for _ in range(50):
        loop.run_until_complete(asyncio.sleep(0))
    assert not task.done()  # the tool is waiting
    loop.close()  # closed, not cancelled: the run's coroutines stay suspended


def _agents(seen: list[str]) -> dict[str, robota.Agent]:
    def build(**extra: Any) -> robota.Agent:
        return robota.Agent(
            provider=ScriptedProvider([[("wait_for_a_person", {})], "done"]),
            model="m",
            plugins=[Watcher(seen)],
            tools=[wait_for_a_person],
            **extra,
        )

    child = build(name="child")
    parent = robota.Agent(
        provider=ScriptedProvider([[("child", {"input": "go"})], "done"]),
        model="m",
        plugins=[Watcher(seen)],
        tools=[child.as_tool(name="child", description="asks a person")],
    )
    return {
        "with an output guardrail": build(
            guardrails=[robota.OutputGuardrail(lambda output: None, name="out")]
        ),
        "with a sub-agent waiting": parent,
    }


@pytest.mark.parametrize("case", ["with an output guardrail", "with a sub-agent waiting"])
def test_S40_a_run_the_collector_closes_in_another_context_is_not_reported_failed(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    monkeypatch.setattr(
        sys, "unraisablehook", lambda report: seen.append(f"unraisable: {report.exc_value!r}")
    )
    agent = _agents(seen)[case]
    gc.collect()  # earlier garbage first: the collection below finds only the abandoned run
    _abandon(agent)
    del agent
    contextvars.Context().run(gc.collect)  # collected while another context is current
    assert seen == []
