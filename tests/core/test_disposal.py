"""S20 disposal."""

from __future__ import annotations

import asyncio
import inspect
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


# --------------------------------------------------------------------------- S20: cancellation
# The disposal is one task the agent owns. Cancelling a caller of aclose() propagates to that
# caller (never swallowed) but leaves the disposal running to its end; a later aclose() joins it.


class Gate(robota.Plugin):
    """A plugin whose ``dispose`` (or ``before_run``) waits until the test opens it."""

    def __init__(self, *, at: str = "dispose") -> None:
        super().__init__()
        self.at = at
        self.entered = asyncio.Event()
        self.open = asyncio.Event()
        self.log: list[str] = []

    async def _wait(self) -> None:
        self.entered.set()
        await self.open.wait()

    async def before_run(self, run: robota.RunInfo, input: str) -> None:
        if self.at == "before_run":
            await self._wait()

    async def after_run(self, run: robota.RunInfo, result: robota.RunResult) -> None:
        self.log.append("after_run")

    async def dispose(self) -> None:
        if self.at == "dispose":
            await self._wait()
        self.log.append("dispose")


class Recorder(robota.Plugin):
    def __init__(self) -> None:
        super().__init__()
        self.disposed = 0

    async def dispose(self) -> None:
        self.disposed += 1


async def eventually(condition: Callable[[], bool]) -> None:
    """Let the loop run until ``condition()`` holds (bounded, no wall-clock timing)."""
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


def disposal_tasks(before: set[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() - before if t.get_name().startswith("robota-dispose-")]


async def test_s20_cancelled_aclose_during_a_plugin_dispose_still_runs_every_later_step() -> None:
    """Case A: the caller's timeout cancels aclose() mid-step; plugin 2, the module and the
    owned provider are still disposed, without anyone calling aclose() again."""
    before = asyncio.all_tasks()
    gate, later, module, provider = Gate(), Recorder(), Witness(), ScriptedProvider([])
    agent = robota.Agent(
        provider=provider,
        model="m",
        plugins=[gate, FailingPlugin(), later],
        modules=[module],
        owns_providers=True,
    )
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(agent.aclose(), 0.05)  # the caller's cancellation propagates
    assert gate.entered.is_set()
    assert agent.closed
    assert (later.disposed, module.disposed, provider.closed) == (0, 0, False)
    gate.open.set()
    await eventually(lambda: provider.closed)  # the disposal went on by itself
    assert (later.disposed, module.disposed) == (1, 1)
    errors = await agent.aclose()  # joins the same, finished disposal: nothing runs twice
    assert [type(e) for e in errors] == [OSError]
    assert (later.disposed, module.disposed) == (1, 1)
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()  # no task of the agent is left


async def test_s20_a_later_aclose_awaits_the_disposal_a_cancelled_one_began() -> None:
    before = asyncio.all_tasks()
    gate, module, provider = Gate(), Witness(), ScriptedProvider([])
    agent = robota.Agent(
        provider=provider,
        model="m",
        plugins=[gate, FailingPlugin()],
        modules=[module],
        owns_providers=True,
    )
    first = asyncio.create_task(agent.aclose())
    await gate.entered.wait()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    second = asyncio.create_task(agent.aclose())
    await asyncio.sleep(0)
    assert not second.done()  # it waits for the disposal the first call began
    gate.open.set()
    errors = await second
    assert [type(e) for e in errors] == [OSError]
    assert (gate.log, module.disposed, provider.closed) == (["dispose"], 1, True)
    assert len(disposal_tasks(before)) == 0
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()


async def test_s20_cancelled_aclose_while_a_run_is_in_flight_disposes_after_the_run() -> None:
    """Case B: aclose() is cancelled while it waits for the in-flight run; the run finishes on
    a closing (not yet disposed) agent, and then the disposal happens."""
    before = asyncio.all_tasks()
    gate, module, provider = Gate(at="before_run"), Witness(), ScriptedProvider(["one"])
    agent = robota.Agent(
        provider=provider, model="m", plugins=[gate], modules=[module], owns_providers=True
    )
    run = asyncio.create_task(agent.run("a"))
    await gate.entered.wait()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(agent.aclose(), 0.05)
    assert agent.closed
    assert not run.done()
    assert (gate.log, module.disposed, provider.closed) == ([], 0, False)
    gate.open.set()
    assert (await run).output == "one"
    assert await agent.aclose() == []
    assert gate.log == ["after_run", "dispose"]  # the run settled first, then the disposal
    assert (module.disposed, provider.closed) == (1, True)
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_s20_a_cleanup_step_raising_cancelled_error_is_its_failure_and_the_rest_run(
    kind: str, memory_sink: robota.MemorySink
) -> None:
    """Case C: a dispose that raises CancelledError while nobody cancels the disposal is that
    step's failure: returned, not raised, and every later step still runs."""

    def sync_cancel(self: object) -> object:
        raise asyncio.CancelledError("from the step")

    async def async_cancel(self: object) -> None:
        raise asyncio.CancelledError("from the step")

    body = sync_cancel if kind == "sync" else async_cancel
    plugin = type("Cancels", (robota.Plugin,), {"dispose": body})()
    later, module, provider = Recorder(), Witness(), ScriptedProvider([])
    agent = robota.Agent(
        provider=provider,
        model="m",
        plugins=[plugin, later],
        modules=[module],
        owns_providers=True,
    )
    errors = await agent.aclose()  # returns: the caller was not cancelled
    assert [type(e) for e in errors] == [asyncio.CancelledError]
    assert "from the step" in str(errors[0])
    assert (later.disposed, module.disposed, provider.closed) == (1, 1, True)
    assert agent.closed
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0  # nothing leaked into the caller
    assert await agent.aclose() == errors
    assert any(e.message == "cleanup step failed" for e in memory_sink.events)


async def test_s20_a_second_aclose_returns_the_same_errors_as_the_completed_disposal() -> None:
    plugins = [FailingPlugin(), FailingPlugin()]
    module = CountingModule()
    agent = robota.Agent(
        provider=ScriptedProvider([]), model="m", plugins=plugins, modules=[module]
    )
    first = await agent.aclose()
    second = await agent.aclose()
    assert len(first) == 2
    assert second == first
    assert all(a is b for a, b in zip(first, second, strict=True))  # the very same failures
    second.clear()  # each call hands out its own list
    assert await agent.aclose() == first
    assert module.disposed == 1  # the steps ran once


async def test_s20_a_run_started_after_disposal_began_is_rejected() -> None:
    gate = Gate()
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m", plugins=[gate], tools=[_echo])
    closing = asyncio.create_task(agent.aclose())
    await gate.entered.wait()  # disposal has begun and is not finished
    assert agent.closed
    with pytest.raises(robota.DisposedAgentError, match="closed"):
        await agent.run("late")
    with pytest.raises(robota.DisposedAgentError):
        agent.run_stream("late")
    with pytest.raises(robota.DisposedAgentError):
        await agent.invoke_tool("_echo", {"text": "late"})
    closing.cancel()  # a cancelled aclose() does not reopen the agent either
    with pytest.raises(asyncio.CancelledError):
        await closing
    with pytest.raises(robota.DisposedAgentError):
        await agent.run("later")
    gate.open.set()
    assert await agent.aclose() == []
    with pytest.raises(robota.DisposedAgentError):
        await agent.run("after")


@robota.tool
def _echo(text: str) -> str:
    """Echo the text."""
    return text


async def test_s20_cancelling_the_disposal_task_cuts_short_only_the_step_it_lands_in() -> None:
    """Someone else cancels the disposal task: the interrupted step is recorded as failed, the
    remaining steps run, the task ends cancelled, and the (uncancelled) caller gets the list."""
    before = asyncio.all_tasks()
    gate, later, module, provider = Gate(), Recorder(), Witness(), ScriptedProvider([])
    agent = robota.Agent(
        provider=provider,
        model="m",
        plugins=[gate, later],
        modules=[module],
        owns_providers=True,
    )
    closing = asyncio.create_task(agent.aclose())
    await gate.entered.wait()
    (disposal,) = disposal_tasks(before)
    disposal.cancel()
    errors = await closing
    assert [type(e) for e in errors] == [asyncio.CancelledError]
    assert disposal.cancelled()  # the cancellation was honoured, not swallowed
    assert (gate.log, later.disposed, module.disposed, provider.closed) == ([], 1, 1, True)
    assert await agent.aclose() == errors


async def test_s20_a_disposal_cancelled_before_it_began_is_started_again() -> None:
    before = asyncio.all_tasks()
    module, provider = Witness(), ScriptedProvider([])
    agent = robota.Agent(provider=provider, model="m", modules=[module], owns_providers=True)
    closing = asyncio.create_task(agent.aclose())
    await asyncio.sleep(0)  # aclose() has created its disposal task, which has not run yet
    (disposal,) = disposal_tasks(before)
    assert inspect.getcoroutinestate(disposal.get_coro()) == inspect.CORO_CREATED
    disposal.cancel()
    assert await closing == []
    assert disposal.cancelled()
    assert (module.disposed, provider.closed) == (1, True)
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()


def test_s20_event_loop_shutdown_still_runs_the_remaining_cleanup() -> None:
    """A fire-and-forget aclose() still pending when asyncio.run() ends: the loop's shutdown
    cancels the disposal, which cuts short the blocked step and still runs the others."""
    later, module, provider = Recorder(), Witness(), ScriptedProvider([])
    agents: list[robota.Agent] = []
    closers: list[asyncio.Task[list[BaseException]]] = []

    async def main() -> None:
        gate = Gate()  # never opened
        agent = robota.Agent(
            provider=provider,
            model="m",
            plugins=[gate, later],
            modules=[module],
            owns_providers=True,
        )
        agents.append(agent)
        closers.append(asyncio.create_task(agent.aclose()))  # fire and forget
        await gate.entered.wait()

    asyncio.run(main())
    assert closers[0].cancelled()  # the shutdown cancelled the caller too
    assert (later.disposed, module.disposed, provider.closed) == (1, 1, True)
    (agent,) = agents
    assert agent.closed
    errors = asyncio.run(agent.aclose())  # already closed: returns what was recorded
    assert [type(e) for e in errors] == [asyncio.CancelledError]
