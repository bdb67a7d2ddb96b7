"""``robota run PROMPT``: one turn against a real model, streamed to the terminal.

The answer streams to stdout as it arrives; tool calls, their (shortened) results and the usage
and cost footer go to stderr. ``--json`` prints one JSON object on stdout instead (see
:func:`~robota.cli._output.result_json`), and on failure ``{"status": "error", "error": …}``
besides the one-line error. Ctrl-C cancels the run: what arrived is printed, the exit code is
130. A tool already running is waited for (stderr names it); a second Ctrl-C stops waiting — the
tool's result is recorded as interrupted — and the command exits 130 at once.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import robota
from robota import (
    AudioPart,
    ConfigurationError,
    DocumentPart,
    ImagePart,
    MessagePart,
    RobotaError,
    RunResult,
    TextPart,
)
from robota.cli._build import AgentFlags, Built, build_agent, check_text_flag
from robota.cli._errors import FAILURE, INTERRUPTED, NO_ANSWER, CliError, describe, one_line
from robota.cli._output import (
    Printer,
    RunRenderer,
    no_answer_reason,
    result_json,
    unknown_window_note,
)
from robota.cli._terminal import Interrupts, LineReader, TerminalApprover

if TYPE_CHECKING:
    from robota.sessions import Session, SessionStore

__all__ = ["run_command"]


_ATTACHABLE: dict[str, type[ImagePart] | type[DocumentPart] | type[AudioPart]] = {
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".gif", ".webp"), ImagePart),
    ".pdf": DocumentPart,
    **dict.fromkeys((".wav", ".mp3", ".ogg", ".flac", ".aac", ".aif", ".aiff"), AudioPart),
}


def attachments(prompt: str, files: Sequence[str]) -> str | list[MessagePart]:
    """The run's input: the prompt alone, or the prompt and a part per ``--attach`` file.

    Raises:
        CliError: a file that cannot be read, or whose suffix names no accepted kind.
    """
    if not files:
        return prompt
    parts: list[MessagePart] = [TextPart(prompt)]
    for name in files:
        kind = _ATTACHABLE.get(Path(name).suffix.lower())
        if kind is None:
            raise CliError(
                f"--attach {name}: cannot tell what kind of file this is from its name; attach "
                "an image (.png .jpg .gif .webp), a .pdf, or audio (.wav .mp3 .ogg .flac .aac "
                ".aiff)"
            )
        try:
            parts.append(kind.from_path(name))
        except ConfigurationError as error:
            raise CliError(f"--attach {name}: {one_line(error.message)}") from None
    return parts


async def _run(
    flags: AgentFlags,
    prompt: str | list[MessagePart],
    *,
    as_json: bool,
    out: TextIO,
    stdin: TextIO,
    session_name: str | None = None,
    sessions_db: str | None = None,
) -> int:
    printer = Printer()
    store: SessionStore | None = None
    where = ""
    if session_name is not None:
        from robota.cli._sessions import check_name, open_store  # noqa: PLC0415

        check_name(session_name)
        store, where = open_store(sessions_db)
    try:
        with Interrupts(printer) as interrupts:
            approver = TerminalApprover(LineReader(stdin), printer, interrupts)
            built = build_agent(flags, approver=approver)
            model = built.agent.get_model().model
            renderer = RunRenderer(None if as_json else out, None if as_json else printer)
            async with built.agent as agent:
                session: Session | None = None
                if store is not None and session_name is not None:
                    from robota.cli._sessions import open_session  # noqa: PLC0415

                    session = await open_session(agent, store, session_name, where)
                try:
                    result = await _turn(agent, session, prompt, interrupts, renderer, built)
                finally:
                    if session is not None:
                        await session.aclose()
    finally:
        if store is not None:
            await store.aclose()
    renderer.finish()
    note = unknown_window_note(result, model)
    if note is not None:
        printer.note(note)
    if as_json:
        out.write(json.dumps(result_json(result, renderer.calls), ensure_ascii=False) + "\n")
        out.flush()
    reason = no_answer_reason(result)
    if reason is not None:  # a guard stopped the run: never exit 0 with empty output
        sys.stderr.write(f"error: {one_line(reason)}\n")
        return NO_ANSWER
    if not as_json:
        if result.status == "interrupted":
            printer.note("interrupted: the answer above is what arrived before Ctrl-C")
        printer.footer(result)
    return 0 if result.status == "complete" else INTERRUPTED


async def _turn(
    agent: robota.Agent,
    session: Session | None,
    prompt: str | list[MessagePart],
    interrupts: Interrupts,
    renderer: RunRenderer,
    built: Built,
) -> RunResult[Any]:
    controller = interrupts.begin_turn()
    try:
        start = agent.run_stream if session is None else session.run_stream
        stream = start(prompt, signal=controller.signal)
        async for event in stream:
            interrupts.observe(event)
            renderer.event(event)
        result: RunResult[Any] = await stream.result()
    except RobotaError as error:
        renderer.finish()
        message = describe(error, endpoint=built.endpoint)
        if session is not None:
            from robota.cli._sessions import turn_error  # noqa: PLC0415

            message = turn_error(error, session.id, built.endpoint)
        raise CliError(message, exit_code=FAILURE) from None
    finally:
        interrupts.end_turn()
    if session is not None:
        from robota.cli._sessions import title_after_first_turn  # noqa: PLC0415

        text = (
            prompt
            if isinstance(prompt, str)
            else next((part.text for part in prompt if isinstance(part, TextPart)), "")
        )
        await title_after_first_turn(session, text)
    return result


def run_command(
    flags: AgentFlags,
    prompt: str,
    *,
    as_json: bool = False,
    out: TextIO | None = None,
    stdin: TextIO | None = None,
    attach: Sequence[str] = (),
    session: str | None = None,
    sessions_db: str | None = None,
) -> int:
    """Run one turn and print it; returns the exit code.

    0 when done; 3 when a guard stopped the run with no answer (its reason on stderr, never an
    exit 0 with empty output); 130 when interrupted.

    Args:
        flags: The agent flags.
        prompt: The user's message; ``"-"`` reads it from stdin.
        as_json: Print one JSON object instead of streaming.
        out: stdout by default.
        stdin: stdin by default (the prompt for ``-``, and answers to permission asks).
        attach: Files sent with the prompt (``--attach``), each as an image, document or
            audio part chosen by its suffix.
        session: Run the turn in this named session (``--session``): it continues the
            conversation kept under the name, and is saved there (see ``robota.cli._sessions``).
        sessions_db: The session store (``--sessions-db``).

    Raises:
        CliError: every failure, with its exit code (2 before the run starts, 1 during it).
    """
    import asyncio  # noqa: PLC0415 - keep `robota --help` fast

    out = sys.stdout if out is None else out
    stdin = sys.stdin if stdin is None else stdin
    if prompt == "-":
        try:
            prompt = stdin.read()
        except UnicodeDecodeError as error:  # refused up front, never a codec traceback
            raise CliError(
                f"the prompt on stdin is not UTF-8 text (byte 0x{error.object[error.start]:02x} "
                f"at offset {error.start}); convert it to UTF-8 first (e.g. with iconv -t UTF-8)"
            ) from None
        check_text_flag(prompt, "the prompt on stdin")
    else:
        check_text_flag(prompt, "the prompt")
    if not prompt.strip():
        raise CliError("the prompt is empty")
    content = attachments(prompt, attach)
    try:
        return asyncio.run(
            _run(
                flags,
                content,
                as_json=as_json,
                out=out,
                stdin=stdin,
                session_name=session,
                sessions_db=sessions_db,
            )
        )
    except CliError as error:
        if as_json:
            body = {
                "status": "error",
                "error": {"message": error.message, "exit_code": error.exit_code},
            }
            out.write(json.dumps(body, ensure_ascii=False) + "\n")
            out.flush()
        raise
