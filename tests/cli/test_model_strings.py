"""`--model` strings resolve as in Python, and each setup hint names only what was not done.

The real command runs as a child process (issue 25): ``openai-compatible:MODEL`` finds its server
in ``--base-url`` or ``$OPENAI_COMPATIBLE_BASE_URL``; a message never repeats the form the user
already typed.
"""

from __future__ import annotations

import os
import pathlib

from cli._support import chat_sse, closed_port, robota
from providers.replay import Exchange, ReplayServer

_HINT = "any OpenAI-compatible server"


def _error_line(result: object) -> str:
    stderr: str = getattr(result, "stderr", "")
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_openai_compatible_without_a_server_names_both_ways_and_no_other_hint(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(["run", "hi", "--model", "openai-compatible:m"], env=env, cwd=workdir)
    assert result.returncode == 2
    assert _error_line(result) == (
        "error: openai-compatible:m needs the server's API root: pass --base-url URL (e.g. "
        "http://127.0.0.1:8080/v1) or set OPENAI_COMPATIBLE_BASE_URL"
    )


def test_openai_compatible_with_an_empty_variable_says_it_is_empty(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(
        ["run", "hi", "--model", "openai-compatible:m"],
        env={**env, "OPENAI_COMPATIBLE_BASE_URL": ""},
        cwd=workdir,
    )
    assert result.returncode == 2
    assert _error_line(result) == (
        "error: openai-compatible:m: $OPENAI_COMPATIBLE_BASE_URL is set but empty; set it to the "
        "server's API root or pass --base-url URL"
    )


def test_openai_compatible_with_a_variable_that_is_not_a_url_names_the_variable(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    """Review of issue 25: this printed `OpenAICompatibleProvider base_url None is not a URL`."""
    result = robota(
        ["run", "hi", "--model", "openai-compatible:m"],
        env={**env, "OPENAI_COMPATIBLE_BASE_URL": "not-a-url"},
        cwd=workdir,
    )
    assert result.returncode == 2
    assert _error_line(result) == (
        "error: $OPENAI_COMPATIBLE_BASE_URL 'not-a-url' is not a URL: set it to the server's "
        "API root with http:// or https://, e.g. 'http://127.0.0.1:8080/v1'"
    )


def test_openai_compatible_reads_the_server_from_the_variable_as_python_does(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    with ReplayServer([Exchange.sse(chat_sse("from the variable", model="m"))]) as server:
        result = robota(
            ["run", "hi", "--model", "openai-compatible:m"],
            env={**env, "OPENAI_COMPATIBLE_BASE_URL": server.base_url + "/v1"},
            cwd=workdir,
        )
        request = server.requests[0]
    assert result.returncode == 0, result.stderr
    assert result.stdout == "from the variable\n"
    assert request.path_only == "/v1/chat/completions"
    assert request.json()["model"] == "m"


def test_an_unreachable_server_the_user_named_is_reported_without_repeating_the_form(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    for args, run_env in (
        (["--model", "openai-compatible:m", "--base-url", url], env),
        (["--model", "openai-compatible:m"], {**env, "OPENAI_COMPATIBLE_BASE_URL": url}),
    ):
        result = robota(["run", "hi", *args], env=run_env, cwd=workdir)
        assert result.returncode == 1
        line = _error_line(result)
        assert line.startswith(f"error: cannot reach {url}: ")
        assert "--base-url" not in line
        assert "openai-compatible:MODEL" not in line


def test_an_unknown_prefix_with_the_server_variable_set_suggests_only_the_model_string(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(
        ["run", "hi", "--model", "llama3:8b"],
        env={**env, "OPENAI_COMPATIBLE_BASE_URL": "http://127.0.0.1:9/v1"},
        cwd=workdir,
    )
    assert result.returncode == 2
    line = _error_line(result)
    assert "unknown model prefix 'llama3'" in line
    assert line.endswith(
        "(for the server at $OPENAI_COMPATIBLE_BASE_URL: --model openai-compatible:MODEL)"
    )
    assert _HINT not in line
    assert "--base-url" not in line


def test_a_registered_provider_that_takes_no_base_url_is_named_with_the_flag(
    workdir: pathlib.Path, env: dict[str, str], tmp_path: pathlib.Path
) -> None:
    """A third-party provider package (a real dist-info on the child's path) without base_url."""
    site = tmp_path / "site"
    info = site / "plainprov-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plainprov\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[robota.providers]\nplain = plainprov_mod:Plain\n")
    (site / "plainprov_mod.py").write_text(
        "from robota.testing import ScriptedProvider\n\n\n"
        "class Plain(ScriptedProvider):\n"
        "    def __init__(self):\n"
        "        super().__init__(['plain'], name='plain')\n"
    )
    path = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    child_env = {**env, "PYTHONPATH": path}
    refused = robota(
        ["run", "hi", "--model", "plain:m", "--base-url", "http://127.0.0.1:9/v1"],
        env=child_env,
        cwd=workdir,
    )
    assert refused.returncode == 2
    assert _error_line(refused) == (
        "error: the provider registered for 'plain' does not take --base-url"
    )
    works = robota(["run", "hi", "--model", "plain:m"], env=child_env, cwd=workdir)
    assert works.returncode == 0, works.stderr
    assert works.stdout == "plain\n"


def test_a_setup_error_for_the_exact_form_typed_does_not_repeat_the_form(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    """Regression: the compatible form's hint was appended to every setup error for it."""
    result = robota(
        ["run", "hi", "--model", "openai-compatible:m", "--base-url", " "], env=env, cwd=workdir
    )
    assert result.returncode == 2
    line = _error_line(result)
    assert line == (
        "error: --base-url ' ' is empty: give the server's API root, e.g. http://127.0.0.1:8080/v1"
    )
    assert _HINT not in line


def test_a_registered_prefix_without_a_model_is_refused_even_with_a_base_url(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    """Review of issue 25: `openai-compatible:` with --base-url asked the server for the model
    named "openai-compatible:"; `openai:` was said to name no provider."""
    for spec in ("openai-compatible:", "openai:"):
        with ReplayServer([Exchange.sse(chat_sse("must not be asked", model="m"))]) as server:
            result = robota(
                ["run", "hi", "--model", spec, "--base-url", server.base_url + "/v1"],
                env=env,
                cwd=workdir,
            )
            assert server.requests == []
        assert result.returncode == 2
        prefix = spec.partition(":")[0]
        assert _error_line(result) == (
            f"error: --model {spec!r} names no model after the prefix {prefix!r}: "
            f"write {prefix}:MODEL"
        )
