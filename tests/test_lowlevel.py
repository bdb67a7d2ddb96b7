"""``robota.lowlevel``: the public low-level API integrations are built on (issue 32 item 1).

Each seam is checked against the in-process behaviour it exposes: the view of an agent's parts,
routing an agent's provider calls and tool bodies elsewhere, the failure text a model reads,
replayable ids and clocks. The namespace itself is held to the public-name rules: typed,
documented, listed in ``__all__`` and in the module docstring.
"""

from __future__ import annotations

import gc
import inspect
from collections.abc import MutableMapping

import pytest

import robota
import robota.lowlevel
from robota import Agent, ConfigurationError, InputGuardrail, ModelTexts, ToolMessage, tool
from robota.lowlevel import (
    AgentParts,
    agent_parts,
    deterministic,
    new_id,
    now,
    route_dispatch,
    tool_failure_text,
)
from robota.testing import InMemoryJournal, ScriptedProvider


@tool
def double(n: int) -> int:
    """Double a number."""
    return n * 2


@tool
def broken(n: int) -> int:
    """Always fails."""
    raise ValueError(f"no luck with {n}")


def _allow(text: str) -> None:
    return None


def test_agent_parts_shows_what_the_agent_was_built_from() -> None:
    primary, backup = ScriptedProvider([], name="primary"), ScriptedProvider([], name="backup")
    journal = InMemoryJournal()
    guard = InputGuardrail(_allow, name="allow")
    agent = Agent(
        provider=primary,
        model="m",
        fallback=[backup],
        tools=[double],
        guardrails=[guard],
        journal=journal,
        name="worker",
    )
    parts = agent_parts(agent)
    assert isinstance(parts, AgentParts)
    assert parts.name == "worker"
    assert list(parts.tools) == ["double"]
    assert parts.tools["double"].name == "double"
    assert parts.tools.get("missing") is None
    assert parts.guardrails == (guard,)
    assert parts.providers == (primary, backup)  # issue 28: the fallback chain's too
    assert parts.journal is journal
    assert parts.sources == ()
    assert parts.hooks is None
    assert isinstance(parts.texts, ModelTexts)


def test_agent_parts_is_read_only() -> None:
    parts = agent_parts(Agent(provider=ScriptedProvider([]), model="m", tools=[double]))
    assert not isinstance(parts.tools, MutableMapping)
    with pytest.raises(AttributeError):
        parts.name = "other"  # type: ignore[misc]


async def test_route_dispatch_sends_model_calls_and_tool_bodies_to_the_stand_ins() -> None:
    real = ScriptedProvider([], name="scripted")
    agent = Agent(provider=real, model="m", tools=[double])
    stand_in = ScriptedProvider([[("double", {"n": 21})], "42"], name="scripted")
    bodies: list[str] = []

    @tool(name="double")
    def routed_double(n: int) -> int:
        """Double a number."""
        bodies.append("routed")
        return n * 2

    route_dispatch(agent, lambda provider: stand_in, lambda registered: routed_double)
    parts = agent_parts(agent)
    assert parts.providers == (stand_in,)
    assert parts.tools["double"] is routed_double
    result = await agent.run("double 21")
    assert result.output == "42"
    assert bodies == ["routed"]
    assert real.requests == []
    stand_in.assert_complete()


async def test_route_dispatch_refuses_an_agent_that_has_run() -> None:
    agent = Agent(provider=ScriptedProvider(["hi"]), model="m")
    await agent.run("hello")
    with pytest.raises(ConfigurationError, match="already run"):
        route_dispatch(agent, lambda provider: provider, lambda registered: registered)


async def test_tool_failure_text_is_the_text_an_in_process_run_gives_the_model() -> None:
    provider = ScriptedProvider([[("broken", {"n": 3})], "sorry"])
    agent = Agent(provider=provider, model="m", tools=[broken])
    result = await agent.run("go")
    results = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert len(results) == 1
    expected = tool_failure_text(broken, ValueError("no luck with 3"), ModelTexts())
    assert "no luck with 3" in expected
    assert results[0].content == expected


def test_ids_and_clock_are_replayable_inside_deterministic() -> None:
    tokens = iter(["a" * 24, "b" * 24])
    with deterministic(lambda: next(tokens), lambda: 1234.5):
        assert new_id("run") == "run_" + "a" * 24
        assert new_id("call") == "call_" + "b" * 24
        assert now() == 1234.5
    outside = new_id("run")
    assert outside.startswith("run_")
    assert len(outside) == len("run_") + 24
    assert outside != "run_" + "a" * 24


def test_S40_code_the_garbage_collector_finalizes_draws_nothing_from_a_replayable_source() -> None:
    # A stopped Temporal worker leaves its cached workflows' coroutines to the garbage
    # collector, which closes them in whatever thread and context it happens to run: inside
    # another workflow's activation, their cleanup used to mint ids from *that* workflow's
    # source, so its next ids differed from the ones its history recorded (a replay failed
    # with a nondeterminism error, or an answer named an ask that no longer existed).
    litter: list[tuple[str, str, float]] = []

    class Litter:
        def __init__(self) -> None:
            self.cycle = self  # only the cyclic collector frees it, at a moment of its own

        def __del__(self) -> None:
            litter.append(
                (new_id("litter"), ToolMessage("c", tool_call_id="c1", tool_name="t").id, now())
            )

    counter = iter(f"{n:024x}" for n in range(1, 100))
    gc.collect()
    with deterministic(lambda: next(counter), lambda: 1234.5):
        Litter()
        gc.collect()  # the finalizer runs here, in this context
        first = new_id("run")
        message = ToolMessage("c", tool_call_id="c1", tool_name="t")
        clock = now()
    assert first == f"run_{1:024x}"
    assert message.id == f"msg_{2:024x}"
    assert clock == 1234.5
    assert len(litter) == 1
    litter_id, litter_message, litter_clock = litter[0]
    assert litter_id.startswith("litter_")
    assert int(litter_id[7:], 16) > 100  # 96 bits from the OS, not the source's 1, 2, 3 …
    assert int(litter_message[4:], 16) > 100
    assert litter_clock != 1234.5


def test_S40_a_collection_callback_that_removes_itself_does_not_leave_ids_unreplayable() -> None:
    # CPython walks gc.callbacks by index over the live list: a callback ahead of robota's that
    # removes itself at "stop" made robota's miss it, and the thread's ids stopped coming from
    # the replayable source until its next collection.
    callbacks = gc.callbacks  # the list the collector walks (mutated in place, then restored)
    saved = list(callbacks)

    def once(phase: str, info: object) -> None:
        if phase == "stop":
            callbacks.remove(once)

    try:
        callbacks[:] = [c for c in saved if getattr(c, "__module__", "") != "robota.core._messages"]
        callbacks.append(once)  # a library's, registered before robota's
        with deterministic(lambda: "a" * 24, lambda: 1.0):
            gc.collect()
            assert new_id("approval") == "approval_" + "a" * 24
            assert now() == 1.0
    finally:
        callbacks[:] = saved


def test_every_lowlevel_name_is_documented_listed_and_distinct_from_robota() -> None:
    module = robota.lowlevel
    doc = module.__doc__ or ""
    assert "Stability" in doc
    for name in module.__all__:
        value = getattr(module, name)
        assert f"`{name}`" in doc, f"{name} is not listed in the module docstring"
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name} has no docstring"
        # A name the public API already has is imported from there, not repeated here.
        assert name not in robota.__all__, f"{name} is public in robota already"
