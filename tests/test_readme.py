"""The README's Python examples run as written (each in a fresh interpreter)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

from providers.replay import ReplayServer, cassette_path, load_cassette

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


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


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
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
