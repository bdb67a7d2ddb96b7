"""robota.testing.CassetteProvider: record any provider, replay offline, refuse stale requests."""

from __future__ import annotations

import json
import pathlib

import pytest

import robota
from robota.testing import CassetteMismatchError, CassetteProvider, ScriptedProvider, ScriptedTurn


@robota.tool
def double(n: int) -> int:
    """Double a number."""
    return n * 2


async def _conversation(provider: robota.Provider) -> robota.RunResult:
    agent = robota.Agent(provider=provider, model="m", tools=[double], system_prompt="sys")
    return await agent.run("double 21")


async def test_record_then_replay_gives_the_same_conversation(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROBOTA_CASSETTE_MODE", raising=False)
    path = tmp_path / "double.json"
    usage = robota.Usage.from_counts(prompt=10, completion=3, cache_read=2)
    real = ScriptedProvider(
        [[("double", {"n": 21})], ScriptedTurn(text="42", usage=usage, model="m-2")]
    )
    recorder = CassetteProvider(path, provider=real, mode="record")
    recorded = await _conversation(recorder)
    assert recorder.mode == "record"
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert len(data["interactions"]) == 2

    replayer = CassetteProvider(path)
    assert replayer.mode == "replay"
    replayed = await _conversation(replayer)
    replayer.assert_complete()
    assert replayed.output == recorded.output == "42"
    assert replayed.usage == recorded.usage
    assert replayed.model == "m-2"
    assert replayer.name == "scripted"


async def test_a_stale_request_is_refused_with_how_to_re_record(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROBOTA_CASSETTE_MODE", raising=False)
    path = tmp_path / "c.json"
    await _conversation(
        CassetteProvider(
            path, provider=ScriptedProvider([[("double", {"n": 21})], "42"]), mode="record"
        )
    )
    agent = robota.Agent(
        provider=CassetteProvider(path), model="m", tools=[double], system_prompt="CHANGED"
    )
    with pytest.raises(CassetteMismatchError, match="ROBOTA_CASSETTE_MODE=record"):
        await agent.run("double 21")


async def test_running_past_the_recording_is_refused(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROBOTA_CASSETTE_MODE", raising=False)
    path = tmp_path / "c.json"
    agent = robota.Agent(
        provider=CassetteProvider(path, provider=ScriptedProvider(["one"]), mode="record"),
        model="m",
    )
    await agent.run("a")
    replay = robota.Agent(provider=CassetteProvider(path), model="m")
    await replay.run("a")
    with pytest.raises(CassetteMismatchError, match="has none"):
        await replay.run("b")


def test_missing_cassette_and_recording_without_provider_are_explained(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROBOTA_CASSETTE_MODE", raising=False)
    with pytest.raises(CassetteMismatchError, match="does not exist"):
        CassetteProvider(tmp_path / "missing.json", mode="replay")
    with pytest.raises(ValueError, match="needs the real provider"):
        CassetteProvider(tmp_path / "missing.json")


def test_a_cassette_of_another_version_is_refused(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROBOTA_CASSETTE_MODE", raising=False)
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"version": 99, "interactions": []}))
    with pytest.raises(CassetteMismatchError, match="version"):
        CassetteProvider(path)


async def test_environment_variable_forces_re_recording(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": 1, "interactions": []}))
    monkeypatch.setenv("ROBOTA_CASSETTE_MODE", "record")
    cassette = CassetteProvider(path, provider=ScriptedProvider(["fresh"]), mode="replay")
    assert cassette.mode == "record"
    await robota.Agent(provider=cassette, model="m").run("x")
    assert len(json.loads(path.read_text())["interactions"]) == 1


def test_fingerprint_ignores_ids_and_timestamps() -> None:
    from robota.core.providers import ChatRequest, request_fingerprint

    a = ChatRequest(model="m", messages=(robota.UserMessage("hi"),))
    b = ChatRequest(model="m", messages=(robota.UserMessage("hi"),))
    c = ChatRequest(model="m", messages=(robota.UserMessage("hi!"),))
    assert request_fingerprint(a) == request_fingerprint(b) != request_fingerprint(c)
