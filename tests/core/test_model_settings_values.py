"""ModelSettings as a value (issue 26 review): copies, pickles, hashes, and JSON-only settings.

A frozen settings object is handed around freely — to a worker process, a ``deepcopy`` of a
config, a set of configurations tried — and journaled with every durable run (S28, S40). A value
the journal cannot store is refused where it is written, naming the field, not later by the
journal with a message that never mentions the setting.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import math
import pickle
from pathlib import Path

import pytest

import robota
from robota.host import SQLiteJournal
from robota.testing import ScriptedProvider

WITH_EXTRA = robota.ModelSettings(
    temperature=0.3, stop=("END",), extra={"openai": {"service_tier": "flex", "meta": {"k": [1]}}}
)


def test_s28_settings_with_extra_pickle_and_deepcopy_to_an_equal_value() -> None:
    for clone in (pickle.loads(pickle.dumps(WITH_EXTRA)), copy.deepcopy(WITH_EXTRA)):
        assert clone == WITH_EXTRA
        assert clone.extra_for("openai") == {"service_tier": "flex", "meta": {"k": [1]}}
        with pytest.raises(TypeError):
            clone.extra_for("openai")["x"] = 1  # type: ignore[index]


def test_s28_dataclasses_asdict_of_settings_with_extra_works() -> None:
    data = dataclasses.asdict(WITH_EXTRA)
    assert data["temperature"] == 0.3
    assert dict(data["extra"]["openai"]) == {"service_tier": "flex", "meta": {"k": [1]}}


def test_s28_settings_are_hashable_consistently_with_equality() -> None:
    same = robota.ModelSettings(
        temperature=0.3, stop="END", extra={"openai": {"meta": {"k": [1]}, "service_tier": "flex"}}
    )
    assert same == WITH_EXTRA
    assert hash(same) == hash(WITH_EXTRA)
    assert len({WITH_EXTRA, same, robota.ModelSettings()}) == 2
    assert hash(robota.ModelSettings(extra={"openai": {}})) != hash(robota.ModelSettings(seed=1))


def test_s28_the_repr_shows_extra_as_plain_mappings() -> None:
    assert "mappingproxy" not in repr(WITH_EXTRA)
    assert "extra={'openai': {'service_tier': 'flex', 'meta': {'k': [1]}}}" in repr(WITH_EXTRA)


def test_s28_extra_is_copied_deeply_so_the_callers_nested_values_cannot_change_it() -> None:
    nested = {"k": [1]}
    settings = robota.ModelSettings(extra={"openai": {"meta": nested}})
    nested["k"].append(2)
    assert settings.extra_for("openai") == {"meta": {"k": [1]}}


@pytest.mark.parametrize(
    "value", [object(), datetime.date(2026, 1, 1), math.nan, math.inf, b"bytes", {1: "x"}]
)
def test_s28_an_extra_value_that_is_not_json_is_refused_naming_the_field(value: object) -> None:
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.ModelSettings(extra={"openai": {"service_tier": value}})
    message = str(caught.value)
    assert "ModelSettings.extra['openai']['service_tier']" in message
    assert "JSON" in message


def test_s28_a_timeout_that_is_not_finite_is_refused_with_the_fix() -> None:
    with pytest.raises(robota.ConfigurationError, match="finite number of seconds"):
        robota.ModelSettings(timeout=math.inf)


async def test_s40_every_accepted_setting_journals_and_resumes(tmp_path: Path) -> None:
    settings = robota.ModelSettings(
        temperature=0.3,
        timeout=1e9,
        seed=2**40,
        stop=("a", "b"),
        extra={"openai": {"t": (1, 2), "n": None, "f": 0.5}},
    )
    async with SQLiteJournal(tmp_path / "j.db") as journal:
        agent = robota.Agent(provider=ScriptedProvider(["ok"]), model="m", journal=journal)
        result = await agent.run("go", execution_id="e", settings=settings)
        assert result.status == "complete"
    async with SQLiteJournal(tmp_path / "j.db") as journal:
        started = (await journal.read("e"))[0]
        assert isinstance(started, robota.ExecutionStarted)
        assert started.state.model_settings["extra"] == {
            "openai": {"t": [1, 2], "n": None, "f": 0.5}
        }


@pytest.mark.parametrize(
    ("options", "fix"),
    [
        ({"temperature": 0.2}, "settings=robota.ModelSettings(temperature=0.2)"),
        (
            {"max_output_tokens": 50, "seed": 1},
            "settings=robota.ModelSettings(max_output_tokens=50, seed=1)",
        ),
        ({"model_settings": robota.ModelSettings()}, "settings=robota.ModelSettings(...)"),
    ],
)
async def test_s28_a_model_setting_passed_as_a_run_option_names_settings(
    options: dict[str, object], fix: str
) -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m")
    with pytest.raises(TypeError) as caught:
        await agent.run("hi", **options)  # type: ignore[arg-type]
    assert fix in str(caught.value)
    with pytest.raises(TypeError, match="ModelSettings"):
        agent.run_stream("hi", **options)  # type: ignore[arg-type]


def test_s28_run_sync_names_settings_for_a_model_setting_too() -> None:
    agent = robota.Agent(provider=ScriptedProvider([]), model="m")
    with pytest.raises(TypeError, match=r"settings=robota\.ModelSettings\(temperature=0\)"):
        agent.run_sync("hi", temperature=0)  # type: ignore[call-overload]
