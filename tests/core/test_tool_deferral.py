"""S19 tool deferral: resident and deferred schemas, the built-in ``tool_search``, both invariants.

A deferred tool's schema is withheld from the outbound request (not merely hidden) once deferral
engages; ``tool_search`` finds it by name and description and it is offered from the next round;
the offered list is read fresh every round; ``"auto"`` engages past a threshold and an explicit
setting wins; the two invariants are refused when the agent is built; permissions decide by name
only; direct invocation (S43) reaches deferred tools.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

import robota
from robota import (
    AUTO_DEFERRAL_TOOL_COUNT,
    TOOL_SEARCH_NAME,
    ConfigurationError,
    PermissionGate,
    PermissionPolicy,
    ToolMessage,
)
from robota.core.providers import ChatRequest
from robota.testing import InMemoryJournal, ScriptedProvider

TOPICS = ("weather", "invoice", "calendar", "shipment", "ticket", "payroll", "inventory", "audit")


def make_tool(index: int, *, defer: bool = True) -> robota.Tool:
    topic = TOPICS[index % len(TOPICS)]

    def body(record_id: str, limit: int = 10, include_archived: bool = False) -> str:
        return f"{topic} {index}: {record_id} ({limit}, {include_archived})"

    body.__doc__ = f"""Look up {topic} records in region {index} of the company's systems.

    Args:
        record_id: The identifier of the {topic} record to look up, exactly as shown to users.
        limit: How many related records to return with it, newest first.
        include_archived: Whether records archived more than a year ago are included too.
    """
    return robota.tool(body, name=f"{topic}_lookup_{index}", defer=defer)


def many_tools(count: int = 200, *, resident: int = 1) -> list[robota.Tool]:
    return [make_tool(i, defer=i >= resident) for i in range(count)]


def tool_payload(request: ChatRequest) -> str:
    """The request's tool list serialized as a provider would send it."""
    return json.dumps(
        [
            {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
            for spec in request.tools
        ],
        separators=(",", ":"),
    )


def offered(request: ChatRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def search_result(agent: robota.Agent) -> dict[str, Any]:
    message = next(
        m for m in agent.history if isinstance(m, ToolMessage) and m.tool_name == TOOL_SEARCH_NAME
    )
    value: dict[str, Any] = json.loads(message.content)
    return value


async def test_s19_two_hundred_tools_first_request_payload_at_least_90_percent_smaller() -> None:
    resident_provider = ScriptedProvider(["hi"])
    await robota.Agent(
        provider=resident_provider, model="m", tools=many_tools(), tool_deferral="off"
    ).run("go")
    deferred_provider = ScriptedProvider(["hi"])
    await robota.Agent(
        provider=deferred_provider, model="m", tools=many_tools(), tool_deferral="on"
    ).run("go")
    full = len(tool_payload(resident_provider.requests[0]))
    reduced = len(tool_payload(deferred_provider.requests[0]))
    assert reduced <= 0.10 * full, (reduced, full)
    assert offered(deferred_provider.requests[0]) == ["weather_lookup_0", TOOL_SEARCH_NAME]
    assert len(offered(resident_provider.requests[0])) == 200


async def test_s19_tool_found_by_search_in_round_1_is_called_in_round_2() -> None:
    provider = ScriptedProvider(
        [
            [(TOOL_SEARCH_NAME, {"query": "payroll region 13"})],
            [("payroll_lookup_13", {"record_id": "P-7"})],
            "done",
        ]
    )
    agent = robota.Agent(provider=provider, model="m", tools=many_tools(), tool_deferral="on")
    result = await agent.run("go")
    assert result.text == "done"
    first, second, third = provider.requests
    assert "payroll_lookup_13" not in offered(first)
    assert "payroll_lookup_13" in offered(second)  # the offered list is read fresh every round
    assert "payroll_lookup_13" in offered(third)
    assert search_result(agent)["loaded"][0]["name"] == "payroll_lookup_13"
    answers = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert answers[-1].content == "payroll 13: P-7 (10, False)"
    assert not answers[-1].is_error


async def test_s19_offered_list_keeps_loaded_tools_for_the_next_run_of_the_conversation() -> None:
    provider = ScriptedProvider(
        [[(TOOL_SEARCH_NAME, {"query": "select:audit_lookup_7"})], "ok", "x"]
    )
    agent = robota.Agent(provider=provider, model="m", tools=many_tools(), tool_deferral="on")
    await agent.run("go")
    await agent.run("again")
    assert "audit_lookup_7" in offered(provider.requests[-1])


def test_s19_deferring_every_tool_is_refused_at_construction() -> None:
    with pytest.raises(ConfigurationError, match="at least one tool must stay resident"):
        robota.Agent(
            provider=ScriptedProvider([]),
            model="m",
            tools=many_tools(resident=0),
            tool_deferral="on",
        )
    with pytest.raises(ConfigurationError, match="at least one tool must stay resident"):
        robota.Agent(provider=ScriptedProvider([]), model="m", tools=many_tools(5, resident=0))


def test_s19_withholding_a_schema_without_a_search_tool_is_refused_at_construction() -> None:
    with pytest.raises(ConfigurationError, match="unreachable"):
        robota.Agent(
            provider=ScriptedProvider([]),
            model="m",
            tools=many_tools(),
            tool_deferral="on",
            tool_search=False,
        )
    # Nothing withheld, nothing refused: a search tool is needed only when deferral engages.
    robota.Agent(
        provider=ScriptedProvider([]),
        model="m",
        tools=many_tools(),
        tool_deferral="off",
        tool_search=False,
    )


def test_s19_a_registered_tool_named_tool_search_is_refused_when_deferral_can_engage() -> None:
    @robota.tool(name=TOOL_SEARCH_NAME)
    def mine(query: str) -> str:
        """My own search."""
        return query

    with pytest.raises(ConfigurationError, match="tool_search"):
        robota.Agent(
            provider=ScriptedProvider([]),
            model="m",
            tools=[mine, *many_tools()],
            tool_deferral="on",
        )


def test_s19_invalid_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="tool_deferral"):
        robota.Agent(provider=ScriptedProvider([]), model="m", tool_deferral="always")  # type: ignore[arg-type]

    class Odd(robota.Tool):
        name = "odd"
        parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
        residency = "sometimes"  # type: ignore[assignment]

        async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
            return ""

    with pytest.raises(ConfigurationError, match="residency"):
        Odd()


async def test_s19_auto_engages_past_the_deferred_tool_count() -> None:
    below = ScriptedProvider(["x"])
    count = AUTO_DEFERRAL_TOOL_COUNT
    await robota.Agent(provider=below, model="m", tools=many_tools(count, resident=2)).run("go")
    assert TOOL_SEARCH_NAME not in offered(below.requests[0])  # a small set is unaffected
    assert len(offered(below.requests[0])) == count
    past = ScriptedProvider(["x"])
    await robota.Agent(provider=past, model="m", tools=many_tools(count + 1, resident=1)).run("go")
    assert offered(past.requests[0]) == ["weather_lookup_0", TOOL_SEARCH_NAME]


async def test_s19_auto_engages_past_the_schema_token_share_of_the_context_window() -> None:
    robota.register_model_metadata("tiny-window", context_window=2_000)
    try:
        provider = ScriptedProvider(["x"])
        await robota.Agent(provider=provider, model="tiny-window", tools=many_tools(4)).run("go")
    finally:
        robota.unregister_model_metadata("tiny-window")
    assert offered(provider.requests[0]) == ["weather_lookup_0", TOOL_SEARCH_NAME]
    roomy = ScriptedProvider(["x"])
    await robota.Agent(provider=roomy, model="m", tools=many_tools(4)).run("go")
    assert len(offered(roomy.requests[0])) == 4


async def test_s19_an_explicit_setting_always_wins_over_the_threshold() -> None:
    on = ScriptedProvider(["x"])
    await robota.Agent(provider=on, model="m", tools=many_tools(3), tool_deferral="on").run("go")
    assert offered(on.requests[0]) == ["weather_lookup_0", TOOL_SEARCH_NAME]
    off = ScriptedProvider(["x"])
    await robota.Agent(provider=off, model="m", tools=many_tools(), tool_deferral="off").run("go")
    assert len(offered(off.requests[0])) == 200
    assert TOOL_SEARCH_NAME not in offered(off.requests[0])


async def test_s19_deny_rule_on_a_deferred_tool_holds_whether_or_not_it_is_loaded() -> None:
    @robota.tool(
        risk="execute", argument=robota.PermissionArgument("command", "command"), defer=True
    )
    def deploy(command: str) -> str:
        """Deploy the service with a shell command."""
        ran.append(command)
        return "deployed"

    @robota.tool(defer=True)
    def secret_vault(key: str) -> str:
        """Read a secret from the vault."""
        ran.append(key)
        return "s3cr3t"

    ran: list[str] = []
    gate = PermissionGate(PermissionPolicy(mode="bypass", deny=["deploy(rm *)", "secret_vault"]))
    provider = ScriptedProvider(
        [
            [("deploy", {"command": "rm -rf /srv"}), ("secret_vault", {"key": "k"})],  # unloaded
            [(TOOL_SEARCH_NAME, {"query": "deploy secret vault"})],
            [("deploy", {"command": "rm -rf /srv"}), ("secret_vault", {"key": "k"})],  # loaded
            [("deploy", {"command": "make release"})],
            "done",
        ]
    )
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[*many_tools(3), deploy, secret_vault],
        tool_deferral="on",
        tool_gate=gate,
    )
    await agent.run("go")
    # A tool denied outright is neither offered nor found (S12); the partly denied one is found.
    assert [t["name"] for t in search_result(agent)["loaded"]] == ["deploy"]
    assert all("secret_vault" not in offered(r) for r in provider.requests)
    assert "deploy" not in offered(provider.requests[1])
    assert "deploy" in offered(provider.requests[2])
    answers = [m for m in agent.history if isinstance(m, ToolMessage)]
    refused = [m.content for m in answers if m.content.startswith("Permission denied")]
    assert len(refused) == 4  # each denied call, before and after loading
    assert ran == ["make release"]


async def test_s43_direct_invocation_reaches_a_deferred_tool_that_was_never_loaded() -> None:
    agent = robota.Agent(
        provider=ScriptedProvider([]), model="m", tools=many_tools(), tool_deferral="on"
    )
    outcome = await agent.invoke_tool("invoice_lookup_9", {"record_id": "I-1"})
    assert outcome.status == "completed"
    assert outcome.result.content == "invoice 9: I-1 (10, False)"
    with pytest.raises(ConfigurationError, match="no tool named"):
        await agent.invoke_tool(TOOL_SEARCH_NAME, {"query": "x"})


async def test_s19_search_by_name_and_description_with_limits_and_exact_selection() -> None:
    provider = ScriptedProvider(
        [
            [(TOOL_SEARCH_NAME, {"query": "shipment", "max_results": 3})],
            [(TOOL_SEARCH_NAME, {"query": "select:ticket_lookup_4,nope,weather_lookup_0"})],
            [(TOOL_SEARCH_NAME, {"query": "zebra"})],
            "done",
        ]
    )
    agent = robota.Agent(provider=provider, model="m", tools=many_tools(), tool_deferral="on")
    await agent.run("go")
    results = [
        json.loads(m.content)
        for m in agent.history
        if isinstance(m, ToolMessage) and m.tool_name == TOOL_SEARCH_NAME
    ]
    assert [t["name"] for t in results[0]["loaded"]] == [
        "shipment_lookup_3",
        "shipment_lookup_11",
        "shipment_lookup_19",
    ]
    # Exact names only, deferred only: a resident tool is already offered, an unknown one skipped.
    assert [t["name"] for t in results[1]["loaded"]] == ["ticket_lookup_4"]
    assert results[2]["loaded"] == []
    last = offered(provider.requests[-1])
    assert last[:2] == ["weather_lookup_0", TOOL_SEARCH_NAME]
    assert last[2:] == [
        "shipment_lookup_3",
        "shipment_lookup_11",
        "shipment_lookup_19",
        "ticket_lookup_4",
    ]


async def test_s37_an_unknown_name_lists_what_is_offered_and_points_to_search() -> None:
    provider = ScriptedProvider([[("teleport", {})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=many_tools(), tool_deferral="on")
    await agent.run("go")
    answer = next(m for m in agent.history if isinstance(m, ToolMessage))
    assert answer.is_error
    assert "weather_lookup_0, tool_search" in answer.content
    assert "199 more can be found with tool_search" in answer.content
    assert "invoice_lookup_9" not in answer.content  # withheld names are not listed


async def test_s19_tool_search_is_not_callable_while_deferral_is_not_engaged() -> None:
    provider = ScriptedProvider([[(TOOL_SEARCH_NAME, {"query": "x"})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=many_tools(3), tool_deferral="off")
    await agent.run("go")
    answer = next(m for m in agent.history if isinstance(m, ToolMessage))
    assert "is not available" in answer.content


async def test_s19_a_restored_conversation_offers_what_it_had_loaded() -> None:
    provider = ScriptedProvider([[(TOOL_SEARCH_NAME, {"query": "select:audit_lookup_7"})], "ok"])
    first = robota.Agent(provider=provider, model="m", tools=many_tools(), tool_deferral="on")
    await first.run("go")
    later = ScriptedProvider(["x"])
    second = robota.Agent(
        provider=later,
        model="m",
        tools=many_tools(),
        tool_deferral="on",
        history=list(first.history),
    )
    await second.run("again")
    assert "audit_lookup_7" in offered(later.requests[0])


async def test_s40_journal_records_effective_residency_and_resume_keeps_loaded_tools() -> None:
    journal = InMemoryJournal()

    @robota.tool
    async def wait_for_go(ctx: robota.ToolContext) -> str:
        """Waits for the host."""
        return str(await ctx.request_outside_response("approval"))

    def agent_for(provider: ScriptedProvider, deferral: robota.ToolDeferral = "on") -> robota.Agent:
        return robota.Agent(
            provider=provider,
            model="m",
            tools=[wait_for_go, *many_tools()],
            tool_deferral=deferral,
            journal=journal,
        )

    provider = ScriptedProvider(
        [[(TOOL_SEARCH_NAME, {"query": "select:audit_lookup_7"})], [("wait_for_go", {})]]
    )
    result = await agent_for(provider).run("go", execution_id="exec-defer")
    assert result.status == "suspended"
    started = (await journal.read("exec-defer"))[0]
    assert isinstance(started, robota.ExecutionStarted)
    residency = dict(started.state.tool_residency)
    assert residency["wait_for_go"] == "resident"
    assert residency["audit_lookup_7"] == "deferred"

    # Another agent over the same journal (as another process would build it): the restored
    # history's search result loads the tool again, so the continuation offers it.
    later = ScriptedProvider(["done"])
    fresh = agent_for(later)
    await fresh.respond("exec-defer", result.pending_requests[0].id, "yes")
    resumed = await fresh.resume("exec-defer")
    assert resumed.text == "done"
    assert "audit_lookup_7" in offered(later.requests[0])

    # An agent whose residency differs is told so rather than resumed silently (S40).
    other = agent_for(ScriptedProvider(["x"]), deferral="off")
    with pytest.raises(robota.ReconciliationRequired) as caught:
        await other.resume("exec-defer")
    assert "state:tool_residency" in [item.id for item in caught.value.items]


# Regressions from the review of issue 14.


def test_s19_a_deny_rule_on_tool_search_is_refused_when_something_is_withheld() -> None:
    gate = PermissionGate(PermissionPolicy(mode="bypass", deny=[TOOL_SEARCH_NAME]))
    with pytest.raises(ConfigurationError, match="withholds 'tool_search'"):
        robota.Agent(
            provider=ScriptedProvider([]),
            model="m",
            tools=many_tools(),
            tool_deferral="on",
            tool_gate=gate,
        )


def test_s19_switching_to_a_model_whose_window_engages_deferral_without_search_is_refused() -> None:
    robota.register_model_metadata("tiny-switch", context_window=2_000)
    try:
        agent = robota.Agent(
            provider=ScriptedProvider([]), model="m", tools=many_tools(4), tool_search=False
        )
        with pytest.raises(ConfigurationError, match="unreachable"):
            agent.set_model("tiny-switch")
        assert agent.get_model().model == "m"  # refused: the model did not change
    finally:
        robota.unregister_model_metadata("tiny-switch")


async def test_s19_a_run_weighs_its_own_models_window_even_if_the_agent_switches_mid_run() -> None:
    robota.register_model_metadata("tiny-mid", context_window=2_000)
    try:
        provider = ScriptedProvider([[("switch", {})], "done"])
        agent: robota.Agent

        @robota.tool
        def switch() -> str:
            """Switches the agent's model for later runs."""
            agent.set_model("tiny-mid")
            return "switched"

        agent = robota.Agent(provider=provider, model="m", tools=[switch, *many_tools(4)])
        await agent.run("go")
        assert offered(provider.requests[0]) == offered(provider.requests[1])  # same run, same plan
        assert TOOL_SEARCH_NAME not in offered(provider.requests[1])
        later = ScriptedProvider(["x"])
        agent2 = robota.Agent(provider=later, model="tiny-mid", tools=[switch, *many_tools(4)])
        await agent2.run("go")
        assert TOOL_SEARCH_NAME in offered(later.requests[0])
    finally:
        robota.unregister_model_metadata("tiny-mid")


async def test_s19_changing_a_tools_residency_after_registration_changes_nothing() -> None:
    tools = many_tools(5)
    provider = ScriptedProvider([[(TOOL_SEARCH_NAME, {"query": "select:invoice_lookup_1"})], "ok"])
    agent = robota.Agent(provider=provider, model="m", tools=tools, tool_deferral="on")
    tools[0].residency = "deferred"  # would defer everything: ignored, the catalog keeps its own
    await agent.run("go")
    assert offered(provider.requests[1])[:2] == ["weather_lookup_0", TOOL_SEARCH_NAME]


def test_s19_non_boolean_switches_are_refused() -> None:
    def plain(x: int) -> int:
        return x

    with pytest.raises(ConfigurationError, match="defer must be True or False"):
        robota.tool(plain, defer="no")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="tool_search must be True or False"):
        robota.Agent(provider=ScriptedProvider([]), model="m", tool_search="no")  # type: ignore[arg-type]
