"""S41 tool sources: tools known only once started, owned by the agent's lifecycle (S20).

A source is started lazily (first run, direct invocation, ``async with``), shared by every run,
asked to start again before each run (so a dead one restarts), re-read when it reports a change
(visible from the next round, S19), left-out tools reported by event, and closed by ``aclose``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import robota
from robota import EventNames, RejectedTool, ToolSource
from robota.testing import ScriptedProvider


def named(name: str, reply: str) -> robota.Tool:
    def body() -> str:
        return reply

    body.__doc__ = f"The {name} tool."
    return robota.tool(body, name=name)


class CountingSource(ToolSource):
    """A real source: its tool set changes when told, and it counts starts and closes."""

    def __init__(self, name: str = "src", *, fail_starts: int = 0) -> None:
        super().__init__()
        self._name = name
        self.starts = 0
        self.closes = 0
        self.fail_starts = fail_starts
        self.running = False
        self._tools: list[robota.Tool] = []
        self._rejected: list[RejectedTool] = []

    @property
    def name(self) -> str:
        return self._name

    async def start(self) -> None:
        if self.running:
            return
        self.starts += 1
        if self.fail_starts:
            self.fail_starts -= 1
            raise robota.RobotaError("the source could not start")
        self.running = True
        if not self._tools:
            self._tools = [named(f"{self._name}__first", "first")]

    def tools(self) -> Sequence[robota.Tool]:
        return tuple(self._tools) if self.running else ()

    def rejected(self) -> Sequence[RejectedTool]:
        return tuple(self._rejected)

    async def aclose(self) -> None:
        self.closes += 1
        self.running = False

    def replace(self, *tools: robota.Tool, rejected: Sequence[RejectedTool] = ()) -> None:
        self._tools = list(tools)
        self._rejected = list(rejected)
        self.changed()


def offered(request: robota.ChatRequest) -> list[str]:
    return [spec.name for spec in request.tools]


async def test_s41_a_source_starts_lazily_and_its_tools_are_offered_and_callable() -> None:
    source = CountingSource()
    provider = ScriptedProvider([[("src__first", {})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[source])
    assert source.starts == 0  # nothing starts at construction
    result = await agent.run("go")
    assert result.text == "done"
    assert source.starts == 1
    assert offered(provider.requests[0]) == ["src__first"]
    answer = next(m for m in agent.history if isinstance(m, robota.ToolMessage))
    assert answer.content == "first"
    await agent.aclose()
    assert source.closes == 1


async def test_s41_a_change_is_offered_from_the_next_round() -> None:
    source = CountingSource()

    @robota.tool
    def grow() -> str:
        """Makes the source offer another tool."""
        source.replace(named("src__first", "first"), named("src__second", "second"))
        return "grown"

    provider = ScriptedProvider([[("grow", {})], [("src__second", {})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[grow, source])
    await agent.run("go")
    assert "src__second" not in offered(provider.requests[0])
    assert "src__second" in offered(provider.requests[1])
    answers = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert answers == ["grown", "second"]


async def test_s41_a_source_is_started_again_before_each_run_so_a_dead_one_restarts() -> None:
    source = CountingSource()
    agent = robota.Agent(provider=ScriptedProvider(["a", "b"]), model="m", tools=[source])
    await agent.run("one")
    source.running = False  # it died between runs
    await agent.run("two")
    assert source.starts == 2


async def test_s20_a_failed_start_fails_that_run_and_is_not_cached() -> None:
    source = CountingSource(fail_starts=1)
    provider = ScriptedProvider(["ok"])
    agent = robota.Agent(provider=provider, model="m", tools=[source])
    with pytest.raises(robota.RobotaError, match="could not start"):
        await agent.run("one")
    assert provider.requests == []  # nothing was sent
    result = await agent.run("two")
    assert result.text == "ok"
    assert source.starts == 2


async def test_s41_async_with_starts_sources_and_aclose_stops_them() -> None:
    source = CountingSource()
    async with robota.Agent(provider=ScriptedProvider([]), model="m", tools=[source]) as agent:
        assert source.starts == 1
        assert [t.name for t in agent.tools] == ["src__first"]
    assert source.closes == 1


async def test_s41_a_failed_start_on_async_with_leaves_nothing_open_and_can_be_retried() -> None:
    source = CountingSource(fail_starts=1)
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[source])
    with pytest.raises(robota.RobotaError):
        async with agent:
            pass
    assert source.closes == 1  # nothing left running
    assert not agent.closed  # S20: a failed start is not cached; the agent stays usable
    async with agent:
        assert source.starts == 2
    assert agent.closed


async def test_s43_direct_invocation_starts_the_source_and_reaches_its_tools() -> None:
    source = CountingSource()
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", tools=[source])
    outcome = await agent.invoke_tool("src__first", {})
    assert outcome.result.content == "first"


async def test_s41_left_out_tools_and_name_clashes_are_reported_once_by_event() -> None:
    source = CountingSource()
    clash = named("src__first", "local")  # a local tool already has the source's name
    events: list[robota.AgentEvent] = []
    agent = robota.Agent(provider=ScriptedProvider(["a", "b"]), model="m", tools=[clash, source])
    await agent.run("one", on_event=events.append)
    source.replace(
        named("src__first", "first"),
        rejected=[RejectedTool("src__broken", "its input schema uses $ref")],
    )
    await agent.run("two", on_event=events.append)
    reports = [
        (e.data["tool_name"], e.data["reason"])
        for e in events
        if e.name == EventNames.TOOL_SOURCE_REJECTED
    ]
    assert reports == [
        ("src__first", "another tool of this agent has that name"),
        ("src__broken", "its input schema uses $ref"),
    ]
    outcome = await agent.invoke_tool("src__first", {})
    assert outcome.result.content == "local"  # the agent's own tool is never replaced


def test_s41_two_sources_with_one_name_are_refused() -> None:
    with pytest.raises(robota.ConfigurationError, match="two tool sources"):
        robota.Agent(
            provider=ScriptedProvider([]),
            model="m",
            tools=[CountingSource("a"), CountingSource("a")],
        )
