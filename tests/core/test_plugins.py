"""S03/S20 plugins: awaited hooks; a throwing handler is recorded and swallowed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

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


# --------------------------------------------------------------------------- S03/S20: the guard
# Every call into plugin code — the call itself, not only the await of its result — is inside the
# guard. Each hook is tried with each way a handler can misbehave.

RUN_HOOKS = ("before_run", "after_run", "before_provider_call", "after_provider_call")


def misbehaving(kind: str, *, times: int | None = None) -> Callable[..., Any]:
    """A hook body misbehaving as ``kind`` (the first ``times`` calls; all when ``None``).

    ``sync_raise``: a plain ``def`` that raises when called. ``sync_value``: a plain ``def`` that
    returns a non-awaitable (``42``). ``async_raise``: an ``async def`` that raises when awaited.
    Once its misbehaving calls are used up it returns an awaitable that does nothing.
    """
    calls = [0]

    def hook(self: object, *args: object) -> object:
        calls[0] += 1
        if times is not None and calls[0] > times:
            return asyncio.sleep(0)
        if kind == "sync_raise":
            raise RuntimeError(f"{kind} bug")
        if kind == "sync_value":
            return 42
        assert kind == "async_raise"

        async def failing() -> None:
            raise RuntimeError(f"{kind} bug")

        return failing()

    return hook


MISBEHAVIOURS = {
    "sync_raise": (RuntimeError, "sync_raise bug"),
    "sync_value": (robota.ConfigurationError, "returned int, not an awaitable"),
    "async_raise": (RuntimeError, "async_raise bug"),
}


def broken_plugin(hook: str, kind: str, *, times: int | None = None) -> robota.Plugin:
    cls = type(f"Broken_{hook}", (robota.Plugin,), {hook: misbehaving(kind, times=times)})
    plugin: robota.Plugin = cls()
    return plugin


@pytest.mark.parametrize("kind", sorted(MISBEHAVIOURS))
@pytest.mark.parametrize("hook", RUN_HOOKS)
async def test_s20_a_misbehaving_run_hook_is_recorded_and_the_run_completes(
    hook: str, kind: str, memory_sink: robota.MemorySink
) -> None:
    plugin = broken_plugin(hook, kind)
    witness = Recorder()  # a well-behaved plugin after it still sees every hook
    agent = robota.Agent(provider=ScriptedProvider(["done"]), model="m", plugins=[plugin, witness])
    result = await agent.run("go")
    assert result.status == "complete"
    assert result.output == "done"
    error_type, message = MISBEHAVIOURS[kind]
    assert [(f.plugin, f.hook, type(f.error)) for f in result.plugin_errors] == [
        (f"Broken_{hook}", hook, error_type)
    ]
    assert message in str(result.plugin_errors[0].error)
    assert witness.calls == [
        "setup",
        "before_run:go",
        "before_provider_call:1",
        "after_provider_call:done",
        "after_run:complete",
    ]
    assert any(
        e.message == "plugin hook raised" and e.fields.get("hook") == hook
        for e in memory_sink.events
    )
    assert await agent.aclose() == []


@pytest.mark.parametrize("kind", sorted(MISBEHAVIOURS))
async def test_s20_a_misbehaving_on_error_hook_leaves_the_caller_the_run_s_own_error(
    kind: str, memory_sink: robota.MemorySink
) -> None:
    plugin = broken_plugin("on_error", kind)
    provider = ScriptedProvider([ValueError("x"), "fine"])
    agent = robota.Agent(provider=provider, model="m", plugins=[plugin])
    with pytest.raises(robota.ProviderError, match="ValueError: x"):
        await agent.run("go")
    recorded = [e for e in memory_sink.events if e.message == "plugin hook raised"]
    assert [e.fields.get("hook") for e in recorded] == ["on_error"]
    assert MISBEHAVIOURS[kind][1] in str(recorded[0].fields.get("error"))
    assert (await agent.run("again")).status == "complete"  # the agent is still usable
    assert await agent.aclose() == []


@pytest.mark.parametrize("kind", sorted(MISBEHAVIOURS))
async def test_s20_a_misbehaving_setup_fails_that_run_and_the_next_run_retries(kind: str) -> None:
    plugin = broken_plugin("setup", kind, times=1)
    provider = ScriptedProvider(["second"])
    agent = robota.Agent(provider=provider, model="m", plugins=[plugin])
    error_type, message = MISBEHAVIOURS[kind]
    with pytest.raises(error_type, match=message):
        await agent.run("first")
    assert provider.requests == []  # the failed run never reached the model
    result = await agent.run("second")  # not cached as a failure: setup is called again
    assert result.output == "second"
    assert result.plugin_errors == ()
    assert await agent.aclose() == []


@pytest.mark.parametrize("hook", [*RUN_HOOKS, "setup", "on_error", "dispose"])
async def test_s20_a_plain_def_hook_returning_none_is_accepted(hook: str) -> None:
    seen: list[str] = []

    def plain(self: object, *args: object) -> None:
        seen.append(hook)

    plugin = type("Plain", (robota.Plugin,), {hook: plain})()
    script: list[Any] = [ValueError("x"), "ok"] if hook == "on_error" else ["ok"]
    agent = robota.Agent(provider=ScriptedProvider(script), model="m", plugins=[plugin])
    if hook == "on_error":
        with pytest.raises(robota.ProviderError):
            await agent.run("fails")
    result = await agent.run("go")
    assert result.plugin_errors == ()
    assert await agent.aclose() == []
    assert seen == [hook]


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("hook", [*RUN_HOOKS, "setup"])
async def test_s20_cancellation_raised_by_a_hook_propagates(hook: str, kind: str) -> None:
    def sync_cancel(self: object, *args: object) -> object:
        raise asyncio.CancelledError

    async def async_cancel(self: object, *args: object) -> None:
        raise asyncio.CancelledError

    body = sync_cancel if kind == "sync" else async_cancel
    plugin = type("Cancels", (robota.Plugin,), {hook: body})()
    agent = robota.Agent(provider=ScriptedProvider(["x", "y"]), model="m", plugins=[plugin])
    with pytest.raises(asyncio.CancelledError):
        await agent.run("go")
    assert await agent.aclose() == []


async def test_s20_a_raising_name_or_repr_does_not_break_the_record(
    memory_sink: robota.MemorySink,
) -> None:
    class Unprintable(Exception):
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    class Odd(robota.Plugin):
        def __init__(self) -> None:
            super().__init__()

        @property  # type: ignore[override]
        def name(self) -> str:
            raise RuntimeError("no name")

        async def before_run(self, run: robota.RunInfo, input: str) -> None:
            raise Unprintable

    agent = robota.Agent(provider=ScriptedProvider(["ok"]), model="m", plugins=[Odd.__new__(Odd)])
    result = await agent.run("go")
    assert [(f.plugin, f.hook) for f in result.plugin_errors] == [("Odd", "before_run")]
    assert any("repr() raised" in str(e.fields.get("error")) for e in memory_sink.events)
