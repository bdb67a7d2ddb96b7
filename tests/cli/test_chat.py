"""`robota chat`: an interactive session driven through stdin, against a local replay server."""

from __future__ import annotations

import asyncio
import io
import os
import pathlib
import signal
from typing import TextIO

from cli._support import Child, chat_sse, robota
from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.cli._terminal import LineReader


def _chat_args(server: ReplayServer, *extra: str, model: str = "m") -> list[str]:
    return [
        "chat",
        "--model",
        f"openai-compatible:{model}",
        "--base-url",
        server.base_url + "/v1",
        *extra,
    ]


def test_chat_keeps_history_across_turns_and_exit_leaves(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    script = [
        Exchange.sse(chat_sse("Paris is the capital.")),
        Exchange.sse(chat_sse("Rome, in Italy.")),
    ]
    with ReplayServer(script) as server:
        result = robota(
            _chat_args(server, "--system", "Answer in one line."),
            env=env,
            cwd=workdir,
            input="Capital of France?\n\nAnd of Italy?\n/exit\nnever sent\n",
        )
        server.assert_all_served()  # the blank line and the line after /exit sent nothing
        second = server.requests[1].json()["messages"]
    assert result.returncode == 0, result.stderr
    assert "Paris is the capital." in result.stdout
    assert "Rome, in Italy." in result.stdout
    assert [(m["role"], m["content"]) for m in second] == [
        ("system", "Answer in one line."),
        ("user", "Capital of France?"),
        ("assistant", "Paris is the capital."),
        ("user", "And of Italy?"),
    ]
    assert result.stderr.count("usage: 10 prompt + 5 completion") == 2
    assert "Traceback" not in result.stderr


def test_end_of_input_ends_the_session(workdir: pathlib.Path, env: dict[str, str]) -> None:
    with ReplayServer([Exchange.sse(chat_sse("hello back"))]) as server:
        result = robota(_chat_args(server), env=env, cwd=workdir, input="hello\n")
        server.assert_all_served()
    assert result.returncode == 0, result.stderr
    assert "hello back" in result.stdout


def test_a_failed_turn_prints_one_line_and_the_session_goes_on(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    refusal = Exchange.json(400, {"error": {"message": "bad request here", "type": "invalid"}})
    with ReplayServer([refusal, Exchange.sse(chat_sse("recovered"))]) as server:
        result = robota(_chat_args(server), env=env, cwd=workdir, input="one\ntwo\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert "recovered" in result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1
    assert "bad request here" in errors[0]


def test_ctrl_c_cancels_the_turn_not_the_session(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    words = [f"word{index} " for index in range(20)]
    slow = Exchange.sse(chat_sse(*words), chunk_delay=0.5)
    with ReplayServer([slow, Exchange.sse(chat_sse("second answer"))]) as server:
        child = Child(_chat_args(server), env=env, cwd=workdir)
        try:
            child.wait_for("you> ")
            child.send("tell me a long story")
            child.wait_for("word1 ")
            os.kill(child.process.pid, signal.SIGINT)
            child.wait_for("[interrupted]", stream="stderr")
            assert child.process.poll() is None  # the process lives on
            assert "word19" not in child.stdout
            child.wait_for("you> ", count=2)
            child.send("and now?")
            child.wait_for("second answer")
            child.send("/exit")
            assert child.finish() == 0
        finally:
            child.kill()
        second = server.requests[1].json()["messages"]
    assert "Traceback" not in child.stderr
    # The interrupted reply stayed in history: the next request carries what had arrived.
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"].startswith("word0 word1 ")
    assert "word19" not in second[1]["content"]
    assert second[2]["content"] == "and now?"


def test_ctrl_c_at_the_prompt_leaves_cleanly(workdir: pathlib.Path, env: dict[str, str]) -> None:
    with ReplayServer([]) as server:
        child = Child(_chat_args(server), env=env, cwd=workdir)
        try:
            child.wait_for("you> ")  # printed after the SIGINT handler is in place
            os.kill(child.process.pid, signal.SIGINT)
            assert child.finish() == 0
        finally:
            child.kill()
        assert server.requests == []
    assert "Traceback" not in child.stderr
    assert "KeyboardInterrupt" not in child.stderr


def test_ask_prompts_on_the_terminal_and_runs_the_tool_on_yes(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    script = load_cassette(cassette_path("openai-chat", "test_run_stream_sync_streams_real_model"))
    with ReplayServer(script) as server:
        result = robota(
            _chat_args(server, "--tools", "clitools:get_capital", "--ask", model="gpt-4o-mini"),
            env=env,
            cwd=workdir,
            input="What is the capital of the UK?\ny\n/exit\n",
        )
        server.assert_all_served()
        tool_message = server.requests[1].json()["messages"][-1]
    assert result.returncode == 0, result.stderr
    assert "allow get_capital(country='UK')?" in result.stderr
    assert "<- London" in result.stderr
    assert tool_message == {
        "role": "tool",
        "content": "London",
        "tool_call_id": "call_ZR5UUuTt3pf61kjwAJIYdVMj",
    }
    assert "The capital of the UK is London." in result.stdout


def test_ask_refuses_the_call_on_no(workdir: pathlib.Path, env: dict[str, str]) -> None:
    script = load_cassette(cassette_path("openai-chat", "test_run_stream_sync_streams_real_model"))
    with ReplayServer(script) as server:
        result = robota(
            [
                "chat",
                "--model",
                "openai-compatible:gpt-4o-mini",
                "--base-url",
                server.base_url + "/v1",
                "--tools",
                "clitools:get_capital",
                "--permission-mode",
                "default",  # get_capital declares no risk class: the default mode asks
            ],
            env=env,
            cwd=workdir,
            input="What is the capital of the UK?\nn\n/exit\n",
        )
        tool_message = server.requests[1].json()["messages"][-1]
    assert result.returncode == 0, result.stderr
    assert "<- [refused] The user declined this call" in result.stderr
    assert tool_message["content"] == "The user declined this call: declined at the terminal."


def test_chat_setup_errors_exit_2_before_any_prompt(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    result = robota(["chat", "--model", "openai:gpt-4o"], env=env, cwd=workdir, input="hi\n")
    assert result.returncode == 2
    assert result.stderr == (
        "error: no API key for openai: set OPENAI_API_KEY, run `robota auth set openai`, "
        "or pass --api-key-env VAR\n"
    )
    assert "you> " not in result.stdout


def test_a_cancelled_read_keeps_its_line_for_the_next_reader() -> None:
    async def scenario(stream: TextIO, write_end: int) -> list[str | None]:
        reader = LineReader(stream)
        waiting = asyncio.ensure_future(reader.readline())
        await asyncio.sleep(0.05)
        waiting.cancel()  # e.g. Ctrl-C while a permission question waited for its answer
        os.write(write_end, b"kept\n")
        os.close(write_end)
        return [await asyncio.wait_for(reader.readline(), 5) for _ in range(2)]

    read_end, write_end = os.pipe()
    with open(read_end, encoding="utf-8") as stream:
        assert asyncio.run(scenario(stream, write_end)) == ["kept", None]


def test_line_reader_strips_newlines() -> None:
    async def read_all() -> list[str | None]:
        reader = LineReader(io.StringIO("a\r\nb\n"))
        return [await reader.readline() for _ in range(3)]

    assert asyncio.run(read_all()) == ["a", "b", None]
