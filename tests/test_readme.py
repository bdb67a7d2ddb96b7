"""The README's Python examples run as written (each in a fresh interpreter)."""

from __future__ import annotations

import inspect
import os
import pathlib
import re
import subprocess
import sys

import pytest

import robota
from providers.replay import ReplayServer, cassette_path, load_cassette

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _model_is_positional() -> bool:
    """Whether ``robota.Agent("openai:…")`` takes the model as its first positional argument."""
    first = next(iter(inspect.signature(robota.Agent).parameters.values()), None)
    return (
        first is not None
        and first.name == "model"
        and first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    )


def _marks(code: str) -> list[pytest.MarkDecorator]:
    # issue 25: the README leads with `robota.Agent("openai:…")`; the positional model argument
    # lands with the credentials change (branch issue25-creds). Until then such a block is an
    # expected failure; once the signature takes it, the mark is inert and the block must run.
    if re.search(r"\bAgent\(\s*[\"']", code) and not _model_is_positional():
        return [pytest.mark.xfail(reason="Agent(model) positional not merged yet", strict=True)]
    return []


def test_readme_has_python_examples() -> None:
    assert BLOCKS


def _openai_stand_in() -> ReplayServer:
    """OpenAI's Responses API as recorded: the real-model quick start runs against it."""
    recorded = load_cassette(
        cassette_path(
            "openai-responses", "test_openai_instructions_with_responses_logprobs_streaming"
        )
    )
    return ReplayServer(recorded * 4)


@pytest.mark.parametrize(
    "code",
    [pytest.param(code, id=f"block{i}", marks=_marks(code)) for i, code in enumerate(BLOCKS)],
)
def test_readme_example_runs(code: str) -> None:
    # No network here: a block that talks to OpenAI reaches a local server replaying a real
    # recorded exchange, through the real SDK (OPENAI_BASE_URL is the SDK's own setting).
    with _openai_stand_in() as server:
        env = {**os.environ, "OPENAI_API_KEY": "test", "OPENAI_BASE_URL": server.base_url + "/v1"}
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
    assert result.returncode == 0, result.stderr
