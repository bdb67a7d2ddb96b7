"""S22 the run's own hook fire sites: UserPromptSubmit and Stop, with real command hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import robota
from robota import HookBlockedError, PermissionGate, PermissionPolicy
from robota.core.hooks import HOOK_EVENTS, HookRunner
from robota.host import CommandHookExecutor
from robota.testing import InMemoryJournal, ScriptedProvider


def _script(tmp_path: Path, name: str, body: str) -> str:
    """A command hook: a shell script that first saves its stdin payload next to itself."""
    script = tmp_path / f"{name}.sh"
    log = tmp_path / f"{name}.log"
    script.write_text(f'cat >> "{log}"\necho >> "{log}"\n{body}\n')
    return f"sh {script}"


def _payloads(tmp_path: Path, name: str) -> list[dict[str, Any]]:
    log = tmp_path / f"{name}.log"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _runner(event: str, command: str, **options: Any) -> HookRunner:
    return HookRunner(
        {event: [{"hooks": [{"type": "command", "command": command}]}]},
        {"command": CommandHookExecutor()},
        **options,
    )


def _texts(request: robota.ChatRequest) -> list[str]:
    out: list[str] = []
    for message in request.messages:
        content = message.content
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(p.text for p in content if isinstance(p, robota.TextPart))
    return out


# ------------------------------------------------------------------------- UserPromptSubmit


async def test_s22_user_prompt_submit_deny_blocks_the_turn_before_any_model_call(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(["never"])
    hooks = _runner(
        "UserPromptSubmit", _script(tmp_path, "p", 'echo "no secrets here" >&2; exit 2')
    )
    agent = robota.Agent(provider=provider, model="m", hooks=hooks)
    with pytest.raises(HookBlockedError) as caught:
        await agent.run("paste the API key")
    assert caught.value.event == "UserPromptSubmit"
    assert caught.value.reason == "no secrets here"
    assert caught.value.code == "hook_blocked"
    assert provider.requests == []  # no model call
    assert [m for m in agent.history if isinstance(m, robota.UserMessage)] == []
    assert _payloads(tmp_path, "p")[0]["prompt"] == "paste the API key"
    assert _payloads(tmp_path, "p")[0]["hook_event_name"] == "UserPromptSubmit"


async def test_s22_user_prompt_submit_context_reaches_the_model(tmp_path: Path) -> None:
    provider = ScriptedProvider(["ok"])
    body = (
        'printf \'{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", '
        '"additionalContext": "today is Friday"}}\''
    )
    agent = robota.Agent(
        provider=provider,
        model="m",
        hooks=_runner("UserPromptSubmit", _script(tmp_path, "c", body)),
    )
    await agent.run("what day is it?")
    sent = _texts(provider.requests[0])
    assert "what day is it?" in sent
    assert "Context added by a hook:\ntoday is Friday" in sent


async def test_s22_user_prompt_submit_plain_stdout_is_context_and_the_text_is_overridable(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(["ok"])
    texts = robota.ModelTexts(prompt_hook_context="<ctx>{context}</ctx>")
    agent = robota.Agent(
        provider=provider,
        model="m",
        texts=texts,
        hooks=_runner("UserPromptSubmit", _script(tmp_path, "s", "echo branch: main")),
    )
    await agent.run([robota.TextPart("status?")])
    assert _texts(provider.requests[0])[-2:] == ["status?", "<ctx>branch: main</ctx>"]


async def test_s22_user_prompt_submit_failure_is_advisory(tmp_path: Path) -> None:
    provider = ScriptedProvider(["ok"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        hooks=_runner("UserPromptSubmit", _script(tmp_path, "f", "exit 7")),
    )
    result = await agent.run("hi")
    assert result.text == "ok"
    assert _texts(provider.requests[0])[-1] == "hi"


async def test_s22_a_permission_gates_hooks_serve_lifecycle_events_too(tmp_path: Path) -> None:
    hooks = _runner("UserPromptSubmit", _script(tmp_path, "g", "exit 2"))
    agent = robota.Agent(
        provider=ScriptedProvider(["x"]),
        model="m",
        tool_gate=PermissionGate(PermissionPolicy(), hooks=hooks),
    )
    with pytest.raises(HookBlockedError):
        await agent.run("hi")


# ------------------------------------------------------------------------------------ Stop


async def test_s22_stop_block_continues_the_run_with_the_hooks_reason(tmp_path: Path) -> None:
    # The hook blocks once (no marker file yet), then lets the run end.
    marker = tmp_path / "done"
    body = (
        f'if [ -e "{marker}" ]; then exit 0; fi\n'
        f'touch "{marker}"\n'
        'printf \'{"decision": "block", "reason": "run the tests first"}\''
    )
    provider = ScriptedProvider(["done already", "tests pass, done"])
    agent = robota.Agent(
        provider=provider, model="m", hooks=_runner("Stop", _script(tmp_path, "s", body))
    )
    result = await agent.run("fix it")
    assert result.text == "tests pass, done"
    assert len(provider.requests) == 2
    assert (
        _texts(provider.requests[1])[-1] == "A Stop hook asked you to continue: run the tests first"
    )
    payloads = _payloads(tmp_path, "s")
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    assert payloads[0]["last_assistant_message"] == "done already"


async def test_s22_stop_continuations_are_bounded(tmp_path: Path) -> None:
    body = 'printf \'{"decision": "block", "reason": "again"}\''
    provider = ScriptedProvider([f"reply {i}" for i in range(10)])
    agent = robota.Agent(
        provider=provider,
        model="m",
        hooks=_runner("Stop", _script(tmp_path, "b", body), max_stop_continuations=2),
    )
    result = await agent.run("go")
    assert len(provider.requests) == 3  # the first reply and two continuations
    assert result.text == "reply 2"
    assert len(_payloads(tmp_path, "b")) == 2  # not asked once the bound is reached


async def test_s22_stop_does_not_fire_on_an_interrupted_run(tmp_path: Path) -> None:
    controller = robota.AbortController()
    controller.abort("stop")
    provider = ScriptedProvider(["x"])
    agent = robota.Agent(
        provider=provider, model="m", hooks=_runner("Stop", _script(tmp_path, "i", "exit 0"))
    )
    with pytest.raises(robota.AbortError):
        await agent.run("go", signal=controller.signal)
    assert _payloads(tmp_path, "i") == []


async def test_s22_stop_continuation_is_journaled(tmp_path: Path) -> None:
    marker = tmp_path / "done"
    body = (
        f'if [ -e "{marker}" ]; then exit 0; fi\n'
        f'touch "{marker}"\n'
        'printf \'{"decision": "block", "reason": "check once more"}\''
    )
    journal = InMemoryJournal()
    agent = robota.Agent(
        provider=ScriptedProvider(["first", "second"]),
        model="m",
        journal=journal,
        hooks=_runner("Stop", _script(tmp_path, "j", body)),
    )
    result = await agent.run("go", execution_id="e1")
    assert result.text == "second"
    again = robota.Agent(provider=ScriptedProvider([]), model="m", journal=journal)
    resumed = await again.resume("e1")
    assert resumed.text == "second"
    assert "A Stop hook asked you to continue: check once more" in [
        m.content for m in resumed.messages if isinstance(m, robota.UserMessage)
    ]


def test_s22_posture_table_matches_the_fire_sites() -> None:
    # The run awaits and inspects these two (a deny blocks the prompt, a block continues);
    # neither fails closed on an error (only tool-use gating does).
    for event in ("UserPromptSubmit", "Stop"):
        posture = HOOK_EVENTS[event]
        assert (posture.awaited, posture.inspected, posture.enforces) == (True, True, False)


async def test_s22_hook_context_is_bounded(tmp_path: Path) -> None:
    from robota.core.execution._lifecycle import MAX_HOOK_CONTEXT_CHARS

    provider = ScriptedProvider(["ok"])
    body = f"head -c {MAX_HOOK_CONTEXT_CHARS + 500} /dev/zero | tr '\\000' x"
    agent = robota.Agent(
        provider=provider,
        model="m",
        hooks=_runner("UserPromptSubmit", _script(tmp_path, "z", body)),
    )
    await agent.run("hi")
    added = _texts(provider.requests[0])[-1]
    assert added.split("\n")[1] == "x" * MAX_HOOK_CONTEXT_CHARS
    assert added.endswith("[500 more characters of hook context cut]")
