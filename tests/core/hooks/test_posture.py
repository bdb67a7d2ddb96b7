"""S22 the posture table pinned to the fire sites, with real command hooks.

For every event that has a fire site, each column of its :data:`HOOK_EVENTS` row is checked
against what the site observably does:

* ``awaited`` — a hook blocks until the test creates a file; the operation's next step (the
  tool body, the next model call, the run's return, the approver) either happens only after the
  hook ended (awaited) or happens while the hook is still blocked (not awaited);
* ``inspected`` — a hook that denies (exit 2) changes the outcome, or does not;
* ``enforces`` — a hook that fails (exit 7) blocks like a deny, or changes nothing.

Adding a fire site (``SessionStart``, ``SessionEnd``, ``PreCompact`` …) is one entry in
:data:`FIRE_SITES`, moved out of :data:`NO_FIRE_SITE_YET`.
"""

from __future__ import annotations

import asyncio
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import robota
from robota import Approval, ApprovalRequest, HookBlockedError, PermissionGate, PermissionPolicy
from robota.core.hooks import HOOK_EVENTS, HookConfig, HookEventName, HookRunner
from robota.host import CommandHookExecutor
from robota.sessions import Session
from robota.testing import InMemorySessionStore, ScriptedProvider

# The event names the issue and the Claude Code settings format spell (S22).
CLAUDE_CODE_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
    "SubagentStop",
)

# Declared events no code fires yet. SubagentStop fires once sub-agents exist (issue 29).
NO_FIRE_SITE_YET = frozenset({"SubagentStop"})

Probe = Callable[[], Awaitable[None]]
"""Awaited at the operation's next step after the hook's fire site."""

# How long a check waits for something that must happen before it calls the site broken. Only a
# failure detector: a correct site gets there in milliseconds; the hooks' own timeout is longer.
_PATIENCE = 30.0
_HOOK_TIMEOUT = 120


class _Probed(ScriptedProvider):
    """A scripted provider that calls ``probe`` as each request arrives (from the 2nd on)."""

    def __init__(self, turns: list[Any], probe: Probe | None, *, from_request: int) -> None:
        super().__init__(turns)
        self._probe = probe
        self._from = from_request

    async def chat_stream(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[Any]:
        if self._probe is not None and len(self.requests) + 1 == self._from:
            await self._probe()
        async for event in super().chat_stream(request, signal=signal):
            yield event


def _runner(event: str, command: str) -> HookRunner:
    hook = {"type": "command", "command": command, "timeout": _HOOK_TIMEOUT}
    return HookRunner({event: [{"hooks": [hook]}]}, {"command": CommandHookExecutor()})


def _tool(ran: list[str], probe: Probe | None) -> robota.Tool:
    @robota.tool(risk="execute", argument=robota.PermissionArgument("command", "command"))
    async def shell(command: str) -> str:
        """Run a command (pretend)."""
        if probe is not None:
            await probe()
        ran.append(command)
        return f"ran {command}"

    return shell


async def _tool_run(gate: PermissionGate, provider: ScriptedProvider, ran: list[str]) -> Hashable:
    agent = robota.Agent(provider=provider, model="m", tools=[_tool(ran, None)], tool_gate=gate)
    async with agent:
        result = await agent.run("go")
    results = tuple(m.content for m in agent.history if isinstance(m, robota.ToolMessage))
    return (tuple(ran), results, result.text)


# ---------------------------------------------------------------------------------- fire sites


async def _pre_tool_use(command: str, probe: Probe | None) -> Hashable:
    ran: list[str] = []
    gate = PermissionGate(PermissionPolicy(mode="bypass"), hooks=_runner("PreToolUse", command))
    agent = robota.Agent(
        provider=ScriptedProvider([[("shell", {"command": "ls"})], "done"]),
        model="m",
        tools=[_tool(ran, probe)],  # next step: the body
        tool_gate=gate,
    )
    async with agent:
        await agent.run("go")
    return tuple(ran)


async def _post_tool_use(command: str, probe: Probe | None) -> Hashable:
    ran: list[str] = []
    gate = PermissionGate(PermissionPolicy(mode="bypass"), hooks=_runner("PostToolUse", command))
    # Next step: the model call after the tool's result.
    provider = _Probed([[("shell", {"command": "ls"})], "done"], probe, from_request=2)
    return await _tool_run(gate, provider, ran)


async def _user_prompt_submit(command: str, probe: Probe | None) -> Hashable:
    provider = _Probed(["ok"], probe, from_request=1)  # next step: the first model call
    agent = robota.Agent(provider=provider, model="m", hooks=_runner("UserPromptSubmit", command))
    async with agent:
        try:
            text = (await agent.run("hi")).text
        except HookBlockedError:
            text = "<blocked>"
    return (text, len(provider.requests))


async def _stop(command: str, probe: Probe | None) -> Hashable:
    provider = ScriptedProvider([f"reply {i}" for i in range(5)])
    agent = robota.Agent(provider=provider, model="m", hooks=_runner("Stop", command))
    async with agent:
        text = (await agent.run("hi")).text
        if probe is not None:
            await probe()  # next step: the run returned
    return (text, len(provider.requests))


async def _notification(command: str, probe: Probe | None) -> Hashable:
    ran: list[str] = []

    async def approver(request: ApprovalRequest) -> Approval:
        if probe is not None:
            await probe()  # next step: the person is asked
        return Approval(True)

    gate = PermissionGate(
        PermissionPolicy(), approver=approver, hooks=_runner("Notification", command)
    )
    provider = ScriptedProvider([[("shell", {"command": "make build"})], "done"])
    return await _tool_run(gate, provider, ran)


class _SummaryProbed(ScriptedProvider):
    """Scripted turns; a summary call (no tools offered) awaits ``probe`` and answers."""

    def __init__(self, probe: Probe | None) -> None:
        super().__init__(["one", "two"])
        self._probe = probe

    async def chat_stream(
        self, request: robota.ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[Any]:
        if len(self.requests) < 2:
            async for event in super().chat_stream(request, signal=signal):
                yield event
            return
        self.requests.append(request)
        if self._probe is not None:
            await self._probe()  # next step: the summary call
        yield robota.TextDelta("the summary")
        yield robota.ResponseDone(model=request.model, usage=robota.Usage())


async def _pre_compact(command: str, probe: Probe | None) -> Hashable:
    provider = _SummaryProbed(probe)
    agent = robota.Agent(provider=provider, model="m", hooks=_runner("PreCompact", command))
    async with agent, await Session.open(agent, InMemorySessionStore()) as session:
        await session.run("a")
        await session.run("b")
        entry = await session.compact(keep_recent_turns=0)
        if entry is None and probe is not None:
            await probe()  # vetoed: the next step is compact()'s return
    return (entry is not None, len(provider.requests))


async def _session_start(command: str, probe: Probe | None) -> Hashable:
    agent = robota.Agent(
        provider=ScriptedProvider(["ok"]), model="m", hooks=_runner("SessionStart", command)
    )
    async with agent:
        session = await Session.open(agent, InMemorySessionStore())
        if probe is not None:
            await probe()  # next step: open() returned
        text = (await session.run("hi")).text
        await session.aclose()
    return text


async def _session_end(command: str, probe: Probe | None) -> Hashable:
    agent = robota.Agent(
        provider=ScriptedProvider(["ok"]), model="m", hooks=_runner("SessionEnd", command)
    )
    async with agent:
        session = await Session.open(agent, InMemorySessionStore())
        text = (await session.run("hi")).text
        await session.aclose()
        if probe is not None:
            await probe()  # next step: aclose() returned
    return (text, session.closed)


@dataclass(frozen=True)
class FireSite:
    """Drives one event's fire site: ``run(command, probe)`` returns the observable outcome."""

    run: Callable[[str, Probe | None], Awaitable[Hashable]]


FIRE_SITES: dict[str, FireSite] = {
    "PreToolUse": FireSite(_pre_tool_use),
    "PostToolUse": FireSite(_post_tool_use),
    "UserPromptSubmit": FireSite(_user_prompt_submit),
    "Stop": FireSite(_stop),
    "Notification": FireSite(_notification),
    "PreCompact": FireSite(_pre_compact),
    "SessionStart": FireSite(_session_start),
    "SessionEnd": FireSite(_session_end),
}


# ---------------------------------------------------------------------------------- the table


def test_s22_the_table_names_exactly_the_claude_code_events() -> None:
    assert set(HOOK_EVENTS) == set(CLAUDE_CODE_EVENTS)
    assert set(typing.get_args(HookEventName)) == set(CLAUDE_CODE_EVENTS)
    assert len(CLAUDE_CODE_EVENTS) == len(set(CLAUDE_CODE_EVENTS))


def test_s22_every_event_has_a_fire_site_test_or_is_declared_without_one() -> None:
    assert set(FIRE_SITES) | NO_FIRE_SITE_YET == set(HOOK_EVENTS)
    assert not set(FIRE_SITES) & NO_FIRE_SITE_YET


@pytest.mark.parametrize("event", CLAUDE_CODE_EVENTS)
def test_s22_every_event_is_accepted_by_the_configuration(event: str) -> None:
    config = HookConfig.from_dict(
        {event: [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]}
    )
    assert len(config.hooks_for(event)) == 1


# ------------------------------------------------------------------------ the rows, observed


def _blocking_hook(tmp_path: Path) -> tuple[str, Path, Path, Path]:
    """A hook that marks its start, blocks until ``go`` exists, then marks its end."""
    started, go, finished = tmp_path / "started", tmp_path / "go", tmp_path / "finished"
    script = tmp_path / "block.sh"
    script.write_text(
        f'cat > /dev/null\ntouch "{started}"\n'
        f'while [ ! -e "{go}" ]; do sleep 0.02; done\ntouch "{finished}"\n'
    )
    return f"sh {script}", started, go, finished


async def _until(
    condition: Callable[[], bool], task: asyncio.Future[Any] | None, what: str
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _PATIENCE
    while not condition():
        if task is not None and task.done():
            task.result()  # its failure, if any
            raise AssertionError(f"the operation ended before {what}")
        if loop.time() > deadline:
            raise AssertionError(f"{what} never happened")
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("event", sorted(FIRE_SITES))
async def test_s22_awaited_column_matches_the_fire_site(event: str, tmp_path: Path) -> None:
    command, started, go, finished = _blocking_hook(tmp_path)
    seen: list[bool] = []  # at the next step: had the hook ended?
    awaited = HOOK_EVENTS[event].awaited

    async def probe() -> None:
        seen.append(finished.exists())
        if not awaited and len(seen) == 1:
            # The operation waits here, at its next step, until the hook is seen running.
            await _until(started.exists, None, "the hook started beside the operation")

    task = asyncio.ensure_future(FIRE_SITES[event].run(command, probe))
    try:
        if awaited:
            await _until(started.exists, task, "the hook started")
            assert seen == [], "the operation went on while its awaited hook was still running"
            go.touch()
            await task
            assert seen[:1] == [True]
        else:
            # The next step comes while the hook is blocked: only this test can release it.
            await _until(lambda: bool(seen), task, "the operation went on past the fire site")
            assert seen[0] is False
            assert not go.exists()
            go.touch()
            await task
    finally:
        go.touch()
        if not task.done():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize("event", sorted(FIRE_SITES))
async def test_s22_inspected_column_matches_the_fire_site(event: str) -> None:
    site = FIRE_SITES[event]
    allowed = await site.run("exit 0", None)
    denied = await site.run("echo no >&2; exit 2", None)
    assert (denied != allowed) is HOOK_EVENTS[event].inspected, (allowed, denied)


@pytest.mark.parametrize("event", sorted(FIRE_SITES))
async def test_s22_enforces_column_matches_the_fire_site(event: str) -> None:
    site = FIRE_SITES[event]
    allowed = await site.run("exit 0", None)
    failed = await site.run("exit 7", None)
    assert (failed != allowed) is HOOK_EVENTS[event].enforces, (allowed, failed)
