"""S23 cancellation: one signal gates every provider call and tool."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator

import pytest

import robota
from robota.testing import ScriptedProvider, ScriptedTurn


async def _wait_for(predicate: object, limit: float = 5.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)


async def test_s23_abort_during_streamed_reply_commits_partial_text_as_interrupted() -> None:
    provider = ScriptedProvider(["one two three four five six seven"], chunk_delay=0.02)
    agent = robota.Agent(provider=provider, model="m")
    controller = robota.AbortController()

    async def abort_after_two_words() -> None:
        await _wait_for(lambda: provider.requests)
        await asyncio.sleep(0.03)
        controller.abort("stop")

    aborter = asyncio.create_task(abort_after_two_words())
    result = await agent.run("count", signal=controller.signal)
    await aborter
    assert result.status == "interrupted"
    assert result.output
    assert "one two three four five six seven".startswith(result.output)
    assert result.output != "one two three four five six seven"
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert (last.state, last.content) == ("interrupted", result.output)
    assert provider.aborted_calls == 1


async def test_s23_a_call_cut_short_before_its_usage_makes_the_cost_unknown() -> None:
    # Regression: an interrupted call reported no usage and the run's cost came out as 0.0 — a
    # guess (the vendor may have charged for it). Unknown is None.
    robota.register_model_pricing(
        "priced-model", input_per_million=1.0, output_per_million=1.0, provider="scripted"
    )
    try:
        provider = ScriptedProvider(["one two three four five six seven"], chunk_delay=0.02)
        agent = robota.Agent(provider=provider, model="priced-model")
        controller = robota.AbortController()

        async def abort_soon() -> None:
            await _wait_for(lambda: provider.requests)
            await asyncio.sleep(0.03)
            controller.abort("stop")

        aborter = asyncio.create_task(abort_soon())
        result = await agent.run("count", signal=controller.signal)
        await aborter
        assert result.status == "interrupted"
        assert result.usage.partial
        assert result.cost is None
        complete = await robota.Agent(
            provider=ScriptedProvider(["done"]), model="priced-model"
        ).run("x")
        assert complete.cost is not None
    finally:
        robota.unregister_model_pricing("priced-model", provider="scripted")


async def test_s23_abort_before_any_text_still_commits_an_empty_interrupted_reply() -> None:
    provider = ScriptedProvider([ScriptedTurn(text="late", delay=5)])
    agent = robota.Agent(provider=provider, model="m")
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("x", signal=controller.signal))
    await _wait_for(lambda: provider.requests)
    controller.abort()
    result = await asyncio.wait_for(task, 2)
    assert result.status == "interrupted"
    assert (agent.history[-1].kind, agent.history[-1].content, agent.history[-1].state) == (
        "assistant",
        "",
        "interrupted",
    )


async def test_s23_a_stream_consumer_that_breaks_out_aborts_the_provider_call() -> None:
    provider = ScriptedProvider(["alpha beta gamma delta epsilon zeta eta theta"], chunk_delay=0.02)
    agent = robota.Agent(provider=provider, model="m")
    async for event in agent.run_stream("go"):
        if isinstance(event, robota.TextDelta):
            break
    await _wait_for(lambda: provider.aborted_calls == 1)
    await _wait_for(lambda: len(agent.history) == 2)
    last = agent.history[-1]
    assert last.state == "interrupted"
    assert last.content.startswith("alpha")
    assert last.content != "alpha beta gamma delta epsilon zeta eta theta"


async def test_s23_async_with_around_a_stream_aborts_on_exit() -> None:
    provider = ScriptedProvider(["a b c d e f g h"], chunk_delay=0.02)
    agent = robota.Agent(provider=provider, model="m")
    async with agent.run_stream("go") as stream:
        async for event in stream:
            if isinstance(event, robota.TextDelta):
                break
    assert provider.aborted_calls == 1
    result = await stream.result()
    assert result.status == "interrupted"


async def test_s23_a_long_running_tool_returns_promptly_because_it_observes_the_signal() -> None:
    finished_normally = False

    @robota.tool
    async def crawl(ctx: robota.ToolContext) -> str:
        """Crawl for a long time, observing cancellation."""
        nonlocal finished_normally
        for _ in range(1000):
            if ctx.signal.aborted:
                raise robota.AbortError("crawl stopped")
            await asyncio.sleep(0.01)
        finished_normally = True
        return "crawled everything"

    provider = ScriptedProvider([[("crawl", {})], "never reached"])
    agent = robota.Agent(provider=provider, model="m", tools=[crawl])
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("crawl", signal=controller.signal))
    await _wait_for(lambda: any(m.kind == "assistant" for m in agent.history))
    await asyncio.sleep(0.03)
    started = time.monotonic()
    controller.abort()
    result = await asyncio.wait_for(task, 2)
    assert time.monotonic() - started < 1.0
    assert result.status == "interrupted"
    assert not finished_normally
    tool_message = agent.history[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert "Interrupted by user" in tool_message.content
    assert len(provider.requests) == 1  # no provider call after the abort


async def test_s38_running_tools_finish_and_queued_tools_are_skipped_as_interrupted() -> None:
    controller = robota.AbortController()
    started: list[str] = []

    @robota.tool
    async def step(label: str, ctx: robota.ToolContext) -> str:
        """A step that aborts the run when it starts, then finishes its own work."""
        started.append(label)
        controller.abort("enough")
        await asyncio.sleep(0.01)
        return f"{label} finished"

    calls = [("step", {"label": name}) for name in ("a", "b", "c")]
    provider = ScriptedProvider([calls])
    agent = robota.Agent(provider=provider, model="m", tools=[step], tool_concurrency=1)
    result = await agent.run("go", signal=controller.signal)
    assert result.status == "interrupted"
    assert started == ["a"]
    contents = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert contents[0] == "a finished"
    assert all("Interrupted by user before this tool started" in c for c in contents[1:])
    assert len(contents) == 3
    assert result.tool_calls_executed == 1


async def test_s23_cancelling_the_task_commits_interrupted_state_then_propagates() -> None:
    provider = ScriptedProvider(["slow words arriving one by one"], chunk_delay=0.05)
    agent = robota.Agent(provider=provider, model="m")
    task = asyncio.create_task(agent.run("go"))
    await _wait_for(lambda: provider.requests)
    await asyncio.sleep(0.07)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert last.state == "interrupted"
    # The agent is usable afterwards: the slot was released.
    provider2_agent = agent
    assert provider2_agent.closed is False


async def test_s23_cancelling_the_task_during_tools_answers_every_call() -> None:
    gate = asyncio.Event()

    @robota.tool
    async def block() -> str:
        """Block forever."""
        await gate.wait()
        return "never"

    provider = ScriptedProvider([[("block", {}), ("block", {})]])
    agent = robota.Agent(provider=provider, model="m", tools=[block])
    task = asyncio.create_task(agent.run("go"))
    await _wait_for(lambda: any(m.kind == "assistant" for m in agent.history))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    tool_messages = [m for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert len(tool_messages) == 2  # every committed call has its answer


async def test_s23_a_provider_error_after_abort_is_an_interruption_not_a_failure() -> None:
    controller = robota.AbortController()
    controller_aborts = ScriptedTurn(error=robota.ProviderError("connection reset"))

    class AbortThenFail(ScriptedProvider):
        async def chat_stream(self, request, *, signal=None):  # type: ignore[no-untyped-def, override]
            controller.abort()
            async for event in super().chat_stream(request, signal=None):
                yield event

    agent = robota.Agent(provider=AbortThenFail([controller_aborts]), model="m")
    result = await agent.run("x", signal=controller.signal)
    assert result.status == "interrupted"


async def test_s23_abort_from_another_thread_interrupts_the_run() -> None:
    provider = ScriptedProvider([ScriptedTurn(text="never", delay=5)])
    agent = robota.Agent(provider=provider, model="m")
    controller = robota.AbortController()
    task = asyncio.create_task(agent.run("x", signal=controller.signal))
    await _wait_for(lambda: provider.requests)
    await asyncio.to_thread(controller.abort, "from a thread")
    assert (await asyncio.wait_for(task, 2)).status == "interrupted"


async def test_s23_an_abort_landing_between_buffered_stream_events_interrupts_the_round() -> None:
    # Regression (review of issue 16): with one guard per stream, an abort that landed while
    # the provider yielded without suspending was lost and the round committed as complete.
    controller = robota.AbortController()

    class Buffered(robota.testing.ScriptedProvider):
        async def chat_stream(self, request, *, signal=None):  # type: ignore[no-untyped-def,override]
            self.requests.append(request)
            yield robota.TextDelta("a")
            controller.abort()  # as another thread or a synchronous listener would
            yield robota.TextDelta("b")
            yield robota.ResponseDone()

    agent = robota.Agent(provider=Buffered([]), model="m")
    result = await agent.run("go", signal=controller.signal)
    assert result.status == "interrupted"
    assert agent.history[-1].state == "interrupted"  # type: ignore[union-attr]


class _PartialLoop(asyncio.SelectorEventLoop):
    """An event loop implementing only what tasks need, like Temporal's workflow loop."""

    def is_closed(self) -> bool:
        if self.is_running():  # the run's code may not ask; asyncio's own teardown may
            raise NotImplementedError
        return super().is_closed()


class _DeafProvider(robota.Provider):
    """Never looks at the signal and waits long mid-stream: only the loop's guard can stop it."""

    name = "deaf"

    async def chat(self, request: object, *, signal: object = None) -> robota.ChatResponse:
        raise NotImplementedError

    async def chat_stream(
        self, request: object, *, signal: object = None
    ) -> AsyncIterator[robota.StreamEvent]:
        yield robota.TextDelta("first ")
        await asyncio.sleep(10)  # one long await: no event boundary at which to notice the abort
        yield robota.TextDelta("late ")
        yield robota.ResponseDone()


def test_s23_an_abort_reaches_a_stream_on_a_loop_without_is_closed() -> None:
    # Regression (issue 17): the guard asked the loop is_closed() before delivering an abort,
    # which Temporal's workflow loop does not implement — the abort never reached the await.
    async def scenario() -> robota.RunResult[str]:
        agent = robota.Agent(provider=_DeafProvider(), model="scripted-model")
        controller = robota.AbortController()
        asyncio.get_running_loop().call_later(0.2, controller.abort)
        started = time.monotonic()
        result = await agent.run("go", signal=controller.signal)
        assert time.monotonic() - started < 5
        return result

    loop = _PartialLoop()
    try:
        result = loop.run_until_complete(scenario())
    finally:
        loop.close()
    assert result.status == "interrupted"
    assert result.text == "first "


def test_closing_a_suspended_run_awaits_nothing_while_it_closes() -> None:
    # Regression (issue 17): a Temporal worker evicting a workflow closes the run's coroutine
    # (GeneratorExit) instead of cancelling it. The loop awaited the stream's aclose() in a
    # finally — the stream being mid-close itself — and the close failed with RuntimeError.
    async def scenario() -> None:
        agent = robota.Agent(provider=_DeafProvider(), model="scripted-model")
        coroutine = agent.run("go")
        task = asyncio.ensure_future(coroutine)
        await asyncio.sleep(0.1)  # the provider waits inside its stream
        coroutine.close()  # what the evicting engine does; raises if the close awaited
        task.cancel()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()


# --- the hard stage: AbortController.abandon (stop waiting for running tools) -----------------


async def test_s38_after_abort_a_running_tool_that_ignores_the_signal_is_waited_for() -> None:
    # The soft stage, unchanged: an abort lets a running body finish and keeps its result.
    controller = robota.AbortController()
    release = asyncio.Event()

    @robota.tool
    async def stubborn() -> str:
        """Ignores the signal; finishes when released."""
        controller.abort("stop")
        asyncio.get_running_loop().call_later(0.05, release.set)
        await release.wait()
        return "done anyway"

    provider = ScriptedProvider([[("stubborn", {})]])
    agent = robota.Agent(provider=provider, model="m", tools=[stubborn])
    result = await agent.run("go", signal=controller.signal)
    assert result.status == "interrupted"
    assert controller.signal.abandoned is False
    tool_message = agent.history[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert tool_message.content == "done anyway"


async def test_s38_abandon_stops_waiting_for_a_running_async_tool_and_records_it_interrupted() -> (
    None
):
    controller = robota.AbortController()
    started = asyncio.Event()
    cleaned_up: list[str] = []

    @robota.tool
    async def stubborn() -> str:
        """Ignores the signal; would run for a minute."""
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            cleaned_up.append("finally ran")  # where a tool kills what it started
        return "never"

    provider = ScriptedProvider([[("stubborn", {})]])
    agent = robota.Agent(provider=provider, model="m", tools=[stubborn])
    task = asyncio.create_task(agent.run("go", signal=controller.signal))
    await asyncio.wait_for(started.wait(), 5)
    controller.abort("first Ctrl-C")
    await asyncio.sleep(0.05)
    assert not task.done()  # the soft stage waits for the body
    controller.abandon()
    result = await asyncio.wait_for(task, 5)
    assert result.status == "interrupted"
    assert controller.signal.abandoned
    assert cleaned_up == ["finally ran"]
    tool_message = agent.history[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert tool_message.is_error
    assert tool_message.content.startswith("Interrupted by user while this tool was running")
    assert "stopped waiting" in tool_message.content
    assert len(provider.requests) == 1


async def test_s38_abandon_stops_waiting_for_a_sync_tool_in_its_thread() -> None:
    controller = robota.AbortController()
    entered = threading.Event()
    leave = threading.Event()

    @robota.tool
    def blocking() -> str:
        """Blocks its thread until the test releases it."""
        entered.set()
        leave.wait(30)
        return "late"

    provider = ScriptedProvider([[("blocking", {})]])
    agent = robota.Agent(provider=provider, model="m", tools=[blocking])
    task = asyncio.create_task(agent.run("go", signal=controller.signal))
    await asyncio.to_thread(entered.wait, 5)
    thread = next(t for t in threading.enumerate() if t.name == "robota-tool-blocking")
    assert thread.daemon  # it cannot hold the process's exit
    controller.abandon("stop now")
    try:
        result = await asyncio.wait_for(task, 5)
    finally:
        leave.set()
    assert result.status == "interrupted"
    tool_message = agent.history[-1]
    assert isinstance(tool_message, robota.ToolMessage)
    assert "stopped waiting" in tool_message.content


async def test_s38_abandon_reaches_a_stream_through_its_combined_signal() -> None:
    controller = robota.AbortController()
    started = asyncio.Event()

    @robota.tool
    async def stubborn() -> str:
        """Ignores the signal."""
        started.set()
        await asyncio.sleep(60)
        return "never"

    provider = ScriptedProvider([[("stubborn", {})]])
    agent = robota.Agent(provider=provider, model="m", tools=[stubborn])
    stream = agent.run_stream("go", signal=controller.signal)
    seen: list[str] = []

    async def consume() -> robota.RunResult[str]:
        seen.extend([event.kind async for event in stream])
        return await stream.result()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    controller.abort()
    controller.abandon()
    result = await asyncio.wait_for(task, 5)
    assert result.status == "interrupted"
    assert "tool_call_finished" in seen


def test_abandon_implies_abort_and_any_forwards_it() -> None:
    first, second = robota.AbortController(), robota.AbortController()
    combined = robota.AbortSignal.any([first.signal, second.signal])
    second.abort("soft")
    assert combined.aborted
    assert not combined.abandoned
    second.abandon()
    assert combined.abandoned
    assert combined.reason == "soft"  # the first reason is kept
    lone = robota.AbortController()
    lone.abandon("hard")
    assert lone.signal.aborted
    assert lone.signal.abandoned
    assert lone.signal.reason == "hard"
    late = robota.AbortSignal.any([lone.signal])
    assert late.aborted
    assert late.abandoned


class _SlowToReport(ScriptedProvider):
    """A server that takes its time to say its context window (a probe's timeout is seconds)."""

    def __init__(self) -> None:
        super().__init__(["never sent"])
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()  # never set: the question hangs until it is cancelled

    async def reported_context_window(self, model: str) -> int | None:
        self.asked.set()
        await self.answer.wait()
        return 8192


async def test_s23_an_abort_while_the_window_is_being_asked_ends_the_run_at_once() -> None:
    """Review of issue 25: the window question ignored the signal; Ctrl-C waited it out."""
    provider = _SlowToReport()
    agent = robota.Agent(provider=provider, model="m")
    controller = robota.AbortController()

    async def abort_once_asked() -> None:
        await provider.asked.wait()
        controller.abort("stop")

    aborter = asyncio.create_task(abort_once_asked())
    # The bound only stops a hang from hanging the suite: unfixed, the run never returns.
    result = await asyncio.wait_for(agent.run("hi", signal=controller.signal), timeout=30)
    await aborter
    assert result.status == "interrupted"
    assert provider.requests == []  # no model call after the abort
