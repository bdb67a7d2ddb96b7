"""Issue 26: a run's input parts travel through Temporal's payloads without loss."""

from __future__ import annotations

import json

import pytest

import robota
from robota.temporal import start_agent_run
from robota.temporal._codec import RunInput, RunOutput

PARTS = (
    robota.TextPart("what is this?"),
    robota.ImagePart(data=b"\x89PNG\r\n\x1a\n\0\xff", media_type="image/png"),
    robota.DocumentPart(url="https://example.com/a.pdf"),
    robota.AudioPart(data=b"ID3\0", media_type="audio/mpeg"),
)


def test_run_input_with_parts_round_trips_through_json() -> None:
    spec = RunInput(agent="a", input=PARTS)
    back = RunInput.decode(json.loads(json.dumps(spec.encode())))
    assert back.input == PARTS
    assert RunInput.decode(json.loads(json.dumps(RunInput("a", "hi").encode()))).input == "hi"


def test_run_output_messages_keep_their_parts() -> None:
    user = robota.UserMessage(PARTS, id="m1", created_at=2.0)
    output = RunOutput(
        text="ok",
        status="complete",
        stop_reason="end_turn",
        rounds=1,
        tool_calls_executed=0,
        usage=robota.Usage.from_counts(prompt=3, completion=1),
        messages=(user,),
    )
    back = RunOutput.decode(json.loads(json.dumps(output.encode())))
    assert back.messages == (user,)


async def test_start_agent_run_refuses_an_input_that_is_neither_text_nor_parts() -> None:
    with pytest.raises(robota.ConfigurationError, match="not a message part"):
        await start_agent_run(None, "a", [PARTS[0], 3], task_queue="q")  # type: ignore[arg-type,list-item]
