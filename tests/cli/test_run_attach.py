"""`robota run --attach FILE` (issue 26): files go to the model as parts of the prompt."""

from __future__ import annotations

import base64
import pathlib

from cli._support import chat_sse, robota
from providers.replay import Exchange, ReplayServer

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 24


def test_attach_sends_an_image_and_a_pdf_with_the_prompt(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    (workdir / "chart.png").write_bytes(PNG)
    (workdir / "paper.pdf").write_bytes(b"%PDF-1.4 tiny")
    with ReplayServer([Exchange.sse(chat_sse("a chart"))]) as server:
        result = robota(
            [
                "run",
                "what is this?",
                "--attach",
                "chart.png",
                "--attach",
                "paper.pdf",
                "--model",
                "openai-compatible:m",
                "--base-url",
                server.base_url + "/v1",
            ],
            env=env,
            cwd=workdir,
        )
        [sent] = server.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "a chart\n"
    [message] = sent.json()["messages"]
    png64 = base64.b64encode(PNG).decode()
    pdf64 = base64.b64encode(b"%PDF-1.4 tiny").decode()
    assert message["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png64}"}},
        {
            "type": "file",
            "file": {"filename": "paper.pdf", "file_data": f"data:application/pdf;base64,{pdf64}"},
        },
    ]


def test_attach_of_an_unknown_kind_or_a_missing_file_is_one_line_and_exit_code_2(
    workdir: pathlib.Path, env: dict[str, str]
) -> None:
    (workdir / "notes.docx").write_bytes(b"x")
    for name, expected in (
        ("notes.docx", "cannot tell what kind of file"),
        ("missing.png", "could not read"),
    ):
        result = robota(
            [
                "run",
                "hi",
                "--attach",
                name,
                "--model",
                "openai-compatible:m",
                "--base-url",
                "http://127.0.0.1:9/v1",
            ],
            env=env,
            cwd=workdir,
        )
        assert result.returncode == 2, result.stderr
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"error: --attach {name}: ")
        assert expected in lines[0]
