"""Agents with sub-agents and guardrails for the Temporal tests (issue 29), by name (``KIDS``).

``boss`` calls its child ``helper`` (``Agent.as_tool``) once; ``helper`` records one effect with
the ``record`` tool, then replies. Every model call that *completes* is a line ``model <agent>
<n> <pid>`` in the effects file, so "a completed model call is never repeated" is read off the
file. With ``ROBOTA_TEST_HOLD_MODEL`` set to a path, the child's second model call writes its
pid there and waits (a test kills the worker making it).

The guardrail agents check with plain functions (which must run in an activity on Temporal:
each writes a ``guard <phase> <pid>`` line) or with a guardrail agent (its model calls are
activities).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pydantic

import robota
from robota.core.permissions import PermissionGate, PermissionPolicy
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream
from temporal_runs.agents import _effect, patient, record


class KidProvider(robota.Provider):
    """Calls ``tool`` once with ``{key: <user input>-<agent>}``; then replies with the results.

    Every completed call is an effect line ``model <agent> <n>``.
    """

    def __init__(self, agent: str, tool: str, key: str = "text", hold: bool = False) -> None:
        self._agent = agent
        self._tool = tool
        self._key = key
        self._hold = hold

    @property
    def name(self) -> str:
        return "kids"

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        results = [m for m in request.messages if m.kind == "tool"]
        user = next(m.content for m in request.messages if m.kind == "user")
        hold = os.environ.get("ROBOTA_TEST_HOLD_MODEL")
        if self._hold and hold and results:
            Path(hold).write_text(str(os.getpid()))  # noqa: ASYNC240 - a test marker
            await asyncio.sleep(60)
        _effect(f"model {self._agent} {len(results)}")
        if not results and request.tools:
            arguments = json.dumps({self._key: f"{user}-{self._agent}"})
            yield robota.ToolCallReady(robota.ToolCall("k0", self._tool, arguments))
        else:
            yield robota.TextDelta(" ".join([f"{self._agent}:", *(m.content for m in results)]))
        yield robota.ResponseDone(
            model="rule-model", usage=robota.Usage.from_counts(prompt=10, completion=2)
        )


def helper() -> robota.Agent:
    return robota.Agent(
        provider=KidProvider("helper", "record", hold=True),
        model="rule-model",
        tools=[record],
        name="helper",
    )


def boss() -> robota.Agent:
    child = helper().as_tool(description="Ask the helper to record something.")
    return robota.Agent(
        provider=KidProvider("boss", "helper", key="input"),
        model="rule-model",
        tools=[child],
        name="boss",
    )


def asking_boss() -> robota.Agent:
    # S21: the child's call is asked about through the parent's gate (the ceiling).
    return robota.Agent(
        provider=KidProvider("boss", "helper", key="input"),
        model="rule-model",
        tools=[helper()],
        tool_gate=PermissionGate(PermissionPolicy(ask=["record"])),
        name="boss",
    )


def waiting_boss() -> robota.Agent:
    # S23: the child's tool waits for the run's abort.
    kid = robota.Agent(
        provider=KidProvider("sitter", "patient"),
        model="rule-model",
        tools=[patient],
        name="sitter",
    )
    return robota.Agent(
        provider=KidProvider("boss", "sitter", key="input"),
        model="rule-model",
        tools=[kid],
        name="boss",
    )


# ------------------------------------------------------------------ guardrails


def _no_forbidden(text: str) -> robota.GuardrailResult | None:
    _effect(f"guard input {text}")
    if "explode" in text:
        raise ValueError("the check broke")
    if "forbidden" in text:
        return robota.GuardrailResult(tripped=True, reason="the input says forbidden")
    return None


def _no_record(call: robota.ToolCallCheck) -> robota.GuardrailResult | None:
    _effect(f"guard tool_before {call.tool_name}")
    if "stop" in json.dumps(dict(call.arguments)):
        return robota.GuardrailResult(tripped=True, reason="no recording of stop")
    return None


def _redact(call: robota.ToolCallCheck) -> robota.GuardrailResult | None:
    _effect(f"guard tool_after {call.tool_name}")
    return robota.GuardrailResult(replacement=(call.result or "").replace("recorded", "[kept]"))


def _no_done(output: object) -> robota.GuardrailResult | None:
    _effect("guard output")
    if "secret" in str(output):
        return robota.GuardrailResult(tripped=True, reason="the reply names a secret")
    return None


def guarded_recorder() -> robota.Agent:
    return robota.Agent(
        provider=KidProvider("guarded", "record"),
        model="rule-model",
        tools=[record],
        name="guarded",
        guardrails=[
            robota.InputGuardrail(_no_forbidden, name="words"),
            robota.ToolGuardrail(_no_record, after=_redact, name="calls"),
            robota.OutputGuardrail(_no_done, name="reply"),
        ],
    )


def hasty_recorder() -> robota.Agent:
    # The input guardrail runs beside the first model call (an explicit opt-in): no tool body
    # may start before it passed.
    return robota.Agent(
        provider=KidProvider("hasty", "record"),
        model="rule-model",
        tools=[record],
        name="hasty",
        guardrails=[robota.InputGuardrail(_slow_no_forbidden, name="slow", run_in_parallel=True)],
    )


async def _slow_no_forbidden(text: str) -> robota.GuardrailResult | None:
    await asyncio.sleep(1.0)  # the model call settles first; the tool batch waits
    return _no_forbidden(text)


class VerdictProvider(robota.Provider):
    """A guardrail agent's model: trips when the checked text says ``forbidden``."""

    @property
    def name(self) -> str:
        return "verdicts"

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        user = next(m.content for m in request.messages if m.kind == "user")
        _effect("model judge 0")
        tripped = "forbidden" in user
        yield robota.TextDelta(json.dumps({"tripped": tripped, "reason": "judged"}))
        yield robota.ResponseDone(
            model="rule-model", usage=robota.Usage.from_counts(prompt=5, completion=1)
        )


def judged_recorder() -> robota.Agent:
    judge = robota.Agent(provider=VerdictProvider(), model="rule-model", name="judge")
    return robota.Agent(
        provider=KidProvider("judged", "record"),
        model="rule-model",
        tools=[record],
        name="judged",
        guardrails=[robota.InputGuardrail(judge)],
    )


KIDS = {
    "boss": boss,
    "waiting_boss": waiting_boss,
    "asking_boss": asking_boss,
    "guarded_recorder": guarded_recorder,
    "judged_recorder": judged_recorder,
    "hasty_recorder": hasty_recorder,
}


# ------------------------------------------------------------------ review (issue 29)


def grand_boss() -> robota.Agent:
    # A grandchild: boss → mid → helper (records one effect), each routed by its path.
    mid = robota.Agent(
        provider=KidProvider("mid", "helper", key="input"),
        model="rule-model",
        tools=[helper()],
        name="mid",
    )
    return robota.Agent(
        provider=KidProvider("boss", "mid", key="input"),
        model="rule-model",
        tools=[mid],
        name="boss",
    )


_SHARED: list[robota.Agent] = []


def sharing_boss() -> robota.Agent:
    # A factory mistake: the sub-agent is built once (module level) and shared by every call.
    if not _SHARED:
        _SHARED.append(
            robota.Agent(
                provider=KidProvider("shared", "record"),
                model="rule-model",
                tools=[record],
                name="shared",
            )
        )
    return robota.Agent(
        provider=KidProvider("boss", "shared", key="input"),
        model="rule-model",
        tools=[_SHARED[0]],
        name="boss",
    )


def _slow_sync_check(text: str) -> robota.GuardrailResult | None:
    # A plain sync check that blocks (a moderation call through a blocking client, say).
    time.sleep(2.5)
    _effect(f"guard input {text}")
    return None


def blocking_guarded() -> robota.Agent:
    return robota.Agent(
        provider=KidProvider("blocking", "record"),
        model="rule-model",
        tools=[record],
        name="blocking",
        guardrails=[robota.InputGuardrail(_slow_sync_check, name="slow")],
    )


class Price(pydantic.BaseModel):
    amount: Decimal
    currency: str


class PriceProvider(robota.Provider):
    """The pricer's model: one JSON reply, a price."""

    @property
    def name(self) -> str:
        return "prices"

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        _effect("model pricer 0")
        yield robota.TextDelta(json.dumps({"amount": "1.50", "currency": "EUR"}))
        yield robota.ResponseDone(
            model="rule-model", usage=robota.Usage.from_counts(prompt=5, completion=1)
        )


def _price_seen(output: object) -> robota.GuardrailResult | None:
    _effect(f"guard output {json.dumps(output, sort_keys=True)}")
    return None


def pricing_boss() -> robota.Agent:
    # A typed sub-agent (as_tool(output=Price)) with an output guardrail of its own.
    pricer = robota.Agent(
        provider=PriceProvider(),
        model="rule-model",
        name="pricer",
        guardrails=[robota.OutputGuardrail(_price_seen, name="price")],
    )
    return robota.Agent(
        provider=KidProvider("boss", "pricer", key="input"),
        model="rule-model",
        tools=[pricer.as_tool(output=Price)],
        name="boss",
    )


@robota.tool
async def bulky(text: str) -> str:
    """Return a result too large to travel inline (it is stored aside in the journal).

    Args:
        text: A label.
    """
    return f"{text} needle " + "x" * (80 * 1024)


def _redact_needle(call: robota.ToolCallCheck) -> robota.GuardrailResult | None:
    seen = "needle" in (call.result or "")
    _effect(f"guard tool_after {'saw' if seen else 'missed'} the needle")
    return robota.GuardrailResult(replacement="redacted") if seen else None


def redacting() -> robota.Agent:
    return robota.Agent(
        provider=KidProvider("redacting", "bulky"),
        model="rule-model",
        tools=[bulky],
        name="redacting",
        guardrails=[robota.ToolGuardrail(after=_redact_needle, name="needles")],
    )


KIDS.update(
    {
        "redacting": redacting,
        "pricing_boss": pricing_boss,
        "grand_boss": grand_boss,
        "sharing_boss": sharing_boss,
        "blocking_guarded": blocking_guarded,
    }
)
