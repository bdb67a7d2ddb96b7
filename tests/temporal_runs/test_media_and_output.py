"""Issue 26 on Temporal: large media stored aside in the journal, typed results (``output=``).

A real dev server and in-process workers with a SQLite journal, as in
:mod:`temporal_runs.test_agent_workflows`. The providers report the size and digest of every
media part they were sent, so "the full bytes reached the model" is read off the reply.
"""

from __future__ import annotations

import json
import struct
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pydantic
import pytest
from temporalio.client import Client
from temporalio.worker import Worker

import robota
from robota.host import SQLiteJournal
from robota.temporal import (
    AgentFactory,
    create_replayer,
    create_worker,
    get_result,
    start_agent_run,
)
from robota.temporal._codec import RunInput, RunOutput
from robota.temporal._media import store_input_media
from robota.testing import InMemoryJournal
from temporal_runs.agents import AGENTS as RULE_AGENTS
from temporal_runs.media_agents import AGENTS, CALLS, digest, png

EVERY: Mapping[str, AgentFactory] = {**RULE_AGENTS, **AGENTS}


@asynccontextmanager
async def serving(client: Client, queue: str, journal: Path | None) -> AsyncIterator[Worker]:
    store = SQLiteJournal(journal) if journal is not None else None
    worker = create_worker(client, task_queue=queue, agents=EVERY, journal=store)
    async with worker:
        yield worker
    if store is not None:
        await store.aclose()


def start_payload_bytes(history: object) -> int:
    event = history.events[0]  # type: ignore[attr-defined]
    attributes = event.workflow_execution_started_event_attributes
    return sum(len(p.data) for p in attributes.input.payloads)


# ------------------------------------------------------------------ tool-result media


async def test_a_tool_image_over_the_inline_limit_reaches_the_model_whole_through_the_journal(
    client: Client, queue: str, tmp_path: Path
) -> None:
    size = 1_500_000  # base64 2 MB: over Temporal's payload limit inline
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(client, "snapper", str(size), task_queue=queue)
        result = await get_result(handle)
    assert result.text == f"media 1 {size}:{digest(png(size))}"
    tool = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    # The run's messages show the marker; the journal holds the text and the image.
    assert tool.content.startswith("[robota: a 10-byte tool result with 1 image stored aside")
    assert tool.parts == ()


async def test_without_a_journal_a_tool_image_over_the_limit_is_the_clear_error(
    client: Client, queue: str
) -> None:
    async with serving(client, queue, None):
        handle = await start_agent_run(client, "snapper", "1500000", task_queue=queue)
        result = await get_result(handle)
    tool = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert tool.is_error
    assert tool.parts == ()
    assert "no execution journal is configured" in tool.content
    assert result.text == "media 0"


# ------------------------------------------------------------------ input media


async def test_a_large_input_image_is_kept_aside_with_a_journal_and_reaches_the_model_whole(
    client: Client, queue: str, tmp_path: Path
) -> None:
    image = png(1_500_000)
    small = png(1_000, width=10, height=10)
    parts = [
        robota.TextPart("what is on it?"),
        robota.ImagePart(data=image, media_type="image/png"),
        robota.ImagePart(data=small, media_type="image/png"),
    ]
    path = tmp_path / "journal.db"
    async with serving(client, queue, path), SQLiteJournal(path) as journal:
        handle = await start_agent_run(client, "viewer", parts, task_queue=queue, journal=journal)
        result = await get_result(handle)
    assert result.text == f"media 2 1500000:{digest(image)} 1000:{digest(small)}"
    # Only the stand-in crossed Temporal: the start payload is small.
    assert start_payload_bytes(await handle.fetch_history()) < 20_000
    user = result.messages[0]
    assert isinstance(user, robota.UserMessage)
    assert not isinstance(user.content, str)
    stand_in = user.content[1]
    assert isinstance(stand_in, robota.ImagePart)
    assert stand_in.media_type == "image/png"
    assert stand_in.data is not None
    assert b"robota-stored:" in stand_in.data
    assert user.content[2] == parts[2]  # small parts travel inline


async def test_without_a_journal_a_large_input_is_refused_before_the_run_starts() -> None:
    big = robota.ImagePart(data=png(1_500_000), media_type="image/png")
    with pytest.raises(
        robota.ConfigurationError, match=r"start_agent_run\(\.\.\., journal=\.\.\.\)"
    ):
        # No client at all: the refusal comes before anything reaches a server.
        await start_agent_run(None, "viewer", [big], task_queue="q")  # type: ignore[arg-type]


async def test_a_worker_without_the_journal_refuses_input_media_stored_aside(
    client: Client, queue: str, tmp_path: Path
) -> None:
    big = robota.ImagePart(data=png(200_000), media_type="image/png")
    async with serving(client, queue, None), SQLiteJournal(tmp_path / "j.db") as journal:
        handle = await start_agent_run(client, "viewer", [big], task_queue=queue, journal=journal)
        with pytest.raises(robota.ProviderError, match="give every worker the journal"):
            await get_result(handle)


async def test_inline_media_too_large_for_a_request_fail_the_run_naming_the_journal(
    client: Client, queue: str
) -> None:
    # 1.1 MB of image travels inline (under the input limit); with a 200 KB tool result the
    # next request is over what a Temporal payload carries.
    image = robota.ImagePart(data=png(1_100_000), media_type="image/png")
    async with serving(client, queue, None):
        handle = await start_agent_run(
            client, "bulky", [robota.TextPart("200000"), image], task_queue=queue
        )
        with pytest.raises(robota.ProviderError) as caught:
            await get_result(handle)
    assert caught.value.code == "payload_too_large"
    assert "media parts carried inline" in caught.value.message
    assert "start_agent_run(..., journal=...)" in caught.value.message


def _wav(seconds: int) -> bytes:
    rate = 16_000 * 2
    header = b"RIFF" + struct.pack("<I", 36 + rate * seconds) + b"WAVEfmt "
    header += struct.pack("<IHHIIHH", 16, 1, 1, 16_000, rate, 2, 16)
    return header + b"data" + struct.pack("<I", rate * seconds) + b"\0" * (rate * seconds)


@pytest.mark.parametrize(
    "part",
    [
        robota.ImagePart(data=png(300_000, width=2000, height=1500), media_type="image/png"),
        robota.ImagePart(data=png(300_000, width=300, height=200), media_type="image/png"),
        robota.ImagePart(data=b"\xff\xd8" + b"\0" * 300_000, media_type="image/jpeg"),
        robota.DocumentPart(data=b"%PDF-1.7\n" + b"/Type /Page\n" * 7 + b"\0" * 300_000),
        robota.AudioPart(data=_wav(5), media_type="audio/wav"),
        robota.AudioPart(data=b"ID3" + b"\0" * 3_000_000, media_type="audio/mpeg"),
    ],
    ids=["big-image", "small-image", "unreadable-jpeg", "pdf", "wav", "mp3"],
)
async def test_s31_a_stand_in_counts_as_many_context_tokens_as_the_part_it_stands_for(
    part: robota.ImagePart | robota.DocumentPart | robota.AudioPart,
) -> None:
    journal = InMemoryJournal()
    carried, stored = await store_input_media((part,), "wf", journal)
    assert not isinstance(carried, str)
    (stand_in,) = carried
    assert type(stand_in) is type(part)
    # The stand-in declares what its own bytes are; the stored record keeps the real type.
    assert stand_in.media_type in ("image/png", "application/pdf", "audio/wav")
    assert stand_in.data is not None
    assert len(stand_in.data) < 10_000
    assert robota.estimate_message_tokens(
        robota.UserMessage(carried)
    ) == robota.estimate_message_tokens(robota.UserMessage((part,)))
    (item,) = stored
    assert (item.kind, item.size) == (part.kind, len(part.data or b""))
    # The journal holds the part itself.
    (record,) = await journal.read(item.key)
    assert isinstance(record, robota.EffectSettled)
    assert record.parts == (part,)


# ------------------------------------------------------------------ typed results


class City(pydantic.BaseModel):
    city: str
    population: int


async def test_s18_output_returns_the_typed_result_and_a_replay_never_calls_the_model(
    client: Client, queue: str, tmp_path: Path
) -> None:
    CALLS.clear()
    async with serving(client, queue, tmp_path / "journal.db"):
        handle = await start_agent_run(
            client, "typed", "which city?", task_queue=queue, output=City
        )
        result = await get_result(handle, output=City)
    assert result.output == City(city="Paris", population=2_100_000)
    assert result.structured
    # The invalid first reply and the retry are two model-call activities.
    history = await handle.fetch_history()
    names = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert names == ["robota.model_call", "robota.model_call"]
    assert CALLS == ["typed", "typed"]
    # The history replays to the same run without a model call.
    replayed = await create_replayer(EVERY).replay_workflow(history)
    assert replayed.replay_failure is None
    assert CALLS == ["typed", "typed"]
    # Without a type, the output is the validated JSON value.
    plain = await get_result(handle)
    assert plain.output == {"city": "Paris", "population": 2_100_000}


async def test_s18_a_json_schema_output_and_its_validation_on_the_client(
    client: Client, queue: str
) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"],
    }
    async with serving(client, queue, None):
        handle = await start_agent_run(client, "typed", "which?", task_queue=queue, output=schema)
        result = await get_result(handle)
        plain = await start_agent_run(client, "viewer", "hi", task_queue=queue)
        with pytest.raises(robota.ConfigurationError, match="not started with"):
            await get_result(plain, output=City)

    class Wrong(pydantic.BaseModel):
        city: int

    assert result.output == {"city": "Paris", "population": 2_100_000}
    with pytest.raises(robota.StructuredOutputError, match="does not validate as Wrong"):
        await get_result(handle, output=Wrong)


async def test_s18_a_reply_that_never_validates_fails_with_structured_output_error(
    client: Client, queue: str
) -> None:
    async with serving(client, queue, None):
        handle = await start_agent_run(
            client, "typed", "which?", task_queue=queue, output=City, output_retries=0
        )
        with pytest.raises(robota.StructuredOutputError) as caught:
            await get_result(handle)
    assert caught.value.attempts == 1
    assert caught.value.issues


async def test_start_agent_run_refuses_a_bad_output_before_reaching_the_server() -> None:
    with pytest.raises(robota.ConfigurationError, match="parameter-schema subset"):
        await start_agent_run(None, "a", "x", task_queue="q", output={"type": "nope"})  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="output_retries"):
        await start_agent_run(None, "a", "x", task_queue="q", output=City, output_retries=-1)  # type: ignore[arg-type]


def test_payloads_without_the_new_fields_stay_version_1_and_older_ones_still_decode() -> None:
    plain = RunInput("a", "hi")
    assert plain.encode()["v"] == 1
    assert RunInput.decode(plain.encode()) == plain
    typed = RunInput("a", "hi", output_schema={"type": "object"}, output_retries=1)
    assert typed.encode()["v"] == 2
    assert RunInput.decode(json.loads(json.dumps(typed.encode()))) == typed
    usage = robota.Usage.from_counts(prompt=1, completion=1)
    old = RunOutput("t", "complete", "end_turn", 1, 0, usage).encode()
    assert old["v"] == 1
    assert "output" not in old
    assert RunOutput.decode(old).output is None
    new = RunOutput("t", "complete", "end_turn", 1, 0, usage, output=[1], structured=True)
    assert new.encode()["v"] == 2
    assert RunOutput.decode(new.encode()) == new
