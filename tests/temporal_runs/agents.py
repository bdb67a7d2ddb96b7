"""Agents the Temporal tests register with their workers, by name (``AGENTS``).

Every factory builds the same agent every time (workflow code replays it). The provider answers
from the request alone — a tool call until a tool result is in the conversation, then a reply
naming the results — so any worker, in any process, answers a run the same way.

A tool's external effect is a line appended to the file named by ``ROBOTA_TEST_EFFECTS``; with
``ROBOTA_TEST_HOLD`` set to a path, the body writes its pid there and waits before its effect
(so a test can kill the worker running it).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import robota
import robota.testing
from robota.core.permissions import PermissionGate, PermissionPolicy
from robota.core.providers import ChatRequest, ChatResponse, StreamEvent, collect_stream

robota.register_model_metadata("rule-model", context_window=100_000, provider="rules")
robota.register_model_metadata("roomy-model", context_window=10_000_000, provider="rules")


class RuleProvider(robota.Provider):
    """Calls ``tool`` with ``{"text": <user input>}`` until a result is in; then replies."""

    def __init__(
        self, tool: str, *, calls: int = 1, reply_delay: float = 0.0, words: int = 0
    ) -> None:
        self._tool = tool
        self._calls = calls
        self._reply_delay = reply_delay
        self._words = words

    @property
    def name(self) -> str:
        return "rules"

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        results = [m for m in request.messages if m.kind == "tool"]
        user = next(m.content for m in request.messages if m.kind == "user")
        if len(results) < self._calls and request.tools:
            index = len(results)
            arguments = json.dumps({"text": f"{user}-{index}"})
            yield robota.ToolCallReady(robota.ToolCall(f"c{index}", self._tool, arguments))
        else:
            words = ["done:", *(m.content for m in results)]
            words += [f"w{i}" for i in range(self._words)]
            for word in words:
                if self._reply_delay:
                    await asyncio.sleep(self._reply_delay)
                yield robota.TextDelta(word + " ")
        yield robota.ResponseDone(
            model="rule-model", usage=robota.Usage.from_counts(prompt=10, completion=2)
        )


def _effect(line: str) -> None:
    with Path(os.environ["ROBOTA_TEST_EFFECTS"]).open("a") as out:
        out.write(f"{line} {os.getpid()}\n")


def _append(path: str, line: str) -> None:
    with Path(path).open("a") as out:
        out.write(line + "\n")


def _mark(path: str) -> None:
    Path(path).write_text(str(os.getpid()))


async def _hold() -> None:
    # With ROBOTA_TEST_HOLD, say which process runs the body, then wait before the effect.
    hold = os.environ.get("ROBOTA_TEST_HOLD")
    if hold:
        _mark(hold)
        await asyncio.sleep(float(os.environ.get("ROBOTA_TEST_HOLD_SECONDS", "30")))


@robota.tool
async def record(text: str) -> str:
    """Record the text as an external effect.

    Args:
        text: What to record.
    """
    await _hold()
    _effect(text)
    return f"recorded {text}"


@robota.tool(idempotent=True)
async def lookup(text: str, ctx: robota.ToolContext) -> str:
    """Look the text up (no effect; safe to run twice).

    Args:
        text: What to look up.
    """
    keys = os.environ.get("ROBOTA_TEST_KEYS")
    if keys:  # issue 32: each attempt's idempotency key, before the hold
        _append(keys, f"{ctx.idempotency_key} {os.getpid()}")
    await _hold()
    _effect(f"lookup {text}")
    return f"found {text}"


def recorder() -> robota.Agent:
    return robota.Agent(
        provider=RuleProvider("record", calls=2),
        model="rule-model",
        tools=[record],
        name="recorder",
    )


def looker() -> robota.Agent:
    return robota.Agent(
        provider=RuleProvider("lookup"), model="rule-model", tools=[lookup], name="looker"
    )


def asker() -> robota.Agent:
    gate = PermissionGate(PermissionPolicy(ask=["record"]))
    return robota.Agent(
        provider=RuleProvider("record"),
        model="rule-model",
        tools=[record],
        tool_gate=gate,
        name="asker",
    )


def slow_talker() -> robota.Agent:
    return robota.Agent(
        provider=RuleProvider("record", calls=0, reply_delay=0.2, words=100),
        model="rule-model",
        name="slow",
    )


def twice_asker() -> robota.Agent:
    gate = PermissionGate(PermissionPolicy(ask=["record"]))
    return robota.Agent(
        provider=RuleProvider("record", calls=2),
        model="rule-model",
        tools=[record],
        tool_gate=gate,
        name="twice_asker",
    )


AGENTS = {
    "recorder": recorder,
    "looker": looker,
    "asker": asker,
    "slow": slow_talker,
    "twice_asker": twice_asker,
}


class FailingProvider(robota.Provider):
    """Fails its first ``failures`` calls with ``error`` (counted in ``ROBOTA_TEST_ATTEMPTS``)."""

    def __init__(self, error: Exception, failures: int) -> None:
        self._error = error
        self._failures = failures

    @property
    def name(self) -> str:
        return "failing"

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        attempt = _attempt()
        if attempt <= self._failures:
            raise self._error
        yield robota.TextDelta(f"answered on attempt {attempt}")
        yield robota.ResponseDone(model="rule-model")


def _attempt() -> int:
    path = Path(os.environ["ROBOTA_TEST_ATTEMPTS"])
    with path.open("a") as out:
        out.write(f"{time.time()}\n")
    return len(path.read_text().splitlines())


def refused() -> robota.Agent:
    error = robota.AuthenticationError("the key was refused", status=401, provider="failing")
    return robota.Agent(provider=FailingProvider(error, 99), model="rule-model", name="refused")


def flaky() -> robota.Agent:
    error = robota.ProviderError("the vendor is overloaded", status=503, provider="failing")
    return robota.Agent(provider=FailingProvider(error, 2), model="rule-model", name="flaky")


def throttled() -> robota.Agent:
    error = robota.RateLimitError("slow down", retry_after=1.5, provider="failing")
    return robota.Agent(provider=FailingProvider(error, 1), model="rule-model", name="throttled")


def flaky_policy() -> robota.Agent:
    """Fails recoverably 3 times, under a policy of 2 attempts (issue 28: Temporal applies it)."""
    error = robota.ProviderError("the vendor is overloaded", status=503, provider="failing")
    return robota.Agent(
        provider=FailingProvider(error, 3),
        model="rule-model",
        name="flaky-policy",
        retry=robota.RetryPolicy(attempts=2, initial_delay=0.05, max_delay=0.1, jitter=0.0),
    )


def throttled_policy() -> robota.Agent:
    """Asks for 30 s once; the policy honours Retry-After only up to 0.2 s (issue 28)."""
    error = robota.RateLimitError("slow down", retry_after=30.0, provider="failing")
    return robota.Agent(
        provider=FailingProvider(error, 1),
        model="rule-model",
        name="throttled-policy",
        retry=robota.RetryPolicy(attempts=3, initial_delay=0.05, max_retry_after=0.2),
    )


AGENTS.update(
    {
        "refused": refused,
        "flaky": flaky,
        "throttled": throttled,
        "flaky-policy": flaky_policy,
        "throttled-policy": throttled_policy,
    }
)


class MeasuringProvider(robota.Provider):
    """Calls ``bulk`` once, then replies with the size and digest of the result it was sent."""

    @property
    def name(self) -> str:
        return "rules"  # the models are registered for the "rules" provider

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return await collect_stream(self.chat_stream(request))

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        results = [m for m in request.messages if m.kind == "tool"]
        if not results:
            size = next(m.content for m in request.messages if m.kind == "user")
            arguments = json.dumps({"size": int(size)})
            yield robota.ToolCallReady(robota.ToolCall("c0", "bulk", arguments))
        else:
            content = results[0].content.encode()
            digest = hashlib.sha256(content).hexdigest()[:16]
            yield robota.TextDelta(f"got {len(content)} bytes {digest}")
        yield robota.ResponseDone(model="rule-model")


@robota.tool
async def bulk(size: int) -> str:
    """Return ``size`` bytes of text.

    Args:
        size: How many bytes.
    """
    return ("0123456789abcdef" * (size // 16 + 1))[:size]


def measurer() -> robota.Agent:
    return robota.Agent(
        provider=MeasuringProvider(), model="roomy-model", tools=[bulk], name="measurer"
    )


AGENTS["measurer"] = measurer


@robota.tool
async def wire(amount: int, ctx: robota.ToolContext) -> str:
    """Send money once someone outside approved it (S40: waits before its effect).

    Args:
        amount: How much.
    """
    answer = await ctx.request_outside_response("approval", {"amount": amount})
    if answer != "approved":
        return "not sent"
    _effect(f"wired {amount}")
    return f"sent {amount}"


def waiter() -> robota.Agent:
    return robota.Agent(provider=WireModel(), model="rule-model", tools=[wire], name="waiter")


class WireModel(RuleProvider):
    """Calls ``wire`` with 50, then replies with the result."""

    def __init__(self) -> None:
        super().__init__("wire")

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        results = [m for m in request.messages if m.kind == "tool"]
        if not results:
            yield robota.ToolCallReady(robota.ToolCall("c0", "wire", json.dumps({"amount": 50})))
        else:
            yield robota.TextDelta(f"done: {results[0].content}")
        yield robota.ResponseDone(model="rule-model")


AGENTS["waiter"] = waiter


class _EmptySource(robota.ToolSource):
    """A tool source with no tools (a stand-in for an MCP server)."""

    @property
    def name(self) -> str:
        return "empty"

    async def start(self) -> None:
        return None

    def tools(self) -> list[robota.Tool]:
        return []


def sourced() -> robota.Agent:
    return robota.Agent(provider=RuleProvider("record"), model="rule-model", tools=[_EmptySource()])


def hooked() -> robota.Agent:
    gate = PermissionGate(PermissionPolicy(), hooks=robota.HookRunner({}, {}))
    return robota.Agent(
        provider=RuleProvider("record"), model="rule-model", tools=[record], tool_gate=gate
    )


def lifecycle_hooked() -> robota.Agent:
    # S22: the run's own hooks (UserPromptSubmit, Stop) would run in workflow code too.
    return robota.Agent(
        provider=RuleProvider("record"), model="rule-model", hooks=robota.HookRunner({}, {})
    )


def hooked_boss() -> robota.Agent:
    # Issue 29: a sub-agent is checked like the registered agent, and named.
    gate = PermissionGate(PermissionPolicy(), hooks=robota.HookRunner({}, {}))
    kid = robota.Agent(
        provider=RuleProvider("record"),
        model="rule-model",
        tools=[record],
        tool_gate=gate,
        name="hooked_kid",
    )
    return robota.Agent(provider=RuleProvider("hooked_kid"), model="rule-model", tools=[kid])


AGENTS.update(
    {
        "sourced": sourced,
        "hooked": hooked,
        "lifecycle_hooked": lifecycle_hooked,
        "hooked_boss": hooked_boss,
    }
)


def roomy() -> robota.Agent:
    return robota.Agent(provider=RuleProvider("record", calls=0), model="roomy-model", name="roomy")


AGENTS["roomy"] = roomy


@robota.tool
async def patient(text: str, ctx: robota.ToolContext) -> str:
    """Wait up to 30 s for the run to be aborted, then stop without an effect.

    Args:
        text: A label.
    """
    _mark_started(text)
    try:
        await asyncio.wait_for(ctx.signal.wait(), 30)
    except TimeoutError:
        _effect(f"patient {text}")
        return "waited it out"
    return "stopped when the run was aborted"


def _mark_started(text: str) -> None:
    marker = os.environ.get("ROBOTA_TEST_STARTED")
    if marker:
        Path(marker).write_text(text)


def patient_agent() -> robota.Agent:
    # S35: a test gives the text of an effect settled as failed (the worker processes' agents).
    settled = os.environ.get("ROBOTA_TEST_SETTLED_FAILED")
    texts = robota.ModelTexts(settled_failed_result=settled) if settled else None
    return robota.Agent(
        provider=RuleProvider("patient"), model="rule-model", tools=[patient], texts=texts
    )


def broken() -> robota.Agent:
    return robota.Agent(
        provider=RuleProvider(os.environ["ROBOTA_TEST_UNSET_VARIABLE"]), model="rule-model"
    )


@robota.tool
async def emoji(count: int) -> str:
    """Return ``count`` emoji.

    Args:
        count: How many.
    """
    return "\U0001f600" * count


class EmojiModel(MeasuringProvider):
    """Calls ``emoji`` with the user's number, then reports what it was sent."""

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        results = [m for m in request.messages if m.kind == "tool"]
        if not results:
            count = int(next(m.content for m in request.messages if m.kind == "user"))
            call = robota.ToolCall("c0", "emoji", json.dumps({"count": count}))
            yield robota.ToolCallReady(call)
        else:
            yield robota.TextDelta(f"got {len(results[0].content)} characters")
        yield robota.ResponseDone(model="rule-model")


def emojier() -> robota.Agent:
    return robota.Agent(provider=EmojiModel(), model="roomy-model", tools=[emoji])


def journaled() -> robota.Agent:
    return robota.Agent(
        provider=RuleProvider("record"),
        model="rule-model",
        tools=[record],
        journal=robota.testing.InMemoryJournal(),
    )


SHARED_GATE = PermissionGate(PermissionPolicy(ask=["record"]))


def sharing() -> robota.Agent:
    return robota.Agent(
        provider=RuleProvider("record"), model="rule-model", tools=[record], tool_gate=SHARED_GATE
    )


AGENTS.update(
    {
        "patient": patient_agent,
        "emojier": emojier,
        "journaled": journaled,
        "sharing": sharing,
    }
)


BROKEN = {"broken": broken}  # in-process workers only: the worker command builds each at start


def small_measurer() -> robota.Agent:
    return robota.Agent(provider=MeasuringProvider(), model="rule-model", tools=[bulk])


AGENTS["small-measurer"] = small_measurer  # a 100,000-token window


class SettingsEcho(RuleProvider):
    """Replies with the model settings its request carried, as JSON (S28 on Temporal)."""

    def __init__(self) -> None:
        super().__init__("none", calls=0)

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        settings = request.settings
        seen = {name: getattr(settings, name) for name in settings.set_fields()}
        seen["extra"] = {k: dict(v) for k, v in (settings.extra or {}).items()}
        yield robota.TextDelta(json.dumps(seen, sort_keys=True))
        yield robota.ResponseDone(model="rule-model")


def settings_echo() -> robota.Agent:
    return robota.Agent(
        provider=SettingsEcho(),
        model="rule-model",
        settings=robota.ModelSettings(temperature=0.2, max_output_tokens=77, seed=1),
    )


AGENTS["settings_echo"] = settings_echo


# Issue 29: sub-agents and guardrails on Temporal (temporal_runs.kid_agents imports from here).
from temporal_runs.kid_agents import KIDS  # noqa: E402

AGENTS.update(KIDS)
