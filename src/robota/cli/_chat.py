"""``robota chat``: an interactive session with one agent, history kept across turns.

Each line typed is a turn; ``/exit``, ``/quit`` or end of input (Ctrl-D) leaves. Ctrl-C during
a turn cancels *that turn* — its run's :class:`~robota.AbortController` aborts, the partial reply
stays in history marked interrupted (the next turn's request carries it) — and the prompt comes
back. A tool already running is waited for (stderr names it); a second Ctrl-C in the same turn
stops waiting — the tool's result is recorded as interrupted — and the prompt comes back. Ctrl-C
at the prompt leaves the session (exit code 0). A turn that fails (server down, provider error)
prints its one-line error and the session goes on.
"""

from __future__ import annotations

import sys
from typing import TextIO

import robota
from robota import RobotaError
from robota.cli._build import AgentFlags, build_agent
from robota.cli._errors import describe
from robota.cli._output import Printer, RunRenderer, no_answer_reason, unknown_window_note
from robota.cli._terminal import Interrupts, LineReader, TerminalApprover, first_line_or_signal

__all__ = ["chat_command"]

PROMPT = "you> "
_LEAVE = frozenset({"/exit", "/quit"})


async def _turn(
    agent: robota.Agent,
    text: str,
    *,
    interrupts: Interrupts,
    out: TextIO,
    printer: Printer,
    endpoint: str | None,
) -> None:
    controller = interrupts.begin_turn()
    renderer = RunRenderer(out, printer)
    try:
        stream = agent.run_stream(text, signal=controller.signal)
        async for event in stream:
            interrupts.observe(event)
            renderer.event(event)
        result = await stream.result()
    except RobotaError as error:
        renderer.finish()
        printer.error(describe(error, endpoint=endpoint))
        return
    finally:
        interrupts.end_turn()
    renderer.finish()
    note = unknown_window_note(result, agent.get_model().model)
    if note is not None:
        printer.note(note)
    reason = no_answer_reason(result)
    if reason is not None:
        printer.error(reason)
    if result.status == "interrupted":
        printer.note("[interrupted] the turn was cancelled; its partial reply stays in history")
    printer.footer(result)


async def _chat(flags: AgentFlags, *, out: TextIO, stdin: TextIO) -> int:
    printer = Printer()
    reader = LineReader(stdin)
    with Interrupts(printer) as interrupts:
        built = build_agent(flags, approver=TerminalApprover(reader, printer, interrupts))
        async with built.agent as agent:
            selected = agent.get_model()
            printer.note(
                f"robota chat with {selected.model} ({selected.provider}). /exit or Ctrl-D "
                "leaves; Ctrl-C cancels a turn (twice: stop waiting for a running tool)."
            )
            while True:
                out.write(PROMPT)
                out.flush()
                stopped, line = await first_line_or_signal(reader, interrupts.quit)
                if stopped or line is None:
                    out.write("\n")
                    break
                text = line.strip()
                if text in _LEAVE:
                    break
                if text:
                    await _turn(
                        agent,
                        text,
                        interrupts=interrupts,
                        out=out,
                        printer=printer,
                        endpoint=built.endpoint,
                    )
    out.flush()
    return 0


def chat_command(
    flags: AgentFlags, *, out: TextIO | None = None, stdin: TextIO | None = None
) -> int:
    """Run an interactive session; returns the exit code (0 when the user leaves).

    Raises:
        CliError: the agent cannot be built (exit code 2); failures of single turns are
            printed and the session goes on.
    """
    import asyncio  # noqa: PLC0415 - keep `robota --help` fast

    return asyncio.run(
        _chat(
            flags,
            out=sys.stdout if out is None else out,
            stdin=sys.stdin if stdin is None else stdin,
        )
    )
