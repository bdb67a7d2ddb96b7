"""Handoffs (issue 29): robota/core/_handoff.py and robota/core/execution/_handoffs.py.

Every agent runs on its own scripted provider (a different vendor name and model each), so each
request shows which agent's configuration it was built with. Each test names the behaviour it
proves.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pydantic
import pytest

import robota
from journal_hooks import Crash, HookedJournal, crash_at
from robota import (
    AbortController,
    Agent,
    AssistantMessage,
    Handoff,
    PermissionGate,
    PermissionPolicy,
    RecordingEventService,
    SystemMessage,
    ToolMessage,
    Usage,
    UsageLimits,
)
from robota.core._events import EventNames
from robota.testing import InMemoryJournal, ScriptedProvider, ScriptedTurn


def _usage(prompt: int, completion: int) -> Usage:
    return Usage(prompt, completion, prompt + completion)


def _agent(name: str, turns: list[Any], **kwargs: Any) -> tuple[Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns, name=f"{name}-vendor")
    return Agent(f"{name}-model", provider=provider, name=name, **kwargs), provider


@robota.tool
def lookup_order() -> str:
    """Look the order up."""
    return "order 7: shipped"


@robota.tool(name="refund", risk="execute")
def _refund() -> str:
    """Refund the order."""
    return "refunded"


def _is_system(message: object, text: str) -> bool:
    return isinstance(message, SystemMessage) and message.content == text


def _tool_results(messages: Any) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


async def test_s35_the_receiver_continues_the_run_with_the_history_and_its_own_prompt_tools_model() -> (
    None
):
    billing, billing_provider = _agent(
        "billing",
        [[("lookup_order", {})], "your order shipped"],
        system_prompt="You handle billing.",
        tools=[lookup_order],
    )
    triage, triage_provider = _agent(
        "triage",
        [[("transfer_to_billing", {})]],
        system_prompt="You route questions.",
        handoffs=[billing],
    )
    result = await triage.run("where is my order?")
    assert result.output == "your order shipped"
    assert result.agent == "billing"
    assert result.status == "complete"
    offered = [spec.name for spec in triage_provider.requests[0].tools]
    assert "transfer_to_billing" in offered
    first = billing_provider.requests[0]
    assert first.model == "billing-model"
    assert _is_system(first.messages[0], "You handle billing.")
    # The conversation so far, the transfer answered (S34): user, the call, its result.
    assert first.messages[1].content == "where is my order?"
    assert isinstance(first.messages[2], AssistantMessage)
    assert first.messages[2].tool_calls[0].name == "transfer_to_billing"
    assert isinstance(first.messages[3], ToolMessage)
    assert "billing" in str(first.messages[3].content)
    assert not first.messages[3].is_error
    assert [spec.name for spec in first.tools] == ["lookup_order"]
    assert billing_provider.requests[1].messages[-1].content == "order 7: shipped"
    # The whole run is the entry agent's conversation; its own prompt is the head again (S35).
    assert _is_system(triage.history[0], "You route questions.")
    assert triage.history[-1].content == "your order shipped"
    assert len(billing.history) == 1  # the receiver's own conversation is untouched


async def test_a_handoff_object_names_the_tool_and_describes_it() -> None:
    billing, _ = _agent("billing", ["done"])
    triage, provider = _agent(
        "triage",
        [[("to_money", {})]],
        handoffs=[Handoff(billing, tool_name="to_money", description="Money questions.")],
    )
    result = await triage.run("hi")
    assert result.agent == "billing"
    (spec,) = provider.requests[0].tools
    assert (spec.name, spec.description) == ("to_money", "Money questions.")


def test_the_tool_name_is_sanitised_and_a_clash_is_refused_when_built() -> None:
    odd, _ = _agent("Billing Team.eu", ["x"])
    triage, _ = _agent("triage", [], handoffs=[odd])
    assert [t.name for t in triage.tools] == ["transfer_to_Billing_Team_eu"]
    twin, _ = _agent("Billing Team.eu", ["x"])
    with pytest.raises(robota.ConfigurationError, match="transfer_to_Billing_Team_eu"):
        _agent("triage", [], handoffs=[odd, twin])
    with pytest.raises(robota.ConfigurationError, match="already registered"):
        _agent(
            "triage", [], handoffs=[Handoff(odd, tool_name="lookup_order")], tools=[lookup_order]
        )
    with pytest.raises(robota.ConfigurationError, match="handoffs takes"):
        _agent("triage", [], handoffs=["billing"])


def _pair(
    journal: robota.ExecutionJournal,
    triage_turns: list[Any],
    billing_turns: list[Any],
    ran: list[str],
) -> tuple[Agent, ScriptedProvider, Agent, ScriptedProvider]:
    """A journaled triage agent handing off to billing, whose tool logs each run of its body."""

    @robota.tool
    def lookup_order() -> str:
        """Look the order up."""
        ran.append("lookup")
        return "order 7: shipped"

    billing, billing_provider = _agent(
        "billing", billing_turns, system_prompt="Billing.", tools=[lookup_order]
    )
    triage, triage_provider = _agent(
        "triage", triage_turns, system_prompt="Triage.", handoffs=[billing], journal=journal
    )
    return triage, triage_provider, billing, billing_provider


# (kind, nth, written): where the process dies — before the receiver's first model call is
# durable; after the transfer's settlement is durable but before the batch is in history; after
# the receiver's tool effect settled.
CRASHES = [
    pytest.param("model_call_started", 2, False, 0, id="before-receivers-first-call"),
    pytest.param("effect_settled", 1, True, 0, id="after-transfer-settled"),
    pytest.param("effect_settled", 2, True, 1, id="after-receivers-effect-settled"),
]


@pytest.mark.parametrize(("kind", "nth", "written", "remaining"), CRASHES)
async def test_s40_a_journaled_handoff_resumes_on_the_receiver_repeating_nothing(
    kind: str, nth: int, written: bool, remaining: int
) -> None:
    inner = InMemoryJournal()
    crash = crash_at(kind, nth=nth)
    hooked = HookedJournal(inner, after=crash) if written else HookedJournal(inner, before=crash)
    ran: list[str] = []
    billing_turns: list[Any] = [[("lookup_order", {})], "your order shipped"]
    triage, _, _, _ = _pair(hooked, [[("transfer_to_billing", {})]], billing_turns, ran)
    with pytest.raises(Crash):
        await triage.run("where is my order?", execution_id="e")
    # A new process: the same agents, built again, on the same journal; only what is left.
    again: list[str] = []
    triage, triage_provider, _, billing_provider = _pair(
        inner, [], billing_turns[remaining:], again
    )
    result = await triage.resume("e")
    assert (result.output, result.agent, result.status) == (
        "your order shipped",
        "billing",
        "complete",
    )
    assert triage_provider.requests == []  # the entry agent's call is not made again
    assert len(ran) + len(again) == 1  # the receiver's tool ran exactly once
    first = billing_provider.requests[0]
    assert _is_system(first.messages[0], "Billing.")
    assert first.messages[1].content == "where is my order?"
    assert set(result.usage_by_agent) == {"triage", "billing"}
    assert _is_system(triage.history[0], "Triage.")  # S35: its own head once the run ends


async def test_s40_a_batch_cut_short_finishes_under_the_agent_that_asked_then_hands_off() -> None:
    # The batch asked for a transfer and one of triage's own tools; the process died before the
    # second call's effect began. The continuation runs it with triage's tools, then hands off.
    notes: list[str] = []

    @robota.tool
    def note() -> str:
        """Write a note."""
        notes.append("note")
        return "noted"

    def build(journal: robota.ExecutionJournal, triage_turns: list[Any]) -> tuple[Agent, Any]:
        billing, billing_provider = _agent("billing", ["done"])
        triage, _ = _agent(
            "triage", triage_turns, tools=[note], handoffs=[billing], journal=journal
        )
        return triage, billing_provider

    inner = InMemoryJournal()
    hooked = HookedJournal(inner, before=crash_at("effect_started", nth=2))
    triage, _ = build(hooked, [[("transfer_to_billing", {}), ("note", {})]])
    with pytest.raises(Crash):
        await triage.run("hi", execution_id="e")
    assert notes == []
    triage, billing_provider = build(inner, [])
    result = await triage.resume("e")
    assert (result.output, result.agent) == ("done", "billing")
    assert notes == ["note"]
    answers = _tool_results(billing_provider.requests[0].messages)
    assert [(a.tool_name, a.is_error) for a in answers] == [
        ("transfer_to_billing", False),
        ("note", False),
    ]


async def test_s40_a_completed_journaled_handoff_resumes_to_the_same_result() -> None:
    journal = InMemoryJournal()
    triage, _, _, _ = _pair(journal, [[("transfer_to_billing", {})]], ["billed"], [])
    first = await triage.run("hi", execution_id="e")
    again, provider, _, billing_provider = _pair(journal, [], [], [])
    result = await again.resume("e")
    assert (result.output, result.agent) == (first.output, "billing") == ("billed", "billing")
    assert provider.requests == billing_provider.requests == []


async def test_usage_by_agent_gives_each_agent_of_the_chain_its_own_usage_and_cost() -> None:
    robota.register_model_pricing("triage-model", input_per_million=1.0, output_per_million=2.0)
    robota.register_model_pricing("billing-model", input_per_million=3.0, output_per_million=4.0)
    billing, _ = _agent("billing", [ScriptedTurn("done", usage=_usage(100, 10))])
    triage, _ = _agent(
        "triage",
        [ScriptedTurn(tool_calls=[("transfer_to_billing", {})], usage=_usage(50, 5))],
        handoffs=[billing],
    )
    result = await triage.run("hi")
    assert set(result.usage_by_agent) == {"triage", "billing"}
    own, other = result.usage_by_agent["triage"], result.usage_by_agent["billing"]
    assert own.usage == _usage(50, 5)
    assert other.usage == _usage(100, 10)
    assert result.usage == _usage(150, 15)
    assert own.cost == pytest.approx((50 * 1 + 5 * 2) / 1e6)
    assert other.cost == pytest.approx((100 * 3 + 10 * 4) / 1e6)
    assert result.cost == pytest.approx(own.cost + other.cost)
    assert result.provider == "billing-vendor"
    assert result.model == "billing-model"


async def test_a_receivers_sub_agent_rolls_up_under_the_receiver() -> None:
    helper, _ = _agent("helper", [ScriptedTurn("helped", usage=_usage(7, 1))])
    billing, _ = _agent(
        "billing",
        [[("helper", {"input": "go"})], ScriptedTurn("done", usage=_usage(20, 2))],
        tools=[helper],
    )
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    result = await triage.run("hi")
    assert set(result.usage_by_agent) == {"triage", "billing", "billing/helper"}
    assert result.usage_by_agent["billing/helper"].usage == _usage(7, 1)


async def test_an_input_filter_changes_what_the_receiver_is_sent_never_the_history() -> None:
    billing, billing_provider = _agent("billing", ["done"], system_prompt="Billing.")
    triage, _ = _agent(
        "triage",
        [[("lookup_order", {})], ScriptedTurn("let me transfer", [("transfer_to_billing", {})])],
        tools=[lookup_order],
        handoffs=[Handoff(billing, input_filter=Handoff.drop_tool_calls)],
    )
    result = await triage.run("where is my order?")
    assert result.agent == "billing"
    sent = billing_provider.requests[0].messages
    assert [type(m).__name__ for m in sent] == ["SystemMessage", "UserMessage", "AssistantMessage"]
    assert sent[2].content == "let me transfer"
    assert sent[2].tool_calls == ()
    # S34: history is append-only — every call and result of the run is still there.
    assert len(_tool_results(triage.history)) == 2


async def test_an_input_filter_that_breaks_the_history_fails_the_run_with_a_named_error() -> None:
    def broken(messages: tuple[robota.Message, ...]) -> list[robota.Message]:
        return [m for m in messages if not isinstance(m, ToolMessage)]

    billing, billing_provider = _agent("billing", ["never"])
    triage, _ = _agent(
        "triage", [[("transfer_to_billing", {})]], handoffs=[Handoff(billing, input_filter=broken)]
    )
    with pytest.raises(robota.ConfigurationError, match="without their results"):
        await triage.run("hi")
    assert billing_provider.requests == []


async def test_a_cycle_counts_every_transfer_and_past_the_limit_the_model_is_told_to_finish() -> (
    None
):
    billing, billing_provider = _agent(
        "billing", [[("transfer_to_triage", {})], [("transfer_to_triage", {})], "I will finish"]
    )
    triage, triage_provider = _agent(
        "triage",
        [[("transfer_to_billing", {})], [("transfer_to_billing", {})]],
        handoffs=[billing],
        max_handoffs=3,
    )
    billing.add_handoffs(triage)
    result = await triage.run("loop")
    # triage → billing → triage → billing: three transfers; billing's next one is refused.
    assert result.output == "I will finish"
    assert result.agent == "billing"
    assert (len(triage_provider.requests), len(billing_provider.requests)) == (2, 3)
    last = billing_provider.requests[-1].messages[-1]
    assert isinstance(last, ToolMessage)
    assert last.is_error
    assert "limit of 3 handoff" in str(last.content)
    assert result.usage_by_agent.keys() == {"triage", "billing"}


async def test_max_handoffs_zero_refuses_every_transfer() -> None:
    billing, billing_provider = _agent("billing", ["never"])
    triage, triage_provider = _agent(
        "triage", [[("transfer_to_billing", {})], "myself"], handoffs=[billing], max_handoffs=0
    )
    result = await triage.run("hi")
    assert (result.output, result.agent) == ("myself", "triage")
    assert billing_provider.requests == []
    assert triage_provider.requests[1].messages[-1].is_error


async def test_s34_two_transfers_in_one_batch_the_first_wins_and_the_other_is_answered() -> None:
    billing, billing_provider = _agent("billing", ["billing here"])
    sales, sales_provider = _agent("sales", ["never"])
    triage, _ = _agent(
        "triage",
        [[("transfer_to_billing", {}), ("lookup_order", {}), ("transfer_to_sales", {})]],
        handoffs=[billing, sales],
        tools=[lookup_order],
    )
    result = await triage.run("hi")
    assert result.agent == "billing"
    assert sales_provider.requests == []
    answers = _tool_results(billing_provider.requests[0].messages)
    assert [a.tool_name for a in answers] == [
        "transfer_to_billing",
        "lookup_order",
        "transfer_to_sales",
    ]
    assert [a.is_error for a in answers] == [False, False, True]
    assert answers[1].content == "order 7: shipped"  # the batch's other calls settled first
    assert "already transferred" in str(answers[2].content)


async def test_s23_aborting_during_the_receiver_interrupts_the_run() -> None:
    controller = AbortController()
    billing_provider = ScriptedProvider(
        ["one two three four five six seven eight nine ten"], chunk_delay=0.05, name="b-vendor"
    )
    billing = Agent("billing-model", provider=billing_provider, name="billing")
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])

    async def abort_soon() -> None:
        await asyncio.sleep(0.12)
        controller.abort("stop")

    aborter = asyncio.ensure_future(abort_soon())
    result = await triage.run("hi", signal=controller.signal)
    await aborter
    assert result.status == "interrupted"
    assert result.agent == "billing"
    assert billing_provider.aborted_calls == 1
    assert str(result.output).startswith("one")
    assert triage.history[-1].state == "interrupted"


async def test_s31_the_runs_limits_hold_across_the_handoff() -> None:
    billing, billing_provider = _agent(
        "billing",
        [[("lookup_order", {})], "never"],
        tools=[lookup_order],
    )
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    with pytest.raises(robota.UsageLimitExceeded):
        await triage.run("hi", limits=UsageLimits(requests=2))
    assert len(billing_provider.requests) == 1  # the run's third model call is never sent


async def test_s39_the_round_budget_is_the_whole_runs() -> None:
    billing, billing_provider = _agent(
        "billing", [[("lookup_order", {})], "summary"], tools=[lookup_order]
    )
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    result = await triage.run("hi", max_rounds=2)
    assert result.stop_reason == "max_rounds"
    assert result.rounds == 3  # two rounds, then the forced summary — by the receiver
    assert result.output == "summary"
    assert billing_provider.requests[-1].tools == ()


async def test_s21_a_receivers_tool_denied_by_the_entry_agents_rule_is_refused() -> None:
    ran: list[str] = []

    @robota.tool(name="refund", risk="execute")
    def refund() -> str:
        """Refund the order."""
        ran.append("refund")
        return "refunded"

    billing, billing_provider = _agent(
        "billing",
        [[("refund", {})], "could not"],
        tools=[refund],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass")),
    )
    triage, _ = _agent(
        "triage",
        [[("transfer_to_billing", {})]],
        handoffs=[billing],
        tool_gate=PermissionGate(PermissionPolicy(mode="bypass", deny=["refund"])),
    )
    result = await triage.run("refund me")
    assert result.output == "could not"
    assert ran == []
    answer = billing_provider.requests[1].messages[-1]
    assert answer.is_error
    assert str(answer.content).startswith("Permission denied")


async def test_s33_events_after_the_handoff_carry_the_receiver_in_the_owner_path() -> None:
    service = RecordingEventService()
    billing, _ = _agent("billing", ["done"])
    triage, _ = _agent(
        "triage", [[("transfer_to_billing", {})]], handoffs=[billing], event_service=service
    )
    await triage.run("hi")
    (handoff,) = [e for e in service.events if e.name == EventNames.HANDOFF]
    assert handoff.data == {"from_agent": "triage", "to_agent": "billing", "count": 1}
    requests = [e for e in service.events if e.name == EventNames.PROVIDER_REQUEST]
    assert len(requests) == 2
    first = [(o.type, o.id) for o in requests[0].owner_path]
    second = [(o.type, o.id) for o in requests[1].owner_path]
    assert first[:2] == second[:2]  # the same run: agent/<triage>/execution/<id>
    assert first[0] == ("agent", triage.id)
    assert second[2] == ("agent", billing.id)
    completed = [e for e in service.events if e.name == EventNames.RUN_COMPLETED]
    assert len(completed) == 1


async def test_the_receivers_own_event_service_hears_its_part_of_the_run() -> None:
    service = RecordingEventService()
    billing, _ = _agent("billing", ["done"], event_service=service)
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    await triage.run("hi")
    names = [e.name for e in service.events]
    assert EventNames.PROVIDER_REQUEST in names
    assert all(e.owner_path[-1].id != triage.id for e in service.events)


async def test_run_stream_works_across_a_handoff() -> None:
    billing, _ = _agent("billing", ["streamed by billing"])
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    stream = triage.run_stream("hi")
    deltas = [event.text async for event in stream if isinstance(event, robota.TextDelta)]
    result = await stream.result()
    assert "".join(deltas) == "streamed by billing"
    assert result.agent == "billing"


def test_run_sync_works_across_a_handoff() -> None:
    billing, _ = _agent("billing", ["sync billing"])
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    result = triage.run_sync("hi")
    assert (result.output, result.agent) == ("sync billing", "billing")
    triage.close()
    billing.close()


async def test_s18_the_receivers_final_reply_is_validated_against_the_runs_output() -> None:
    class Answer(pydantic.BaseModel):
        city: str

    billing, _ = _agent("billing", ['{"city": "Oslo"}'])
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    result = await triage.run("where?", output=Answer)
    assert result.output == Answer(city="Oslo")
    assert result.agent == "billing"


async def test_a_later_run_starts_on_the_entry_agent_with_its_own_prompt() -> None:
    billing, billing_provider = _agent("billing", ["billing answer"], system_prompt="B.")
    triage, triage_provider = _agent(
        "triage",
        [[("transfer_to_billing", {})], "triage again"],
        system_prompt="T.",
        handoffs=[billing],
    )
    await triage.run("first")
    second = await triage.run("second")
    assert (second.output, second.agent) == ("triage again", "triage")
    sent = triage_provider.requests[-1].messages
    assert _is_system(sent[0], "T.")
    assert any(m.content == "billing answer" for m in sent)
    assert len(billing_provider.requests) == 1


async def test_a_transfer_invoked_directly_is_refused() -> None:
    billing, _ = _agent("billing", [])
    triage, _ = _agent("triage", [], handoffs=[billing])
    outcome = await triage.invoke_tool("transfer_to_billing", {})
    assert outcome.result.is_error
    assert "inside a run" in outcome.result.content


async def test_a_receiver_that_cannot_keep_the_runs_cost_limit_is_not_transferred_to() -> None:
    billing, billing_provider = _agent("unpriced", ["never"])
    robota.register_model_pricing(
        "frugal-model", input_per_million=1.0, output_per_million=1.0, replace=True
    )
    triage, triage_provider = _agent(
        "frugal", [[("transfer_to_unpriced", {})], "kept it"], handoffs=[billing]
    )
    result = await triage.run("hi", limits=UsageLimits(cost_usd=1.0))
    assert (result.output, result.agent) == ("kept it", "frugal")
    assert billing_provider.requests == []
    answer = triage_provider.requests[1].messages[-1]
    assert answer.is_error
    assert "price" in str(answer.content)


async def test_a_sub_agent_that_hands_off_rolls_up_both_agents_under_the_caller() -> None:
    billing, _ = _agent("billing", [ScriptedTurn("paid", usage=_usage(30, 3))])
    triage, _ = _agent(
        "triage",
        [ScriptedTurn(tool_calls=[("transfer_to_billing", {})], usage=_usage(10, 1))],
        handoffs=[billing],
    )
    lead, lead_provider = _agent("lead", [[("triage", {"input": "pay"})], "ok"], tools=[triage])
    result = await lead.run("start")
    assert result.output == "ok"
    assert lead_provider.requests[1].messages[-1].content == "paid"
    assert result.usage_by_agent["lead/triage"].usage == _usage(10, 1)
    assert result.usage_by_agent["lead/billing"].usage == _usage(30, 3)


def test_add_handoffs_refuses_a_name_the_agent_already_has() -> None:
    billing, _ = _agent("billing", [])
    triage, _ = _agent("triage", [], handoffs=[billing])
    with pytest.raises(robota.ConfigurationError, match="already has a tool"):
        triage.add_handoffs(billing)
    assert [t.name for t in triage.tools] == ["transfer_to_billing"]


async def test_s19_a_receivers_tool_search_loads_its_deferred_tools() -> None:
    @robota.tool(defer=True)
    def ledger() -> str:
        """Read the ledger."""
        return "balance 12"

    billing, billing_provider = _agent(
        "billing",
        [[("tool_search", {"query": "select:ledger"})], [("ledger", {})], "balance is 12"],
        tools=[lookup_order, ledger],
        tool_deferral="on",
    )
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    result = await triage.run("balance?")
    assert result.output == "balance is 12"
    assert "ledger" not in [spec.name for spec in billing_provider.requests[0].tools]
    assert "ledger" in [spec.name for spec in billing_provider.requests[1].tools]
    assert billing_provider.requests[2].messages[-1].content == "balance 12"


async def test_s27_the_receivers_model_calls_carry_the_runs_trace() -> None:
    billing, billing_provider = _agent("billing", ["done"])
    triage, triage_provider = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    trace = robota.TraceContext(
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736", parent_span_id="b7ad6b7169203331"
    )
    await triage.run("hi", trace=trace)
    entry_call, receiver_call = (
        triage_provider.requests[0].trace,
        billing_provider.requests[0].trace,
    )
    assert entry_call is not None
    assert receiver_call is not None
    assert receiver_call.traceparent.split("-")[1] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert receiver_call.traceparent != entry_call.traceparent


async def test_s22_the_runs_stop_hook_fires_when_the_receiver_ends_the_turn() -> None:
    payloads: list[dict[str, Any]] = []

    class Recorder:
        async def execute(self, hook: Any, payload: Any, *, signal: Any = None) -> Any:
            payloads.append(dict(payload))
            return robota.HookOutcome.allow()

    hooks = robota.HookRunner(
        {"Stop": [{"hooks": [{"type": "command", "command": "recorded"}]}]},
        {"command": Recorder()},
    )
    billing, _ = _agent("billing", ["billing is done"])
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing], hooks=hooks)
    await triage.run("hi")
    assert [p["hook_event_name"] for p in payloads] == ["Stop"]
    assert payloads[0]["last_assistant_message"] == "billing is done"


async def test_s40_a_continuation_does_not_announce_a_replayed_handoff_again() -> None:
    inner = InMemoryJournal()
    # Killed once billing's tool settled: the handoff is durable history by then.
    hooked = HookedJournal(inner, after=crash_at("effect_settled", nth=2))
    turns: list[Any] = [[("lookup_order", {})], "done"]
    triage, _, _, _ = _pair(hooked, [[("transfer_to_billing", {})]], turns, [])
    seen: list[robota.AgentEvent] = []
    with pytest.raises(Crash):
        await triage.run("hi", execution_id="e", on_event=seen.append)
    assert [e.name for e in seen].count(EventNames.HANDOFF) == 1
    triage, _, _, _ = _pair(inner, [], turns[1:], [])
    again: list[robota.AgentEvent] = []
    result = await triage.resume("e", on_event=again.append)
    assert result.agent == "billing"
    assert EventNames.HANDOFF not in [e.name for e in again]


async def test_s34_an_input_filter_sees_what_the_model_is_sent_and_keeps_its_order() -> None:
    # An interrupted reply of an earlier turn is sent annotated (a copy, not the stored message):
    # the filter gets that copy, and nothing it replaced is sent again after what it kept.
    seen: list[tuple[robota.Message, ...]] = []

    def keep_all(messages: tuple[robota.Message, ...]) -> tuple[robota.Message, ...]:
        seen.append(messages)
        return messages

    billing, billing_provider = _agent("billing", ["done"], system_prompt="Billing.")
    triage, triage_provider = _agent(
        "triage",
        [[("transfer_to_billing", {})]],
        handoffs=[Handoff(billing, input_filter=keep_all)],
    )
    await triage.replace_history(
        [robota.UserMessage("first"), AssistantMessage("partial", state="interrupted")]
    )
    result = await triage.run("second")
    assert result.agent == "billing"
    before = triage_provider.requests[0].messages
    sent = billing_provider.requests[0].messages
    assert list(seen[0][:3]) == list(before)  # then the transfer call and its answer
    assert _is_system(sent[0], "Billing.")
    assert [m.content for m in sent[1:4]] == [m.content for m in before]
    assert len(sent) == 6  # the head, the three before, the transfer call and its answer
    assert sent[1:] == seen[0]


def _with_helper(
    journal: robota.ExecutionJournal, billing_turns: list[Any], helper_turns: list[Any]
) -> tuple[Agent, ScriptedProvider]:
    helper, helper_provider = _agent("helper", helper_turns)
    billing, _ = _agent("billing", billing_turns, tools=[helper])
    triage, _ = _agent(
        "triage",
        [ScriptedTurn("", [("transfer_to_billing", {})], usage=_usage(1, 1))],
        handoffs=[billing],
        journal=journal,
    )
    return triage, helper_provider


@pytest.mark.parametrize(
    ("kind", "nth", "written"),
    [
        # The receiver's sub-agent call settled (its effect is durable), the run not yet ended.
        pytest.param("effect_settled", 2, True, id="after-the-sub-agent-call-settled"),
        # The sub-agent's reply is durable in its own execution; its call has no result yet.
        pytest.param("model_call_settled", 3, True, id="inside-the-sub-agent"),
    ],
)
async def test_s40_a_receivers_sub_agent_is_resumed_and_charged_like_the_entry_agents(
    kind: str, nth: int, written: bool
) -> None:
    # S40: a continuation counts what the receiver's sub-agent used before the crash, and
    # continues its call instead of asking for reconciliation, exactly as for the entry agent's.
    billing_turns: list[Any] = [
        [("helper", {"input": "go"})],
        ScriptedTurn("done", usage=_usage(20, 2)),
    ]
    helper_turns = [ScriptedTurn("helped", usage=_usage(7, 1))]
    uncrashed, _ = _with_helper(InMemoryJournal(), billing_turns, helper_turns)
    expected = await uncrashed.run("hi", execution_id="e")
    inner = InMemoryJournal()
    crash = crash_at(kind, nth=nth)
    hooked = HookedJournal(inner, after=crash) if written else HookedJournal(inner, before=crash)
    triage, _ = _with_helper(hooked, billing_turns, helper_turns)
    with pytest.raises(Crash):
        await triage.run("hi", execution_id="e")
    triage, helper_provider = _with_helper(inner, billing_turns[1:], [])
    result = await triage.resume("e")
    assert helper_provider.requests == []  # nothing of the sub-agent is repeated
    assert (result.output, result.agent) == ("done", "billing")
    assert result.usage == expected.usage
    assert dict(result.usage_by_agent) == dict(expected.usage_by_agent)
    assert "billing/helper" in result.usage_by_agent


async def test_s03_a_receivers_modules_are_initialised_before_its_first_round() -> None:
    # A module is initialised before the agent's first run; a receiver's first run may be
    # the part of another agent's run it takes over, and its tools may need the module.
    class Ledger(robota.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ready: list[str] = []

        async def initialize(self, agent: object) -> None:
            self.ready.append(getattr(agent, "name", "?"))

    ledger = Ledger()
    billing, _ = _agent("billing", ["done", "again"], modules=[ledger])
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    result = await triage.run("hi")
    assert (result.output, result.agent) == ("done", "billing")
    assert ledger.ready == ["billing"]
    await billing.run("again")  # its own first run does not initialise it a second time
    assert ledger.ready == ["billing"]


async def test_s40_a_resume_after_the_handoff_does_not_move_the_receiver_to_the_entrys_fallback() -> (
    None
):
    # Triage's primary failed and its fallback asked for the transfer; the process died once
    # billing's first call was dispatched. Settled as not happened, the continuation makes that
    # call again on billing's own model: the latest settled call (triage's fallback) is not
    # billing's chain position (S40: continue on the entry the latest call *of this agent* used).
    def build(
        journal: robota.ExecutionJournal, primary: list[Any], backup: list[Any]
    ) -> tuple[Agent, ScriptedProvider]:
        billing, billing_provider = _agent("billing", ["done"])
        triage = Agent(
            "triage-model",
            provider=ScriptedProvider(primary, name="triage-vendor"),
            fallback=[ScriptedProvider(backup, name="backup-vendor")],
            name="triage",
            handoffs=[billing],
            journal=journal,
        )
        return triage, billing_provider

    inner = InMemoryJournal()
    hooked = HookedJournal(inner, after=crash_at("model_call_started", nth=3))
    triage, _ = build(hooked, [robota.RateLimitError("429")], [[("transfer_to_billing", {})]])
    with pytest.raises(Crash):
        await triage.run("hi", execution_id="e")
    triage, billing_provider = build(inner, [], [])
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await triage.resume("e")
    for item in caught.value.items:
        await triage.reconcile("e", item.id, happened=False)
    result = await triage.resume("e")
    assert (result.output, result.agent, result.provider) == ("done", "billing", "billing-vendor")
    assert len(billing_provider.requests) == 1


async def test_s39_tool_only_completion_is_the_runs_setting_across_the_handoff() -> None:
    # S18/S39: a run with output= never completes on tool results alone; a receiver built with
    # allow_tool_only_completion=True does not change that (its empty reply gets the summary
    # call, which answers with the value), and a run allowing it keeps allowing it.
    class Answer(pydantic.BaseModel):
        city: str

    billing, billing_provider = _agent(
        "billing",
        [[("lookup_order", {})], "", '{"city": "Oslo"}'],
        tools=[lookup_order],
        allow_tool_only_completion=True,
    )
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    result = await triage.run("where?", output=Answer)
    assert (result.output, result.agent) == (Answer(city="Oslo"), "billing")
    assert len(billing_provider.requests) == 3

    billing, billing_provider = _agent("billing", [[("lookup_order", {})]], tools=[lookup_order])
    triage, _ = _agent("triage", [[("transfer_to_billing", {})]], handoffs=[billing])
    result = await triage.run("where?", allow_tool_only_completion=True, max_rounds=2)
    assert (result.stop_reason, result.agent) == ("tool_only", "billing")
    assert len(billing_provider.requests) == 1  # no summary call: the tool results are the answer


def test_add_handoffs_refuses_a_handoff_to_the_agent_itself() -> None:
    # A transfer to the agent already running the run would only spend the run's handoffs.
    triage, _ = _agent("triage", [])
    with pytest.raises(robota.ConfigurationError, match="cannot hand off to itself"):
        triage.add_handoffs(Handoff(triage, tool_name="again"))
    assert list(triage.tools) == []


async def test_s40_a_continuation_filters_only_what_preceded_the_handoff() -> None:
    # The filter applies to the conversation before the handoff; on a continuation the history
    # holds the receiver's own calls too, and its model is sent them as the uncrashed run did.
    def build(journal: robota.ExecutionJournal, billing_turns: list[Any]) -> tuple[Agent, Any]:
        billing, billing_provider = _agent("billing", billing_turns, tools=[lookup_order])
        triage, _ = _agent(
            "triage",
            [
                [("lookup_order", {})],
                ScriptedTurn("moving you", [("transfer_to_billing", {})]),
            ],
            tools=[lookup_order],
            handoffs=[Handoff(billing, input_filter=Handoff.drop_tool_calls)],
            journal=journal,
        )
        return triage, billing_provider

    billing_turns: list[Any] = [[("lookup_order", {})], "done"]
    triage, billing_provider = build(InMemoryJournal(), billing_turns)
    await triage.run("hi", execution_id="e")
    uncrashed = billing_provider.requests[1].messages
    inner = InMemoryJournal()
    # Killed once billing's own lookup settled (triage's lookup and the transfer settled first).
    triage, _ = build(HookedJournal(inner, after=crash_at("effect_settled", nth=3)), billing_turns)
    with pytest.raises(Crash):
        await triage.run("hi", execution_id="e")
    triage, billing_provider = build(inner, billing_turns[1:])
    result = await triage.resume("e")
    assert (result.output, result.agent) == ("done", "billing")
    sent = billing_provider.requests[0].messages
    assert [(type(m).__name__, m.content) for m in sent] == [
        (type(m).__name__, m.content) for m in uncrashed
    ]
    assert [t.tool_name for t in _tool_results(sent)] == ["lookup_order"]  # billing's own


async def test_s40_a_continuation_lists_each_sub_agent_under_the_agent_that_called_it() -> None:
    # Triage called its helper, then handed off; the process died inside billing's part. The
    # continuation charges the helper once, under triage (as the uncrashed run listed it).
    def build(
        journal: robota.ExecutionJournal, helper: list[Any], billing: list[Any], triage: list[Any]
    ) -> Agent:
        helper_agent, _ = _agent("helper", helper)
        billing_agent, _ = _agent("billing", billing, tools=[lookup_order])
        triage_agent, _ = _agent(
            "triage", triage, tools=[helper_agent], handoffs=[billing_agent], journal=journal
        )
        return triage_agent

    helper_turns = [ScriptedTurn("helped", usage=_usage(7, 1))]
    billing_turns: list[Any] = [[("lookup_order", {})], "done"]
    triage_turns: list[Any] = [[("helper", {"input": "x"})], [("transfer_to_billing", {})]]
    uncrashed = await build(InMemoryJournal(), helper_turns, billing_turns, triage_turns).run(
        "hi", execution_id="e"
    )
    inner = InMemoryJournal()
    hooked = HookedJournal(inner, after=crash_at("effect_settled", nth=3))  # billing's lookup
    with pytest.raises(Crash):
        await build(hooked, helper_turns, billing_turns, triage_turns).run("hi", execution_id="e")
    result = await build(inner, [], billing_turns[1:], []).resume("e")
    assert result.agent == "billing"
    assert dict(result.usage_by_agent) == dict(uncrashed.usage_by_agent)
    assert result.usage_by_agent["triage/helper"].usage == _usage(7, 1)
    assert result.usage == uncrashed.usage


async def test_s31_a_receiver_whose_fallback_cannot_keep_the_cost_limit_is_not_transferred_to() -> (
    None
):
    # S31/S30: every model of the receiver's chain may answer, so each needs a price under a
    # cost limit — checked at the transfer, as for the entry agent's chain when its run starts.
    robota.register_model_pricing(
        "priced-model", input_per_million=1.0, output_per_million=1.0, replace=True
    )
    robota.register_model_pricing(
        "frugal-model", input_per_million=1.0, output_per_million=1.0, replace=True
    )
    backup = ScriptedProvider(["never"], name="backup-vendor")
    billing = Agent(
        "priced-model",
        provider=ScriptedProvider([robota.RateLimitError("429")], name="priced-vendor"),
        fallback=[(backup, "unpriced-backup-model")],
        name="billing",
    )
    triage, triage_provider = _agent(
        "frugal", [[("transfer_to_billing", {})], "kept it"], handoffs=[billing]
    )
    result = await triage.run("hi", limits=UsageLimits(cost_usd=1.0))
    assert (result.output, result.agent) == ("kept it", "frugal")
    assert backup.requests == []
    answer = triage_provider.requests[1].messages[-1]
    assert answer.is_error
    assert "unpriced-backup-model" in str(answer.content)


@pytest.mark.parametrize("returned", [None, "some text", 3])
async def test_an_input_filter_returning_no_message_list_fails_with_a_named_error(
    returned: object,
) -> None:
    billing, billing_provider = _agent("billing", ["never"])
    triage, _ = _agent(
        "triage",
        [[("transfer_to_billing", {})]],
        system_prompt="Triage.",
        handoffs=[Handoff(billing, input_filter=lambda messages: returned)],  # type: ignore[arg-type,return-value]
    )
    with pytest.raises(robota.ConfigurationError, match="must return a list of messages"):
        await triage.run("hi")
    assert billing_provider.requests == []
    assert _is_system(triage.history[0], "Triage.")
