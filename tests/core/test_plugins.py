"""S03/S20 plugins: awaited hooks; a throwing handler is recorded and swallowed."""

from __future__ import annotations

import asyncio

import pytest

import robota
from robota.testing import ScriptedProvider


class Recorder(robota.Plugin):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def setup(self, agent: object) -> None:
        self.calls.append("setup")

    async def before_run(self, run: robota.RunInfo, input: str) -> None:
        self.calls.append(f"before_run:{input}")

    async def after_run(self, run: robota.RunInfo, result: robota.RunResult) -> None:
        self.calls.append(f"after_run:{result.status}")

    async def before_provider_call(self, run: robota.RunInfo, request: object) -> None:
        self.calls.append(f"before_provider_call:{run.round}")

    async def after_provider_call(
        self, run: robota.RunInfo, message: robota.AssistantMessage
    ) -> None:
        self.calls.append(f"after_provider_call:{message.content}")

    async def on_error(self, run: robota.RunInfo, error: BaseException) -> None:
        self.calls.append(f"on_error:{type(error).__name__}")


async def test_plugin_hooks_run_in_lifecycle_order() -> None:
    @robota.tool
    def ping() -> str:
        """Ping."""
        return "pong"

    plugin = Recorder()
    provider = ScriptedProvider([[("ping", {})], "done"])
    agent = robota.Agent(provider=provider, model="m", plugins=[plugin], tools=[ping])
    await agent.run("go")
    assert plugin.calls == [
        "setup",
        "before_run:go",
        "before_provider_call:1",
        "after_provider_call:",
        "before_provider_call:2",
        "after_provider_call:done",
        "after_run:complete",
    ]


async def test_plugin_on_error_sees_the_failure_the_caller_gets() -> None:
    plugin = Recorder()
    agent = robota.Agent(provider=ScriptedProvider([ValueError("x")]), model="m", plugins=[plugin])
    with pytest.raises(robota.ProviderError, match="ValueError: x") as info:
        await agent.run("go")
    assert isinstance(info.value.__cause__, ValueError)
    assert plugin.calls[-1] == "on_error:ProviderError"


async def test_s20_a_throwing_plugin_handler_is_recorded_and_swallowed(
    memory_sink: robota.MemorySink,
) -> None:
    class Broken(robota.Plugin):
        async def before_run(self, run: robota.RunInfo, input: str) -> None:
            raise RuntimeError("plugin bug")

        async def after_provider_call(self, run: robota.RunInfo, message: object) -> None:
            raise KeyError("another bug")

    agent = robota.Agent(provider=ScriptedProvider(["fine"]), model="m", plugins=[Broken()])
    result = await agent.run("go")
    assert result.output == "fine"
    assert [(f.plugin, f.hook, type(f.error)) for f in result.plugin_errors] == [
        ("Broken", "before_run", RuntimeError),
        ("Broken", "after_provider_call", KeyError),
    ]
    assert any(e.message == "plugin hook raised" for e in memory_sink.events)


async def test_s20_background_work_a_plugin_schedules_carries_its_own_error_handling(
    memory_sink: robota.MemorySink,
) -> None:
    finished = asyncio.Event()

    class Flusher(robota.Plugin):
        async def after_run(self, run: robota.RunInfo, result: robota.RunResult) -> None:
            async def flush() -> None:
                try:
                    raise ConnectionError("telemetry endpoint down")
                finally:
                    finished.set()

            self.spawn(flush())

    agent = robota.Agent(provider=ScriptedProvider(["ok"]), model="m", plugins=[Flusher()])
    assert (await agent.run("go")).output == "ok"
    await asyncio.wait_for(finished.wait(), 5)
    await asyncio.sleep(0)
    assert any(e.message == "plugin background work failed" for e in memory_sink.events)
    assert await agent.aclose() == []


def test_plugin_name_defaults_to_class_name() -> None:
    assert Recorder().name == "Recorder"


def test_non_plugins_are_refused() -> None:
    with pytest.raises(robota.ConfigurationError, match="not a Plugin"):
        robota.Agent(provider=ScriptedProvider([]), model="m", plugins=[object()])  # type: ignore[list-item]
