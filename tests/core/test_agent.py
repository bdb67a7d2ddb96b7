"""S03/S24/S35 the Agent facade."""

from __future__ import annotations

import asyncio

import pytest

import robota
from robota.testing import ScriptedProvider, ScriptExhaustedError


def _agent(
    turns: list[robota.testing.TurnLike], **options: object
) -> tuple[robota.Agent, ScriptedProvider]:
    provider = ScriptedProvider(turns)
    return robota.Agent(provider=provider, model="m", **options), provider  # type: ignore[arg-type]


async def test_s03_run_returns_the_final_text_with_usage_and_messages() -> None:
    agent, provider = _agent(["Hello!"], system_prompt="Be brief.")
    result = await agent.run("Hi")
    assert result.output == "Hello!"
    assert result.status == "complete"
    assert result.usage.total_tokens > 0
    assert [m.kind for m in result.messages] == ["user", "assistant"]
    assert [m.kind for m in provider.requests[0].messages] == ["system", "user"]
    provider.assert_complete()


def test_s03_run_sync_works_from_synchronous_code() -> None:
    agent, _ = _agent(["sync hello"])
    assert agent.run_sync("hi").output == "sync hello"


async def test_s03_run_sync_inside_an_event_loop_says_how_to_fix_it() -> None:
    agent, _ = _agent(["x"])
    with pytest.raises(robota.RobotaError, match=r"await agent\.run"):
        agent.run_sync("hi")


def test_s03_agents_are_independent_no_shared_state() -> None:
    a, _ = _agent(["a"], system_prompt="A")
    b, _ = _agent(["b"], system_prompt="B")
    a.run_sync("1")
    assert len(b.history) == 1
    assert a.id != b.id


def test_s03_provider_and_providers_are_exclusive_and_one_is_required() -> None:
    p = ScriptedProvider([])
    with pytest.raises(robota.ConfigurationError, match="either"):
        robota.Agent(provider=p, providers=[p], model="m")
    with pytest.raises(robota.ConfigurationError, match="needs a provider"):
        robota.Agent(model="m")
    with pytest.raises(robota.ConfigurationError, match="unique"):
        robota.Agent(providers=[ScriptedProvider([]), ScriptedProvider([])], model="scripted:m")
    with pytest.raises(robota.ConfigurationError, match=r"must be a robota\.Provider"):
        robota.Agent(provider=object(), model="m")  # type: ignore[arg-type]


def test_s24_model_config_answers_synchronously_right_after_construction() -> None:
    agent = robota.Agent(provider=ScriptedProvider([], name="p"), model="small")
    assert agent.get_model() == robota.ModelSelection("p", "small")
    assert str(agent.set_model("large")) == "p:large"
    assert agent.get_model().model == "large"


def test_multi_provider_model_names_its_provider() -> None:
    a = ScriptedProvider([], name="alpha")
    b = ScriptedProvider([], name="beta")
    agent = robota.Agent(providers=[a, b], model="beta:big")
    assert agent.get_model() == robota.ModelSelection("beta", "big")
    agent.set_model("alpha:small")
    assert agent.get_model().provider == "alpha"
    with pytest.raises(robota.ConfigurationError, match="alpha, beta"):
        agent.set_model("gamma:x")
    with pytest.raises(robota.ConfigurationError):
        robota.Agent(providers=[a, b], model="no-prefix")


def test_single_provider_keeps_colons_in_model_names() -> None:
    agent = robota.Agent(provider=ScriptedProvider([], name="ollama"), model="llama3:8b")
    assert agent.get_model().model == "llama3:8b"
    assert (
        robota.Agent(provider=ScriptedProvider([], name="ollama"), model="ollama:llama3:8b")
        .get_model()
        .model
        == "llama3:8b"
    )


@pytest.mark.parametrize("model", ["", "   ", None])
def test_model_must_be_a_non_empty_string(model: object) -> None:
    with pytest.raises(robota.ConfigurationError, match="model"):
        robota.Agent(provider=ScriptedProvider([]), model=model)  # type: ignore[arg-type]


async def test_set_model_applies_to_the_next_run() -> None:
    agent, provider = _agent(["one", "two"])
    await agent.run("a")
    agent.set_model("other")
    await agent.run("b")
    assert [r.model for r in provider.requests] == ["m", "other"]


async def test_s35_update_system_prompt_changes_config_and_history_head_at_once() -> None:
    agent, provider = _agent(["one", "two"], system_prompt="first")
    await agent.run("a")
    agent.update_system_prompt("second")
    assert agent.system_prompt == "second"
    assert agent.history[0].content == "second"
    assert sum(1 for m in agent.history if m.kind == "system") == 1
    await agent.run("b")
    assert provider.requests[1].messages[0].content == "second"
    # The earlier request's snapshot still shows what was actually sent then.
    assert provider.requests[0].messages[0].content == "first"


async def test_s35_update_mid_run_reaches_the_very_next_provider_request() -> None:
    @robota.tool
    def change(agent_ref: str) -> str:
        """Change the prompt."""
        holder[0].update_system_prompt("changed mid-run")
        return "ok"

    holder: list[robota.Agent] = []
    agent, provider = _agent(
        [[("change", {"agent_ref": "x"})], "done"], system_prompt="before", tools=[change]
    )
    holder.append(agent)
    await agent.run("go")
    assert provider.requests[0].messages[0].content == "before"
    assert provider.requests[1].messages[0].content == "changed mid-run"


def test_history_is_read_only() -> None:
    agent, _ = _agent([])
    with pytest.raises(AttributeError):
        agent.history.append(robota.UserMessage("x"))  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        agent.history = ()  # type: ignore[misc]


async def test_restored_history_is_continued() -> None:
    earlier = [
        robota.UserMessage("old question"),
    ]
    agent, provider = _agent(["new answer"], history=earlier)
    await agent.run("new question")
    assert [m.content for m in provider.requests[0].messages] == ["old question", "new question"]


async def test_run_input_must_be_text() -> None:
    agent, provider = _agent(["x"])
    with pytest.raises(robota.ConfigurationError, match="string"):
        await agent.run(42)  # type: ignore[arg-type]
    assert provider.requests == []


async def test_a_script_that_runs_out_fails_clearly() -> None:
    agent, _ = _agent([])
    with pytest.raises(ScriptExhaustedError, match="no turn left"):
        await agent.run("hi")


async def test_s39_provider_failure_is_recorded_readably_and_raised_as_itself() -> None:
    error = robota.ProviderError("upstream overloaded", status=529)
    agent, _ = _agent([error])
    with pytest.raises(robota.ProviderError) as info:
        await agent.run("hi")
    assert info.value is error
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert last.content == "Request failed: upstream overloaded"


async def test_tool_choice_none_offers_no_tools_and_the_next_run_has_them_again() -> None:
    agent, provider = _agent(["plain", "again"], tools=[_noop_tool()])
    await agent.run("a", tool_choice="none")
    await agent.run("b")
    assert provider.requests[0].tools == ()
    assert provider.requests[0].tool_choice == "none"
    assert [t.name for t in provider.requests[1].tools] == ["noop"]


def _noop_tool() -> robota.Tool:
    @robota.tool
    def noop() -> str:
        """Do nothing."""
        return ""

    return noop


async def test_invalid_run_options_are_configuration_errors() -> None:
    agent, _ = _agent(["x"])
    with pytest.raises(robota.ConfigurationError, match="tool_choice"):
        await agent.run("a", tool_choice="sometimes")  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="max_rounds"):
        await agent.run("a", max_rounds=-1)
    with pytest.raises(robota.ConfigurationError, match="max_rounds"):
        robota.Agent(provider=ScriptedProvider([]), model="m", max_rounds=1.5)  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="tool_concurrency"):
        robota.Agent(provider=ScriptedProvider([]), model="m", tool_concurrency=0)


def test_agent_repr() -> None:
    agent, _ = _agent([], name="helper")
    assert repr(agent) == "<Agent 'helper' scripted:m open>"


async def test_many_agents_on_one_provider_run_concurrently() -> None:
    started = 0
    both = asyncio.Event()

    @robota.tool
    async def rendezvous() -> str:
        """Wait for the other agent."""
        nonlocal started
        started += 1
        if started == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)
        return "met"

    agents = [
        robota.Agent(
            provider=ScriptedProvider([[("rendezvous", {})], "done"]), model="m", tools=[rendezvous]
        )
        for _ in range(2)
    ]
    results = await asyncio.gather(*(a.run("go") for a in agents))
    assert [r.output for r in results] == ["done", "done"]
