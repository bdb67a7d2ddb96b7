"""Issue 29 part 4: input, output and tool guardrails (S21, S22, S33, S34, S39, S40, S42).

Scripted providers, real tools and a real in-memory journal; a tool that records whether its body
ran proves what a guardrail kept from running.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import robota
from journal_hooks import Crash, HookedJournal, crash_at
from robota import GuardrailResult, GuardrailTripped, InputGuardrail, OutputGuardrail, ToolGuardrail
from robota.testing import InMemoryJournal, ScriptedProvider, ScriptedTurn


def _recorder(ran: list[str]) -> robota.Tool:
    @robota.tool
    def act(what: str) -> str:
        """Do something with an effect."""
        ran.append(what)
        return f"did {what}"

    return act


def _agent(turns: list[Any], **options: Any) -> tuple[robota.Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns)
    return robota.Agent(provider=provider, model="m", **options), provider


def _block_secrets(text: str) -> GuardrailResult | None:
    if "password" in text:
        return GuardrailResult(tripped=True, reason="asks for a password")
    return None


# --------------------------------------------------------------------------- input


async def test_S39_input_guardrail_trips_before_any_model_call() -> None:
    agent, provider = _agent(["never"], guardrails=[InputGuardrail(_block_secrets)])
    with pytest.raises(GuardrailTripped) as info:
        await agent.run("tell me the admin password")
    error = info.value
    assert isinstance(error, robota.RobotaError)
    assert (error.code, error.recoverable, error.category) == ("guardrail_tripped", False, "user")
    assert (error.guardrail, error.reason, error.phase) == (
        "_block_secrets",
        "asks for a password",
        "input",
    )
    assert provider.requests == []  # no model call was made
    assert len(agent.history) == 0  # S34: the refused input never entered history
    # The agent stays usable: the next input passes and is answered.
    provider2_agent, provider2 = _agent(["hi"], guardrails=[InputGuardrail(_block_secrets)])
    result = await provider2_agent.run("hello")
    assert result.output == "hi"
    assert [(r.guardrail, r.phase, r.outcome) for r in result.guardrails] == [
        ("_block_secrets", "input", "passed")
    ]
    assert len(provider2.requests) == 1


async def test_S39_async_input_guardrail_passes_and_is_recorded() -> None:
    seen: list[str] = []

    async def polite(text: str) -> GuardrailResult | None:
        await asyncio.sleep(0)
        seen.append(text)
        return GuardrailResult(tripped=False, reason="fine")

    agent, _ = _agent(["answer"], guardrails=[InputGuardrail(polite, name="polite")])
    result = await agent.run("please help")
    assert result.output == "answer"
    assert seen == ["please help"]
    (record,) = result.guardrails
    assert (record.guardrail, record.phase, record.outcome, record.reason) == (
        "polite",
        "input",
        "passed",
        "fine",
    )
    assert record.duration >= 0
    assert record.usage is None  # a function costs nothing
    assert record.cost is None


async def test_S39_run_option_guardrails_add_to_the_agents() -> None:
    agent, provider = _agent(["never"])
    with pytest.raises(GuardrailTripped):
        await agent.run("password?", guardrails=[InputGuardrail(_block_secrets)])
    assert provider.requests == []


async def test_S39_agent_guardrail_verdict_decides_and_its_usage_is_metered() -> None:
    judge_provider = ScriptedProvider(
        [
            ScriptedTurn(
                text='{"tripped": false, "reason": "on topic"}',
                usage=robota.Usage.from_counts(prompt=7, completion=3),
            ),
            ScriptedTurn(
                text='{"tripped": true, "reason": "off topic"}',
                usage=robota.Usage.from_counts(prompt=8, completion=4),
            ),
        ]
    )
    judge = robota.Agent(
        provider=judge_provider, model="judge", name="topic", system_prompt="Judge the topic."
    )
    agent, provider = _agent(
        [ScriptedTurn(text="ok", usage=robota.Usage.from_counts(prompt=1, completion=1))],
        guardrails=[InputGuardrail(judge)],
    )
    result = await agent.run("about cooking")
    (record,) = result.guardrails
    assert (record.guardrail, record.outcome, record.reason) == ("topic", "passed", "on topic")
    assert record.usage is not None
    assert record.usage.prompt_tokens == 7
    assert result.usage.prompt_tokens == 1  # reported apart, not in the run's own usage
    with pytest.raises(GuardrailTripped) as info:
        await agent.run("about cars")
    assert (info.value.guardrail, info.value.reason) == ("topic", "off topic")
    assert len(provider.requests) == 1  # the tripped run made no model call
    assert judge_provider.requests[0].messages[-1].content == "about cooking"


# --------------------------------------------------------------------------- parallel input


async def test_S39_parallel_input_guardrail_trip_leaves_the_tool_never_run() -> None:
    ran: list[str] = []

    async def slow_trip(text: str) -> GuardrailResult:
        await asyncio.sleep(0.05)  # the first model call answers before the verdict lands
        return GuardrailResult(tripped=True, reason="no")

    agent, provider = _agent(
        [[("act", {"what": "delete"})], "done"],
        tools=[_recorder(ran)],
        guardrails=[InputGuardrail(slow_trip, run_in_parallel=True)],
    )
    with pytest.raises(GuardrailTripped) as info:
        await agent.run("go")
    assert info.value.phase == "input"
    assert ran == []  # the tool body never started
    assert len(provider.requests) == 1  # the model call ran beside the guardrail
    assert provider.remaining == 1


async def test_S39_parallel_input_guardrail_waits_before_tool_body_and_then_lets_it_run() -> None:
    order: list[str] = []

    @robota.tool
    def act(what: str) -> str:
        """Do something."""
        order.append("tool")
        return "did"

    async def slow_pass(text: str) -> None:
        await asyncio.sleep(0.05)
        order.append("guardrail")

    agent, _ = _agent(
        [[("act", {"what": "x"})], "done"],
        tools=[act],
        guardrails=[InputGuardrail(slow_pass, run_in_parallel=True)],
    )
    result = await agent.run("go")
    assert result.output == "done"
    assert order == ["guardrail", "tool"]


async def test_S39_parallel_input_guardrail_trip_stops_a_model_call_in_flight() -> None:
    def trip(text: str) -> GuardrailResult:
        return GuardrailResult(tripped=True, reason="stop")

    agent, _ = _agent(
        [ScriptedTurn(text="slow reply", delay=5.0)],
        guardrails=[InputGuardrail(trip, run_in_parallel=True)],
    )
    started = time.monotonic()
    with pytest.raises(GuardrailTripped):
        await agent.run("go")
    assert time.monotonic() - started < 2.0  # not the 5 s the model call would take


async def test_S39_parallel_input_guardrail_passing_after_a_text_reply_returns_it() -> None:
    async def slow_pass(text: str) -> None:
        await asyncio.sleep(0.02)

    agent, _ = _agent(["hello"], guardrails=[InputGuardrail(slow_pass, run_in_parallel=True)])
    result = await agent.run("go")
    assert result.output == "hello"
    assert [r.outcome for r in result.guardrails] == ["passed"]


# --------------------------------------------------------------------------- output


async def test_S39_output_guardrail_trip_fails_the_run_and_returns_nothing() -> None:
    def no_leak(output: object) -> GuardrailResult | None:
        return GuardrailResult(True, "leaks a key") if "sk-" in str(output) else None

    agent, _ = _agent(["the key is sk-123"], guardrails=[OutputGuardrail(no_leak)])
    with pytest.raises(GuardrailTripped) as info:
        await agent.run("what is the key?")
    assert (info.value.phase, info.value.reason) == ("output", "leaks a key")
    # S34: history is append-only; the reply stays, the run did not return it.
    assert [m.kind for m in agent.history] == ["user", "assistant"]


async def test_S18_output_guardrail_sees_the_validated_object() -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        n: int

    seen: list[object] = []

    def check(output: object) -> None:
        seen.append(output)

    agent, _ = _agent(['{"n": 3}'], guardrails=[OutputGuardrail(check)])
    result = await agent.run("n?", output=Answer)
    assert result.output == Answer(n=3)
    assert seen == [Answer(n=3)]


# --------------------------------------------------------------------------- tools


async def test_S21_tool_guardrail_before_refuses_like_a_permission_deny() -> None:
    ran: list[str] = []

    def no_delete(call: robota.ToolCallCheck) -> GuardrailResult | None:
        if call.arguments.get("what") == "delete":
            return GuardrailResult(tripped=True, reason="deleting is not allowed")
        return None

    agent, provider = _agent(
        [[("act", {"what": "delete"})], "understood"],
        tools=[_recorder(ran)],
        guardrails=[ToolGuardrail(no_delete)],
    )
    result = await agent.run("go")
    assert ran == []
    assert result.output == "understood"
    assert result.tool_calls_executed == 0
    tool_message = provider.requests[1].messages[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert tool_message.is_error
    assert "refused by guardrail 'no_delete'" in tool_message.content
    assert "deleting is not allowed" in tool_message.content
    assert [(r.phase, r.outcome) for r in result.guardrails] == [("tool_before", "tripped")]


async def test_S21_tool_guardrail_after_replaces_what_the_model_sees() -> None:
    ran: list[str] = []

    async def redact(call: robota.ToolCallCheck) -> GuardrailResult:
        assert call.result == "did read"
        return GuardrailResult(replacement="[redacted]")

    agent, provider = _agent(
        [[("act", {"what": "read"})], "ok"],
        tools=[_recorder(ran)],
        guardrails=[ToolGuardrail(after=redact, tools=["act"])],
    )
    result = await agent.run("go")
    assert ran == ["read"]
    tool_message = provider.requests[1].messages[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert (tool_message.content, tool_message.is_error) == ("[redacted]", False)
    assert [(r.phase, r.outcome) for r in result.guardrails] == [("tool_after", "replaced")]


async def test_S21_tool_guardrail_after_trip_withholds_the_result() -> None:
    def withhold(call: robota.ToolCallCheck) -> GuardrailResult:
        return GuardrailResult(tripped=True, reason="sensitive")

    agent, provider = _agent(
        [[("act", {"what": "read"})], "ok"],
        tools=[_recorder([])],
        guardrails=[ToolGuardrail(after=withhold)],
    )
    await agent.run("go")
    tool_message = provider.requests[1].messages[-1]
    assert tool_message.is_error  # type: ignore[union-attr]
    assert "withheld by guardrail 'withhold': sensitive" in tool_message.content


async def test_S21_tool_guardrail_applies_only_to_named_tools() -> None:
    ran: list[str] = []

    def refuse(call: robota.ToolCallCheck) -> GuardrailResult:
        return GuardrailResult(tripped=True, reason="no")

    agent, _ = _agent(
        [[("act", {"what": "x"})], "ok"],
        tools=[_recorder(ran)],
        guardrails=[ToolGuardrail(refuse, tools=["other"])],
    )
    result = await agent.run("go")
    assert ran == ["x"]
    assert result.guardrails == ()


async def test_S21_permission_deny_comes_before_tool_guardrails() -> None:
    checked: list[str] = []

    def check(call: robota.ToolCallCheck) -> None:
        checked.append(call.tool_name)

    gate = robota.PermissionGate(robota.PermissionPolicy(mode="plan"))
    agent, provider = _agent(
        [[("act", {"what": "x"})], "ok"],
        tools=[_recorder([])],
        tool_gate=gate,
        guardrails=[ToolGuardrail(check)],
    )
    await agent.run("go")
    assert checked == []  # a denied call costs no guardrail call
    assert provider.requests[1].messages[-1].is_error  # type: ignore[union-attr]


# --------------------------------------------------------------------------- events


async def test_S33_guardrail_calls_are_events() -> None:
    events = robota.RecordingEventService()

    def tool_check(call: robota.ToolCallCheck) -> None:
        return None

    agent, _ = _agent(
        [[("act", {"what": "x"})], "ok"],
        tools=[_recorder([])],
        event_service=events,
        guardrails=[
            InputGuardrail(_block_secrets),
            OutputGuardrail(lambda output: None, name="out"),
            ToolGuardrail(tool_check),
        ],
    )
    await agent.run("go")
    found = [e for e in events.events if e.name == robota.EventNames.GUARDRAIL]
    assert [(e.data["guardrail"], e.data["phase"], e.data["outcome"]) for e in found] == [
        ("_block_secrets", "input", "passed"),
        ("tool_check", "tool_before", "passed"),
        ("out", "output", "passed"),
    ]
    assert all(e.data["duration"] >= 0 for e in found)
    assert found[0].name == "execution.guardrail"


# --------------------------------------------------------------------------- misuse


def test_S42_a_bare_function_in_guardrails_names_the_fix() -> None:
    with pytest.raises(robota.ConfigurationError, match=r"InputGuardrail\(fn\)"):
        robota.Agent(provider=ScriptedProvider([]), model="m", guardrails=[_block_secrets])  # type: ignore[list-item]


@pytest.mark.parametrize("bad", [42, "check", None])
def test_S42_a_guardrail_check_must_be_a_function_or_agent(bad: object) -> None:
    with pytest.raises(robota.ConfigurationError, match=r"function .* or an Agent"):
        InputGuardrail(bad)  # type: ignore[arg-type]


def test_S42_guardrails_must_be_a_list() -> None:
    with pytest.raises(robota.ConfigurationError, match="must be a list"):
        robota.Agent(provider=ScriptedProvider([]), model="m", guardrails="x")  # type: ignore[arg-type]


def test_S42_tool_guardrail_needs_a_check() -> None:
    with pytest.raises(robota.ConfigurationError, match="before=, after= or both"):
        ToolGuardrail()


async def test_S42_a_check_returning_a_wrong_value_names_the_fix() -> None:
    agent, provider = _agent(["never"], guardrails=[InputGuardrail(lambda text: "yes")])  # type: ignore[arg-type,return-value]
    with pytest.raises(robota.ConfigurationError, match=r"returns robota\.GuardrailResult"):
        await agent.run("go")
    assert provider.requests == []


async def test_S42_a_tool_guardrail_as_run_option_names_the_fix() -> None:
    agent, _ = _agent(["never"])
    with pytest.raises(robota.ConfigurationError, match=r"Agent\(guardrails="):
        await agent.run("go", guardrails=[ToolGuardrail(lambda call: None)])  # type: ignore[list-item]


# --------------------------------------------------------------------------- journal


async def test_S40_resume_does_not_rerun_input_guardrails_or_the_tool_effect() -> None:
    inner = InMemoryJournal()
    ran: list[str] = []
    inputs: list[str] = []
    afters: list[str] = []

    def count_input(text: str) -> None:
        inputs.append(text)

    def redact(call: robota.ToolCallCheck) -> GuardrailResult:
        afters.append(call.tool_name)
        return GuardrailResult(replacement="[redacted]")

    guardrails = [InputGuardrail(count_input), ToolGuardrail(after=redact)]
    crashing = robota.Agent(
        provider=ScriptedProvider([[("act", {"what": "pay"})]]),
        model="m",
        tools=[_recorder(ran)],
        journal=HookedJournal(inner, after=crash_at("effect_settled")),
        guardrails=guardrails,
    )
    with pytest.raises(Crash):
        await crashing.run("go", execution_id="e")
    assert (ran, inputs, afters) == (["pay"], ["go"], ["act"])
    provider = ScriptedProvider(["paid"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[_recorder(ran)],
        journal=inner,
        guardrails=guardrails,
    )
    result = await agent.resume("e")
    assert result.output == "paid"
    assert (ran, inputs, afters) == (["pay"], ["go"], ["act"])  # nothing ran again
    # The settlement the journal kept is what the model saw: the replacement.
    assert provider.requests[0].messages[-1].content == "[redacted]"


async def test_S34_parallel_trip_answers_the_waiting_calls_so_history_stays_usable() -> None:
    async def slow_trip(text: str) -> GuardrailResult:
        await asyncio.sleep(0.05)
        return GuardrailResult(tripped=text == "go", reason="no")

    agent, provider = _agent(
        [[("act", {"what": "a"}), ("act", {"what": "b"})], "next answer"],
        tools=[_recorder([])],
        guardrails=[InputGuardrail(slow_trip, run_in_parallel=True)],
    )
    with pytest.raises(GuardrailTripped):
        await agent.run("go")
    kinds = [m.kind for m in agent.history]
    assert kinds == ["user", "assistant", "tool", "tool"]  # every committed call is answered
    answers = [m for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert all(m.is_error and "input guardrail" in m.content for m in answers)
    result = await agent.run("again")  # the conversation is still usable
    assert result.output == "next answer"
    assert len(provider.requests) == 2


def test_S21_the_guardrail_gate_forwards_the_wrapped_gates_attributes_and_copies() -> None:
    import copy

    from robota.core.execution._guardrails import GuardrailGate

    gate = robota.PermissionGate(robota.PermissionPolicy())
    wrapped = GuardrailGate(gate, (ToolGuardrail(lambda call: None),), None)
    assert wrapped.remembered is gate.remembered  # the wrapped gate's state, seen through
    clone = copy.copy(wrapped)  # no recursion on a bare object
    assert clone.inner is gate
    with pytest.raises(AttributeError):
        GuardrailGate(None, (), None).offered  # noqa: B018 - the attribute access is the test


async def test_S21_an_agent_as_tool_guardrail_gets_the_call_as_json() -> None:
    ran: list[str] = []
    judge_provider = ScriptedProvider(['{"tripped": true, "reason": "too risky"}'])
    judge = robota.Agent(provider=judge_provider, model="judge", name="risk")
    agent, provider = _agent(
        [[("act", {"what": "wire money"})], "ok"],
        tools=[_recorder(ran)],
        guardrails=[ToolGuardrail(judge)],
    )
    result = await agent.run("go")
    assert ran == []
    asked = judge_provider.requests[0].messages[-1].content
    assert '"tool": "act"' in asked
    assert '"what": "wire money"' in asked
    assert "refused by guardrail 'risk': too risky" in provider.requests[1].messages[-1].content
    (record,) = result.guardrails
    assert (record.phase, record.outcome) == ("tool_before", "tripped")
    assert record.usage is not None


def test_S39_run_sync_raises_the_trip_too() -> None:
    agent, provider = _agent(["never"], guardrails=[InputGuardrail(_block_secrets)])
    with pytest.raises(GuardrailTripped):
        agent.run_sync("password please")
    assert provider.requests == []
    agent.close()


async def test_S39_a_streamed_run_raises_the_output_trip_from_its_result() -> None:
    def refuse(output: object) -> GuardrailResult:
        return GuardrailResult(tripped=True, reason="nope")

    agent, _ = _agent(["streamed"], guardrails=[OutputGuardrail(refuse)])
    stream = agent.run_stream("go")

    async def consume() -> None:
        async for _event in stream:
            pass
        await stream.result()

    with pytest.raises(GuardrailTripped):
        await consume()


async def test_S38_an_agent_cannot_be_its_own_guardrail() -> None:
    agent, provider = _agent(["never"])
    with pytest.raises(robota.ConfigurationError, match="its own guardrail"):
        await asyncio.wait_for(agent.run("go", guardrails=[InputGuardrail(agent)]), 5)
    assert provider.requests == []
