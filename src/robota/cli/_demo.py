"""``robota demo``: a real agent loop, offline.

The loop, the tools, streaming, history and usage accounting all run for real. Only the model is
replaced: its replies are replayed from ``demo.cassette.json`` (shipped in this package), which
was recorded from a scripted provider — the replies were written for this demo, not produced by a
real model, and the demo says so when it starts.
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path
from typing import TextIO

import robota
from robota.testing import CassetteProvider, ScriptedProvider

CASSETTE_NAME = "demo.cassette.json"
MODEL = "demo-model"
SYSTEM_PROMPT = "You answer questions using the tools you are given."
QUESTION = (
    "What is the capital of France, how many words are in 'the quick brown fox', "
    "and what is 12.5 + 30?"
)

_CAPITALS = {"france": "Paris", "japan": "Tokyo", "kenya": "Nairobi", "peru": "Lima"}


@robota.tool(risk="inspect")
def capital_of(country: str) -> str:
    """The capital city of a country.

    Args:
        country: The country's English name.
    """
    return _CAPITALS.get(country.strip().lower(), f"I do not know the capital of {country}.")


@robota.tool(risk="inspect", thread=False)
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text to count.
    """
    return len(text.split())


@robota.tool(risk="inspect", thread=False)
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


DEMO_TOOLS = (capital_of, word_count, add)

# The scripted model replies the shipped cassette was recorded from (see record_demo_cassette).
SCRIPT: list[robota.testing.TurnLike] = [
    [
        ("capital_of", {"country": "France"}),
        ("word_count", {"text": "the quick brown fox"}),
        ("add", {"a": 12.5, "b": 30}),
    ],
    "The capital of France is Paris, 'the quick brown fox' has 4 words, and 12.5 + 30 = 42.5.",
]


def cassette_path() -> Path:
    """Where the shipped demo cassette lives."""
    return Path(str(resources.files("robota.cli").joinpath(CASSETTE_NAME)))


def build_agent(provider: robota.Provider) -> robota.Agent:
    """The demo agent over ``provider``."""
    return robota.Agent(
        provider=provider,
        model=MODEL,
        system_prompt=SYSTEM_PROMPT,
        tools=DEMO_TOOLS,
        name="demo",
    )


async def record_demo_cassette(path: Path) -> None:
    """Re-record the demo cassette at ``path`` from :data:`SCRIPT`.

    Keeps it in step with the demo's tools and prompt; a test checks the shipped file is current.
    """
    # A tiny chunk delay makes the scripted provider stream word by word, so the cassette holds
    # the reply as many text deltas and the demo can show streaming.
    scripted = ScriptedProvider(SCRIPT, chunk_delay=1e-6)
    provider = CassetteProvider(path, provider=scripted, mode="record")
    async with build_agent(provider) as agent:
        await agent.run(QUESTION)


async def _run(out: TextIO, chunk_delay: float) -> int:
    provider = CassetteProvider(
        cassette_path(), mode="replay", chunk_delay=chunk_delay, honor_environment=False
    )
    out.write(
        f"Robota {robota.__version__} — offline demo.\n"
        f"The model's replies are replayed from {CASSETTE_NAME}: they were scripted for this "
        "demo, not produced by a real model.\nThe agent loop, tool calls, streaming, history "
        "and usage accounting are real.\n\n"
    )
    out.write(f"user> {QUESTION}\n")
    async with build_agent(provider) as agent:
        stream = agent.run_stream(QUESTION)
        streaming = False
        async for event in stream:
            if isinstance(event, robota.RoundStarted):
                out.write(f"\n[model call {event.round}]\n")
            elif isinstance(event, robota.TextDelta):
                if not streaming:
                    out.write("assistant> ")
                    streaming = True
                out.write(event.text)
                out.flush()
            elif isinstance(event, robota.ToolCallFinished):
                arguments = ", ".join(
                    f"{key}={value!r}" for key, value in json.loads(event.call.arguments).items()
                )
                mark = "error" if event.is_error else "ok"
                out.write(
                    f"  tool {event.call.name}({arguments}) -> {event.content}"
                    f"  [{event.status}, {mark}]\n"
                )
        result = await stream.result()
        out.write("\n\n")
        usage = result.usage
        out.write(
            f"status: {result.status}; {result.rounds} model calls; "
            f"{result.tool_calls_executed} tool bodies ran\n"
            f"usage: {usage.prompt_tokens} prompt + {usage.completion_tokens} completion = "
            f"{usage.total_tokens} tokens (the scripted provider's estimates, replayed)\n"
            f"history now holds {len(agent.history)} messages: "
            + ", ".join(m.kind for m in agent.history)
            + "\n"
        )
    return 0 if result.status == "complete" else 1


def run_demo(out: TextIO, *, chunk_delay: float = 0.03) -> int:
    """Run the demo, printing to ``out``; returns the exit code."""
    return asyncio.run(_run(out, chunk_delay))
