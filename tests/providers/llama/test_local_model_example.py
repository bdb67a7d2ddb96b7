"""``examples/local_model.py`` runs a whole agent loop against a real llama.cpp server."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

from providers.llama._server import LlamaServer
from providers.llama._tiny_model import REPLY_AFTER_TOOL

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "local_model.py"


def test_the_local_model_example_runs_against_llama_server(llama_server: LlamaServer) -> None:
    env = {**os.environ, "LOCAL_MODEL_URL": llama_server.base_url, "LOCAL_MODEL": "tiny"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "[tool get_weather -> sunny and 22 °C in lorem ipsum]" in done.stdout
    assert REPLY_AFTER_TOOL in done.stdout
    assert "complete, 2 model calls" in done.stdout
