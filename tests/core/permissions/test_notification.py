"""S22 ``Notification``: fired when an ask waits for a person, tracked, never leaked."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import robota
from childproc import alive
from robota import Approval, ApprovalRequest, PermissionGate, PermissionPolicy
from robota.core.hooks import HookRunner
from robota.host import CommandHookExecutor
from robota.testing import ScriptedProvider

_PATIENCE = 30.0  # a failure detector only


@robota.tool(risk="execute", argument=robota.PermissionArgument("command", "command"))
def shell(command: str) -> str:
    """Run a command (pretend)."""
    return f"ran {command}"


def _hooks(tmp_path: Path, body: str = "exit 0", matcher: str = "") -> HookRunner:
    script = tmp_path / "notify.sh"
    script.write_text(
        f'cat >> "{tmp_path / "payloads"}"\necho >> "{tmp_path / "payloads"}"\n{body}\n'
    )
    hook = {"type": "command", "command": f"sh {script}", "timeout": 120}
    return HookRunner(
        {"Notification": [{"matcher": matcher, "hooks": [hook]}]},
        {"command": CommandHookExecutor()},
    )


def _payloads(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "payloads"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def _until(condition: Any, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _PATIENCE
    while not condition():
        assert loop.time() < deadline, f"{what} never happened"
        await asyncio.sleep(0.01)


async def _approve(request: ApprovalRequest) -> Approval:
    return Approval(True)


async def _run(gate: PermissionGate) -> robota.Agent:
    agent = robota.Agent(
        provider=ScriptedProvider([[("shell", {"command": "make build"})], "done"]),
        model="m",
        tools=[shell],
        tool_gate=gate,
    )
    await agent.run("go")
    return agent


async def test_s22_notification_fires_with_what_the_person_is_asked(tmp_path: Path) -> None:
    gate = PermissionGate(PermissionPolicy(), approver=_approve, hooks=_hooks(tmp_path))
    agent = await _run(gate)
    await _until(lambda: _payloads(tmp_path), "the notification")
    await agent.aclose()
    (payload,) = _payloads(tmp_path)
    assert payload["hook_event_name"] == "Notification"
    assert payload["notification_type"] == "permission_prompt"
    assert payload["tool_name"] == "shell"
    assert payload["message"] == "permission is needed to use shell"
    assert payload["reason"]
    assert payload["source"] == "permission"


async def test_s22_notification_matchers_name_the_notification_type(tmp_path: Path) -> None:
    # As in the Claude Code settings format: "permission_prompt" matches, another type not.
    other = tmp_path / "other"
    other.mkdir()
    hooks = HookRunner(
        {
            "Notification": [
                {
                    "matcher": "idle_prompt",
                    "hooks": [{"type": "command", "command": f"touch {other}/fired"}],
                },
                {
                    "matcher": "permission_prompt",
                    "hooks": [{"type": "command", "command": f"touch {tmp_path}/fired"}],
                },
            ]
        },
        {"command": CommandHookExecutor()},
    )
    gate = PermissionGate(PermissionPolicy(), approver=_approve, hooks=hooks)
    agent = await _run(gate)
    await _until((tmp_path / "fired").exists, "the permission_prompt hook")
    await agent.aclose()
    assert not (other / "fired").exists()


async def test_s22_no_notification_when_nobody_is_asked(tmp_path: Path) -> None:
    # Without an approver the ask is a denial at once: nobody waits, so nobody is told.
    gate = PermissionGate(PermissionPolicy(), hooks=_hooks(tmp_path))
    agent = await _run(gate)
    assert gate.notifications_running == 0
    await agent.aclose()
    # Allowed outright (bypass): no ask, no notification either.
    bypass = PermissionGate(
        PermissionPolicy(mode="bypass"), approver=_approve, hooks=_hooks(tmp_path)
    )
    agent = await _run(bypass)
    assert bypass.notifications_running == 0
    await agent.aclose()
    assert _payloads(tmp_path) == []


async def test_s22_a_notification_still_running_is_ended_when_the_agent_closes(
    tmp_path: Path,
) -> None:
    pid = tmp_path / "pid"
    gate = PermissionGate(
        PermissionPolicy(),
        approver=_approve,
        hooks=_hooks(tmp_path, f'echo $$ > "{pid}"\nexec sleep 300'),
    )
    agent = await _run(gate)  # the run is over; the notifier still runs
    await _until(lambda: pid.exists() and pid.read_text().strip(), "the notifier started")
    hook_pid = int(pid.read_text())
    assert gate.notifications_running == 1
    assert alive(hook_pid)
    assert await agent.aclose() == []
    assert gate.notifications_running == 0
    await _until(lambda: not alive(hook_pid), "the notifier's end")
    # The gate stays usable: a later ask notifies again.
    pid.unlink()
    again = robota.Agent(
        provider=ScriptedProvider([[("shell", {"command": "make"})], "done"]),
        model="m",
        tools=[shell],
        tool_gate=gate,
    )
    async with again:
        await again.run("go")
        await _until(lambda: pid.exists() and pid.read_text().strip(), "the second notifier")
    assert gate.notifications_running == 0


async def test_s22_a_notification_ends_with_the_runs_abort(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    controller = robota.AbortController()

    async def approver(request: ApprovalRequest) -> Approval:
        await _until(lambda: pid.exists() and pid.read_text().strip(), "the notifier started")
        controller.abort("the person walked away")
        return Approval(False)

    gate = PermissionGate(
        PermissionPolicy(),
        approver=approver,
        hooks=_hooks(tmp_path, f'echo $$ > "{pid}"\nexec sleep 300'),
    )
    agent = robota.Agent(
        provider=ScriptedProvider([[("shell", {"command": "make"})], "done"]),
        model="m",
        tools=[shell],
        tool_gate=gate,
    )
    async with agent:
        with contextlib.suppress(robota.AbortError):  # interrupted either way
            await agent.run("go", signal=controller.signal)
        await _until(lambda: gate.notifications_running == 0, "the notifier's end on abort")
    assert not alive(int(pid.read_text()))
