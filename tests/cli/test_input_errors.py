"""`robota run` refuses malformed input up front (issue 25, item 8): one `error:` line, exit 2.

A prompt that is not UTF-8 (on stdin, or as argv bytes Python decodes with surrogateescape) and
a `--base-url` that is not a URL are usage errors — never a codec traceback from deep inside,
never "cannot reach".
"""

from __future__ import annotations

import pathlib
import subprocess

from cli._support import COMMAND, closed_port, robota


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    return lines[0]


def _server() -> list[str]:
    # Nothing listens there: a check that let the run start would say "cannot reach" (exit 1).
    return ["--model", "openai-compatible:m", "--base-url", f"http://127.0.0.1:{closed_port()}/v1"]


def test_a_base_url_that_is_not_a_url_is_a_usage_error(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(
        ["run", "hi", "--model", "openai-compatible:m", "--base-url", "not-a-url"],
        env=env,
        cwd=workdir,
    )
    assert result.returncode == 2
    line = _one_line(result.stderr)
    assert "--base-url 'not-a-url' is not a URL" in line
    assert "http://127.0.0.1:8080/v1" in line


def test_a_prompt_on_stdin_that_is_not_utf8_is_refused_up_front(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = subprocess.run(
        [*COMMAND, "run", "-", *_server()],
        input=b"caf\xe9 au lait",  # Latin-1, not UTF-8
        capture_output=True,
        env=env,
        cwd=workdir,
        timeout=60,
        check=False,
        start_new_session=True,
    )
    assert result.returncode == 2
    line = _one_line(result.stderr.decode())
    assert "the prompt on stdin is not UTF-8 text (byte 0xe9 at " in line


def test_a_prompt_argument_that_is_not_utf8_is_refused_up_front(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = subprocess.run(
        [*COMMAND, "run", b"caf\xe9", *_server()],
        capture_output=True,
        env=env,
        cwd=workdir,
        timeout=60,
        check=False,
        start_new_session=True,
    )
    assert result.returncode == 2
    line = _one_line(result.stderr.decode())
    assert "the prompt is not UTF-8 text (byte 0xe9 at character 3)" in line


def test_a_system_prompt_that_is_not_utf8_is_refused_up_front(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = subprocess.run(
        [*COMMAND, "run", "hi", "--system", b"\xff", *_server()],
        capture_output=True,
        env=env,
        cwd=workdir,
        timeout=60,
        check=False,
        start_new_session=True,
    )
    assert result.returncode == 2
    assert "--system is not UTF-8 text (byte 0xff" in _one_line(result.stderr.decode())
