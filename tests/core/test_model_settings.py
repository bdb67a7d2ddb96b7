"""ModelSettings (S28, S30): validation, field-by-field override, the request, the report."""

from __future__ import annotations

import dataclasses

import pytest

import robota
from robota.core.providers import (
    ChatRequest,
    ModelCapabilities,
    ProviderCapabilities,
    model_capability,
    normalize_request,
    request_fingerprint,
)
from robota.core.providers._capabilities import unsupported_settings
from robota.testing import InMemoryJournal, ScriptedProvider, ScriptedTurn


def test_s28_model_settings_is_public_frozen_and_slotted() -> None:
    settings = robota.ModelSettings(temperature=0.5)
    assert dataclasses.is_dataclass(settings)
    assert not hasattr(settings, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.temperature = 1.0  # type: ignore[misc]
    names = [field.name for field in dataclasses.fields(robota.ModelSettings)]
    assert names == [
        "temperature",
        "top_p",
        "max_output_tokens",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "parallel_tool_calls",
        "timeout",
        "extra",
    ]
    assert robota.ModelSettings().set_fields() == ()


@pytest.mark.parametrize(
    ("kwargs", "fix"),
    [
        ({"temperature": 2.5}, "from 0 to 2"),
        ({"temperature": -0.1}, "from 0 to 2"),
        ({"temperature": float("nan")}, "from 0 to 2"),
        ({"temperature": "hot"}, "must be a number"),
        ({"top_p": 1.5}, "from 0 to 1"),
        ({"max_output_tokens": 0}, "positive integer"),
        ({"max_output_tokens": 1.5}, "positive integer"),
        ({"max_output_tokens": True}, "positive integer"),
        ({"stop": ""}, "non-empty strings"),
        ({"stop": []}, "non-empty strings"),
        ({"stop": 3}, "string or a list"),
        ({"seed": "1"}, "must be an integer"),
        ({"presence_penalty": 3}, "-2 to 2"),
        ({"frequency_penalty": -2.5}, "-2 to 2"),
        ({"parallel_tool_calls": 1}, "True, False or None"),
        ({"timeout": 0}, "positive number"),
        ({"timeout": -1}, "positive number"),
        ({"extra": {"service_tier": "flex"}}, "key it by provider name"),
        ({"extra": ["x"]}, "key it by provider name"),
    ],
)
def test_s28_bad_values_raise_a_configuration_error_naming_the_fix(
    kwargs: dict[str, object], fix: str
) -> None:
    with pytest.raises(robota.ConfigurationError, match="ModelSettings") as caught:
        robota.ModelSettings(**kwargs)  # type: ignore[arg-type]
    assert fix in str(caught.value)


def test_s28_values_are_normalised_and_deeply_immutable() -> None:
    source = {"openai": {"service_tier": "flex"}}
    settings = robota.ModelSettings(stop="END", temperature=1, extra=source)
    assert settings.stop == ("END",)
    assert settings.temperature == 1.0
    source["openai"]["service_tier"] = "changed"
    assert settings.extra_for("openai") == {"service_tier": "flex"}
    assert settings.extra_for("anthropic") == {}
    with pytest.raises(TypeError):
        settings.extra_for("openai")["x"] = 1  # type: ignore[index]


def test_s28_merged_lays_the_run_over_the_agent_field_by_field() -> None:
    agent = robota.ModelSettings(
        temperature=0.2,
        max_output_tokens=100,
        extra={"openai": {"a": 1}, "anthropic": {"b": 2}},
    )
    run = robota.ModelSettings(max_output_tokens=10, seed=7, extra={"openai": {"c": 3}})
    merged = agent.merged(run)
    assert merged.temperature == 0.2
    assert merged.max_output_tokens == 10
    assert merged.seed == 7
    assert merged.extra_for("openai") == {"c": 3}
    assert merged.extra_for("anthropic") == {"b": 2}
    assert agent.merged(None) is agent


async def test_s28_agent_and_run_settings_reach_the_request() -> None:
    provider = ScriptedProvider(["one", "two", "three"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        settings=robota.ModelSettings(temperature=0.3, max_output_tokens=50, stop=("X",)),
    )
    await agent.run("a")
    await agent.run("b", settings=robota.ModelSettings(max_output_tokens=5, top_p=0.9))
    await agent.run("c")
    first, second, third = provider.requests
    assert (first.temperature, first.max_output_tokens, first.settings.stop) == (0.3, 50, ("X",))
    assert second.temperature == 0.3
    assert second.max_output_tokens == 5
    assert second.settings.max_output_tokens == 5
    assert second.settings.top_p == 0.9
    assert second.settings.stop == ("X",)
    assert third.max_output_tokens == 50  # a run's settings do not stick
    assert third.settings.top_p is None


def test_s28_run_sync_and_run_stream_take_settings() -> None:
    provider = ScriptedProvider(["one", "two"])
    agent = robota.Agent(provider=provider, model="m")
    agent.run_sync("a", settings=robota.ModelSettings(seed=3))

    async def streamed() -> None:
        stream = agent.run_stream("b", settings=robota.ModelSettings(seed=4))
        async for _ in stream:
            pass
        await stream.result()

    agent._sync.run(streamed())
    assert [r.settings.seed for r in provider.requests] == [3, 4]
    agent.close()


def test_s28_settings_of_the_wrong_type_are_refused() -> None:
    with pytest.raises(robota.ConfigurationError, match="ModelSettings"):
        robota.Agent(provider=ScriptedProvider([]), model="m", settings={"temperature": 1})  # type: ignore[arg-type]
    agent = robota.Agent(provider=ScriptedProvider([]), model="m")
    with pytest.raises(robota.ConfigurationError, match="ModelSettings"):
        agent.run_sync("x", settings={"temperature": 1})  # type: ignore[typeddict-item]


def test_chat_request_keeps_its_two_fields_and_settings_equal() -> None:
    old_style = ChatRequest(model="m", messages=(), max_output_tokens=9, temperature=0.1)
    assert old_style.settings.max_output_tokens == 9
    assert old_style.settings.temperature == 0.1
    new_style = ChatRequest(model="m", messages=(), settings=robota.ModelSettings(temperature=1))
    assert new_style.temperature == 1.0
    with pytest.raises(robota.ConfigurationError, match="contradicts"):
        ChatRequest(
            model="m",
            messages=(),
            max_output_tokens=9,
            settings=robota.ModelSettings(max_output_tokens=8),
        )


def test_fingerprint_unchanged_without_settings_and_changed_by_them() -> None:
    plain = ChatRequest(model="m", messages=())
    assert "settings" not in normalize_request(plain)
    seeded = ChatRequest(model="m", messages=(), settings=robota.ModelSettings(seed=1))
    timed = ChatRequest(model="m", messages=(), settings=robota.ModelSettings(timeout=5))
    assert request_fingerprint(seeded) != request_fingerprint(plain)
    assert request_fingerprint(timed) == request_fingerprint(plain)  # a timeout asks nothing new


def _table(settings: frozenset[str] | None) -> ProviderCapabilities:
    return ProviderCapabilities(default_model=ModelCapabilities(settings=settings))


def test_s30_capability_query_names_the_supported_settings() -> None:
    provider = ScriptedProvider([], capabilities=_table(frozenset({"temperature"})))
    assert model_capability(provider, "m", "settings") == frozenset({"temperature"})
    silent = ScriptedProvider([])
    request = ChatRequest(model="m", messages=(), settings=robota.ModelSettings(seed=1))
    assert unsupported_settings(silent, request) == ()  # silence is not denial


async def test_s30_an_unsupported_setting_is_reported_once_per_run_naming_field_and_model() -> None:
    provider = ScriptedProvider(
        [ScriptedTurn(tool_calls=[("missing", {})]), "done"],
        capabilities=_table(frozenset({"temperature", "max_output_tokens"})),
    )
    events = robota.RecordingEventService()
    agent = robota.Agent(provider=provider, model="m", event_service=events)
    await agent.run(
        "hi",
        settings=robota.ModelSettings(temperature=0.1, seed=5, parallel_tool_calls=False),
    )
    reported = [e.data for e in events.events if e.name == robota.EventNames.SETTING_UNSUPPORTED]
    # parallel_tool_calls is not reported: no tools were offered, so it is not sent.
    assert reported == [{"setting": "seed", "model": "m", "provider": "scripted"}]
    assert len(provider.requests) == 2


async def test_s40_a_resumed_execution_keeps_the_runs_settings() -> None:
    journal = InMemoryJournal()

    @robota.tool
    async def approve(ctx: robota.ToolContext) -> str:
        """Wait for a person."""
        answer = await ctx.request_outside_response("approval", {})
        return str(answer)

    run_settings = robota.ModelSettings(temperature=0.1, stop=("X",), extra={"p": {"k": 1}})
    first = ScriptedProvider([[("approve", {})]])
    agent = robota.Agent(
        provider=first,
        model="m",
        tools=[approve],
        journal=journal,
        settings=robota.ModelSettings(seed=3),
    )
    suspended = await agent.run("go", execution_id="e", settings=run_settings)
    assert suspended.status == "suspended"
    await agent.respond("e", suspended.pending_requests[0].id, "yes")
    second = ScriptedProvider(["done"])
    other = robota.Agent(provider=second, model="m", tools=[approve], journal=journal)
    result = await other.resume("e")
    assert result.status == "complete"
    (request,) = second.requests
    # The continuation sends what the execution began with, not the resuming agent's own.
    assert request.settings == robota.ModelSettings(seed=3).merged(run_settings)
    assert request.temperature == 0.1


async def test_a_damaged_settings_record_is_a_storage_error() -> None:
    journal = InMemoryJournal()
    agent = robota.Agent(provider=ScriptedProvider(["ok"]), model="m", journal=journal)
    await agent.run("go", execution_id="e", settings=robota.ModelSettings(seed=1))
    started = (await journal.read("e"))[0]
    assert isinstance(started, robota.ExecutionStarted)
    assert started.state.model_settings == {"seed": 1}
    text = robota.encode_journal_record(started)
    assert robota.decode_journal_record(text) == started
    damaged = text.replace('"model_settings":{"seed":1}', '"model_settings":{"temperature":9}')
    assert damaged != text
    with pytest.raises(robota.StorageError):
        robota.decode_journal_record(damaged)
