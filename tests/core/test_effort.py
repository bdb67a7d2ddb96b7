"""Reasoning effort (S24): the neutral vocabulary, resolution and the run's outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import robota
from robota.core.execution._cache import InMemoryResponseCache
from robota.core.providers import (
    ChatRequest,
    EffortResolution,
    ResponseDone,
    StreamEvent,
    TextDelta,
    resolve_effort,
)
from robota.testing import ScriptedProvider


def test_s24_the_vocabulary_is_ordered_and_auto_is_not_a_level() -> None:
    assert robota.EFFORT_LEVELS == ("none", "minimal", "low", "medium", "high", "xhigh", "max")
    assert "auto" not in robota.EFFORT_LEVELS
    assert robota.check_effort("auto") == "auto"
    with pytest.raises(robota.ConfigurationError, match="effort must be one of"):
        robota.check_effort("extreme")
    with pytest.raises(robota.ConfigurationError):
        robota.check_effort(3)


@pytest.mark.parametrize(
    ("requested", "supported", "disposition", "level"),
    [
        ("auto", ("low", "high"), "model_default", None),
        ("low", None, "not_applied", None),
        ("low", (), "not_applied", None),
        ("low", ("low", "medium", "high"), "applied", "low"),
        ("max", ("low", "medium", "high"), "clamped", "high"),
        ("medium", ("low", "high"), "clamped", "low"),
        ("minimal", ("low", "high"), "model_default", None),
    ],
)
def test_s24_resolution_dispositions(
    requested: robota.EffortSelection,
    supported: tuple[robota.EffortLevel, ...] | None,
    disposition: str,
    level: str | None,
) -> None:
    resolution = resolve_effort(requested, supported, model="m", source="doc 2026-11")
    assert resolution.disposition == disposition
    assert resolution.level == level
    assert resolution.sends_control == (level is not None)
    assert resolution.model == "m"
    assert resolution.source == "doc 2026-11"


def test_s24_the_native_value_is_the_adapters_word() -> None:
    resolution = resolve_effort("max", ("low", "xhigh"), native={"xhigh": "x-high"})
    assert (resolution.disposition, resolution.level, resolution.native_value) == (
        "clamped",
        "xhigh",
        "x-high",
    )


def test_s24_the_audit_record_is_immutable() -> None:
    resolution = resolve_effort("low", ("low",))
    with pytest.raises(AttributeError):
        resolution.level = "high"  # type: ignore[misc]


class _Resolving(ScriptedProvider):
    """Resolves effort against a fixed table and reports it on the done event."""

    def chat_stream(  # type: ignore[override]
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        return self._answer(request)

    async def _answer(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        yield TextDelta("ok")
        yield ResponseDone(effort=resolve_effort(request.effort, ("low", "high")))


async def test_s24_run_effort_reaches_the_request_and_the_outcome_records_the_control() -> None:
    provider = _Resolving([])
    agent = robota.Agent(provider=provider, model="m", effort="high")
    result = await agent.run("go", effort="low")
    assert provider.requests[-1].effort == "low"
    assert result.effort is not None
    assert result.effort.requested == "low"
    assert result.effort.dispatched
    assert result.effort.native_control_sent
    assert result.effort.resolution == EffortResolution("low", "applied", "low", "low")
    default = await agent.run("again")
    assert provider.requests[-1].effort == "high"  # the agent's default
    assert default.effort is not None
    assert default.effort.requested == "high"


async def test_s24_auto_sends_no_control() -> None:
    provider = _Resolving([])
    result = await robota.Agent(provider=provider, model="m").run("go")
    assert provider.requests[-1].effort == "auto"
    assert result.effort is not None
    assert result.effort.resolution is not None
    assert result.effort.resolution.disposition == "model_default"
    assert not result.effort.native_control_sent
    assert result.effort.dispatched


async def test_s24_a_cached_response_never_claims_an_applied_control() -> None:
    provider = _Resolving([])
    cache = InMemoryResponseCache()
    first = await robota.Agent(provider=provider, model="m", response_cache=cache).run(
        "go", effort="low"
    )
    assert first.effort is not None
    assert first.effort.native_control_sent
    other = robota.Agent(provider=provider, model="m", response_cache=cache)
    second = await other.run("go", effort="low")
    assert len(provider.requests) == 1  # served from the cache
    assert second.effort is not None
    assert not second.effort.dispatched
    assert not second.effort.native_control_sent
    # The recorded resolution stays for audit; it is not a claim about this round.
    assert second.effort.resolution is not None
    assert second.effort.resolution.disposition == "applied"


def test_s24_effort_is_validated_at_construction_and_per_run() -> None:
    with pytest.raises(robota.ConfigurationError, match="effort"):
        robota.Agent(provider=ScriptedProvider([]), model="m", effort="loud")  # type: ignore[arg-type]
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m")
    with pytest.raises(robota.ConfigurationError, match="effort"):
        agent.run_sync("go", effort="loud")  # type: ignore[typeddict-item]


def test_s24_effort_is_part_of_the_request_fingerprint_only_when_selected() -> None:
    base = ChatRequest(model="m", messages=())
    assert robota.request_fingerprint(base) == robota.request_fingerprint(
        ChatRequest(model="m", messages=(), effort="auto")
    )
    assert robota.request_fingerprint(base) != robota.request_fingerprint(
        ChatRequest(model="m", messages=(), effort="low")
    )
