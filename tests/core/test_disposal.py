"""S20 disposal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import robota
from robota.testing import ScriptedProvider, ScriptedTurn


class FailingPlugin(robota.Plugin):
    async def dispose(self) -> None:
        await super().dispose()
        raise OSError("could not flush the log")


class CountingModule(robota.Module):
    def __init__(self, fail_times: int = 0) -> None:
        super().__init__()
        self.fail_times = fail_times
        self.initialized = 0
        self.disposed = 0

    async def initialize(self, agent: object) -> None:
        if self.fail_times:
            self.fail_times -= 1
            raise RuntimeError("backend not reachable yet")
        self.initialized += 1

    async def dispose(self) -> None:
        self.disposed += 1


async def test_s20_aclose_with_a_failing_plugin_returns_the_error_and_does_not_raise() -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", plugins=[FailingPlugin()])
    errors = await agent.aclose()
    assert len(errors) == 1
    assert isinstance(errors[0], OSError)


async def test_s20_every_cleanup_step_runs_despite_an_earlier_failure() -> None:
    module = CountingModule()
    provider = ScriptedProvider([])
    agent = robota.Agent(
        provider=provider,
        model="m",
        plugins=[FailingPlugin()],
        modules=[module],
        owns_providers=True,
    )
    errors = await agent.aclose()
    assert len(errors) == 1
    assert module.disposed == 1
    assert provider.closed


async def test_s20_aclose_is_idempotent() -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", plugins=[FailingPlugin()])
    first = await agent.aclose()
    second = await agent.aclose()
    assert [type(e) for e in second] == [type(e) for e in first]
    concurrent = robota.Agent(provider=ScriptedProvider([]), model="m")
    assert await asyncio.gather(concurrent.aclose(), concurrent.aclose()) == [[], []]


async def test_s20_runs_after_close_are_rejected_as_disposed_not_uninitialised() -> None:
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m")
    await agent.aclose()
    with pytest.raises(robota.DisposedAgentError, match="closed"):
        await agent.run("hi")
    with pytest.raises(robota.DisposedAgentError):
        agent.get_model()
    with pytest.raises(robota.DisposedAgentError):
        agent.run_stream("hi")
    assert agent.closed


async def test_s20_aclose_waits_for_in_flight_and_queued_runs() -> None:
    provider = ScriptedProvider(
        [ScriptedTurn(text="one", delay=0.05), ScriptedTurn(text="two", delay=0.05)]
    )
    agent = robota.Agent(provider=provider, model="m")
    first = asyncio.create_task(agent.run("a"))
    second = asyncio.create_task(agent.run("b"))
    await asyncio.sleep(0.01)
    await agent.aclose()
    assert first.done()
    assert second.done()
    assert (first.result().output, second.result().output) == ("one", "two")


async def test_s20_borrowed_provider_stays_open_owned_one_is_closed() -> None:
    borrowed = ScriptedProvider([])
    await robota.Agent(provider=borrowed, model="m").aclose()
    assert not borrowed.closed
    owned = ScriptedProvider([])
    await robota.Agent(provider=owned, model="m", owns_providers=True).aclose()
    assert owned.closed


async def test_s20_after_aclose_no_asyncio_task_of_the_agent_is_left() -> None:
    class Background(robota.Plugin):
        async def before_run(self, run: robota.RunInfo, input: str) -> None:
            self.spawn(asyncio.sleep(3600))

    before = asyncio.all_tasks()
    provider = ScriptedProvider(["a b c d e f", "x"], chunk_delay=0.01)
    agent = robota.Agent(provider=provider, model="m", plugins=[Background()])
    async for event in agent.run_stream("stream"):
        if isinstance(event, robota.TextDelta):
            break
    await agent.run("plain")
    await agent.aclose()
    await asyncio.sleep(0)
    left = asyncio.all_tasks() - before
    assert left == set()


async def test_s20_a_failed_initialisation_is_not_cached() -> None:
    module = CountingModule(fail_times=1)
    agent = robota.Agent(provider=ScriptedProvider(["ok"]), model="m", modules=[module])
    with pytest.raises(RuntimeError, match="not reachable"):
        await agent.run("first")
    assert (await agent.run("second")).output == "ok"
    assert module.initialized == 1


async def test_s20_async_with_closes_the_agent() -> None:
    async with robota.Agent(provider=ScriptedProvider(["x"]), model="m") as agent:
        await agent.run("hi")
    assert agent.closed


def test_module_registry_refuses_duplicates_and_non_modules() -> None:
    with pytest.raises(robota.ConfigurationError, match="already registered"):
        robota.ModuleRegistry([CountingModule(), CountingModule()])
    with pytest.raises(robota.ConfigurationError, match="not a Module"):
        robota.ModuleRegistry([object()])  # type: ignore[list-item]
    registry = robota.ModuleRegistry([CountingModule()])
    assert registry.get("CountingModule") is not None
    assert len(registry) == 1


# --------------------------------------------------------------------------- S20: the guard
# A cleanup step (or module initialisation) that misbehaves *synchronously* — a plain `def` that
# raises when called, or returns something that cannot be awaited — is handled exactly like an
# `async def` that raises: collected by aclose(), or failing that run only.


def misbehaving(kind: str, *, times: int | None = None) -> Callable[..., Any]:
    """``sync_raise``, ``sync_value`` (returns 42) or ``async_raise``; then does nothing."""
    calls = [0]

    def step(self: object, *args: object) -> object:
        calls[0] += 1
        if times is not None and calls[0] > times:
            return asyncio.sleep(0)
        if kind == "sync_raise":
            raise OSError(f"{kind} cleanup bug")
        if kind == "sync_value":
            return 42
        assert kind == "async_raise"

        async def failing() -> None:
            raise OSError(f"{kind} cleanup bug")

        return failing()

    return step


MISBEHAVIOURS = {
    "sync_raise": (OSError, "sync_raise cleanup bug"),
    "sync_value": (robota.ConfigurationError, "returned int, not an awaitable"),
    "async_raise": (OSError, "async_raise cleanup bug"),
}


class Witness(robota.Module):
    """Records its dispose, so a test can see later cleanup steps still run."""

    def __init__(self) -> None:
        super().__init__()
        self.disposed = 0

    async def dispose(self) -> None:
        self.disposed += 1


@pytest.mark.parametrize("kind", sorted(MISBEHAVIOURS))
@pytest.mark.parametrize("owner", ["plugin", "module", "provider"])
async def test_s20_a_misbehaving_cleanup_step_is_collected_and_the_rest_still_runs(
    owner: str, kind: str, memory_sink: robota.MemorySink
) -> None:
    plugins: list[robota.Plugin] = []
    modules: list[robota.Module] = []
    provider = ScriptedProvider(["ok"])
    if owner == "plugin":
        plugins.append(type("BrokenPlugin", (robota.Plugin,), {"dispose": misbehaving(kind)})())
    elif owner == "module":
        modules.append(type("BrokenModule", (robota.Module,), {"dispose": misbehaving(kind)})())
    else:
        step = misbehaving(kind)
        provider.aclose = lambda: step(provider)  # type: ignore[method-assign]
    witness = Witness()
    agent = robota.Agent(
        provider=provider,
        model="m",
        plugins=plugins,
        modules=[*modules, witness],
        owns_providers=True,
    )
    assert (await agent.run("go")).output == "ok"
    errors = await agent.aclose()  # never raises for a cleanup failure
    error_type, message = MISBEHAVIOURS[kind]
    assert [type(e) for e in errors] == [error_type]
    assert message in str(errors[0])
    assert witness.disposed == 1  # a later step ran despite the failure
    assert agent.closed
    assert await agent.aclose() == errors  # idempotent, same failures
    assert any(e.message == "cleanup step failed" for e in memory_sink.events)


@pytest.mark.parametrize("kind", sorted(MISBEHAVIOURS))
async def test_s20_a_misbehaving_module_initialize_fails_that_run_and_is_retried(
    kind: str,
) -> None:
    module = type("Flaky", (robota.Module,), {"initialize": misbehaving(kind, times=1)})()
    provider = ScriptedProvider(["second"])
    agent = robota.Agent(provider=provider, model="m", modules=[module])
    error_type, message = MISBEHAVIOURS[kind]
    with pytest.raises(error_type, match=message):
        await agent.run("first")
    assert provider.requests == []
    assert (await agent.run("second")).output == "second"
    assert await agent.aclose() == []


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_s20_cancellation_raised_by_a_cleanup_step_propagates(kind: str) -> None:
    def sync_cancel(self: object) -> object:
        raise asyncio.CancelledError

    async def async_cancel(self: object) -> None:
        raise asyncio.CancelledError

    body = sync_cancel if kind == "sync" else async_cancel
    plugin = type("Cancels", (robota.Plugin,), {"dispose": body})()
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", plugins=[plugin])
    with pytest.raises(asyncio.CancelledError):
        await agent.aclose()
    assert agent.closed  # terminal even so: state is always reset
